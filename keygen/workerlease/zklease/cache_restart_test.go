package zklease_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// TestClaimThroughZooKeeperStartsAfterKeysIssuedThroughTheCacheFile: keys
// issued through the cache file while ZooKeeper was unreachable are in the
// file only; the next claim of that ip:port through ZooKeeper, with the
// same file, starts after them (its LastUsed is not before the last one)
// and its generator issues none at or below them, though the node and the
// holder record say the id was released cleanly before the outage: after
// a cache lease closed, and after one that ended without Close (a crash,
// keys issued since its last write of the file).
func TestClaimThroughZooKeeperStartsAfterKeysIssuedThroughTheCacheFile(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	file := filepath.Join(t.TempDir(), "workerID.properties")
	// A validity of 9s: the cache lease writes the file every 3s, well
	// apart from the keys this test issues.
	cfg := zklease.Config{Servers: []string{server}, Name: name, Addr: "10.12.0.1:8080", CacheFile: file,
		SessionTimeout: 12 * time.Second}
	down := cfg
	down.Servers = []string{deadServer(t)}
	down.ConnectTimeout = 500 * time.Millisecond
	ctx := context.Background()

	first := acquire(t, newSource(t, cfg))
	worker := first.Worker()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	// issue takes 100 keys of g, all of the cached worker; it returns the
	// largest.
	issue := func(g keygen.IDGenerator) int64 {
		t.Helper()
		var lastKey int64
		for range 100 {
			id, err := g.NextID(ctx)
			if err != nil {
				t.Fatalf("key through the cache file: %v", err)
			}
			if id>>12&1023 != worker {
				t.Fatalf("key %d through the cache file has worker %d, want %d", id, id>>12&1023, worker)
			}
			lastKey = max(lastKey, id)
		}
		return lastKey
	}
	// viaCache is a generator taking the cached worker id (ZooKeeper
	// unreachable) on clock, which does not move: every key is of its
	// reading or before.
	viaCache := func(clock *keygentest.Clock) keygen.IDGenerator {
		t.Helper()
		g, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(newSource(t, down)), keygen.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.(io.Closer).Close() })
		return g
	}
	// viaZooKeeper claims on clock and checks the lease and its keys
	// against the last key issued through the cache file, at issuedAt.
	viaZooKeeper := func(clock *keygentest.Clock, issuedAt time.Time, lastKey int64) {
		t.Helper()
		l, err := newSource(t, cfg).Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clock})
		if err != nil {
			t.Fatalf("claim through ZooKeeper after the cache lease: %v", err)
		}
		defer l.Close()
		if l.Worker() != worker {
			t.Fatalf("worker %d through ZooKeeper, want %d", l.Worker(), worker)
		}
		if l.LastUsed().Before(issuedAt) {
			t.Fatalf("LastUsed %v is before the last key issued through the cache file (%v)", l.LastUsed(), issuedAt)
		}
		g, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(constSource{l}), keygen.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		defer g.(io.Closer).Close()
		for range 100 {
			id, err := g.NextID(ctx)
			if err != nil {
				t.Fatalf("key through ZooKeeper: %v", err)
			}
			if id <= lastKey {
				t.Fatalf("key %d through ZooKeeper is at or below %d, issued through the cache file", id, lastKey)
			}
		}
	}

	// The cache lease closed: the file covers every key.
	ahead := keygentest.NewClock(time.Now().Add(2 * time.Second))
	g := viaCache(ahead)
	lastKey := issue(g)
	issuedAt := ahead.Now()
	if err := g.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	viaZooKeeper(keygentest.NewClock(issuedAt.Add(time.Millisecond)), issuedAt, lastKey)

	// The cache lease ended without Close (closed only at the test's
	// end): keys issued after its first write of the file, the next
	// claim's clock between that write and the keys.
	start := time.Now().Add(4 * time.Second)
	ahead = keygentest.NewClock(start)
	g = viaCache(ahead)
	issue(g) // the lease starts and writes the file
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "closed=false") {
		t.Fatalf("cache file while the cache lease runs (a crash now must not read as a clean end):\n%s", b)
	}
	ahead.Add(500 * time.Millisecond)
	lastKey = issue(g)
	issuedAt = ahead.Now()
	viaZooKeeper(keygentest.NewClock(start.Add(100*time.Millisecond)), issuedAt, lastKey)
}
