package ir

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shardkey/shardkey/internal/merge"
)

// A SELECT's shape is what merging its rows from several targets needs,
// read from either grammar's tree (selectplan_pg.go in
// sqlhook/internal/pgsql, selectplan_mysql.go in sqlhook/internal/mysqlsql)
// into one dialect-neutral form; selectplan.go turns it into a merge plan
// and into the edits of the per-target SQL. Expressions are not
// interpreted: the tree says what kind each is, and where its text lies
// comes from the statement's tokens (selectLayout).

type exprKind uint8

const (
	ExprOther   exprKind = iota // any other expression
	ExprColumn                  // a column reference
	ExprAgg                     // a call of a mergeable aggregate
	ExprOrdinal                 // an output column position (ORDER BY 2)
	ExprStar                    // * or t.*
)

// ShapeAgg is a call of COUNT, SUM, MIN, MAX or AVG.
type ShapeAgg struct {
	Fn       string // lower case
	Distinct bool
	Star     bool // COUNT(*)
	Nargs    int
}

// ShapeExpr is one expression of the select list, GROUP BY, HAVING or
// ORDER BY.
type ShapeExpr struct {
	Kind     exprKind
	Ref      []string  // ExprColumn: the name's parts, lower case
	Agg      ShapeAgg  // ExprAgg
	Ordinal  int       // ExprOrdinal: 1-based
	HasAgg   bool      // an aggregate or window call occurs in it (ExprOther)
	Names    []string  // unqualified column names it reads, lower case
	Collate  string    // an explicit COLLATE around it, as written
	HasParam bool      // a placeholder occurs in it
	Calc     *CalcNode // ExprOther with aggregates: the arithmetic the engine computes, or nil
	Print    string    // GROUP BY terms and HAVING operands: the expression's shape, to match them
}

// ShapeItem is a select list entry.
type ShapeItem struct {
	Expr    ShapeExpr
	Alias   string // AS name, lower case ("" when none)
	OutName string // the output column's name when known, lower case
}

// ShapeOrder is an ORDER BY term.
type ShapeOrder struct {
	Expr       ShapeExpr
	Desc       bool
	NullsSet   bool // NULLS FIRST or LAST written
	NullsFirst bool
}

// ShapeCond is a HAVING condition.
type ShapeCond struct {
	Op   merge.CondOp
	Kids []*ShapeCond
	Cmp  merge.CmpOp
	L, R ShapeOperand
}

// ShapeOperand is a HAVING comparison's side: an expression or a constant.
type ShapeOperand struct {
	Expr     ShapeExpr
	IsConst  bool
	Val      ValRef
	AggIndex int // ExprAgg: which of HAVING's aggregate calls, in text order
}

// SelectShape is the dialect-neutral shape of a top-level SELECT.
type SelectShape struct {
	Distinct   bool
	Items      []ShapeItem
	GroupBy    []ShapeExpr
	Having     *ShapeCond
	HavingAggs int // aggregate calls in HAVING, in text order, as found in the tree
	OrderBy    []ShapeOrder
	refuse     string // why several targets cannot be merged ("" when they may be)
}

func (s *SelectShape) Fail(why string) { SetOnce(&s.refuse, why) }

// stok is a token of the statement text in a form common to both
// grammars' tokenizers; comments are not tokens.
type Stok struct {
	Start, End int
	Kind       byte   // 'w' unquoted word or number, '"' quoted name, '\'' string, '?' placeholder, else the punctuation byte
	Word       string // lower case, for 'w'
}

// selectLayout is where the parts of a top-level SELECT lie in its text.
type selectLayout struct {
	listEnd    int    // after the select list's last token
	items      []Span // each select item's expression, alias left out
	groupBy    []Span
	groupEnd   int  // after the GROUP BY list's last token
	hasGroup   bool // GROUP BY is written
	groupAt    int  // where a GROUP BY is added when none is written
	having     Span // HAVING and its condition, from the keyword to its last token
	hasHaving  bool
	havingAggs []Span // aggregate calls in HAVING, in text order
	orderBy    []Span // each ORDER BY term's expression, direction left out
}

