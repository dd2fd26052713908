package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gapRules has a MOD over four residues and two tables: it loads, and
// t_order_2 and t_order_3 are unreachable.
const gapRules = `dataSources:
  ds: {url: "sqlite::memory:"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_${0..1}
      tableStrategy:
        standard:
          shardingColumn: order_id
          shardingAlgorithmName: t_mod
  shardingAlgorithms:
    t_mod:
      type: MOD
      props:
        sharding-count: 4
`

func writeGapRules(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gap.yaml")
	if err := os.WriteFile(p, []byte(gapRules), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateWarnsOfUnreachablePartitionsAndExitsZero(t *testing.T) {
	p := writeGapRules(t)
	code, out, errs := cli(t, "validate", p)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := "warning: " + p + ":13:5: rules[0].shardingAlgorithms.t_mod: table t_order, algorithm t_mod: " +
		"t_order_2 to t_order_3 (shards 2..3, 2 in all: values whose remainder mod 4 is 2..3) has no data node"
	if !strings.Contains(out, "ok (1 tables") || !strings.Contains(out, want) {
		t.Errorf("stdout:\n%s\nwant a line containing\n%s", out, want)
	}
	// A file without unreachable partitions has no warning.
	if out := mustCLI(t, "validate", rulesFile("ss5-auto-tables.yaml")); strings.Contains(out, "warning:") {
		t.Errorf("clean file warned: %q", out)
	}
}

func TestValidateStrictRefusesUnreachablePartitions(t *testing.T) {
	p := writeGapRules(t)
	code, out, errs := cli(t, "validate", "-strict", p)
	if code != exitRuntime || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errs, "1 problem(s)") || !strings.Contains(errs, p+":13:5:") || !strings.Contains(errs, "t_order_2 to t_order_3") {
		t.Errorf("stderr: %q", errs)
	}
	if out := mustCLI(t, "validate", "-strict", rulesFile("ss5-auto-tables.yaml")); !strings.Contains(out, "ok (2 tables") {
		t.Errorf("-strict on a clean file: %q", out)
	}
}

func TestValidateJSONListsUnreachablePartitions(t *testing.T) {
	p := writeGapRules(t)
	type result struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
		Warnings []string `json:"warnings"`
	}
	for _, c := range []struct {
		args         []string
		code         int
		ok           bool
		problems     int
		warningCount int
	}{
		{[]string{"validate", "-o", "json", p}, exitOK, true, 0, 1},
		{[]string{"validate", "-strict", "-o", "json", p}, exitRuntime, false, 1, 0},
	} {
		code, out, _ := cli(t, c.args...)
		var res result
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != c.code || res.OK != c.ok ||
			len(res.Problems) != c.problems || len(res.Warnings) != c.warningCount {
			t.Errorf("%v: exit %d, %v, %+v", c.args, code, err, res)
			continue
		}
		for _, s := range append(res.Problems, res.Warnings...) {
			if !strings.Contains(s, p+":13:5:") || !strings.Contains(s, "t_order_2 to t_order_3") {
				t.Errorf("%v: %q lacks the position or the partition", c.args, s)
			}
		}
	}
}
