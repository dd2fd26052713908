package main

// Tests of `shardkey workers list -backend zookeeper|etcd|redis` against
// the real servers: ids claimed through each worker-id source are listed
// as held, by the holder that has them, in text and JSON; an id released
// is listed as free; an unreachable server is an error naming the backend
// and address; passwords never reach the output.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// listedWorker is a row of `workers list -o json`.
type listedWorker struct {
	Namespace  string `json:"namespace"`
	Worker     int64  `json:"worker"`
	Owner      string `json:"owner"`
	Held       bool   `json:"held"`
	ExpiresAt  string `json:"expires_at"`
	LastUsed   string `json:"last_used"`
	Key        string `json:"key"`
	TTLMs      int64  `json:"ttl_ms"`
	LeaseID    string `json:"lease_id"`
	Fence      int64  `json:"fence"`
	ValidUntil string `json:"valid_until"`
	Holder     string `json:"holder"`
	Leaf       bool   `json:"leaf"`
	Closed     bool   `json:"closed"`
	Err        string `json:"error"`
}

// listWorkers runs `shardkey workers list ARGS -o json` in-process and
// returns its rows by worker id.
func listWorkers(t *testing.T, args ...string) map[int64]listedWorker {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"workers", "list"}, append(args, "-o", "json")...)
	if code := run(args, &out, &errOut); code != exitOK {
		t.Fatalf("%q: exit %d: %s", args, code, errOut.String())
	}
	var rows []listedWorker
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%q: %v: %s", args, err, out.String())
	}
	byID := map[int64]listedWorker{}
	for _, r := range rows {
		if _, dup := byID[r.Worker]; dup {
			t.Fatalf("%q: worker %d listed twice: %s", args, r.Worker, out.String())
		}
		byID[r.Worker] = r
	}
	return byID
}

// listWorkersAll runs `shardkey workers list ARGS -o json` and returns its
// rows as listed (-all lists ids of several namespaces).
func listWorkersAll(t *testing.T, args ...string) []listedWorker {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"workers", "list"}, append(args, "-o", "json")...)
	if code := run(args, &out, &errOut); code != exitOK {
		t.Fatalf("%q: exit %d: %s", args, code, errOut.String())
	}
	var rows []listedWorker
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%q: %v: %s", args, err, out.String())
	}
	return rows
}

// listWorkersText runs `shardkey workers list ARGS` and returns the table.
func listWorkersText(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"workers", "list"}, args...)
	if code := run(args, &out, &errOut); code != exitOK {
		t.Fatalf("%q: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

// tableRow finds the row of worker w in a `workers list` table.
func tableRow(t *testing.T, table string, w int64) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 && f[0] == strconv.FormatInt(w, 10) {
			return f
		}
	}
	t.Fatalf("worker %d is not in the table:\n%s", w, table)
	return nil
}

// claim acquires n worker ids from src (a SNOWFLAKE's 0..1023), closed
// when the test ends; their ids are distinct.
func claim(t *testing.T, src keygen.WorkerSource, n int) []keygen.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var leases []keygen.Lease
	seen := map[int64]bool{}
	for range n {
		l, err := src.Acquire(ctx, keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 1023})
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		t.Cleanup(func() { l.Close() })
		if seen[l.Worker()] {
			t.Fatalf("worker %d claimed twice", l.Worker())
		}
		seen[l.Worker()] = true
		leases = append(leases, l)
	}
	return leases
}

// testSpace is a name of the test's own on the shared servers.
func testSpace(t *testing.T) string {
	b := make([]byte, 4)
	rand.Read(b)
	return "cli-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + hex.EncodeToString(b)
}

// deadAddr is a 127.0.0.1 address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// checkUnreachable runs `workers list ARGS` against a dead address: exit
// 1, one line naming the backend and the address, no secret, within the
// timeout given (plus slack).
func checkUnreachable(t *testing.T, want string, secrets []string, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"workers", "list", "-timeout", "2s"}, args...)
	start := time.Now()
	code := run(args, &out, &errOut)
	took := time.Since(start)
	msg := errOut.String()
	if code != exitRuntime || !strings.Contains(msg, want) {
		t.Errorf("%q: exit %d, stderr %q; want exit 1 naming %q", args, code, msg, want)
	}
	for _, s := range secrets {
		if strings.Contains(msg+out.String(), s) {
			t.Errorf("%q: the password %q reached the output: %s", args, s, msg)
		}
	}
	if took > 10*time.Second {
		t.Errorf("%q: took %v with -timeout 2s", args, took)
	}
}

// heldWorkers are the ids of rows listed as held.
func heldWorkers(rows map[int64]listedWorker) []int64 {
	var ids []int64
	for w, r := range rows {
		if r.Held {
			ids = append(ids, w)
		}
	}
	slices.Sort(ids)
	return ids
}

// leaseWorkers are the leases' ids, sorted.
func leaseWorkers(leases []keygen.Lease) []int64 {
	var ids []int64
	for _, l := range leases {
		ids = append(ids, l.Worker())
	}
	slices.Sort(ids)
	return ids
}

// TestBinaryWorkersListErrorsAreOneLine: the built command, run against a
// dead address of each coordination server, exits 1 with one line on
// stderr naming the backend and address: the client libraries' own
// retry logs stay out of it.
func TestBinaryWorkersListErrorsAreOneLine(t *testing.T) {
	dead := deadAddr(t)
	for _, args := range [][]string{
		{"-backend", "zookeeper", "-servers", dead, "-name", "app"},
		{"-backend", "etcd", "-endpoints", dead},
		{"-backend", "redis", "-addr", dead},
	} {
		code, stdout, stderr := runBin(t, append([]string{"workers", "list", "-timeout", "2s"}, args...)...)
		if code != exitRuntime || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, " at "+dead+":") || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and one line naming %s", args, code, stdout, stderr, dead)
		}
	}
}
