package shardconf_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

const base = `
dataSources:
  ds_0: {driver: pgx, dsn: "postgres://127.0.0.1/a"}
  ds_1: {driver: pgx, dsn: "postgres://127.0.0.1/b"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_mod
  defaultDatabaseStrategy:
    standard:
      shardingColumn: user_id
      shardingAlgorithmName: ds_mod
  shardingAlgorithms:
    t_mod: {type: MOD, props: {sharding-count: 2}}
    ds_mod: {type: MOD, props: {sharding-count: 2}}
`

// configErrors loads text and returns its problems.
func configErrors(t *testing.T, text string) []*shardconf.ConfigError {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(text))
	if err == nil {
		_, err = shardconf.NewRouter(cfg)
	}
	if err == nil {
		t.Fatalf("no error for:\n%s", text)
	}
	if !errors.Is(err, shardconf.ErrInvalidConfig) {
		t.Fatalf("err = %v, want ErrInvalidConfig", err)
	}
	var out []*shardconf.ConfigError
	var walk func(error)
	walk = func(e error) {
		if ce, ok := e.(*shardconf.ConfigError); ok {
			out = append(out, ce)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

func TestConfigErrorsHavePositions(t *testing.T) {
	for _, tc := range []struct {
		name       string
		text       string
		line, col  int
		path, want string
	}{
		{"unknown key", strings.Replace(base, "actualDataNodes", "actualDataNode", 1), 9, 7,
			"rules[0].tables.t_order.actualDataNode", `unknown key "actualDataNode"`},
		{"unknown top key", base + "shardingRules: {}\n", 21, 1, "shardingRules", "unknown key"},
		{"missing algorithm", strings.Replace(base, "shardingAlgorithmName: t_mod", "shardingAlgorithmName: t_nope", 1), 13, 34,
			"rules[0].tables.t_order.tableStrategy.standard.shardingAlgorithmName", `"t_nope" is not in shardingAlgorithms`},
		{"hint", strings.Replace(base, "standard:\n          shardingColumn: order_id\n          shardingAlgorithmName: t_mod",
			"hint:\n          shardingAlgorithmName: t_mod", 1), 18, 5, "rules[0].shardingAlgorithms.t_mod", "MOD is not a hint sharding algorithm"},
		{"unknown data source", strings.Replace(base, "ds_${0..1}.t_order", "ds_${0..2}.t_order", 1), 9, 7,
			"rules[0].tables.t_order.actualDataNodes", `names data source "ds_2"`},
		{"bad driver", strings.Replace(base, "ds_1: {driver: pgx", "ds_1: {driver: oracle", 1), 4, 18, "dataSources.ds_1.driver", "not one of pgx, mysql, sqlite"},
		{"bad inline", strings.Replace(base, "t_order_${0..1}", "t_order_${0..1", 1), 9, 7,
			"rules[0].tables.t_order.actualDataNodes", "offset 19"},
		{"unknown algorithm type", strings.Replace(base, "t_mod: {type: MOD", "t_mod: {type: MODULO", 1), 19, 5,
			"rules[0].shardingAlgorithms.t_mod", `type "MODULO"`},
		{"bad algorithm prop", strings.Replace(base, "t_mod: {type: MOD, props: {sharding-count: 2}}", "t_mod: {type: MOD, props: {sharding-count: two}}", 1), 19, 5,
			"rules[0].shardingAlgorithms.t_mod", "sharding-count"},
		{"duplicate key", strings.Replace(base, "  ds_1: {driver", "  ds_0: {driver", 1), 4, 3, "dataSources.ds_0", "given twice"},
		{"other rule", base + "- !ENCRYPT\n  tables: {}\n", 21, 3, "rules[1]", "!ENCRYPT is not supported"},
		{"4.x class strategy", "shardingRule:\n  tables:\n    t:\n      actualDataNodes: ds.t_${0..1}\n      tableStrategy:\n        standard:\n          shardingColumn: id\n          preciseAlgorithmClassName: x.Y\n",
			6, 9, "shardingRule.tables.t.tableStrategy.standard", "Java classes"},
		{"yaml syntax", "rules:\n  - !SHARDING\n    tables: [\n", 3, 1, "", "yaml"},
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

func TestConfigReportsEveryProblem(t *testing.T) {
	text := strings.Replace(base, "actualDataNodes", "actualDataNode", 1)
	text = strings.Replace(text, "ds_1: {driver: pgx", "ds_1: {driver: oracle", 1)
	if errs := configErrors(t, text); len(errs) < 2 {
		t.Fatalf("want both problems, got %v", errs)
	}
}

func TestNoneOverridesDefaultStrategy(t *testing.T) {
	text := strings.Replace(base, "      tableStrategy:\n", "      databaseStrategy:\n        none:\n      tableStrategy:\n", 1)
	cfg, err := shardconf.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Route("t_order", shardconf.Eq("order_id", 3))
	if err != nil || targets(got) != "ds_0.t_order_1 ds_1.t_order_1" {
		t.Fatalf("none: database strategy: %q, %v", targets(got), err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := shardconf.Load("testdata/nope.yaml"); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("err = %v", err)
	}
}

func TestConfigErrorFormat(t *testing.T) {
	e := &shardconf.ConfigError{File: "rules.yaml", Line: 3, Column: 5, Path: "rules[0].tables", Msg: "bad"}
	if e.Error() != "rules.yaml:3:5: rules[0].tables: bad" {
		t.Fatalf("Error() = %q", e.Error())
	}
}

// TestImportsOnlyKeygenAndYAML keeps the packages' dependency direction:
// shardconf builds on keygen (and the standard-library-only internal
// packages it uses) and a YAML parser, and on no ORM, driver or parser.
func TestImportsOnlyKeygenAndYAML(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{"github.com/shardkey/shardkey/shardconf": true, "github.com/shardkey/shardkey/keygen": true, "go.yaml.in/yaml/v3": true,
		"github.com/shardkey/shardkey/internal/dialect": true}
	for _, dep := range strings.Fields(string(out)) {
		if !allowed[dep] {
			t.Errorf("shardconf depends on %s", dep)
		}
	}
}
