//go:build cgo

package pgsql

import pg "github.com/pganalyze/pg_query_go/v6"

// With cgo, libpg_query runs natively (about 27 µs to parse a point
// SELECT on the development machine; plans are cached, so this is paid
// once per statement text).
var (
	Parse  = pg.Parse
	pgScan = pg.Scan
)
