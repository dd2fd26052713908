package coretest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
)

// The decision log looks like any log table, and a retention job
// ("delete rows older than a day") is what operators add to those. Its
// oldest row is the log's own id, written by the first Start; deleting
// it must not make the next Start take a new id and with it a new tag,
// under which recovery no longer sees the branches of a commit decided
// under the old one (they would stay prepared, locks held, for good).
// Start may refuse instead (an operator must look); if it starts,
// recovery must finish the decided commit. The same holds when the id
// row is deleted outright (an operator clearing rows that do not look
// like decisions).
func TestXADecidedCommitIsNotOrphanedWhenOldLogRowsAreDeleted(t *testing.T) {
	purges := map[string]string{
		"older-than-a-day": "DELETE FROM shardkey_xa_log WHERE created_at < $1",
		"not-a-decision":   "DELETE FROM shardkey_xa_log WHERE outcome NOT IN ('C', 'A') OR created_at < $1",
	}
	for _, pair := range xaPairs[:2] {
		for purge, q := range purges {
			t.Run(pair.name+"/"+purge, func(t *testing.T) { retentionCase(t, pair, purge, q) })
		}
	}
}

func retentionCase(t *testing.T, pair struct{ name, a, b string }, purge, q string) {
	e := newXAEnv(t, pair, "retention_"+purge)
	crash := e.coordinator(xa.Config{Hook: failAt(xa.StageDecided)}) // writes the log id now
	e.clock.Advance(48 * time.Hour)                                  // the deployment is two days old
	tx := e.newTx(crash)
	err := tx.Commit(context.Background(), e.insertAll(tx, 1))
	var ide *xa.InDoubtError
	if !errors.As(err, &ide) || !ide.Decided {
		t.Fatalf("Commit = %v, want a decided *InDoubtError", err)
	}
	e.release(true) // the process is gone
	cutoff := e.clock.Now().Add(-24 * time.Hour).UTC()
	if e.nodes[0].src.Dialect == dialect.MySQL {
		q = strings.Replace(q, "$1", "?", 1)
	}
	res, err := e.nodes[0].direct.Exec(q, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.RowsAffected()
	t.Logf("%s deleted %d rows (cutoff %v)", purge, n, cutoff)

	c, err := xa.New(xa.Config{Interval: -1, Timeout: xaTimeout, Now: e.clock.Now}, e.sources())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(context.Background()); err != nil {
		t.Logf("Start refused: %v", err)
		return
	}
	if c.BranchPrefix() != crash.BranchPrefix() {
		t.Logf("the log's tag changed: %s, then %s", crash.BranchPrefix(), c.BranchPrefix())
	}
	e.clock.pastTimeout(1) // MySQL branches are finished only past Timeout
	if _, err := c.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.wantRows(1, 1)
}
