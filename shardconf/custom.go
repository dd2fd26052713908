package shardconf

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Go sharding algorithms.
//
// RegisterAlgorithm and RegisterComplexAlgorithm add an algorithm type
// written in Go. A rule file names it as it names a built-in
// (type: TENANT_HASH), or, written for ShardingSphere, as a CLASS_BASED
// algorithm whose algorithmClassName is the name it was registered under:
//
//	shardingAlgorithms:
//	  by_tenant:
//	    type: CLASS_BASED
//	    props:
//	      strategy: STANDARD            # COMPLEX or HINT as the strategy using it
//	      algorithmClassName: org.example.TenantAlgorithm
//
// loads once the Go side has called
// RegisterAlgorithm("org.example.TenantAlgorithm", newTenantAlgorithm).
// Names compare case-insensitively (as type: does), so a rule file's
// spelling of the class name need not match the registration's case.
//
// The registry is process-wide and safe for concurrent use. Register at
// start-up (an init function, as database/sql drivers do), before the
// NewRouter that compiles files naming the type: NewRouter resolves every
// name when it compiles, and a name it cannot resolve is a load error.

// ShardingValue is the value an algorithm routes: one sharding column's
// value in a statement (an equality, one IN list element, an INSERT's
// value) or one hint value.
//
// Value is normalised exactly as the router normalises every value (see
// Cond), so an algorithm switches on four Go types only:
//
//   - int64 for every integer that fits int64, whatever carried it: any Go
//     integer type, keygen.ID, named integer types, *big.Int, json.Number,
//     an integral float strictly within ±2^53, a driver.Valuer giving one
//     (sql.NullInt64);
//   - uint64 for an integer above math.MaxInt64 that fits 64 bits;
//   - string for a string, []byte, a named string type, a fmt.Stringer;
//     text is passed as it is (a decimal string stays a string: parse it if
//     the column is numeric);
//   - time.Time, as given (its wall clock in its own location), without
//     a monotonic clock reading (time.Now()'s), which would make one
//     instant print and compare (==) differently from call to call.
//
// Never nil and never a float: NULL, NaN, ±Inf, a float with a fraction
// and numbers beyond 64 bits are refused before the algorithm is called.
type ShardingValue struct {
	// Table is the logic table the statement names.
	Table string
	// Column is the sharding column, in lower case; "" for a hint value.
	Column string
	// Value is the normalised value: int64, uint64, string or time.Time.
	Value any
}

// ShardingAlgorithm is a standard (one-column) sharding algorithm written
// in Go, as ShardingSphere's StandardShardingAlgorithm (precise sharding).
//
// DoSharding returns the target v routes to, which must be one of targets
// (the same string): anything else, "" included, is an error naming the
// algorithm (wrapping ErrAlgorithmResult), never a route. An error it
// returns fails the statement before anything runs, wrapped with the
// table, column and value; return one wrapping ErrNoRoute for a value that
// has no target.
//
// targets are the data source names for a databaseStrategy, and for a
// tableStrategy the distinct physical table names of the table's data
// nodes, in actualDataNodes order. They are shared between calls: do not
// modify them.
//
// The router calls DoSharding from every goroutine that routes: it must be
// safe for concurrent use, and it should be fast and must not block (it
// runs for every statement, and for every element of an IN list).
//
// A panic in DoSharding (or DoRangeSharding, or a factory) does not escape
// the router: it becomes an error wrapping ErrAlgorithmPanic, with the
// panic's value, and the statement fails before anything runs (a load
// error for a factory), as an exception fails a ShardingSphere statement.
// A panic would otherwise unwind through database/sql, sqlhook or GORM,
// which do not expect one from a route.
type ShardingAlgorithm interface {
	DoSharding(targets []string, v ShardingValue) (string, error)
}

// AlgorithmFactory builds an algorithm from the props of its rule file
// entry (all of them, as written, including allow-range-query and, for
// CLASS_BASED, strategy and algorithmClassName; never nil). The map is the
// algorithm's own copy.
//
// NewRouter calls the factory once per strategy it compiles: once for each
// table whose databaseStrategy or tableStrategy uses the algorithm (a
// default strategy is compiled for every table it serves). An error it
// returns becomes a load error with the file, line and YAML path of the
// algorithm; check props there, so that a bad rule file fails at start-up
// rather than at the first statement. Factories may be called concurrently
// by concurrent NewRouter calls.
type AlgorithmFactory func(props map[string]string) (ShardingAlgorithm, error)

