package sqlhook

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
)

// embeddingDriver wraps a driver the way qustavo/sqlhooks does: the
// wrapped one is an embedded, exported driver.Driver.
type embeddingDriver struct{ driver.Driver }

// hidingDriver wraps a driver and keeps it to itself, as otelsql does.
type hidingDriver struct{ d driver.Driver }

func (h hidingDriver) Open(name string) (driver.Conn, error) { return h.d.Open(name) }

type driverConnector struct{ d driver.Driver }

func (c driverConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open("") }
func (c driverConnector) Driver() driver.Driver                        { return c.d }

func TestDialectDetectedThroughWrappingDriverOrGivenExplicitly(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	sqliteDriver := db.Driver()
	db.Close()
	if d, _ := detectDialect(driverConnector{sqliteDriver}); d != SQLite {
		t.Errorf("the SQLite driver: %v, want sqlite", d)
	}
	if d, _ := detectDialect(driverConnector{embeddingDriver{sqliteDriver}}); d != SQLite {
		t.Errorf("a wrapper embedding the SQLite driver: %v, want sqlite", d)
	}
	hidden := map[string]driver.Connector{"ds": driverConnector{hidingDriver{sqliteDriver}}}
	if _, err := pickDialect(DialectAuto, hidden, []string{"ds"}, "ds"); err == nil {
		t.Error("a wrapper hiding the driver: detected a dialect, want a refusal asking for WithDialect")
	}
	if d, err := pickDialect(SQLite, hidden, []string{"ds"}, "ds"); err != nil || d != SQLite {
		t.Errorf("WithDialect(SQLite) over a hiding wrapper: %v, %v", d, err)
	}
}

// A data source whose driver cannot be recognised is never assumed to
// speak the dialect of the others: without WithDialect it is refused,
// naming it; and WithDialect never overrides a driver it recognises.
func TestUnrecognisedDriverOfAnyDataSourceNeedsWithDialect(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	sqliteDriver := db.Driver()
	db.Close()
	src := map[string]driver.Connector{
		"ds_0": driverConnector{sqliteDriver},
		"ds_1": driverConnector{hidingDriver{sqliteDriver}},
	}
	names := []string{"ds_0", "ds_1"}
	_, err = pickDialect(DialectAuto, src, names, "ds_0")
	if !errors.Is(err, ErrDataSource) || !strings.Contains(err.Error(), "ds_1") || !strings.Contains(err.Error(), "WithDialect") {
		t.Errorf("an unrecognised non-default driver: %v, want a refusal naming ds_1 and WithDialect", err)
	}
	if d, err := pickDialect(SQLite, src, names, "ds_0"); err != nil || d != SQLite {
		t.Errorf("WithDialect(SQLite): %v, %v", d, err)
	}
	_, err = pickDialect(MySQL, src, names, "ds_0")
	if !errors.Is(err, ErrDataSource) || !strings.Contains(err.Error(), "WithDialect(mysql)") || !strings.Contains(err.Error(), "ds_0") {
		t.Errorf("WithDialect(MySQL) over a SQLite driver: %v, want a refusal naming WithDialect(mysql) and ds_0", err)
	}
}
