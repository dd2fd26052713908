package sqlhook_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// Many goroutines share one connector and one Observer: every routed
// statement is reported once, started and ended under its own context
// (the recorder checks that a target runs under a started statement and
// that each end uses its start's context), merged rows add up to the rows
// the goroutines read, and nothing races (run with -race).
func TestObserverSharedByManyGoroutinesSeesEachStatementOnce(t *testing.T) {
	for _, b := range lifecycleBackends(t, "sqlhook_obsconc") {
		t.Run(b.name, func(t *testing.T) {
			rec := newRecorder(t)
			db := openObserved(t, b, rec)
			db.SetMaxOpenConns(8)
			prepared, err := db.Prepare(b.q(`SELECT order_id FROM t_order WHERE user_id = ? ORDER BY order_id`))
			if err != nil {
				t.Fatal(err)
			}
			defer prepared.Close()
			rec.take()
			const workers, rounds = 16, 12
			var statements, mergedRead atomic.Int64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := context.Background()
					fail := func(what string, err error) { t.Errorf("worker %d, %s: %v", w, what, err) }
					for i := range rounds {
						id := int64(1000 + w*rounds + i)
						user := int64(w % 3)
						if _, err := db.ExecContext(ctx, b.q(`INSERT INTO t_order (order_id, user_id, status, amount) VALUES (?, ?, 'c', ?)`), id, user, i); err != nil {
							fail("insert", err)
							return
						}
						statements.Add(1)
						// a scatter query read part-way (some of it is merged, all of it counted)
						rows, err := db.QueryContext(ctx, `SELECT order_id FROM t_order ORDER BY order_id`)
						if err != nil {
							fail("scatter", err)
							return
						}
						n := int64(0)
						for n < int64(i+1) && rows.Next() {
							n++
						}
						rows.Close()
						statements.Add(1)
						mergedRead.Add(n)
						rows, err = prepared.QueryContext(ctx, user)
						if err != nil {
							fail("prepared", err)
							return
						}
						for rows.Next() {
							mergedRead.Add(1)
						}
						rows.Close()
						statements.Add(1)
						if b.name == "sqlite" && i%3 != 0 {
							continue // SQLite serialises writers: fewer transactions
						}
						tx, err := db.BeginTx(ctx, nil)
						if err != nil {
							fail("begin", err)
							return
						}
						if _, err := tx.ExecContext(ctx, b.q(`UPDATE t_order SET amount = amount + 1 WHERE user_id = ? AND order_id = ?`), user, id); err != nil {
							fail("update in tx", err)
							tx.Rollback()
							return
						}
						statements.Add(1)
						if err := tx.Commit(); err != nil {
							fail("commit", err)
							return
						}
					}
				}()
			}
			wg.Wait()
			es := rec.take()
			starts, ends := statementsOf(t, fmt.Sprintf("%d workers", workers), es)
			if int64(len(starts)) != statements.Load() || len(ends) != len(starts) {
				t.Errorf("%d routed statements ran: %d StatementStart, %d StatementEnd", statements.Load(), len(starts), len(ends))
			}
			var merged int64
			for _, e := range ends {
				merged += e.end.Rows
			}
			if merged != mergedRead.Load() {
				t.Errorf("merged rows reported %d, read %d", merged, mergedRead.Load())
			}
		})
	}
}
