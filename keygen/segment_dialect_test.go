package keygen_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// errHiddenDB is what every connection of hiddenDriverDB fails with.
var errHiddenDB = errors.New("no connection: the driver is a stand-in")

// hidingDriver stands for a wrapping driver (otelsql's) that keeps the
// driver it wraps to itself: its dialect cannot be told.
type hidingDriver struct{}

func (d *hidingDriver) Open(string) (driver.Conn, error) { return nil, errHiddenDB }

type hidingConnector struct{}

func (hidingConnector) Connect(context.Context) (driver.Conn, error) { return nil, errHiddenDB }
func (hidingConnector) Driver() driver.Driver                        { return &hidingDriver{} }

func hiddenDriverDB(t *testing.T) *sql.DB {
	db := sql.OpenDB(hidingConnector{})
	t.Cleanup(func() { db.Close() })
	return db
}

// TestSegmentRefusesAnUndetectableDialectNamingTheDialectProp: a *sql.DB
// whose driver cannot be told is refused before any statement, with an
// error naming the prop to set, never used in a guessed dialect.
func TestSegmentRefusesAnUndetectableDialectNamingTheDialectProp(t *testing.T) {
	_, err := keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "hidden"}, keygen.WithDB(hiddenDriverDB(t)))
	var pe *keygen.PropError
	if !errors.As(err, &pe) || !errors.Is(err, keygen.ErrInvalidProps) || pe.Key != "dialect" {
		t.Fatalf("NewID = %v; want a *PropError for key dialect matching ErrInvalidProps", err)
	}
	if errors.Is(err, errHiddenDB) {
		t.Fatalf("NewID reached the database: %v", err)
	}
}

// TestSegmentDialectPropRefusesUnknownAndUnsupportedDialects: only
// PostgreSQL and MySQL/MariaDB spellings pass.
func TestSegmentDialectPropRefusesUnknownAndUnsupportedDialects(t *testing.T) {
	for _, v := range []string{"oracle", "", "sqlite", "sqlite3", "postgres9"} {
		_, err := keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "x", "Dialect": v}, keygen.WithDB(hiddenDriverDB(t)))
		var pe *keygen.PropError
		if !errors.As(err, &pe) || pe.Key != "Dialect" || pe.Value != v {
			t.Errorf("dialect %q: NewID = %v; want a *PropError for the key as written", v, err)
		}
	}
}

// TestSegmentDialectPropIsUsedInsteadOfDetection: with the prop, the
// undetectable database passes the dialect check and SEGMENT goes on to
// create its table (which fails here only because the stand-in has no
// connection).
func TestSegmentDialectPropIsUsedInsteadOfDetection(t *testing.T) {
	for _, v := range []string{"postgres", "PostgreSQL", "pg", "pgx", "mysql", "MariaDB"} {
		_, err := keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "x", "dialect": v}, keygen.WithDB(hiddenDriverDB(t)))
		if !errors.Is(err, errHiddenDB) || !strings.Contains(err.Error(), "create table leaf_alloc") {
			t.Errorf("dialect %q: NewID = %v; want the create-table statement's connection error", v, err)
		}
	}
}
