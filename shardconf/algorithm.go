package shardconf

import (
	"fmt"

	"github.com/shardkey/shardkey/keygen"
	"sort"
	"strings"
	"sync"
	"time"
)

// A sharding algorithm is compiled once, against the ordered list of
// target names it chooses from (the data sources of a database strategy,
// the tables of a table strategy), into a shardFunc that works on indexes
// into that list. Routing never evaluates an expression or builds a name
// on the equality path.

// shardFunc is a compiled single-column (standard) algorithm.
type shardFunc interface {
	// one returns the index of the target for v, or -1 when v maps to a
	// name that is not among the targets (the router reports ErrNoRoute).
	// An error means the value itself is unusable (wrong type, a range
	// query refused by the algorithm).
	one(v value) (int, error)
	// within appends to dst the indexes of every target a value in r may
	// route to (any order, duplicates allowed; the router sorts and dedups).
	within(r span, dst []int) ([]int, error)
}

// multiFunc is a compiled complex (several-column) algorithm.
type multiFunc interface {
	// columns are the sharding columns, in the order one receives them.
	columns() []string
	one(vs []value) (int, error)
}

// algoSpec is what an algorithm factory gets.
type algoSpec struct {
	typ     string            // upper case, e.g. "MOD"
	props   map[string]string // as written in the rule file
	targets []string          // the ordered target names it chooses from
	column  string            // the sharding column (standard strategies); "" for a hint strategy
	columns []string          // the sharding columns (complex strategies)
	// keyLayout is the layout of the table's key generator, for the
	// SNOWFLAKE_* algorithms; zero when the table has none.
	keyLayout *keygen.Layout
	// auto is true when the algorithm serves an autoTables rule.
	auto bool
	// table is the logic table the strategy serves.
	table string
	// now is the rules' clock (WithClock); nil reads time.Now.
	now func() time.Time
	// unreachable records a partition the algorithm can compute but no
	// target serves (a MOD residue without its table, an INTERVAL past the
	// last table). ShardingSphere loads such rules and fails only when a
	// value lands there: a factory reports the partition here, never as an
	// error, and its one/within return -1 / nothing for it (ErrNoRoute at
	// the statement). Never nil in a factory called by the compiler.
	unreachable func(partition string)
}

// clockNow is the current time on the rules' clock.
func (s algoSpec) clockNow() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// propError reports a bad algorithm prop; the loader adds file and line.
type propError struct {
	key, value, reason string
}

func (e *propError) Error() string {
	if e.value == "" {
		return fmt.Sprintf("prop %q: %s", e.key, e.reason)
	}
	return fmt.Sprintf("prop %q = %q: %s", e.key, e.value, e.reason)
}

type (
	standardFactory func(algoSpec) (shardFunc, error)
	complexFactory  func(algoSpec) (multiFunc, error)
)

// algorithms is the registry of algorithm types by upper-case name: the
// built-ins, registered by init functions, and the Go algorithms
// RegisterAlgorithm and RegisterComplexAlgorithm add at run time (custom.go).
// Because of the latter it is read under RLock: use lookupStandard and
// lookupComplex, never the maps directly, outside init.
var algorithms = struct {
	sync.RWMutex
	standard map[string]standardFactory
	complex  map[string]complexFactory
}{standard: map[string]standardFactory{}, complex: map[string]complexFactory{}}

// registerStandard and registerComplex add a built-in; init functions only.
func registerStandard(typ string, f standardFactory) { algorithms.standard[typ] = f }
func registerComplex(typ string, f complexFactory)   { algorithms.complex[typ] = f }

// lookupStandard returns the factory of a standard algorithm type.
func lookupStandard(typ string) (standardFactory, bool) {
	algorithms.RLock()
	defer algorithms.RUnlock()
	f, ok := algorithms.standard[typ]
	return f, ok
}

// lookupComplex returns the factory of a complex algorithm type.
func lookupComplex(typ string) (complexFactory, bool) {
	algorithms.RLock()
	defer algorithms.RUnlock()
	f, ok := algorithms.complex[typ]
	return f, ok
}

// algorithmTypes lists the known algorithm types, sorted.
func algorithmTypes() []string {
	algorithms.RLock()
	defer algorithms.RUnlock()
	var out []string
	for t := range algorithms.standard {
		out = append(out, t)
	}
	for t := range algorithms.complex {
		if _, dup := algorithms.standard[t]; !dup {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// upper normalizes an algorithm or strategy type name.
func upper(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }
