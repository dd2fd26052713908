package sqlhook

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// On MySQL an INSERT, REPLACE, INSERT ... SET or INSERT ... ON DUPLICATE
// KEY UPDATE naming a physical table directly is routed by its rows (to
// that table's data source, not the default one) and refused when a row
// routes to a table of another name; an UPDATE of a physical table may not
// assign a sharding column.
func TestMySQLPhysicalTableWriteNeverMisplacesRow(t *testing.T) {
	h := testHook(t, MySQL)
	for _, q := range []string{
		"INSERT INTO t_order_1 (user_id, order_id, status) VALUES (1, 3, 'a')",
		"REPLACE INTO t_order_1 (user_id, order_id, status) VALUES (1, 3, 'a')",
		"INSERT INTO t_order_1 SET user_id = 1, order_id = 3, status = 'a'",
		"INSERT INTO t_order_1 (user_id, order_id, status) VALUES (1, 3, 'a') ON DUPLICATE KEY UPDATE status = 'b'",
		"INSERT INTO `T_ORDER_1` (user_id, order_id, status) VALUES (?, ?, 'a')",
	} {
		r := mustRoute(t, h, q, 1, 3)
		if len(r.units) != 1 || r.units[0].ds != "ds_1" || !strings.Contains(strings.ToLower(r.units[0].sql), "t_order_1") {
			t.Errorf("%s: routed as %s", q, show(r))
		}
	}
	for _, q := range []string{
		"INSERT INTO t_order_0 (user_id, order_id, status) VALUES (1, 3, 'a')",
		"INSERT INTO t_order_1 (user_id, order_id) VALUES (1, 3), (2, 4)",
		"REPLACE INTO t_order_0 (user_id, order_id) VALUES (0, 1)",
		"INSERT INTO t_order_0 SET user_id = 1, order_id = 3",
		"INSERT INTO t_order_0 (user_id, order_id) VALUES (?, ?)",
		"INSERT INTO shardkey.t_order_0 (user_id, order_id) VALUES (0, 2)",
		"INSERT INTO t_order_0 SELECT * FROM t_order_1",
	} {
		if _, err := h.route(q, args(1, 3)); !errors.Is(err, ErrUnsupported) && !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("%s: %v, want a refusal", q, err)
		}
	}
	for _, q := range []string{
		"UPDATE t_order_0 SET user_id = 2 WHERE order_id = 4",
		"UPDATE t_order_0 o SET o.order_id = 2 WHERE o.user_id = 4",
		"UPDATE t_dict d JOIN t_order_1 SET user_id = 3",
		"INSERT INTO t_order_0 (user_id, order_id) VALUES (0, 2) ON DUPLICATE KEY UPDATE user_id = 1",
	} {
		if _, err := h.route(q, nil); !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Errorf("%s: %v, want ErrShardingKeyChange", q, err)
		}
	}
	if _, err := h.route("UPDATE t_order_0 SET status = 'x' WHERE order_id = 4", nil); err != nil {
		t.Errorf("UPDATE of a physical table's other columns: %v", err)
	}
}
