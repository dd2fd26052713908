package workerlease

import (
	"context"
	"database/sql"
	"io"
	"log"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

func TestMain(m *testing.M) {
	// The driver logs the connections TestDatabaseUnreachableThenBack cuts.
	mysql.SetLogger(log.New(io.Discard, "", 0))
	if os.Getenv(helperEnv) == "1" {
		// A child of TestEightProcesses: no leak check, it exits early.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// backend is one database server the tests run against.
type backend struct {
	name   string // subtest name
	driver string // database/sql driver name
	dsn    string
}

var (
	dsnMu    sync.Mutex
	dsnCache = map[string]string{}
)

// forEachDB runs f as a subtest against PostgreSQL and MariaDB/MySQL, each
// in a database of this package's own (created once per test binary).
func forEachDB(t *testing.T, f func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range []backend{{name: "postgres", driver: "pgx"}, {name: "mariadb", driver: "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			b.dsn = databaseFor(t, b)
			f(t, b)
		})
	}
}

// databaseFor returns the DSN of the package's database on b's server,
// creating it on first use (dbtest skips or fails the test when the
// server is unreachable).
func databaseFor(t *testing.T, b backend) string {
	dsnMu.Lock()
	defer dsnMu.Unlock() // also when dbtest skips (runtime.Goexit)
	dsn, ok := dsnCache[b.name]
	if !ok {
		if b.driver == "pgx" {
			dsn = dbtest.Postgres(t, "workerlease")
		} else {
			dsn = dbtest.MySQL(t, "workerlease")
		}
		dsnCache[b.name] = dsn
	}
	return dsn
}

// checkLeaks verifies, after every cleanup of the test (registered
// first, so run last), that no goroutine is left running.
func checkLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// open opens the backend's database, closed when the test ends.
func (b backend) open(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	if dsn == "" {
		dsn = b.dsn
	}
	db, err := sql.Open(b.driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", b.name, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var nsUnsafe = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// namespace is a namespace of the test's own, new on every run (the
// database lives as long as the test binary, and -count reruns tests).
func namespace(t testing.TB) string {
	n := nsUnsafe.ReplaceAllString(t.Name(), "_")
	if max := MaxNamespaceLen - 9; len(n) > max {
		n = n[len(n)-max:]
	}
	return n + "_" + randomHex(4)
}

// newSource makes a Source in the test's namespace.
func newSource(t testing.TB, db *sql.DB, cfg Config) *Source {
	t.Helper()
	cfg.DB = db
	if cfg.Namespace == "" {
		cfg.Namespace = namespace(t)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// start is the fake clocks' starting time.
var start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func info(clock keygen.Clock, maxWorker int64) keygen.WorkerInfo {
	return keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: maxWorker, Clock: clock}
}

func fakeInfo(maxWorker int64) (keygen.WorkerInfo, *keygentest.Clock) {
	c := keygentest.NewClock(start)
	return info(c, maxWorker), c
}

// acquire claims a lease that is closed when the test ends.
func acquire(t testing.TB, s *Source, in keygen.WorkerInfo) *lease {
	t.Helper()
	l, err := s.Acquire(context.Background(), in)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*lease)
}

// waitFor polls cond every 10ms until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slot returns the row of worker w, read with s.List.
func slot(t testing.TB, s *Source, w int64) Slot {
	t.Helper()
	slots, err := s.List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, sl := range slots {
		if sl.Worker == w {
			return sl
		}
	}
	t.Fatalf("no slot for worker %d in %v", w, slots)
	return Slot{}
}

// dbNowMs reads the database clock the way the leases do.
func dbNowMs(t testing.TB, s *Source) int64 {
	t.Helper()
	q := `SELECT floor(extract(epoch from clock_timestamp()) * 1000)::bigint`
	if s.dialect == MySQL {
		q = `SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000`
	}
	var ms int64
	if err := s.db.QueryRow(q).Scan(&ms); err != nil {
		t.Fatalf("database clock: %v", err)
	}
	return ms
}

// realClock is the wall clock as a keygen.Clock.
type realClock struct{}

func (realClock) Now() time.Time        { return time.Now() }
func (realClock) Sleep(d time.Duration) { time.Sleep(d) }

// proxy forwards TCP connections to a database server and can cut them.
type proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// startProxy listens on a loopback port and forwards to target; it is
// closed when the test ends.
func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// track registers a connection, or closes it while cut.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) serve(c net.Conn) {
	defer p.wg.Done()
	if !p.track(c) {
		return // refused
	}
	up, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(up) {
		c.Close()
		return
	}
	var once sync.Once
	shut := func() {
		once.Do(func() {
			c.Close()
			up.Close()
			p.mu.Lock()
			delete(p.conns, c)
			delete(p.conns, up)
			p.mu.Unlock()
		})
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		io.Copy(up, c)
		shut()
	}()
	io.Copy(c, up)
	shut()
}

// Cut closes every connection and refuses new ones until Resume.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Resume accepts connections again.
func (p *proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *proxy) close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

// viaProxy returns the backend's DSN pointing at addr instead of the
// server, with short network timeouts, and the server's address.
func (b backend) viaProxy(t testing.TB, start func(target string) string) string {
	t.Helper()
	if b.driver == "pgx" {
		u, err := url.Parse(b.dsn)
		if err != nil {
			t.Fatalf("parse PostgreSQL DSN: %v", err)
		}
		target := u.Host
		if !strings.Contains(target, ":") {
			target += ":5432"
		}
		u.Host = start(target)
		q := u.Query()
		q.Set("connect_timeout", "2")
		u.RawQuery = q.Encode()
		return u.String()
	}
	cfg, err := mysql.ParseDSN(b.dsn)
	if err != nil {
		t.Fatalf("parse MySQL DSN: %v", err)
	}
	if cfg.Net != "tcp" {
		t.Skipf("MySQL server is not on TCP (%s)", cfg.Net)
	}
	cfg.Addr = start(cfg.Addr)
	cfg.Timeout = 2 * time.Second
	cfg.ReadTimeout = 5 * time.Second
	cfg.WriteTimeout = 5 * time.Second
	return cfg.FormatDSN()
}
