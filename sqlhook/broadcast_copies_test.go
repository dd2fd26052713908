package sqlhook

import (
	"errors"
	"testing"
)

// A write whose rows are picked by something each copy or physical table
// decides for itself (a row's physical address, LIMIT without a total
// order) would change different rows in each copy of a broadcast table
// or in each physical table: it is refused instead of letting copies
// diverge.
func TestBroadcastWritePickingRowsPerCopyIsRefused(t *testing.T) {
	cases := []struct {
		d Dialect
		q string
	}{
		{PostgreSQL, `DELETE FROM t_dict WHERE ctid = '(0,1)'`},
		{PostgreSQL, `UPDATE t_dict SET v = 1 WHERE "ctid" = '(0,1)'`},
		{PostgreSQL, `DELETE FROM t_dict WHERE tableoid = 1 AND k = 1`},
		{SQLite, `DELETE FROM t_dict WHERE rowid = 1`},
		{SQLite, `UPDATE t_dict SET v = 1 WHERE _ROWID_ = 1`},
		{MySQL, "DELETE FROM t_dict LIMIT 1"},
		{MySQL, "UPDATE t_dict SET v = 1 ORDER BY k LIMIT 1"},
	}
	for _, c := range cases {
		if _, err := testHook(t, c.d).route(c.q, nil); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v %s: %v, want ErrUnsupported", c.d, c.q, err)
		}
	}
}

func TestShardedWriteNamingRowAddressStaysOnOneTable(t *testing.T) {
	for _, d := range []Dialect{PostgreSQL, SQLite} {
		loc := map[Dialect]string{PostgreSQL: "ctid", SQLite: "rowid"}[d]
		h := testHook(t, d, WithScatter())
		if _, err := h.route(`DELETE FROM t_order WHERE user_id = 1 AND `+loc+` = 1`, nil); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v: a %s delete over two tables: %v, want ErrUnsupported", d, loc, err)
		}
		r, err := h.route(`DELETE FROM t_order WHERE user_id = 1 AND order_id = 3 AND `+loc+` = 1`, nil)
		if err != nil || len(r.units) != 1 {
			t.Errorf("%v: a %s delete on one table: %v, want one unit", d, loc, err)
		}
	}
	// A broadcast write without such a pick still reaches every copy.
	r, err := testHook(t, PostgreSQL).route(`DELETE FROM t_dict WHERE k = 1`, nil)
	if err != nil || len(r.units) != 2 {
		t.Errorf("broadcast delete: %v, want two units", err)
	}
}
