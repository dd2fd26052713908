package shardconf_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// Values and rule shapes whose routing is easy to get subtly wrong: each
// routes to every target it can reach, and only those, or is an error;
// none panics.

const modRules = `
dataSources: {ds_0: {driver: sqlite, dsn: x}}
rules:
- !SHARDING
  tables:
    t_order: {actualDataNodes: "ds_0.t_order_${0..3}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: m}}}
    t_hash: {actualDataNodes: "ds_0.t_hash_${0..3}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: h}}}
  shardingAlgorithms:
    m: {type: MOD, props: {sharding-count: 4}}
    h: {type: HASH_MOD, props: {sharding-count: 4}}
`

// A range with a text bound is compared as text by the database when the
// column is text ('100' lies between '1' and '3'), so it cannot be narrowed
// by the numbers: it reaches every table (a superset on a numeric column).
// Integer bounds still narrow.
func TestTextBoundedRangesReachEveryTable(t *testing.T) {
	r := rulesText(t, modRules)
	all := "ds_0.t_order_0 ds_0.t_order_1 ds_0.t_order_2 ds_0.t_order_3"
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(between("order_id", "2", "10")), want: all},
		{table: "t_order", conds: conds(shardconf.Ge("order_id", "9"), shardconf.Le("order_id", "10")), want: all},
		{table: "t_order", conds: conds(between("order_id", "1", "3")), want: all},
		{table: "t_order", conds: conds(shardconf.Ge("order_id", 9), shardconf.Le("order_id", 10)), want: "ds_0.t_order_1 ds_0.t_order_2"},
	})
}

type userID int64

func (u userID) String() string { return "user-" + strings.Repeat("x", int(u%3)) }

func TestNamedIntegerTypesHashAsIntegers(t *testing.T) {
	r := rulesText(t, modRules)
	id := keygen.ID(123)
	want, err := r.Route("t_hash", eq("order_id", int64(123)))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{id, &id, userID(123)} {
		got, err := r.Route("t_hash", eq("order_id", v))
		if err != nil || targets(got) != targets(want) {
			t.Errorf("%T: %q, %v; want %q", v, targets(got), err, targets(want))
		}
	}
	if _, err := r.Route("t_hash", eq("order_id", (*keygen.ID)(nil))); err == nil {
		t.Error("a nil pointer must be an error, not a route (or a panic)")
	}
}

func TestIntervalExclusiveBoundFinerThanPatternKeepsItsTable(t *testing.T) {
	r := rulesText(t, `
dataSources: {ds_0: {driver: sqlite, dsn: x}}
rules:
- !SHARDING
  tables:
    t_log: {actualDataNodes: "ds_0.t_log_2024010${1..9}", tableStrategy: {standard: {shardingColumn: created, shardingAlgorithmName: day}}}
  shardingAlgorithms:
    day:
      type: INTERVAL
      props: {datetime-pattern: "yyyy-MM-dd", datetime-lower: "2024-01-01", datetime-upper: "2024-01-09",
              sharding-suffix-pattern: yyyyMMdd, datetime-interval-unit: DAYS}
`)
	at := func(h int) time.Time { return time.Date(2024, 1, 5, h, 0, 0, 0, time.UTC) }
	checkRoutes(t, r, []routeCase{
		{table: "t_log", conds: conds(shardconf.Gt("created", at(10)), shardconf.Lt("created", at(11))), want: "ds_0.t_log_20240105"},
		{table: "t_log", conds: conds(shardconf.Gt("created", "2024-01-05 10:00:00"), shardconf.Lt("created", "2024-01-05 11:00:00")), want: "ds_0.t_log_20240105"},
	})
}

// TestSingleRuleOnAnotherDataSourceIsRefused: a !SINGLE rule that puts a table on
// another data source than the one unsharded tables route to is refused
// (here ds_0, the only one the file shows, while Java holds t_config on ds_1).
func TestSingleRuleOnAnotherDataSourceIsRefused(t *testing.T) {
	cfg, err := shardconf.Parse([]byte(`
rules:
- !SHARDING
  tables: {t_order: {actualDataNodes: "ds_0.t_order"}}
- !SINGLE
  tables: [ds_1.t_config]
`))
	if err == nil {
		_, err = shardconf.NewRouter(cfg)
	}
	if !errors.Is(err, shardconf.ErrInvalidConfig) || !strings.Contains(err.Error(), `rules:6:12: rules[1].tables[0]: !SINGLE puts tables on data source "ds_1"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestShardingSphere4xTableNamedDefaultLoads(t *testing.T) {
	r := rulesText(t, `
shardingRule:
  tables:
    default:
      actualDataNodes: ds_${0..1}.default
      databaseStrategy: {inline: {shardingColumn: tenant_id, algorithmExpression: "ds_${tenant_id % 2}"}}
    other:
      actualDataNodes: ds_${0..1}.other
  defaultDatabaseStrategy: {inline: {shardingColumn: tenant_id, algorithmExpression: "ds_${(tenant_id + 1) % 2}"}}
`)
	checkRoutes(t, r, []routeCase{
		{table: "default", conds: conds(eq("tenant_id", 0)), want: "ds_0.default"},
		{table: "other", conds: conds(eq("tenant_id", 0)), want: "ds_1.other"},
	})
}

func TestReturnedTargetSlicesDoNotShare(t *testing.T) {
	r := rulesText(t, modRules+"- !BROADCAST\n  tables: [t_dict]\n")
	for _, table := range []string{"t_dict", "t_order"} {
		a, _ := r.Scatter(table)
		b, _ := r.Scatter(table)
		a = append(a, shardconf.Target{DataSource: "x", Table: "a"})
		_ = append(b, shardconf.Target{DataSource: "x", Table: "b"}) // writes where a's element would be, were they shared
		if a[len(a)-1].Table != "a" {
			t.Fatalf("%s: one caller's append overwrote another's", table)
		}
		if all, _ := r.Targets(table); len(all) > 0 && all[len(all)-1].DataSource == "x" {
			t.Fatalf("%s: an append changed the router", table)
		}
	}
}

func rulesText(t *testing.T, text string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
