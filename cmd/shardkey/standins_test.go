package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goAlgoRules needs two Go algorithms: a CLASS_BASED class (as a Java
// team's file names it) and a plain registered type.
const goAlgoRules = `rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order_${0..1}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: cb}
    t_item:
      actualDataNodes: ds_0.t_item_${0..1}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: region}
  shardingAlgorithms:
    cb: {type: CLASS_BASED, props: {strategy: STANDARD, algorithmClassName: org.example.ValidateStandIn}}
    region: {type: VALIDATE_REGION}
`

func writeRules(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateStandsInForGoAlgorithmsAndWarns(t *testing.T) {
	p := writeRules(t, "go.yaml", goAlgoRules)
	// A plain type nobody named stays a problem: it may be a typo.
	code, _, errs := cli(t, "validate", p)
	if code == 0 || !strings.Contains(errs, `type "VALIDATE_REGION" is not a standard sharding algorithm`) {
		t.Fatalf("unnamed Go type: exit %d, stderr %q", code, errs)
	}
	out := mustCLI(t, "validate", "-go-algorithms", "validate_region", p)
	for _, want := range []string{
		"ok (2 tables",
		"warning: " + p + `:13:5: rules[0].shardingAlgorithms.cb: algorithm cb needs the Go algorithm "org.example.ValidateStandIn"`,
		"warning: " + p + `:14:5: rules[0].shardingAlgorithms.region: algorithm region needs the Go algorithm "VALIDATE_REGION"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout:\n%s\nwant a line containing %q", out, want)
		}
	}
	// Run twice in one process: the stand-ins are reused, not re-registered.
	mustCLI(t, "validate", "-go-algorithms", "VALIDATE_REGION", p)
}

func TestValidateStrictRefusesGoAlgorithmStandIns(t *testing.T) {
	p := writeRules(t, "go.yaml", goAlgoRules)
	code, out, errs := cli(t, "validate", "-strict", "-go-algorithms", "VALIDATE_REGION", p)
	if code != exitRuntime || out != "" || !strings.Contains(errs, "2 problem(s)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestValidateRefusesBuiltInNameAsGoAlgorithm(t *testing.T) {
	p := writeRules(t, "mod.yaml", strings.Replace(goAlgoRules, "{type: VALIDATE_REGION}", "{type: MOD, props: {sharding-count: 2}}", 1))
	if code, _, errs := cli(t, "validate", "-go-algorithms", "MOD", p); code == 0 || !strings.Contains(errs, "built-in") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestRouteNeverRoutesThroughAStandIn(t *testing.T) {
	p := writeRules(t, "go.yaml", goAlgoRules)
	mustCLI(t, "validate", "-go-algorithms", "VALIDATE_REGION", p) // registers the stand-ins in this process
	code, out, errs := cli(t, "route", p, "t_order", "order_id=1")
	if code == 0 || out != "" || !strings.Contains(errs, "stand-in") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

const hintRules = `rules:
- !SHARDING
  tables:
    t_hinted:
      actualDataNodes: ds_${0..1}.t_hinted_${0..3}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: tbl_hint}}
  shardingAlgorithms:
    db_hint: {type: HINT_INLINE, props: {algorithm-expression: 'ds_${value % 2}'}}
    tbl_hint: {type: HINT_INLINE, props: {algorithm-expression: 't_hinted_${value % 4}'}}
`

func TestRouteHintFlagsRouteAHintStrategyTable(t *testing.T) {
	p := writeRules(t, "hint.yaml", hintRules)
	out := mustCLI(t, "route", "-hint-database", "1", "-hint-table", "3,6", p, "t_hinted")
	if got := strings.Join(lines(out), ";"); got != "ds_1\tt_hinted_2;ds_1\tt_hinted_3" {
		t.Errorf("route = %q", got)
	}
	if code, _, errs := cli(t, "route", p, "t_hinted"); code == 0 || !strings.Contains(errs, "missing sharding key") {
		t.Errorf("without hints: exit %d, stderr %q", code, errs)
	}
}