// clause keywords that end the part of a SELECT before them.
var selectClauses = map[string]bool{
	"from": true, "where": true, "group": true, "having": true, "window": true, "order": true,
	"limit": true, "offset": true, "fetch": true, "for": true, "lock": true, "into": true,
	"procedure": true, "union": true, "except": true, "intersect": true, "qualify": true,
}

// selectOptions may follow SELECT before the select list.
var selectOptions = map[string]bool{
	"distinct": true, "all": true, "distinctrow": true, "high_priority": true, "straight_join": true,
	"sql_small_result": true, "sql_big_result": true, "sql_buffer_result": true, "sql_no_cache": true,
	"sql_cache": true, "sql_calc_found_rows": true,
}

var MergeableAggNames = map[string]bool{"count": true, "sum": true, "min": true, "max": true, "avg": true}

// LayoutOf finds the parts of the SELECT whose tokens are toks. ok is false
// when the text does not read as the tree says (the caller refuses).
func LayoutOf(toks []Stok, sh *SelectShape) (selectLayout, bool) {
	var l selectLayout
	if len(toks) == 0 || toks[0].Word != "select" {
		return l, false
	}
	cls := topClauses(toks)
	end := len(toks)
	if toks[end-1].Kind == ';' {
		end--
	}
	next := func(k int) int { // the token index where clause k ends
		if k+1 < len(cls) {
			return cls[k+1].at
		}
		return end
	}
	first := 1
	for first < end && selectOptions[toks[first].Word] {
		first++
	}
	if len(cls) == 0 || cls[0].word != "from" || cls[0].at <= first {
		return l, false
	}
	l.items = splitList(toks, first, cls[0].at)
	l.listEnd = toks[cls[0].at-1].End
	afterFrom := -1 // the first clause after FROM and WHERE
	for k, c := range cls {
		switch c.word {
		case "from", "where":
			continue
		case "group":
			l.hasGroup = true
			l.groupBy = splitList(toks, c.at+2, next(k))
			l.groupEnd = toks[next(k)-1].End
		case "having":
			l.hasHaving = true
			l.having = Span{toks[c.at].Start, toks[next(k)-1].End}
			l.havingAggs = aggCalls(toks, c.at+1, next(k))
		case "order":
			l.orderBy = splitList(toks, c.at+2, next(k))
		}
		if afterFrom < 0 {
			afterFrom = c.at
		}
	}
	if afterFrom < 0 {
		afterFrom = end
	}
	l.groupAt = toks[afterFrom-1].End
	for i := range l.items {
		if i < len(sh.Items) && sh.Items[i].Alias != "" {
			l.items[i] = dropAlias(toks, l.items[i])
		}
	}
	for i := range l.orderBy {
		l.orderBy[i] = dropDirection(toks, l.orderBy[i])
	}
	ok := len(l.items) == len(sh.Items) && len(l.groupBy) == len(sh.GroupBy) &&
		len(l.orderBy) == len(sh.OrderBy) && len(l.havingAggs) == sh.HavingAggs && l.hasHaving == (sh.Having != nil || sh.HavingAggs > 0)
	for _, s := range slices.Concat(l.items, l.groupBy, l.orderBy) {
		ok = ok && s.B > s.A
	}
	return l, ok
}

// clause is a clause keyword of the top-level SELECT.
type clause struct {
	word string
	at   int // token index
}

// topClauses finds the clause keywords outside parentheses.
func topClauses(toks []Stok) []clause {
	var cls []clause
	depth := 0
	for j := 1; j < len(toks); j++ {
		switch toks[j].Kind {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case 'w':
			w := toks[j].Word
			if depth != 0 || !selectClauses[w] || (w == "group" || w == "order") && (j+1 >= len(toks) || toks[j+1].Word != "by") {
				continue
			}
			cls = append(cls, clause{w, j})
		}
	}
	return cls
}

// splitList splits tokens [from, to) at top-level commas; each span is
// kept as token indexes converted to bytes.
func splitList(toks []Stok, from, to int) []Span {
	var out []Span
	depth, start := 0, from
	for j := from; j <= to; j++ {
		if j < to {
			switch toks[j].Kind {
			case '(', '[':
				depth++
				continue
			case ')', ']':
				depth--
				continue
			case ',':
				if depth != 0 {
					continue
				}
			default:
				continue
			}
		}
		if j > start {
			out = append(out, Span{start, j}) // token indexes for now
		} else {
			out = append(out, Span{0, 0})
		}
		start = j + 1
	}
	for i, s := range out {
		if s.B > s.A {
			out[i] = Span{toks[s.A].Start, toks[s.B-1].End}
		}
	}
	return out
}

