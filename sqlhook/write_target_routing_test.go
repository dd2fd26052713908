package sqlhook

import (
	"errors"
	"testing"
)

// A write to a table that is not a logic table, joined with a logic or
// broadcast table it reads, would run where the plan routes the logic
// table (every data source for a broadcast table), writing that other
// table on data sources it does not live on: it is refused.
func TestWriteOfUnshardedTableJoiningLogicTableIsRefused(t *testing.T) {
	cases := []struct {
		d Dialect
		q string
	}{
		{PostgreSQL, `UPDATE t_x SET b = 1 FROM t_dict WHERE t_x.a = t_dict.k`},
		{PostgreSQL, `DELETE FROM t_x USING t_dict WHERE t_x.a = t_dict.k`},
		{PostgreSQL, `UPDATE t_x SET b = 1 FROM t_order WHERE t_order.user_id = 1 AND t_order.order_id = 3`},
		{SQLite, `UPDATE t_x SET b = 1 FROM [t_dict] WHERE t_x.a = t_dict.k`},
		{SQLite, `DELETE FROM t_x WHERE a = 1 RETURNING (SELECT 1)`},
		{MySQL, "UPDATE t_x JOIN t_dict ON t_x.a = t_dict.k SET t_x.b = 1"},
		{MySQL, "UPDATE t_x JOIN t_dict ON t_x.a = t_dict.k SET b = 1"},
		{MySQL, "UPDATE t_order JOIN t_x ON 1 SET t_x.b = 1 WHERE t_order.user_id = 1 AND t_order.order_id = 3"},
		{MySQL, "UPDATE t_x x, t_dict SET x.b = t_dict.v"},
	}
	for _, c := range cases {
		h := testHook(t, c.d)
		r, err := h.route(c.q, nil)
		if c.q == `DELETE FROM t_x WHERE a = 1 RETURNING (SELECT 1)` {
			// No logic table: it goes to the default data source only.
			if err != nil || len(r.units) != 1 || r.units[0].ds != "ds_0" {
				t.Errorf("%v %s: %v, want one unit on ds_0", c.d, c.q, err)
			}
			continue
		}
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v %s: %v, want ErrUnsupported", c.d, c.q, err)
		}
	}
}

// Writing the logic table while reading another table stays routed.
func TestWriteOfLogicTableReadingUnshardedTableIsRouted(t *testing.T) {
	cases := []struct {
		d     Dialect
		q     string
		units int
	}{
		{PostgreSQL, `UPDATE t_dict SET v = 1 FROM t_x WHERE t_x.a = t_dict.k`, 2},
		{PostgreSQL, `UPDATE t_order SET status = t_x.b FROM t_x WHERE user_id = 1 AND order_id = 3`, 1},
		{MySQL, "UPDATE t_dict JOIN t_x ON t_x.a = t_dict.k SET t_dict.v = 1", 2},
		{MySQL, "UPDATE t_order o, t_x SET o.status = t_x.b WHERE o.user_id = 1 AND o.order_id = 3", 1},
	}
	for _, c := range cases {
		h := testHook(t, c.d)
		r, err := h.route(c.q, nil)
		if err != nil || len(r.units) != c.units {
			t.Errorf("%v %s: %v, want %d units", c.d, c.q, err, c.units)
		}
	}
}
