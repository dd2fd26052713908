package shardconf_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

func mustRouter(t testing.TB, file string, opts ...shardconf.RouterOption) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Load(filepath.Join("testdata", file))
	if err != nil {
		t.Fatalf("Load(%s): %v", file, err)
	}
	r, err := shardconf.NewRouter(cfg, opts...)
	if err != nil {
		t.Fatalf("NewRouter(%s): %v", file, err)
	}
	return r
}

// targets renders a result as "ds.table ds.table".
func targets(ts []shardconf.Target) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, " ")
}

type routeCase struct {
	table   string
	conds   []shardconf.Cond
	scatter bool
	want    string // targets, or the error text it must contain
	wantErr error
}

func checkRoutes(t *testing.T, r *shardconf.Router, cases []routeCase) {
	t.Helper()
	for _, c := range cases {
		route := r.Route
		if c.scatter {
			route = r.Scatter
		}
		got, err := route(c.table, c.conds...)
		name := fmt.Sprintf("%s %v (scatter %v)", c.table, c.conds, c.scatter)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: err = %v, want %v containing %q", name, err, c.wantErr, c.want)
			}
			continue
		}
		if err != nil {
			if c.want == "" || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: err = %v, want %q", name, err, c.want)
			}
			continue
		}
		if targets(got) != c.want {
			t.Errorf("%s = %q, want %q", name, targets(got), c.want)
		}
	}
}

var eq, in, between = shardconf.Eq, shardconf.In, shardconf.Between

func conds(cs ...shardconf.Cond) []shardconf.Cond { return cs }

func TestGoldenShardingDatabases(t *testing.T) {
	r := mustRouter(t, "ss5-databases.yaml")
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("user_id", 3)), want: "ds_1.t_order"},
		{table: "t_order", conds: conds(eq("user_id", 4), eq("order_id", 9)), want: "ds_0.t_order"},
		{table: "T_ORDER", conds: conds(eq("USER_ID", int32(7))), want: "ds_1.t_order"},
		{table: "t_order_item", conds: conds(in("user_id", 1, 2, 3)), want: "ds_0.t_order_item ds_1.t_order_item"},
		{table: "t_order", conds: conds(eq("order_id", 1)), want: "user_id", wantErr: shardconf.ErrMissingShardingKey},
		{table: "t_order", scatter: true, want: "ds_0.t_order ds_1.t_order"},
		{table: "t_address", want: "ds_0.t_address ds_1.t_address"},
		{table: "t_user", want: "t_user", wantErr: shardconf.ErrUnknownTable},
		{table: "t_order", conds: conds(eq("user_id", -3)), want: "value -3", wantErr: shardconf.ErrNoRoute}, // Java: -3 % 2 = -1
	})
	if got := r.Tables(); !reflect.DeepEqual(got, []string{"t_address", "t_order", "t_order_item"}) {
		t.Errorf("Tables = %v", got)
	}
	if got := r.BindingGroup("t_order_item"); !reflect.DeepEqual(got, []string{"t_order", "t_order_item"}) {
		t.Errorf("BindingGroup = %v", got)
	}
	col, gen, ok := r.KeyGenerator("t_order_item")
	if !ok || col != "order_item_id" || gen.Type() != "SNOWFLAKE" {
		t.Fatalf("KeyGenerator = %q, %v, %v", col, gen, ok)
	}
	id, err := gen.(keygen.IDGenerator).NextID(context.Background())
	if p, _ := gen.(keygen.Decomposer).Decompose(id); err != nil || p.Worker != 123 {
		t.Fatalf("generated key %d (%v): worker %d, want 123", id, err, p.Worker)
	}
}

