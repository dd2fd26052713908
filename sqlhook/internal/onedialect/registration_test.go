// Package onedialect tests sqlhook in a program that links one dialect's
// compiler: it imports sqlhook/sqlite and no other dialect package, while
// the PostgreSQL and MySQL drivers are registered, as in a program that
// uses SQLite through sqlhook and the other databases directly.
package onedialect

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
	_ "github.com/shardkey/shardkey/sqlhook/sqlite"
)

// server is a TCP listener standing in for a database server: it counts
// the connections made to it and answers none.
type server struct {
	ln       net.Listener
	accepted atomic.Int64
}

func listen(t *testing.T) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *server) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *server) pgDSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/test?sslmode=disable&connect_timeout=1", s.port())
}

func (s *server) mysqlDSN() string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/test?timeout=1s", s.port())
}

// noConnections fails t if any server was connected to. It waits a little
// first, so that a connection made in the background would be seen.
func noConnections(t *testing.T, servers ...*server) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	for _, s := range servers {
		if n := s.accepted.Load(); n != 0 {
			t.Errorf("the server at port %d was connected to %d times; want none", s.port(), n)
		}
	}
}

const twoSourceRules = `
dataSources:
  ds_0: {driver: %s, dsn: %q}
  ds_1: {driver: %s, dsn: %q}
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

func config(t *testing.T, driver0, dsn0, driver1, dsn1 string) *shardconf.Config {
	t.Helper()
	cfg, err := shardconf.Parse(fmt.Appendf(nil, twoSourceRules, driver0, dsn0, driver1, dsn1))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func wantNotRegistered(t *testing.T, err error, d sqlhook.Dialect, pkg string) {
	t.Helper()
	var de *sqlhook.DialectNotRegisteredError
	if !errors.Is(err, sqlhook.ErrDialectNotRegistered) || !errors.As(err, &de) || de.Dialect != d {
		t.Fatalf("err = %v, want a *DialectNotRegisteredError for %v", err, d)
	}
	if want := `import _ "github.com/shardkey/shardkey/sqlhook/` + pkg + `"`; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to name %s", err, want)
	}
}

func TestOpenRefusesSourcesOfAnUnlinkedDialectBeforeConnecting(t *testing.T) {
	for _, tc := range []struct {
		driver string
		dsn    func(*server) string
		d      sqlhook.Dialect
		pkg    string
	}{
		{"pgx", (*server).pgDSN, sqlhook.PostgreSQL, "postgres"},
		{"mysql", (*server).mysqlDSN, sqlhook.MySQL, "mysql"},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			a, b := listen(t), listen(t)
			db, err := sqlhook.Open(config(t, tc.driver, tc.dsn(a), tc.driver, tc.dsn(b)))
			if err == nil {
				db.Close()
			}
			wantNotRegistered(t, err, tc.d, tc.pkg)
			t.Logf("refused: %v", err)
			noConnections(t, a, b)
		})
	}
}

// One statement is compiled once for every data source, so sources of two
// dialects are refused whichever compilers are linked: here PostgreSQL's
// and MySQL's are not, and SQLite's is.
func TestOpenRefusesSourcesOfTwoDialectsBeforeConnecting(t *testing.T) {
	pg, my := listen(t), listen(t)
	for _, cfg := range []*shardconf.Config{
		config(t, "pgx", pg.pgDSN(), "mysql", my.mysqlDSN()),
		config(t, "mysql", my.mysqlDSN(), "pgx", pg.pgDSN()),
		config(t, "sqlite", "file:onedialect_a?mode=memory", "pgx", pg.pgDSN()),
		config(t, "pgx", pg.pgDSN(), "sqlite", "file:onedialect_b?mode=memory"),
	} {
		db, err := sqlhook.Open(cfg)
		if err == nil {
			db.Close()
			t.Errorf("%s (%s) and %s (%s): opened, want a refusal",
				cfg.DataSources[0].Name, cfg.DataSources[0].Driver, cfg.DataSources[1].Name, cfg.DataSources[1].Driver)
			continue
		}
		if !errors.Is(err, sqlhook.ErrDataSource) && !errors.Is(err, sqlhook.ErrDialectNotRegistered) {
			t.Errorf("err = %v, want ErrDataSource or ErrDialectNotRegistered", err)
		}
		t.Logf("refused: %v", err)
	}
	noConnections(t, pg, my)
}

// WithDialect names the dialect of a driver that cannot be recognised; it
// does not make a recognised PostgreSQL driver receive statements compiled
// as SQLite, the one dialect linked here.
func TestWithDialectDoesNotOverrideARecognisedDriver(t *testing.T) {
	s := listen(t)
	pc, err := pgx.ParseConfig(s.pgDSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Parse([]byte(`
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_${0..1}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: tb_mod}
  shardingAlgorithms:
    tb_mod: {type: MOD, props: {sharding-count: 2}}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn := stdlib.GetConnector(*pc)

	db, err := sqlhook.OpenWith(r, map[string]driver.Connector{"ds": conn}, sqlhook.WithDialect(sqlhook.SQLite))
	if err == nil {
		db.Close()
		t.Error("OpenWith of a pgx connector with WithDialect(SQLite): opened, want a refusal")
	} else if !errors.Is(err, sqlhook.ErrDataSource) {
		t.Errorf("OpenWith: err = %v, want ErrDataSource", err)
	} else {
		t.Logf("refused: %v", err)
	}

	if _, err := sqlhook.Wrap(conn, r, sqlhook.WithDialect(sqlhook.SQLite)).Connect(context.Background()); !errors.Is(err, sqlhook.ErrDataSource) {
		t.Errorf("Wrap of a pgx connector with WithDialect(SQLite): Connect err = %v, want ErrDataSource", err)
	}
	if _, err := sqlhook.Wrap(conn, r).Connect(context.Background()); err == nil {
		t.Error("Wrap of a pgx connector: Connect succeeded, want a refusal")
	} else {
		wantNotRegistered(t, err, sqlhook.PostgreSQL, "postgres")
	}
	noConnections(t, s)
}

// The checks above could fail: a connection attempt is counted.
func TestStandInServerCountsConnections(t *testing.T) {
	s := listen(t)
	pc, err := pgx.ParseConfig(s.pgDSN())
	if err != nil {
		t.Fatal(err)
	}
	if c, err := stdlib.GetConnector(*pc).Connect(context.Background()); err == nil {
		c.Close()
	}
	time.Sleep(50 * time.Millisecond)
	if s.accepted.Load() == 0 {
		t.Error("a pgx Connect was not counted")
	}
}
