package sqlhook

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shardkey/shardkey/internal/merge"
)

// A SELECT's shape is what merging its rows from several targets needs,
// read from either grammar's tree (selectplan_pg.go, selectplan_mysql.go)
// into one dialect-neutral form; selectplan.go turns it into a merge plan
// and into the edits of the per-target SQL. Expressions are not
// interpreted: the tree says what kind each is, and where its text lies
// comes from the statement's tokens (selectLayout).

type exprKind uint8

const (
	exprOther   exprKind = iota // any other expression
	exprColumn                  // a column reference
	exprAgg                     // a call of a mergeable aggregate
	exprOrdinal                 // an output column position (ORDER BY 2)
	exprStar                    // * or t.*
)

// shapeAgg is a call of COUNT, SUM, MIN, MAX or AVG.
type shapeAgg struct {
	fn       string // lower case
	distinct bool
	star     bool // COUNT(*)
	nargs    int
}

// shapeExpr is one expression of the select list, GROUP BY, HAVING or
// ORDER BY.
type shapeExpr struct {
	kind     exprKind
	ref      []string  // exprColumn: the name's parts, lower case
	agg      shapeAgg  // exprAgg
	ordinal  int       // exprOrdinal: 1-based
	hasAgg   bool      // an aggregate or window call occurs in it (exprOther)
	names    []string  // unqualified column names it reads, lower case
	collate  string    // an explicit COLLATE around it, as written
	hasParam bool      // a placeholder occurs in it
	calc     *calcNode // exprOther with aggregates: the arithmetic the engine computes, or nil
	print    string    // GROUP BY terms and HAVING operands: the expression's shape, to match them
}

// shapeItem is a select list entry.
type shapeItem struct {
	expr    shapeExpr
	alias   string // AS name, lower case ("" when none)
	outName string // the output column's name when known, lower case
}

// shapeOrder is an ORDER BY term.
type shapeOrder struct {
	expr       shapeExpr
	desc       bool
	nullsSet   bool // NULLS FIRST or LAST written
	nullsFirst bool
}

// shapeCond is a HAVING condition.
type shapeCond struct {
	op   merge.CondOp
	kids []*shapeCond
	cmp  merge.CmpOp
	l, r shapeOperand
}

// shapeOperand is a HAVING comparison's side: an expression or a constant.
type shapeOperand struct {
	expr     shapeExpr
	isConst  bool
	val      valRef
	aggIndex int // exprAgg: which of HAVING's aggregate calls, in text order
}

// selectShape is the dialect-neutral shape of a top-level SELECT.
type selectShape struct {
	distinct   bool
	items      []shapeItem
	groupBy    []shapeExpr
	having     *shapeCond
	havingAggs int // aggregate calls in HAVING, in text order, as found in the tree
	orderBy    []shapeOrder
	refuse     string // why several targets cannot be merged ("" when they may be)
}

func (s *selectShape) fail(why string) { setOnce(&s.refuse, why) }

// stok is a token of the statement text in a form common to both
// grammars' tokenizers; comments are not tokens.
type stok struct {
	start, end int
	kind       byte   // 'w' unquoted word or number, '"' quoted name, '\'' string, '?' placeholder, else the punctuation byte
	word       string // lower case, for 'w'
}