func TestGoldenShardingTables(t *testing.T) {
	r := mustRouter(t, "ss5-tables.yaml")
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", 5)), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(eq("order_id", uint64(1)<<63)), want: "INLINE"}, // beyond int64: refused, not wrapped
		{table: "t_goods", conds: conds(eq("goods_id", 4)), want: "ds.t_goods_0"},
		{table: "t_goods", conds: conds(eq("order_id", 4)), want: "goods_id", wantErr: shardconf.ErrMissingShardingKey},
		{table: "t_user", conds: conds(eq("id", 1)), want: "ds.t_user"}, // not sharded: the only data source
		{table: "t_order", conds: conds(between("order_id", 1, 5)), want: "allow-range-query-with-inline-sharding"},
	})
}

func TestGoldenShardingDatabasesTables(t *testing.T) {
	cfg, err := shardconf.Load(filepath.Join("testdata", "ss5-databases-tables.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The file's SNOWFLAKE generator has no worker-id: refused, with advice.
	_, err = shardconf.NewRouter(cfg)
	var ce *shardconf.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "worker-id") || !strings.Contains(err.Error(), "WithKeyGenProps") || ce.Line == 0 {
		t.Fatalf("NewRouter without worker-id: %v", err)
	}
	r := mustRouter(t, "ss5-databases-tables.yaml", shardconf.WithKeyGenProps(keygen.Props{"worker-id": "9"}))
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("user_id", 1), eq("order_id", 2)), want: "ds_1.t_order_0"},
		{table: "t_order", conds: conds(eq("user_id", 0), in("order_id", 1, 2, 3)), want: "ds_0.t_order_0 ds_0.t_order_1"},
		{table: "t_order", conds: conds(in("user_id", 0, 1), eq("order_id", 7)), want: "ds_0.t_order_1 ds_1.t_order_1"},
		{table: "t_order", conds: conds(eq("user_id", 0)), want: "order_id", wantErr: shardconf.ErrMissingShardingKey},
		{table: "t_order", conds: conds(eq("user_id", 0)), scatter: true, want: "ds_0.t_order_0 ds_0.t_order_1"},
		{table: "t_order", conds: conds(eq("user_id", 0), eq("order_id", 1), eq("order_id", 2)), want: ""}, // contradiction
		{table: "t_order", conds: conds(eq("user_id", 0), eq("order_id", 1), in("order_id", 1, 2)), want: "ds_0.t_order_1"},
		{table: "t_account", conds: conds(eq("user_id", 5), eq("account_id", 8)), want: "ds_1.t_account_0"},
		{table: "t_address", want: "ds_0.t_address ds_1.t_address"},
	})
	if col, _, ok := r.KeyGenerator("t_account"); !ok || col != "account_id" {
		t.Errorf("KeyGenerator(t_account) = %q, %v", col, ok)
	}
	if _, _, ok := r.KeyGenerator("t_order_item"); ok {
		t.Error("t_order_item has no key generator")
	}
}

func TestGoldenAutoTables(t *testing.T) {
	r := mustRouter(t, "ss5-auto-tables.yaml")
	all, err := r.Targets("t_order")
	if err != nil || targets(all) != "ds_0.t_order_0 ds_0.t_order_2 ds_1.t_order_1 ds_1.t_order_3" {
		t.Fatalf("Targets = %q, %v", targets(all), err)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", 5)), want: "ds_1.t_order_1"},
		{table: "t_order", conds: conds(eq("order_id", 2)), want: "ds_0.t_order_2"},
		{table: "t_order", conds: conds(eq("order_id", -5)), want: "ds_1.t_order_3"}, // MOD is non-negative: -5 mod 4 = 3
		{table: "t_order", conds: conds(between("order_id", 1, 2)), want: "ds_0.t_order_2 ds_1.t_order_1"},
		{table: "t_order", conds: conds(between("order_id", 1, 100)), want: "ds_0.t_order_0 ds_0.t_order_2 ds_1.t_order_1 ds_1.t_order_3"},
		{table: "t_goods", conds: conds(eq("goods_id", 7)), want: "ds_1.t_goods_3"},
		// One-sided ranges on one column merge: >= 1 AND <= 2 is BETWEEN 1 AND 2.
		{table: "t_order", conds: conds(shardconf.Ge("order_id", 1), shardconf.Le("order_id", 2)), want: "ds_0.t_order_2 ds_1.t_order_1"},
		{table: "t_order", conds: conds(shardconf.Gt("order_id", 4), shardconf.Lt("order_id", 6)), want: "ds_1.t_order_1"},
		{table: "t_order", conds: conds(shardconf.Gt("order_id", 2), shardconf.Lt("order_id", 3)), want: ""}, // no integer fits
		{table: "t_order", conds: conds(shardconf.Ge("order_id", 9), shardconf.Le("order_id", 1)), want: ""},
		{table: "t_order", conds: conds(shardconf.Ge("order_id", 1), shardconf.Le("order_id", 2), eq("order_id", 2)), want: "ds_0.t_order_2"},
	})
}

