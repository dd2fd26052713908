package merge

import (
	"errors"
	"fmt"
)

// Sentinels of the engine. Callers wrap them with their own refusal error
// (%w), so errors.Is finds both.
var (
	// ErrCollation: text would have to be ordered (or compared for
	// equality) by a collation the engine cannot reproduce.
	ErrCollation = errors.New("merge: text compared across shards under a collation the merge cannot reproduce; " +
		"declare a binary collation on the column (\"C\" on PostgreSQL, a *_bin collation on MySQL/MariaDB, BINARY on SQLite) " +
		"or compare with an explicit COLLATE naming one")

	// ErrUnsupportedType: values of a type whose order or equality the
	// engine cannot reproduce (PostgreSQL money, json, enum, inet,
	// arrays, SUM of intervals; MySQL JSON, ENUM, SET...) would have to be
	// ordered, compared or grouped. The error wrapping it names the column
	// and its type (see ColumnError).
	ErrUnsupportedType = errors.New("merge: values of this type cannot be ordered, compared or grouped across shards")

	// ErrTooManyGroups: grouping, DISTINCT or a distinct aggregate needs
	// more entries in memory than Plan.MaxGroups allows.
	ErrTooManyGroups = errors.New("merge: too many groups or distinct values to hold in memory")

	// ErrOverflow: a merged COUNT or integer SUM leaves the range of the
	// type the database returns it in.
	ErrOverflow = errors.New("merge: a merged aggregate overflows its type")

	// ErrDivisionByZero: a computed column divides by zero where the
	// database fails the query for it (PostgreSQL).
	ErrDivisionByZero = errors.New("merge: division by zero")

	// ErrOrder: a shard returned its rows out of the order the plan
	// compares by (the plan's collation, NULL placement or direction is
	// not the database's); the merge stops rather than interleave them
	// wrongly.
	ErrOrder = errors.New("merge: a shard's rows are not in the plan's ORDER BY order")

	// ErrPlan: the plan does not fit the shards' rows (a column index out of
	// range, shards with different columns, an aggregate without its
	// arguments...). It is a bug of the planner, never of the data.
	ErrPlan = errors.New("merge: the merge plan does not fit the shard rows")
)

// ColumnError says which result column a merge failed on. Err is one of
// the sentinels (or a value error wrapping one), so errors.Is sees through
// it.
type ColumnError struct {
	Col  int    // index in the shard rows
	Name string // the column's name in shard 0's result
	Type string // the database type name the driver reports
	Err  error
}

func (e *ColumnError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("merge: column %d (%s): %v", e.Col, e.Name, e.Err)
	}
	return fmt.Sprintf("merge: column %d (%s, type %s): %v", e.Col, e.Name, e.Type, e.Err)
}

// Unwrap returns the underlying error.
func (e *ColumnError) Unwrap() error { return e.Err }

// ShardError is an error a shard's rows returned while the merge read
// them.
type ShardError struct {
	Shard int // index in the shards given to New
	Err   error
}

func (e *ShardError) Error() string { return fmt.Sprintf("merge: shard %d: %v", e.Shard, e.Err) }

// Unwrap returns the shard's error.
func (e *ShardError) Unwrap() error { return e.Err }

func planErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPlan, fmt.Sprintf(format, args...))
}