// RangeShardingAlgorithm is a ShardingAlgorithm that also routes ranges
// (BETWEEN, <, <=, >, >= on its column), as ShardingSphere's
// StandardShardingAlgorithm does with a RangeShardingValue.
//
// DoRangeSharding returns every target a value in v.Range may route to;
// each must be one of targets (else an error naming the algorithm,
// wrapping ErrAlgorithmResult). Returning fewer targets than hold matching
// rows loses rows from the result: when in doubt, return more. An empty
// result means no row can match, and the statement runs nowhere.
// Duplicates are allowed.
//
// Without this method a range on the column is refused with
// ErrRangeNotSupported, unless the algorithm's props set
// allow-range-query: true, which sends it to every target.
type RangeShardingAlgorithm interface {
	ShardingAlgorithm
	DoRangeSharding(targets []string, v RangeShardingValue) ([]string, error)
}

// RangeShardingValue is a range on one sharding column.
type RangeShardingValue struct {
	Table  string // the logic table
	Column string // the sharding column, lower case
	Range  Range
}

// Range is an interval of sharding values, as Guava's Range: each end is
// unbounded or a value, included or not. "id > 5" is
// Range{Lower: Bound{Value: int64(5)}}; "id BETWEEN 1 AND 9" has both ends
// inclusive. The router merges several ranges on one column into one
// where it can compare them (integers); otherwise the algorithm is asked
// once per range and the targets intersected.
type Range struct {
	Lower, Upper Bound
}

// Bound is one end of a Range. Value is normalised as ShardingValue.Value
// (int64, uint64, string or time.Time), or nil when this end is unbounded.
// A float bound with a fraction arrives as the integer bound that selects
// the same integers (id > 1.5 is id >= 2; id < 2.5 is id <= 2).
type Bound struct {
	Value     any
	Inclusive bool // the range includes Value itself
}

// Unbounded reports whether the range is open at this end.
func (b Bound) Unbounded() bool { return b.Value == nil }

// ComplexShardingAlgorithm is a several-column sharding algorithm written
// in Go, for a complex: strategy.
//
// DoSharding gets one value per sharding column, in the order of the
// strategy's shardingColumns, and returns the one target they route to,
// under the same rules as ShardingAlgorithm.DoSharding. An IN list on a
// column calls it once for each combination of values (at most 4096). It
// is a simplification of ShardingSphere's ComplexKeysShardingAlgorithm,
// which gets every value of every column at once and may return several
// targets: write the Go side to decide one combination at a time.
//
// A range on one of the columns is refused with ErrRangeNotSupported,
// unless the algorithm's props set allow-range-query: true or the caller
// uses Scatter, either of which sends it to every target. (A standard
// algorithm's range is refused under Scatter too, as INLINE's is: a range
// is a condition, not a missing one.) Must be safe for concurrent use.
type ComplexShardingAlgorithm interface {
	DoSharding(targets []string, vs []ShardingValue) (string, error)
}

// ComplexAlgorithmFactory builds a complex algorithm from its props, as
// AlgorithmFactory does.
type ComplexAlgorithmFactory func(props map[string]string) (ComplexShardingAlgorithm, error)

// PropAllowRangeQuery is the prop ("allow-range-query") that lets a range
// on the column of a Go algorithm without DoRangeSharding (or of a complex
// Go algorithm) go to every target of its strategy. Values "true" or
// "false" (any case); anything else is a load error. It is the Go
// algorithms' counterpart of INLINE's allow-range-query-with-inline-sharding.
const PropAllowRangeQuery = "allow-range-query"

// Errors of Go algorithms. Test with errors.Is.
var (
	// ErrDuplicateAlgorithm: RegisterAlgorithm or RegisterComplexAlgorithm
	// was given a name that is already taken, by a built-in algorithm
	// (MOD, INLINE, CLASS_BASED, HINT_INLINE, ...) or by an earlier
	// registration.
	ErrDuplicateAlgorithm = errors.New("shardconf: sharding algorithm type already exists")
	// ErrInvalidRegistration: an empty name, a name with leading or
	// trailing spaces, or a nil factory.
	ErrInvalidRegistration = errors.New("shardconf: invalid sharding algorithm registration")
	// ErrAlgorithmNotRegistered: a CLASS_BASED algorithm names a class no
	// Go algorithm was registered under. It is wrapped in the load error.
	ErrAlgorithmNotRegistered = errors.New("shardconf: sharding algorithm class not registered")
	// ErrAlgorithmResult: a Go algorithm returned a target that is not one
	// of the targets it was given. The statement fails before it runs.
	ErrAlgorithmResult = errors.New("shardconf: sharding algorithm returned an unknown target")
	// ErrAlgorithmPanic: a Go algorithm or its factory panicked. The
	// statement fails before it runs (for a factory, NewRouter fails); the
	// error names the algorithm and the panic's value.
	ErrAlgorithmPanic = errors.New("shardconf: sharding algorithm panicked")
	// ErrRangeNotSupported: a range on a sharding column whose Go
	// algorithm neither routes ranges (RangeShardingAlgorithm) nor allows
	// them to go everywhere (allow-range-query). The statement fails before
	// it runs.
	ErrRangeNotSupported = errors.New("shardconf: range query not supported by the sharding algorithm")
)

