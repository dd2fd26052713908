package sqlhook_test

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// A statement of several units whose rows are read lazily (UPDATE ...
// RETURNING over both data sources) and whose second unit fails while
// its rows are read has run on the first: the transaction fails until
// ROLLBACK TO, and Commit rolls back everything, never keeping the first
// unit's changes alone.
func TestRowsFailingMidReadNeverCommittedInPart(t *testing.T) {
	for _, b := range txBackends(t, "tadv_rowsfail") {
		if b.name == "mariadb" {
			continue // MariaDB has no UPDATE ... RETURNING
		}
		t.Run(b.name, func(t *testing.T) {
			seedOrders(t, b)
			d1 := b.direct(t, 1)
			mustExecDB(t, d1, `DROP TABLE t_order`)
			mustExecDB(t, d1, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(40) CHECK (status <> 'bad'))`)
			mustExecDB(t, d1, `INSERT INTO t_order VALUES (3, 1, 'x'), (5, 1, 'x')`)
			db := b.open(t, sqlhook.WithMultiSourceTx(), sqlhook.WithScatter())
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tx.Query(`UPDATE t_order SET status = 'bad' RETURNING order_id`)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if err == nil {
				t.Fatal("UPDATE violating ds_1's CHECK succeeded")
			}
			if err := tx.Commit(); !errors.Is(err, sqlhook.ErrTxAborted) {
				t.Errorf("Commit after a unit failed mid-read: %v, want ErrTxAborted", err)
			}
			got := map[int64]string{}
			for i := range 2 {
				rs, err := b.direct(t, i).Query(`SELECT order_id, status FROM t_order`)
				if err != nil {
					t.Fatal(err)
				}
				for rs.Next() {
					var id int64
					var s string
					rs.Scan(&id, &s)
					got[id] = s
				}
				rs.Close()
			}
			for id, s := range got {
				if s != "x" {
					t.Errorf("order %d has status %q: part of the failed UPDATE was committed", id, s)
				}
			}
		})
	}
}
