package main

// Tests that run the built command as a user would, through exec. TestMain
// builds it once for the package, except under -short, where those tests
// skip (building takes seconds).

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// binPath is the shardkey binary TestMain built; "" under -short.
var binPath string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "shardkey-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "shardkey")
	if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// bin is the built binary's path; it skips t under -short, where there
// is none.
func bin(t *testing.T) string {
	t.Helper()
	if binPath == "" {
		t.Skip("-short: the binary is not built")
	}
	return binPath
}

// runBin runs the binary and returns its exit code and output.
func runBin(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCmd(t, exec.Command(bin(t), args...))
}

func runCmd(t *testing.T, cmd *exec.Cmd) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return code, out.String(), errb.String()
}

// TestBinaryGenDecodePipe: IDs from gen, through the shell, to decode.
func TestBinaryGenDecodePipe(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	script := `"$0" gen -props worker-id=7 -n 3 | xargs "$0" decode -o json`
	code, out, errs := runCmd(t, exec.Command(sh, "-c", script, bin(t)))
	if code != 0 {
		t.Fatalf("gen | decode: exit %d: %s", code, errs)
	}
	var parts []struct {
		ID     string `json:"id"`
		Worker int64  `json:"worker"`
	}
	if err := json.Unmarshal([]byte(out), &parts); err != nil || len(parts) != 3 {
		t.Fatalf("gen | decode -o json: %v\n%s", err, out)
	}
	for i, p := range parts {
		if _, err := strconv.ParseInt(p.ID, 10, 64); err != nil || p.Worker != 7 {
			t.Errorf("ID %d: %+v", i, p)
		}
	}

	// base62 through a command substitution, as decode's help shows.
	script = `"$0" decode -type SNOWFLAKE_JS b62:$("$0" gen -type SNOWFLAKE_JS -props worker-id=3 -format base62)`
	code, out, errs = runCmd(t, exec.Command(sh, "-c", script, bin(t)))
	if code != 0 || fields(t, out)["worker"] != "3" {
		t.Errorf("decode b62:$(gen): exit %d, %q, %s", code, out, errs)
	}
}

