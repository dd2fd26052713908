package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestWorkersHelpDocumentsEveryBackend: `shardkey workers -h` names every
// backend, the flags it reads and an example of it.
func TestWorkersHelpDocumentsEveryBackend(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"workers", "-h"}, &out, &errOut); code != exitOK {
		t.Fatalf("workers -h: exit %d: %s", code, errOut.String())
	}
	help := out.String()
	for _, want := range []string{"-backend", "sql", "-dsn", "-timeout", "release WORKER"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	for _, b := range workerBackends {
		if !strings.Contains(help, "  "+b.name+" ") {
			t.Errorf("help does not describe -backend %s:\n%s", b.name, help)
		}
		if !strings.Contains(help, "shardkey workers list -backend "+b.name+" ") {
			t.Errorf("help has no example of -backend %s:\n%s", b.name, help)
		}
		for _, f := range b.flags {
			if !strings.Contains(help, "  -"+f.name+" ") {
				t.Errorf("help lacks -%s of -backend %s:\n%s", f.name, b.name, help)
			}
		}
	}
	if !strings.Contains(help, "-backend "+strings.Join(workerBackendNames(), "|")+"]") {
		t.Errorf("usage line does not list the backends:\n%s", help)
	}
}

// TestWorkersUsageMistakesExitTwo: a flag of another backend, a missing
// address, release outside the lease table and an unknown backend are
// usage errors (exit 2), each saying what is wrong, before anything is
// dialled, and never quoting a password.
func TestWorkersUsageMistakesExitTwo(t *testing.T) {
	for _, tc := range []struct {
		backend string // the case needs it built in
		args    []string
		want    string
	}{
		{"redis", []string{"workers", "list", "-backend", "redis", "-addr", "127.0.0.1:1", "-dsn", "postgres://x"}, "-dsn is not a flag of -backend redis"},
		{"zookeeper", []string{"workers", "list", "-dsn", "postgres://x", "-servers", "127.0.0.1:2181"}, "-servers is not a flag of -backend sql"},
		{"zookeeper", []string{"workers", "list", "-backend", "zookeeper", "-name", "app"}, "-servers is required"},
		{"etcd", []string{"workers", "list", "-backend", "etcd"}, "-endpoints is required"},
		{"redis", []string{"workers", "list", "-backend", "redis"}, "-addr is required"},
		{"zookeeper", []string{"workers", "release", "-backend", "zookeeper", "-servers", "127.0.0.1:1", "-name", "app", "3"}, "for -backend sql only"},
		{"redis", []string{"workers", "release", "-backend", "redis", "-addr", "127.0.0.1:1", "3"}, "for -backend sql only"},
		{"", []string{"workers", "list", "-backend", "consul"}, "must be one of " + strings.Join(workerBackendNames(), ", ")},
		{"etcd", []string{"workers", "list", "-backend", "etcd", "-endpoints", "127.0.0.1:1", "-timeout", "0s"}, "-timeout must be positive"},
		{"etcd", []string{"workers", "list", "-backend", "etcd", "-endpoints", "127.0.0.1:1", "extra"}, "takes no arguments"},
		{"etcd", []string{"workers", "list", "-backend", "etcd", "-endpoints", "127.0.0.1:1", "-table", "t"}, "-table is not a flag of -backend etcd"},
		{"", []string{"workers", "list", "-dsn", "postgres://x", "-all"}, "-all is not a flag of -backend sql"},
		{"zookeeper", []string{"workers", "list", "-backend", "zookeeper", "-servers", "127.0.0.1:1", "-all", "-name", "app"}, "-all lists every id space: it takes no -name"},
		{"redis", []string{"workers", "list", "-backend", "redis", "-addr", "127.0.0.1:1", "-namespace", "a", "-all"}, "-all lists every id space: it takes no -namespace"},
		{"redis", []string{"workers", "list", "-backend", "redis", "-addr", "redis://app:s3cret@127.0.0.1:1/0%"}, "-addr is not host:port or a Redis URL"},
	} {
		if tc.backend != "" && workerBackendNamed(tc.backend) == nil {
			continue
		}
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != exitUsage || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, errOut.String(), tc.want)
		}
		if strings.Contains(errOut.String(), "s3cret") {
			t.Errorf("%q: the password reached the output: %s", tc.args, errOut.String())
		}
	}
}

