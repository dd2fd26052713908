package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const rulesDir = "../../shardconf/testdata"

func rulesFile(name string) string { return filepath.Join(rulesDir, name) }

func TestValidate(t *testing.T) {
	out := mustCLI(t, "validate", rulesFile("ss5-auto-tables.yaml"))
	if !strings.Contains(out, "ok (2 tables, 2 data sources)") {
		t.Fatalf("validate: %q", out)
	}
	// The file's SNOWFLAKE has no worker-id: a file shared by processes
	// that each give their own is valid, with a note.
	code, out, errs := cli(t, "validate", rulesFile("ss5-databases-tables.yaml"))
	if code != 0 || !strings.Contains(out, "ok (4 tables") || !strings.Contains(out, "note: key generator snowflake has no worker-id") {
		t.Fatalf("validate without worker-id: exit %d\n%s\n%s", code, out, errs)
	}
	if out := mustCLI(t, "validate", "-keygen-props", "worker-id=3", rulesFile("ss5-databases-tables.yaml")); strings.Contains(out, "note:") {
		t.Errorf("validate with -keygen-props worker-id: %q", out)
	}
	// A worker-id that is given but wrong is a problem, with its position.
	wrong := filepath.Join(t.TempDir(), "wrong.yaml")
	if err := os.WriteFile(wrong, []byte("rules:\n- !SHARDING\n  tables:\n    t:\n      actualDataNodes: ds.t_${0..1}\n"+
		"      keyGenerateStrategy: {column: id, keyGeneratorName: sf}\n  keyGenerators:\n    sf: {type: SNOWFLAKE, props: {worker-id: 5000}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = cli(t, "validate", wrong)
	if code != 1 || out != "" || !strings.Contains(errs, "wrong.yaml:") || !strings.Contains(errs, "worker-id") || !strings.Contains(errs, "1 problem(s)") {
		t.Fatalf("validate with worker-id 5000: exit %d\n%s\n%s", code, out, errs)
	}
	// -rules names the file as well as the argument does.
	if out := mustCLI(t, "validate", "-rules", rulesFile("ss5-auto-tables.yaml")); !strings.Contains(out, "ok (2 tables") {
		t.Errorf("validate -rules: %q", out)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	text := "rules:\n- !SHARDING\n  tables:\n    t:\n      actualDataNode: ds.t_${0..1}\n      tableStrategy: {hint: {shardingAlgorithmName: x}}\n"
	if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = cli(t, "validate", "-o", "json", bad)
	var res struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.OK || len(res.Problems) < 2 {
		t.Fatalf("validate -o json: exit %d, %v, %+v", code, err, res)
	}
	if !strings.Contains(res.Problems[0], "bad.yaml:5:7") {
		t.Errorf("first problem %q lacks file:line:column", res.Problems[0])
	}
	for _, args := range [][]string{
		{"validate"},
		{"validate", "a.yaml", "b.yaml"},
		{"validate", "-rules", "a.yaml", "b.yaml"},
		{"route", rulesFile("ss5-auto-tables.yaml")},
		{"route", "-rules", rulesFile("ss5-auto-tables.yaml")},
		{"targets"},
	} {
		if code, _, errs := cli(t, args...); code != 2 || !strings.Contains(errs, "usage: shardkey "+args[0]) {
			t.Errorf("shardkey %s: exit %d, stderr %q; want exit 2", strings.Join(args, " "), code, errs)
		}
	}
}

func TestRoute(t *testing.T) {
	file := rulesFile("ss5-databases-tables.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"t_order", "order_id=2", "user_id=1"}, "ds_1\tt_order_0\n"},
		{[]string{"t_order", "user_id=0", "order_id=1,2"}, "ds_0\tt_order_0\nds_0\tt_order_1\n"},
		{[]string{"-scatter", "t_order", "user_id=0"}, "ds_0\tt_order_0\nds_0\tt_order_1\n"},
		{[]string{"t_address"}, "ds_0\tt_address\nds_1\tt_address\n"},
	} {
		args := append([]string{"route", "-keygen-props", "worker-id=1", file}, tc.args...)
		if out := mustCLI(t, args...); out != tc.want {
			t.Errorf("shardkey %s = %q, want %q", strings.Join(args, " "), out, tc.want)
		}
	}
	auto := rulesFile("ss5-auto-tables.yaml")
	if out := mustCLI(t, "route", auto, "t_order", "order_id=1..2"); out != "ds_0\tt_order_2\nds_1\tt_order_1\n" {
		t.Errorf("range route = %q", out)
	}
	if out := mustCLI(t, "route", "-rules", auto, "t_order", "order_id=1..2"); out != "ds_0\tt_order_2\nds_1\tt_order_1\n" {
		t.Errorf("route -rules = %q", out)
	}
	if out := mustCLI(t, "route", "-o", "json", auto, "t_order", "order_id>=5", "order_id<6"); !strings.Contains(out, `"table": "t_order_1"`) {
		t.Errorf("json route = %q", out)
	}
	code, _, errs := cli(t, "route", "-keygen-props", "worker-id=1", file, "t_order", "user_id=1")
	if code != 1 || !strings.Contains(errs, "missing sharding key") || !strings.Contains(errs, "order_id") {
		t.Errorf("route without order_id: exit %d, %s", code, errs)
	}
	if code, _, _ := cli(t, "route", auto, "t_order", "order_id"); code != 2 {
		t.Errorf("bad condition: exit %d", code)
	}
}

func TestTargets(t *testing.T) {
	out := mustCLI(t, "targets", rulesFile("ss5-auto-tables.yaml"), "t_order")
	want := "ds_0\tt_order_0\tt_order\nds_0\tt_order_2\tt_order\nds_1\tt_order_1\tt_order\nds_1\tt_order_3\tt_order\n"
	if out != want {
		t.Fatalf("targets = %q", out)
	}
	if got := mustCLI(t, "targets", "-rules", rulesFile("ss5-auto-tables.yaml"), "t_order"); got != want {
		t.Errorf("targets -rules = %q", got)
	}
	out = mustCLI(t, "targets", "-o", "json", rulesFile("ss5-databases.yaml"))
	var rows []map[string]string
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 6 || rows[0]["logicTable"] != "t_address" {
		t.Fatalf("targets -o json: %v %v", err, rows)
	}
}
