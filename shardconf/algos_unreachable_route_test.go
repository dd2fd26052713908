package shardconf_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// algosRouter compiles rules YAML that must load.
func algosRouter(t *testing.T, yaml string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	return r
}

// algosOneTable is a one-table rule file with the given algorithm.
func algosOneTable(nodes, column, algoType, props string) string {
	return `dataSources:
  ds: {url: "sqlite::memory:"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ` + nodes + `
      tableStrategy:
        standard:
          shardingColumn: ` + column + `
          shardingAlgorithmName: t_algo
  shardingAlgorithms:
    t_algo:
      type: ` + algoType + `
      props:
` + props
}

// algosUnreachable renders Router.Unreachable as "table|algorithm|line|partition" lines.
func algosUnreachable(r *shardconf.Router) string {
	var out []string
	for _, u := range r.Unreachable() {
		out = append(out, u.Table+"|"+u.Algorithm+"|"+itoa(u.Pos.Line)+"|"+u.Partition)
	}
	return strings.Join(out, "\n")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestModRoutesMissingResidueToErrNoRoute(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_${0..1}", "order_id", "MOD", "        sharding-count: 4\n"))
	if got, want := algosUnreachable(r), "t_order|t_algo|13|t_order_2 to t_order_3 (shards 2..3, 2 in all: values whose remainder mod 4 is 2..3)"; got != want {
		t.Errorf("Unreachable:\n%s\nwant\n%s", got, want)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", 5)), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(eq("order_id", int64(4))), want: "ds.t_order_0"},
		// the int fast path and the general path both refuse a missing residue
		{table: "t_order", conds: conds(eq("order_id", int64(6))), want: "value 6", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(eq("order_id", 7)), want: "value 7", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(eq("order_id", "3")), want: "value", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(eq("order_id", 6), eq("user_id", 1)), want: "value 6", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(in("order_id", 1, 3)), want: "value 3", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(in("order_id", 1, 4)), want: "ds.t_order_0 ds.t_order_1"},
		// Ranges go to the residues that have a table: rows of the others
		// could never have been inserted.
		{table: "t_order", conds: conds(between("order_id", 1, 2)), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(between("order_id", 0, 100)), want: "ds.t_order_0 ds.t_order_1"},
		{table: "t_order", conds: conds(between("order_id", 3, 4)), want: "ds.t_order_0"},
		{table: "t_order", conds: conds(between("order_id", 6, 7)), want: ""},
		{table: "t_order", conds: conds(shardconf.Ge("order_id", 6)), want: "ds.t_order_0 ds.t_order_1"},
	})
}

func TestModLargeCountOverFewTablesLoads(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_${0..1}", "order_id", "MOD", "        sharding-count: 2000000000\n"))
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", 4000000001)), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(eq("order_id", 2)), want: "value 2", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(between("order_id", 1999999999, 2000000001)), want: "ds.t_order_0 ds.t_order_1"},
		{table: "t_order", conds: conds(between("order_id", 2, 1000000000)), want: ""},
	})
}

func TestHashModRoutesMissingShardToErrNoRoute(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_${0..1}", "order_id", "HASH_MOD", "        sharding-count: 4\n"))
	if got := algosUnreachable(r); !strings.Contains(got, "t_order_2 to t_order_3") {
		t.Errorf("Unreachable: %s", got)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", 5)), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(eq("order_id", int64(6))), want: "value 6", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(eq("order_id", "a")), want: "ds.t_order_1"}, // "a".hashCode() = 97
		{table: "t_order", conds: conds(eq("order_id", "b")), want: "value", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(between("order_id", 1, 9)), want: "ds.t_order_0 ds.t_order_1"},
	})
}

func TestInlineRemainderOverFewerTablesRoutesMissingToErrNoRoute(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_${0..1}", "order_id", "INLINE",
		"        algorithm-expression: t_order_${order_id % 4}\n        allow-range-query-with-inline-sharding: true\n"))
	if got, want := algosUnreachable(r), "t_order|t_algo|13|t_order_2 to t_order_3 (2 names)"; got != want {
		t.Errorf("Unreachable:\n%s\nwant\n%s", got, want)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", 5)), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(eq("order_id", int64(6))), wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(eq("order_id", 7)), wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(between("order_id", 1, 2)), want: "ds.t_order_0 ds.t_order_1"},
	})
}

