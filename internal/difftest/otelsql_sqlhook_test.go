package difftest_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/XSAM/otelsql"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
	_ "github.com/shardkey/shardkey/sqlhook/mysql"
	_ "github.com/shardkey/shardkey/sqlhook/postgres"
	_ "github.com/shardkey/shardkey/sqlhook/sqlite"
)

// otelConnector opens connections of driverName through otelsql's wrapper,
// whose Driver keeps the wrapped driver to itself; it counts Connect calls.
type otelConnector struct {
	c        driver.Connector
	connects *atomic.Int64
}

func (c otelConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c.connects.Add(1)
	return c.c.Connect(ctx)
}
func (c otelConnector) Driver() driver.Driver { return c.c.Driver() }

// otelDSNConnector is the connector of a wrapped driver without
// DriverContext (modernc.org/sqlite), as sql.Open builds it.
type otelDSNConnector struct {
	drv driver.Driver
	dsn string
}

func (c otelDSNConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c otelDSNConnector) Driver() driver.Driver                        { return c.drv }

func otelWrapped(t *testing.T, driverName, dsn string, connects *atomic.Int64) driver.Connector {
	t.Helper()
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := otelsql.WrapDriver(db.Driver())
	db.Close()
	var c driver.Connector = otelDSNConnector{drv: wrapped, dsn: dsn}
	if dc, ok := wrapped.(driver.DriverContext); ok {
		if c, err = dc.OpenConnector(dsn); err != nil {
			t.Fatal(err)
		}
	}
	return otelConnector{c: c, connects: connects}
}

