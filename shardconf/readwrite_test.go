package shardconf_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// rwBase: two readwrite-splitting groups, ds_0 and ds_1, each with a write
// database and two replicas; t_order is sharded over the groups.
const rwBase = `
dataSources:
  w_0: {driver: pgx, dsn: "postgres://127.0.0.1/w0"}
  r_0a: {driver: pgx, dsn: "postgres://127.0.0.1/r0a"}
  r_0b: {driver: pgx, dsn: "postgres://127.0.0.1/r0b"}
  w_1: {driver: pgx, dsn: "postgres://127.0.0.1/w1"}
  r_1a: {driver: pgx, dsn: "postgres://127.0.0.1/r1a"}
  r_1b: {driver: pgx, dsn: "postgres://127.0.0.1/r1b"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: ds_mod}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: t_mod}
  broadcastTables: [t_dict]
  shardingAlgorithms:
    t_mod: {type: MOD, props: {sharding-count: 2}}
    ds_mod: {type: MOD, props: {sharding-count: 2}}
- !READWRITE_SPLITTING
  dataSourceGroups:
    ds_0:
      writeDataSourceName: w_0
      readDataSourceNames: [r_0a, r_0b]
      transactionalReadQueryStrategy: PRIMARY
      loadBalancerName: weighted
    ds_1:
      writeDataSourceName: w_1
      readDataSourceNames: "r_1${['a','b']}"
  loadBalancers:
    weighted:
      type: WEIGHT
      props: {r_0a: 1, r_0b: 3}
`

func parseRouter(t *testing.T, text string) *shardconf.Router {
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

func TestReadWriteGroupsAreTheDataSourcesTheRulesRouteTo(t *testing.T) {
	r := parseRouter(t, rwBase)
	if got := r.DataSources(); !slices.Equal(got, []string{"ds_0", "ds_1"}) {
		t.Fatalf("DataSources() = %v, want the groups [ds_0 ds_1]", got)
	}
	ts, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Eq("order_id", 0))
	if err != nil || targets(ts) != "ds_1.t_order_0" {
		t.Fatalf("route = %q, %v", targets(ts), err)
	}
	// A broadcast table has a copy per group, never one per replica.
	ts, _ = r.Targets("t_dict")
	if targets(ts) != "ds_0.t_dict ds_1.t_dict" {
		t.Fatalf("broadcast targets = %q", targets(ts))
	}
	g, ok := r.ReadWriteGroup("ds_0")
	if !ok {
		t.Fatal("ds_0 is not a group")
	}
	if g.Write.Name != "w_0" || g.Write.DSN != "postgres://127.0.0.1/w0" || g.Write.Driver != "pgx" {
		t.Errorf("write = %+v", g.Write)
	}
	if fmt.Sprint(g.Names()) != "[w_0 r_0a r_0b]" || g.Reads[1].DSN != "postgres://127.0.0.1/r0b" {
		t.Errorf("members = %v, reads %+v", g.Names(), g.Reads)
	}
	if g.LoadBalancer.Type != shardconf.BalanceWeight || g.LoadBalancer.Weights["r_0b"] != 3 || g.TransactionalReadQueryStrategy != "PRIMARY" {
		t.Errorf("balancer = %+v, strategy %q", g.LoadBalancer, g.TransactionalReadQueryStrategy)
	}
	g1, _ := r.ReadWriteGroup("ds_1")
	if fmt.Sprint(g1.Names()) != "[w_1 r_1a r_1b]" || g1.LoadBalancer.Type != shardconf.BalanceRoundRobin {
		t.Errorf("ds_1 = %v, balancer %+v (want the inline list expanded and ROUND_ROBIN by default)", g1.Names(), g1.LoadBalancer)
	}
	// The group's entry in DataSources opens its write database (sqlhook
	// and the CLI use it).
	for _, ds := range r.Config().DataSources {
		if ds.Name == "ds_1" && ds.DSN != "postgres://127.0.0.1/w1" {
			t.Errorf("DataSources entry of ds_1 = %+v, want the write database's DSN", ds)
		}
	}
	if _, ok := r.ReadWriteGroup("w_0"); ok {
		t.Error("a member is reported as a group")
	}
	// The copy is the caller's.
	g.Reads[0].Name = "changed"
	if again, _ := r.ReadWriteGroup("ds_0"); again.Reads[0].Name != "r_0a" {
		t.Error("ReadWriteGroup shares its slices with the router")
	}
}

