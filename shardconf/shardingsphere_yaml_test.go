package shardconf_test

// Rule files from apache/shardingsphere's docs, examples and test resources,
// copied unchanged into testdata/shardingsphere (each with a first line
// naming its source and licence). Each must load and route as the
// ShardingSphere documentation and the file's own comments say, or fail
// with the error recorded here. The list is exhaustive: a file added to the
// directory without an entry fails TestShardingSphereRuleFilesAreAllChecked.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// ssCorpusFile is one rule file and what it must do.
type ssCorpusFile struct {
	file string
	// loadErr, when set, is text the Load or NewRouter error must contain:
	// the file is refused, for the reason given in the comment.
	loadErr string
	routes  []routeCase
	// hints are routed with RouteContext: the table, its hint, the targets.
	hints []ssHintCase
	check func(t *testing.T, r *shardconf.Router)
}

type ssHintCase struct {
	table string
	hint  shardconf.Hint
	want  string
}

// The CLASS_BASED class the GraalVM native tests name; its comment in
// those files says it emulates INLINE's ds_${user_id % 2}.
const ssNativeInlineClass = "org.apache.shardingsphere.test.natived.commons.algorithm.ClassBasedInlineShardingAlgorithmFixture"

// The CLASS_BASED class of the class-based-sharding-algorithm example.
const ssExampleClass = "org.apache.shardingsphere.example.extension.sharding.algortihm.classbased.fixture.ClassBasedStandardShardingAlgorithmFixture"

var (
	ssRegisterOnce sync.Once
	ssRegisterErr  error
)

// ssRegister registers Go stand-ins for the Java algorithms the corpus
// names: the native tests' CLASS_BASED fixture, and the examples' HINT_TEST
// and class-based fixture and the driver e2e test's JDBC.STANDARD.FIXTURE,
// DRIVER.STANDARD.FIXTURE and the SQL e2e tests' IT.STANDARD.FIXTURE,
// whose Java is not in the corpus: the target
// ending in value % 2 stands in for them. The driver e2e tests' key
// generator fixtures are stood in for by a counter of int64 keys. (The sharding core fixtures'
// CORE.*.FIXTURE types are not registered here: those files fail to load
// before their algorithms are resolved, and hint_shardingsphere_test.go
// registers CORE.HINT.FIXTURE in this process.)
func ssRegister(t *testing.T) {
	t.Helper()
	ssRegisterOnce.Do(func() {
		ssRegisterErr = errors.Join(
			shardconf.RegisterAlgorithm(ssNativeInlineClass, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
				return ssSuffixAlgorithm{prefix: "ds_"}, nil
			}),
			shardconf.RegisterAlgorithm("HINT_TEST", func(map[string]string) (shardconf.ShardingAlgorithm, error) {
				return ssSuffixAlgorithm{}, nil
			}),
			shardconf.RegisterAlgorithm(ssExampleClass, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
				return ssSuffixAlgorithm{}, nil
			}),
			shardconf.RegisterAlgorithm("JDBC.STANDARD.FIXTURE", func(map[string]string) (shardconf.ShardingAlgorithm, error) {
				return ssSuffixAlgorithm{}, nil
			}),
			shardconf.RegisterAlgorithm("DRIVER.STANDARD.FIXTURE", func(map[string]string) (shardconf.ShardingAlgorithm, error) {
				return ssSuffixAlgorithm{}, nil
			}),
			shardconf.RegisterAlgorithm("IT.STANDARD.FIXTURE", func(map[string]string) (shardconf.ShardingAlgorithm, error) {
				return ssSuffixAlgorithm{}, nil
			}),
			keygen.Register("IT.AUTO_INCREMENT.FIXTURE", func(keygen.Props, keygen.Options) (keygen.Generator, error) {
				return &ssCounter{typ: "IT.AUTO_INCREMENT.FIXTURE"}, nil
			}),
			keygen.Register("DRIVER.FIXTURE", func(keygen.Props, keygen.Options) (keygen.Generator, error) {
				return &ssCounter{typ: "DRIVER.FIXTURE"}, nil
			}),
			keygen.Register("JDBC.INCREMENT.FIXTURE", func(keygen.Props, keygen.Options) (keygen.Generator, error) {
				return &ssCounter{typ: "JDBC.INCREMENT.FIXTURE"}, nil
			}),
			keygen.Register("JDBC.RESET_INCREMENT.FIXTURE", func(keygen.Props, keygen.Options) (keygen.Generator, error) {
				return &ssCounter{typ: "JDBC.RESET_INCREMENT.FIXTURE"}, nil
			}),
		)
	})
	if ssRegisterErr != nil {
		t.Fatalf("registering the corpus's algorithms: %v", ssRegisterErr)
	}
}

