package redislease

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client returns a go-redis client to addr with short timeouts and no
// retries, closed when the test ends.
func client(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:         addr,
		DialTimeout:  time.Second,
		ReadTimeout:  time.Second,
		WriteTimeout: time.Second,
		MaxRetries:   -1,
		// A test's clients dial nothing until used.
		MinIdleConns: 0,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// sharedClient is a client to the shared Redis server (dbtest.Redis).
func sharedClient(t testing.TB) *redis.Client {
	t.Helper()
	return client(t, dbtest.Redis(t))
}

// prefix is a key prefix of the test's own: the shared server is used by
// other tests at once.
func prefix(t testing.TB) string {
	return "shardkey-test:" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + ":" + randomHex(4)
}

// newSource builds a Source on c with the test's own prefix; fields of
// cfg left zero default.
func newSource(t testing.TB, c redis.Scripter, cfg Config) *Source {
	t.Helper()
	cfg.Client = c
	if cfg.Prefix == "" {
		cfg.Prefix = prefix(t)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// acquire claims a lease, closed when the test ends.
func acquire(t testing.TB, s *Source, in keygen.WorkerInfo) *Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := s.acquire(ctx, in)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

type closingGenerator interface {
	keygen.IDGenerator
	Close() error
}

// generator is a SNOWFLAKE generator taking its worker id from s, closed
// when the test ends.
func generator(t testing.TB, s *Source, opts ...keygen.Option) closingGenerator {
	t.Helper()
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, append(opts, keygen.WithWorkerSource(s))...)
	if err != nil {
		t.Fatalf("NewID: %v", err)
	}
	cg, ok := g.(closingGenerator)
	if !ok {
		t.Fatal("a leased generator is not an io.Closer")
	}
	t.Cleanup(func() { cg.Close() })
	return cg
}

// generatorOn is a SNOWFLAKE generator taking its worker id from src,
// closed when the test ends.
func generatorOn(t testing.TB, src keygen.WorkerSource, opts ...keygen.Option) closingGenerator {
	t.Helper()
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, append(opts, keygen.WithWorkerSource(src))...)
	if err != nil {
		t.Fatalf("NewID: %v", err)
	}
	cg := g.(closingGenerator)
	t.Cleanup(func() { cg.Close() })
	return cg
}

func workerOf(t testing.TB, g keygen.IDGenerator, id int64) int64 {
	t.Helper()
	p, err := g.(keygen.Decomposer).Decompose(id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Worker
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// slot returns the listing of worker w.
func slot(t testing.TB, s *Source, w int64) Slot {
	t.Helper()
	slots, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, sl := range slots {
		if sl.Worker == w {
			return sl
		}
	}
	t.Fatalf("worker %d not listed in %+v", w, slots)
	return Slot{}
}

// redisServer is a private redis-server process, for tests that restart
// or reconfigure a server (the shared one on 6379 is never touched).
type redisServer struct {
	t    testing.TB
	port int
	dir  string
	args []string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// privateRedis starts redis-server on a free loopback port without
// persistence (plus args), stopped when the test ends. Without the binary
// the test is skipped, or fails under SHARDKEY_REQUIRE_DB=1.
func privateRedis(t testing.TB, args ...string) *redisServer {
	t.Helper()
	dbtest.SkipShort(t, "Redis")
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if _, serr := os.Stat("/usr/bin/redis-server"); serr == nil {
			bin, err = "/usr/bin/redis-server", nil
		}
	}
	if err != nil {
		if os.Getenv("SHARDKEY_REQUIRE_DB") == "1" {
			t.Fatalf("redis-server is required (SHARDKEY_REQUIRE_DB=1) but not found: %v", err)
		}
		t.Skipf("redis-server not found (set SHARDKEY_REQUIRE_DB=1 to fail instead): %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &redisServer{t: t, port: port, dir: t.TempDir(), args: append([]string{bin}, args...)}
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// start runs the server and waits until it answers PING.
func (r *redisServer) start() {
	r.t.Helper()
	args := append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--loglevel", "warning"}, r.args[1:]...)
	cmd := exec.Command(r.args[0], args...)
	logf, err := os.OpenFile(filepath.Join(r.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	defer logf.Close() // the child has its own descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	r.mu.Lock()
	r.cmd = cmd
	r.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", r.addr(), 200*time.Millisecond)
		if err == nil {
			_, werr := c.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			c.SetReadDeadline(time.Now().Add(time.Second))
			n, rerr := c.Read(buf)
			c.Close()
			if werr == nil && rerr == nil && strings.HasPrefix(string(buf[:n]), "+PONG") {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on %s did not answer: %v", r.addr(), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill stops the server at once (SIGKILL: nothing is saved).
func (r *redisServer) kill() {
	r.mu.Lock()
	cmd := r.cmd
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	var ee *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &ee) {
		r.t.Logf("redis-server wait: %v", err)
	}
}

// restart kills the server and starts it again on the same port, empty.
func (r *redisServer) restart() {
	r.t.Helper()
	r.kill()
	r.start()
}
