package zklease_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// TestSequenceAbove1023IsRefusedAndLeavesNoNode: once ZooKeeper's sequence
// under forever passed 1023 (1024 creations, whatever was deleted since),
// a new address gets no LEAF_SNOWFLAKE worker id: ErrWorkerOutOfRange,
// never a truncated id, and no node is left behind.
func TestSequenceAbove1023IsRefusedAndLeavesNoNode(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	c := connect(t, server)
	node, _ := createLeafNode(t, c, name, "10.12.0.1", "1", time.Now().UnixMilli())
	dir := "/snowflake/" + name + "/forever"
	// Push the sequence past 1023 with nodes deleted again at once.
	for range 1024 {
		p, err := c.Create(dir+"/scratch-", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(p, -1); err != nil {
			t.Fatal(err)
		}
	}
	s := newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.12.0.2:1"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
	if !errors.Is(err, zklease.ErrWorkerOutOfRange) {
		t.Fatalf("claim with the sequence past 1023: %v, want ErrWorkerOutOfRange", err)
	}
	kids, _, err := c.Children(dir)
	if err != nil || len(kids) != 1 || kids[0] != node {
		t.Fatalf("forever after the refusal: %v %v, want only %s", kids, err, node)
	}
	// The address that got its id first still gets it.
	a := acquire(t, newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.12.0.1:1"}))
	if a.Worker() != 0 {
		t.Fatalf("the first address got worker %d, want 0", a.Worker())
	}
}

// TestCacheFileOfAnotherNameOrCorruptIsRefused: with ZooKeeper
// unreachable, a cache file written for another Leaf name, one cut short,
// or one whose timestamp is ahead of the clock is never used.
func TestCacheFileOfAnotherNameOrCorruptIsRefused(t *testing.T) {
	ts := time.Now().Add(-time.Minute).UnixMilli()
	good := "workerID=7\ntimestamp=" + strconv.FormatInt(ts, 10) + "\nname=n\naddress=10.13.0.1:1\nclosed=true\nvalidityMs=3000\n"
	ahead := "workerID=7\ntimestamp=" + strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10) +
		"\nname=n\naddress=10.13.0.1:1\nclosed=true\nvalidityMs=3000\n"
	for label, tc := range map[string]struct {
		content string
		want    error
	}{
		"another name":   {content: "workerID=7\ntimestamp=" + strconv.FormatInt(ts, 10) + "\nname=other\naddress=10.13.0.1:1\nclosed=true\nvalidityMs=3000\n", want: zklease.ErrCacheFile},
		"cut short":      {content: good[:len(good)-len("closed=true\nvalidityMs=3000\n")], want: zklease.ErrCacheFile},
		"binary garbage": {content: "\x00\x01workerID\x02", want: zklease.ErrCacheFile},
		"clock behind":   {content: ahead, want: zklease.ErrClockBehind},
	} {
		t.Run(label, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "workerID.properties")
			if err := os.WriteFile(file, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := zklease.New(zklease.Config{Servers: []string{deadServer(t)}, Name: "n", Addr: "10.13.0.1:1",
				CacheFile: file, ConnectTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			l, err := s.Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
			if err == nil {
				l.Close()
				t.Fatalf("cache file used: worker %d", l.Worker())
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Acquire: %v, want %v", err, tc.want)
			}
		})
	}
}
