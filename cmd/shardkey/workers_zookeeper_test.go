package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// TestWorkersListShowsLeafNodesAndTheIDsZkleaseHolds: under one Leaf
// name, a node Leaf made and two ids claimed through zklease (two
// ip:ports) are listed, by id, each with its ip:port and node; the
// zklease ones held, Leaf's marked leaf; once a zklease lease is closed
// its id is listed not held, still its ip:port's.
func TestWorkersListShowsLeafNodesAndTheIDsZkleaseHolds(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := testSpace(t)
	conn := zkConnect(t, server)
	t.Cleanup(func() { zkRemoveTree(t, conn, "/snowflake/"+name) })

	// A node as Leaf writes it: persistent sequential, Leaf's endpoint JSON.
	leafTS := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	leafNode := zkCreateLeafNode(t, conn, name, "10.9.8.1", "8080", leafTS)

	var sources []*zklease.Source
	for _, addr := range []string{"10.9.8.2:8080", "10.9.8.3:8080"} {
		src, err := zklease.New(zklease.Config{Servers: []string{server}, Name: name, Addr: addr})
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, src)
	}
	leases := append(claim(t, sources[0], 1), claim(t, sources[1], 1)...)

	args := []string{"-backend", "zookeeper", "-servers", server, "-name", name}
	rows := listWorkers(t, args...)
	if len(rows) != 3 {
		t.Fatalf("listed %d ids, want 3 (one Leaf node, two zklease): %+v", len(rows), rows)
	}
	dir := "/snowflake/" + name + "/forever/"
	leafRow, ok := rows[leafNode.worker]
	if !ok || leafRow.Held || !leafRow.Leaf || leafRow.Owner != "10.9.8.1:8080" || leafRow.Key != dir+leafNode.name ||
		leafRow.LastUsed != leafTS.UTC().Format(time.RFC3339Nano) {
		t.Errorf("Leaf's node %s (worker %d): %+v", leafNode.name, leafNode.worker, leafRow)
	}
	for i, l := range leases {
		r := rows[l.Worker()]
		addr := sources[i].Addr()
		if !r.Held || r.Leaf || r.Owner != addr || !strings.HasPrefix(r.Key, dir+addr+"-") || r.Holder == "" {
			t.Errorf("zklease id %d of %s: %+v", l.Worker(), addr, r)
		}
		if l.Worker() == leafNode.worker {
			t.Errorf("zklease got worker %d, the Leaf node's", l.Worker())
		}
	}
	table := listWorkersText(t, args...)
	if f := tableRow(t, table, leafNode.worker); f[1] != "leaf" || f[2] != "10.9.8.1:8080" || f[len(f)-1] != dir+leafNode.name {
		t.Errorf("Leaf's row %q in\n%s", f, table)
	}
	for i, l := range leases {
		if f := tableRow(t, table, l.Worker()); f[1] != "true" || f[2] != sources[i].Addr() {
			t.Errorf("worker %d: row %q in\n%s", l.Worker(), f, table)
		}
	}

	if err := leases[0].Close(); err != nil {
		t.Fatal(err)
	}
	rows = listWorkers(t, args...)
	if r := rows[leases[0].Worker()]; r.Held || !r.Closed || r.Owner != sources[0].Addr() {
		t.Errorf("worker %d after Close: %+v (want not held, closed, still %s's)", leases[0].Worker(), r, sources[0].Addr())
	}
	// -all: every Leaf name (other tests' too, on the shared server); this
	// test's rows carry its name.
	var mine []int64
	for _, r := range listWorkersAll(t, "-backend", "zookeeper", "-servers", server, "-all") {
		if r.Namespace == name {
			mine = append(mine, r.Worker)
		}
	}
	if len(mine) != 3 || !slices.Contains(mine, leafNode.worker) {
		t.Errorf("-all: name %s has ids %v, want 3 with the Leaf node's %d", name, mine, leafNode.worker)
	}
	// A name nobody used lists nothing.
	if other := listWorkers(t, "-backend", "zookeeper", "-servers", server, "-name", name+"-none"); len(other) != 0 {
		t.Errorf("unused name: %+v", other)
	}
}

// TestWorkersListOnUnreachableZooKeeperIsAnError: a dead server is exit 1
// naming ZooKeeper and the address once -timeout passes.
func TestWorkersListOnUnreachableZooKeeperIsAnError(t *testing.T) {
	dbtest.SkipShort(t, "ZooKeeper")
	dead := deadAddr(t)
	checkUnreachable(t, "ZooKeeper at "+dead+":", nil, "-backend", "zookeeper", "-servers", dead, "-name", "app")
}

type zkQuiet struct{}

func (zkQuiet) Printf(string, ...any) {}

// zkConnect opens a session to server, closed when the test ends.
func zkConnect(t *testing.T, server string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{server}, 10*time.Second, zk.WithLogger(zkQuiet{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn
			}
		case <-ctx.Done():
			t.Fatalf("no ZooKeeper session with %s", server)
		}
	}
}

// leafNode is a forever node created as Leaf does.
type leafNode struct {
	name   string
	worker int64
}

// zkCreateLeafNode creates /snowflake/{name}/forever/{ip}:{port}-{seq} as
// Leaf's Curator does (parents persistent, the node persistent
// sequential, the endpoint JSON as data).
func zkCreateLeafNode(t *testing.T, conn *zk.Conn, name, ip, port string, ts time.Time) leafNode {
	t.Helper()
	for _, p := range []string{"/snowflake", "/snowflake/" + name, "/snowflake/" + name + "/forever"} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	data, _ := json.Marshal(map[string]any{"ip": ip, "port": port, "timestamp": ts.UnixMilli()})
	path, err := conn.Create(fmt.Sprintf("/snowflake/%s/forever/%s:%s-", name, ip, port), data, zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	node := path[strings.LastIndexByte(path, '/')+1:]
	var seq int64
	if _, err := fmt.Sscanf(node[strings.LastIndexByte(node, '-')+1:], "%d", &seq); err != nil {
		t.Fatal(err)
	}
	return leafNode{name: node, worker: seq}
}

// zkRemoveTree deletes path and everything under it (the test's nodes on
// the shared server).
func zkRemoveTree(t *testing.T, conn *zk.Conn, path string) {
	kids, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return
	}
	if err != nil {
		t.Logf("remove %s: %v", path, err)
		return
	}
	for _, k := range kids {
		zkRemoveTree(t, conn, path+"/"+k)
	}
	if err := conn.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Logf("remove %s: %v", path, err)
	}
}
