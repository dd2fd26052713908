package dialect

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"

	glebarez "github.com/shardkey/shardkey/internal/dialect/internal/fakedriver/github.com/glebarez/go-sqlite"
	mysql "github.com/shardkey/shardkey/internal/dialect/internal/fakedriver/github.com/go-sql-driver/mysql"
	pgx "github.com/shardkey/shardkey/internal/dialect/internal/fakedriver/github.com/jackc/pgx/v5/stdlib"
	pq "github.com/shardkey/shardkey/internal/dialect/internal/fakedriver/github.com/lib/pq"
	mattn "github.com/shardkey/shardkey/internal/dialect/internal/fakedriver/github.com/mattn/go-sqlite3"
	ncruces "github.com/shardkey/shardkey/internal/dialect/internal/fakedriver/github.com/ncruces/go-sqlite3/driver"
	modernc "github.com/shardkey/shardkey/internal/dialect/internal/fakedriver/modernc.org/sqlite"
)

func TestParseAcceptsUsersSpellingsAndRefusesOthers(t *testing.T) {
	for in, want := range map[string]Name{
		"pgx": Postgres, "postgres": Postgres, "PostgreSQL": Postgres, " pg ": Postgres,
		"mysql": MySQL, "MariaDB": MySQL,
		"sqlite": SQLite, "SQLITE3": SQLite,
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "oracle", "postgres9", "my sql", "sqlserver"} {
		got, err := Parse(in)
		if !errors.Is(err, ErrUnknown) || got != "" {
			t.Errorf("Parse(%q) = %q, %v; want \"\" and ErrUnknown", in, got, err)
		}
	}
}

// otherDriver is a driver of this package: no known path.
type otherDriver struct{}

func (otherDriver) Open(string) (driver.Conn, error) { return nil, driver.ErrBadConn }

func TestFromDriverKnowsEachDriverByItsPackage(t *testing.T) {
	for _, c := range []struct {
		d    driver.Driver
		want Name
	}{
		{&pgx.Driver{}, Postgres},
		{&pq.Driver{}, Postgres},
		{&mysql.MySQLDriver{}, MySQL},
		{&modernc.Driver{}, SQLite},
		{&glebarez.Driver{}, SQLite},
		{&ncruces.SQLite{}, SQLite},
		{&mattn.SQLiteDriver{}, SQLite},
		{otherDriver{}, ""},
		{nil, ""},
	} {
		if got := FromDriver(c.d); got != c.want {
			t.Errorf("FromDriver(%T) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestFromPkgPathMatchesWholePathElements(t *testing.T) {
	for p, want := range map[string]Name{
		"github.com/jackc/pgx/v5/stdlib":              Postgres,
		"github.com/jackc/pgx/v4/stdlib":              Postgres,
		"github.com/lib/pq":                           Postgres,
		"github.com/go-sql-driver/mysql":              MySQL,
		"modernc.org/sqlite":                          SQLite,
		"github.com/glebarez/go-sqlite":               SQLite,
		"github.com/ncruces/go-sqlite3/driver":        SQLite,
		"github.com/mattn/go-sqlite3":                 SQLite,
		"example.com/app/vendor/github.com/lib/pq":    Postgres,
		"github.com/lib/pqx":                          "",
		"github.com/jackc/pgxpool":                    "",
		"github.com/XSAM/otelsql":                     "",
		"github.com/go-sql-driver/mysqlproxy":         "",
		"github.com/shardkey/shardkey/sqlhook":        "",
		"":                                            "",
		"modernc.org/sqlite3":                         "",
		"github.com/notmattn/github.com/mattn/go-sql": "",
	} {
		if got := fromPkgPath(p); got != want {
			t.Errorf("fromPkgPath(%q) = %q, want %q", p, got, want)
		}
	}
}

// unwrapper exposes the driver it wraps through Unwrap.
type unwrapper struct{ inner driver.Driver }

func (u *unwrapper) Open(n string) (driver.Conn, error) { return u.inner.Open(n) }
func (u *unwrapper) Unwrap() driver.Driver              { return u.inner }

// embedder exposes it as an exported embedded field.
type embedder struct{ driver.Driver }

// hider keeps it in an unexported field, as otelsql does.
type hider struct{ inner driver.Driver }

func (h *hider) Open(n string) (driver.Conn, error) { return h.inner.Open(n) }

// selfish unwraps to itself forever.
type selfish struct{}

func (s *selfish) Open(string) (driver.Conn, error) { return nil, driver.ErrBadConn }
func (s *selfish) Unwrap() driver.Driver            { return s }

func TestFromDriverLooksThroughWrappersThatExposeTheWrappedDriver(t *testing.T) {
	for name, c := range map[string]struct {
		d    driver.Driver
		want Name
	}{
		"Unwrap method":            {&unwrapper{&pq.Driver{}}, Postgres},
		"embedded field":           {embedder{&mysql.MySQLDriver{}}, MySQL},
		"embedded through pointer": {&embedder{&modernc.Driver{}}, SQLite},
		"wrappers nested":          {&unwrapper{embedder{&unwrapper{&pgx.Driver{}}}}, Postgres},
		"hidden wrapped driver":    {&hider{&pq.Driver{}}, ""},
		"exposes a hiding wrapper": {embedder{&hider{&mysql.MySQLDriver{}}}, ""},
		"Unwrap returns nil":       {&unwrapper{}, ""},
		"embedded nil":             {embedder{}, ""},
		"Unwrap returns itself":    {&selfish{}, ""},
		"nil pointer of a wrapper": {(*hider)(nil), ""},
		"known beyond the unwraps": {deep(maxUnwrap, &pq.Driver{}), ""},
		"known within the unwraps": {deep(maxUnwrap-1, &pq.Driver{}), Postgres},
	} {
		if got := FromDriver(c.d); got != c.want {
			t.Errorf("%s: FromDriver(%T) = %q, want %q", name, c.d, got, c.want)
		}
	}
}

func deep(n int, d driver.Driver) driver.Driver {
	for range n {
		d = &unwrapper{d}
	}
	return d
}

// connector opens nothing; sql.OpenDB reports its driver.
type connector struct{ d driver.Driver }

func (c connector) Connect(context.Context) (driver.Conn, error) { return nil, driver.ErrBadConn }
func (c connector) Driver() driver.Driver                        { return c.d }

func TestFromDBReadsTheDBsDriver(t *testing.T) {
	db := sql.OpenDB(connector{&unwrapper{&mattn.SQLiteDriver{}}})
	defer db.Close()
	if got := FromDB(db); got != SQLite {
		t.Errorf("FromDB = %q, want %q", got, SQLite)
	}
	hidden := sql.OpenDB(connector{&hider{&pq.Driver{}}})
	defer hidden.Close()
	if got := FromDB(hidden); got != "" {
		t.Errorf("FromDB of a hidden driver = %q, want \"\"", got)
	}
	if got := FromDB(nil); got != "" {
		t.Errorf("FromDB(nil) = %q, want \"\"", got)
	}
}
