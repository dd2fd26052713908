package coretest

import (
	"context"
	"errors"
	"testing"

	"github.com/shardkey/shardkey/internal/xa"
)

// MariaDB 10.11 can answer an XA COMMIT sent from another session with
// success without committing when it lands while the branch's own session
// disconnects (the transaction is left a zombie, out of XA RECOVER,
// holding its locks, until the server restarts). Recovery therefore
// leaves a MySQL branch alone, whatever its decision, until its
// transaction is older than Timeout (its coordinator and sessions long
// gone), and List shows it with its decision meanwhile; then it commits
// it. (This test waits for the sessions to end before recovering, so it
// cannot itself race a disconnect.)
func TestXARecoveryLeavesAYoungMySQLBranchAloneWhateverItsDecision(t *testing.T) {
	e := newXAEnv(t, xaPairs[1], "youngmysql") // MariaDB pair
	crash := e.coordinator(xa.Config{Hook: failAt(xa.StageDecided)})
	rec := e.coordinator(xa.Config{})
	tx := e.newTx(crash)
	err := tx.Commit(context.Background(), e.insertAll(tx, 1))
	var ide *xa.InDoubtError
	if !errors.As(err, &ide) || !ide.Decided {
		t.Fatalf("Commit = %v, want a decided *InDoubtError", err)
	}
	e.release(true) // waits until the branch sessions have ended
	rep, err := rec.Recover(context.Background())
	if err != nil || len(rep.Committed)+len(rep.RolledBack) > 0 || len(rep.Left) != 2 {
		t.Fatalf("Recover of a young decided transaction = %+v, %v; want both branches left", rep, err)
	}
	for _, l := range rep.Left {
		if l.Decision != "commit" {
			t.Errorf("left %s/%s with decision %q, want commit", l.Source, l.GTRID, l.Decision)
		}
	}
	e.wantRows(1, 0)
	e.clock.pastTimeout(1)
	rep, err = rec.Recover(context.Background())
	if err != nil || len(rep.Committed) != 2 || len(rep.Errors) > 0 {
		t.Fatalf("Recover past Timeout = %+v, %v; want both branches committed", rep, err)
	}
	e.wantRows(1, 1)
	e.wantNothingPrepared()
}
