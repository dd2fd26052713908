package shardconf_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// javaOnly holds every top-level key of ShardingSphere 5.x's
// YamlJDBCConfiguration that does not decide where a row goes, in the
// shapes its documentation gives them.
const javaOnly = `
databaseName: sharding_db
mode:
  type: Standalone
  repository: {type: JDBC}
authority:
  users: [{user: root@%, password: root}]
  privilege: {type: ALL_PERMITTED}
sqlParser:
  sqlStatementCache: {initialCapacity: 2000, maximumSize: 65535}
  parseTreeCache: {initialCapacity: 128, maximumSize: 1024}
transaction:
  defaultType: XA
  providerType: Atomikos
globalClock: {enabled: false, type: TSO, provider: local}
sqlFederation:
  sqlFederationEnabled: false
  allQueryUseSQLFederation: false
  executionPlanCache: {initialCapacity: 2000, maximumSize: 65535}
sqlTranslator: {type: NATIVE, useOriginalSQLWhenTranslatingFailed: true}
logging:
  loggers:
  - {loggerName: ShardingSphere-SQL, additivity: true, level: INFO, props: {enable: false}}
traffic:
  trafficStrategies:
    sql_match_traffic: {labels: [OLTP], algorithmName: sql_match, loadBalancerName: random}
  trafficAlgorithms:
    sql_match: {type: SQL_MATCH, props: {sql: 'SELECT * FROM t_order WHERE order_id = 1'}}
  loadBalancers:
    random: {type: RANDOM}
props:
  sql-show: true
`

// javaOnlyRules are the same global rules in their 5.x rules: list form,
// and !SINGLE.
const javaOnlyRules = `
- !SINGLE
  tables: [ds_1.t_user, "ds_0.*"]
  defaultDataSource: ds_1
- !SQL_PARSER
  sqlCommentParseEnabled: true
  sqlStatementCache: {initialCapacity: 2000, maximumSize: 65535}
- !TRANSACTION
  defaultType: LOCAL
- !AUTHORITY
  users: [{user: root@%, password: root}]
  privilege: {type: ALL_PERMITTED}
- !SQL_FEDERATION
  sqlFederationEnabled: true
- !GLOBAL_CLOCK
  enabled: false
- !SQL_TRANSLATOR
  type: NATIVE
- !TRAFFIC
  trafficStrategies: {}
- !LOGGING
  loggers: []
`

// routesOf routes a grid of values over t_order, and the unsharded t_user.
func routesOf(t *testing.T, text string) []string {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	var out []string
	for u := int64(-3); u <= 3; u++ {
		for o := int64(-3); o <= 3; o++ {
			ts, err := r.Route("t_order", shardconf.Eq("user_id", u), shardconf.Eq("order_id", o))
			out = append(out, fmt.Sprint(ts, err))
		}
	}
	ts, err := r.Route("t_user", shardconf.Eq("id", 1))
	if !errors.Is(err, shardconf.ErrUnknownTable) {
		t.Errorf("t_user over two data sources: %v %v, want ErrUnknownTable (no guess where !SINGLE puts it)", ts, err)
	}
	return append(out, fmt.Sprint(ts, err))
}

func TestRuleFileKeysThatDoNotRouteAreIgnored(t *testing.T) {
	want := routesOf(t, base)
	withRules := strings.Replace(base, "rules:\n", "rules:"+javaOnlyRules, 1)
	for name, text := range map[string]string{"top-level keys": base + javaOnly, "rules entries": withRules,
		"both": javaOnly + withRules} {
		if got := routesOf(t, text); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: routes differ from the file without them:\n got %v\nwant %v", name, got, want)
		}
	}
}

func TestMisspelledRuleFileKeyIsAnErrorNamingFileLineKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	text := base + "sqlFederaton:\n  sqlFederationEnabled: false\n"
	line := strings.Count(base, "\n") + 1
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := shardconf.Load(path)
	var ce *shardconf.ConfigError
	if !errors.As(err, &ce) || ce.File != path || ce.Line != line || ce.Path != "sqlFederaton" {
		t.Fatalf("err = %v, want a ConfigError at %s:%d for sqlFederaton", err, path, line)
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%s:%d:1: sqlFederaton: unknown key", path, line)) {
		t.Errorf("message %q does not name file:line:key", msg)
	}

	// A misspelled rule tag is refused too, not ignored.
	errs := configErrors(t, strings.Replace(base, "rules:\n", "rules:\n- !SQL_FEDERATON\n  sqlFederationEnabled: true\n", 1))
	if len(errs) != 1 || errs[0].Line != 6 || !strings.Contains(errs[0].Msg, "!SQL_FEDERATON is not supported") {
		t.Errorf("misspelled tag: %v", errs)
	}
}

// TestSingleRuleLoadsWhereItAgreesWithUnshardedRouting: !SINGLE is accepted
// when every table it places is where shardkey sends unsharded tables, and
// refused when it names another data source.
func TestSingleRuleLoadsWhereItAgreesWithUnshardedRouting(t *testing.T) {
	one := "dataSources: {ds_0: {driver: sqlite, dsn: x}}\nrules:\n- !SHARDING\n  tables: {t_order: {actualDataNodes: \"ds_0.t_order_${0..1}\"}}\n"
	for _, single := range []string{"[ds_0.t_config]", "[\"*.*\"]", "[ds_0.*, \"*.t_user\"]"} {
		cfg, err := shardconf.Parse([]byte(one + "- !SINGLE\n  tables: " + single + "\n  defaultDataSource: ds_0\n"))
		if err != nil {
			t.Fatalf("%s: %v", single, err)
		}
		r, err := shardconf.NewRouter(cfg)
		if err != nil {
			t.Fatalf("%s: %v", single, err)
		}
		if ts, err := r.Route("t_config"); err != nil || len(ts) != 1 || ts[0].String() != "ds_0.t_config" {
			t.Errorf("%s: t_config routes to %v %v, want ds_0.t_config", single, ts, err)
		}
	}
	errs := configErrors(t, one+"- !SINGLE\n  defaultDataSource: ds_1\n")
	if len(errs) != 1 || errs[0].Path != "rules[1].defaultDataSource" || !strings.Contains(errs[0].Msg, `data source "ds_1"`) {
		t.Errorf("!SINGLE on another data source: %v", errs)
	}
}
