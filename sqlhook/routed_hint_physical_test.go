package sqlhook_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// A routed statement that also names a physical table of a hinted logic
// table (a JOIN, a subquery) would read or write that table wherever the
// statement runs, not where the hint places its logic table: refused
// before anything runs, as the same name in an unrouted statement is. An
// INSERT into a physical table stays routed by the hint.
func TestHintRefusesARoutedStatementNamingAPhysicalTableOfAHintedTable(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_routedphys", func(t *testing.T, e *hintEnv) {
		bg := context.Background()
		e.exec(t, bg, `INSERT INTO t_user (user_id, name) VALUES (4, 'u')`)
		e.exec(t, hintCtx(bg, "t_order", 1, 1), `INSERT INTO t_order (order_id, user_id, status) VALUES (1, 4, 'p')`)
		e.exec(t, hintCtx(bg, "t_order", 0, 1), `INSERT INTO t_order (order_id, user_id, status) VALUES (2, 4, 'p')`)
		ord := hintCtx(bg, "t_order", 1, 1)
		for _, q := range []string{
			// t_user routes to ds_0; the hint places t_order on ds_1.
			`SELECT u.user_id FROM t_user u JOIN t_order_1 o ON o.user_id = u.user_id WHERE u.user_id = 4`,
			`UPDATE t_user SET name = 'z' WHERE user_id = 4 AND EXISTS (SELECT 1 FROM t_order_1 o WHERE o.user_id = 4)`,
			`DELETE FROM t_user WHERE user_id = 4 AND user_id IN (SELECT user_id FROM T_ORDER_1)`,
			// The hinted table itself, beside one of its physical tables.
			`SELECT o.order_id FROM t_order o WHERE o.order_id IN (SELECT order_id FROM t_order_0)`,
		} {
			if _, err := e.db.ExecContext(ord, q); !errors.Is(err, sqlhook.ErrUnsupported) {
				t.Errorf("%s under a hint for t_order: %v, want ErrUnsupported", q, err)
			}
		}
		var name string
		if err := e.direct[0].QueryRow(`SELECT name FROM t_user WHERE user_id = 4`).Scan(&name); err != nil || name != "u" {
			t.Errorf("t_user row 4 after refused statements: %q, %v; want it unchanged", name, err)
		}
		// Without a hint for t_order the physical name is the caller's
		// choice, as before; an INSERT into one is routed by the hint.
		if _, err := e.db.QueryContext(bg, `SELECT u.user_id FROM t_user u JOIN t_order_1 o ON o.user_id = u.user_id WHERE u.user_id = 4`); err != nil {
			t.Errorf("the JOIN without a hint: %v", err)
		}
		e.exec(t, ord, `INSERT INTO t_order_1 (order_id, user_id, status) VALUES (3, 4, 'p')`)
		wantAt(t, e.placed(t, "t_order", "order_id"), 3, "ds_1.t_order_1")
	})
}
