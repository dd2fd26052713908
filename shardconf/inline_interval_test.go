package shardconf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/shardconf"
)

// An <INTERVAL> node list names the tables an INTERVAL algorithm routes to,
// as ShardingSphere's row value expression docs intend it ("often used to
// simplify the definition of actualDataNodes"): the rule file loads, and
// each month routes to its table.
func TestIntervalNodeListServesIntervalAlgorithm(t *testing.T) {
	const rules = `dataSources:
  ds: {}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: <INTERVAL>P=ds.t_order_;SP=yyyyMM;DIA=1;DIU=Months;DL=202301;DU=202306
      tableStrategy:
        standard:
          shardingColumn: create_time
          shardingAlgorithmName: by_month
  shardingAlgorithms:
    by_month:
      type: INTERVAL
      props:
        datetime-pattern: "yyyy-MM-dd HH:mm:ss"
        datetime-lower: "2023-01-01 00:00:00"
        datetime-upper: "2023-06-30 23:59:59"
        sharding-suffix-pattern: yyyyMM
        datetime-interval-unit: MONTHS
`
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all, err := r.Targets("t_order")
	if err != nil || len(all) != 6 || all[0].String() != "ds.t_order_202301" || all[5].String() != "ds.t_order_202306" {
		t.Fatalf("Targets = %v, %v; want ds.t_order_202301 .. ds.t_order_202306", all, err)
	}
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("create_time", "2023-03-15 10:00:00")), want: "ds.t_order_202303"},
		{table: "t_order", conds: conds(eq("create_time", time.Date(2023, 6, 30, 12, 0, 0, 0, time.UTC))), want: "ds.t_order_202306"},
		{table: "t_order", conds: conds(between("create_time", "2023-01-20 00:00:00", "2023-02-10 00:00:00")), want: "ds.t_order_202301 ds.t_order_202302"},
	})

	// A misspelt key is a load error with the file's line, not a guess.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(rules, ";DIU=Months", ";DIU=Month", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := shardconf.Load(bad); err == nil || !strings.Contains(err.Error(), "bad.yaml:7:") || !strings.Contains(err.Error(), "DIU=Month") {
		t.Errorf("Load with DIU=Month: %v; want an error at bad.yaml:7 naming DIU=Month", err)
	}
}