// ssSuffixAlgorithm routes an integer v to prefix + v % 2 when prefix is
// set, else to the first target ending in v % 2.
type ssSuffixAlgorithm struct{ prefix string }

func (a ssSuffixAlgorithm) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	n, ok := v.Value.(int64)
	if !ok {
		return "", fmt.Errorf("want an integer, got %T", v.Value)
	}
	for _, tg := range targets {
		if a.prefix != "" && tg == fmt.Sprintf("%s%d", a.prefix, n%2) || a.prefix == "" && strings.HasSuffix(tg, fmt.Sprint(n%2)) {
			return tg, nil
		}
	}
	return "", shardconf.ErrNoRoute
}

// ssCounter is a key generator of int64 keys 1, 2, 3, ...
type ssCounter struct {
	typ string
	n   atomic.Int64
}

func (c *ssCounter) Type() string                         { return c.typ }
func (c *ssCounter) NextKey(context.Context) (any, error) { return c.n.Add(1), nil }

var ssCorpus = []ssCorpusFile{
	{
		// ShardingSphere's docs, .../shardingsphere-jdbc/yaml-config/rules/sharding.en.md:
		// user_id picks ds_0/ds_1, order_id the table; t_account's strategy
		// names no column and takes defaultShardingColumn account_id.
		file: "docs-jdbc-yaml-config-rules-sharding-sample.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 1), eq("order_id", 2)), want: "ds_1.t_order_0"},
			{table: "t_order_item", conds: conds(eq("user_id", 2), eq("order_id", 3)), want: "ds_0.t_order_item_1"},
			{table: "t_account", conds: conds(eq("user_id", 3), eq("account_id", 4)), want: "ds_1.t_account_0"},
			{table: "t_account", conds: conds(eq("user_id", 3)), want: "account_id", wantErr: shardconf.ErrMissingShardingKey},
			{table: "t_address", want: "ds_0.t_address ds_1.t_address"},
		},
		check: func(t *testing.T, r *shardconf.Router) {
			if got := strings.Join(r.BindingGroup("t_order"), ","); got != "t_order,t_order_item" {
				t.Errorf("BindingGroup(t_order) = %s", got)
			}
			if col, _, ok := r.KeyGenerator("t_account"); !ok || col != "account_id" {
				t.Errorf("KeyGenerator(t_account) = %q, %v", col, ok)
			}
		},
	},
	{
		// ShardingSphere's docs, .../builtin-algorithm/expr.en.md: a <LITERAL> node list and a
		// <GROOVY> algorithm expression; no dataSources section.
		file: "docs-builtin-algorithm-expr-sample.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 5), eq("order_id", 6)), want: "ds_1.t_order_0"},
			{table: "t_order", conds: conds(eq("user_id", 4), eq("order_id", 7)), want: "ds_0.t_order_1"},
			{table: "t_order", scatter: true, want: "ds_0.t_order_0 ds_0.t_order_1 ds_1.t_order_0 ds_1.t_order_1"},
		},
	},
	{
		// examples/docker/shardingsphere-proxy: the docs' databases-and-tables layout.
		file: "examples-docker-proxy-config-sharding.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 1), eq("order_id", 1)), want: "ds_1.t_order_1"},
			{table: "t_order_item", conds: conds(eq("user_id", 0), eq("order_id", 3)), want: "ds_0.t_order_item_1"},
			{table: "t_order", conds: conds(eq("order_id", 3)), want: "user_id", wantErr: shardconf.ErrMissingShardingKey},
		},
	},
	{
		// jdbc's factory test: MOD auto table of 4 over two data sources,
		// t_order_0 and _2 in ds_0, _1 and _3 in ds_1.
		file: "jdbc-factory-database-for-factory-test.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("order_id", 6)), want: "ds_0.t_order_2"},
			{table: "t_order", conds: conds(eq("order_id", 7)), want: "ds_1.t_order_3"},
			{table: "t_order", conds: conds(in("order_id", 4, 5)), want: "ds_0.t_order_0 ds_1.t_order_1"},
		},
	},
	{
		// jdbc's driver fixture: HASH_MOD auto table of 2 with
		// normalize-numeric-int-range; a String routes by its hashCode.
		file: "jdbc-driver-fixture-h2-mysql.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("order_id", 4)), want: "ds_0.t_order_0"},
			{table: "t_order", conds: conds(eq("order_id", 5)), want: "ds_1.t_order_1"},
			{table: "t_order", conds: conds(eq("order_id", "a")), want: "ds_1.t_order_1"}, // "a".hashCode() = 97
		},
	},
	ssHintExample("examples-jdbc-sharding-hint-databases-tables.yaml"),
	// the same rules, its data sources in the 5.0.0-alpha form (!!class tags)
	ssHintExample("examples-jdbc-hint-databases-tables.yaml"),
	{
		// the sharding + read/write-splitting example: two groups in the
		// 5.1 form (type: Static, props write-data-source-name and
		// read-data-source-names).
		file: "examples-jdbc-sharding-readwrite-splitting.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 1), eq("order_id", 2)), want: "ds_1.t_order_0"},
			{table: "t_address", want: "ds_0.t_address ds_1.t_address"},
		},
		check: func(t *testing.T, r *shardconf.Router) {
			g, ok := r.ReadWriteGroup("ds_0")
			if !ok || g.Write.Name != "write_ds_0" || len(g.Reads) != 2 || g.Reads[0].Name != "write_ds_0_read_0" || g.Reads[1].Name != "write_ds_0_read_1" {
				t.Errorf("ReadWriteGroup(ds_0) = %+v, %v", g, ok)
			}
		},
	},
	{
		// the class-based algorithm example: strategy written in lower case.
		file: "examples-jdbc-class-based-sharding-databases.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 3)), want: "ds_1.t_order"},
			{table: "t_order_item", conds: conds(eq("user_id", 4)), want: "ds_0.t_order_item"},
			{table: "t_address", want: "ds_0.t_address ds_1.t_address"},
		},
	},
	{
		// the auto tables example: MOD 4 over ds_0 and ds_1; the file's own
		// worker-id (123) wins over the one the test supplies.
		file: "examples-jdbc-sharding-auto-tables.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("order_id", 6)), want: "ds_0.t_order_2"},
			{table: "t_order_item", conds: conds(eq("order_id", 7)), want: "ds_1.t_order_item_3"},
			{table: "t_order", conds: conds(between("order_id", 1, 2)), want: "ds_0.t_order_2 ds_1.t_order_1"},
		},
		check: func(t *testing.T, r *shardconf.Router) {
			_, gen, ok := r.KeyGenerator("t_order")
			if !ok {
				t.Fatal("t_order has no key generator")
			}
			id, err := gen.(keygen.IDGenerator).NextID(context.Background())
			if p, _ := gen.(keygen.Decomposer).Decompose(id); err != nil || p.Worker != 123 {
				t.Errorf("key %d (%v): worker %d, want 123", id, err, p.Worker)
			}
		},
	},
	{
		// the transaction e2e rule file: sqlFederation: and transaction: are
		// ignored; account's table expression uses Math.floorDiv/floorMod
		// and longValue(); ds_2 is declared but no table lives there.
		file: "e2e-transaction-jdbc-mysql-database-sharding-local.yaml",
		routes: []routeCase{
			{table: "account", conds: conds(eq("id", 5)), want: "ds_1.account_0"},
			{table: "account", conds: conds(eq("id", 6)), want: "ds_0.account_1"},
			{table: "account", conds: conds(eq("id", 7)), want: "ds_1.account_1"},
			{table: "account", conds: conds(eq("id", -3)), want: "-3", wantErr: shardconf.ErrNoRoute}, // ds_${-3 % 2} is ds_-1
			{table: "t_order", conds: conds(eq("user_id", 2), eq("order_id", 5)), want: "ds_0.t_order_1"},
			{table: "t_order_item", conds: conds(eq("user_id", 3), eq("order_id", 4)), want: "ds_1.t_order_item_0"},
			{table: "t_address", want: "ds_0.t_address ds_1.t_address ds_2.t_address"},
		},
	},
	{
		// the driver e2e rule file: no dataSources (names from the nodes),
		// !SINGLE "*.*", an auto table without actualDataSources (every data
		// source), custom algorithm and key generator types.
		file: "e2e-driver-database-sharding.yaml",
		routes: []routeCase{
			{table: "t_order_auto", conds: conds(eq("order_id", 3)), want: "jdbc_1.t_order_auto_1"},
			{table: "t_order_item_auto", conds: conds(eq("order_id", 2)), want: "jdbc_0.t_order_item_auto_0"},
			{table: "t_order", conds: conds(eq("user_id", 1), eq("order_id", 2)), want: "jdbc_1.t_order_0"},
			{table: "t_user", conds: conds(eq("user_id", 0), eq("id", 3)), want: "jdbc_0.t_user_1"},
			{table: "t_config", want: "jdbc_0.t_config jdbc_1.t_config"},
		},
		check: func(t *testing.T, r *shardconf.Router) {
			col, gen, ok := r.KeyGenerator("t_order_item")
			if !ok || col != "item_id" || gen.Type() != "JDBC.INCREMENT.FIXTURE" {
				t.Fatalf("KeyGenerator(t_order_item) = %q, %v, %v", col, gen, ok)
			}
			if k, err := gen.NextKey(context.Background()); err != nil || k != int64(1) {
				t.Errorf("first key = %v, %v; want 1", k, err)
			}
		},
	},
	{
		// the driver e2e cluster-mode file: mode with a test repository
		// (ignored), no dataSources, defaults none; config is in both.
		file: "e2e-driver-config-without-data-source-with-props.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 1), eq("order_id", 3)), want: "db1.t_order_1"},
			{table: "t_order_item", conds: conds(eq("user_id", 2), eq("order_id", 3)), want: "db0.t_order_item_1"},
			{table: "config", want: "db0.t_config db1.t_config"},
		},
	},
	ssNative("native-jdbc-features-sharding.yaml"),
	ssNative("native-jdbc-databases-mysql.yaml"),
	ssNative("native-jdbc-transactions-xa-narayana.yaml"), // transaction: is ignored
	ssNative("native-jdbc-modes-cluster-zookeeper.yaml"),  // mode: is ignored
	{
		// ShardingSphere's own YAML swapper fixtures: "ds_${0..1}.t_stock{0..8}"
		// (no '$') names the tables "t_stock{0..8}", which its swapper tests
		// never turn into data nodes; shardkey refuses the name, and the
		// sequence key generate strategy (key generation, not routing).
		file:    "features-sharding-core-sharding-rule.yaml",
		loadErr: `data node "ds_0.t_stock{0..8}" is not of the form data_source.table`,
	},
	{
		file:    "features-sharding-core-sharding-rule-for-tuple.yaml",
		loadErr: `keyGenerateType "sequence" is not supported`,
	},
	{
		// The SQL e2e scenarios name their binding group (5.5:
		// "ref_0:t_order,t_order_item", the text before ':' is the group's
		// name); sqlFederation: is ignored.
		file: "e2e-sql-scenario-db-tbl-sql-federation-rules.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 3), eq("order_id", 4)), want: "sql_federation_ds_1.t_order_0"},
			{table: "t_order_item", conds: conds(eq("user_id", 2), eq("order_id", 5)), want: "sql_federation_ds_0.t_order_item_1"},
		},
		check: func(t *testing.T, r *shardconf.Router) {
			if got := strings.Join(r.BindingGroup("t_order_item"), ","); got != "t_order,t_order_item" {
				t.Errorf("BindingGroup(t_order_item) = %s", got)
			}
		},
	},
	{
		// The SQL e2e read/write-splitting scenario: ten groups of one write
		// and one read data source (the 5.4 dataSources form), a named
		// binding group, broadcastTables in !SHARDING.
		file: "e2e-sql-scenario-dbtbl-with-readwrite-splitting-rules.yaml",
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 3), eq("order_id", 4)), want: "readwrite_ds_1.t_order_0"},
			{table: "t_order_federate_sharding", conds: conds(eq("order_id_sharding", 3)), want: "readwrite_ds_1.t_order_federate_sharding_1"},
		},
		check: func(t *testing.T, r *shardconf.Router) {
			g, ok := r.ReadWriteGroup("readwrite_ds_1")
			if !ok || g.Write.Name != "write_ds_1" || len(g.Reads) != 1 || g.Reads[0].Name != "read_ds_1" || g.LoadBalancer.Type != "ROUND_ROBIN" {
				t.Errorf("ReadWriteGroup(readwrite_ds_1) = %+v, %v", g, ok)
			}
			if ts, err := r.Route("t_country"); err != nil || len(ts) != 10 {
				t.Errorf("t_country = %v, %v; want one copy in each of the 10 groups", ts, err)
			}
		},
	},
	{
		// A named binding group too, and an INLINE expression naming db_inline_item_id where
		// the sharding column is item_id: ShardingSphere loads it and fails at
		// the first statement (MissingPropertyException); shardkey refuses it.
		file:    "e2e-sql-scenario-db-rules.yaml",
		loadErr: "uses column db_inline_item_id, but the sharding column is item_id",
	},
}

