package sqlhook

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/merge"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// A fake driver that records what reaches each data source. fkConn has
// only the methods of driver.Conn; fkRichConn adds the optional ones.

type fkLog struct {
	mu     sync.Mutex
	events []string
}

func (l *fkLog) add(format string, a ...any) {
	l.mu.Lock()
	l.events = append(l.events, fmt.Sprintf(format, a...))
	l.mu.Unlock()
}

func (l *fkLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// of lists the events of data source ds, without its name.
func (l *fkLog) of(ds string) []string {
	var out []string
	for _, e := range l.all() {
		if rest, ok := strings.CutPrefix(e, ds+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

func (l *fkLog) count(event string) int {
	n := 0
	for _, e := range l.all() {
		if e == event {
			n++
		}
	}
	return n
}

type fkConnector struct {
	name      string
	log       *fkLog
	rich      bool  // conns implement the optional interfaces
	execErr   error // every Exec fails with it
	commitErr error // every Commit fails with it
}

func (c *fkConnector) Connect(context.Context) (driver.Conn, error) {
	c.log.add("%s connect", c.name)
	fc := &fkConn{src: c}
	if c.rich {
		return fkRichConn{fc}, nil
	}
	return fc, nil
}

func (c *fkConnector) Driver() driver.Driver { return fkDriver{} }

type fkDriver struct{}

func (fkDriver) Open(string) (driver.Conn, error) { return nil, errors.New("fake: use the connector") }

type fkConn struct{ src *fkConnector }

func (c *fkConn) Prepare(q string) (driver.Stmt, error) {
	c.src.log.add("%s prepare %s", c.src.name, q)
	return &fkStmt{c: c, q: q}, nil
}

func (c *fkConn) Close() error {
	c.src.log.add("%s close", c.src.name)
	return nil
}

func (c *fkConn) Begin() (driver.Tx, error) {
	c.src.log.add("%s begin", c.src.name)
	return fkTx{c}, nil
}

func (c *fkConn) exec(q string) (driver.Result, error) {
	c.src.log.add("%s exec %s", c.src.name, q)
	if c.src.execErr != nil {
		return nil, c.src.execErr
	}
	return driver.RowsAffected(1), nil
}

func (c *fkConn) query(q string) (driver.Rows, error) {
	c.src.log.add("%s query %s", c.src.name, q)
	return &memRows{cols: []string{"ds"}, rows: [][]driver.Value{{c.src.name}}}, nil
}

type fkStmt struct {
	c *fkConn
	q string
}

func (s *fkStmt) Close() error {
	s.c.src.log.add("%s stmt-close %s", s.c.src.name, s.q)
	return nil
}
func (s *fkStmt) NumInput() int                              { return -1 }
func (s *fkStmt) Exec([]driver.Value) (driver.Result, error) { return s.c.exec(s.q) }
func (s *fkStmt) Query([]driver.Value) (driver.Rows, error)  { return s.c.query(s.q) }

type fkTx struct{ c *fkConn }

func (t fkTx) Commit() error {
	t.c.src.log.add("%s commit", t.c.src.name)
	return t.c.src.commitErr
}

func (t fkTx) Rollback() error {
	t.c.src.log.add("%s rollback", t.c.src.name)
	return nil
}

type fkRichConn struct{ *fkConn }

func (c fkRichConn) Ping(context.Context) error {
	c.src.log.add("%s ping", c.src.name)
	return nil
}

func (c fkRichConn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	return c.exec(q)
}

func (c fkRichConn) QueryContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	return c.query(q)
}

func (c fkRichConn) ResetSession(context.Context) error {
	c.src.log.add("%s reset", c.src.name)
	return nil
}

func (c fkRichConn) IsValid() bool { return true }

func (c fkRichConn) BeginTx(_ context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.src.log.add("%s begin iso=%d ro=%v", c.src.name, opts.Isolation, opts.ReadOnly)
	return fkTx{c.fkConn}, nil
}

// twoSourceRules shards t_order over data sources ds_0 and ds_1.
const twoSourceRules = `
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`

func parseRouter(t testing.TB, yaml string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// prefixRoute routes "ds_0,ds_1: SQL" to one unit per named data source
// (in that order) and anything else to the default data source, so tests
// decide where statements go.
func prefixRoute(def string, merge mergeSpec) routeFunc {
	return func(_ context.Context, q string, args []driver.NamedValue) (*routed, error) {
		dss, text, ok := strings.Cut(q, ": ")
		if !ok {
			return &routed{units: []unit{{ds: def, sql: q, args: args}}, passthrough: true}, nil
		}
		r := &routed{merge: merge}
		for ds := range strings.SplitSeq(dss, ",") {
			r.units = append(r.units, unit{ds: ds, sql: text, args: args})
		}
		return r, nil
	}
}

// openRouted is OpenWith with the routing core replaced by route.
func openRouted(t testing.TB, sources map[string]driver.Connector, route routeFunc, opts ...Option) *sql.DB {
	t.Helper()
	cn, err := newConnector(parseRouter(t, twoSourceRules), sources, buildOptions(opts))
	if err != nil {
		t.Fatal(err)
	}
	cn.route = route
	db := sql.OpenDB(closingConnector{cn})
	t.Cleanup(func() { db.Close() })
	return db
}

func fakeSources(log *fkLog, rich bool) (map[string]driver.Connector, *fkConnector, *fkConnector) {
	a := &fkConnector{name: "ds_0", log: log, rich: rich}
	b := &fkConnector{name: "ds_1", log: log, rich: rich}
	return map[string]driver.Connector{"ds_0": a, "ds_1": b}, a, b
}

var noMerge = mergeSpec{limit: -1}

func TestLazyTxBegin(t *testing.T) {
	ctx := context.Background()
	for _, rich := range []bool{false, true} {
		t.Run(fmt.Sprintf("rich=%v", rich), func(t *testing.T) {
			log := &fkLog{}
			sources, _, _ := fakeSources(log, rich)
			db := openRouted(t, sources, prefixRoute("ds_0", noMerge), WithDialect(SQLite))

			// A transaction without statements begins nowhere.
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := log.of("ds_0"); slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, "begin") }) {
				t.Errorf("empty transaction began on ds_0: %q", got)
			}

			tx, err = db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("ds_0: UPDATE a"); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("ds_0: UPDATE b"); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := log.of("ds_1"); len(got) != 0 {
				t.Errorf("ds_1 was never used but saw %q", got)
			}
			var begins []string
			ds0 := log.of("ds_0")
			for _, e := range ds0 {
				if strings.HasPrefix(e, "begin") || strings.HasPrefix(e, "commit") || strings.Contains(e, "exec") {
					begins = append(begins, e)
				}
			}
			beginEvent := "begin"
			if rich {
				beginEvent = "begin iso=0 ro=false"
			}
			want := []string{beginEvent, "exec UPDATE a", "exec UPDATE b", "commit"}
			if !slices.Equal(begins, want) {
				t.Errorf("ds_0 saw %q, want %q", begins, want)
			}
		})
	}
}

func TestTxOptions(t *testing.T) {
	ctx := context.Background()
	serializable := &sql.TxOptions{Isolation: sql.LevelSerializable, ReadOnly: true}

	// Without ConnBeginTx a non-default isolation level is refused, as
	// database/sql refuses it.
	log := &fkLog{}
	sources, _, _ := fakeSources(log, false)
	db := openRouted(t, sources, prefixRoute("ds_0", noMerge), WithDialect(SQLite))
	if _, err := db.BeginTx(ctx, serializable); err == nil || !strings.Contains(err.Error(), "isolation") {
		t.Fatalf("BeginTx(serializable) on a driver without ConnBeginTx: %v", err)
	}

	// With it, the options reach the data source when it begins.
	log = &fkLog{}
	sources, _, _ = fakeSources(log, true)
	db = openRouted(t, sources, prefixRoute("ds_0", noMerge), WithDialect(SQLite))
	tx, err := db.BeginTx(ctx, serializable)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("ds_0: UPDATE a"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("ds_0 begin iso=%d ro=true", sql.LevelSerializable)
	if log.count(want) != 1 || log.count("ds_0 rollback") != 1 {
		t.Errorf("events %q, want one %q and one rollback", log.all(), want)
	}
}

func sqliteSource(t testing.TB, name string) (driver.Connector, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".db")
	plain, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	if _, err := plain.Exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, note TEXT)`); err != nil {
		t.Fatal(err)
	}
	c, err := registeredConnector(shardconf.DataSource{Name: name, Driver: "sqlite", DSN: path}, sql.Drivers())
	if err != nil {
		t.Fatal(err)
	}
	return c, plain
}

func countItems(t testing.TB, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM items`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCrossSourceTxRefused(t *testing.T) {
	ctx := context.Background()
	c0, plain0 := sqliteSource(t, "ds_0")
	c1, plain1 := sqliteSource(t, "ds_1")
	db := openRouted(t, map[string]driver.Connector{"ds_0": c0, "ds_1": c1}, prefixRoute("ds_0", noMerge))

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`ds_0: INSERT INTO items VALUES (?, 'a')`, 1); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(`ds_1: INSERT INTO items VALUES (?, 'b')`, 2)
	if !errors.Is(err, ErrCrossSourceTx) || !strings.Contains(err.Error(), "ds_0, ds_1") {
		t.Fatalf("second data source in a transaction: %v, want ErrCrossSourceTx naming ds_0, ds_1", err)
	}
	// A statement whose units span both is refused before its first unit.
	if _, err := tx.Exec(`ds_0,ds_1: INSERT INTO items VALUES (?, 'c')`, 3); !errors.Is(err, ErrCrossSourceTx) {
		t.Fatalf("statement spanning two data sources in a transaction: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n0, n1 := countItems(t, plain0), countItems(t, plain1); n0 != 1 || n1 != 0 {
		t.Fatalf("after refusals ds_0 has %d rows (want 1), ds_1 %d (want 0)", n0, n1)
	}

	// The same statement before anything else: refused, nothing runs.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`ds_0,ds_1: INSERT INTO items VALUES (?, 'd')`, 4); !errors.Is(err, ErrCrossSourceTx) {
		t.Fatalf("spanning statement first in a transaction: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n0 := countItems(t, plain0); n0 != 1 {
		t.Fatalf("refused statement reached ds_0: %d rows", n0)
	}

	// With WithMultiSourceTx the transaction spans both and commits both.
	db = openRouted(t, map[string]driver.Connector{"ds_0": c0, "ds_1": c1}, prefixRoute("ds_0", noMerge), WithMultiSourceTx())
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.Exec(`ds_0,ds_1: INSERT INTO items VALUES (?, 'e')`, 5)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 2 {
		t.Errorf("RowsAffected = %d, %v; want 2", n, err)
	}
	if _, err := res.LastInsertId(); err == nil {
		t.Error("LastInsertId of a statement on two data sources did not fail")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n0, n1 := countItems(t, plain0), countItems(t, plain1); n0 != 2 || n1 != 1 {
		t.Fatalf("after a multi-source commit ds_0 has %d rows (want 2), ds_1 %d (want 1)", n0, n1)
	}
}

func TestPartialCommitError(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("disk full")
	for _, failing := range []string{"ds_0", "ds_1"} {
		t.Run(failing, func(t *testing.T) {
			log := &fkLog{}
			sources, a, b := fakeSources(log, false)
			map[string]*fkConnector{"ds_0": a, "ds_1": b}[failing].commitErr = boom
			var logged bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logged, nil))
			db := openRouted(t, sources, prefixRoute("ds_0", noMerge), WithDialect(SQLite), WithMultiSourceTx(), WithLogger(logger))
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("ds_0,ds_1: UPDATE x"); err != nil {
				t.Fatal(err)
			}
			err = tx.Commit()
			var pe *PartialCommitError
			if !errors.As(err, &pe) {
				t.Fatalf("Commit = %v, want *PartialCommitError", err)
			}
			if pe.Op != "commit" || !errors.Is(pe.Failed[failing], boom) {
				t.Errorf("PartialCommitError %+v, want commit with %s failing with %v", pe, failing, boom)
			}
			if !errors.Is(err, boom) {
				t.Errorf("errors.Is(%v, boom) is false", err)
			}
			if failing == "ds_1" {
				if !slices.Equal(pe.Committed, []string{"ds_0"}) || len(pe.Failed) != 1 {
					t.Errorf("Committed %v Failed %v, want [ds_0] and ds_1", pe.Committed, pe.Failed)
				}
			} else {
				// ds_0 commits first and fails: ds_1 is rolled back, not
				// committed.
				if len(pe.Committed) != 0 || len(pe.Failed) != 2 {
					t.Errorf("Committed %v Failed %v, want none and both", pe.Committed, pe.Failed)
				}
				if log.count("ds_1 commit") != 0 || log.count("ds_1 rollback") != 1 {
					t.Errorf("ds_1 after ds_0's commit failed: %q", log.of("ds_1"))
				}
			}
			if out := logged.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, failing) {
				t.Errorf("logged %q, want an error naming %s", out, failing)
			}
		})
	}

	// One data source: its error as is.
	log := &fkLog{}
	sources, a, _ := fakeSources(log, false)
	a.commitErr = boom
	db := openRouted(t, sources, prefixRoute("ds_0", noMerge), WithDialect(SQLite))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("ds_0: UPDATE x"); err != nil {
		t.Fatal(err)
	}
	err = tx.Commit()
	var pe *PartialCommitError
	if !errors.Is(err, boom) || errors.As(err, &pe) {
		t.Fatalf("single-source Commit = %v, want %v as is", err, boom)
	}
}

