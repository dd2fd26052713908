package sqlhook_test

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A query cancelled by its context while the caller reads its rows ends
// with context.Canceled for the caller (rows.Err); its StatementEnd must
// say so too, or an observer counts a cancelled statement as a success
// (shardotel: no error.type "canceled", a span with status unset).
func TestObserverEndOfACancelledQueryCarriesTheCancellation(t *testing.T) {
	for _, b := range lifecycleBackends(t, "sqlhook_obscancel") {
		t.Run(b.name, func(t *testing.T) {
			rec := newRecorder(t)
			db := openObserved(t, b, rec)
			for _, q := range []string{
				`SELECT order_id FROM t_order ORDER BY order_id`,                         // merged, several targets
				b.q(`SELECT order_id FROM t_order WHERE user_id = 1 AND order_id = 101`), // one target
			} {
				ctx, cancel := context.WithCancel(context.Background())
				rows, err := db.QueryContext(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				cancel()
				time.Sleep(50 * time.Millisecond) // database/sql closes the rows on its own goroutine
				for rows.Next() {
				}
				rowsErr := rows.Err()
				rows.Close()
				if !errors.Is(rowsErr, context.Canceled) {
					t.Fatalf("%s: rows.Err %v after the cancellation", q, rowsErr)
				}
				_, ends := statementsOf(t, q, waitEnds(rec, 1))
				if len(ends) != 1 {
					t.Fatalf("%s: %d StatementEnd", q, len(ends))
				}
				if err := ends[0].end.Err; !errors.Is(err, context.Canceled) {
					t.Errorf("%s: the caller got %v; StatementEnd.Err %v", q, rowsErr, err)
				}
			}
		})
	}
}