// tokensIn returns the indexes of the tokens inside s.
func tokensIn(toks []Stok, s Span) (int, int) {
	a, b := -1, -1
	for j, t := range toks {
		if t.Start >= s.A && t.End <= s.B {
			if a < 0 {
				a = j
			}
			b = j + 1
		}
	}
	return a, b
}

// dropAlias removes "[AS] alias" from the end of a select item.
func dropAlias(toks []Stok, s Span) Span {
	a, b := tokensIn(toks, s)
	if b-a < 2 {
		return Span{}
	}
	b--
	if toks[b-1].Word == "as" {
		b--
	}
	if b <= a {
		return Span{}
	}
	return Span{toks[a].Start, toks[b-1].End}
}

// dropDirection removes ASC/DESC, USING op and NULLS FIRST/LAST from the
// end of an ORDER BY term.
func dropDirection(toks []Stok, s Span) Span {
	a, b := tokensIn(toks, s)
	if a < 0 {
		return Span{}
	}
	if b-a > 2 && toks[b-2].Word == "nulls" && (toks[b-1].Word == "first" || toks[b-1].Word == "last") {
		b -= 2
	}
	if b-a > 1 && (toks[b-1].Word == "asc" || toks[b-1].Word == "desc") {
		b--
	}
	for j := b - 1; j > a; j-- {
		if toks[j].Word == "using" {
			b = j
			break
		}
		if toks[j].Kind == 'w' || toks[j].Kind == '"' || toks[j].Kind == '(' || toks[j].Kind == ')' {
			break
		}
	}
	if b <= a {
		return Span{}
	}
	return Span{toks[a].Start, toks[b-1].End}
}

// aggCalls finds the calls of mergeable aggregates among tokens [from,
// to): each name followed by "(", through its closing ")".
func aggCalls(toks []Stok, from, to int) []Span {
	var out []Span
	for j := from; j+1 < to; j++ {
		if !MergeableAggNames[toks[j].Word] || toks[j+1].Kind != '(' {
			continue
		}
		if c := closing(toks, j+1, to); c > 0 {
			out = append(out, Span{toks[j].Start, toks[c].End})
		}
	}
	return out
}

// closing is the index of the ")" matching the "(" at open, or -1.
func closing(toks []Stok, open, to int) int {
	depth := 0
	for j := open; j < to; j++ {
		switch toks[j].Kind {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// callArgs is the span of each argument of the aggregate call in s, with
// DISTINCT or ALL left out.
func callArgs(toks []Stok, s Span) []Span {
	a, b := tokensIn(toks, s)
	for j := a; j >= 0 && j+1 < b; j++ {
		if !MergeableAggNames[toks[j].Word] || toks[j+1].Kind != '(' {
			continue
		}
		c := closing(toks, j+1, b)
		if c < 0 {
			return nil
		}
		from := j + 2
		if from < c && (toks[from].Word == "distinct" || toks[from].Word == "all") {
			from++
		}
		return splitList(toks, from, c)
	}
	return nil
}

// hasToken reports whether a token of kind k lies inside s.
func hasToken(toks []Stok, s Span, k byte) bool {
	for _, t := range toks {
		if t.Start >= s.A && t.End <= s.B && t.Kind == k {
			return true
		}
	}
	return false
}

// normText is s's tokens joined, lower case outside quotes: two spellings
// of one expression that differ only in spacing, comments or case compare
// equal.
func normText(text string, toks []Stok, s Span) string {
	var b strings.Builder
	for _, t := range toks {
		if t.Start >= s.A && t.End <= s.B {
			switch {
			case t.Kind == 'w':
				b.WriteString(t.Word)
			case t.Kind == '?' && text[t.Start:t.End] == "?":
				// Each bare ? is an argument of its own.
				fmt.Fprintf(&b, "?%d", t.Start)
			default:
				b.WriteString(text[t.Start:t.End])
			}
			b.WriteByte(' ')
		}
	}
	return b.String()
}
