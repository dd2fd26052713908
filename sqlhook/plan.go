package sqlhook

import "strings"

// A plan is what one statement's text compiles to, once: which logic tables
// it names in table position, the conditions on their sharding columns,
// the shape needed to merge results, and a template of the text with holes
// where table names, placeholders and INSERT rows go. Binding a plan to the
// caller's arguments (bind.go) gives the units to run.

type stmtKind uint8

const (
	kindSelect stmtKind = iota + 1
	kindInsert
	kindUpdate
	kindDelete
	kindDDL
)

// valRef is a value written in a statement.
type valRef struct {
	param int  // caller argument index (0-based), or -1
	lit   any  // when param < 0 and !expr: int64, uint64, float64, string or nil (SQL NULL)
	expr  bool // an expression the router cannot evaluate
}

func paramRef(i int) valRef { return valRef{param: i} }
func litRef(v any) valRef   { return valRef{param: -1, lit: v} }

var exprRef = valRef{param: -1, expr: true}

type predOp uint8

const (
	opEq predOp = iota + 1
	opIn
	opAny // col = ANY($1): the argument is a list
	opBetween
	opLt
	opLe
	opGt
	opGe
)

// pred is a condition on a sharding column of one of the plan's tables.
type pred struct {
	table  int // index into plan.tables
	column string
	op     predOp
	vals   []valRef
}

// cnode is a WHERE clause reduced to what routing needs: AND, OR and
// predicates on sharding columns; everything else is "true" (it does not
// narrow the targets, so routing without it reaches a superset).
type cnode struct {
	op   cop
	kids []*cnode
	p    pred
}

type cop uint8

const (
	cTrue cop = iota
	cAnd
	cOr
	cPred
)

var trueNode = &cnode{op: cTrue}

// maxBranches bounds the disjunctive normal form of a WHERE clause; a
// clause with more branches routes as if unconstrained.
const maxBranches = 64

// dnf returns the OR of ANDs of n; ok is false when it has too many
// branches.
func dnf(n *cnode) (out [][]pred, ok bool) {
	switch n.op {
	case cPred:
		return [][]pred{{n.p}}, true
	case cOr:
		for _, k := range n.kids {
			b, ok := dnf(k)
			if !ok {
				return nil, false
			}
			out = append(out, b...)
			if len(out) > maxBranches {
				return nil, false
			}
		}
		return out, true
	case cAnd:
		out = [][]pred{nil}
		for _, k := range n.kids {
			b, ok := dnf(k)
			if !ok {
				return nil, false
			}
			if len(out)*len(b) > maxBranches {
				return nil, false
			}
			next := make([][]pred, 0, len(out)*len(b))
			for _, x := range out {
				for _, y := range b {
					next = append(next, append(append([]pred(nil), x...), y...))
				}
			}
			out = next
		}
		return out, true
	}
	return [][]pred{nil}, true
}

// planTable is a logic table named in table position.
type planTable struct {
	logic     string // as written, unquoted
	key       string // lower case
	sharded   bool
	broadcast bool
	partnerOf int // for a binding partner of the routed table: -1 otherwise
}

// holeKind says what goes into a template hole.
type holeKind uint8

const (
	holeNone      holeKind = iota
	holeTable              // physical name of tables[i], quoted
	holeTableAs            // physical name of tables[i], quoted, then " AS " and the written name
	holeParam              // caller argument i, as a placeholder
	holeValues             // the INSERT rows
	holeKeyCol             // ", <key column>" when the key column is added
	holeLimit              // the LIMIT count
	holeOffset             // the OFFSET value
	holeIndexName          // the index name of CREATE INDEX, made unique per physical table
	holeMergeAdd           // sub, only in the SQL of a query merged from several targets
	holeMergeDrop          // sub, only in the SQL of a query that runs on one target
)

type segment struct {
	text string
	hole holeKind
	i    int
	sub  []segment // holeMergeAdd, holeMergeDrop
}

// insertPlan is the shape of INSERT ... VALUES.
type insertPlan struct {
	table    int        // index into plan.tables
	cols     []string   // column names as written, unquoted
	rows     [][]valRef // per row, per column
	items    [][][]segment
	keyCol   string // the generated key column, "" when the table has none
	keyIdx   int    // index of keyCol in cols, -1 when absent
	keyNull  []bool // per row: the key is a NULL or DEFAULT literal, to replace
	shardIdx []int  // per sharding column: index in cols, -1 when absent
	shardCol []string
	single   string // why the statement must reach one target ("" if it may split)
}

// selectPlan is what merging several targets' rows needs.
type selectPlan struct {
	merge         *mergePlan // nil when multi says why there is none
	limit, offset *valRef
	multi         string // why several targets cannot be merged, "" when they can
}

type plan struct {
	kind        stmtKind
	passthrough bool
	tables      []planTable
	routed      int // index of the table that routes the statement, -1 for none
	branches    [][]pred
	unbounded   bool // WHERE too complex to narrow targets
	ins         *insertPlan
	sel         *selectPlan
	writeMulti  string   // for UPDATE/DELETE: why several targets are refused ("" when allowed)
	keySets     []keySet // UPDATE: new values for sharding columns, checked when bound
	pinned      string   // INSERT into a physical table named directly: every row must route to a table of this name (lower case)
	tmpl        []segment
	indexName   string // CREATE INDEX name, for holeIndexName
	nparams     int    // placeholders the caller must supply (max index + 1)
	// names (SQLite): $k binds the sql.Named argument names[k-1], or the
	// argument in position k when that is ""; nil when every $k is argument k.
	names  []string
	render renderCache
}

// addTable returns the index of the logic table named name, adding it.
func (p *plan) addTable(name string, sharded, broadcast bool) int {
	key := strings.ToLower(name)
	for i, t := range p.tables {
		if t.key == key {
			return i
		}
	}
	p.tables = append(p.tables, planTable{logic: name, key: key, sharded: sharded, broadcast: broadcast, partnerOf: -1})
	return len(p.tables) - 1
}
