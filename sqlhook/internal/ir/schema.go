package ir

import (
	"maps"
	"slices"
	"strings"

	"github.com/shardkey/shardkey/shardconf"
)

// schema is what the dialect compilers read of the rules and options: the
// logic tables, their sharding columns and physical names, the dialect.
type Schema struct {
	Router     *shardconf.Router
	DefaultDS  string
	Dialect    Dialect
	BinaryText bool     // WithBinaryCollation
	Logic      []string // lower-case names of sharded and broadcast tables
	Spell      []string // how they can appear in a statement's text (spellings)
	ShardCols  map[string][]string
	Physical   map[string]string // physical table name (lower case) -> its sharded logic table
}

// PhysicalOf is the sharded logic table whose physical table name is.
func (h *Schema) PhysicalOf(name string) (string, bool) {
	t, ok := h.Physical[strings.ToLower(name)]
	return t, ok
}

var PassthroughPlan = &Plan{Passthrough: true}

func IsIdentChar(c byte) bool {
	return c == '_' || IsDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// MentionsLogic reports whether query contains a logic table's name
// anywhere, in any case, as written or inside a quoted identifier (a
// cheap superset test: a statement that does not, and has no escapes
// that could spell one (mayEscapeNames), cannot name one, and skips
// parsing). The router matches names by strings.ToLower, and so does this
// test, so every spelling the router takes for a logic table is found.
func (h *Schema) MentionsLogic(query string) bool {
	low := strings.ToLower(query)
	for _, name := range h.Spell {
		if strings.Contains(low, name) {
			return true
		}
	}
	return false
}

// classify says what a table name is to the router.
func (h *Schema) Classify(name string) (sharded, broadcast bool) {
	return h.Router.IsSharded(name), h.Router.IsBroadcast(name)
}

// IsShardingColumn reports whether column shards the logic table key.
func (h *Schema) IsShardingColumn(key, column string) bool {
	low := strings.ToLower(column)
	for _, c := range h.ShardCols[key] {
		if c == low {
			return true
		}
	}
	return false
}

// NewSchema compiles what the compilers read of r's rules: the logic
// tables, their sharding columns and physical names, in dialect d;
// defaultDS is the data source unqualified names reach.
func NewSchema(r *shardconf.Router, defaultDS string, d Dialect, binaryText bool) *Schema {
	s := &Schema{Router: r, DefaultDS: defaultDS, Dialect: d, BinaryText: binaryText, ShardCols: map[string][]string{}}
	for _, t := range r.Tables() {
		key := strings.ToLower(t)
		s.Logic = append(s.Logic, key)
		for _, c := range r.ShardingColumns(t) {
			s.ShardCols[key] = append(s.ShardCols[key], strings.ToLower(c))
		}
	}
	if cfg := r.Config(); cfg != nil {
		for _, b := range cfg.Broadcast {
			s.Logic = append(s.Logic, strings.ToLower(b))
		}
	}
	s.Physical = physicalNames(r)
	// The fast path must also see physical table names that do not contain
	// their logic table's (ord_0 of t_order): a write naming one is routed
	// and checked like the logic table's.
	s.Spell = Spellings(append(slices.Clone(s.Logic), slices.Sorted(maps.Keys(s.Physical))...))
	return s
}

// physicalNames maps each physical table name of a sharded table to it,
// leaving out names that are themselves logic tables' and names shared by
// two logic tables (they cannot be told apart).
func physicalNames(r *shardconf.Router) map[string]string {
	out := map[string]string{}
	for _, t := range r.Tables() {
		ts, err := r.Targets(t)
		if err != nil {
			continue
		}
		for _, x := range ts {
			k := strings.ToLower(x.Table)
			if prev, ok := out[k]; ok && prev != t {
				out[k] = ""
				continue
			}
			out[k] = t
		}
	}
	for k, v := range out {
		if v == "" || r.IsSharded(k) || r.IsBroadcast(k) {
			delete(out, k)
		}
	}
	return out
}
