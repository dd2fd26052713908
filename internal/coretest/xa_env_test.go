package coretest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"go.uber.org/goleak"
)

// The pairs of data sources every two-phase commit test runs on.
var xaPairs = []struct{ name, a, b string }{
	{"postgres", "pg", "pg"},
	{"mariadb", "my", "my"},
	{"mixed", "pg", "my"},
}

const xaTimeout = time.Minute

// xaClock is an injected clock: tests age transactions by advancing it.
type xaClock struct{ off atomic.Int64 }

func (c *xaClock) Now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *xaClock) Advance(d time.Duration) { c.off.Add(int64(d)) }
func (c *xaClock) pastTimeout(times int) int {
	c.Advance(time.Duration(times)*xaTimeout + time.Second)
	return times
}

type xaNode struct {
	src    xa.Source
	dbName string
	direct *sql.DB // the database not through the proxy (src.DB when not proxied)
	driver string
	dsn    string // direct
}

// xaEnv is two fresh databases (ds0, ds1) with a table acct, and what
// tests need around them. Its cleanup rolls back every prepared branch of
// ours left in them and checks no goroutine leaked.
type xaEnv struct {
	t      *testing.T
	nodes  []xaNode
	clock  *xaClock
	prefix string // BranchPrefix of the default log (ds0.shardkey_xa_log), once a coordinator started on it
	// prefixes are the BranchPrefix of every log the test's coordinators
	// used: cleanup rolls back the branches of all of them.
	prefixes []string
	proxy    *dbtest.Proxy // ds0's, when proxied
	mu       sync.Mutex
	conns    []branchConn // MySQL branch connections not yet released
}

func newXAEnv(t *testing.T, pair struct{ name, a, b string }, test string) *xaEnv {
	t.Helper()
	return newXAEnvProxied(t, pair, test, false)
}

// newXAEnvProxied is newXAEnv with, when proxied, ds0 reached through a
// TCP proxy (e.proxy) that can cut it away.
func newXAEnvProxied(t *testing.T, pair struct{ name, a, b string }, test string, proxied bool) *xaEnv {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	e := &xaEnv{t: t, clock: new(xaClock)}
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	for i, kind := range []string{pair.a, pair.b} {
		n := e.open(kind, fmt.Sprintf("xa_%s_%s_%d", test, pair.name, i), fmt.Sprintf("ds%d", i), proxied && i == 0)
		e.mu.Lock()
		e.nodes = append(e.nodes, n)
		e.mu.Unlock()
	}
	t.Cleanup(func() {
		if e.proxy != nil {
			e.proxy.Resume()
		}
		e.release(true)
	})
	return e
}