// customEntry is one registered Go algorithm; exactly one factory is set.
type customEntry struct {
	name string // as registered, for messages
	std  AlgorithmFactory
	cpx  ComplexAlgorithmFactory
}

// customAlgorithms holds the Go algorithms by upper-case name, guarded by
// the algorithms lock (they are also entered there, so that type: finds
// them; this map tells them from the built-ins for CLASS_BASED).
var customAlgorithms = map[string]*customEntry{}

// shardingSphereBuiltins are ShardingSphere's own algorithm types, reserved
// even where shardkey does not implement them itself (registered
// elsewhere, or not at all), so that a Go algorithm never takes the name a
// Java rule file means as ShardingSphere's.
var shardingSphereBuiltins = []string{"MOD", "HASH_MOD", "VOLUME_RANGE", "BOUNDARY_RANGE", "AUTO_INTERVAL",
	"INTERVAL", "INLINE", "COMPLEX_INLINE", "HINT_INLINE", "CLASS_BASED"}

// RegisterAlgorithm adds a standard Go sharding algorithm under typ: rule
// files name it as type: typ, or as CLASS_BASED with strategy STANDARD or
// HINT and algorithmClassName: typ. A hint strategy routes each hint value
// through DoSharding, with Column "".
//
// typ is compared case-insensitively. It is an error wrapping
// ErrDuplicateAlgorithm when typ is a built-in type or already registered
// (standard or complex), and ErrInvalidRegistration when typ is empty or
// f is nil. There is no way to unregister: a Router compiled from a type
// keeps its algorithms.
func RegisterAlgorithm(typ string, f AlgorithmFactory) error {
	if f == nil {
		return fmt.Errorf("%w: nil factory for %q", ErrInvalidRegistration, typ)
	}
	return register(typ, &customEntry{std: f})
}

// RegisterComplexAlgorithm adds a complex Go sharding algorithm under
// typ: rule files name it as type: typ in a complex: strategy, or as
// CLASS_BASED with strategy COMPLEX and algorithmClassName: typ. Names are
// shared with RegisterAlgorithm, with the same errors.
func RegisterComplexAlgorithm(typ string, f ComplexAlgorithmFactory) error {
	if f == nil {
		return fmt.Errorf("%w: nil factory for %q", ErrInvalidRegistration, typ)
	}
	return register(typ, &customEntry{cpx: f})
}

func register(typ string, e *customEntry) error {
	if strings.TrimSpace(typ) == "" || strings.TrimSpace(typ) != typ {
		return fmt.Errorf("%w: type name %q is empty or has leading or trailing spaces", ErrInvalidRegistration, typ)
	}
	key := upper(typ)
	e.name = typ
	algorithms.Lock()
	defer algorithms.Unlock()
	if prev, ok := customAlgorithms[key]; ok {
		return fmt.Errorf("%w: %q is already registered (as %q)", ErrDuplicateAlgorithm, typ, prev.name)
	}
	_, std := algorithms.standard[key]
	_, cpx := algorithms.complex[key]
	if std || cpx || contains(shardingSphereBuiltins, key) {
		return fmt.Errorf("%w: %q is a built-in sharding algorithm type", ErrDuplicateAlgorithm, typ)
	}
	customAlgorithms[key] = e
	if e.std != nil {
		algorithms.standard[key] = func(spec algoSpec) (shardFunc, error) { return newCustomStandard(e, spec) }
	} else {
		algorithms.complex[key] = func(spec algoSpec) (multiFunc, error) { return newCustomComplex(e, spec) }
	}
	return nil
}

// lookupCustom returns the Go algorithm registered under name.
func lookupCustom(name string) (*customEntry, bool) {
	algorithms.RLock()
	defer algorithms.RUnlock()
	e, ok := customAlgorithms[upper(name)]
	return e, ok
}

// customNames lists the registered Go algorithms, sorted, for messages.
func customNames() []string {
	algorithms.RLock()
	defer algorithms.RUnlock()
	out := make([]string, 0, len(customAlgorithms))
	for _, e := range customAlgorithms {
		out = append(out, e.name)
	}
	sort.Strings(out)
	return out
}

// copyProps gives a factory its own, non-nil props.
func copyProps(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}
