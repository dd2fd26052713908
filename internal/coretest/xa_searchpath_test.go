package coretest

import (
	"context"
	"errors"
	"testing"

	"github.com/shardkey/shardkey/internal/xa"
)

// The check that a PostgreSQL branch really prepared (PREPARE TRANSACTION
// of a failed transaction rolls it back and reports success) runs on the
// branch's own session, with whatever search_path the database, role or
// application gave it. A relation called pg_prepared_xacts in a schema
// searched before pg_catalog must not make a rolled-back branch pass for
// prepared (Commit would then report committed what is not).
func TestXAPreparedCheckIsNotFooledByTheSearchPath(t *testing.T) {
	e := newXAEnv(t, xaPairs[2], "searchpath") // ds0 PostgreSQL, ds1 MariaDB
	n := e.nodes[0]
	for _, q := range []string{
		"CREATE SCHEMA shadow",
		// Every gid asked for is "there": the view answers with the gid in the asking query's text.
		`CREATE VIEW shadow.pg_prepared_xacts AS SELECT substring(current_query() from $$gid = '([^']*)'$$)::text AS gid, current_database()::name AS database`,
		"ALTER DATABASE " + n.dbName + " SET search_path = shadow, pg_catalog, public",
	} {
		if _, err := n.direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	n.src.DB.SetMaxIdleConns(0) // new sessions take the database's search_path
	c := e.coordinator(xa.Config{})
	tx := e.newTx(c)
	bs := e.insertAll(tx, 1)
	if err := bs[0].Exec(context.Background(), "INSERT INTO acct (id, v) VALUES (1, 1)"); err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	err := tx.Commit(context.Background(), bs)
	e.release(err != nil)
	// The checks below (and cleanup) list pg_prepared_xacts unqualified.
	if _, err := n.direct.Exec("ALTER DATABASE " + n.dbName + " RESET search_path"); err != nil {
		t.Fatal(err)
	}
	if err == nil || errors.Is(err, xa.ErrInDoubt) {
		t.Errorf("Commit = %v, want a rollback (the PostgreSQL branch had failed)", err)
	}
	e.wantRows(1, 0)
	e.wantNothingPrepared()
}