func TestExecPartialFailure(t *testing.T) {
	log := &fkLog{}
	sources, _, b := fakeSources(log, true)
	// ErrBadConn after ds_0 already ran: passed on as such, database/sql
	// would run the statement again, on ds_0 too.
	b.execErr = driver.ErrBadConn
	db := openRouted(t, sources, prefixRoute("ds_0", noMerge), WithDialect(SQLite))
	db.SetMaxOpenConns(1)
	_, err := db.Exec("ds_0,ds_1: UPDATE x")
	if err == nil || errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("Exec = %v, want an error that is not ErrBadConn", err)
	}
	for _, want := range []string{"unit 2 of 2", "ds_1", "1 earlier unit(s) succeeded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n := log.count("ds_0 exec UPDATE x"); n != 1 {
		t.Errorf("ds_0 ran the statement %d times, want 1", n)
	}
	// The conn is retired: the next statement gets a new one.
	if _, err := db.Exec("ds_0: UPDATE y"); err != nil {
		t.Fatal(err)
	}
	if n := log.count("ds_0 connect"); n != 2 {
		t.Errorf("ds_0 connected %d times, want 2 (the conn that saw ErrBadConn retired)", n)
	}

	// Another error: wrapped, still matchable.
	boom := errors.New("constraint violated")
	b.execErr = boom
	if _, err := db.Exec("ds_0,ds_1: UPDATE z"); !errors.Is(err, boom) {
		t.Fatalf("Exec = %v, want it to wrap %v", err, boom)
	}
	// Failing on the first unit: the error as is (nothing ran).
	if _, err := db.Exec("ds_1,ds_0: UPDATE w"); err != boom {
		t.Fatalf("Exec failing on its first unit = %v, want %v itself", err, boom)
	}
	if n := log.count("ds_0 exec UPDATE w"); n != 0 {
		t.Errorf("ds_0 ran after the first unit failed")
	}
}

