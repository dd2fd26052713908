package shardconf

import (
	"errors"
	"fmt"
	"sort"
)

// Sentinel errors of routing. Test with errors.Is.
var (
	// ErrMissingShardingKey: a sharding column of the table's strategies has
	// no condition, so the statement could reach several targets. Use
	// Scatter to opt in to all of them.
	ErrMissingShardingKey = errors.New("shardconf: missing sharding key")
	// ErrNoRoute: a sharding value maps to a target that does not exist
	// (e.g. Java's -3 % 2 = -1 in an INLINE expression), or is NULL.
	ErrNoRoute = errors.New("shardconf: no route")
	// ErrUnknownTable: the table is not in the rules and there is no
	// single data source to hold it.
	ErrUnknownTable = errors.New("shardconf: unknown table")
	// ErrInvalidConfig: a rule file or Config cannot be used. Matched by
	// *ConfigError.
	ErrInvalidConfig = errors.New("shardconf: invalid config")
	// ErrShardingKeyChange: a write assigns a sharding column a value that
	// routes elsewhere than the row's current table (an UPDATE's SET, an
	// upsert's update part, GORM's Save or Updates). The row would stay in
	// a table its new value does not route to, so the write is refused;
	// delete the row and insert it again instead. Assigning a value that
	// routes to the same single target is allowed, as ShardingSphere
	// allows it. Matched by *RouteError with Table and Column set.
	ErrShardingKeyChange = errors.New("shardconf: sharding key change")
	// ErrUnusedHint: a Hint (WithHint) gives values for a strategy of the
	// table that is not a hint strategy, or for a table the rules do not
	// shard. ShardingSphere ignores such a hint; shardkey refuses the
	// statement, because the caller asked for a route the rules cannot
	// give and running it where the SQL routes could touch other rows than
	// the caller meant. Matched by *RouteError with Table and Hint set.
	ErrUnusedHint = errors.New("shardconf: hint not used by the table's strategies")
)

// ConfigError is one problem in a rule file, with its position. Load,
// Parse and NewRouter report every problem they find, joined with
// errors.Join.
type ConfigError struct {
	File   string // "" for Parse without a file name
	Line   int    // 1-based; 0 when unknown
	Column int    // 1-based; 0 when unknown
	Path   string // YAML path, e.g. rules[0].tables.t_order.actualDataNodes
	Msg    string
	Err    error // the underlying error, if any
}

func (e *ConfigError) Error() string {
	loc := e.File
	if loc == "" {
		loc = "rules"
	}
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", loc, e.Line, e.Column)
	}
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Is reports whether target is ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

// RouteError explains a routing failure; it matches ErrMissingShardingKey,
// ErrNoRoute, ErrUnknownTable, ErrShardingKeyChange or ErrUnusedHint with
// errors.Is.
type RouteError struct {
	Table  string
	Column string // the sharding column concerned, if any
	Value  string // the value concerned, if any
	Target string // the target name the value mapped to, if any
	// Hint is the hint strategy concerned, "database" or "table" (with
	// " (*)" for a hint given for AllTables), if any.
	Hint string
	Err  error // the sentinel
}

func (e *RouteError) Error() string {
	msg := fmt.Sprintf("%v: table %s", e.Err, e.Table)
	if e.Column != "" {
		msg += ", column " + e.Column
	}
	if e.Hint != "" {
		msg += ", " + e.Hint + " hint"
		switch {
		case errors.Is(e.Err, ErrMissingShardingKey):
			msg += " (the strategy routes by hint: give one with shardconf.WithHint)"
		case errors.Is(e.Err, ErrUnusedHint):
			msg += " (the table has no such hint strategy; shardkey refuses a hint rather than ignore it)"
		}
	}
	if e.Value != "" {
		msg += ", value " + e.Value
	}
	if e.Target != "" {
		msg += fmt.Sprintf(" (maps to %q, which is not among the table's data nodes)", e.Target)
	}
	return msg
}

// Unwrap returns the sentinel.
func (e *RouteError) Unwrap() error { return e.Err }

// joinErrors joins problems in file order, each reported once.
func joinErrors(errs []error) error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	line := func(e error) (int, int) {
		var ce *ConfigError
		if errors.As(e, &ce) {
			return ce.Line, ce.Column
		}
		return 0, 0
	}
	sort.SliceStable(out, func(i, j int) bool {
		li, ci := line(out[i])
		lj, cj := line(out[j])
		return li < lj || (li == lj && ci < cj)
	})
	return errors.Join(out...)
}