func (e *xaEnv) open(kind, name, src string, proxied bool) xaNode {
	t := e.t
	d, drv, dsn := dialect.Postgres, "pgx", ""
	if kind == "my" {
		d, drv, dsn = dialect.MySQL, "mysql", dbtest.MySQL(t, name)
	} else {
		dsn = dbtest.Postgres(t, name)
	}
	direct, err := sql.Open(drv, dsn)
	if err != nil {
		t.Fatal(err)
	}
	db, directDSN := direct, dsn
	if proxied {
		dsn, e.proxy = dbtest.ViaProxy(t, drv, dsn)
		if db, err = sql.Open(drv, dsn); err != nil {
			t.Fatal(err)
		}
	}
	n := xaNode{src: xa.Source{Name: src, Dialect: d, DB: db}, dbName: "shardkey_" + name, direct: direct, driver: drv, dsn: directDSN}
	t.Cleanup(func() { e.cleanup(n) }) // before the proxy closes
	if _, err := db.Exec("CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)"); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

func (e *xaEnv) sources() []xa.Source {
	out := make([]xa.Source, len(e.nodes))
	for i, n := range e.nodes {
		out[i] = n.src
	}
	return out
}

// coordinator returns a started Coordinator on the env's clock, without
// timer unless cfg says; closed at cleanup.
func (e *xaEnv) coordinator(cfg xa.Config) *xa.Coordinator {
	e.t.Helper()
	if cfg.Now == nil {
		cfg.Now = e.clock.Now
	}
	if cfg.Interval == 0 {
		cfg.Interval = -1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = xaTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(e.t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	c, err := xa.New(cfg, e.sources())
	if err != nil {
		e.t.Fatalf("xa.New: %v", err)
	}
	e.t.Cleanup(func() {
		if err := c.Close(); err != nil {
			e.t.Errorf("Close: %v", err)
		}
	})
	if err := c.Start(context.Background()); err != nil {
		e.t.Fatalf("Start: %v", err)
	}
	e.track(c)
	if (cfg.LogSource == "" || cfg.LogSource == "ds0") && (cfg.LogTable == "" || cfg.LogTable == xa.DefaultLogTable) {
		e.prefix = c.BranchPrefix()
	}
	return c
}

func (e *xaEnv) newTx(c *xa.Coordinator) *xa.Tx {
	e.t.Helper()
	tx, err := c.NewTx()
	if err != nil {
		e.t.Fatalf("NewTx: %v", err)
	}
	return tx
}

// begin opens tx's branch on node i, as sqlhook does, and runs stmts in it.
func (e *xaEnv) begin(tx *xa.Tx, i int, stmts ...string) xa.Branch {
	e.t.Helper()
	ctx, n := context.Background(), e.nodes[i]
	if n.src.Dialect == dialect.Postgres {
		stx, err := n.src.DB.BeginTx(ctx, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		b := xa.Branch{Source: n.src.Name,
			Exec: func(ctx context.Context, q string) error { _, err := stx.ExecContext(ctx, q); return err },
			Local: func(commit bool) error {
				if commit {
					return stx.Commit()
				}
				return stx.Rollback()
			}}
		e.run(b, stmts)
		return b
	}
	conn, err := n.src.DB.Conn(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	bc := branchConn{conn: conn, db: n.direct}
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&bc.id); err != nil {
		e.t.Fatal(err)
	}
	e.mu.Lock()
	e.conns = append(e.conns, bc)
	e.mu.Unlock()
	b := xa.Branch{Source: n.src.Name, Exec: func(ctx context.Context, q string) error { _, err := conn.ExecContext(ctx, q); return err }}
	if err := b.Exec(ctx, tx.XAStart(n.src.Name)); err != nil {
		e.t.Fatalf("XA START: %v", err)
	}
	e.run(b, stmts)
	return b
}

func (e *xaEnv) run(b xa.Branch, stmts []string) {
	e.t.Helper()
	for _, s := range stmts {
		if err := b.Exec(context.Background(), s); err != nil {
			e.t.Fatalf("%s on %s: %v", s, b.Source, err)
		}
	}
}

// insertAll opens tx's branches on every node, each inserting row id.
func (e *xaEnv) insertAll(tx *xa.Tx, id int) []xa.Branch {
	e.t.Helper()
	var bs []xa.Branch
	for i := range e.nodes {
		bs = append(bs, e.begin(tx, i, fmt.Sprintf("INSERT INTO acct (id, v) VALUES (%d, 1)", id)))
	}
	return bs
}

// release gives back the MySQL branch connections: discarded after a
// failed Commit (sqlhook's rule: a prepared branch must detach from its
// session for recovery to finish it), returned to the pool otherwise.
func (e *xaEnv) release(failed bool) {
	e.mu.Lock()
	conns := e.conns
	e.conns = nil
	e.mu.Unlock()
	for _, c := range conns {
		if failed {
			_ = c.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = c.conn.Close()
		if failed {
			e.waitGone(c)
		}
	}
}

// branchConn is a MySQL branch's connection and its server session id.
type branchConn struct {
	conn *sql.Conn
	db   *sql.DB
	id   int64
}

// waitGone waits until the server has ended c's session: the client's
// close returns before that, and until then the session holds its
// prepared branch (recovery would see XAER_NOTA).
func (e *xaEnv) waitGone(c branchConn) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var n int
		err := c.db.QueryRow("SELECT count(*) FROM information_schema.processlist WHERE id = ?", c.id).Scan(&n)
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Errorf("MySQL session %d still there 10s after its connection was closed (%v)", c.id, err)
			return
		}
	}
}

// rows counts row id on node i.
func (e *xaEnv) rows(i, id int) int {
	e.t.Helper()
	var n int
	if err := e.nodes[i].src.DB.QueryRow(fmt.Sprintf("SELECT count(*) FROM acct WHERE id = %d", id)).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// wantRows checks row id is on every node (want 1) or on none (want 0).
func (e *xaEnv) wantRows(id, want int) {
	e.t.Helper()
	for i := range e.nodes {
		if got := e.rows(i, id); got != want {
			e.t.Errorf("row %d on %s: %d, want %d", id, e.nodes[i].src.Name, got, want)
		}
	}
}

// decision reads gtrid's row in the default log ("" without one).
func (e *xaEnv) decision(gtrid string) string {
	e.t.Helper()
	return e.decisionIn(0, gtrid)
}

// decisionIn reads gtrid's row in node i's log.
func (e *xaEnv) decisionIn(i int, gtrid string) string {
	e.t.Helper()
	n := e.nodes[i]
	q := "SELECT outcome FROM shardkey_xa_log WHERE gtrid = $1"
	if n.src.Dialect == dialect.MySQL {
		q = strings.Replace(q, "$1", "?", 1)
	}
	var s string
	err := n.src.DB.QueryRow(q, gtrid).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// prepared lists node i's prepared branch ids that start with prefix
// (PostgreSQL gids; MySQL gtrid+bqual as XA RECOVER's data).
func (e *xaEnv) prepared(i int, prefix string) []string {
	e.t.Helper()
	ids, err := listPrepared(e.nodes[i].src, prefix)
	if err != nil {
		e.t.Fatal(err)
	}
	return ids
}

func listPrepared(s xa.Source, prefix string) ([]string, error) {
	q := "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()"
	if s.Dialect == dialect.MySQL {
		q = "XA RECOVER"
	}
	rows, err := s.DB.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if s.Dialect == dialect.MySQL {
			var f, gl, bl int64
			err = rows.Scan(&f, &gl, &bl, &id)
		} else {
			err = rows.Scan(&id)
		}
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out, rows.Err()
}

// listed is how gtrid's branch on node i is listed by listPrepared.
func (e *xaEnv) listed(i int, gtrid string) string {
	if n := e.nodes[i].src; n.Dialect == dialect.MySQL {
		return gtrid + n.Name
	}
	return gtrid + ":" + e.nodes[i].src.Name
}

// track records c's branch prefix for the checks and the cleanup.
func (e *xaEnv) track(c *xa.Coordinator) {
	p := c.BranchPrefix()
	e.mu.Lock()
	defer e.mu.Unlock()
	if p != "" && !slices.Contains(e.prefixes, p) {
		e.prefixes = append(e.prefixes, p)
	}
}

// wantNothingPrepared checks no branch of ours (of any log the test's
// coordinators used) is left prepared.
func (e *xaEnv) wantNothingPrepared() {
	e.t.Helper()
	e.mu.Lock()
	prefixes := slices.Clone(e.prefixes)
	e.mu.Unlock()
	for i := range e.nodes {
		for _, p := range prefixes {
			if ids := e.prepared(i, p); len(ids) > 0 {
				e.t.Errorf("%s: branches left prepared: %q", e.nodes[i].src.Name, ids)
			}
		}
	}
}

// rollbackPrepared rolls back s's prepared branches whose id (as
// listPrepared spells it) match says, and returns how many.
func rollbackPrepared(s xa.Source, match func(id string) bool) (int, error) {
	stmts, err := preparedRollbacks(s, match)
	if err != nil {
		return 0, err
	}
	for _, q := range stmts {
		// Both data sources of a pair may share a MariaDB server, which
		// lists both's branches: the other's cleanup may have been first.
		if _, err := s.DB.Exec(q); err != nil && !strings.Contains(err.Error(), "Error 1397") {
			return 0, fmt.Errorf("%s: %w", q, err)
		}
	}
	return len(stmts), nil
}

func preparedRollbacks(s xa.Source, match func(string) bool) ([]string, error) {
	q := "SELECT gid, 0, 0 FROM pg_prepared_xacts WHERE database = current_database()"
	if s.Dialect == dialect.MySQL {
		q = "XA RECOVER"
	}
	rows, err := s.DB.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var stmts []string
	for rows.Next() {
		var f, gl, bl int64
		var id string
		if s.Dialect == dialect.MySQL {
			err = rows.Scan(&f, &gl, &bl, &id)
		} else {
			err = rows.Scan(&id, &gl, &bl)
		}
		if err != nil {
			return nil, err
		}
		switch {
		case !match(id):
		case s.Dialect == dialect.Postgres:
			stmts = append(stmts, "ROLLBACK PREPARED '"+strings.ReplaceAll(id, "'", "''")+"'")
		default:
			stmts = append(stmts, fmt.Sprintf("XA ROLLBACK X'%x',X'%x',%d", id[:gl], id[gl:], f))
		}
	}
	return stmts, rows.Err()
}

// cleanup rolls back every branch of ours left prepared on n (PostgreSQL:
// every one in the test's database) and closes its pool.
func (e *xaEnv) cleanup(n xaNode) {
	e.release(true)
	e.mu.Lock()
	prefixes := e.prefixes
	e.mu.Unlock()
	match := func(id string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(id, p) })
	}
	if n.src.Dialect == dialect.Postgres {
		match = func(string) bool { return true }
	}
	if k, err := rollbackPrepared(n.src, match); err != nil {
		e.t.Errorf("cleanup of %s: %v", n.src.Name, err)
	} else if k > 0 {
		e.t.Logf("cleanup rolled back %d prepared branches on %s", k, n.src.Name)
	}
	n.src.DB.Close()
	n.direct.Close()
}
