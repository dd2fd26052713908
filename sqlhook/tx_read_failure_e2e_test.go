package sqlhook_test

import (
	"context"
	"database/sql"
	"math"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// A read across data sources that fails on a later target changed nothing,
// so on MariaDB and SQLite — where a failed statement leaves the
// transaction usable, as over one table — the transaction goes on and
// commits its writes. (PostgreSQL aborts its transaction on any failed
// statement, over one table too.)
func TestFailedMergedReadLeavesTheTransactionUsable(t *testing.T) {
	for _, b := range selBackendsNamed(t, "sqltxread") {
		var poison any
		var failing string
		switch b.name {
		case "mariadb":
			poison, failing = 100000, `SELECT EXP(amount) FROM t_sale WHERE id >= 500`
		case "sqlite":
			poison, failing = int64(math.MinInt64), `SELECT abs(amount) FROM t_sale WHERE id >= 500`
		default:
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b, sqlhook.WithMultiSourceTx())
			ctx := context.Background()
			tx, err := e.db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			ins := `INSERT INTO t_sale (id, user_id, amount) VALUES (?, ?, ?)`
			// 501 lands on ds_0/t_sale_1 and 503 on ds_1/t_sale_1; the poison
			// row on ds_1/t_sale_0, read to its end (and failing) when the
			// read opens ds_1/t_sale_1 on the same transaction connection.
			for _, row := range [][]any{{501, 2, 1}, {503, 1, 2}, {502, 1, poison}} {
				if _, err := tx.Exec(ins, row...); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := txQueryAll(tx, failing); err == nil {
				t.Fatalf("%s: no error; the poison row should fail it", failing)
			}
			if err := tx.Commit(); err != nil {
				t.Fatalf("Commit after a failed read = %v, want the writes committed", err)
			}
			var n int
			if err := e.db.QueryRow(`SELECT COUNT(*) FROM t_sale WHERE id IN (501, 502, 503)`).Scan(&n); err != nil || n != 3 {
				t.Fatalf("committed rows = %d, %v; want 3", n, err)
			}
		})
	}
}

// txQueryAll reads every row of q, returning the first error.
func txQueryAll(tx *sql.Tx, q string) (int, error) {
	rows, err := tx.Query(q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}
