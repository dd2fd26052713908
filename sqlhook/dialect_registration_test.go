package sqlhook

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// hidingConnector opens connections of a real connector while its Driver
// keeps the real driver to itself, as a tracing wrapper (otelsql) does.
type hidingConnector struct {
	c        driver.Connector
	connects atomic.Int64
}

func (h *hidingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	h.connects.Add(1)
	return h.c.Connect(ctx)
}

func (h *hidingConnector) Driver() driver.Driver { return hidingDriver{h.c.Driver()} }

// sqliteConnector opens connections of modernc.org/sqlite (which has no
// DriverContext) to dsn, as sql.Open does.
type sqliteConnector struct{ dsn string }

var sqliteDriver = func() driver.Driver {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	return db.Driver()
}()

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	return sqliteDriver.Open(c.dsn)
}
func (c sqliteConnector) Driver() driver.Driver { return sqliteDriver }

const registrationRules = `
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: db_mod}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: tb_mod}
  shardingAlgorithms:
    db_mod: {type: MOD, props: {sharding-count: 2}}
    tb_mod: {type: MOD, props: {sharding-count: 2}}
`

func registrationRouter(t *testing.T) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(registrationRules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// twoSQLiteSources creates t_order_0 and t_order_1 in two SQLite files and
// returns plain handles on them and their DSNs.
func twoSQLiteSources(t *testing.T) (dsns [2]string, direct [2]*sql.DB) {
	t.Helper()
	dir := t.TempDir()
	for i := range 2 {
		dsns[i] = "file:" + filepath.Join(dir, fmt.Sprintf("ds_%d.db", i)) + "?_pragma=busy_timeout(10000)"
		db, err := sql.Open("sqlite", dsns[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for _, tb := range []string{"t_order_0", "t_order_1"} {
			if _, err := db.Exec(`CREATE TABLE ` + tb + ` (order_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, status TEXT)`); err != nil {
				t.Fatal(err)
			}
		}
		direct[i] = db
	}
	return dsns, direct
}

// placement lists every row as "ds_i.table:order_id/user_id", sorted.
func placement(t *testing.T, direct [2]*sql.DB) []string {
	t.Helper()
	var got []string
	for i, db := range direct {
		for _, tb := range []string{"t_order_0", "t_order_1"} {
			rows, err := db.Query(`SELECT order_id, user_id FROM ` + tb)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var o, u int64
				if err := rows.Scan(&o, &u); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("ds_%d.%s:%d/%d", i, tb, o, u))
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	sort.Strings(got)
	return got
}

// A driver that hides the driver it wraps cannot be recognised: sqlhook
// refuses it before connecting and says to give WithDialect; with
// WithDialect it routes as over the plain driver.
func TestHiddenDriverNeedsWithDialectThenRoutesEveryRowToItsTable(t *testing.T) {
	dsns, direct := twoSQLiteSources(t)
	hide := func() (map[string]driver.Connector, []*hidingConnector) {
		h := []*hidingConnector{{c: sqliteConnector{dsns[0]}}, {c: sqliteConnector{dsns[1]}}}
		return map[string]driver.Connector{"ds_0": h[0], "ds_1": h[1]}, h
	}

	sources, hs := hide()
	db, err := OpenWith(registrationRouter(t), sources)
	if err == nil {
		db.Close()
		t.Fatal("OpenWith over a hiding driver without WithDialect: opened, want a refusal")
	}
	if !errors.Is(err, ErrDataSource) || !strings.Contains(err.Error(), "WithDialect") {
		t.Errorf("err = %v, want ErrDataSource naming WithDialect", err)
	}
	for _, h := range hs {
		if n := h.connects.Load(); n != 0 {
			t.Errorf("refused OpenWith connected %d times", n)
		}
	}

	sources, _ = hide()
	db, err = OpenWith(registrationRouter(t), sources, WithDialect(SQLite))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for o := int64(1); o <= 8; o++ {
		if _, err := db.Exec(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'new')`, o, o*3); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for o := int64(1); o <= 8; o++ {
		want = append(want, fmt.Sprintf("ds_%d.t_order_%d:%d/%d", (o*3)%2, o%2, o, o*3))
	}
	sort.Strings(want)
	if got := placement(t, direct); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rows at\n%v\nwant\n%v", got, want)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM t_order WHERE user_id = ? AND order_id = ?`, 9, 3).Scan(&n); err != nil || n != 1 {
		t.Errorf("point read: %d, %v; want 1", n, err)
	}
}

// WithDialect is for drivers sqlhook cannot recognise; against a driver it
// does recognise as another dialect it is a refusal, before connecting:
// statements compiled in one grammar never reach a server of another.
func TestWithDialectContradictingTheDriverIsRefusedBeforeConnecting(t *testing.T) {
	dsns, _ := twoSQLiteSources(t)
	for _, d := range []Dialect{PostgreSQL, MySQL} {
		c0, c1 := &countingConnector{c: sqliteConnector{dsns[0]}}, &countingConnector{c: sqliteConnector{dsns[1]}}
		db, err := OpenWith(registrationRouter(t), map[string]driver.Connector{"ds_0": c0, "ds_1": c1}, WithDialect(d))
		if err == nil {
			db.Close()
			t.Errorf("WithDialect(%v) over SQLite: opened, want a refusal", d)
			continue
		}
		if !errors.Is(err, ErrDataSource) {
			t.Errorf("WithDialect(%v) over SQLite: err = %v, want ErrDataSource", d, err)
		}
		if n := c0.connects.Load() + c1.connects.Load(); n != 0 {
			t.Errorf("WithDialect(%v) over SQLite: connected %d times before refusing", d, n)
		}
	}
}

// countingConnector counts Connect calls on a connector it shows as is.
type countingConnector struct {
	c        driver.Connector
	connects atomic.Int64
}

func (c *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c.connects.Add(1)
	return c.c.Connect(ctx)
}
func (c *countingConnector) Driver() driver.Driver { return c.c.Driver() }

// Opening sqlhook databases while others run their first statements (the
// first parse of a dialect, the first plan of a text, the first
// connection of a data source) gives each the same answer as alone; run
// under -race, it also shows that this lazy work is safely shared.
func TestConcurrentOpenAndFirstStatementsRouteAsAlone(t *testing.T) {
	const n = 8
	envs := make([][2]*sql.DB, n)
	dsns := make([][2]string, n)
	for i := range n {
		dsns[i], envs[i] = twoSQLiteSources(t)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = func() error {
				var db *sql.DB
				var err error
				if i%2 == 0 {
					cfg, perr := shardconf.Parse(fmt.Appendf(nil, "dataSources:\n  ds_0: {driver: sqlite, dsn: %q}\n  ds_1: {driver: sqlite, dsn: %q}\n%s",
						dsns[i][0], dsns[i][1], registrationRules))
					if perr != nil {
						return perr
					}
					db, err = Open(cfg, WithScatter())
				} else {
					db, err = OpenWith(registrationRouter(t), map[string]driver.Connector{
						"ds_0": sqliteConnector{dsns[i][0]}, "ds_1": sqliteConnector{dsns[i][1]}}, WithScatter())
				}
				if err != nil {
					return err
				}
				defer db.Close()
				for o := int64(1); o <= 6; o++ {
					if _, err := db.Exec(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)`, o, o+int64(i), "s"); err != nil {
						return err
					}
				}
				var count, sum int64
				if err := db.QueryRow(`SELECT COUNT(*), SUM(order_id) FROM t_order WHERE user_id IN (?, ?, ?, ?, ?, ?, ?, ?)`,
					1+i, 2+i, 3+i, 4+i, 5+i, 6+i, 7+i, 8+i).Scan(&count, &sum); err != nil {
					return err
				}
				if count != 6 || sum != 21 {
					return fmt.Errorf("COUNT, SUM = %d, %d; want 6, 21", count, sum)
				}
				return nil
			}()
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("database %d: %v", i, err)
			continue
		}
		var want []string
		for o := int64(1); o <= 6; o++ {
			u := o + int64(i)
			want = append(want, fmt.Sprintf("ds_%d.t_order_%d:%d/%d", u%2, o%2, o, u))
		}
		sort.Strings(want)
		if got := placement(t, envs[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("database %d: rows at\n%v\nwant\n%v", i, got, want)
		}
	}
}

// TestWithDialectOfAnUnknownValueIsADataSourceError: a Dialect value that is
// none of the constants is refused with the documented sentinel, before any
// connection.
func TestWithDialectOfAnUnknownValueIsADataSourceError(t *testing.T) {
	dsns, _ := twoSQLiteSources(t)
	h := []*hidingConnector{{c: sqliteConnector{dsns[0]}}, {c: sqliteConnector{dsns[1]}}}
	db, err := OpenWith(registrationRouter(t), map[string]driver.Connector{"ds_0": h[0], "ds_1": h[1]}, WithDialect(Dialect(99)))
	if err == nil {
		db.Close()
		t.Fatal("OpenWith with WithDialect(Dialect(99)): opened, want a refusal")
	}
	if !errors.Is(err, ErrDataSource) {
		t.Errorf("err = %v, want ErrDataSource", err)
	}
	for _, c := range h {
		if n := c.connects.Load(); n != 0 {
			t.Errorf("refused OpenWith connected %d times", n)
		}
	}
}
