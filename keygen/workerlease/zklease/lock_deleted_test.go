package zklease_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// TestLockDeletedByHandNeverLetsTwoProcessesIssue: an operator deletes
// the ephemeral lock of a live holder. A second process of the same
// ip:port takes the lock at once, but waits past the holder's validity
// (LastUsed after an unclean end) before it returns; the holder stops at
// its next report or when its validity ends, whichever is first. No key
// repeats.
func TestLockDeletedByHandNeverLetsTwoProcessesIssue(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	cfg := zklease.Config{Servers: []string{server}, Name: name, Addr: "10.15.0.1:1"}
	g1 := leafGen(t, newSource(t, cfg))
	is := startIssuer(g1)
	time.Sleep(500 * time.Millisecond)
	c := connect(t, server)
	dir := "/snowflake/" + name + "/shardkey/10.15.0.1:1"
	kids, _, err := c.Children(dir)
	if err != nil || len(kids) != 1 || !strings.HasPrefix(kids[0], "lock-") {
		t.Fatalf("lock nodes: %v %v", kids, err)
	}
	if err := c.Delete(dir+"/"+kids[0], -1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l2, err := newSource(t, cfg).Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
	if err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	t.Cleanup(func() { l2.Close() })
	if lost := is.lost(); lost.IsZero() || lost.After(taken) {
		t.Fatalf("the holder whose lock was deleted had not refused (%v) when the second process got the id (%v)", lost, taken)
	}
	g2 := leafGen(t, constSource{l2})
	is.end()
	oldMax := slices.Max(is.keys)
	for range 100 {
		id, err := g2.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if id <= oldMax || slices.Contains(is.keys, id) {
			t.Fatalf("the second process issued %d; the first issued up to %d", id, oldMax)
		}
	}
	t.Logf("lock deleted; holder refused %v before the second process got the id", taken.Sub(is.lost()))
}
