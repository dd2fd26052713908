package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/sqlhook"
)

// lifecycleBackends are the e2e backends on databases of their own
// (prefix tells the tests of this file apart).
func lifecycleBackends(t *testing.T, prefix string) []backend {
	dir := t.TempDir()
	// a busy SQLite database waits for its writer instead of failing
	lite := func(f string) string {
		return filepath.Join(dir, f) + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	}
	return []backend{
		{name: "postgres", driver: "pgx", dollar: true,
			dsn: [2]string{dbtest.Postgres(t, prefix+"_0"), dbtest.Postgres(t, prefix+"_1")}},
		{name: "mariadb", driver: "mysql",
			dsn: [2]string{dbtest.MySQL(t, prefix+"_0"), dbtest.MySQL(t, prefix+"_1")}},
		{name: "sqlite", driver: "sqlite",
			dsn: [2]string{lite("ds0.db"), lite("ds1.db")}},
	}
}

// openObserved opens b with rec attached and scatter allowed, with
// t_order holding orders 100..111 of users 0..2.
func openObserved(t *testing.T, b backend, rec *recorder, opts ...sqlhook.Option) *sql.DB {
	t.Helper()
	db, err := sqlhook.Open(b.config(t), append(opts, sqlhook.WithScatter(), sqlhook.WithObserver(rec))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(64), amount INT)`); err != nil {
		t.Fatal(err)
	}
	for i := range int64(12) {
		if _, err := db.ExecContext(ctx, b.q(`INSERT INTO t_order (order_id, user_id, status, amount) VALUES (?, ?, 'new', ?)`), 100+i, i%3, i); err != nil {
			t.Fatal(err)
		}
	}
	rec.take()
	return db
}

// statementsOf checks that es pair every StatementStart with one
// StatementEnd and returns the ends, in order.
func statementsOf(t *testing.T, what string, es []event) (starts, ends []event) {
	t.Helper()
	open := map[int]bool{}
	for _, e := range es {
		switch e.kind {
		case "start":
			open[e.stmt] = true
			starts = append(starts, e)
		case "end":
			if !open[e.stmt] {
				t.Errorf("%s: StatementEnd of statement %d not open (ended twice?)", what, e.stmt)
			}
			delete(open, e.stmt)
			ends = append(ends, e)
		}
	}
	if len(open) > 0 {
		t.Errorf("%s: statements %v started and not ended; events %v", what, open, kinds(es))
	}
	return starts, ends
}

// waitEnds waits (up to 5 s) for n StatementEnd events in what rec
// records, and returns every event recorded.
func waitEnds(rec *recorder, n int) []event {
	var es []event
	for deadline := time.Now().Add(5 * time.Second); ; {
		es = append(es, rec.take()...)
		ends := 0
		for _, e := range es {
			if e.kind == "end" {
				ends++
			}
		}
		if ends >= n || time.Now().After(deadline) {
			return es
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A query's StatementEnd comes exactly once however its rows end: closed
// early, drained, cancelled by its context while the caller reads,
// abandoned inside a transaction that then ends; the rows it reports are
// those the caller was given.
func TestObserverEndsAStatementOnceHoweverItsRowsEnd(t *testing.T) {
	for _, b := range lifecycleBackends(t, "sqlhook_obsrows") {
		t.Run(b.name, func(t *testing.T) {
			rec := newRecorder(t)
			db := openObserved(t, b, rec)
			scatter := `SELECT order_id FROM t_order ORDER BY order_id`

			t.Run("context cancelled while reading", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				rows, err := db.QueryContext(ctx, scatter)
				if err != nil {
					t.Fatal(err)
				}
				read := 0
				for read < 3 && rows.Next() {
					read++
				}
				cancel()
				time.Sleep(50 * time.Millisecond) // database/sql closes the rows on its own goroutine
				for rows.Next() {
					read++
				}
				rowsErr := rows.Err()
				rows.Close()
				rows.Close()
				es := waitEnds(rec, 1)
				time.Sleep(50 * time.Millisecond)
				es = append(es, rec.take()...)
				_, ends := statementsOf(t, "cancelled", es)
				if len(ends) != 1 {
					t.Fatalf("%d StatementEnd for one cancelled query: %v", len(ends), kinds(es))
				}
				end := ends[0].end
				if end.Rows != int64(read) || !end.Merged {
					t.Errorf("cancelled after %d rows read (rows.Err %v): end %+v", read, rowsErr, end)
				}
				t.Logf("cancelled after %d rows: rows.Err %v, StatementEnd.Err %v", read, rowsErr, end.Err)
			})

			t.Run("deadline passed before the query", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
				defer cancel()
				_, err := db.QueryContext(ctx, scatter)
				if err == nil {
					t.Fatal("a query under an expired context ran")
				}
				es := rec.take()
				_, ends := statementsOf(t, "expired", es)
				if len(ends) > 1 {
					t.Errorf("%d StatementEnd: %v", len(ends), kinds(es))
				}
			})

			t.Run("rows abandoned inside a transaction", func(t *testing.T) {
				tx, err := db.BeginTx(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := tx.Query(b.q(`SELECT order_id FROM t_order WHERE user_id = ? ORDER BY order_id`), 1)
				if err != nil {
					t.Fatal(err)
				}
				if !rows.Next() {
					t.Fatal("no row")
				}
				// rows neither drained nor closed: the transaction's end closes them
				if err := tx.Rollback(); err != nil {
					t.Fatal(err)
				}
				es := waitEnds(rec, 1)
				_, ends := statementsOf(t, "abandoned in tx", es)
				if len(ends) != 1 || ends[0].end.Rows != 1 {
					t.Errorf("abandoned rows: ends %+v, events %v", ends, kinds(es))
				}
			})

			t.Run("prepared query and write run many times", func(t *testing.T) {
				q, err := db.Prepare(b.q(`SELECT order_id FROM t_order WHERE user_id = ? ORDER BY order_id`))
				if err != nil {
					t.Fatal(err)
				}
				defer q.Close()
				w, err := db.Prepare(b.q(`UPDATE t_order SET amount = amount + 1 WHERE user_id = ? AND order_id = ?`))
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				rec.take()
				const n = 25
				var want []int64
				for i := range n {
					user := int64(i % 3)
					rows, err := q.Query(user)
					if err != nil {
						t.Fatal(err)
					}
					got := 0
					for (i%2 == 0 || got < 2) && rows.Next() { // odd runs stop after two rows
						got++
					}
					rows.Close()
					want = append(want, int64(got))
					res, err := w.Exec(user, 100+user)
					if err != nil {
						t.Fatal(err)
					}
					if ra, _ := res.RowsAffected(); ra != 1 {
						t.Fatalf("prepared UPDATE affected %d rows", ra)
					}
				}
				es := rec.take()
				starts, ends := statementsOf(t, "prepared", es)
				if len(starts) != 2*n || len(ends) != 2*n {
					t.Fatalf("%d runs of two prepared statements: %d starts, %d ends", n, len(starts), len(ends))
				}
				var rowsSeen []int64
				for _, e := range ends {
					if e.s.Operation == "select" {
						rowsSeen = append(rowsSeen, e.end.Rows)
					}
				}
				if !slices.Equal(rowsSeen, want) {
					t.Errorf("merged rows reported %v, read %v", rowsSeen, want)
				}
			})

			t.Run("transaction with a savepoint", func(t *testing.T) {
				ctx := context.Background()
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
				steps := []string{
					`UPDATE t_order SET status = 'a' WHERE user_id = 1`,
					`SAVEPOINT sp1`,
					`UPDATE t_order SET status = 'b' WHERE user_id = 1`,
					`ROLLBACK TO SAVEPOINT sp1`,
					`UPDATE t_order SET status = 'c' WHERE user_id = 1 AND order_id = 101`,
					`RELEASE SAVEPOINT sp1`,
				}
				for _, s := range steps {
					if _, err := tx.ExecContext(ctx, s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
				var status []string
				rows, err := tx.QueryContext(ctx, `SELECT status FROM t_order WHERE user_id = 1 ORDER BY order_id`)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var s string
					if err := rows.Scan(&s); err != nil {
						t.Fatal(err)
					}
					status = append(status, s)
				}
				rows.Close()
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				if want := []string{"c", "a", "a", "a"}; !slices.Equal(status, want) {
					t.Errorf("statuses %v, want %v", status, want)
				}
				es := rec.take()
				starts, ends := statementsOf(t, "savepoint tx", es)
				if len(starts) != 4 || len(ends) != 4 {
					t.Errorf("4 routed statements in the transaction: %d starts, %d ends (%v)", len(starts), len(ends), kinds(es))
				}
				for _, e := range ends {
					if e.end.Err != nil {
						t.Errorf("statement %+v ended with %v", e.s, e.end.Err)
					}
				}
			})

			t.Run("refused inside a transaction", func(t *testing.T) {
				ctx := context.Background()
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
				if _, err := tx.ExecContext(ctx, `UPDATE t_order SET status = 'x' WHERE user_id = 1`); err != nil {
					t.Fatal(err)
				}
				_, err = tx.ExecContext(ctx, `UPDATE t_order SET user_id = 2 WHERE user_id = 1 AND order_id = 101`)
				if err == nil {
					t.Fatal("an UPDATE moving a row to another shard ran")
				}
				// a later statement of the transaction: whatever it does, it
				// reports either a statement or a refusal, never both
				_, err2 := tx.ExecContext(ctx, `UPDATE t_order SET status = 'z' WHERE user_id = 1`)
				es := rec.take()
				starts, ends := statementsOf(t, "refused in tx", es)
				var refusals []observe.Refusal
				for _, e := range es {
					if e.kind == "refused" {
						refusals = append(refusals, e.refusal)
					}
				}
				wantRefusals, wantStarts := 1, 2
				if err2 != nil {
					wantRefusals, wantStarts = 2, 1
				}
				if len(refusals) != wantRefusals || len(starts) != wantStarts || len(ends) != wantStarts {
					t.Errorf("after the refusal the next statement returned %v: %d refusals %+v, %d starts, %d ends", err2, len(refusals), refusals, len(starts), len(ends))
				}
				if refusals[0].Reason != observe.ReasonShardingKeyChange || !errors.Is(err, refusals[0].Err) {
					t.Errorf("refusal %+v for %v", refusals[0], err)
				}
				t.Logf("statement after a refusal in a transaction: %v (refusals %+v)", err2, refusals)
			})
		})
	}
}

// On PostgreSQL a division by zero fails a scatter query part-way through
// its rows: StatementEnd comes once, carrying the error rows.Err gives,
// with the rows the caller was given.
func TestObserverEndCarriesAnErrorRaisedWhileMerging(t *testing.T) {
	var pg backend
	for _, b := range lifecycleBackends(t, "sqlhook_obsnext") {
		if b.name == "postgres" {
			pg = b
		}
	}
	rec := newRecorder(t)
	db := openObserved(t, pg, rec)
	for _, q := range []string{
		`SELECT order_id, 10 / (order_id - 109) FROM t_order ORDER BY order_id`,
		`SELECT order_id, 10 / (order_id - 109) FROM t_order`,
		`SELECT user_id, SUM(10 / (order_id - 109)) FROM t_order GROUP BY user_id ORDER BY user_id`,
	} {
		t.Run(q, func(t *testing.T) {
			rows, err := db.Query(q)
			read := 0
			if err == nil {
				for rows.Next() {
					read++
				}
				err = rows.Err()
				rows.Close()
			}
			if err == nil {
				t.Fatal("division by zero did not fail the query")
			}
			es := rec.take()
			_, ends := statementsOf(t, q, es)
			if len(ends) != 1 {
				t.Fatalf("%d StatementEnd: %v", len(ends), kinds(es))
			}
			end := ends[0].end
			if end.Err == nil || end.Rows != int64(read) {
				t.Errorf("query failed with %v after %d rows; StatementEnd %+v", err, read, end)
			}
			if fmt.Sprint(end.Err) != fmt.Sprint(err) && !errors.Is(err, end.Err) {
				t.Logf("StatementEnd.Err %v, caller's %v", end.Err, err)
			}
		})
	}
}

// A refusal is reported at every execution it refuses, once: a statement
// refused again from the route-plan cache, a prepared statement refused
// at some executions (the values bound move a row to another shard) and
// run at the others.
func TestObserverReportsEachRefusedExecutionOnce(t *testing.T) {
	for _, b := range lifecycleBackends(t, "sqlhook_obsrefuse") {
		t.Run(b.name, func(t *testing.T) {
			rec := newRecorder(t)
			db := openObserved(t, b, rec)
			ctx := context.Background()
			count := func(es []event) (refusals []observe.Refusal, starts, ends int) {
				for _, e := range es {
					switch e.kind {
					case "refused":
						refusals = append(refusals, e.refusal)
					case "start":
						starts++
					case "end":
						ends++
					}
				}
				return refusals, starts, ends
			}
			for i := range 3 {
				_, err := db.ExecContext(ctx, `UPDATE t_order SET user_id = 2 WHERE user_id = 1 AND order_id = 101`)
				refusals, starts, _ := count(rec.take())
				if err == nil || len(refusals) != 1 || starts != 0 || refusals[0].Reason != observe.ReasonShardingKeyChange {
					t.Errorf("run %d of a refused statement: %v; refusals %+v, %d starts", i, err, refusals, starts)
				}
			}
			st, err := db.PrepareContext(ctx, b.q(`UPDATE t_order SET user_id = ?, status = 'moved' WHERE user_id = ? AND order_id = ?`))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			rec.take()
			for i := range 6 {
				from, order := int64(1), int64(101)
				to := from + int64(i%2) // odd runs move the row to ds_0
				_, err := st.ExecContext(ctx, to, from, order)
				refusals, starts, ends := count(rec.take())
				switch {
				case i%2 == 1 && (err == nil || len(refusals) != 1 || starts != 0 || refusals[0].Reason != observe.ReasonShardingKeyChange || !errors.Is(err, refusals[0].Err)):
					t.Errorf("execution %d moving the row: %v; refusals %+v, %d starts", i, err, refusals, starts)
				case i%2 == 0 && (err != nil || len(refusals) != 0 || starts != 1 || ends != 1):
					t.Errorf("execution %d keeping the row: %v; refusals %+v, %d starts, %d ends", i, err, refusals, starts, ends)
				}
			}
		})
	}
}
