// Package dialectless tests sqlhook in a program that links no dialect
// compiler: it imports sqlhook but none of sqlhook/postgres,
// sqlhook/mysql, sqlhook/sqlite (sqlhook's own tests import them all).
package dialectless

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the database/sql driver only

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

const rules = `
dataSources:
  ds: {driver: sqlite, dsn: "file::memory:"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_${0..1}
      tableStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod}
  shardingAlgorithms:
    mod: {type: MOD, props: {sharding-count: 2}}
`

// countingConnector counts the connections asked of it.
type countingConnector struct{ connects int }

func (c *countingConnector) Connect(context.Context) (driver.Conn, error) {
	c.connects++
	return nil, errors.New("countingConnector: no connections")
}
func (c *countingConnector) Driver() driver.Driver { return nil }

func wantNotRegistered(t *testing.T, err error, d sqlhook.Dialect, pkg string) {
	t.Helper()
	if !errors.Is(err, sqlhook.ErrDialectNotRegistered) {
		t.Fatalf("err = %v, want ErrDialectNotRegistered", err)
	}
	var de *sqlhook.DialectNotRegisteredError
	if !errors.As(err, &de) || de.Dialect != d {
		t.Fatalf("err = %#v, want a *DialectNotRegisteredError for %v", err, d)
	}
	if want := `import _ "github.com/shardkey/shardkey/sqlhook/` + pkg + `"`; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to name %s", err, want)
	}
}

func router(t *testing.T) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOpenRefusesDialectWithoutCompiler(t *testing.T) {
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg)
	if err == nil {
		db.Close()
	}
	wantNotRegistered(t, err, sqlhook.SQLite, "sqlite")
}

func TestOpenWithRefusesDialectWithoutCompilerBeforeConnecting(t *testing.T) {
	for _, tc := range []struct {
		d   sqlhook.Dialect
		pkg string
	}{{sqlhook.PostgreSQL, "postgres"}, {sqlhook.MySQL, "mysql"}, {sqlhook.SQLite, "sqlite"}} {
		c := &countingConnector{}
		db, err := sqlhook.OpenWith(router(t), map[string]driver.Connector{"ds": c}, sqlhook.WithDialect(tc.d))
		if err == nil {
			db.Close()
		}
		wantNotRegistered(t, err, tc.d, tc.pkg)
		if c.connects != 0 {
			t.Errorf("%v: the data source was connected %d times", tc.d, c.connects)
		}
	}
}

func TestWrapRefusesDialectWithoutCompilerOnConnect(t *testing.T) {
	c := &countingConnector{}
	_, err := sqlhook.Wrap(c, router(t), sqlhook.WithDialect(sqlhook.PostgreSQL)).Connect(context.Background())
	wantNotRegistered(t, err, sqlhook.PostgreSQL, "postgres")
	if c.connects != 0 {
		t.Errorf("the data source was connected %d times", c.connects)
	}
}