// selectLayout is where the parts of a top-level SELECT lie in its text.
type selectLayout struct {
	listEnd    int    // after the select list's last token
	items      []span // each select item's expression, alias left out
	groupBy    []span
	groupEnd   int  // after the GROUP BY list's last token
	hasGroup   bool // GROUP BY is written
	groupAt    int  // where a GROUP BY is added when none is written
	having     span // HAVING and its condition, from the keyword to its last token
	hasHaving  bool
	havingAggs []span // aggregate calls in HAVING, in text order
	orderBy    []span // each ORDER BY term's expression, direction left out
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

var mergeableAggNames = map[string]bool{"count": true, "sum": true, "min": true, "max": true, "avg": true}

// layoutOf finds the parts of the SELECT whose tokens are toks. ok is false
// when the text does not read as the tree says (the caller refuses).
func layoutOf(toks []stok, sh *selectShape) (selectLayout, bool) {
	var l selectLayout
	if len(toks) == 0 || toks[0].word != "select" {
		return l, false
	}
	cls := topClauses(toks)
	end := len(toks)
	if toks[end-1].kind == ';' {
		end--
	}
	next := func(k int) int { // the token index where clause k ends
		if k+1 < len(cls) {
			return cls[k+1].at
		}
		return end
	}
	first := 1
	for first < end && selectOptions[toks[first].word] {
		first++
	}
	if len(cls) == 0 || cls[0].word != "from" || cls[0].at <= first {
		return l, false
	}
	l.items = splitList(toks, first, cls[0].at)
	l.listEnd = toks[cls[0].at-1].end
	afterFrom := -1 // the first clause after FROM and WHERE
	for k, c := range cls {
		switch c.word {
		case "from", "where":
			continue
		case "group":
			l.hasGroup = true
			l.groupBy = splitList(toks, c.at+2, next(k))
			l.groupEnd = toks[next(k)-1].end
		case "having":
			l.hasHaving = true
			l.having = span{toks[c.at].start, toks[next(k)-1].end}
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
	l.groupAt = toks[afterFrom-1].end
	for i := range l.items {
		if i < len(sh.items) && sh.items[i].alias != "" {
			l.items[i] = dropAlias(toks, l.items[i])
		}
	}
	for i := range l.orderBy {
		l.orderBy[i] = dropDirection(toks, l.orderBy[i])
	}
	ok := len(l.items) == len(sh.items) && len(l.groupBy) == len(sh.groupBy) &&
		len(l.orderBy) == len(sh.orderBy) && len(l.havingAggs) == sh.havingAggs && l.hasHaving == (sh.having != nil || sh.havingAggs > 0)
	for _, s := range slices.Concat(l.items, l.groupBy, l.orderBy) {
		ok = ok && s.b > s.a
	}
	return l, ok
}

// clause is a clause keyword of the top-level SELECT.
type clause struct {
	word string
	at   int // token index
}

// topClauses finds the clause keywords outside parentheses.
func topClauses(toks []stok) []clause {
	var cls []clause
	depth := 0
	for j := 1; j < len(toks); j++ {
		switch toks[j].kind {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case 'w':
			w := toks[j].word
			if depth != 0 || !selectClauses[w] || (w == "group" || w == "order") && (j+1 >= len(toks) || toks[j+1].word != "by") {
				continue
			}
			cls = append(cls, clause{w, j})
		}
	}
	return cls
}

// splitList splits tokens [from, to) at top-level commas; each span is
// kept as token indexes converted to bytes.
func splitList(toks []stok, from, to int) []span {
	var out []span
	depth, start := 0, from
	for j := from; j <= to; j++ {
		if j < to {
			switch toks[j].kind {
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
			out = append(out, span{start, j}) // token indexes for now
		} else {
			out = append(out, span{0, 0})
		}
		start = j + 1
	}
	for i, s := range out {
		if s.b > s.a {
			out[i] = span{toks[s.a].start, toks[s.b-1].end}
		}
	}
	return out
}

// tokensIn returns the indexes of the tokens inside s.
func tokensIn(toks []stok, s span) (int, int) {
	a, b := -1, -1
	for j, t := range toks {
		if t.start >= s.a && t.end <= s.b {
			if a < 0 {
				a = j
			}
			b = j + 1
		}
	}
	return a, b
}

// dropAlias removes "[AS] alias" from the end of a select item.
func dropAlias(toks []stok, s span) span {
	a, b := tokensIn(toks, s)
	if b-a < 2 {
		return span{}
	}
	b--
	if toks[b-1].word == "as" {
		b--
	}
	if b <= a {
		return span{}
	}
	return span{toks[a].start, toks[b-1].end}
}

// dropDirection removes ASC/DESC, USING op and NULLS FIRST/LAST from the
// end of an ORDER BY term.
func dropDirection(toks []stok, s span) span {
	a, b := tokensIn(toks, s)
	if a < 0 {
		return span{}
	}
	if b-a > 2 && toks[b-2].word == "nulls" && (toks[b-1].word == "first" || toks[b-1].word == "last") {
		b -= 2
	}
	if b-a > 1 && (toks[b-1].word == "asc" || toks[b-1].word == "desc") {
		b--
	}
	for j := b - 1; j > a; j-- {
		if toks[j].word == "using" {
			b = j
			break
		}
		if toks[j].kind == 'w' || toks[j].kind == '"' || toks[j].kind == '(' || toks[j].kind == ')' {
			break
		}
	}
	if b <= a {
		return span{}
	}
	return span{toks[a].start, toks[b-1].end}
}

// aggCalls finds the calls of mergeable aggregates among tokens [from,
// to): each name followed by "(", through its closing ")".
func aggCalls(toks []stok, from, to int) []span {
	var out []span
	for j := from; j+1 < to; j++ {
		if !mergeableAggNames[toks[j].word] || toks[j+1].kind != '(' {
			continue
		}
		if c := closing(toks, j+1, to); c > 0 {
			out = append(out, span{toks[j].start, toks[c].end})
		}
	}
	return out
}

// closing is the index of the ")" matching the "(" at open, or -1.
func closing(toks []stok, open, to int) int {
	depth := 0
	for j := open; j < to; j++ {
		switch toks[j].kind {
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
func callArgs(toks []stok, s span) []span {
	a, b := tokensIn(toks, s)
	for j := a; j >= 0 && j+1 < b; j++ {
		if !mergeableAggNames[toks[j].word] || toks[j+1].kind != '(' {
			continue
		}
		c := closing(toks, j+1, b)
		if c < 0 {
			return nil
		}
		from := j + 2
		if from < c && (toks[from].word == "distinct" || toks[from].word == "all") {
			from++
		}
		return splitList(toks, from, c)
	}
	return nil
}

// hasToken reports whether a token of kind k lies inside s.
func hasToken(toks []stok, s span, k byte) bool {
	for _, t := range toks {
		if t.start >= s.a && t.end <= s.b && t.kind == k {
			return true
		}
	}
	return false
}

// normText is s's tokens joined, lower case outside quotes: two spellings
// of one expression that differ only in spacing, comments or case compare
// equal.
func normText(text string, toks []stok, s span) string {
	var b strings.Builder
	for _, t := range toks {
		if t.start >= s.a && t.end <= s.b {
			switch {
			case t.kind == 'w':
				b.WriteString(t.word)
			case t.kind == '?' && text[t.start:t.end] == "?":
				// Each bare ? is an argument of its own.
				fmt.Fprintf(&b, "?%d", t.start)
			default:
				b.WriteString(text[t.start:t.end])
			}
			b.WriteByte(' ')
		}
	}
	return b.String()
}
