package sqlhook_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/sqlhook"
)

// Inside a transaction over both data sources, a merged read sees the
// transaction's own uncommitted rows (both tables of a data source are
// read on its one transaction connection) and gives one table's answer.
func TestMergedReadsInAMultiSourceTransactionSeeItsOwnWrites(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b, sqlhook.WithMultiSourceTx())
			ctx := context.Background()
			tx, err := e.db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			otx, err := e.oracle.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer otx.Rollback()
			ins := e.q(`INSERT INTO %s (id, user_id, amount) VALUES (?, ?, ?)`)
			for i := 100; i < 108; i++ {
				if _, err := tx.Exec(fmt.Sprintf(ins, "t_sale"), i, i%4+1, i-150); err != nil {
					t.Fatal(err)
				}
				if _, err := otx.Exec(fmt.Sprintf(ins, "o_sale"), i, i%4+1, i-150); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []string{
				`SELECT id, amount FROM t_sale ORDER BY amount, id LIMIT 5`,
				`SELECT user_id, COUNT(*), SUM(amount), AVG(amount) FROM t_sale GROUP BY user_id ORDER BY user_id`,
				`SELECT DISTINCT user_id FROM t_sale WHERE id >= 100 ORDER BY 1`,
				`SELECT COUNT(*), MIN(amount) FROM t_sale`,
			} {
				got := txResult(t, tx, e.q(q))
				want := txResult(t, otx, e.q(strings.ReplaceAll(q, "t_sale", "o_sale")))
				if !slices.Equal(got, want) {
					t.Errorf("%s: %s:\n got %q\nwant %q", b.name, q, got, want)
				}
			}
		})
	}
}

func txResult(t *testing.T, tx *sql.Tx, q string) []string {
	t.Helper()
	rows, err := tx.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	r, err := readResult(rows)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r.rows
}

// A merged read closed early or cancelled mid-merge gives its connections
// back: after more of them than any pool holds, reads still run.
func TestMergedReadsClosedOrCancelledEarlyReturnTheirConnections(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqlatk") {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			e.db.SetMaxOpenConns(2)
			queries := []string{`SELECT id FROM t_sale ORDER BY amount, id`, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY user_id`,
				`SELECT DISTINCT amount FROM t_sale`}
			for i := range 60 {
				ctx, cancel := context.WithCancel(context.Background())
				rows, err := e.db.QueryContext(ctx, queries[i%len(queries)])
				if err != nil {
					cancel()
					t.Fatal(err)
				}
				if !rows.Next() {
					t.Fatalf("%s: no first row: %v", queries[i%len(queries)], rows.Err())
				}
				if i%2 == 0 {
					cancel()
					for rows.Next() {
					}
				}
				rows.Close()
				cancel()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var n int
			if err := e.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_sale`).Scan(&n); err != nil || n != 48 {
				t.Fatalf("after early closes: COUNT(*) = %d, %v; want 48", n, err)
			}
		})
	}
}
