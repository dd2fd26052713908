package coretest

import (
	"context"
	"testing"

	"github.com/shardkey/shardkey/internal/xa"
)

// PostgreSQL's synchronous_commit = off (a common setting for speed,
// server-, database- or role-wide) makes a COMMIT return before its WAL
// is flushed: a crash of the log's server then loses the last decisions,
// while PREPARE TRANSACTION and COMMIT PREPARED are flushed whatever the
// setting. A lost 'C' after one branch committed is a half-committed
// transaction: recovery finds no decision and rolls the rest back (seen
// with a private server stopped with pg_ctl -m immediate right after a
// branch committed). So the decision's commit must be synchronous even
// when the session's default is not. A deferred trigger on the log
// records the setting in force when the decision commits.
func TestXADecisionCommitIsSynchronousWhenTheDatabaseDefaultIsNot(t *testing.T) {
	e := newXAEnv(t, xaPairs[0], "synccommit")
	n := e.nodes[0]
	if _, err := n.direct.Exec("ALTER DATABASE " + n.dbName + " SET synchronous_commit = off"); err != nil {
		t.Fatal(err)
	}
	n.src.DB.SetMaxIdleConns(0) // new sessions take the database's setting
	c := e.coordinator(xa.Config{})
	for _, q := range []string{
		"CREATE TABLE sync_seen (gtrid text, setting text)",
		`CREATE FUNCTION note_sync() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN
			INSERT INTO sync_seen VALUES (NEW.gtrid, current_setting('synchronous_commit')); RETURN NULL; END$$`,
		`CREATE CONSTRAINT TRIGGER note_sync AFTER INSERT ON shardkey_xa_log
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION note_sync()`,
	} {
		if _, err := n.direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tx := e.newTx(c)
	if err := tx.Commit(context.Background(), e.insertAll(tx, 1)); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	e.release(false)
	var setting string
	if err := n.direct.QueryRow("SELECT setting FROM sync_seen WHERE gtrid = $1", tx.GTRID()).Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting == "off" {
		t.Errorf("the commit decision was committed with synchronous_commit = %s: a crash of the log's server can lose it", setting)
	}
}