// ssNative is a GraalVM native test file: three data sources, every table
// in each, the CLASS_BASED fixture (ds_${user_id % 2}) choosing the data
// source, t_address broadcast.
func ssNative(file string) ssCorpusFile {
	return ssCorpusFile{
		file: file,
		routes: []routeCase{
			{table: "t_order", conds: conds(eq("user_id", 1)), want: "ds_1.t_order"},
			{table: "t_order_item", conds: conds(eq("user_id", 2), eq("order_item_id", 9)), want: "ds_0.t_order_item"},
			{table: "t_order", conds: conds(in("user_id", 1, 2, 3)), want: "ds_0.t_order ds_1.t_order"},
			{table: "t_order", conds: conds(eq("order_id", 1)), want: "user_id", wantErr: shardconf.ErrMissingShardingKey},
			{table: "t_address", want: "ds_0.t_address ds_1.t_address ds_2.t_address"},
		},
		check: func(t *testing.T, r *shardconf.Router) {
			if col, _, ok := r.KeyGenerator("t_order_item"); !ok || col != "order_item_id" {
				t.Errorf("KeyGenerator(t_order_item) = %q, %v", col, ok)
			}
		},
	}
}

// ssHintExample is the hint example: t_order routes by hint values (its
// HINT_TEST algorithm, both strategies), t_order_item by user_id.
func ssHintExample(file string) ssCorpusFile {
	return ssCorpusFile{
		file: file,
		routes: []routeCase{
			{table: "t_order", want: "hint", wantErr: shardconf.ErrMissingShardingKey},
			{table: "t_order_item", conds: conds(eq("user_id", 1)), want: "ds_1.t_order_item_0 ds_1.t_order_item_1"},
			{table: "t_address", want: "ds_0.t_address ds_1.t_address"},
		},
		hints: []ssHintCase{
			{table: "t_order", hint: shardconf.Hint{Database: []any{1}, Table: []any{2}}, want: "ds_1.t_order_0"},
			{table: "t_order", hint: shardconf.Hint{Database: []any{0, 1}, Table: []any{3}}, want: "ds_0.t_order_1 ds_1.t_order_1"},
		},
	}
}

