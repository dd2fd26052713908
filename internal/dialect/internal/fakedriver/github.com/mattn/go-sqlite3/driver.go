// Package sqlite3 is a stand-in for the driver of the same path (see fakedriver).
package sqlite3

import (
	"database/sql/driver"

	"github.com/shardkey/shardkey/internal/dialect/internal/fakedriver"
)

// SQLiteDriver has the real driver's type name.
type SQLiteDriver struct{}

// Open fails: the fake has only a type.
func (*SQLiteDriver) Open(string) (driver.Conn, error) { return nil, fakedriver.ErrNoConn }
