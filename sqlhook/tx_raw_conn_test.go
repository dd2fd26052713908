package sqlhook_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// A statement sent on the driver conn that Unwrap gives inside a
// transaction belongs to the transaction, even as its first statement
// (the data source's transaction begins lazily): a rollback undoes it.
// UnwrapDataSource of a second data source is refused without
// WithMultiSourceTx, as a statement reaching it would be.
func TestUnwrapInTransactionSendsWithinTheTransaction(t *testing.T) {
	ctx := context.Background()
	rawExec := func(name, q string) func(dc any) error {
		return func(dc any) error {
			var (
				pc  driver.Conn
				err error
			)
			if name == "" {
				pc, err = sqlhook.Unwrap(dc)
			} else {
				pc, err = sqlhook.UnwrapDataSource(ctx, dc, name)
			}
			if err != nil {
				return err
			}
			_, err = pc.(driver.ExecerContext).ExecContext(ctx, q, nil)
			return err
		}
	}
	for _, b := range txBackends(t, "tadv_raw") {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := conn.Raw(rawExec("", `INSERT INTO t_note (id, v) VALUES (1, 'raw')`)); err != nil {
				t.Fatal(err)
			}
			if err := conn.Raw(rawExec("ds_1", `INSERT INTO t_order (order_id, user_id, status) VALUES (9, 1, 'raw')`)); !errors.Is(err, sqlhook.ErrCrossSourceTx) {
				t.Errorf("UnwrapDataSource(ds_1) in a transaction on ds_0: %v, want ErrCrossSourceTx", err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if got := int64s(t, b.direct(t, 0), `SELECT id FROM t_note`); len(got) != 0 {
				t.Errorf("ds_0.t_note has %v after the rollback, want nothing (the raw insert ran outside the transaction)", got)
			}
			wantOrders(t, b, []int64{}, []int64{})
		})
	}
}
