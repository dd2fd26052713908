package zklease_test

import (
	"context"
	"errors"
	"fmt"
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

// claimErr is the error of a LEAF_SNOWFLAKE-sized claim by s, closing the
// lease if the claim succeeds.
func claimErr(t *testing.T, s *zklease.Source) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
	if err == nil {
		t.Cleanup(func() { l.Close() })
		return fmt.Errorf("claimed worker %d, LastUsed %v", l.Worker(), l.LastUsed())
	}
	return err
}

// TestNodeDataWithoutATimestampIsAnUnreadableNodeError: the refusal of
// node data that says nothing about the id's last use is typed.
func TestNodeDataWithoutATimestampIsAnUnreadableNodeError(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	c := connect(t, server)
	name := uniqueName(t, server)
	node, _ := createLeafNode(t, c, name, "10.21.0.1", "1", time.Now().UnixMilli())
	path := "/snowflake/" + name + "/forever/" + node
	if _, err := c.Set(path, []byte(`{"ip":"10.21.0.1","port":"1","timestamp":0}`), -1); err != nil {
		t.Fatal(err)
	}
	err := claimErr(t, newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.21.0.1:1"}))
	var ne *zklease.NodeError
	if !errors.Is(err, zklease.ErrUnreadableNode) || !errors.As(err, &ne) || ne.Node != path {
		t.Fatalf("claim of a node with timestamp 0: %v, want a *NodeError for %s", err, path)
	}
}

// TestHolderRecordNotWrittenByZkleaseIsRefused: zklease's record of an
// ip:port (beside Leaf's nodes) that lacks a field is not read as zeros:
// closed_version 0 would claim a clean release of a node at version 0
// (the next holder starting at once after a holder that crashed), a
// validity of 0 would add nothing after an unclean end.
func TestHolderRecordNotWrittenByZkleaseIsRefused(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	c := connect(t, server)
	for label, data := range map[string]string{
		"null":              `null`,
		"empty object":      `{}`,
		"no closed_version": `{"worker":0,"validity_ms":3000}`,
		"no validity":       `{"worker":0,"closed_version":0}`,
		"zero validity":     `{"worker":0,"validity_ms":0,"closed_version":-1}`,
		"not JSON":          `worker=0`,
	} {
		t.Run(label, func(t *testing.T) {
			name := uniqueName(t, server)
			createLeafNode(t, c, name, "10.22.0.1", "1", time.Now().UnixMilli())
			for _, p := range []string{"/snowflake/" + name + "/shardkey", "/snowflake/" + name + "/shardkey/10.22.0.1:1"} {
				if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
					t.Fatal(err)
				}
			}
			if _, err := c.Set("/snowflake/"+name+"/shardkey/10.22.0.1:1", []byte(data), -1); err != nil {
				t.Fatal(err)
			}
			src := newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.22.0.1:1"})
			if err := claimErr(t, src); !errors.Is(err, zklease.ErrUnreadableNode) {
				t.Fatalf("claim with the record %s: %v, want ErrUnreadableNode", data, err)
			}
			ws, err := src.List(context.Background())
			if err != nil || len(ws) != 1 || !errors.Is(ws[0].Err, zklease.ErrUnreadableNode) {
				t.Fatalf("List with the record %s: %+v %v, want the node with ErrUnreadableNode", data, ws, err)
			}
		})
	}
}

