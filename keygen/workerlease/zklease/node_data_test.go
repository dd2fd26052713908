package zklease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// TestNodeDataWithoutATimestampIsRefused: a forever node whose data is not
// a Leaf Endpoint with a timestamp (null, {}, the timestamp missing,
// misspelled or negative: a hand edit, another tool) says nothing about
// when its id was last used. A claim of that node must be refused, not
// read as "never used" (timestamp 0).
func TestNodeDataWithoutATimestampIsRefused(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	c := connect(t, server)
	for label, data := range map[string]string{
		"null":         `null`,
		"empty object": `{}`,
		"no timestamp": `{"ip":"10.7.7.7","port":"80"}`,
		"misspelled":   `{"ip":"10.7.7.7","port":"80","timeStamp":1893456000000}`,
		"negative":     `{"ip":"10.7.7.7","port":"80","timestamp":-1}`,
	} {
		t.Run(label, func(t *testing.T) {
			name := uniqueName(t, server)
			node, _ := createLeafNode(t, c, name, "10.7.7.7", "80", time.Now().UnixMilli())
			if _, err := c.Set("/snowflake/"+name+"/forever/"+node, []byte(data), -1); err != nil {
				t.Fatal(err)
			}
			s := newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.7.7.7:80"})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			l, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
			if err == nil {
				defer l.Close()
				t.Fatalf("node data %s accepted: worker %d, LastUsed %v", data, l.Worker(), l.LastUsed())
			}
		})
	}
}

// TestTwoNodesNamingOneSequenceNeverShareAnID: an operator (or a script)
// creates a node by hand for a second address with the sequence of an id
// in use, spelled with ZooKeeper's 10 digits or not (the package
// documentation's reclaim recipe, misapplied). ZooKeeper's sequence never
// gives out that id twice, but the hand-made node does: a process of the
// second address must not get an id another node already names.
func TestTwoNodesNamingOneSequenceNeverShareAnID(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	c := connect(t, server)
	for label, spell := range map[string]string{"ten digits": "%010d", "unpadded": "%d", "plus sign": "+%d"} {
		t.Run(label, func(t *testing.T) {
			name := uniqueName(t, server)
			a := acquire(t, newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.8.8.1:80"}))
			dup := fmt.Sprintf("/snowflake/%s/forever/10.8.8.2:80-"+spell, name, a.Worker())
			data := fmt.Sprintf(`{"ip":"10.8.8.2","port":"80","timestamp":%d}`, time.Now().Add(-time.Hour).UnixMilli())
			if _, err := c.Create(dup, []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			s := newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.8.8.2:80"})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			b, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
			if err != nil {
				t.Logf("refused: %v", err)
				return
			}
			defer b.Close()
			if b.Worker() == a.Worker() {
				t.Fatalf("10.8.8.2:80 got worker %d from %s while 10.8.8.1:80 holds it", b.Worker(), dup)
			}
		})
	}
}