func TestGoldenShardingSphere4(t *testing.T) {
	r := mustRouter(t, "ss4-databases-tables.yaml")
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("user_id", 1), eq("order_id", 3)), want: "ds1.t_order1"},
		{table: "t_order", conds: conds(eq("user_id", 2), eq("order_id", 4)), want: "ds0.t_order0"},
		{table: "t_config", want: "ds0.t_config ds1.t_config"},
		{table: "t_user", want: "ds0.t_user"}, // defaultDataSourceName
	})
	if got := r.DataSources(); !reflect.DeepEqual(got, []string{"ds0", "ds1"}) {
		t.Errorf("DataSources = %v", got)
	}
	_, gen, ok := r.KeyGenerator("t_order")
	id, _ := gen.(keygen.IDGenerator).NextID(context.Background())
	if p, _ := gen.(keygen.Decomposer).Decompose(id); !ok || p.Worker != 123 {
		t.Errorf("4.x keyGenerator worker.id: %+v", p)
	}
}

func TestShardkeyNative(t *testing.T) {
	r := mustRouter(t, "shardkey.yaml")
	_, gen, ok := r.KeyGenerator("t_order")
	if !ok {
		t.Fatal("no key generator")
	}
	idg := gen.(keygen.IDGenerator)
	for i := 0; i < 20; i++ {
		id, err := idg.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p, _ := gen.(keygen.Decomposer).Decompose(id)
		want := fmt.Sprintf("ds_1.t_order_%d", p.Sequence&3)
		got, err := r.Route("t_order", eq("user_id", 3), eq("order_id", keygen.ID(id)))
		if err != nil || targets(got) != want {
			t.Fatalf("id %d (sequence %d): %q, %v; want %q", id, p.Sequence, targets(got), err, want)
		}
	}
	checkRoutes(t, r, []routeCase{
		// Java: "alice@example.com".hashCode() = 2145772861, % 2 = 1.
		{table: "t_user", conds: conds(eq("email", "alice@example.com")), want: "ds_1.t_user"},
		{table: "t_user", conds: conds(eq("email", "bob@example.com")), want: "ds_0.t_user"},
		{table: "t_log", conds: conds(eq("region", 3), eq("kind", 4)), want: "ds_0.t_log_1_0"},
		{table: "t_log", conds: conds(in("region", 1, 2), eq("kind", 1)), want: "ds_0.t_log_0_1 ds_0.t_log_1_1"},
		{table: "t_log", conds: conds(eq("region", 3)), want: "kind", wantErr: shardconf.ErrMissingShardingKey},
		{table: "t_country", want: "ds_0.t_country ds_1.t_country"},
	})
	cfg := r.Config()
	if got := cfg.DataSources[0].RedactedDSN(); got != "postgres://app:xxxxx@127.0.0.1:5432/shard0" {
		t.Errorf("RedactedDSN = %q", got)
	}
	if got := cfg.DataSources[1].RedactedDSN(); got != "app:xxxxx@tcp(127.0.0.1:3306)/shard1" {
		t.Errorf("RedactedDSN = %q", got)
	}
}

