package bench

// sqlhook benchmarks.
//
// BenchmarkSQLHookRouting measures what a sharding layer adds to one
// statement, on a driver that answers instantly (nopDriver), so that
// nothing but the layer's own work differs between the sides:
//
//	impl=direct        database/sql straight on nopDriver
//	impl=sqlhook       database/sql on sqlhook.Wrap(nopDriver), cached plan
//	impl=gorm          GORM Raw(...).Rows() / Exec on nopDriver
//	impl=gormsharding  the same with gorm.io/sharding registered for the table
//
// sqlhook's cost per statement is sqlhook - direct; gorm.io/sharding's is
// gormsharding - gorm. BenchmarkSQLHookParse is the uncached cost (plan
// cache off: parse, plan, route, render). BenchmarkSQLHookPostgres runs the
// same statements through pgx stdlib with and without sqlhook against the
// loopback PostgreSQL.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/sharding"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// nopDriver accepts every statement and returns no rows.
type nopDriver struct{}

func (nopDriver) Open(string) (driver.Conn, error) { return nopConn{}, nil }

type nopConnector struct{}

func (nopConnector) Connect(context.Context) (driver.Conn, error) { return nopConn{}, nil }
func (nopConnector) Driver() driver.Driver                        { return nopDriver{} }

type nopConn struct{}

func (nopConn) Prepare(string) (driver.Stmt, error) { return nopStmt{}, nil }
func (nopConn) Close() error                        { return nil }
func (nopConn) Begin() (driver.Tx, error)           { return nopTx{}, nil }
func (nopConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &nopRows{}, nil
}
func (nopConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	return driver.RowsAffected(1), nil
}

type nopStmt struct{}

func (nopStmt) Close() error                               { return nil }
func (nopStmt) NumInput() int                              { return -1 }
func (nopStmt) Exec([]driver.Value) (driver.Result, error) { return driver.RowsAffected(1), nil }
func (nopStmt) Query([]driver.Value) (driver.Rows, error)  { return &nopRows{}, nil }

type nopTx struct{}

func (nopTx) Commit() error   { return nil }
func (nopTx) Rollback() error { return nil }

type nopRows struct{}

func (*nopRows) Columns() []string              { return []string{"id", "status"} }
func (*nopRows) Close() error                   { return nil }
func (*nopRows) Next(dest []driver.Value) error { return io.EOF }

// routingRules: t_order in four tables of one data source by order_id.
const routingRules = `
dataSources:
  ds: {driver: %s, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_${0..3}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod4}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snow}
  shardingAlgorithms:
    mod4: {type: MOD, props: {sharding-count: 4}}
  keyGenerators:
    snow: {type: SNOWFLAKE, props: {worker-id: 9, max-vibration-offset: 0}}
`

