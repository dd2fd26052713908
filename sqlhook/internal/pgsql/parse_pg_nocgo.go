//go:build !cgo

package pgsql

import pgwasm "github.com/wasilibs/go-pgquery"

// Without cgo, the same libpg_query runs as WebAssembly under wazero
// (pure Go): the first parse in a process compiles the module (about 1 s
// on the development machine), later ones take about 90 µs. Plans are
// cached, so this is paid once per statement text.
var (
	Parse  = pgwasm.Parse
	pgScan = pgwasm.Scan
)
