package sqlhook

import (
	"errors"
	"testing"
)

// DDL that drops or renames a sharding column of a logic table is refused
// in every dialect: the rules would shard by a column that no longer
// exists. Other column changes run on every physical table.
func TestDDLDroppingOrRenamingShardingColumnIsRefused(t *testing.T) {
	for _, d := range []Dialect{PostgreSQL, SQLite, MySQL} {
		h := testHook(t, d)
		for _, q := range []string{
			"ALTER TABLE t_order DROP COLUMN user_id",
			"ALTER TABLE t_order DROP COLUMN order_id",
			"ALTER TABLE t_order ADD COLUMN note2 TEXT, DROP COLUMN user_id",
			"ALTER TABLE t_order RENAME COLUMN user_id TO uid",
		} {
			if _, err := h.route(q, nil); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%v %q: %v, want ErrUnsupported", d, q, err)
			}
		}
		r, err := h.route("ALTER TABLE t_order DROP COLUMN status", nil)
		if err != nil {
			t.Fatalf("%v: dropping another column: %v", d, err)
		}
		if len(r.units) != 4 {
			t.Errorf("%v: dropping another column ran as %s, want every physical table", d, show(r))
		}
	}
}