func routingRouter(tb testing.TB, driverName, dsn string) *shardconf.Router {
	tb.Helper()
	cfg, err := shardconf.Parse(fmt.Appendf(nil, routingRules, driverName, dsn))
	if err != nil {
		tb.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// The statements, in MySQL's spelling (gorm.io/sharding parses MySQL-ish
// SQL with ? placeholders; sqlhook is told the dialect).
const (
	pointSelect  = "SELECT id, status FROM t_order WHERE order_id = ?"
	singleInsert = "INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)"
)

func runStatement(b *testing.B, stmt string, query func(id int64) error, exec func(id int64) error) {
	var id atomic.Int64
	id.Store(1 << 40)
	b.ReportAllocs()
	for b.Loop() {
		n := id.Add(1)
		var err error
		if stmt == "select" {
			err = query(n)
		} else {
			err = exec(n)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

func sqlQuery(db *sql.DB) func(int64) error {
	return func(id int64) error {
		rows, err := db.QueryContext(context.Background(), pointSelect, id)
		if err != nil {
			return err
		}
		return rows.Close()
	}
}

func sqlExec(db *sql.DB) func(int64) error {
	return func(id int64) error {
		_, err := db.ExecContext(context.Background(), singleInsert, id, 7, "new")
		return err
	}
}

func gormQuery(db *gorm.DB) func(int64) error {
	return func(id int64) error {
		rows, err := db.Raw(pointSelect, id).Rows()
		if err != nil {
			return err
		}
		return rows.Close()
	}
}

func gormExec(db *gorm.DB) func(int64) error {
	return func(id int64) error { return db.Exec(singleInsert, id, 7, "new").Error }
}

func openGormNop(tb testing.TB, shard bool) *gorm.DB { return openGormOn(tb, nopConnector{}, shard) }

func openGormOn(tb testing.TB, c driver.Connector, shard bool) *gorm.DB {
	tb.Helper()
	sqlDB := sql.OpenDB(c)
	db, err := gorm.Open(gormmysql.New(gormmysql.Config{Conn: sqlDB, SkipInitializeWithVersion: true}),
		&gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true})
	if err != nil {
		tb.Fatal(err)
	}
	if shard {
		if err := db.Use(sharding.Register(sharding.Config{
			ShardingKey:         "order_id",
			NumberOfShards:      4,
			PrimaryKeyGenerator: sharding.PKSnowflake,
		}, "t_order")); err != nil {
			tb.Fatal(err)
		}
	}
	return db
}

func BenchmarkSQLHookRouting(b *testing.B) {
	for _, stmt := range []string{"select", "insert"} {
		b.Run("stmt="+stmt, func(b *testing.B) {
			b.Run("impl=direct", func(b *testing.B) {
				db := sql.OpenDB(nopConnector{})
				defer db.Close()
				runStatement(b, stmt, sqlQuery(db), sqlExec(db))
			})
			b.Run("impl=sqlhook", func(b *testing.B) {
				db := sql.OpenDB(sqlhook.Wrap(nopConnector{}, routingRouter(b, "mysql", "nop"), sqlhook.WithDialect(sqlhook.MySQL)))
				defer db.Close()
				runStatement(b, stmt, sqlQuery(db), sqlExec(db))
			})
			b.Run("impl=gorm", func(b *testing.B) {
				db := openGormNop(b, false)
				runStatement(b, stmt, gormQuery(db), gormExec(db))
			})
			b.Run("impl=gormsharding", func(b *testing.B) {
				db := openGormNop(b, true)
				runStatement(b, stmt, gormQuery(db), gormExec(db))
			})
		})
	}
}

// BenchmarkSQLHookParse: a new statement text each op defeats nothing but
// the cache; WithPlanCacheSize(0) turns it off instead, so every op parses,
// plans, routes and renders the same text.
func BenchmarkSQLHookParse(b *testing.B) {
	for _, d := range []struct {
		name    string
		dialect sqlhook.Dialect
		sel     string
	}{
		{"postgresql", sqlhook.PostgreSQL, "SELECT id, status FROM t_order WHERE order_id = $1"},
		{"mysql", sqlhook.MySQL, pointSelect},
		{"sqlite", sqlhook.SQLite, pointSelect},
	} {
		b.Run("dialect="+d.name, func(b *testing.B) {
			db := sql.OpenDB(sqlhook.Wrap(nopConnector{}, routingRouter(b, "mysql", "nop"),
				sqlhook.WithDialect(d.dialect), sqlhook.WithPlanCacheSize(0)))
			defer db.Close()
			var id int64 = 1 << 40
			b.ReportAllocs()
			for b.Loop() {
				id++
				rows, err := db.QueryContext(context.Background(), d.sel, id)
				if err != nil {
					b.Fatal(err)
				}
				rows.Close()
			}
		})
	}
}

// BenchmarkSQLHookPostgres: the same point SELECT and single-row INSERT
// (key from the same generator on both sides) through pgx stdlib, with
// and without sqlhook, on the loopback PostgreSQL.
func BenchmarkSQLHookPostgres(b *testing.B) {
	dsn := dbtest.Postgres(b, "bench_sqlhook")
	setup, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close()
	for i := range 4 {
		if _, err := setup.Exec(fmt.Sprintf(`CREATE TABLE t_order_%d (order_id BIGINT PRIMARY KEY, user_id BIGINT, status TEXT)`, i)); err != nil {
			b.Fatal(err)
		}
	}
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "11"})
	if err != nil {
		b.Fatal(err)
	}
	// Rows to read: one per table.
	var keys [4]int64
	for i := range keys {
		for {
			id, err := gen.NextID(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if id%4 == int64(i) {
				keys[i] = id
				break
			}
		}
		if _, err := setup.Exec(fmt.Sprintf(`INSERT INTO t_order_%d VALUES ($1, 1, 'x')`, i), keys[i]); err != nil {
			b.Fatal(err)
		}
	}
	connector := func() driver.Connector {
		c, err := stdlib.GetDefaultDriver().(driver.DriverContext).OpenConnector(dsn)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	for _, stmt := range []string{"select", "insert"} {
		b.Run("stmt="+stmt, func(b *testing.B) {
			for _, impl := range []string{"pgx", "sqlhook"} {
				b.Run("impl="+impl, func(b *testing.B) {
					var db *sql.DB
					table := func(id int64) string { return fmt.Sprintf("t_order_%d", id%4) }
					if impl == "sqlhook" {
						db = sql.OpenDB(sqlhook.Wrap(connector(), routingRouter(b, "pgx", "unused")))
						table = func(int64) string { return "t_order" }
					} else {
						db = sql.OpenDB(connector())
					}
					defer db.Close()
					db.SetMaxIdleConns(4)
					ctx := context.Background()
					var i int
					b.ReportAllocs()
					for b.Loop() {
						i++
						if stmt == "select" {
							k := keys[i%4]
							var st string
							if err := db.QueryRowContext(ctx, "SELECT status FROM "+table(k)+" WHERE order_id = $1", k).Scan(&st); err != nil {
								b.Fatal(err)
							}
							continue
						}
						id, err := gen.NextID(ctx)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := db.ExecContext(ctx, "INSERT INTO "+table(id)+" (order_id, user_id, status) VALUES ($1, $2, $3)", id, 7, "new"); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// TestSQLHookBenchStatementsRoute checks the benchmarked statements do
// what the benchmark says on each side.
func TestSQLHookBenchStatementsRoute(t *testing.T) {
	var seen []string
	rec := recordingConnector{seen: &seen}
	db := sql.OpenDB(sqlhook.Wrap(rec, routingRouter(t, "mysql", "nop"), sqlhook.WithDialect(sqlhook.MySQL)))
	defer db.Close()
	if err := sqlExec(db)(6); err != nil {
		t.Fatal(err)
	}
	if err := sqlQuery(db)(5); err != nil {
		t.Fatal(err)
	}
	want := "INSERT INTO `t_order_2` (order_id, user_id, status) VALUES (?, ?, ?)|SELECT id, status FROM `t_order_1` WHERE order_id = ?"
	if got := strings.Join(seen, "|"); got != want {
		t.Errorf("sqlhook sent %s\nwant %s", got, want)
	}
	seen = nil
	gdb := openGormOn(t, rec, true)
	if err := gormQuery(gdb)(5); err != nil {
		t.Fatal(err)
	}
	if err := gormExec(gdb)(6); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || !strings.Contains(seen[0], "t_order_1") || !strings.Contains(seen[1], "t_order_2") {
		t.Errorf("gorm.io/sharding sent %q", seen)
	}
}

type recordingConnector struct{ seen *[]string }

func (r recordingConnector) Connect(context.Context) (driver.Conn, error) {
	return recordingConn(r), nil
}
func (recordingConnector) Driver() driver.Driver { return nopDriver{} }

type recordingConn struct{ seen *[]string }

func (recordingConn) Prepare(string) (driver.Stmt, error) { return nopStmt{}, nil }
func (recordingConn) Close() error                        { return nil }
func (recordingConn) Begin() (driver.Tx, error)           { return nopTx{}, nil }
func (c recordingConn) QueryContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	*c.seen = append(*c.seen, q)
	return &nopRows{}, nil
}
func (c recordingConn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	*c.seen = append(*c.seen, q)
	return driver.RowsAffected(1), nil
}