func TestReadWriteSplittingOlderShapesLoadAlike(t *testing.T) {
	older := strings.Replace(rwBase, "dataSourceGroups:", "dataSources:", 1)
	older = strings.Replace(older, "      transactionalReadQueryStrategy: PRIMARY\n", "", 1)
	static := strings.Replace(older, `      writeDataSourceName: w_0
      readDataSourceNames: [r_0a, r_0b]`, `      staticStrategy:
        writeDataSourceName: w_0
        readDataSourceNames: [r_0a, r_0b]`, 1)
	typed := strings.Replace(older, `      writeDataSourceName: w_0
      readDataSourceNames: [r_0a, r_0b]`, `      type: Static
      props:
        write-data-source-name: w_0
        read-data-source-names: r_0a, r_0b`, 1)
	for name, text := range map[string]string{"5.0 dataSources": older, "5.1 staticStrategy": static, "5.1 type: Static": typed} {
		r := parseRouter(t, text)
		g, ok := r.ReadWriteGroup("ds_0")
		if !ok || fmt.Sprint(g.Names()) != "[w_0 r_0a r_0b]" || g.LoadBalancer.Name != "weighted" {
			t.Errorf("%s: group = %+v, %v", name, g, ok)
		}
	}
}

func TestReadWriteSplittingConfigErrorsHavePositions(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		line, col      int
		path, want     string
	}{
		{"unknown balancer type", "type: WEIGHT", "type: LEAST_CONN", 34, 13,
			"rules[1].loadBalancers.weighted.type", `load balancer type "LEAST_CONN" is not supported`},
		{"undefined balancer", "loadBalancerName: weighted", "loadBalancerName: nope", 28, 25,
			"rules[1].dataSourceGroups.ds_0.loadBalancerName", `load balancer "nope" is not in loadBalancers`},
		{"unknown read data source", "[r_0a, r_0b]", "[r_0a, r_0c]", 26, 28,
			"rules[1].dataSourceGroups.ds_0.readDataSourceNames", "read data source r_0c of group ds_0 is not in dataSources"},
		{"unknown write data source", "writeDataSourceName: w_1", "writeDataSourceName: w_9", 30, 28,
			"rules[1].dataSourceGroups.ds_1.writeDataSourceName", "write data source w_9 of group ds_1 is not in dataSources"},
		{"a node names a replica", "actualDataNodes: ds_${0..1}.t_order_${0..1}", "actualDataNodes: ds_0.t_order_${0..1}, r_1a.t_order_${0..1}", 13, 7,
			"rules[0].tables.t_order.actualDataNodes", `data source "r_1a" is a read data source of readwrite-splitting group ds_1`},
		{"a node names a write data source", "actualDataNodes: ds_${0..1}.t_order_${0..1}", "actualDataNodes: ds_0.t_order_${0..1}, w_1.t_order_${0..1}", 13, 7,
			"rules[0].tables.t_order.actualDataNodes", `data source "w_1" is the write data source of readwrite-splitting group ds_1`},
		{"replica in two groups", `"r_1${['a','b']}"`, "r_0a", 31, 28,
			"rules[1].dataSourceGroups.ds_1.readDataSourceNames", "data source r_0a is in group ds_0 already"},
		{"group named like a database", "    ds_1:\n      writeDataSourceName", "    r_1b:\n      writeDataSourceName", 29, 5,
			"rules[1].dataSourceGroups.r_1b", "has the name of a data source in dataSources"},
		{"database discovery", "      loadBalancerName: weighted", "      loadBalancerName: weighted\n      dynamicStrategy: {autoAwareDataSourceName: x}", 29, 7,
			"rules[1].dataSourceGroups.ds_0.dynamicStrategy", "database discovery) is not supported"},
		{"database discovery, 5.1", "      writeDataSourceName: w_0\n      readDataSourceNames: [r_0a, r_0b]", "      type: Dynamic\n      props: {auto-aware-data-source-name: x}", 25, 13,
			"rules[1].dataSourceGroups.ds_0.type", "type Dynamic (database discovery) is not supported"},
		{"unknown group type", "      writeDataSourceName: w_0\n      readDataSourceNames: [r_0a, r_0b]", "      type: Statik\n      props: {write-data-source-name: w_0}", 25, 13,
			"rules[1].dataSourceGroups.ds_0.type", `"Statik" is not Static or Dynamic`},
		{"misspelt Static prop", "      writeDataSourceName: w_0\n      readDataSourceNames: [r_0a, r_0b]", "      type: Static\n      props: {write-data-source-name: w_0, read-datasource-names: r_0a}", 26, 44,
			"rules[1].dataSourceGroups.ds_0.props.read-datasource-names", `unknown key`},
		{"bad transaction strategy", "transactionalReadQueryStrategy: PRIMARY", "transactionalReadQueryStrategy: REPLICA", 27, 39,
			"rules[1].dataSourceGroups.ds_0.transactionalReadQueryStrategy", `"REPLICA" is not one of PRIMARY, FIXED, DYNAMIC`},
		{"missing weight", "{r_0a: 1, r_0b: 3}", "{r_0a: 1}", 35, 14,
			"rules[1].loadBalancers.weighted.props", "has no weight for read data source r_0b"},
		{"misspelt weight", "{r_0a: 1, r_0b: 3}", "{r_0a: 1, r_0b: 3, r_Ob: 2}", 35, 14,
			"rules[1].loadBalancers.weighted.props", `weight for "r_Ob", which is not a read data source`},
		{"negative weight", "{r_0a: 1, r_0b: 3}", "{r_0a: 1, r_0b: -3}", 35, 14,
			"rules[1].loadBalancers.weighted.props", `weight "-3" of read data source r_0b`},
		{"no replicas", "      readDataSourceNames: [r_0a, r_0b]\n", "", 25, 7,
			"rules[1].dataSourceGroups.ds_0.readDataSourceNames", "required"},
		{"other rule still refused", "- !READWRITE_SPLITTING", "- !ENCRYPT\n  tables: {}\n- !READWRITE_SPLITTING", 22, 3,
			"rules[1]", "!ENCRYPT is not supported"},
		{"two readwrite rules", "  loadBalancers:", "  loadBalancers: {}\n- !READWRITE_SPLITTING\n  dataSourceGroups: {}\n  x:", 33, 3,
			"rules[2]", "a second !READWRITE_SPLITTING rule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(rwBase, tc.old) {
				t.Fatalf("%q is not in the base text", tc.old)
			}
			errs := configErrors(t, strings.Replace(rwBase, tc.old, tc.new, 1))
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

func TestReadBalancerSpreadsReadsAsConfigured(t *testing.T) {
	reads := []shardconf.DataSource{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	count := func(lb shardconf.LoadBalancer, n int) map[int]int {
		g := &shardconf.ReadWriteGroup{Name: "g", Write: shardconf.DataSource{Name: "w"}, Reads: reads, LoadBalancer: lb}
		b := g.NewReadBalancer()
		out := map[int]int{}
		for i := 0; i < n; i++ {
			out[b.Next()]++
		}
		return out
	}
	if got := count(shardconf.LoadBalancer{Type: shardconf.BalanceRoundRobin}, 9); got[0] != 3 || got[1] != 3 || got[2] != 3 {
		t.Errorf("ROUND_ROBIN: %v, want 3 each", got)
	}
	if got := count(shardconf.LoadBalancer{Type: shardconf.BalanceRandom}, 3000); got[0] < 800 || got[1] < 800 || got[2] < 800 || len(got) != 3 {
		t.Errorf("RANDOM: %v, want about 1000 each", got)
	}
	got := count(shardconf.LoadBalancer{Type: shardconf.BalanceWeight, Weights: map[string]float64{"a": 1, "b": 0, "c": 3}}, 4000)
	if got[1] != 0 || got[0] < 800 || got[0] > 1200 || got[2] < 2800 || len(got) != 2 {
		t.Errorf("WEIGHT 1:0:3: %v, want about 1000:0:3000", got)
	}
	empty := &shardconf.ReadWriteGroup{Name: "g", Write: shardconf.DataSource{Name: "w"}}
	if i := empty.NewReadBalancer().Next(); i != -1 {
		t.Errorf("no replicas: Next() = %d, want -1", i)
	}
}

func TestReadWriteGroupsWithoutDataSourcesSection(t *testing.T) {
	text := rwBase[strings.Index(rwBase, "rules:"):]
	r := parseRouter(t, text)
	if got := r.DataSources(); !slices.Equal(got, []string{"ds_0", "ds_1"}) {
		t.Fatalf("DataSources() = %v, want the groups", got)
	}
	if g, ok := r.ReadWriteGroup("ds_1"); !ok || g.Write.Name != "w_1" || g.Write.DSN != "" {
		t.Fatalf("ds_1 = %+v, %v", g, ok)
	}
	bad := strings.Replace(text, "actualDataNodes: ds_${0..1}.t_order_${0..1}", "actualDataNodes: ds_0.t_order_${0..1}, r_0b.t_order_${0..1}", 1)
	errs := configErrors(t, bad)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `"r_0b" is a read data source of readwrite-splitting group ds_0`) {
		t.Fatalf("a node naming a replica: %v", errs)
	}
}

func TestReadBalancerIsSafeForConcurrentUse(t *testing.T) {
	g := &shardconf.ReadWriteGroup{Name: "g", Write: shardconf.DataSource{Name: "w"},
		Reads: []shardconf.DataSource{{Name: "a"}, {Name: "b"}}, LoadBalancer: shardconf.LoadBalancer{Type: shardconf.BalanceRoundRobin}}
	b := g.NewReadBalancer()
	counts := make(chan [2]int, 8)
	for w := 0; w < 8; w++ {
		go func() {
			var c [2]int
			for i := 0; i < 1000; i++ {
				c[b.Next()]++
			}
			counts <- c
		}()
	}
	var total [2]int
	for w := 0; w < 8; w++ {
		c := <-counts
		total[0] += c[0]
		total[1] += c[1]
	}
	if total != [2]int{4000, 4000} {
		t.Fatalf("ROUND_ROBIN over 8000 concurrent reads: %v, want 4000 each", total)
	}
}

func TestReadWriteSplittingShardingSphereFileLoads(t *testing.T) {
	r := mustRouter(t, "ss5-readwrite-splitting.yaml")
	if got := r.DataSources(); !slices.Equal(got, []string{"ds_0", "ds_1"}) {
		t.Fatalf("DataSources() = %v", got)
	}
	ts, err := r.Route("t_order", shardconf.Eq("user_id", 7))
	if err != nil || targets(ts) != "ds_1.t_order" {
		t.Fatalf("route = %q, %v", targets(ts), err)
	}
	g, ok := r.ReadWriteGroup("ds_1")
	if !ok || fmt.Sprint(g.Names()) != "[write_ds_1 read_ds_1_0 read_ds_1_1]" || g.LoadBalancer.Type != shardconf.BalanceRoundRobin {
		t.Fatalf("ds_1 = %+v, %v", g, ok)
	}
	// An error names the file, line and key.
	b, err := os.ReadFile(filepath.Join("testdata", "ss5-readwrite-splitting.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), "type: ROUND_ROBIN", "type: LEAST_ACTIVE", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = shardconf.Load(bad)
	if err == nil || !strings.Contains(err.Error(), bad+`:79:13: rules[1].loadBalancers.round_robin.type: load balancer type "LEAST_ACTIVE" is not supported`) {
		t.Fatalf("err = %v", err)
	}
}

func TestReadWriteSplittingMalformedShapesAreErrors(t *testing.T) {
	head := "rules:\n- !SHARDING\n  tables: {t: {actualDataNodes: ds_0.t}}\n- !READWRITE_SPLITTING\n"
	for _, body := range []string{
		"",
		"  dataSourceGroups: [ds_0]\n",
		"  dataSourceGroups: {ds_0: null}\n",
		"  dataSourceGroups: {ds_0: {writeDataSourceName: [a], readDataSourceNames: {a: b}}}\n",
		"  dataSourceGroups: {ds_0: {writeDataSourceName: w, readDataSourceNames: [r]}}\n  loadBalancers: {x: null}\n",
		"  dataSourceGroups: {ds_0: {writeDataSourceName: w, readDataSourceNames: [r], loadBalancerName: x}}\n  loadBalancers: {x: {type: WEIGHT, props: [1]}}\n",
		"  dataSourceGroups: {'ds_${0..1}': {writeDataSourceName: w, readDataSourceNames: [r]}}\n",
		"  dataSourceGroups: {ds_0: {writeDataSourceName: 'w_${0..1}', readDataSourceNames: 'r_${0..'}}\n",
		"  dataSourceGroups: {ds_0: {writeDataSourceName: w, readDataSourceNames: [r, r]}}\n",
		"  dataSourceGroups: {ds_0: {writeDataSourceName: w, readDataSourceNames: [ds_0]}}\n",
		"  dataSourceGroups: {ds_0: {staticStrategy: null}}\n",
		"  dataSourceGroups: {ds_0: {writeDataSourceName: w, readDataSourceNames: [r]}}\n  dataSources: {}\n",
	} {
		if errs := configErrors(t, head+body); len(errs) == 0 {
			t.Errorf("no positioned error for %q", body)
		}
	}
}
