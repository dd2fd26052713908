package etcdlease

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// etcdClient returns a client of the etcd server at addr, closed when the
// test ends.
func etcdClient(t testing.TB, addr string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: 3 * time.Second,
		Logger:      zap.NewNop(), // the cut and restart tests make it log every retry
		// gRPC's default reconnect backoff grows to 120s; after a cut or a
		// restart the holder must reach etcd before etcd expires its lease
		// to keep it, so bound the backoff as a deployment should.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		})},
	})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// sharedEtcd returns a client of the shared etcd server (skipping, or
// failing under SHARDKEY_REQUIRE_DB=1, when none answers).
func sharedEtcd(t testing.TB) *clientv3.Client {
	t.Helper()
	return etcdClient(t, dbtest.Etcd(t))
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// testNamespace is a namespace no other test (of any package, on the
// shared server) uses; its keys are deleted when the test ends.
func testNamespace(t testing.TB, cli *clientv3.Client) string {
	t.Helper()
	ns := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(ns) > 40 {
		ns = ns[:40]
	}
	ns += "-" + randomHex(4)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = cli.Delete(ctx, testPrefix+ns+"/", clientv3.WithPrefix())
	})
	return ns
}

// testPrefix keeps the tests' keys apart from anything else on the server.
const testPrefix = "/shardkey-test/etcdlease/"

// newSource returns a Source in namespace ns with cfg's other settings.
func newSource(t testing.TB, cli *clientv3.Client, ns string, cfg Config) *Source {
	t.Helper()
	cfg.Client, cfg.Prefix, cfg.Namespace = cli, testPrefix, ns
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// fastLease is a lease setting that loses a lease within seconds: TTL 2s
// (etcd's minimum with the default election timeout), valid for 1.5s
// after each keep-alive, renewed every 0.5s.
var fastLease = Config{TTL: 2 * time.Second, SafeGuard: 500 * time.Millisecond}

// onlyWorker asks src for worker ids up to max only, so that a claimant
// with a real generator contends for the lowest ids.
type onlyWorker struct {
	src keygen.WorkerSource
	max int64
}

func (o onlyWorker) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	info.MaxWorker = min(info.MaxWorker, o.max)
	return o.src.Acquire(ctx, info)
}

// newGenerator is a SNOWFLAKE generator of its own (as in another
// process: it shares no sequence state) with its worker id from src.
func newGenerator(t testing.TB, src keygen.WorkerSource, opts ...keygen.Option) (keygen.IDGenerator, error) {
	t.Helper()
	opts = append([]keygen.Option{keygen.WithWorkerSource(src), keygen.WithSequenceScope(keygen.NewSequenceScope())}, opts...)
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, opts...)
	if err == nil {
		t.Cleanup(func() { closeGen(g) })
	}
	return g, err
}

func closeGen(g keygen.IDGenerator) error {
	if c, ok := g.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// issuer calls NextID about every millisecond until stopped, keeping the
// keys and the time of the first refusal with keygen.ErrLeaseLost.
type issuer struct {
	g    keygen.IDGenerator
	stop chan struct{}
	done chan struct{}

	mu                 sync.Mutex
	keys               []int64
	lastKey            time.Time // wall time just after the last key was issued
	refusedAt          time.Time // wall time of the first ErrLeaseLost
	issuedAfterRefusal int
	otherErr           error
}

func startIssuer(g keygen.IDGenerator) *issuer {
	is := &issuer{g: g, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(is.done)
		for {
			select {
			case <-is.stop:
				return
			case <-time.After(time.Millisecond):
			}
			id, err := g.NextID(context.Background())
			now := time.Now()
			is.mu.Lock()
			switch {
			case err == nil:
				is.keys = append(is.keys, id)
				is.lastKey = now
				if !is.refusedAt.IsZero() {
					is.issuedAfterRefusal++
				}
			case errors.Is(err, keygen.ErrLeaseLost):
				if is.refusedAt.IsZero() {
					is.refusedAt = now
				}
			case is.otherErr == nil:
				is.otherErr = err
			}
			is.mu.Unlock()
		}
	}()
	return is
}

// mark forgets refusals so far: the checks that follow concern only
// refusals from now on (a loaded machine may delay renewals before).
func (is *issuer) mark() {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.refusedAt, is.issuedAfterRefusal = time.Time{}, 0
}

// halt stops the issuer and waits for it.
func (is *issuer) halt() {
	select {
	case <-is.stop:
	default:
		close(is.stop)
	}
	<-is.done
}

// refused returns the time of the first refusal, zero if none yet.
func (is *issuer) refused() time.Time {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.refusedAt
}

func (is *issuer) issued() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return len(is.keys)
}

// waitFor polls cond every 20ms until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertDistinct fails if any key appears twice across the sets.
func assertDistinct(t testing.TB, sets ...[]int64) int {
	t.Helper()
	seen := map[int64]int{}
	n := 0
	for i, set := range sets {
		for _, k := range set {
			if j, dup := seen[k]; dup {
				t.Fatalf("key %d issued twice (by generators %d and %d)", k, j, i)
			}
			seen[k] = i
			n++
		}
	}
	return n
}

// privateEtcd is an etcd server of the test's own, on free loopback
// ports with a data directory in the test's temporary directory, so that
// the test may kill and restart it (never the shared one).
type privateEtcd struct {
	t      testing.TB
	addr   string // client host:port
	args   []string
	logDir string

	mu  sync.Mutex
	cmd *exec.Cmd
}

const etcdBinary = "/usr/bin/etcd"

func startPrivateEtcd(t testing.TB) *privateEtcd {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an etcd server")
	}
	bin, err := exec.LookPath(etcdBinary)
	if err != nil {
		if os.Getenv("SHARDKEY_REQUIRE_DB") == "1" {
			t.Fatalf("SHARDKEY_REQUIRE_DB=1 and no etcd binary: %v", err)
		}
		t.Skipf("no etcd binary: %v", err)
	}
	dir := t.TempDir()
	client, peer := freePort(t), freePort(t)
	clientURL, peerURL := "http://"+client, "http://"+peer
	e := &privateEtcd{t: t, addr: client, logDir: dir, args: []string{
		"--name", "private",
		"--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "private=" + peerURL,
		"--initial-cluster-state", "new",
	}}
	e.args = append([]string{bin}, e.args...)
	e.start()
	t.Cleanup(e.kill)
	return e
}

// freePort returns a loopback host:port nothing listens on now.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs the server and waits until it reports healthy.
func (e *privateEtcd) start() {
	e.t.Helper()
	log, err := os.OpenFile(filepath.Join(e.logDir, "etcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		e.t.Fatalf("etcd log: %v", err)
	}
	defer log.Close()
	cmd := exec.Command(e.args[0], e.args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("start etcd: %v", err)
	}
	e.mu.Lock()
	e.cmd = cmd
	e.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	hc := http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get("http://" + e.addr + "/health")
		if err == nil {
			var b [256]byte
			n, _ := resp.Body.Read(b[:])
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b[:n]), `"true"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(e.logDir, "etcd.log"))
			e.t.Fatalf("private etcd on %s not healthy after 20s: %v\n%s", e.addr, err, tail(out, 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the server at once (SIGKILL), as a crash would.
func (e *privateEtcd) kill() {
	e.mu.Lock()
	cmd := e.cmd
	e.cmd = nil
	e.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func (e *privateEtcd) String() string { return fmt.Sprintf("private etcd on %s", e.addr) }
