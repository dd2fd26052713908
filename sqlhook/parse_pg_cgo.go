//go:build cgo

package sqlhook

import pg "github.com/pganalyze/pg_query_go/v6"

// With cgo, libpg_query runs natively (about 27 µs to parse a point
// SELECT on the development machine; plans are cached, so this is paid
// once per statement text).
var (
	pgParse = pg.Parse
	pgScan  = pg.Scan
)