// TestWorkerRowsPrintAsTableAndJSON: the coordination servers' rows carry
// the node or key holding each id; the lease table's listing keeps its
// columns and JSON fields.
func TestWorkerRowsPrintAsTableAndJSON(t *testing.T) {
	at := time.Date(2026, 11, 27, 7, 0, 0, 5e6, time.UTC)
	rows := []workerRow{
		{Worker: 3, Owner: "10.0.0.5:8080", Held: true, LastUsed: at, Key: "/snowflake/app/forever/10.0.0.5:8080-0000000003"},
		{Worker: 4, Held: false},
	}
	var b bytes.Buffer
	if err := printWorkerRows(&b, "text", rows, workerColumns{key: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "WORKER HELD OWNER EXPIRES LAST USED KEY" {
		t.Fatalf("table:\n%s", b.String())
	}
	if got := strings.Fields(lines[1]); strings.Join(got, " ") != "3 true 10.0.0.5:8080 - 2026-11-27T07:00:00.005Z /snowflake/app/forever/10.0.0.5:8080-0000000003" {
		t.Errorf("row 1: %q", lines[1])
	}
	if got := strings.Fields(lines[2]); strings.Join(got, " ") != "4 false - - - -" {
		t.Errorf("row 2: %q", lines[2])
	}

	b.Reset()
	if err := printWorkerRows(&b, "json", rows, workerColumns{key: true}); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	if len(got) != 2 || got[0]["worker"] != 3.0 || got[0]["owner"] != "10.0.0.5:8080" || got[0]["held"] != true ||
		got[0]["expires_at"] != "-" || got[0]["last_used"] != "2026-11-27T07:00:00.005Z" ||
		got[0]["key"] != "/snowflake/app/forever/10.0.0.5:8080-0000000003" || got[1]["held"] != false {
		t.Errorf("json: %s", b.String())
	}

	// The lease table: no KEY column, no "key" field.
	b.Reset()
	if err := printWorkerRows(&b, "text", rows[1:], workerColumns{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "KEY") {
		t.Errorf("lease-table listing grew a KEY column:\n%s", b.String())
	}
	b.Reset()
	if err := printWorkerRows(&b, "json", []workerRow{{Worker: 0, Owner: "h/1", Held: true}}, workerColumns{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"key"`) {
		t.Errorf("lease-table json grew a key field: %s", b.String())
	}
	// -all: NAMESPACE first, even with no rows; a Leaf node shows "leaf",
	// an unreadable node "?".
	b.Reset()
	odd := []workerRow{
		{Namespace: "app", Worker: 5, Owner: "10.0.0.9:80", Leaf: true, Key: "/snowflake/app/forever/10.0.0.9:80-0000000005"},
		{Namespace: "app", Worker: -1, Err: "bad node", Key: "/snowflake/app/forever/junk"},
	}
	if err := printWorkerRows(&b, "text", odd, workerColumns{key: true, namespace: true}); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAMESPACE") ||
		strings.Join(strings.Fields(lines[1]), " ") != "app 5 leaf 10.0.0.9:80 - - /snowflake/app/forever/10.0.0.9:80-0000000005" ||
		strings.Join(strings.Fields(lines[2]), " ") != "app ? false - - - /snowflake/app/forever/junk" {
		t.Errorf("-all table:\n%s", b.String())
	}
	b.Reset()
	if err := printWorkerRows(&b, "text", nil, workerColumns{key: true, namespace: true}); err != nil || !strings.HasPrefix(b.String(), "NAMESPACE") {
		t.Errorf("-all, no rows: %q %v", b.String(), err)
	}
	// No rows: an empty JSON array, not null.
	b.Reset()
	if err := printWorkerRows(&b, "json", nil, workerColumns{key: true}); err != nil || strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("no rows as json: %q %v", b.String(), err)
	}
}
