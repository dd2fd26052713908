package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// cli runs the command in-process.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// mustCLI runs the command and fails the test unless it exits 0.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := cli(t, args...)
	if code != 0 {
		t.Fatalf("shardkey %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// checkIncreasing parses decimal IDs and checks they strictly increase.
func checkIncreasing(t *testing.T, ls []string, want int) []int64 {
	t.Helper()
	if len(ls) != want {
		t.Fatalf("got %d lines, want %d: %q", len(ls), want, ls)
	}
	ids := make([]int64, len(ls))
	for i, l := range ls {
		id, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("IDs not strictly increasing: %d then %d", ids[i-1], id)
		}
		ids[i] = id
	}
	return ids
}

// fields parses decode's text output for one ID into key -> value.
func fields(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range lines(out) {
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("line %q is not key: value", l)
		}
		if _, dup := m[k]; dup {
			t.Fatalf("key %q twice in:\n%s", k, out)
		}
		m[k] = strings.TrimSpace(v)
	}
	return m
}

func TestGenIncreasing(t *testing.T) {
	out := mustCLI(t, "gen", "-type", "SNOWFLAKE", "-props", "worker-id=1,max-vibration-offset=3", "-n", "5")
	checkIncreasing(t, lines(out), 5)
}

func TestGenDefaultsToOneSnowflake(t *testing.T) {
	out := mustCLI(t, "gen", "-props", "worker-id=1")
	checkIncreasing(t, lines(out), 1)
}

func TestDecodeGeneratedID(t *testing.T) {
	id := strings.TrimSpace(mustCLI(t, "gen", "-props", "worker-id=1"))
	f := fields(t, mustCLI(t, "decode", id))
	if f["worker"] != "1" || f["id"] != id {
		t.Errorf("decode %s: %v", id, f)
	}
	if f["layout"] != "[time 41 | worker 10 | sequence 12; unit 1ms]" {
		t.Errorf("layout = %q", f["layout"])
	}
	for _, k := range []string{"datacenter", "backup", "clock-back"} {
		if _, ok := f[k]; ok {
			t.Errorf("SNOWFLAKE decode shows %s", k)
		}
	}
}