func TestBinaryValidate(t *testing.T) {
	code, out, errs := runBin(t, "validate", rulesFile("ss5-auto-tables.yaml"))
	if code != 0 || !strings.Contains(out, "ok (2 tables, 2 data sources)") {
		t.Errorf("validate good: exit %d, %q, %q", code, out, errs)
	}
	bad := writeFile(t, "bad.yaml", "rules:\n- !SHARDING\n  tables:\n    t_order:\n      actualDataNodes: ds_${0..1}.t_order_${0..1}\n      tableStrategy:\n        standard:\n          shardingColumn: order_id\n          shardingAlgorithmName: missing\n")
	code, out, errs = runBin(t, "validate", "-rules", bad)
	if code != 1 || out != "" || !strings.Contains(errs, "bad.yaml:9:34: ") || !strings.Contains(errs, "missing") {
		t.Errorf("validate bad: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = runBin(t, "validate", "-o", "json", bad)
	var res struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 1 || err != nil || res.OK || len(res.Problems) == 0 ||
		!strings.Contains(res.Problems[0], "bad.yaml:9:34") {
		t.Errorf("validate -o json bad: exit %d, %v, %s", code, err, out)
	}
}

func TestBinaryRouteJSON(t *testing.T) {
	code, out, errs := runBin(t, "route", "-o", "json", "-keygen-props", "worker-id=1",
		"-rules", rulesFile("ss5-databases-tables.yaml"), "t_order", "order_id=1,2", "user_id=1")
	if code != 0 {
		t.Fatalf("route: exit %d: %s", code, errs)
	}
	var ts []struct {
		DataSource string `json:"dataSource"`
		Table      string `json:"table"`
	}
	if err := json.Unmarshal([]byte(out), &ts); err != nil {
		t.Fatalf("route -o json: %v\n%s", err, out)
	}
	if len(ts) != 2 || ts[0].DataSource != "ds_1" || ts[0].Table != "t_order_0" || ts[1].Table != "t_order_1" {
		t.Errorf("route -o json: %+v", ts)
	}
	// A statement without the sharding key fails closed: exit 1.
	if code, _, errs := runBin(t, "route", "-keygen-props", "worker-id=1", rulesFile("ss5-databases-tables.yaml"), "t_order", "user_id=1"); code != 1 ||
		!strings.Contains(errs, "missing sharding key") {
		t.Errorf("route without order_id: exit %d, %s", code, errs)
	}
}

// TestBinaryDDL pipes ddl's text output, a script, into SQLite.
func TestBinaryDDL(t *testing.T) {
	dir := t.TempDir()
	dsns := []string{filepath.Join(dir, "ds_0.db"), filepath.Join(dir, "ds_1.db")}
	rules := writeFile(t, "rules.yaml", ddlRules("sqlite", dsns[0], dsns[1]))
	tmpl := writeFile(t, "schema.sql", ddlTemplate)
	code, out, errs := runBin(t, "ddl", "-rules", rules, "-template", tmpl)
	if code != 0 {
		t.Fatalf("ddl: exit %d: %s", code, errs)
	}
	scripts := strings.Split(out, "-- data source ")
	if len(scripts) != 3 || scripts[0] != "" || !strings.HasPrefix(scripts[1], "ds_0 (sqlite)\n") || !strings.HasPrefix(scripts[2], "ds_1 (sqlite)\n") {
		t.Fatalf("ddl output is not two data sources:\n%s", out)
	}
	for i, script := range scripts[1:] {
		if n := strings.Count(script, "CREATE TABLE"); n != 5 {
			t.Errorf("ds_%d: %d CREATE TABLE, want 5", i, n)
		}
		db, err := sql.Open("sqlite", dsns[i])
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("-- data source " + script); err != nil {
			t.Fatalf("ds_%d: %v\n%s", i, err, script)
		}
		checkSchema(t, fmt.Sprintf("sqlite ds_%d", i), db,
			`SELECT name FROM sqlite_master WHERE type = 'table'`,
			`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`)
	}

	// A template for another table: exit 1, naming the file and line.
	other := writeFile(t, "t_user.sql", "-- users\nCREATE TABLE t_user (id INT);\n")
	if code, out, errs := runBin(t, "ddl", "-rules", rules, "-table", "t_order", "-template", other); code != 1 || out != "" ||
		!strings.Contains(errs, "t_user.sql:2: CREATE TABLE t_user, not the logic table t_order") {
		t.Errorf("ddl with another table's template: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestBinaryHelpAndUsage(t *testing.T) {
	code, out, _ := runBin(t, "help")
	if code != 0 || !strings.Contains(out, "\n  ddl ") {
		t.Errorf("help: exit %d, does not list ddl:\n%s", code, out)
	}
	for _, c := range commands {
		for _, h := range []string{"-h", "--help"} {
			code, out, errs := runBin(t, c.name, h)
			if code != 0 || !strings.HasPrefix(out, "usage: shardkey "+c.name+" ") || !strings.Contains(out, "Examples:") || errs != "" {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q", c.name, h, code, out, errs)
			}
		}
		code, out, errs := runBin(t, c.name, "-no-such-flag")
		if code != 2 || out != "" || !strings.Contains(errs, "flag provided but not defined: -no-such-flag") ||
			!strings.Contains(errs, "usage: shardkey "+c.name) {
			t.Errorf("%s -no-such-flag: exit %d, stdout %q, stderr %q", c.name, code, out, errs)
		}
	}
	if code, _, errs := runBin(t, "nope"); code != 2 || !strings.Contains(errs, `unknown command "nope"`) {
		t.Errorf("unknown command: exit %d, %q", code, errs)
	}
	if code, _, errs := runBin(t); code != 2 || !strings.Contains(errs, "usage: shardkey <command>") {
		t.Errorf("no command: exit %d, %q", code, errs)
	}
}
