// Package stdlib is a stand-in for the driver of the same path (see fakedriver).
package stdlib

import (
	"database/sql/driver"

	"github.com/shardkey/shardkey/internal/dialect/internal/fakedriver"
)

// Driver has the real driver's type name.
type Driver struct{}

// Open fails: the fake has only a type.
func (*Driver) Open(string) (driver.Conn, error) { return nil, fakedriver.ErrNoConn }