// TestDecodeGolden checks the exact text form on an ID built from known
// fields.
func TestDecodeGolden(t *testing.T) {
	// 1000 ms after the ShardingSphere epoch, worker 7, sequence 3.
	const id = 1000<<22 | 7<<12 | 3
	want := `layout: [time 41 | worker 10 | sequence 12; unit 1ms]

id:        4194332675
time:      2016-11-01T00:00:01.000Z
timestamp: 1000
worker:    7
sequence:  3

id:        4194332676
time:      2016-11-01T00:00:01.000Z
timestamp: 1000
worker:    7
sequence:  4
`
	if got := mustCLI(t, "decode", strconv.Itoa(id), strconv.Itoa(id+1)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestDecodeBase62(t *testing.T) {
	b62 := strings.TrimSpace(mustCLI(t, "gen", "-props", "worker-id=9", "-format", "base62"))
	id, err := keygen.ParseBase62(b62)
	if err != nil {
		t.Fatalf("gen -format base62 printed %q: %v", b62, err)
	}
	f := fields(t, mustCLI(t, "decode", "b62:"+b62))
	if f["id"] != id.String() || f["worker"] != "9" {
		t.Errorf("decode b62:%s: %v", b62, f)
	}
	// Without the prefix it is not a decimal ID.
	if code, _, errs := cli(t, "decode", "b62x"); code != 1 || !strings.Contains(errs, "b62:") {
		t.Errorf("decode b62x: exit %d, stderr %q", code, errs)
	}
}

func TestGenJSON(t *testing.T) {
	out := mustCLI(t, "gen", "-props", "worker-id=1", "-n", "3", "-o", "json")
	var ids []string
	if err := json.Unmarshal([]byte(out), &ids); err != nil {
		t.Fatalf("gen -o json: %v\n%s", err, out)
	}
	checkIncreasing(t, ids, 3)

	out = mustCLI(t, "gen", "-props", "worker-id=1", "-format", "json", "-n", "2")
	for _, l := range lines(out) {
		var id keygen.ID
		if !strings.HasPrefix(l, `"`) || json.Unmarshal([]byte(l), &id) != nil || id <= 0 {
			t.Errorf("-format json line %q", l)
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	ids := lines(mustCLI(t, "gen", "-props", "worker-id=1,datacenter-bits=3,datacenter-id=5", "-n", "2"))
	out := mustCLI(t, "decode", "-o", "json", "-props", "datacenter-bits=3", ids[0], ids[1])
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("decode -o json: %v\n%s", err, out)
	}
	if len(got) != 2 {
		t.Fatalf("got %d objects, want 2", len(got))
	}
	for i, o := range got {
		if o["id"] != ids[i] || o["worker"] != 1.0 || o["datacenter"] != 5.0 {
			t.Errorf("object %d: %v", i, o)
		}
		if _, ok := o["time"].(string); !ok {
			t.Errorf("object %d: time %v is not a string", i, o["time"])
		}
		if _, ok := o["backup"]; ok {
			t.Errorf("object %d shows backup", i)
		}
	}
}

func TestDecodeDatacenterText(t *testing.T) {
	id := strings.TrimSpace(mustCLI(t, "gen", "-props", "worker-id=1,datacenter-bits=3,datacenter-id=5"))
	f := fields(t, mustCLI(t, "decode", "-props", "datacenter-bits=3", id))
	if f["datacenter"] != "5" || f["worker"] != "1" {
		t.Errorf("decode: %v", f)
	}
}

// TestDecodeWorkerIDSpellings: a worker id the user gives, in any
// spelling, is kept (no placeholder added beside it).
func TestDecodeWorkerIDSpellings(t *testing.T) {
	id := strings.TrimSpace(mustCLI(t, "gen", "-props", "worker-id=2"))
	for _, p := range []string{"worker-id=0", "worker.id=5", "workerId=7", "worker_id=1"} {
		if f := fields(t, mustCLI(t, "decode", "-props", p, id)); f["worker"] != "2" {
			t.Errorf("decode -props %s: worker %s, want 2", p, f["worker"])
		}
	}
}

func TestDecodeCustomLayout(t *testing.T) {
	props := "time-bits=42,worker-bits=8,sequence-bits=12,epoch=2020-01-01"
	id := strings.TrimSpace(mustCLI(t, "gen", "-props", "worker-id=200,"+props))
	f := fields(t, mustCLI(t, "decode", "-props", props, id))
	if f["worker"] != "200" || f["layout"] != "[time 42 | worker 8 | sequence 12; unit 1ms]" {
		t.Errorf("decode: %v", f)
	}
}

func TestDecodeFlagsAfterIDs(t *testing.T) {
	id := strings.TrimSpace(mustCLI(t, "gen", "-type", "UID", "-props", "worker-id=3"))
	if f := fields(t, mustCLI(t, "decode", id, "-type", "uid")); f["worker"] != "3" {
		t.Errorf("decode ID -type uid: %v", f)
	}
}

func TestUID(t *testing.T) {
	ids := checkIncreasing(t, lines(mustCLI(t, "gen", "-type", "UID", "-props", "worker-id=42", "-n", "3")), 3)
	f := fields(t, mustCLI(t, "decode", "-type", "UID", strconv.FormatInt(ids[0], 10)))
	if f["worker"] != "42" || f["layout"] != "[time 31 | worker 19 | sequence 13; unit 1s]" {
		t.Errorf("decode UID: %v", f)
	}
	if !strings.HasSuffix(f["time"], ".000Z") {
		t.Errorf("UID time %q is not whole seconds", f["time"])
	}
}

func TestSnowflakeJS(t *testing.T) {
	ids := checkIncreasing(t, lines(mustCLI(t, "gen", "-type", "SNOWFLAKE_JS", "-props", "worker-id=3", "-n", "4")), 4)
	for _, id := range ids {
		if id >= 1<<53 {
			t.Errorf("SNOWFLAKE_JS ID %d is not JavaScript-safe", id)
		}
	}
	f := fields(t, mustCLI(t, "decode", "-type", "SNOWFLAKE_JS", strconv.FormatInt(ids[0], 10)))
	if f["worker"] != "3" || f["backup"] != "false" {
		t.Errorf("decode SNOWFLAKE_JS: %v", f)
	}
	if f["layout"] != "[time 32 | backup 1 | worker 4 | sequence 16; unit 1s]" {
		t.Errorf("layout %q", f["layout"])
	}
}

func TestUUIDv7(t *testing.T) {
	ls := lines(mustCLI(t, "gen", "-type", "UUID", "-props", "version=7", "-n", "5"))
	if len(ls) != 5 {
		t.Fatalf("got %d lines", len(ls))
	}
	for i, u := range ls {
		if len(u) != 36 || u[14] != '7' || strings.Count(u, "-") != 4 {
			t.Errorf("line %d %q is not a version 7 UUID", i, u)
		}
	}
	if !slices.IsSorted(ls) || len(slices.Compact(slices.Clone(ls))) != 5 {
		t.Errorf("version 7 UUIDs not strictly increasing: %q", ls)
	}

	var js []string
	if err := json.Unmarshal([]byte(mustCLI(t, "gen", "-type", "uuid", "-n", "2", "-o", "json")), &js); err != nil ||
		len(js) != 2 || len(js[0]) != 36 || js[0][14] != '4' {
		t.Errorf("gen -type uuid -o json: %q, %v", js, err)
	}
	if code, _, errs := cli(t, "gen", "-type", "UUID", "-format", "base62"); code != 2 || !strings.Contains(errs, "int64") {
		t.Errorf("UUID -format base62: exit %d, stderr %q", code, errs)
	}
}

func TestRuntimeErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "-type", "NOPE", "-props", "worker-id=1"}, "unknown generator type"},
		{[]string{"gen"}, "worker-id"},
		{[]string{"gen", "-type", "UID"}, "worker-id"},
		{[]string{"gen", "-props", "worker-id=5000"}, "worker-id"},
		{[]string{"gen", "-props", "nonsense"}, "key=value"},
		{[]string{"gen", "-props", "worker-id=1,colour=red"}, "unknown prop"},
		{[]string{"decode", "-type", "UUID", "123"}, "no Snowflake layout"},
		{[]string{"decode", "-type", "NOPE", "123"}, "unknown generator type"},
		{[]string{"decode", "-props", "time-bits=70", "123"}, "time-bits"},
		{[]string{"decode", "--", "-1"}, "negative"},
		{[]string{"decode", "12x"}, "invalid id"},
		{[]string{"decode", "-type", "SNOWFLAKE_JS", "9007199254740992"}, "invalid id"},
	} {
		code, out, errs := cli(t, tc.args...)
		if code != 1 || !strings.HasPrefix(errs, "shardkey: ") || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("shardkey %s: exit %d, stdout %q, stderr %q; want exit 1 mentioning %q",
				strings.Join(tc.args, " "), code, out, errs, tc.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"bogus"},
		{"gen", "-bogus"},
		{"gen", "-n", "0", "-props", "worker-id=1"},
		{"gen", "-n", "1000001", "-props", "worker-id=1"},
		{"gen", "-n", "x"},
		{"gen", "-o", "yaml", "-props", "worker-id=1"},
		{"gen", "-format", "hex", "-props", "worker-id=1"},
		{"gen", "-props", "worker-id=1", "extra"},
		{"decode"},
		{"decode", "-type", "UID"},
		{"decode", "-x", "1"},
		{"help", "bogus"},
	} {
		code, out, errs := cli(t, args...)
		if code != 2 || errs == "" || out != "" {
			t.Errorf("shardkey %s: exit %d, stdout %q, stderr %q; want exit 2", strings.Join(args, " "), code, out, errs)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		out := mustCLI(t, args...)
		for _, want := range []string{"usage: shardkey <command>", "gen", "decode", "Examples:"} {
			if !strings.Contains(out, want) {
				t.Errorf("shardkey %s: no %q in\n%s", args[0], want, out)
			}
		}
	}
	for _, c := range commands {
		if !strings.Contains(mustCLI(t, "help"), "\n  "+c.name+" ") {
			t.Errorf("shardkey help does not list %s", c.name)
		}
		// Every command: usage, examples and -o on -h, --help and help CMD.
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}, {c.name, "--help"}, {c.name, "-help"}} {
			out := mustCLI(t, args...)
			for _, want := range []string{"usage: shardkey " + c.name + " ", "\n\nFlags:\n", "-o form", "\nExamples:\n  shardkey " + c.name + " "} {
				if !strings.Contains(out, want) {
					t.Errorf("shardkey %s: no %q in\n%s", strings.Join(args, " "), want, out)
				}
			}
			if !strings.HasSuffix(out, "\n") || strings.HasSuffix(out, "\n\n") {
				t.Errorf("shardkey %s: output does not end with one newline", strings.Join(args, " "))
			}
		}
		// Every command: an unknown flag is a usage error.
		if code, out, errs := cli(t, c.name, "-no-such-flag"); code != 2 || out != "" || !strings.Contains(errs, "-no-such-flag") {
			t.Errorf("shardkey %s -no-such-flag: exit %d, stdout %q, stderr %q", c.name, code, out, errs)
		}
	}
	// Commands with a rule file share -rules and -keygen-props.
	for _, name := range []string{"validate", "route", "targets", "ddl"} {
		out := mustCLI(t, "help", name)
		for _, want := range []string{"-rules file", "-keygen-props k=v,k=v"} {
			if !strings.Contains(out, want) {
				t.Errorf("shardkey help %s: no %q", name, want)
			}
		}
	}
	for _, tc := range []struct {
		cmd  string
		args []string
	}{
		{"gen", []string{"help", "gen"}},
		{"gen", []string{"gen", "-h"}},
		{"gen", []string{"gen", "-help"}},
		{"decode", []string{"help", "decode"}},
		{"decode", []string{"decode", "-h"}},
	} {
		out := mustCLI(t, tc.args...)
		for _, want := range []string{"usage: shardkey " + tc.cmd + " ", "-type", "-props", "-o form", "Examples:"} {
			if !strings.Contains(out, want) {
				t.Errorf("shardkey %s: no %q in\n%s", strings.Join(tc.args, " "), want, out)
			}
		}
	}
}

