package shardconf_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// hintBase is a rule file whose t_order table strategy is a hint strategy;
// the cases below break it one way each.
const hintBase = `
dataSources:
  ds_0: {driver: pgx, dsn: "postgres://127.0.0.1/a"}
  ds_1: {driver: pgx, dsn: "postgres://127.0.0.1/b"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      tableStrategy:
        hint:
          shardingAlgorithmName: t_hint
  defaultDatabaseStrategy:
    standard:
      shardingColumn: user_id
      shardingAlgorithmName: ds_mod
  shardingAlgorithms:
    t_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_order_${value % 2}"}}
    ds_mod: {type: MOD, props: {sharding-count: 2}}
`

func TestHintBaseLoadsAndRoutes(t *testing.T) {
	r := hintRouter(t, hintBase)
	ctx := hinted("t_order", shardconf.Hint{Table: vals(3)})
	checkRouteContext(t, r, ctx, "t_order", false, []shardconf.Cond{shardconf.Eq("user_id", 2)}, "ds_0.t_order_1", nil)
	// The standard database strategy still needs its column.
	checkRouteContext(t, r, ctx, "t_order", false, nil, "user_id", shardconf.ErrMissingShardingKey)
}

func TestHintConfigErrorsHavePositions(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line, col  int
		path, want string
	}{
		{"standard algorithm in a hint strategy", strings.Replace(hintBase, "t_hint: {type: HINT_INLINE, props: {algorithm-expression: \"t_order_${value % 2}\"}}",
			"t_hint: {type: MOD, props: {sharding-count: 2}}", 1), 18, 5, "rules[0].shardingAlgorithms.t_hint", "MOD is not a hint sharding algorithm"},
		{"INLINE in a hint strategy", strings.Replace(hintBase, "t_hint: {type: HINT_INLINE", "t_hint: {type: INLINE", 1),
			18, 5, "rules[0].shardingAlgorithms.t_hint", "INLINE is not a hint sharding algorithm"},
		{"HINT_INLINE in a standard strategy", strings.Replace(hintBase, "ds_mod: {type: MOD, props: {sharding-count: 2}}",
			"ds_mod: {type: HINT_INLINE}", 1), 19, 5, "rules[0].shardingAlgorithms.ds_mod", "HINT_INLINE serves hint strategies only"},
		{"CLASS_BASED for another strategy", strings.Replace(hintBase, "t_hint: {type: HINT_INLINE, props: {algorithm-expression: \"t_order_${value % 2}\"}}",
			"t_hint: {type: CLASS_BASED, props: {strategy: STANDARD, algorithmClassName: x.Y}}", 1), 18, 5,
			"rules[0].shardingAlgorithms.t_hint", "set strategy: HINT"},
		{"expression over a column", strings.Replace(hintBase, "${value % 2}", "${order_id % 2}", 1), 18, 5,
			"rules[0].shardingAlgorithms.t_hint", "one variable value"},
		{"unknown prop", strings.Replace(hintBase, "{algorithm-expression:", "{sharding-count: 2, algorithm-expression:", 1), 18, 5,
			"rules[0].shardingAlgorithms.t_hint", `"sharding-count"`},
		{"bad expression", strings.Replace(hintBase, "${value % 2}", "${value %}", 1), 18, 5,
			"rules[0].shardingAlgorithms.t_hint", "algorithm-expression"},
		{"missing algorithm name", strings.Replace(hintBase, "          shardingAlgorithmName: t_hint", "          {}", 1), 12, 11,
			"rules[0].tables.t_order.tableStrategy.hint.shardingAlgorithmName", "required"},
		{"unknown algorithm", strings.Replace(hintBase, "shardingAlgorithmName: t_hint", "shardingAlgorithmName: t_nope", 1), 12, 34,
			"rules[0].tables.t_order.tableStrategy.hint.shardingAlgorithmName", `"t_nope" is not in shardingAlgorithms`},
		{"5.0.0-alpha class name not registered", strings.Replace(hintBase, "shardingAlgorithmName: t_hint", "algorithmClassName: x.NotRegistered", 1), 12, 31,
			"rules[0].tables.t_order.tableStrategy.hint.algorithmClassName", "shardconf.RegisterAlgorithm(\"x.NotRegistered\""},
		{"both names", strings.Replace(hintBase, "shardingAlgorithmName: t_hint", "shardingAlgorithmName: t_hint\n          algorithmClassName: x.Y", 1), 13, 11,
			"rules[0].tables.t_order.tableStrategy.hint.algorithmClassName", "unknown key"},
		{"hint and standard", strings.Replace(hintBase, "        hint:\n", "        standard: {shardingColumn: id, shardingAlgorithmName: ds_mod}\n        hint:\n", 1), 12, 9,
			"rules[0].tables.t_order.tableStrategy.hint", "not several"},
		{"unknown key", strings.Replace(hintBase, "shardingAlgorithmName: t_hint", "shardingAlgorithmName: t_hint\n          shardingColumn: id", 1), 13, 11,
			"rules[0].tables.t_order.tableStrategy.hint.shardingColumn", "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := configErrors(t, tc.text)
			for _, e := range errs {
				if e.Path == tc.path && strings.Contains(e.Error(), tc.want) {
					if e.Line != tc.line || e.Column != tc.col {
						t.Errorf("%q at %d:%d, want %d:%d", e.Error(), e.Line, e.Column, tc.line, tc.col)
					}
					return
				}
			}
			t.Errorf("no error at %s containing %q; got %v", tc.path, tc.want, errs)
		})
	}
}