// loadShardingSphereFile loads and compiles a corpus file; worker-id is
// supplied as a deployment would (shardkey requires it, see the migration
// guide).
func loadShardingSphereFile(file string) (*shardconf.Router, error) {
	cfg, err := shardconf.Load(filepath.Join("testdata", "shardingsphere", file))
	if err != nil {
		return nil, err
	}
	return shardconf.NewRouter(cfg, shardconf.WithKeyGenProps(keygen.Props{"worker-id": "1"}))
}

func TestShardingSphereRuleFilesLoadAndRoute(t *testing.T) {
	ssRegister(t)
	for _, f := range ssCorpus {
		t.Run(f.file, func(t *testing.T) {
			r, err := loadShardingSphereFile(f.file)
			if f.loadErr != "" {
				if err == nil || !strings.Contains(err.Error(), f.loadErr) {
					t.Fatalf("load: %v, want an error containing %q", err, f.loadErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			checkRoutes(t, r, f.routes)
			for _, h := range f.hints {
				got, err := r.RouteContext(shardconf.WithHint(context.Background(), h.table, h.hint), h.table)
				if err != nil || targets(got) != h.want {
					t.Errorf("%s with %+v = %q, %v; want %q", h.table, h.hint, targets(got), err, h.want)
				}
			}
			if f.check != nil {
				f.check(t, r)
			}
		})
	}
}

// Every file in the directory has an entry, and every entry a file whose
// first line names its source and licence.
func TestShardingSphereRuleFilesAreAllChecked(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "shardingsphere", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("glob: %v (%d files)", err, len(files))
	}
	listed := map[string]bool{}
	for _, f := range ssCorpus {
		listed[f.file] = true
	}
	for _, f := range files {
		name := filepath.Base(f)
		if !listed[name] {
			t.Errorf("%s has no entry in ssCorpus", name)
		}
		delete(listed, name)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if !strings.HasPrefix(first, "# Source: apache/shardingsphere ") || !strings.Contains(first, "Apache License 2.0") {
			t.Errorf("%s: first line %q does not name its source and licence", name, first)
		}
	}
	for name := range listed {
		t.Errorf("ssCorpus lists %s, which is not in testdata/shardingsphere", name)
	}
}
