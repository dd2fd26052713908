package shardconf_test

import (
	"context"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// HintReaches sees a table's own hint values and AllTables', in any case
// of the name, and nothing for a hint without values or another table's.
func TestHintReachesSeesOwnAndAllTablesValuesOnly(t *testing.T) {
	bg := context.Background()
	own := shardconf.WithHint(bg, "t_order", shardconf.Hint{Table: []any{1}})
	all := shardconf.WithHint(bg, shardconf.AllTables, shardconf.Hint{Database: []any{0}})
	empty := shardconf.WithHint(bg, "t_order", shardconf.Hint{})
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		table string
		want  bool
	}{
		{"none", bg, "t_order", false},
		{"own", own, "t_order", true},
		{"own, other case", own, "T_ORDER", true},
		{"another table's", own, "t_item", false},
		{"all tables", all, "t_item", true},
		{"no values", empty, "t_order", false},
	} {
		if got := shardconf.HintReaches(tc.ctx, tc.table); got != tc.want {
			t.Errorf("%s: HintReaches(%s) = %v, want %v", tc.name, tc.table, got, tc.want)
		}
	}
}