// TestAutoTableCounts: every auto algorithm makes as many tables as
// ShardingSphere derives from its props, and routes within them.
func TestAutoTableCounts(t *testing.T) {
	text := `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:a.db"}
  ds_1: {driver: sqlite, dsn: "file:b.db"}
rules:
- !SHARDING
  autoTables:
    t_hash:   {shardingStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: hash}}}
    t_volume: {shardingStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: volume}}}
    t_bound:  {shardingStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: bound}}}
    t_time:   {actualDataSources: ds_1, shardingStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: time}}}
  shardingAlgorithms:
    hash:   {type: HASH_MOD, props: {sharding-count: 3}}
    volume: {type: VOLUME_RANGE, props: {range-lower: 10, range-upper: 45, sharding-volume: 10}}
    bound:  {type: BOUNDARY_RANGE, props: {sharding-ranges: "1,5,10"}}
    time:   {type: AUTO_INTERVAL, props: {datetime-lower: "2020-01-01 00:00:00", datetime-upper: "2020-01-01 00:00:17", sharding-seconds: 4}}
`
	cfg, err := shardconf.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]int{"t_hash": 3, "t_volume": 6, "t_bound": 4, "t_time": 6} {
		ts, err := r.Targets(table)
		if err != nil || len(ts) != want {
			t.Errorf("%s: %d tables (%v), want %d", table, len(ts), err, want)
		}
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_volume", conds: conds(eq("k", 9)), want: "ds_0.t_volume_0"},
		{table: "t_volume", conds: conds(eq("k", 10)), want: "ds_1.t_volume_1"},
		{table: "t_volume", conds: conds(eq("k", 44)), want: "ds_0.t_volume_4"},
		{table: "t_volume", conds: conds(eq("k", 45)), want: "ds_1.t_volume_5"},
		{table: "t_bound", conds: conds(eq("k", 0)), want: "ds_0.t_bound_0"},
		{table: "t_bound", conds: conds(eq("k", 5)), want: "ds_0.t_bound_2"},
		{table: "t_bound", conds: conds(between("k", 2, 7)), want: "ds_0.t_bound_2 ds_1.t_bound_1"},
		{table: "t_time", conds: conds(eq("k", "2020-01-01 00:00:05")), want: "ds_1.t_time_2"},
		{table: "t_hash", conds: conds(eq("k", "order_1")), want: "ds_0.t_hash_0"}, // Java: abs((long) -1207109760) % 3 = 0
	})
}