// A default hint strategy serves every table that does not override it;
// none: overrides it.
func TestDefaultHintStrategiesServeEveryTable(t *testing.T) {
	const rules = `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:a.db"}
  ds_1: {driver: sqlite, dsn: "file:b.db"}
rules:
- !SHARDING
  tables:
    t_order: {actualDataNodes: "ds_${0..1}.t_order_${0..1}"}
    t_local:
      actualDataNodes: "ds_${0..1}.t_local"
      tableStrategy: {none: }
    t_fixed:
      actualDataNodes: "ds_0.t_fixed"
      databaseStrategy: {none: }
      tableStrategy: {none: }
  defaultDatabaseStrategy: {hint: {shardingAlgorithmName: ds_hint}}
  defaultTableStrategy: {hint: {shardingAlgorithmName: tbl_hint}}
  shardingAlgorithms:
    ds_hint: {type: HINT_INLINE, props: {algorithm-expression: "ds_${value}"}}
    tbl_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_order_${value % 2}"}}
`
	r := hintRouter(t, rules)
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(1), Table: vals(4)}), "t_order", false, nil, "ds_1.t_order_0", nil)
	checkRouteContext(t, r, hinted("t_local", shardconf.Hint{Database: vals(1)}), "t_local", false, nil, "ds_1.t_local", nil)
	checkRouteContext(t, r, hinted("t_local", shardconf.Hint{Database: vals(1), Table: vals(1)}), "t_local", false, nil, "table hint", shardconf.ErrUnusedHint)
	checkRouteContext(t, r, hinted("t_fixed", shardconf.Hint{Database: vals(0)}), "t_fixed", false, nil, "database hint", shardconf.ErrUnusedHint)
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(0)}), "t_fixed", false, nil, "ds_0.t_fixed", nil)
}

// Values given through ShardingSphere's SQL hint comment arrive as text;
// its documentation writes ${Integer.valueOf(value) % 2} for them.
func TestHintInlineReadsTextValuesAsItsDocumentationWritesThem(t *testing.T) {
	r := hintRouter(t, strings.Replace(hintBase, "t_order_${value % 2}", "t_order_${Integer.valueOf(value) % 2}", 1))
	conds := []shardconf.Cond{shardconf.Eq("user_id", 1)}
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Table: vals("3")}), "t_order", false, conds, "ds_1.t_order_1", nil)
	// Refused, not routed: an integer hint value is a Long to the
	// expression, and Integer.valueOf(Long) is no Java method; nor is
	// "three" a number.
	for _, v := range []any{int8(4), "three"} {
		if ts, err := r.RouteContext(hinted("t_order", shardconf.Hint{Table: vals(v)}), "t_order", conds...); err == nil {
			t.Errorf("Integer.valueOf(%#v) routed to %v", v, targets(ts))
		}
	}
}

// A constant expression routes every value to the table it names.
func TestHintInlineConstantExpressionRoutesToItsTarget(t *testing.T) {
	r := hintRouter(t, strings.Replace(hintBase, "t_order_${value % 2}", "t_order_1", 1))
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Table: vals(0, 8)}), "t_order", false,
		[]shardconf.Cond{shardconf.Eq("user_id", 1)}, "ds_1.t_order_1", nil)
}

