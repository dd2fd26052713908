package sqlhook_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// One *sql.Stmt shared by goroutines whose contexts hint different
// tables (database/sql hands each execution whichever conn is free, and
// sqlhook's plan cache is shared by all): every row lands in its own
// goroutine's hinted table, and every read returns that table's rows only.
func TestHintPreparedStatementSharedByGoroutinesRoutesEachExecutionByItsOwnContext(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_stmtconc", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		ins, err := e.db.PrepareContext(hintCtx(bg, "t_order", 0, 0), e.b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'c')`))
		if err != nil {
			t.Fatal(err)
		}
		defer ins.Close()
		sel, err := e.db.PrepareContext(bg, e.b.q(`SELECT order_id FROM t_order WHERE user_id = ?`))
		if err != nil {
			t.Fatal(err)
		}
		defer sel.Close()
		const goroutines, rows = 8, 6
		at := func(g int) (int, int) { return g % 2, (g / 2) % 2 }
		var wg sync.WaitGroup
		errs := make(chan error, goroutines*rows*2)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ds, tb := at(g)
				ctx := hintCtx(bg, "t_order", ds, tb)
				for i := range rows {
					if _, err := ins.ExecContext(ctx, g*100+i, g); err != nil {
						errs <- fmt.Errorf("goroutine %d row %d: %w", g, i, err)
						return
					}
					// Interleaved reads of this goroutine's user: only its
					// own table, which holds only its rows so far.
					rs, err := sel.QueryContext(ctx, g)
					if err != nil {
						errs <- err
						return
					}
					n := 0
					for rs.Next() {
						var k int
						if err := rs.Scan(&k); err != nil {
							errs <- err
						}
						if k/100 != g {
							errs <- fmt.Errorf("goroutine %d hinted at ds_%d.t_order_%d read row %d", g, ds, tb, k)
						}
						n++
					}
					rs.Close()
					if n != i+1 {
						errs <- fmt.Errorf("goroutine %d read %d rows after %d inserts", g, n, i+1)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		got := e.placed(t, "t_order", "order_id")
		for g := range goroutines {
			ds, tb := at(g)
			for i := range rows {
				wantAt(t, got, int64(g*100+i), fmt.Sprintf("ds_%d.t_order_%d", ds, tb))
			}
		}
		if len(got) != goroutines*rows {
			t.Errorf("%d rows placed, want %d", len(got), goroutines*rows)
		}
	})
}
