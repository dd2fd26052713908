// Package dialect tells which SQL dialect a database/sql driver speaks. It
// is the one place in shardkey that recognises drivers: SEGMENT (keygen),
// workerlease and sqlhook ask it, and each of them also takes an explicit
// dialect that is used instead, since a driver wrapped by a package that
// keeps the wrapped driver to itself (otelsql, for one) cannot be
// recognised.
//
// Detection reads the package path of the driver's type; nothing is
// imported, so no driver is linked in. Known packages:
//
//   - PostgreSQL: github.com/jackc/pgx (any major version), github.com/lib/pq
//   - MySQL and MariaDB: github.com/go-sql-driver/mysql
//   - SQLite: modernc.org/sqlite, github.com/glebarez/go-sqlite,
//     github.com/ncruces/go-sqlite3, github.com/mattn/go-sqlite3
//
// A wrapping driver is looked through when it exposes the driver it wraps,
// either by a method
//
//	Unwrap() driver.Driver
//
// or by embedding driver.Driver as an exported field (as qustavo/sqlhooks's
// Driver does). XSAM/otelsql's driver keeps it in an unexported field.
package dialect

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Name is a SQL dialect; the empty Name is "unknown".
type Name string

// The dialects shardkey speaks.
const (
	Postgres Name = "postgres"
	// MySQL is MySQL and MariaDB.
	MySQL  Name = "mysql"
	SQLite Name = "sqlite"
)

// Accepted lists the spellings Parse accepts, for error messages that tell
// users what to write.
const Accepted = "postgres (or postgresql, pg, pgx), mysql (or mariadb), sqlite (or sqlite3)"

// ErrUnknown is wrapped by Parse's error for a spelling it does not know.
var ErrUnknown = errors.New("unknown SQL dialect")

// Parse reads a dialect as users write it, ignoring case and surrounding
// space: pgx, postgres, postgresql or pg; mysql or mariadb; sqlite or
// sqlite3. Anything else, "" included, is an error wrapping ErrUnknown.
func Parse(s string) (Name, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "pgx", "postgres", "postgresql", "pg":
		return Postgres, nil
	case "mysql", "mariadb":
		return MySQL, nil
	case "sqlite", "sqlite3":
		return SQLite, nil
	}
	return "", fmt.Errorf("%w %q (want %s)", ErrUnknown, s, Accepted)
}

// known maps a driver's module path to its dialect.
var known = []struct {
	path string
	name Name
}{
	{"github.com/jackc/pgx", Postgres},
	{"github.com/lib/pq", Postgres},
	{"github.com/go-sql-driver/mysql", MySQL},
	{"modernc.org/sqlite", SQLite},
	{"github.com/glebarez/go-sqlite", SQLite},
	{"github.com/ncruces/go-sqlite3", SQLite},
	{"github.com/mattn/go-sqlite3", SQLite},
}

// maxUnwrap bounds the wrappers looked through, against a wrapper that
// returns itself.
const maxUnwrap = 8

var driverType = reflect.TypeFor[driver.Driver]()

// FromDriver tells d's dialect from the package of its type, looking
// through wrappers that expose the driver they wrap. It returns "" when it
// cannot tell: callers then need an explicit dialect, never a guess.
func FromDriver(d driver.Driver) Name {
	for range maxUnwrap {
		if d == nil {
			return ""
		}
		if n := fromPkgPath(pkgPath(reflect.TypeOf(d))); n != "" {
			return n
		}
		d = unwrap(d)
	}
	return ""
}

// FromDB tells the dialect of db's driver (FromDriver); "" when db is nil
// or the driver is not recognised.
func FromDB(db *sql.DB) Name {
	if db == nil {
		return ""
	}
	return FromDriver(db.Driver())
}

func pkgPath(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	return t.PkgPath()
}

// fromPkgPath matches whole path elements, so github.com/lib/pqx is not
// lib/pq; the module may sit under a prefix (a GOPATH vendor directory).
func fromPkgPath(p string) Name {
	if p == "" {
		return ""
	}
	p = "/" + p + "/"
	for _, k := range known {
		if strings.Contains(p, "/"+k.path+"/") {
			return k.name
		}
	}
	return ""
}

// unwrap returns the driver d exposes as the one it wraps, or nil.
func unwrap(d driver.Driver) driver.Driver {
	if u, ok := d.(interface{ Unwrap() driver.Driver }); ok {
		return u.Unwrap()
	}
	v := reflect.ValueOf(d)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous && f.IsExported() && f.Type == driverType {
			inner, _ := v.Field(i).Interface().(driver.Driver)
			return inner
		}
	}
	return nil
}