func TestForwardingToEveryConn(t *testing.T) {
	ctx := context.Background()
	log := &fkLog{}
	sources, _, _ := fakeSources(log, true)
	db := openRouted(t, sources, prefixRoute("ds_0", noMerge), WithDialect(SQLite))
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("ds_1: UPDATE x"); err != nil {
		t.Fatal(err)
	}
	if log.count("ds_0 connect") != 1 || log.count("ds_1 connect") != 1 {
		t.Fatalf("events %q, want one connect each", log.all())
	}
	// Reusing the conn resets every data source's session.
	if _, err := db.Exec("ds_0: UPDATE y"); err != nil {
		t.Fatal(err)
	}
	if log.count("ds_0 reset") != 1 || log.count("ds_1 reset") != 1 {
		t.Errorf("events %q, want one reset each", log.all())
	}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	if log.count("ds_0 ping") != 1 || log.count("ds_1 ping") != 1 {
		t.Errorf("events %q, want one ping each", log.all())
	}
	// Raw access to a data source's own conn.
	err = c.Raw(func(dc any) error {
		u, err := Unwrap(dc)
		if err != nil {
			return err
		}
		if fc, ok := u.(fkRichConn); !ok || fc.src.name != "ds_0" {
			return fmt.Errorf("Unwrap gave %T", u)
		}
		u, err = UnwrapDataSource(ctx, dc, "ds_1")
		if err != nil {
			return err
		}
		if fc, ok := u.(fkRichConn); !ok || fc.src.name != "ds_1" {
			return fmt.Errorf("UnwrapDataSource gave %T", u)
		}
		if _, err := UnwrapDataSource(ctx, dc, "ds_9"); !errors.Is(err, ErrDataSource) {
			return fmt.Errorf("UnwrapDataSource(ds_9) = %v, want ErrDataSource", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unwrap(42); err == nil {
		t.Error("Unwrap(42) did not fail")
	}
}

func TestPreparedStatementReuse(t *testing.T) {
	ctx := context.Background()
	log := &fkLog{}
	sources, _, _ := fakeSources(log, false)
	db := openRouted(t, sources, prefixRoute("ds_0", noMerge), WithDialect(SQLite))
	db.SetMaxOpenConns(1)
	st, err := db.PrepareContext(ctx, "ds_0,ds_1: UPDATE x")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(log.all()); n != 1 { // ds_0 connect only
		t.Errorf("preparing reached a database: %q", log.all())
	}
	for range 3 {
		res, err := st.Exec()
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 2 {
			t.Errorf("RowsAffected = %d, want 2", n)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ds := range []string{"ds_0", "ds_1"} {
		if p, e, c := log.count(ds+" prepare UPDATE x"), log.count(ds+" exec UPDATE x"), log.count(ds+" stmt-close UPDATE x"); p != 1 || e != 3 || c != 1 {
			t.Errorf("%s: %d prepares, %d execs, %d closes; want 1, 3, 1", ds, p, e, c)
		}
	}

	// A one-off statement on a driver without ExecerContext is prepared,
	// run and closed; its query's statement closes with the rows.
	var got []string
	rows, err := db.QueryContext(ctx, "ds_1: SELECT ds")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
		if log.count("ds_1 stmt-close SELECT ds") != 0 {
			t.Error("the statement closed before its rows")
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"ds_1"}) || log.count("ds_1 stmt-close SELECT ds") != 1 {
		t.Errorf("got %q, events %q", got, log.of("ds_1"))
	}
}

func TestMergedQueryAcrossSQLite(t *testing.T) {
	c0, plain0 := sqliteSource(t, "ds_0")
	c1, plain1 := sqliteSource(t, "ds_1")
	for _, x := range []struct {
		db  *sql.DB
		ids []int
	}{{plain0, []int{1, 4, 5, 9}}, {plain1, []int{2, 3, 8}}} {
		for _, id := range x.ids {
			if _, err := x.db.Exec(`INSERT INTO items VALUES (?, ?)`, id, fmt.Sprint("n", id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	spec := mergeSpec{merge: &ir.MergePlan{OrderBy: []ir.KeyTmpl{{Col: 0, NullsFirst: true}}}, dialect: merge.SQLite, offset: 1, limit: 4}
	db := openRouted(t, map[string]driver.Connector{"ds_0": c0, "ds_1": c1}, prefixRoute("ds_0", spec))
	// Two units on ds_0 as well: its first result is read into memory.
	rows, err := db.Query(`ds_0,ds_1,ds_0: SELECT id, note FROM items WHERE id <> ? ORDER BY id`, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int
	for rows.Next() {
		var id int
		var note string
		if err := rows.Scan(&id, &note); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// ds_0's rows twice: 1 1 2 3 5 5 8 9 9, offset 1, limit 4.
	if want := []int{1, 2, 3, 5}; !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
}

func TestQuerySameSourceUnitsPgx(t *testing.T) {
	dsn := dbtest.Postgres(t, "sqlhook_driver")
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	w := Wrap(stdlib.GetConnector(*cfg), parseRouter(t, oneSourceRules))
	cn, ok := w.(*connector)
	if !ok {
		t.Fatalf("Wrap returned %T", w)
	}
	if cn.err != nil {
		t.Fatal(cn.err)
	}
	spec := mergeSpec{merge: &ir.MergePlan{OrderBy: []ir.KeyTmpl{{Col: 0, Desc: true}}}, dialect: merge.PostgreSQL, limit: -1}
	cn.route = prefixRoute("ds", spec)
	db := sql.OpenDB(cn)
	defer db.Close()
	// pgx cannot run a query while another's rows are open on the conn:
	// the first unit's rows must be read before the second runs.
	rows, err := db.Query(`ds,ds: SELECT g FROM generate_series(1, $1::int) g ORDER BY g DESC`, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int64
	for rows.Next() {
		var g int64
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		got = append(got, g)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []int64{3, 3, 2, 2, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestUnwrapPgx(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.Postgres(t, "sqlhook_driver")
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(Wrap(stdlib.GetConnector(*cfg), parseRouter(t, oneSourceRules)))
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE copied (id bigint)`); err != nil {
		t.Fatal(err)
	}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		u, err := Unwrap(dc)
		if err != nil {
			return err
		}
		pc, ok := u.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("Unwrap gave %T, want *stdlib.Conn", u)
		}
		n, err := pc.Conn().CopyFrom(ctx, pgx.Identifier{"copied"}, []string{"id"},
			pgx.CopyFromRows([][]any{{int64(1)}, {int64(2)}, {int64(3)}}))
		if err != nil {
			return err
		}
		if n != 3 {
			return fmt.Errorf("copied %d rows", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.QueryRowContext(ctx, `SELECT count(*) FROM copied`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("count = %d, %v; want 3", n, err)
	}
}

func TestOpenErrors(t *testing.T) {
	const secret = "s3cretPW"
	yaml := func(driverName, dsn string) *shardconf.Config {
		cfg, err := shardconf.Parse([]byte(fmt.Sprintf(`
dataSources:
  ds_0: {driver: %s, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order_${0..1}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`, driverName, dsn)))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	pgDSN := "postgres://app:" + secret + "@127.0.0.1:1/db"
	// Open refuses drivers other than pgx, mysql and sqlite, without the
	// DSN in the message.
	cfg := yaml("pgx", pgDSN)
	cfg.DataSources[0].Driver = "oracle"
	_, err := Open(cfg)
	if !errors.Is(err, ErrDataSource) || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "ds_0") {
		t.Fatalf("Open with driver oracle: %v", err)
	}

	// Unregistered drivers: the message names the import to add.
	ds := shardconf.DataSource{Name: "ds_0", Driver: "mysql", DSN: "app:" + secret + "@tcp(127.0.0.1:1)/db"}
	_, err = registeredConnector(ds, []string{"pgx"})
	if !errors.Is(err, ErrDataSource) || strings.Contains(err.Error(), secret) ||
		!strings.Contains(err.Error(), `_ "github.com/go-sql-driver/mysql"`) || !strings.Contains(err.Error(), "ds_0") {
		t.Fatalf("unregistered mysql: %v", err)
	}
	ds = shardconf.DataSource{Name: "ds_0", Driver: "sqlhook_nosuch", DSN: pgDSN}
	if _, err := registeredConnector(ds, sql.Drivers()); !errors.Is(err, ErrDataSource) || strings.Contains(err.Error(), secret) {
		t.Fatalf("unregistered sqlhook_nosuch: %v", err)
	}

	// A driver quoting the DSN in its error: redacted.
	ds = shardconf.DataSource{Name: "ds_0", Driver: "sqlhook_quoting", DSN: pgDSN}
	_, err = registeredConnector(ds, sql.Drivers())
	if !errors.Is(err, ErrDataSource) || !errors.Is(err, errQuoting) || strings.Contains(err.Error(), secret) {
		t.Fatalf("quoting driver: %v", err)
	}

	// Data sources of two dialects.
	cfg = yaml("pgx", pgDSN)
	cfg.DataSources = append(cfg.DataSources, shardconf.DataSource{Name: "ds_1", Driver: "mysql", DSN: "app:" + secret + "@tcp(127.0.0.1:1)/db"})
	if _, err := Open(cfg); !errors.Is(err, ErrDataSource) || !strings.Contains(err.Error(), "one dialect") || strings.Contains(err.Error(), secret) {
		t.Fatalf("Open with pgx and mysql: %v", err)
	}
	// Explicit dialect contradicting a known driver.
	cfg = yaml("pgx", pgDSN)
	if _, err := Open(cfg, WithDialect(MySQL)); !errors.Is(err, ErrDataSource) || !strings.Contains(err.Error(), "dialect") {
		t.Fatalf("Open(pgx, WithDialect(MySQL)): %v", err)
	}
	// Unknown default data source.
	if _, err := Open(yaml("pgx", pgDSN), WithDefaultDataSource("ds_9")); !errors.Is(err, ErrDataSource) {
		t.Fatalf("WithDefaultDataSource(ds_9): %v", err)
	}
}

// errQuoting is what the sqlhook_quoting driver fails with, quoting the DSN
// as some drivers do.
var errQuoting = errors.New("cannot parse")

type quotingDriver struct{}

func (quotingDriver) Open(string) (driver.Conn, error) { return nil, errQuoting }
func (quotingDriver) OpenConnector(dsn string) (driver.Connector, error) {
	return nil, fmt.Errorf("%w %q", errQuoting, dsn)
}

func init() { sql.Register("sqlhook_quoting", quotingDriver{}) }

func TestOpenSQLite(t *testing.T) {
	dir := t.TempDir()
	cfg, err := shardconf.Parse([]byte(fmt.Sprintf(`
dataSources:
  ds_0: {driver: sqlite, dsn: %q}
  ds_1: {driver: sqlite, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`, filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"))))
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(cfg, WithDefaultDataSource("ds_1"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Statements on no logic table go to the default data source.
	if _, err := db.Exec(`CREATE TABLE plain (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO plain VALUES (?)`, 7); err != nil {
		t.Fatal(err)
	}
	b, err := sql.Open("sqlite", filepath.Join(dir, "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var x int
	if err := b.QueryRow(`SELECT x FROM plain`).Scan(&x); err != nil || x != 7 {
		t.Fatalf("ds_1 (default) has x = %d, %v; want 7", x, err)
	}
	if _, err := db.Driver().Open("x"); err == nil {
		t.Error("the sqlhook driver opened a conn by name")
	}
}

func TestWrapAndOpenWithErrors(t *testing.T) {
	log := &fkLog{}
	sources, a, _ := fakeSources(log, false)

	// Wrap takes one data source.
	db := sql.OpenDB(Wrap(a, parseRouter(t, twoSourceRules), WithDialect(SQLite)))
	if err := db.Ping(); !errors.Is(err, ErrDataSource) {
		t.Errorf("Wrap with two data sources: Ping = %v, want ErrDataSource", err)
	}
	db.Close()

	// An unknown driver without WithDialect.
	db = sql.OpenDB(Wrap(a, parseRouter(t, oneSourceRules)))
	if err := db.Ping(); !errors.Is(err, ErrDataSource) || !strings.Contains(err.Error(), "WithDialect") {
		t.Errorf("undetectable dialect: Ping = %v", err)
	}
	db.Close()

	r := parseRouter(t, twoSourceRules)
	if _, err := OpenWith(r, map[string]driver.Connector{"ds_0": sources["ds_0"]}, WithDialect(SQLite)); !errors.Is(err, ErrDataSource) ||
		!strings.Contains(err.Error(), "ds_1") {
		t.Errorf("OpenWith missing ds_1: %v", err)
	}
	extra := map[string]driver.Connector{"ds_0": sources["ds_0"], "ds_1": sources["ds_1"], "ds_2": sources["ds_1"]}
	if _, err := OpenWith(r, extra, WithDialect(SQLite)); !errors.Is(err, ErrDataSource) || !strings.Contains(err.Error(), "ds_2") {
		t.Errorf("OpenWith with extra ds_2: %v", err)
	}
	db, err := OpenWith(r, sources, WithDialect(SQLite))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// closerConnector is a connector with a Close method.
type closerConnector struct {
	*fkConnector
	closed int
}

func (c *closerConnector) Close() error { c.closed++; return nil }

func TestWrapClosesConnector(t *testing.T) {
	c := &closerConnector{fkConnector: &fkConnector{name: "ds", log: &fkLog{}}}
	w := Wrap(c, parseRouter(t, oneSourceRules), WithDialect(SQLite))
	if _, ok := w.(io.Closer); !ok {
		t.Fatalf("Wrap of a closer returned %T, not an io.Closer", w)
	}
	if _, ok := Wrap(c.fkConnector, parseRouter(t, oneSourceRules), WithDialect(SQLite)).(io.Closer); ok {
		t.Error("Wrap of a connector without Close returned an io.Closer")
	}
	db := sql.OpenDB(w)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if c.closed != 1 {
		t.Errorf("the wrapped connector closed %d times, want 1", c.closed)
	}
}
