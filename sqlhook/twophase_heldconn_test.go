package sqlhook_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/sqlhook"
)

// An application may keep a *sql.Conn for a long time (the package
// recommends one for session state). A commit left in doubt after the
// decision must still be finished by recovery while the application holds
// that conn: on MariaDB a prepared XA branch stays attached to the
// session that prepared it, and no other session can commit it until
// that session ends.
func TestTwoPhaseRecoveryFinishesAnInDoubtCommitWhileTheConnIsHeld(t *testing.T) {
	for _, b := range tpBackends(t, "heldconn") {
		t.Run(b.name, func(t *testing.T) {
			st := &stages{failAt: xa.StageDecided}
			// Recovery runs every second and finishes a MariaDB branch only
			// once its transaction is older than the timeout (2 s here):
			// an XA COMMIT racing the branch session's disconnect can be
			// answered OK without committing (a1, requests.md).
			db := tpOpen(t, b, sqlhook.WithTwoPhaseHook(st.hook), sqlhook.WithTwoPhaseRecovery(2*time.Second, time.Second))
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1)
			b.insertOrder(t, tx, 2, 2)
			err = tx.Commit()
			var ide *sqlhook.TxInDoubtError
			if !errors.As(err, &ide) || !ide.Decided {
				t.Fatalf("commit: %v, want a decided *TxInDoubtError", err)
			}
			d0, d1 := b.direct(t, 0), b.direct(t, 1)
			count := func() int {
				var n0, n1 int
				_ = d0.QueryRow(`SELECT count(*) FROM t_order`).Scan(&n0)
				_ = d1.QueryRow(`SELECT count(*) FROM t_order`).Scan(&n1)
				return n0 + n1
			}
			deadline := time.Now().Add(10 * time.Second)
			for count() < 2 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			wantOrders(t, b, []int64{2}, []int64{1})
		})
	}
}
