package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shardkey/shardkey/sqlhook"
)

// A deadlock's victim is rolled back by its server: PostgreSQL aborts the
// transaction, MariaDB rolls the XA branch back and leaves it ROLLBACK
// ONLY. An application that ignores the error and commits must get an
// error that is not ErrTxInDoubt, with nothing of the victim committed on
// the other data source; the survivor commits.
func TestTwoPhaseCommitOfADeadlockVictimRollsBackEveryBranch(t *testing.T) {
	for _, b := range tpBackends(t, "deadlock") {
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			direct := b.direct(t, 1)
			for _, id := range []int64{1, 2} {
				b.insertOrder(t, direct, id, 1) // ds_1
			}
			ctx := context.Background()
			txs := make([]*sql.Tx, 2)
			for i := range txs {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				txs[i] = tx
				b.insertOrder(t, tx, int64(10*(i+1)), 2) // ds_0: 10, 20
				if _, err := tx.ExecContext(ctx, b.q(`UPDATE t_order SET status = 'y' WHERE order_id = ? AND user_id = 1`), i+1); err != nil {
					t.Fatal(err)
				}
			}
			// Each now updates the row the other holds.
			errs := make(chan error, 1)
			go func() {
				_, err := txs[0].ExecContext(ctx, b.q(`UPDATE t_order SET status = 'z' WHERE order_id = 2 AND user_id = 1`))
				errs <- err
			}()
			time.Sleep(200 * time.Millisecond) // let the first wait for the lock first (not an assertion)
			_, err1 := txs[1].ExecContext(ctx, b.q(`UPDATE t_order SET status = 'z' WHERE order_id = 1 AND user_id = 1`))
			err0 := <-errs
			if (err0 == nil) == (err1 == nil) {
				t.Fatalf("want exactly one deadlock victim: %v, %v", err0, err1)
			}
			victim, survivor := 0, 1
			if err1 != nil {
				victim, survivor = 1, 0
			}
			t.Logf("victim %d: %v", victim, []error{err0, err1}[victim])
			err := txs[victim].Commit()
			t.Logf("victim's Commit: %v", err)
			if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Errorf("Commit of the deadlock victim = %v, want an error that is not ErrTxInDoubt", err)
			}
			if err := txs[survivor].Commit(); err != nil {
				t.Errorf("Commit of the survivor: %v", err)
			}
			if got, want := b.orders(t, 0), []int64{int64(10 * (survivor + 1))}; !slices.Equal(got, want) {
				t.Errorf("ds_0 orders %v, want only the survivor's %v", got, want)
			}
		})
	}
}