const otelRules = `
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

// Through a driver wrapped by XSAM/otelsql, which hides the driver it
// wraps, sqlhook cannot tell the dialect: OpenWith refuses before
// connecting and names WithDialect; with WithDialect every statement
// routes, merges and commits as over the plain driver, on each database.
// (Here rather than in sqlhook's module, so that sqlhook's users do not get
// OpenTelemetry in their module graph for one test.)
func TestOtelsqlWrappedDriverNeedsWithDialectThenRoutesEndToEnd(t *testing.T) {
	dir := t.TempDir()
	for _, b := range []struct {
		name, driver string
		d            sqlhook.Dialect
		dsn          func(t *testing.T, i int) string
		ph           func(i int) string
	}{
		{"postgres", "pgx", sqlhook.PostgreSQL, func(t *testing.T, i int) string { return dbtest.Postgres(t, fmt.Sprintf("difftest_otel_%d", i)) },
			func(i int) string { return fmt.Sprintf("$%d", i) }},
		{"mariadb", "mysql", sqlhook.MySQL, func(t *testing.T, i int) string { return dbtest.MySQL(t, fmt.Sprintf("difftest_otel_%d", i)) },
			func(int) string { return "?" }},
		{"sqlite", "sqlite", sqlhook.SQLite, func(_ *testing.T, i int) string {
			return "file:" + filepath.Join(dir, fmt.Sprintf("otel_%d.db", i)) + "?_pragma=busy_timeout(10000)"
		}, func(int) string { return "?" }},
	} {
		t.Run(b.name, func(t *testing.T) {
			var direct [2]*sql.DB
			var dsn [2]string
			for i := range 2 {
				dsn[i] = b.dsn(t, i)
				db, err := sql.Open(b.driver, dsn[i])
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				for _, tb := range []string{"t_order_0", "t_order_1"} {
					if _, err := db.Exec(`CREATE TABLE ` + tb + ` (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, amount INT)`); err != nil {
						t.Fatal(err)
					}
				}
				direct[i] = db
			}
			cfg, err := shardconf.Parse([]byte(otelRules))
			if err != nil {
				t.Fatal(err)
			}
			r, err := shardconf.NewRouter(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var connects atomic.Int64
			sources := func() map[string]driver.Connector {
				return map[string]driver.Connector{
					"ds_0": otelWrapped(t, b.driver, dsn[0], &connects), "ds_1": otelWrapped(t, b.driver, dsn[1], &connects)}
			}

			db, err := sqlhook.OpenWith(r, sources())
			if err == nil {
				db.Close()
				t.Fatal("OpenWith over otelsql without WithDialect: opened, want a refusal")
			}
			if !errors.Is(err, sqlhook.ErrDataSource) || !strings.Contains(err.Error(), "WithDialect") {
				t.Errorf("err = %v, want ErrDataSource naming WithDialect", err)
			}
			if _, err := sqlhook.Wrap(otelWrapped(t, b.driver, dsn[0], &connects), r).Connect(context.Background()); err == nil {
				t.Error("Wrap over otelsql of a two-source rule set: Connect succeeded")
			}
			if n := connects.Load(); n != 0 {
				t.Fatalf("refusals connected %d times", n)
			}

			db, err = sqlhook.OpenWith(r, sources(), sqlhook.WithDialect(b.d), sqlhook.WithScatter())
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ins := fmt.Sprintf(`INSERT INTO t_order (order_id, user_id, amount) VALUES (%s, %s, %s), (%s, %s, %s)`,
				b.ph(1), b.ph(2), b.ph(3), b.ph(4), b.ph(5), b.ph(6))
			for o := int64(1); o <= 12; o += 2 {
				if _, err := db.Exec(ins, o, o*7, o*10, o+1, (o+1)*7, (o+1)*10); err != nil {
					t.Fatal(err)
				}
			}
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(fmt.Sprintf(`UPDATE t_order SET amount = amount + 1 WHERE user_id = %s AND order_id = %s`, b.ph(1), b.ph(2)), 14, 2); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(fmt.Sprintf(`DELETE FROM t_order WHERE user_id = %s AND order_id = %s`, b.ph(1), b.ph(2)), 21, 3); err != nil {
				t.Fatal(err)
			}

			var got, want []string
			for i, d := range direct {
				for _, tb := range []string{"t_order_0", "t_order_1"} {
					rows, err := d.Query(`SELECT order_id, user_id, amount FROM ` + tb)
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
						var o, u, a int64
						if err := rows.Scan(&o, &u, &a); err != nil {
							t.Fatal(err)
						}
						got = append(got, fmt.Sprintf("ds_%d.%s:%d/%d/%d", i, tb, o, u, a))
					}
					rows.Close()
				}
			}
			for o := int64(1); o <= 12; o++ {
				if o == 3 {
					continue
				}
				a := o * 10
				if o == 2 {
					a++
				}
				want = append(want, fmt.Sprintf("ds_%d.t_order_%d:%d/%d/%d", (o*7)%2, o%2, o, o*7, a))
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("rows at\n%v\nwant\n%v", got, want)
			}

			rows, err := db.Query(`SELECT order_id, amount FROM t_order ORDER BY amount DESC LIMIT 3`)
			if err != nil {
				t.Fatal(err)
			}
			var top []string
			for rows.Next() {
				var o, a int64
				if err := rows.Scan(&o, &a); err != nil {
					t.Fatal(err)
				}
				top = append(top, fmt.Sprintf("%d:%d", o, a))
			}
			rows.Close()
			if s := strings.Join(top, " "); s != "12:120 11:110 10:100" {
				t.Errorf("merged ORDER BY LIMIT: %s", s)
			}
			var n, sum int64
			if err := db.QueryRow(`SELECT COUNT(*), SUM(amount) FROM t_order`).Scan(&n, &sum); err != nil || n != 11 || sum != 751 {
				t.Errorf("COUNT, SUM = %d, %d, %v; want 11, 751", n, sum, err)
			}
			if connects.Load() == 0 {
				t.Error("no connection went through otelsql's wrapper")
			}
		})
	}
}

// A data source behind otelsql beside one whose driver is recognised is
// not assumed to speak the recognised one's dialect: PostgreSQL beside an
// otelsql-wrapped MySQL would receive statements compiled for PostgreSQL
// (the MySQL side failing after the PostgreSQL side ran). Refused before
// anything connects, naming WithDialect.
func TestOtelsqlWrappedSourceBesideARecognisedOneNeedsWithDialect(t *testing.T) {
	cfg, err := shardconf.Parse([]byte(otelRules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var connects atomic.Int64
	pg := otelConnector{c: plainConnector(t, "pgx", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), connects: &connects}
	my := otelWrapped(t, "mysql", "root@tcp(127.0.0.1:3306)/test", &connects)
	for _, src := range []map[string]driver.Connector{{"ds_0": pg, "ds_1": my}, {"ds_0": my, "ds_1": pg}} {
		db, err := sqlhook.OpenWith(r, src)
		if err == nil {
			db.Close()
			t.Error("PostgreSQL beside otelsql-wrapped MySQL: opened, want a refusal")
			continue
		}
		if !errors.Is(err, sqlhook.ErrDataSource) || !strings.Contains(err.Error(), "WithDialect") {
			t.Errorf("err = %v, want ErrDataSource naming WithDialect", err)
		}
	}
	if db, err := sqlhook.OpenWith(r, map[string]driver.Connector{"ds_0": pg, "ds_1": my}, sqlhook.WithDialect(sqlhook.MySQL)); err == nil {
		db.Close()
		t.Error("WithDialect(MySQL) with a pgx data source: opened, want a refusal")
	}
	if n := connects.Load(); n != 0 {
		t.Errorf("refusals connected %d times", n)
	}
}

// plainConnector is driverName's own connector for dsn (no wrapper).
func plainConnector(t *testing.T, driverName, dsn string) driver.Connector {
	t.Helper()
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Driver().(driver.DriverContext).OpenConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
