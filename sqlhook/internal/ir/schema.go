package ir

import (
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

// physicalOf is the sharded logic table whose physical table name is.
func (h *Schema) PhysicalOf(name string) (string, bool) {
	t, ok := h.Physical[strings.ToLower(name)]
	return t, ok
}

var PassthroughPlan = &Plan{Passthrough: true}

func IsIdentChar(c byte) bool {
	return c == '_' || IsDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// mentionsLogic reports whether query contains a logic table's name
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

// isShardingColumn reports whether column shards the logic table key.
func (h *Schema) IsShardingColumn(key, column string) bool {
	low := strings.ToLower(column)
	for _, c := range h.ShardCols[key] {
		if c == low {
			return true
		}
	}
	return false
}