func TestModDatabaseStrategyMissingDataSourceIsErrNoRoute(t *testing.T) {
	r := algosRouter(t, `dataSources:
  ds_0: {url: "sqlite::memory:"}
  ds_1: {url: "sqlite::memory:"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order
      databaseStrategy:
        standard:
          shardingColumn: user_id
          shardingAlgorithmName: db_mod
  shardingAlgorithms:
    db_mod:
      type: MOD
      props:
        sharding-count: 3
`)
	if got := algosUnreachable(r); !strings.Contains(got, "t_order|db_mod|14|ds_2 (shard 2") {
		t.Errorf("Unreachable: %s", got)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("user_id", 4)), want: "ds_1.t_order"},
		{table: "t_order", conds: conds(eq("user_id", 5)), want: "value 5", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(between("user_id", 1, 2)), want: "ds_1.t_order"},
	})
}

func TestRangeAlgorithmsRouteMissingPartitionToErrNoRoute(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_${0..2}", "order_id", "VOLUME_RANGE",
		"        range-lower: 10\n        range-upper: 45\n        sharding-volume: 10\n"))
	if got, want := algosUnreachable(r), "t_order|t_algo|13|t_order_3 to t_order_5 (shards 3..5, 3 in all: values from 30)"; got != want {
		t.Errorf("Unreachable:\n%s\nwant\n%s", got, want)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", 29)), want: "ds.t_order_2"},
		{table: "t_order", conds: conds(eq("order_id", 30)), want: "value 30", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(between("order_id", 25, 1000)), want: "ds.t_order_2"},
		{table: "t_order", conds: conds(shardconf.Gt("order_id", 40)), want: ""},
	})
	r = algosRouter(t, algosOneTable("ds.t_order_${[0,2]}", "order_id", "BOUNDARY_RANGE", "        sharding-ranges: 10,20\n"))
	if got, want := algosUnreachable(r), "t_order|t_algo|13|t_order_1 (shard 1: values in [10, 20))"; got != want {
		t.Errorf("Unreachable:\n%s\nwant\n%s", got, want)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", 15)), want: "value 15", wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(between("order_id", 5, 25)), want: "ds.t_order_0 ds.t_order_2"},
	})
}

func TestAutoIntervalMorePartitionsThanTablesLoads(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_${0..2}", "create_time", "AUTO_INTERVAL",
		"        datetime-lower: '2020-01-01 00:00:00'\n        datetime-upper: '2020-01-04 00:00:00'\n        sharding-seconds: 86400\n"))
	if got, want := algosUnreachable(r), "t_order|t_algo|13|t_order_3 to t_order_4 (shards 3..4, 2 in all: times after 2020-01-03 00:00:00)"; got != want {
		t.Errorf("Unreachable:\n%s\nwant\n%s", got, want)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("create_time", "2020-01-02 00:00:00")), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(eq("create_time", "2020-01-02 12:00:00")), want: "ds.t_order_2"},
		{table: "t_order", conds: conds(eq("create_time", "2020-01-03 12:00:00")), wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(between("create_time", "2020-01-01 12:00:00", "2020-02-01 00:00:00")), want: "ds.t_order_1 ds.t_order_2"},
	})
}

func TestIntervalUpperPastLastTableLoads(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_2024${['01','02','03']}", "create_time", "INTERVAL", `        datetime-pattern: yyyy-MM-dd HH:mm:ss
        datetime-lower: '2024-01-01 00:00:00'
        datetime-upper: '2024-06-30 23:59:59'
        sharding-suffix-pattern: yyyyMM
        datetime-interval-unit: MONTHS
`))
	if got, want := algosUnreachable(r), "t_order|t_algo|13|intervals [2024-04-01 00:00:00, 2024-07-01 00:00:00) (3 intervals, suffixes 202404 to 202406)"; got != want {
		t.Errorf("Unreachable:\n%s\nwant\n%s", got, want)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("create_time", "2024-03-31 23:59:59")), want: "ds.t_order_202403"},
		{table: "t_order", conds: conds(eq("create_time", "2024-04-01 00:00:00")), wantErr: shardconf.ErrNoRoute},
		{table: "t_order", conds: conds(between("create_time", "2024-02-15 00:00:00", "2024-05-01 00:00:00")), want: "ds.t_order_202402 ds.t_order_202403"},
		{table: "t_order", conds: conds(shardconf.Ge("create_time", "2024-04-01 00:00:00")), want: ""},
	})
}

func TestUnreachableIsEmptyWhenEveryPartitionHasATable(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_${0..3}", "order_id", "MOD", "        sharding-count: 4\n"))
	if u := r.Unreachable(); len(u) != 0 {
		t.Errorf("Unreachable = %v", u)
	}
}

func TestAmbiguousSuffixStaysAnError(t *testing.T) {
	cfg, err := shardconf.Parse([]byte(algosOneTable("ds.t_order_${0..1},ds.t_item_1", "order_id", "MOD", "        sharding-count: 2\n")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = shardconf.NewRouter(cfg)
	var ce *shardconf.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "several targets end in") {
		t.Fatalf("err = %v, want a ConfigError naming the shared suffix", err)
	}
}
