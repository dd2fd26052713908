package zklease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// TestClaimantsGetDistinctIDs: 64 processes with distinct ip:port claiming
// at once get 64 distinct worker ids, each its node's sequence, and List
// shows them held, then released. Each lease is a session of its own: 64
// from one address exceed the shared server's maxClientCnxns (60), so the
// test runs on a private server without that limit.
func TestClaimantsGetDistinctIDs(t *testing.T) {
	server := startPrivateZK(t).addr
	name := uniqueName(t, server)
	const n = 64
	leases := make([]keygen.Lease, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := zklease.New(zklease.Config{Servers: []string{server}, Name: name,
				Addr: fmt.Sprintf("10.9.%d.%d:8080", i/10, i%10), SessionTimeout: testSessionTimeout})
			if err != nil {
				errs[i] = err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			leases[i], errs[i] = s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
		}()
	}
	wg.Wait()
	seen := map[int64]int{}
	for i, l := range leases {
		if errs[i] != nil {
			t.Fatalf("claimant %d: %v", i, errs[i])
		}
		t.Cleanup(func() { l.Close() })
		if j, dup := seen[l.Worker()]; dup {
			t.Fatalf("claimants %d and %d both got worker %d", j, i, l.Worker())
		}
		seen[l.Worker()] = i
	}
	ws, err := zklease.List(context.Background(), zklease.Config{Servers: []string{server}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if names, err := zklease.Names(context.Background(), zklease.Config{Servers: []string{server}}); err != nil || !slices.Contains(names, name) {
		t.Fatalf("Names: %v %v, want %q among them", names, err, name)
	}
	if len(ws) != n {
		t.Fatalf("List: %d nodes, want %d", len(ws), n)
	}
	for _, w := range ws {
		i, ok := seen[w.ID]
		if !ok || !w.Held || w.Leaf || w.Closed || w.Err != nil || w.Addr != fmt.Sprintf("10.9.%d.%d:8080", i/10, i%10) {
			t.Fatalf("List: %+v (claimant %d)", w, i)
		}
		if w.Node != fmt.Sprintf("%s-%010d", w.Addr, w.ID) {
			t.Fatalf("node %q is not Leaf's ip:port-%%010d for worker %d", w.Node, w.ID)
		}
	}
	for _, l := range leases {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ws, err = zklease.List(context.Background(), zklease.Config{Servers: []string{server}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Held || !w.Closed {
			t.Fatalf("after Close, List: %+v, want released cleanly", w)
		}
	}
}

// TestLeafNodeAndGoProcessNeverShareAnID: a node Leaf created keeps its id:
// a Go process with another ip:port gets another id, and one with the
// Leaf node's ip:port reuses that node's id, writing data Leaf can read.
func TestLeafNodeAndGoProcessNeverShareAnID(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	c := connect(t, server)
	past := time.Now().Add(-time.Minute).UnixMilli()
	leafNode, leafID := createLeafNode(t, c, name, "10.1.1.1", "8080", past)

	other := acquire(t, newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.1.1.2:8080"}))
	if other.Worker() == leafID {
		t.Fatalf("a Go process with another ip:port got the Leaf node's worker %d", leafID)
	}
	// A second Leaf process, created after the Go one, gets yet another.
	_, leafID2 := createLeafNode(t, c, name, "10.1.1.3", "8080", past)
	if leafID2 == other.Worker() || leafID2 == leafID {
		t.Fatalf("Leaf's second node got worker %d, Go has %d, Leaf's first %d", leafID2, other.Worker(), leafID)
	}

	same := acquire(t, newSource(t, zklease.Config{Servers: []string{server}, Name: name, IP: "10.1.1.1", Port: "8080"}))
	if same.Worker() != leafID {
		t.Fatalf("the Go process with the Leaf node's ip:port got worker %d, want the node's %d", same.Worker(), leafID)
	}
	// A node without zklease's record (Leaf's): keys may carry times up to
	// Leaf's report interval and a second past its timestamp.
	if want := time.UnixMilli(past).Add(zklease.LeafReportInterval + time.Second); same.LastUsed().Before(want) {
		t.Fatalf("LastUsed %v, want at least %v (the Leaf node's timestamp and its report slack)", same.LastUsed(), want)
	}

	// The data the Go process wrote is Leaf's Endpoint JSON, nothing more
	// (Leaf's ObjectMapper fails on unknown properties), with a fresh time.
	data, _, err := c.Get("/snowflake/" + name + "/forever/" + leafNode)
	if err != nil {
		t.Fatal(err)
	}
	var ep struct {
		IP        string `json:"ip"`
		Port      string `json:"port"`
		Timestamp int64  `json:"timestamp"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ep); err != nil {
		t.Fatalf("node data %s is not Leaf's Endpoint: %v", data, err)
	}
	if ep.IP != "10.1.1.1" || ep.Port != "8080" || ep.Timestamp <= past || !strings.HasPrefix(string(data), `{"ip":"10.1.1.1","port":"8080","timestamp":`) {
		t.Fatalf("node data %s after the Go process's report", data)
	}
	// List tells the Leaf-only node from the ones a Go process holds.
	ws, err := zklease.List(context.Background(), zklease.Config{Servers: []string{server}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, w := range ws {
		held[w.Addr] = w.Held
		if w.Addr == "10.1.1.3:8080" && (!w.Leaf || w.Held || w.ID != leafID2 || !w.Timestamp.Equal(time.UnixMilli(past))) {
			t.Fatalf("List: Leaf's node %+v", w)
		}
	}
	if len(ws) != 3 || !held["10.1.1.1:8080"] || !held["10.1.1.2:8080"] || held["10.1.1.3:8080"] {
		t.Fatalf("List: %+v", ws)
	}
	kids, _, err := c.Children("/snowflake/" + name + "/forever")
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 3 {
		t.Fatalf("forever has %v, want the two Leaf nodes and the Go process's only (zklease writes nothing else there)", kids)
	}
}

// TestSameAddrWaitsForTheHolderAndNeverHoldsTheIDAtOnce: a second process
// with the same ip:port gets no id while the first holds it (ErrHeld when
// its context ends), and the same id, without waiting for time to pass,
// once the first closed cleanly.
func TestSameAddrWaitsForTheHolderAndNeverHoldsTheIDAtOnce(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	cfg := zklease.Config{Servers: []string{server}, Name: name, Addr: "10.2.2.2:9090"}
	firstSrc := newSource(t, cfg)
	first := acquire(t, firstSrc)
	// The same Source again: at once, it would wait for itself.
	start := time.Now()
	if _, err := firstSrc.Acquire(context.Background(), keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax}); !errors.Is(err, zklease.ErrHeld) || time.Since(start) > time.Second {
		t.Fatalf("a second Acquire of one Source: %v after %v, want ErrHeld at once", err, time.Since(start))
	}
	last := time.Now().Add(50 * time.Millisecond)
	first.Track(func() time.Time { return last })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	second := newSource(t, cfg)
	if l, err := second.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax}); !errors.Is(err, zklease.ErrHeld) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("second Acquire while the first holds the ip:port: %v, want ErrHeld", err)
	}

	got := make(chan keygen.Lease, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l, err := second.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(500 * time.Millisecond)
	select {
	case l := <-got:
		t.Fatalf("second got worker %v while the first still holds it", l)
	default:
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	closedAt := time.Now()
	l := <-got
	if l == nil {
		t.FailNow()
	}
	defer l.Close()
	if l.Worker() != first.Worker() {
		t.Fatalf("second got worker %d, want the ip:port's %d", l.Worker(), first.Worker())
	}
	// A clean close: the next holder starts after the final report (at
	// or after the tracked last issue), without the lease's validity added.
	if l.LastUsed().Before(last) || l.LastUsed().After(closedAt.Add(time.Millisecond)) {
		t.Fatalf("LastUsed %v, want between the first's last issue %v and its close %v", l.LastUsed(), last, closedAt)
	}
}

// TestRestartWithClockBehindStoredTimestampIsRefused: a process whose clock
// reads before its node's timestamp is refused, as Leaf refuses it; once
// the clock passes the timestamp it starts.
func TestRestartWithClockBehindStoredTimestampIsRefused(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	cfg := zklease.Config{Servers: []string{server}, Name: name, Addr: "10.3.3.3:7070"}
	s := newSource(t, cfg)
	t0 := time.Now().Add(time.Hour)
	clk := keygentest.NewClock(t0)
	ctx := context.Background()
	l, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	worker := l.Worker()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	clk.Set(t0.Add(-2 * time.Second)) // the clock stepped back after the restart
	_, err = s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clk})
	var cb *zklease.ClockBehindError
	if !errors.Is(err, zklease.ErrClockBehind) || !errors.As(err, &cb) {
		t.Fatalf("Acquire with the clock behind the node: %v, want a *ClockBehindError", err)
	}
	if cb.Stored.Before(t0) || !cb.Now.Equal(t0.Add(-2*time.Second)) || !strings.Contains(cb.Node, "10.3.3.3:7070-") {
		t.Fatalf("ClockBehindError %+v", cb)
	}

	// The real clock, an hour behind too.
	if _, err = s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax}); !errors.Is(err, zklease.ErrClockBehind) {
		t.Fatalf("Acquire on the wall clock, an hour behind the node: %v, want ErrClockBehind", err)
	}

	clk.Set(t0.Add(time.Second))
	l, err = s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax, Clock: clk})
	if err != nil {
		t.Fatalf("Acquire once the clock passed the node's timestamp: %v", err)
	}
	defer l.Close()
	if l.Worker() != worker || l.LastUsed().Before(t0) {
		t.Fatalf("worker %d last used %v, want %d, at or after %v", l.Worker(), l.LastUsed(), worker, t0)
	}
}

// TestWorkerAboveMaxWorkerIsAnError: a node whose sequence is above the
// layout's largest worker id is refused, never truncated, and a node
// created for it is removed.
func TestWorkerAboveMaxWorkerIsAnError(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	c := connect(t, server)
	createLeafNode(t, c, name, "10.4.4.1", "1", 0) // worker 0
	createLeafNode(t, c, name, "10.4.4.2", "1", 0) // worker 1
	ctx := context.Background()

	// A new ip:port would be worker 2; SNOWFLAKE_JS-sized layouts with 2
	// workers (0..1) cannot hold it.
	s := newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.4.4.3:1"})
	if _, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "TEST", MaxWorker: 1}); !errors.Is(err, zklease.ErrWorkerOutOfRange) {
		t.Fatalf("Acquire of worker 2 for MaxWorker 1: %v, want ErrWorkerOutOfRange", err)
	}
	kids, _, err := c.Children("/snowflake/" + name + "/forever")
	if err != nil || len(kids) != 2 {
		t.Fatalf("forever after the refusal: %v %v, want only the two Leaf nodes", kids, err)
	}
	// An existing node above the range.
	s = newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.4.4.2:1"})
	if _, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "TEST", MaxWorker: 0}); !errors.Is(err, zklease.ErrWorkerOutOfRange) {
		t.Fatalf("Acquire of existing worker 1 for MaxWorker 0: %v, want ErrWorkerOutOfRange", err)
	}
}

// TestLeafSnowflakeKeysDecodeToTheZooKeeperWorkerID: LEAF_SNOWFLAKE built
// with the source issues keys whose worker field is the node's sequence,
// with Leaf's layout and epoch.
func TestLeafSnowflakeKeysDecodeToTheZooKeeperWorkerID(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	c := connect(t, server)
	for i := range 5 { // the Go process's id is not 0
		createLeafNode(t, c, name, fmt.Sprintf("10.5.5.%d", i), "80", 0)
	}
	s := newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.5.5.99:80"})
	g, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(s))
	if err != nil {
		t.Fatal(err)
	}
	defer g.(interface{ Close() error }).Close()
	before := time.Now()
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var worker int64 = -1
	for _, w := range ws {
		if w.Addr == "10.5.5.99:80" {
			worker = w.ID
		}
	}
	if worker != 5 {
		t.Fatalf("the Go process's node is worker %d, want 5 (after Leaf's 0..4)", worker)
	}
	// Leaf's layout by hand: (ms - 1288834974657) << 22 | worker << 12 | sequence.
	ms := id>>22 + 1288834974657
	if got := id >> 12 & 1023; got != worker {
		t.Fatalf("key %d has worker %d, want the node's %d", id, got, worker)
	}
	if t0 := time.UnixMilli(ms); t0.Before(before.Add(-time.Second)) || t0.After(time.Now().Add(time.Second)) {
		t.Fatalf("key %d decodes to %v with Leaf's epoch, not about now", id, t0)
	}
	p, err := g.(keygen.Decomposer).Decompose(id)
	if err != nil || p.Worker != worker || p.Time.UnixMilli() != ms {
		t.Fatalf("Decompose(%d) = %+v, %v", id, p, err)
	}
}

// TestConfigRefusesWhatLeafCannotRead: node names Leaf would misread are
// refused by New; the zero Config is valid.
func TestConfigRefusesWhatLeafCannotRead(t *testing.T) {
	for _, cfg := range []zklease.Config{
		{Addr: "my-host:80"},
		{IP: "10.0.0.1", Port: "80-1"},
		{Name: "a/b"},
		{Addr: "10.0.0.1"},
		{Addr: "10.0.0.1:80", SessionTimeout: 4 * time.Second, ReportInterval: 2 * time.Second},
	} {
		if _, err := zklease.New(cfg); !errors.Is(err, zklease.ErrInvalidConfig) {
			t.Errorf("New(%+v): %v, want ErrInvalidConfig", cfg, err)
		}
	}
	s, err := zklease.New(zklease.Config{IP: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != zklease.DefaultName || s.Addr() != "10.0.0.1:0" {
		t.Fatalf("defaults: name %q addr %q", s.Name(), s.Addr())
	}
}

// TestNodeDataIsWhatLeafsJacksonReadsAndWrites: the data zklease writes to
// a node is read by Jackson into Leaf's Endpoint shape, failing on unknown
// properties as Leaf's ObjectMapper does, and Jackson writes it back byte
// for byte: Leaf processes read zklease's nodes, and zklease writes what
// Leaf writes. Needs java and Jackson's jars (Debian's ZooKeeper brings
// them); skipped without, failed under SHARDKEY_REQUIRE_DB=1.
func TestNodeDataIsWhatLeafsJacksonReadsAndWrites(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	jars := []string{"/usr/share/java/jackson-databind.jar", "/usr/share/java/jackson-core.jar", "/usr/share/java/jackson-annotations.jar"}
	java, err := exec.LookPath("java")
	for _, j := range jars {
		if err == nil {
			_, err = os.Stat(j)
		}
	}
	if err != nil {
		if os.Getenv("SHARDKEY_REQUIRE_DB") == "1" {
			t.Fatalf("the Jackson check needs java and %v: %v", jars, err)
		}
		t.Skipf("the Jackson check needs java and %v: %v", jars, err)
	}
	name := uniqueName(t, server)
	l := acquire(t, newSource(t, zklease.Config{Servers: []string{server}, Name: name, Addr: "10.13.0.1:8080"}))
	c := connect(t, server)
	data, _, err := c.Get(fmt.Sprintf("/snowflake/%s/forever/10.13.0.1:8080-%010d", name, l.Worker()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(java, "-cp", strings.Join(jars, ":"), filepath.Join("testdata", "EndpointCheck.java"), string(data)).CombinedOutput()
	if err != nil {
		t.Fatalf("Jackson cannot read the node data %s as Leaf's Endpoint: %v\n%s", data, err, out)
	}
	if string(out) != string(data) {
		t.Fatalf("Jackson writes %s, zklease wrote %s", out, data)
	}
}
