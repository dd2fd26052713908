package zklease_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// leafMax is LEAF_SNOWFLAKE's largest worker id.
const leafMax = 1023

// testSessionTimeout is the shortest session the shared server (tickTime
// 2000 ms) grants: twice its tick.
const testSessionTimeout = 4 * time.Second

var nonName = regexp.MustCompile(`[^A-Za-z0-9]+`)

// uniqueName is a Leaf name of the test's own, removed from the server when
// the test ends (the shared server serves several packages at once).
func uniqueName(t *testing.T, server string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "zklease-test." + strings.Trim(nonName.ReplaceAllString(t.Name(), "."), ".") + "." + hex.EncodeToString(b)
	t.Cleanup(func() { removeTree(t, server, "/snowflake/"+name) })
	return name
}

// connect opens a plain client session for the test.
func connect(t *testing.T, server string) *zk.Conn {
	t.Helper()
	c, ev, err := zk.Connect([]string{server}, testSessionTimeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.State == zk.StateHasSession {
				t.Cleanup(c.Close)
				return c
			}
		case <-deadline:
			c.Close()
			t.Fatalf("no ZooKeeper session with %s", server)
		}
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func removeTree(t *testing.T, server, path string) {
	c, ev, err := zk.Connect([]string{server}, testSessionTimeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		return
	}
	defer c.Close()
	timeout := time.After(5 * time.Second)
	for ok := false; !ok; {
		select {
		case e := <-ev:
			ok = e.State == zk.StateHasSession
		case <-timeout:
			return
		}
	}
	var rm func(p string)
	rm = func(p string) {
		kids, _, err := c.Children(p)
		if err != nil {
			return
		}
		for _, k := range kids {
			rm(p + "/" + k)
		}
		if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Logf("cleanup %s: %v", p, err)
		}
	}
	rm(path)
}

// newSource builds a Source for the test, failing it on error.
func newSource(t *testing.T, cfg zklease.Config) *zklease.Source {
	t.Helper()
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = testSessionTimeout
	}
	s, err := zklease.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// acquire claims a LEAF_SNOWFLAKE-sized worker id, closing it when the
// test ends.
func acquire(t *testing.T, s *zklease.Source) keygen.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := s.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// createLeafNode creates a node exactly as Leaf's SnowflakeZookeeperHolder
// does: parents as needed, then a persistent sequential node
// {ip}:{port}- under /snowflake/{name}/forever whose data is Jackson's
// Endpoint JSON. It returns the node's name and worker id.
func createLeafNode(t *testing.T, c *zk.Conn, name, ip, port string, ts int64) (string, int64) {
	t.Helper()
	dir := "/snowflake/" + name + "/forever"
	for _, p := range []string{"/snowflake", "/snowflake/" + name, dir} {
		if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	data := `{"ip":"` + ip + `","port":"` + port + `","timestamp":` + strconv.FormatInt(ts, 10) + `}`
	p, err := c.Create(dir+"/"+ip+":"+port+"-", []byte(data), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	node := p[strings.LastIndexByte(p, '/')+1:]
	seq := node[strings.LastIndexByte(node, '-')+1:]
	if len(seq) != 10 {
		t.Fatalf("sequence suffix %q is not ZooKeeper's 10 digits", seq)
	}
	id, err := strconv.ParseInt(seq, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return node, id
}

// privateZK is a ZooKeeper server of the test's own, on a free port with
// a temporary data directory, which the test may stop and start again.
type privateZK struct {
	t       *testing.T
	addr    string
	port    int
	dataDir string
	tick    string // ms; sessions may last 2 to 20 ticks
	mu      sync.Mutex
	cmd     *exec.Cmd
}

const (
	zkJar     = "/usr/share/java/zookeeper.jar"
	zkConfDir = "/etc/zookeeper/conf"
)

// startPrivateZK starts the server with a 500 ms tick (sessions of 1 s to
// 10 s) and no limit on connections from one address (the shared server
// keeps ZooKeeper's 60, fewer than 64 claimants' sessions), skipping the test (failing it under SHARDKEY_REQUIRE_DB=1) when
// Java or ZooKeeper's jar is missing.
func startPrivateZK(t *testing.T) *privateZK {
	t.Helper()
	dbtest.ZooKeeper(t) // skips under -short, as the shared server's tests
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = os.Stat(zkJar)
	}
	if err != nil {
		if os.Getenv("SHARDKEY_REQUIRE_DB") == "1" {
			t.Fatalf("a private ZooKeeper needs java and %s: %v", zkJar, err)
		}
		t.Skipf("a private ZooKeeper needs java and %s: %v", zkJar, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	z := &privateZK{t: t, addr: "127.0.0.1:" + strconv.Itoa(port), port: port, dataDir: t.TempDir(), tick: "500"}
	z.java(java)
	t.Cleanup(z.stop)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(z.dataDir, "server.log"))
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("private ZooKeeper's log (end):\n%s", b)
		}
	})
	return z
}

func (z *privateZK) java(java string) {
	z.t.Helper()
	log, err := os.OpenFile(filepath.Join(z.dataDir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		z.t.Fatal(err)
	}
	cmd := exec.Command(java, "-Xmx128m", "-cp", zkConfDir+":"+zkJar,
		"-Dzookeeper.admin.enableServer=false",
		"org.apache.zookeeper.server.ZooKeeperServerMain", strconv.Itoa(z.port), z.dataDir, z.tick, "0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		z.t.Fatal(err)
	}
	log.Close()
	z.mu.Lock()
	z.cmd = cmd
	z.mu.Unlock()
	// The port opens before the server serves sessions: wait for one.
	c, ev, err := zk.Connect([]string{z.addr}, 2*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		z.t.Fatal(err)
	}
	defer c.Close()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.State == zk.StateHasSession {
				return
			}
		case <-deadline:
			b, _ := os.ReadFile(filepath.Join(z.dataDir, "server.log"))
			z.t.Fatalf("private ZooKeeper on %s did not start:\n%s", z.addr, b)
		}
	}
}

// stop kills the server (as a crash would) and waits for it.
func (z *privateZK) stop() {
	z.mu.Lock()
	cmd := z.cmd
	z.cmd = nil
	z.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// restart starts the server again on the same port and data.
func (z *privateZK) restart() {
	z.t.Helper()
	java, _ := exec.LookPath("java")
	z.java(java)
}

// restartWithTick starts the server again with another tick (so other
// session timeout bounds) on the same port and data.
func (z *privateZK) restartWithTick(ms int) {
	z.t.Helper()
	z.tick = strconv.Itoa(ms)
	z.restart()
}