// TestBinary runs the binary TestMain built as a user would.
func TestBinary(t *testing.T) {
	sh := func(args ...string) (int, string, string) { return runBin(t, args...) }

	code, out, errs := sh("gen", "-props", "worker-id=1", "-n", "5")
	if code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	ids := checkIncreasing(t, lines(out), 5)

	code, out, errs = sh("decode", strconv.FormatInt(ids[2], 10))
	if code != 0 || fields(t, out)["worker"] != "1" {
		t.Errorf("decode: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	code, out, _ = sh("decode", "-o", "json", strconv.FormatInt(ids[0], 10))
	var objs []struct {
		ID     keygen.ID `json:"id"`
		Worker int64     `json:"worker"`
	}
	if err := json.Unmarshal([]byte(out), &objs); code != 0 || err != nil || len(objs) != 1 ||
		int64(objs[0].ID) != ids[0] || objs[0].Worker != 1 {
		t.Errorf("decode -o json: exit %d, %v, %s", code, err, out)
	}

	if code, _, errs := sh("gen", "-bogus"); code != 2 || !strings.Contains(errs, "-bogus") {
		t.Errorf("bad flag: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := sh("gen", "-type", "NOPE", "-props", "worker-id=1"); code != 1 ||
		!strings.Contains(errs, "unknown generator type") {
		t.Errorf("unknown type: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := sh("gen"); code != 1 || !strings.Contains(errs, "worker-id") {
		t.Errorf("missing worker-id: exit %d, stderr %q", code, errs)
	}
}
