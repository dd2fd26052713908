package sqlhook_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// Many goroutines on one *sql.DB, each with its own session variable
// and transactions with savepoints across both data sources: every
// scatter read sees its own connection's value on every data source,
// and exactly the rows each transaction kept are stored, where they
// route. Run with -race.
func TestConcurrentSessionsAndTransactionsStayIsolated(t *testing.T) {
	ctx := context.Background()
	for _, b := range txBackends(t, "tadv_conc")[:2] { // PostgreSQL, MariaDB
		t.Run(b.name, func(t *testing.T) {
			seedOrders(t, b)
			db := b.open(t, sqlhook.WithMultiSourceTx(), sqlhook.WithScatter())
			// Fewer conns than workers: conns carrying session state
			// go back to the pool and are handed to waiting workers.
			db.SetMaxOpenConns(3)
			const workers, rounds = 8, 4
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						if err := concurrentRound(ctx, b, db, g, r); err != nil {
							errs <- fmt.Errorf("worker %d round %d: %w", g, r, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			want0, want1 := []int64{2, 4}, []int64{3, 5}
			for g := range workers {
				for r := range rounds {
					id := int64(10000 + 100*g + 10*r)
					want0 = append(want0, id)
					want1 = append(want1, id+1)
				}
			}
			slices.Sort(want0)
			slices.Sort(want1)
			wantOrders(t, b, want0, want1)
		})
	}
}

// concurrentRound: on its own conn, SET @u and check every data source
// sees it; then a transaction inserting id (user 0, ds_0) and id+1
// (user 1, ds_1), a savepoint, two more rows rolled back to it, commit.
func concurrentRound(ctx context.Context, b txBackend, db *sql.DB, g, r int) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	val := strconv.Itoa(100*g + r)
	set, read := `SET @u = '`+val+`'`, `@u`
	if b.name == "postgres" {
		set, read = `SET app.u = '`+val+`'`, `current_setting('app.u')`
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		return err
	}
	rows, err := conn.QueryContext(ctx, `SELECT order_id, `+read+` FROM t_order WHERE order_id < 10`)
	if err != nil {
		return err
	}
	n := 0
	for rows.Next() {
		var id int64
		var u string
		if err := rows.Scan(&id, &u); err != nil {
			rows.Close()
			return err
		}
		if u != val {
			rows.Close()
			return fmt.Errorf("order %d sees @u = %s, want %s", id, u, val)
		}
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil || n != 4 {
		return fmt.Errorf("scatter read: %d rows, %v", n, err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	id := int64(10000 + 100*g + 10*r)
	ins := `INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`SAVEPOINT outer_sp`, nil},
		{ins, []any{id, 0}},
		{ins, []any{id + 1, 1}},
		{`SAVEPOINT inner_sp`, nil},
		{ins, []any{id + 2, 0}},
		{ins, []any{id + 3, 1}},
		{`ROLLBACK TO SAVEPOINT inner_sp`, nil},
		{`RELEASE SAVEPOINT outer_sp`, nil},
	} {
		if _, err := tx.ExecContext(ctx, b.q(q.sql), q.args...); err != nil {
			return fmt.Errorf("%s: %w", q.sql, err)
		}
	}
	return tx.Commit()
}
