package sqlhook

import "database/sql/driver"

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
}

// mergeSpec combines the rows of several units of one query.
//
// When aggs is non-empty every unit returns exactly one row (an aggregate
// without GROUP BY): the merged result is one row where each aggregated
// column combines the units' values and every other column takes the first
// unit's value. Otherwise the rows are concatenated in unit order, or
// k-way merged by orderBy when it is non-empty (each unit's rows already
// arrive sorted by it). Then offset rows are skipped and at most limit
// rows returned (limit < 0: no limit).
type mergeSpec struct {
	orderBy    []orderKey
	aggs       []aggCol
	offset     int64
	limit      int64
	nullsFirst bool // NULL sorts before every value in ascending order (MySQL, SQLite); PostgreSQL sorts it last
	binaryText bool // text orders bytewise (SQLite's default BINARY collation); else text ordering is refused
}

// orderKey is one ORDER BY term, found in the result columns by pos
// (0-based) when pos >= 0, else by name (case-insensitive).
type orderKey struct {
	name string
	pos  int
	desc bool
}

// aggFunc is how an aggregate column combines across units.
type aggFunc uint8

const (
	aggCount aggFunc = iota + 1 // sum of counts
	aggSum                      // sum; NULL when every unit's value is NULL
	aggMin
	aggMax
)

// aggCol is one aggregated result column, by 0-based position.
type aggCol struct {
	pos int
	fn  aggFunc
}
