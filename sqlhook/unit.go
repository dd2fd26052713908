package sqlhook

import (
	"database/sql/driver"

	"github.com/shardkey/shardkey/internal/merge"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// This file is the contract between the routing core (hook.go, plan*.go,
// parse_*.go) and the driver layer (connector.go, conn.go, stmt.go, tx.go,
// rows.go): the core turns one caller statement into units, the driver
// layer runs them and combines their results.

// unit is one statement for one data source.
type unit struct {
	ds   string              // data source name
	sql  string              // the statement to send, physical table names in place
	args []driver.NamedValue // its arguments, Ordinal 1..n, in placeholder order
}

// routed is a caller's statement split into units, with how to combine
// their results. A statement that reaches one unit runs as is and its
// driver.Rows / driver.Result go back to the caller unwrapped.
type routed struct {
	units []unit
	// merge tells how the rows of several units of a query form one
	// result; unused for one unit and for Exec.
	merge mergeSpec
	// passthrough: the statement references no logic table (units has
	// one entry, for the default data source, with the caller's SQL and
	// arguments untouched).
	passthrough bool
	// copies: the units write the copies of a broadcast table; the
	// caller sees one copy's result (its rows affected, its RETURNING
	// rows), as if there were one table.
	copies bool
	// txControl: SAVEPOINT, ROLLBACK TO or RELEASE; inside a transaction
	// it runs on every data source the transaction has begun on.
	txControl bool
	// write: an INSERT, UPDATE or DELETE of a logic or broadcast table;
	// under WithTwoPhaseCommit one reaching several data sources outside
	// a transaction runs in a transaction of its own (twophase_tx.go).
	write bool
	// obs: what an observer is told about the statement (WithObserver);
	// nil without one.
	obs *routeObs
}

// mergeSpec is how the rows of several units of one query combine: the
// SELECT's merge plan (nil: the rows are concatenated) bound to one
// execution's LIMIT, OFFSET and arguments.
type mergeSpec struct {
	merge   *ir.MergePlan
	dialect merge.Dialect
	offset  int64
	limit   int64               // -1: no limit
	args    []driver.NamedValue // the caller's, for HAVING's placeholders
}
