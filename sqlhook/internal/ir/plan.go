package ir

import (
	"strings"
	"sync/atomic"
)

// A plan is what one statement's text compiles to, once: which logic tables
// it names in table position, the conditions on their sharding columns,
// the shape needed to merge results, and a template of the text with holes
// where table names, placeholders and INSERT rows go. Binding a plan to the
// caller's arguments (bind.go) gives the units to run.

type stmtKind uint8

const (
	KindSelect stmtKind = iota + 1
	KindInsert
	KindUpdate
	KindDelete
	KindDDL
)

// ValRef is a value written in a statement.
type ValRef struct {
	Param int  // caller argument index (0-based), or -1
	Lit   any  // when param < 0 and !expr: int64, uint64, float64, string or nil (SQL NULL)
	Expr  bool // an expression the router cannot evaluate
}

func ParamRef(i int) ValRef { return ValRef{Param: i} }
func LitRef(v any) ValRef   { return ValRef{Param: -1, Lit: v} }

var ExprRef = ValRef{Param: -1, Expr: true}

type predOp uint8

const (
	OpEq predOp = iota + 1
	OpIn
	OpAny // col = ANY($1): the argument is a list
	OpBetween
	OpLt
	OpLe
	OpGt
	OpGe
)

// pred is a condition on a sharding column of one of the plan's tables.
type Pred struct {
	Table  int // index into plan.tables
	Column string
	Op     predOp
	Vals   []ValRef
}

// cnode is a WHERE clause reduced to what routing needs: AND, OR and
// predicates on sharding columns; everything else is "true" (it does not
// narrow the targets, so routing without it reaches a superset).
type CNode struct {
	Op   Cop
	Kids []*CNode
	P    Pred
}

type Cop uint8

const (
	cTrue Cop = iota
	CAnd
	COr
	CPred
)

var TrueNode = &CNode{Op: cTrue}

// maxBranches bounds the disjunctive normal form of a WHERE clause; a
// clause with more branches routes as if unconstrained.
const maxBranches = 64

// dnf returns the OR of ANDs of n; ok is false when it has too many
// branches.
func Dnf(n *CNode) (out [][]Pred, ok bool) {
	switch n.Op {
	case CPred:
		return [][]Pred{{n.P}}, true
	case COr:
		for _, k := range n.Kids {
			b, ok := Dnf(k)
			if !ok {
				return nil, false
			}
			out = append(out, b...)
			if len(out) > maxBranches {
				return nil, false
			}
		}
		return out, true
	case CAnd:
		out = [][]Pred{nil}
		for _, k := range n.Kids {
			b, ok := Dnf(k)
			if !ok {
				return nil, false
			}
			if len(out)*len(b) > maxBranches {
				return nil, false
			}
			next := make([][]Pred, 0, len(out)*len(b))
			for _, x := range out {
				for _, y := range b {
					next = append(next, append(append([]Pred(nil), x...), y...))
				}
			}
			out = next
		}
		return out, true
	}
	return [][]Pred{nil}, true
}

// planTable is a logic table named in table position.
type planTable struct {
	Logic     string // as written, unquoted
	Key       string // lower case
	Sharded   bool
	Broadcast bool
	PartnerOf int // for a binding partner of the routed table: -1 otherwise
}

// HoleKind says what goes into a template hole.
type HoleKind uint8

const (
	holeNone      HoleKind = iota
	HoleTable              // physical name of tables[i], quoted
	HoleTableAs            // physical name of tables[i], quoted, then " AS " and the written name
	HoleParam              // caller argument i, as a placeholder
	HoleValues             // the INSERT rows
	HoleKeyCol             // ", <key column>" when the key column is added
	HoleLimit              // the LIMIT count
	HoleOffset             // the OFFSET value
	HoleIndexName          // the index name of CREATE INDEX, made unique per physical table
	holeMergeAdd           // sub, only in the SQL of a query merged from several targets
	holeMergeDrop          // sub, only in the SQL of a query that runs on one target
)

type Segment struct {
	Text string
	Hole HoleKind
	I    int
	sub  []Segment // holeMergeAdd, holeMergeDrop
}

// InsertPlan is the shape of INSERT ... VALUES.
type InsertPlan struct {
	Table    int        // index into plan.tables
	Cols     []string   // column names as written, unquoted
	Rows     [][]ValRef // per row, per column
	Items    [][][]Segment
	KeyCol   string // the generated key column, "" when the table has none
	KeyIdx   int    // index of keyCol in cols, -1 when absent
	KeyNull  []bool // per row: the key is a NULL or DEFAULT literal, to replace
	ShardIdx []int  // per sharding column: index in cols, -1 when absent
	ShardCol []string
	Single   string // why the statement must reach one target ("" if it may split)
}

// SelectPlan is what merging several targets' rows needs.
type SelectPlan struct {
	Merge         *MergePlan // nil when multi says why there is none
	Limit, Offset *ValRef
	Multi         string // why several targets cannot be merged, "" when they can
}

type Plan struct {
	Kind        stmtKind
	Passthrough bool
	Tables      []planTable
	Routed      int // index of the table that routes the statement, -1 for none
	Branches    [][]Pred
	Unbounded   bool // WHERE too complex to narrow targets
	Ins         *InsertPlan
	Sel         *SelectPlan
	WriteMulti  string   // for UPDATE/DELETE: why several targets are refused ("" when allowed)
	KeySets     []KeySet // UPDATE: new values for sharding columns, checked when bound
	Pinned      string   // INSERT into a physical table named directly: every row must route to a table of this name (lower case)
	Tmpl        []Segment
	IndexName   string // CREATE INDEX name, for HoleIndexName
	NParams     int    // placeholders the caller must supply (max index + 1)
	// names (SQLite): $k binds the sql.Named argument names[k-1], or the
	// argument in position k when that is ""; nil when every $k is argument k.
	Names  []string
	render renderCache
	logic  atomic.Pointer[[]string] // LogicTables, made on first use
}

// LogicTables returns the logic tables the plan names in table position,
// as written; read-only. It is made on first use (an observer's report)
// and kept with the plan.
func (p *Plan) LogicTables() []string {
	if l := p.logic.Load(); l != nil {
		return *l
	}
	l := make([]string, len(p.Tables))
	for i, t := range p.Tables {
		l[i] = t.Logic
	}
	p.logic.Store(&l)
	return l
}

// StatementKind names the plan's kind of statement as package observe
// does: select, insert, update, delete, or other (DDL).
func (p *Plan) StatementKind() string {
	switch p.Kind {
	case KindSelect:
		return "select"
	case KindInsert:
		return "insert"
	case KindUpdate:
		return "update"
	case KindDelete:
		return "delete"
	}
	return "other"
}

// RoutedTable is the index in Tables of the table whose data nodes the
// statement's targets are chosen among: the INSERT's table, the table
// routing the WHERE clause, else the first (broadcast tables, DDL).
func (p *Plan) RoutedTable() int {
	switch {
	case p.Kind == KindInsert && p.Ins != nil:
		return p.Ins.Table
	case p.Routed >= 0:
		return p.Routed
	}
	return 0
}

// AddTable returns the index of the logic table named name, adding it.
func (p *Plan) AddTable(name string, sharded, broadcast bool) int {
	key := strings.ToLower(name)
	for i, t := range p.Tables {
		if t.Key == key {
			return i
		}
	}
	p.Tables = append(p.Tables, planTable{Logic: name, Key: key, Sharded: sharded, Broadcast: broadcast, PartnerOf: -1})
	return len(p.Tables) - 1
}