// TestFastPathAgreesWithGeneralPath: an equality (taking the integer fast
// path) routes exactly as the same value in an IN list (the general path),
// for random keys, negatives and edge values, on every algorithm.
func TestFastPathAgreesWithGeneralPath(t *testing.T) {
	cfg, err := shardconf.Parse([]byte(benchRules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vals := []int64{0, 1, 15, 16, 17, -1, -16, -17, 1 << 62, -1 << 63, 1<<63 - 1, 1_331_042_935_696_789_505}
	rng := rand.New(rand.NewPCG(7, 9))
	for i := 0; i < 2000; i++ {
		vals = append(vals, int64(rng.Uint64()))
	}
	for _, table := range []string{"t_mod", "t_hash", "t_inline", "t_bits"} {
		for _, v := range vals {
			for _, typed := range []any{v, keygen.ID(v), int(v)} {
				fast, ferr := r.Route(table, eq("ORDER_ID", typed))
				slow, serr := r.Route(table, in("order_id", v))
				if (ferr == nil) != (serr == nil) || targets(fast) != targets(slow) {
					t.Fatalf("%s %d (%T): fast %q %v, general %q %v", table, v, typed, targets(fast), ferr, targets(slow), serr)
				}
			}
		}
	}
}

func TestRouteEqualityAllocatesNothing(t *testing.T) {
	cfg, err := shardconf.Parse([]byte(benchRules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"t_mod", "t_hash", "t_inline", "t_bits"} {
		c := eq("order_id", int64(1_331_042_935_696_789_505))
		if n := testing.AllocsPerRun(100, func() { _, _ = r.Route(table, c) }); n != 0 {
			t.Errorf("%s: %v allocations per Route", table, n)
		}
	}
	r2 := mustRouter(t, "ss5-databases-tables.yaml", shardconf.WithKeyGenProps(keygen.Props{"worker-id": "1"}))
	c1, c2 := eq("user_id", 3), eq("order_id", 8)
	if n := testing.AllocsPerRun(100, func() { _, _ = r2.Route("t_order", c1, c2) }); n != 0 {
		t.Errorf("database and table strategies: %v allocations per Route", n)
	}
}

func TestShardingColumns(t *testing.T) {
	r := mustRouter(t, "shardkey.yaml")
	for table, want := range map[string]string{"t_order": "user_id order_id", "t_log": "region kind", "t_country": "", "nope": ""} {
		if got := strings.Join(r.ShardingColumns(table), " "); got != want {
			t.Errorf("ShardingColumns(%s) = %q, want %q", table, got, want)
		}
	}
}

// TestBoundTarget: a binding table's partner is its table at the same
// position in the same data source; an unbound table has none.
func TestBoundTarget(t *testing.T) {
	r := mustRouter(t, "ss5-databases-tables.yaml", shardconf.WithKeyGenProps(keygen.Props{"worker-id": "1"}))
	got, err := r.BoundTarget("t_order", shardconf.Target{DataSource: "ds_1", Table: "t_order_0"}, "t_order_item")
	if err != nil || got != (shardconf.Target{DataSource: "ds_1", Table: "t_order_item_0"}) {
		t.Errorf("BoundTarget(t_order ds_1.t_order_0, t_order_item) = %v, %v", got, err)
	}
	if _, err := r.BoundTarget("t_order", shardconf.Target{DataSource: "ds_1", Table: "t_order_0"}, "t_account"); err == nil {
		t.Error("t_account is not bound to t_order: no error")
	}
	if _, err := r.BoundTarget("t_order", shardconf.Target{DataSource: "ds_9", Table: "t_order_0"}, "t_order_item"); err == nil {
		t.Error("a target t_order does not have: no error")
	}
}

// ShardingSphere 5.5 names a binding group ("ref_0:t_order,t_order_item");
// the name is dropped and the tables bind as an unnamed group's do.
func TestNamedBindingGroupBindsItsTables(t *testing.T) {
	const rules = `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:n0.db"}
  ds_1: {driver: sqlite, dsn: "file:n1.db"}
rules:
- !SHARDING
  tables:
    t_order: {actualDataNodes: "ds_${0..1}.t_order_${0..1}"}
    t_order_item: {actualDataNodes: "ds_${0..1}.t_order_item_${0..1}"}
  bindingTables:
    - ref_0:t_order, t_order_item
  defaultDatabaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: ds}}
  defaultTableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tbl}}
  shardingAlgorithms:
    ds: {type: MOD, props: {sharding-count: 2}}
    tbl: {type: MOD, props: {sharding-count: 2}}
- !SHARDING_CACHE
  allowedMaxSqlLength: 512
  routeCache: {initialCapacity: 65536, maximumSize: 262144, softValues: true}
`
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.BindingGroup("t_order_item"), ","); got != "t_order,t_order_item" {
		t.Fatalf("BindingGroup(t_order_item) = %q", got)
	}
	bound, err := r.BoundTarget("t_order", shardconf.Target{DataSource: "ds_1", Table: "t_order_0"}, "t_order_item")
	if err != nil || bound.String() != "ds_1.t_order_item_0" {
		t.Fatalf("BoundTarget = %v, %v", bound, err)
	}
	// A name on a table that is not sharded is still reported, without the name.
	cfg, err = shardconf.Parse([]byte(strings.Replace(rules, "ref_0:t_order, t_order_item", "ref_0:t_order, t_nope", 1)))
	if err == nil {
		_, err = shardconf.NewRouter(cfg)
	}
	if err == nil || !strings.Contains(err.Error(), "binding table t_nope is not a sharded table") {
		t.Fatalf("unknown bound table: %v", err)
	}
}
