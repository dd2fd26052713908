package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen/workerlease/redislease"
)

// TestWorkersListShowsTheIDsRedisLeasesHold: three ids claimed through
// redislease are listed held by their instance, with their key, fencing
// token and time left; once one is closed it is listed free.
func TestWorkersListShowsTheIDsRedisLeasesHold(t *testing.T) {
	addr := dbtest.Redis(t)
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 5 * time.Second, MaxRetries: -1})
	// Cleanups run last first: the leases close while the client is open.
	t.Cleanup(func() { c.Close() })
	prefix, ns := testSpace(t), "orders"
	// A new namespace's first claim waits TTL + SafeGuard (redislease's
	// quarantine): a short TTL keeps the test short.
	src, err := redislease.New(redislease.Config{Client: c, Prefix: prefix, Namespace: ns, Instance: "cli-test", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	leases := claim(t, src, 3)
	args := []string{"-backend", "redis", "-addr", addr, "-prefix", prefix, "-namespace", ns}

	rows := listWorkers(t, args...)
	if got, want := heldWorkers(rows), leaseWorkers(leases); !slices.Equal(got, want) {
		t.Fatalf("held %v, claimed %v: %+v", got, want, rows)
	}
	for _, l := range leases {
		r := rows[l.Worker()]
		if !strings.HasPrefix(r.Owner, "cli-test/") || r.Fence <= 0 || r.TTLMs <= 0 || r.ExpiresAt == "-" ||
			!strings.Contains(r.Key, prefix) {
			t.Errorf("worker %d: %+v (want owner cli-test/..., a fencing token, a key under the prefix, time left)", l.Worker(), r)
		}
		if want := l.(*redislease.Lease).Key(); r.Key != want {
			t.Errorf("worker %d: key %q, the lease's is %q", l.Worker(), r.Key, want)
		}
	}
	table := listWorkersText(t, args...)
	for _, l := range leases {
		if f := tableRow(t, table, l.Worker()); f[1] != "true" || !strings.HasPrefix(f[2], "cli-test/") || f[len(f)-1] != rows[l.Worker()].Key {
			t.Errorf("worker %d: row %q", l.Worker(), f)
		}
	}
	// The same id space through a redis:// URL.
	if got := heldWorkers(listWorkers(t, "-backend", "redis", "-addr", "redis://"+addr+"/0", "-prefix", prefix, "-namespace", ns)); !slices.Equal(got, leaseWorkers(leases)) {
		t.Errorf("through redis://%s/0: held %v", addr, got)
	}
	// Another namespace holds none of them.
	if other := listWorkers(t, "-backend", "redis", "-addr", addr, "-prefix", prefix, "-namespace", "other"); len(other) != 0 {
		t.Errorf("namespace other: %+v", other)
	}

	// -all: every namespace under the prefix, each row naming its own.
	src2, err := redislease.New(redislease.Config{Client: c, Prefix: prefix, Namespace: "billing", Instance: "cli-test-2", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	billing := claim(t, src2, 1)[0]
	var out, errOut bytes.Buffer
	if code := run([]string{"workers", "list", "-backend", "redis", "-addr", addr, "-prefix", prefix, "-all", "-o", "json"}, &out, &errOut); code != exitOK {
		t.Fatalf("-all: exit %d: %s", code, errOut.String())
	}
	var all []listedWorker
	if err := json.Unmarshal(out.Bytes(), &all); err != nil {
		t.Fatalf("-all: %v: %s", err, out.String())
	}
	perNS := map[string][]int64{}
	for _, r := range all {
		if r.Held {
			perNS[r.Namespace] = append(perNS[r.Namespace], r.Worker)
		}
	}
	if len(perNS) != 2 || !slices.Equal(perNS[ns], leaseWorkers(leases)) || !slices.Equal(perNS["billing"], []int64{billing.Worker()}) {
		t.Errorf("-all: held per namespace %v; want %s %v and billing [%d]", perNS, ns, leaseWorkers(leases), billing.Worker())
	}
	if table := listWorkersText(t, "-backend", "redis", "-addr", addr, "-prefix", prefix, "-all"); !strings.HasPrefix(table, "NAMESPACE") || !strings.Contains(table, "billing") {
		t.Errorf("-all table:\n%s", table)
	}
	if code := run([]string{"workers", "list", "-backend", "redis", "-addr", addr, "-all", "-namespace", ns}, &out, &errOut); code != exitUsage {
		t.Errorf("-all with -namespace: exit %d, want 2", code)
	}

	closed := leases[0].Worker()
	if err := leases[0].Close(); err != nil {
		t.Fatal(err)
	}
	rows = listWorkers(t, args...)
	if r, ok := rows[closed]; !ok || r.Held {
		t.Errorf("worker %d after Close: %+v, listed %v (want free)", closed, r, ok)
	}
	if got := heldWorkers(rows); len(got) != 2 {
		t.Errorf("held after one Close: %v", got)
	}
}

// TestWorkersListOnUnreachableRedisIsAnError: a dead address is exit 1
// naming Redis and the address, without the password of the URL or of
// SHARDKEY_REDIS_PASSWORD; a password the server refuses is an error
// without it too.
func TestWorkersListOnUnreachableRedisIsAnError(t *testing.T) {
	addr := dbtest.Redis(t)
	dead := deadAddr(t)
	checkUnreachable(t, "Redis at "+dead+":", nil, "-backend", "redis", "-addr", dead)
	checkUnreachable(t, "Redis at redis://app:xxxxx@"+dead+"/0:", []string{"s3cretURL"}, "-backend", "redis", "-addr", "redis://app:s3cretURL@"+dead+"/0")
	// The shared server has no password: AUTH with one fails, and the
	// error must not quote it.
	checkUnreachable(t, "Redis at redis://app:xxxxx@"+addr+"/0:", []string{"s3cretURL"}, "-backend", "redis", "-addr", "redis://app:s3cretURL@"+addr+"/0")
	// A URL without a password takes SHARDKEY_REDIS_PASSWORD's.
	t.Setenv(redisPasswordEnv, "s3cretEnv")
	checkUnreachable(t, "Redis at redis://app@"+addr+"/0:", []string{"s3cretEnv"}, "-backend", "redis", "-addr", "redis://app@"+addr+"/0")
}