// TestNewNodeWhoseSequenceAHandMadeNodeNamesIsRemovedAndRefused: a node
// made by hand with a sequence ZooKeeper has not given yet names the id
// the next new address gets. That address's claim is refused
// (ErrSharedID) and leaves no node; its next claim gets a later sequence
// of its own.
func TestNewNodeWhoseSequenceAHandMadeNodeNamesIsRemovedAndRefused(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	c := connect(t, server)
	name := uniqueName(t, server)
	dir := "/snowflake/" + name + "/forever"
	for _, p := range []string{"/snowflake", "/snowflake/" + name, dir} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	// Creating it moves ZooKeeper's sequence under dir to 1: the next
	// sequential node is ...-0000000001, the id this node names.
	hand := "10.23.0.9:1-0000000001"
	data := fmt.Sprintf(`{"ip":"10.23.0.9","port":"1","timestamp":%d}`, time.Now().UnixMilli())
	if _, err := c.Create(dir+"/"+hand, []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	src := newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.23.0.1:1"})
	err := claimErr(t, src)
	var se *zklease.SharedIDError
	if !errors.Is(err, zklease.ErrSharedID) || !errors.As(err, &se) || se.Worker != 1 || len(se.Others) != 1 || se.Others[0] != hand {
		t.Fatalf("claim whose new sequence %s names: %v, want a *SharedIDError for worker 1", hand, err)
	}
	if kids, _, err := c.Children(dir); err != nil || len(kids) != 1 || kids[0] != hand {
		t.Fatalf("forever after the refusal: %v %v, want only %s", kids, err, hand)
	}
	l := acquire(t, src)
	if l.Worker() == 1 {
		t.Fatalf("the second claim got worker 1, which %s names", hand)
	}
}

// TestNodeNamingAnIDInOtherDigitsIsSeenAsThatID: Leaf's Integer.parseInt
// reads "+0", "0" and other scripts' digits ("٠", Arabic-Indic zero) as 0.
// A node made by hand for another address that Leaf reads as an id in use
// refuses the claims of that id (its holder's next start included), and
// List shows both nodes sharing it.
func TestNodeNamingAnIDInOtherDigitsIsSeenAsThatID(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	c := connect(t, server)
	for label, suffix := range map[string]string{"arabic-indic": "٠", "plus sign": "+0", "ten digits then more": "0000000000-x"} {
		t.Run(label, func(t *testing.T) {
			name := uniqueName(t, server)
			cfg := zklease.Config{Servers: []string{server}, Name: name, Addr: "10.24.0.1:1"}
			src := newSource(t, cfg)
			a := acquire(t, src)
			if a.Worker() != 0 {
				t.Fatalf("first address got worker %d, want 0", a.Worker())
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			hand := "10.24.0.2:1-" + suffix
			data := fmt.Sprintf(`{"ip":"10.24.0.2","port":"1","timestamp":%d}`, time.Now().UnixMilli())
			if _, err := c.Create("/snowflake/"+name+"/forever/"+hand, []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			if err := claimErr(t, src); !errors.Is(err, zklease.ErrSharedID) {
				t.Fatalf("the holder's next claim with %s beside its node: %v, want ErrSharedID", hand, err)
			}
			ws, err := src.List(context.Background())
			if err != nil || len(ws) != 2 {
				t.Fatalf("List: %+v %v", ws, err)
			}
			for _, w := range ws {
				if w.ID != 0 || w.Err == nil {
					t.Errorf("List row %+v: want id 0 with an error", w)
				}
				if w.Node == hand && !errors.Is(w.Err, zklease.ErrUnreadableNode) {
					t.Errorf("hand-made node's row: %v, want ErrUnreadableNode", w.Err)
				}
				if w.Node != hand && !errors.Is(w.Err, zklease.ErrSharedID) {
					t.Errorf("ZooKeeper's node's row: %v, want ErrSharedID", w.Err)
				}
			}
		})
	}
}

// TestCacheFileWithoutAPositiveTimestampIsRefused: a cache file whose
// timestamp is 0 or negative (or whose validity is) says nothing about the
// id's last use; with ZooKeeper unreachable it is refused, never read as
// an id never used.
func TestCacheFileWithoutAPositiveTimestampIsRefused(t *testing.T) {
	ts := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	for label, content := range map[string]string{
		"timestamp 0":        "workerID=7\ntimestamp=0\nname=n\naddress=10.25.0.1:1\nclosed=true\nvalidityMs=3000\n",
		"negative timestamp": "workerID=7\ntimestamp=-1\nname=n\naddress=10.25.0.1:1\nclosed=true\nvalidityMs=3000\n",
		"validity 0":         "workerID=7\ntimestamp=" + ts + "\nname=n\naddress=10.25.0.1:1\nclosed=false\nvalidityMs=0\n",
		"negative worker":    "workerID=-1\ntimestamp=" + ts + "\nname=n\naddress=10.25.0.1:1\nclosed=true\nvalidityMs=3000\n",
	} {
		t.Run(label, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "workerID.properties")
			if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := zklease.New(zklease.Config{Servers: []string{deadServer(t)}, Name: "n", Addr: "10.25.0.1:1",
				CacheFile: file, ConnectTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			l, err := s.Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
			if err == nil {
				l.Close()
				t.Fatalf("cache file used: worker %d, LastUsed %v", l.Worker(), l.LastUsed())
			}
			if !errors.Is(err, zklease.ErrCacheFile) {
				t.Fatalf("Acquire: %v, want ErrCacheFile", err)
			}
		})
	}
}
