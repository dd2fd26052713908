// Package driver is a stand-in for the driver of the same path (see fakedriver).
package driver

import (
	"database/sql/driver"

	"github.com/shardkey/shardkey/internal/dialect/internal/fakedriver"
)

// SQLite has the real driver's type name.
type SQLite struct{}

// Open fails: the fake has only a type.
func (*SQLite) Open(string) (driver.Conn, error) { return nil, fakedriver.ErrNoConn }
