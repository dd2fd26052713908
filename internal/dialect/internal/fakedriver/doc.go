// Package fakedriver holds, in subdirectories named after real driver
// modules, stand-in drivers whose types carry those package paths, so
// that dialect detection is tested without linking any real driver.
package fakedriver

import "database/sql/driver"

// ErrNoConn is returned by every fake's Open: the fakes only have a type.
var ErrNoConn = driver.ErrBadConn