func TestAutoTablesRefuseHintStrategies(t *testing.T) {
	const rules = `
dataSources: {ds: {driver: sqlite, dsn: "file:a.db"}}
rules:
- !SHARDING
  autoTables:
    t_auto:
      actualDataSources: ds
      shardingStrategy: {hint: {shardingAlgorithmName: h}}
  shardingAlgorithms:
    h: {type: HINT_INLINE}
`
	errs := configErrors(t, rules)
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), "not an auto sharding algorithm") {
		t.Fatalf("errs = %v, want the autoTables refusal", errs)
	}
}

// Bound tables route together: the partner of a hinted target is the one
// at the same position, and routing the partner by the same hint agrees.
func TestBindingTablesWithHintsPairUp(t *testing.T) {
	rules := strings.Replace(hintRules, "    t_user:\n", `    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..3}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: item_hint}}
    t_user:
`, 1)
	rules = strings.Replace(rules, "  broadcastTables:", "  bindingTables: [\"t_order, t_order_item\"]\n  broadcastTables:", 1)
	rules += "    item_hint: {type: HINT_INLINE, props: {algorithm-expression: \"t_order_item_${value % 4}\"}}\n"
	r := hintRouter(t, rules)
	h := shardconf.Hint{Database: vals(1), Table: vals(2)}
	ctx := shardconf.WithHint(hinted("t_order", h), "t_order_item", h)
	orders, err := r.RouteContext(ctx, "t_order")
	if err != nil || len(orders) != 1 {
		t.Fatalf("t_order: %v, %v", orders, err)
	}
	bound, err := r.BoundTarget("t_order", orders[0], "t_order_item")
	if err != nil || bound.String() != "ds_1.t_order_item_2" {
		t.Fatalf("BoundTarget = %v, %v; want ds_1.t_order_item_2", bound, err)
	}
	items, err := r.RouteContext(ctx, "t_order_item")
	if err != nil || len(items) != 1 || items[0] != bound {
		t.Fatalf("t_order_item routed to %v, %v; want %v", items, err, bound)
	}
}

// otherKey is a context key of someone else's, not a hint.
type otherKey struct{}

func TestRouteContextWithoutHintsAllocatesNothing(t *testing.T) {
	r := hintRouter(t, hintRules)
	ctx := context.WithValue(context.Background(), otherKey{}, 1)
	c := shardconf.Eq("user_id", int64(3))
	if n := testing.AllocsPerRun(100, func() {
		if _, err := r.RouteContext(ctx, "t_user", c); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("RouteContext without hints: %v allocs, want 0", n)
	}
	hctx := hinted("t_order", shardconf.Hint{Database: vals(1), Table: vals(1)})
	if n := testing.AllocsPerRun(100, func() {
		if _, err := r.RouteContext(hctx, "t_user", c); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("RouteContext with another table's hint: %v allocs, want 0", n)
	}
}

// A HINT_INLINE remainder naming tables that do not exist loads, as
// ShardingSphere loads it; the partitions are listed (shardkey validate)
// and a hint landing there is ErrNoRoute.
func TestHintInlineRemainderPastTheTablesLoadsAndListsThem(t *testing.T) {
	r := hintRouter(t, strings.Replace(hintBase, "t_order_${value % 2}", "t_order_${value % 4}", 1))
	var got []string
	for _, u := range r.Unreachable() {
		got = append(got, u.Algorithm+": "+u.Partition)
	}
	if want := "t_hint: t_order_2 to t_order_3 (2 names)"; strings.Join(got, "; ") != want {
		t.Errorf("Unreachable = %q, want %q", got, want)
	}
	conds := []shardconf.Cond{shardconf.Eq("user_id", 1)}
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Table: vals(5)}), "t_order", false, conds, "ds_1.t_order_1", nil)
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Table: vals(6)}), "t_order", false, conds, `"t_order_2"`, shardconf.ErrNoRoute)
	errs := configErrors(t, strings.Replace(hintBase, "t_order_${value % 2}", "t_x_${value % 2}", 1))
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), "builds no target name") {
		t.Errorf("an expression reaching no table: %v", errs)
	}
}
