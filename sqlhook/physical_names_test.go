package sqlhook

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// Physical tables whose names do not contain their logic table's name
// (ord_0 of t_order) must not slip past the fast path that skips parsing
// statements which cannot name a logic table: a write naming one is routed
// and checked as the logic table's.
func TestPhysicalTableNotSpellingItsLogicNameIsStillChecked(t *testing.T) {
	rules := `
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.ord_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`
	for _, d := range []Dialect{PostgreSQL, MySQL, SQLite} {
		h := hookFromRules(t, rules, d)
		// user 1 routes to ds_1, order 0 to ord_0: the row belongs in ds_1.ord_0.
		if _, err := h.route(`INSERT INTO ord_1 (user_id, order_id) VALUES (1, 0)`, nil); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v: INSERT into the physical table the row does not route to: %v, want ErrUnsupported", d, err)
		}
		rt, err := h.route(`INSERT INTO ord_0 (user_id, order_id) VALUES (1, 0)`, nil)
		if err != nil {
			t.Fatalf("%v: INSERT into the physical table the row routes to: %v", d, err)
		}
		if len(rt.units) != 1 || rt.units[0].ds != "ds_1" {
			t.Errorf("%v: INSERT routed as %s, want one unit on ds_1", d, show(rt))
		}
		if _, err := h.route(`UPDATE ord_0 SET user_id = 2 WHERE order_id = 0`, nil); !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Errorf("%v: UPDATE assigning a physical table's sharding column: %v, want ErrShardingKeyChange", d, err)
		}
	}
}
