package shardconf_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// hintRules shards t_order by hint in both strategies, as ShardingSphere's
// documented HINT_INLINE example, and t_user by a column.
const hintRules = `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:h0.db"}
  ds_1: {driver: sqlite, dsn: "file:h1.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..3}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: tbl_hint}}
    t_user:
      actualDataNodes: ds_${0..1}.t_user
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: user_inline}}
  broadcastTables: [t_dict]
  shardingAlgorithms:
    db_hint: {type: HINT_INLINE, props: {algorithm-expression: "ds_${value % 2}"}}
    tbl_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_order_$->{value % 4}"}}
    user_inline: {type: INLINE, props: {algorithm-expression: "ds_${user_id % 2}"}}
`

func hintRouter(t testing.TB, rules string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func hinted(table string, h shardconf.Hint) context.Context {
	return shardconf.WithHint(context.Background(), table, h)
}

func vals(vs ...any) []any { return vs }

// checkRouteContext routes table under ctx and compares with want (targets,
// or the error text when wantErr is set).
func checkRouteContext(t *testing.T, r *shardconf.Router, ctx context.Context, table string, scatter bool,
	conds []shardconf.Cond, want string, wantErr error) {
	t.Helper()
	route := r.RouteContext
	if scatter {
		route = r.ScatterContext
	}
	got, err := route(ctx, table, conds...)
	if wantErr != nil {
		if !errors.Is(err, wantErr) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %v: err = %v, want %v containing %q", table, conds, err, wantErr, want)
		}
		return
	}
	if err != nil || targets(got) != want {
		t.Errorf("%s %v: got %q, %v; want %q", table, conds, targets(got), err, want)
	}
}

func TestHintStrategyRoutesByHintValuesAlone(t *testing.T) {
	r := hintRouter(t, hintRules)
	for _, c := range []struct {
		name  string
		h     shardconf.Hint
		conds []shardconf.Cond
		want  string
	}{
		{"one value each", shardconf.Hint{Database: vals(1), Table: vals(int64(6))}, nil, "ds_1.t_order_2"},
		// SQL conditions on columns do not route a hint strategy.
		{"conditions ignored", shardconf.Hint{Database: vals(0), Table: vals(3)}, []shardconf.Cond{shardconf.Eq("order_id", 1), shardconf.Eq("user_id", 1)}, "ds_0.t_order_3"},
		// Several values: the union of their targets.
		{"union", shardconf.Hint{Database: vals(0, 2), Table: vals(1, 5, 2)}, nil, "ds_0.t_order_1 ds_0.t_order_2"},
		{"both data sources", shardconf.Hint{Database: vals(0, 1), Table: vals(3)}, nil, "ds_0.t_order_3 ds_1.t_order_3"},
	} {
		checkRouteContext(t, r, hinted("t_order", c.h), "t_order", false, c.conds, c.want, nil)
	}
}

// Hint values are normalised as condition values: one number routes alike
// whatever carries it.
func TestHintValuesAreNormalisedAsConditionValues(t *testing.T) {
	r := hintRouter(t, hintRules)
	for _, v := range []any{int8(7), uint16(7), keygen.ID(7), json.Number("7"), 7.0, int64(7)} {
		ctx := hinted("t_order", shardconf.Hint{Database: vals(v), Table: vals(v)})
		checkRouteContext(t, r, ctx, "t_order", false, nil, "ds_1.t_order_3", nil)
	}
	ctx := hinted("t_order", shardconf.Hint{Database: vals(nil), Table: vals(1)})
	if _, err := r.RouteContext(ctx, "t_order"); err == nil || !strings.Contains(err.Error(), "NULL") {
		t.Errorf("NULL hint value: err = %v, want the NULL refusal", err)
	}
}

