package sqlhook

import (
	"errors"
	"testing"
)

// SQLite stores an integer beyond int64 as a REAL: a row routed by the
// exact number would hold another value, so such an INSERT is refused on
// SQLite in every form the number can take. PostgreSQL and MySQL reject
// or keep the value themselves, so they route it.
func TestSQLiteInsertRefusesShardingValueBeyondInt64(t *testing.T) {
	h := testHook(t, SQLite)
	for _, tc := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, 9223372036854775808)", nil},
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, ?)", []any{uint64(18446744073709551615)}},
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, ?)", []any{"9223372036854775809"}},
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, ?)", []any{[]byte("-9223372036854775809")}},
		{"INSERT INTO t_order (order_id, user_id) VALUES (?, 1)", []any{"+18446744073709551615"}},
	} {
		_, err := h.route(tc.sql, args(tc.args...))
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s %v: err = %v, want ErrUnsupported", tc.sql, tc.args, err)
		}
	}
	for _, ok := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, 9223372036854775807)", nil},
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, ?)", []any{uint64(9223372036854775807)}},
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, ?)", []any{"-9223372036854775808"}},
	} {
		if _, err := h.route(ok.sql, args(ok.args...)); err != nil {
			t.Errorf("%s %v: %v", ok.sql, ok.args, err)
		}
	}
	pg := testHook(t, PostgreSQL)
	if _, err := pg.route("INSERT INTO t_order (order_id, user_id) VALUES (1, $1)", args(uint64(18446744073709551615))); err != nil {
		t.Errorf("PostgreSQL routes a uint64 beyond int64 (the database refuses it if the column cannot hold it): %v", err)
	}
}
