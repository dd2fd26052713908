package zklease_test

import (
	"context"
	"errors"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// deadServer is an address where nothing listens.
func deadServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestCacheFileFallbackUsesTheCachedIDWhenZooKeeperIsUnreachable: a claim
// writes the worker id and its timestamp to the cache file (Leaf's
// workerID key among them); a start while ZooKeeper is unreachable uses
// that id with the file's last timestamp, refuses a clock behind it, and
// without a file (or with another ip:port's) fails with ErrUnreachable.
func TestCacheFileFallbackUsesTheCachedIDWhenZooKeeperIsUnreachable(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	file := filepath.Join(t.TempDir(), "leafconf", "8080", "workerID.properties")
	cfg := zklease.Config{Servers: []string{server}, Name: name, Addr: "10.10.0.1:8080", CacheFile: file}
	l := acquire(t, newSource(t, cfg))
	worker := l.Worker()
	last := time.Now().Add(20 * time.Millisecond)
	l.Track(func() time.Time { return last })
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nworkerID="+strconv.FormatInt(worker, 10)+"\n") {
		t.Fatalf("cache file lacks Leaf's workerID=%d:\n%s", worker, b)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(file)
	if !strings.Contains(string(b), "closed=true") {
		t.Fatalf("cache file after Close:\n%s", b)
	}

	down := cfg
	down.Servers = []string{deadServer(t)}
	down.ConnectTimeout = 500 * time.Millisecond
	ctx := context.Background()
	info := keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax}
	fl, err := newSource(t, down).Acquire(ctx, info)
	if err != nil {
		t.Fatalf("Acquire with ZooKeeper down and a cache file: %v", err)
	}
	if fl.Worker() != worker || fl.LastUsed().Before(last) || fl.ValidUntil() != math.MaxInt64 {
		t.Fatalf("fallback lease: worker %d last used %v valid until %d; want worker %d, at or after %v, no expiry",
			fl.Worker(), fl.LastUsed(), fl.ValidUntil(), worker, last)
	}
	g, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(constSource{fl}))
	if err != nil {
		t.Fatal(err)
	}
	id, err := g.NextID(ctx)
	if err != nil || id>>12&1023 != worker {
		t.Fatalf("key from the cached id: %d (worker %d), %v", id, id>>12&1023, err)
	}
	if err := fl.Close(); err != nil {
		t.Fatal(err)
	}

	// A clock behind the cached timestamp is refused, as with ZooKeeper.
	behind := keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: keygentest.NewClock(time.Now().Add(-time.Hour))}
	if _, err := newSource(t, down).Acquire(ctx, behind); !errors.Is(err, zklease.ErrClockBehind) {
		t.Fatalf("fallback with the clock an hour behind: %v, want ErrClockBehind", err)
	}
	// Another ip:port's file is not used.
	other := down
	other.Addr = "10.10.0.2:8080"
	if _, err := newSource(t, other).Acquire(ctx, info); !errors.Is(err, zklease.ErrCacheFile) || !errors.Is(err, zklease.ErrUnreachable) {
		t.Fatalf("fallback with another ip:port's file: %v, want ErrUnreachable and ErrCacheFile", err)
	}
	// Without a cache file an unreachable ZooKeeper fails.
	none := down
	none.CacheFile = ""
	if _, err := newSource(t, none).Acquire(ctx, info); !errors.Is(err, zklease.ErrUnreachable) {
		t.Fatalf("ZooKeeper down, no cache file: %v, want ErrUnreachable", err)
	}
}

// TestCacheFileAfterAnUncleanEndAddsTheLeasesValidity: a file whose holder
// did not close cleanly makes the fallback start only after the recorded
// timestamp plus the lease's validity, since keys may carry times up to
// then.
func TestCacheFileAfterAnUncleanEndAddsTheLeasesValidity(t *testing.T) {
	file := filepath.Join(t.TempDir(), "workerID.properties")
	ts := time.Now().Add(-time.Second).UnixMilli()
	content := "workerID=7\ntimestamp=" + strconv.FormatInt(ts, 10) +
		"\nname=n\naddress=10.11.0.1:1\nclosed=false\nvalidityMs=3000\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := zklease.New(zklease.Config{Servers: []string{deadServer(t)}, Name: "n", Addr: "10.11.0.1:1",
		CacheFile: file, ConnectTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	clk := keygentest.NewClock(time.Now())
	l, err := s.Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	want := time.UnixMilli(ts).Add(zklease.LeafReportInterval + time.Second) // the larger of 3s and Leaf's slack
	if l.Worker() != 7 || !l.LastUsed().Equal(want) || !clk.Now().After(want) {
		t.Fatalf("worker %d last used %v (clock %v); want 7, %v, the clock past it", l.Worker(), l.LastUsed(), clk.Now(), want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Leaf's own file (workerID alone) is not enough: no timestamp.
	if err := os.WriteFile(file, []byte("workerID=7"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax}); !errors.Is(err, zklease.ErrCacheFile) {
		t.Fatalf("a file with workerID alone: %v, want ErrCacheFile", err)
	}
}