func TestHintStrategyWithoutHintIsMissingShardingKey(t *testing.T) {
	r := hintRouter(t, hintRules)
	if _, err := r.Route("t_order", shardconf.Eq("order_id", 1)); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("Route: err = %v, want ErrMissingShardingKey", err)
	}
	checkRouteContext(t, r, context.Background(), "t_order", false, nil, "database hint", shardconf.ErrMissingShardingKey)
	// A hint for the database strategy only leaves the table strategy without one.
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(1)}), "t_order", false, nil, "table hint", shardconf.ErrMissingShardingKey)
	// An empty list supplies nothing.
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(), Table: vals(1)}), "t_order", false, nil, "database hint", shardconf.ErrMissingShardingKey)
	// A hint for another table is not this table's.
	checkRouteContext(t, r, hinted("t_other", shardconf.Hint{Database: vals(1), Table: vals(1)}), "t_order", false, nil, "database hint", shardconf.ErrMissingShardingKey)
}

func TestScatterContextSendsAnUnhintedHintStrategyToAllItsTargets(t *testing.T) {
	r := hintRouter(t, hintRules)
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(1)}), "t_order", true, nil,
		"ds_1.t_order_0 ds_1.t_order_1 ds_1.t_order_2 ds_1.t_order_3", nil)
	all, _ := r.Targets("t_order")
	checkRouteContext(t, r, context.Background(), "t_order", true, nil, targets(all), nil)
}

func TestHintValueMappingToNoTargetIsErrNoRoute(t *testing.T) {
	r := hintRouter(t, hintRules)
	// Java's -3 % 2 is -1: ds_-1 is not a data source.
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(-3), Table: vals(1)}), "t_order", false, nil,
		"value -3", shardconf.ErrNoRoute)
}

func TestHintNotConsumedByAHintStrategyIsErrUnusedHint(t *testing.T) {
	r := hintRouter(t, hintRules)
	for _, c := range []struct {
		table, hintTable string
		h                shardconf.Hint
		want             string
	}{
		{"t_user", "t_user", shardconf.Hint{Database: vals(1)}, "database hint"},
		{"t_user", "T_USER", shardconf.Hint{Table: vals(1)}, "table hint"},
		{"t_dict", "t_dict", shardconf.Hint{Database: vals(0)}, "database hint"},
		{"t_plain", "t_plain", shardconf.Hint{Database: vals(0)}, "database hint"},
		{"t_user", shardconf.AllTables, shardconf.Hint{Database: vals(1)}, "database (*) hint"},
		{"t_order", shardconf.AllTables, shardconf.Hint{Table: vals(1)}, "table (*) hint"},
	} {
		ctx := hinted(c.hintTable, c.h)
		// Even where the SQL would route to what the hint names.
		checkRouteContext(t, r, ctx, c.table, false, []shardconf.Cond{shardconf.Eq("user_id", 1)}, c.want, shardconf.ErrUnusedHint)
		checkRouteContext(t, r, ctx, c.table, true, nil, c.want, shardconf.ErrUnusedHint)
	}
	// A hint for a table the statement does not route is not consulted.
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(1)}), "t_user", false,
		[]shardconf.Cond{shardconf.Eq("user_id", 2)}, "ds_0.t_user", nil)
}

// AllTables is ShardingSphere's setDatabaseShardingValue: database values
// for every hint database strategy; a table's own database values win.
func TestAllTablesHintRoutesEveryHintDatabaseStrategy(t *testing.T) {
	r := hintRouter(t, hintRules)
	ctx := hinted(shardconf.AllTables, shardconf.Hint{Database: vals(1)})
	checkRouteContext(t, r, shardconf.WithHint(ctx, "t_order", shardconf.Hint{Table: vals(2)}), "t_order", false, nil, "ds_1.t_order_2", nil)
	checkRouteContext(t, r, shardconf.WithHint(ctx, "t_order", shardconf.Hint{Database: vals(0), Table: vals(2)}), "t_order", false, nil, "ds_0.t_order_2", nil)
	checkRouteContext(t, r, ctx, "t_order", true, nil, "ds_1.t_order_0 ds_1.t_order_1 ds_1.t_order_2 ds_1.t_order_3", nil)
	// The order of the WithHint calls does not change the precedence, and
	// a newer AllTables hint replaces an older one.
	own := hinted("t_order", shardconf.Hint{Database: vals(0), Table: vals(3)})
	own = shardconf.WithHint(own, shardconf.AllTables, shardconf.Hint{Database: vals(0)})
	own = shardconf.WithHint(own, shardconf.AllTables, shardconf.Hint{Database: vals(1)})
	checkRouteContext(t, r, own, "t_order", false, nil, "ds_0.t_order_3", nil)
	checkRouteContext(t, r, shardconf.WithHint(own, "t_order", shardconf.Hint{Table: vals(3)}), "t_order", false, nil, "ds_1.t_order_3", nil)
}

