package sqlhook_test

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// database/sql's Close does not wait for open transactions, and a
// transaction's conn outlives it: a Commit may come after Close stopped
// the coordinator and closed its pools. Nothing can be decided then; the
// transaction must be rolled back on every data source at once, not left
// prepared for a recovery that this *sql.DB will never run again
// (holding its locks until some other process recovers it).
func TestTwoPhaseCommitAfterCloseRollsBackEveryBranch(t *testing.T) {
	for _, b := range tpBackends(t, "afterclose") {
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1) // ds_1
			b.insertOrder(t, tx, 2, 2) // ds_0
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			err = tx.Commit()
			t.Logf("Commit after Close: %v", err)
			if err == nil {
				t.Fatal("Commit after Close = nil")
			}
			if errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Errorf("Commit after Close is in doubt (%v): nothing was decided, it can be rolled back", err)
			}
			wantOrders(t, b, nil, nil)
		})
	}
}
