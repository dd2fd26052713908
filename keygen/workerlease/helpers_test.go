package workerlease

import (
	"context"
	"database/sql"
	"io"
	"log"
	"os"
	"regexp"
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

// viaProxy returns the backend's DSN pointing at a proxy to its server,
// with short network timeouts, and the proxy.
func (b backend) viaProxy(t testing.TB) (string, *dbtest.Proxy) {
	t.Helper()
	return dbtest.ViaProxy(t, b.driver, b.dsn)
}
