// Package mysql is a stand-in for the driver of the same path (see fakedriver).
package mysql

import (
	"database/sql/driver"

	"github.com/shardkey/shardkey/internal/dialect/internal/fakedriver"
)

// MySQLDriver has the real driver's type name.
type MySQLDriver struct{}

// Open fails: the fake has only a type.
func (*MySQLDriver) Open(string) (driver.Conn, error) { return nil, fakedriver.ErrNoConn }