func TestWithHintReplacesTheTablesEarlierHintAndKeepsOthers(t *testing.T) {
	r := hintRouter(t, hintRules)
	ctx := hinted("t_order", shardconf.Hint{Database: vals(0), Table: vals(0)})
	ctx = shardconf.WithHint(ctx, "t_other", shardconf.Hint{Database: vals(9)})
	child := shardconf.WithHint(ctx, "T_ORDER", shardconf.Hint{Database: vals(1), Table: vals(1)})
	checkRouteContext(t, r, child, "t_order", false, nil, "ds_1.t_order_1", nil)
	checkRouteContext(t, r, ctx, "t_order", false, nil, "ds_0.t_order_0", nil)
	if h, ok := shardconf.HintFrom(child, "t_other"); !ok || len(h.Database) != 1 || h.Database[0] != 9 {
		t.Errorf("HintFrom(t_other) = %v, %v; want the earlier hint", h, ok)
	}
	if _, ok := shardconf.HintFrom(child, "t_user"); ok {
		t.Error("HintFrom(t_user) found a hint never given")
	}
	if shardconf.HasHints(context.Background()) || !shardconf.HasHints(child) {
		t.Error("HasHints is wrong")
	}
}

func TestWithHintCopiesTheCallersSlices(t *testing.T) {
	r := hintRouter(t, hintRules)
	db := []any{1}
	ctx := hinted("t_order", shardconf.Hint{Database: db, Table: vals(1)})
	db[0] = 0
	checkRouteContext(t, r, ctx, "t_order", false, nil, "ds_1.t_order_1", nil)
}

func TestUsesHintReportsHintStrategies(t *testing.T) {
	r := hintRouter(t, hintRules)
	for table, want := range map[string]bool{"t_order": true, "T_Order": true, "t_user": false, "t_dict": false, "t_plain": false} {
		if got := r.UsesHint(table); got != want {
			t.Errorf("UsesHint(%s) = %v, want %v", table, got, want)
		}
	}
	if cols := r.ShardingColumns("t_order"); cols != nil {
		t.Errorf("ShardingColumns(t_order) = %v; a hint strategy has none", cols)
	}
}

// ShardingSphere: HintInlineShardingAlgorithmTest (expression
// t_order_$->{value % 4} over t_order_0..3).
func TestHintInlineMatchesShardingSphere(t *testing.T) {
	const rules = `
dataSources: {ds: {driver: sqlite, dsn: "file:x.db"}}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_${0..3}
      tableStrategy: {hint: {shardingAlgorithmName: h}}
  shardingAlgorithms:
    h: {type: HINT_INLINE, props: {algorithm-expression: "t_order_$->{value % 4}"}}
`
	r := hintRouter(t, rules)
	// assertDoShardingWithSingleValue: 4 -> t_order_0.
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Table: vals(4)}), "t_order", false, nil, "ds.t_order_0", nil)
	// assertDoShardingWithMultiValues: 1, 2, 3, 4 cover every table.
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Table: vals(1, 2, 3, 4)}), "t_order", false, nil,
		"ds.t_order_0 ds.t_order_1 ds.t_order_2 ds.t_order_3", nil)
	// assertDoShardingWithEmptyValue returns every target; shardkey routes
	// there only on request (Scatter), else ErrMissingShardingKey.
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Table: vals()}), "t_order", true, nil,
		"ds.t_order_0 ds.t_order_1 ds.t_order_2 ds.t_order_3", nil)
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Table: vals()}), "t_order", false, nil, "table hint", shardconf.ErrMissingShardingKey)
}

