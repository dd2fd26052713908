package workerlease

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
)

// errHiddenConn is what every connection of hiddenDB fails with.
var errHiddenConn = errors.New("stand-in driver: no connection")

// hidingDriver stands for a wrapping driver (otelsql's) that keeps the
// driver it wraps to itself, so its dialect cannot be told.
type hidingDriver struct{}

func (*hidingDriver) Open(string) (driver.Conn, error) { return nil, errHiddenConn }

type hidingConnector struct{}

func (hidingConnector) Connect(context.Context) (driver.Conn, error) { return nil, errHiddenConn }
func (hidingConnector) Driver() driver.Driver                        { return &hidingDriver{} }

func hiddenDB(t *testing.T) *sql.DB {
	db := sql.OpenDB(hidingConnector{})
	t.Cleanup(func() { db.Close() })
	return db
}

// newBoth runs New and NewDisposable with one DB and dialect.
func newBoth(t *testing.T, db *sql.DB, d Dialect) map[string]error {
	ctx := context.Background()
	_, errNew := New(ctx, Config{DB: db, Dialect: d})
	_, errDisp := NewDisposable(ctx, DisposableConfig{DB: db, Dialect: d})
	return map[string]error{"Config": errNew, "DisposableConfig": errDisp}
}

// TestUndetectableDriverIsRefusedNamingTheDialectField: no statement is
// sent in a guessed dialect; the error says which field to set.
func TestUndetectableDriverIsRefusedNamingTheDialectField(t *testing.T) {
	checkLeaks(t)
	for cfg, err := range newBoth(t, hiddenDB(t), Detect) {
		if !errors.Is(err, ErrUnknownDialect) || errors.Is(err, errHiddenConn) || !strings.Contains(err.Error(), "set "+cfg+".Dialect") {
			t.Errorf("%s: %v; want ErrUnknownDialect naming %s.Dialect, before any connection", cfg, err, cfg)
		}
	}
}

// TestDialectSetIsUsedWhenTheDriverCannotBeTold: with the dialect set the
// sources go on to create their tables (failing here only for want of a
// connection).
func TestDialectSetIsUsedWhenTheDriverCannotBeTold(t *testing.T) {
	checkLeaks(t)
	for _, d := range []Dialect{PostgreSQL, MySQL} {
		for cfg, err := range newBoth(t, hiddenDB(t), d) {
			if !errors.Is(err, errHiddenConn) {
				t.Errorf("%s.Dialect %v: %v; want the connection's error", cfg, d, err)
			}
		}
	}
}

// TestDialectOutsideTheConstantsIsRefused: NewDisposable too, which took
// any value but MySQL for PostgreSQL.
func TestDialectOutsideTheConstantsIsRefused(t *testing.T) {
	checkLeaks(t)
	for cfg, err := range newBoth(t, hiddenDB(t), Dialect(7)) {
		if !errors.Is(err, ErrUnknownDialect) || errors.Is(err, errHiddenConn) {
			t.Errorf("%s.Dialect 7: %v; want ErrUnknownDialect before any connection", cfg, err)
		}
	}
}

// TestDialectContradictingTheDriverIsRefused: a dialect set against a
// recognised driver is a mistake, not an override.
func TestDialectContradictingTheDriverIsRefused(t *testing.T) {
	checkLeaks(t)
	for driverName, wrong := range map[string]Dialect{"pgx": MySQL, "mysql": PostgreSQL} {
		db, err := sql.Open(driverName, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for cfg, err := range newBoth(t, db, wrong) {
			if err == nil || !strings.Contains(err.Error(), cfg+".Dialect is "+wrong.String()+" but driver") {
				t.Errorf("%s: %s.Dialect %v: %v; want a contradiction error", driverName, cfg, wrong, err)
			}
		}
	}
}