// ShardingSphere: HintShardingStrategyTest.assertDoSharding (targets 1, 2,
// 3 under the prefix logicTable_; hint value 1 picks the one target "1"),
// with HINT_INLINE's default expression ${value} naming the target.
func TestHintStrategyMatchesShardingSphere(t *testing.T) {
	const rules = `
dataSources: {ds: {driver: sqlite, dsn: "file:x.db"}}
rules:
- !SHARDING
  tables:
    logicTable:
      actualDataNodes: ds.logicTable_${1..3}
      tableStrategy: {hint: {shardingAlgorithmName: h}}
  shardingAlgorithms:
    h: {type: HINT_INLINE, props: {algorithm-expression: "logicTable_${value}"}}
    bare: {type: HINT_INLINE}
`
	r := hintRouter(t, rules)
	checkRouteContext(t, r, hinted("logicTable", shardconf.Hint{Table: vals(1)}), "logicTable", false, nil, "ds.logicTable_1", nil)
	// The default expression ${value}: the value is the target's name.
	r = hintRouter(t, strings.Replace(rules, "shardingAlgorithmName: h}", "shardingAlgorithmName: bare}", 1))
	checkRouteContext(t, r, hinted("logicTable", shardconf.Hint{Table: vals("logicTable_2")}), "logicTable", false, nil, "ds.logicTable_2", nil)
	checkRouteContext(t, r, hinted("logicTable", shardconf.Hint{Table: vals(2)}), "logicTable", false, nil, `value 2`, shardconf.ErrNoRoute)
}

func TestHintTablesListsEachHintedTableOnceNewestFirst(t *testing.T) {
	ctx := hinted("t_order", shardconf.Hint{Database: vals(1)})
	ctx = shardconf.WithHint(ctx, shardconf.AllTables, shardconf.Hint{Database: vals(0)})
	ctx = shardconf.WithHint(ctx, "T_ORDER", shardconf.Hint{Table: vals(1)})
	if got := strings.Join(shardconf.HintTables(ctx), " "); got != "T_ORDER *" {
		t.Errorf("HintTables = %q, want \"T_ORDER *\"", got)
	}
	if got := shardconf.HintTables(context.Background()); got != nil {
		t.Errorf("HintTables(no hints) = %v, want nil", got)
	}
}

func TestHintFromReturnsACopy(t *testing.T) {
	r := hintRouter(t, hintRules)
	ctx := hinted("t_order", shardconf.Hint{Database: vals(1), Table: vals(1)})
	h, _ := shardconf.HintFrom(ctx, "t_order")
	h.Database[0] = 0
	checkRouteContext(t, r, ctx, "t_order", false, nil, "ds_1.t_order_1", nil)
}

// Several hint values route to the union of the targets of each value
// alone, for both strategies at once (random values, some routing nowhere).
func TestHintValuesRouteToTheUnionOfEachValuesTargets(t *testing.T) {
	r := hintRouter(t, hintRules)
	rng := rand.New(rand.NewPCG(16, 16))
	for range 300 {
		var dbv, tblv []any
		for range 1 + rng.IntN(3) {
			dbv = append(dbv, rng.IntN(9)-2)
		}
		for range 1 + rng.IntN(4) {
			tblv = append(tblv, rng.IntN(20)-3)
		}
		want := map[string]bool{}
		noRoute := false
		for _, d := range dbv {
			for _, tv := range tblv {
				ts, err := r.RouteContext(hinted("t_order", shardconf.Hint{Database: vals(d), Table: vals(tv)}), "t_order")
				if errors.Is(err, shardconf.ErrNoRoute) {
					noRoute = true
					continue
				}
				if err != nil || len(ts) != 1 {
					t.Fatalf("%v, %v: %v, %v", d, tv, ts, err)
				}
				want[ts[0].String()] = true
			}
		}
		got, err := r.RouteContext(hinted("t_order", shardconf.Hint{Database: dbv, Table: tblv}), "t_order")
		if noRoute {
			if !errors.Is(err, shardconf.ErrNoRoute) {
				t.Fatalf("%v × %v: %v, %v; want ErrNoRoute (a value routes nowhere)", dbv, tblv, targets(got), err)
			}
			continue
		}
		var ws []string
		for k := range want {
			ws = append(ws, k)
		}
		if err != nil || len(got) != len(ws) {
			t.Fatalf("%v × %v: %q, %v; want %v", dbv, tblv, targets(got), err, ws)
		}
		for _, g := range got {
			if !want[g.String()] {
				t.Fatalf("%v × %v: %q has %s, not a single-value target", dbv, tblv, targets(got), g)
			}
		}
	}
}
