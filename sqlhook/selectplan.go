package sqlhook

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shardkey/shardkey/internal/merge"
)

// The builder turns a SELECT's shape into (a) a merge plan for
// internal/merge, bound per execution, and (b) edits of the per-target
// SQL, made only when the query runs on several targets: hidden columns
// after the select list, values of DISTINCT aggregates added to the
// GROUP BY, HAVING removed (it is evaluated after merging).

// colRef is a column of the targets' rows: >= 0 an output column of the
// query, < 0 the hidden column -(colRef+1).
type colRef int

// mergePlan is the compiled merge of a SELECT over several targets.
type mergePlan struct {
	dialect      merge.Dialect
	hidden       int  // hidden columns after the query's own
	grouped      bool // aggregates or GROUP BY: rows are grouped after merging
	distinct     bool
	distinctText merge.Text
	groupBy      []colRef
	groupText    []merge.Text
	aggs         []aggTmpl
	having       *condTmpl
	orderBy      []keyTmpl
	minVisible   int        // output columns the plan refers to
	calcs        []calcItem // select items computed after merging
	// sqliteSum: a target's SUM (the query's, or the hidden one behind
	// AVG) fails with "integer overflow" where one table's AVG would go on
	// in floating point or its SUM fail too: a refusal.
	sqliteSum bool
	// guards: SQLite adds integers in row order and, for AVG, goes on in
	// floating point once a partial sum leaves int64 (SUM fails): the
	// merged exact sum is its answer only when no order of the rows can
	// overflow, which the merged MIN, MAX and COUNT bound.
	guards []sumGuard
}

// sumGuard bounds the partial sums of an aggregate's argument.
type sumGuard struct{ min, max, count colRef }

// streaming: each target's rows flow through a k-way merge, so a LIMIT
// n OFFSET m is pushed down as LIMIT n+m; grouping and DISTINCT need every
// row.
func (m *mergePlan) streaming() bool { return !m.grouped && !m.distinct }

type aggTmpl struct {
	col  colRef
	fn   merge.Func
	args []colRef
	text merge.Text
}

type keyTmpl struct {
	col        colRef
	desc       bool
	nullsFirst bool
	text       merge.Text
}

type condTmpl struct {
	op   merge.CondOp
	kids []*condTmpl
	cmp  merge.CmpOp
	l, r opTmpl
	text merge.Text
}

type opTmpl struct {
	col     colRef
	isConst bool
	val     valRef
}

// textPiece is literal text, or a span of the statement copied with the
// holes inside it.
type textPiece struct {
	lit  string
	key  string // how lit counts when hidden columns are compared
	copy span
}

// selEdit inserts pieces at a byte offset, or (drop) removes a span, in
// the SQL sent to each of several targets.
type selEdit struct {
	at     int
	pieces []textPiece
	drop   span
	isDrop bool
}

// selBuilder builds one SELECT's merge.
type selBuilder struct {
	d        Dialect
	binary   bool // WithBinaryCollation
	sh       *selectShape
	lay      selectLayout
	text     string
	toks     []stok
	mp       *mergePlan
	hidden   [][]textPiece
	seen     map[string]colRef // normalized text of a hidden column
	groupAdd [][]textPiece
	// groupDecl: each GROUP BY key as the query names it, not its raw
	// copy: HAVING compares with the column's affinity, which on SQLite
	// comes from the declared type the raw copy does not have.
	groupDecl []colRef
	addSeen   map[string]bool
	star      int // the first * item, -1 when none
	why       string
	prefix    string // of the hidden columns' aliases
}

func (b *selBuilder) fail(why string) { setOnce(&b.why, why) }

// buildMerge compiles the merge of a SELECT; why is the reason several
// targets cannot be merged ("" when they can).
func buildMerge(d Dialect, binary bool, sh *selectShape, lay selectLayout, text string, toks []stok) (*mergePlan, []selEdit, string) {
	if sh.refuse != "" {
		return nil, nil, sh.refuse
	}
	b := &selBuilder{d: d, binary: binary, sh: sh, lay: lay, text: text, toks: toks,
		mp: &mergePlan{dialect: mergeDialect(d), distinct: sh.distinct}, seen: map[string]colRef{}, addSeen: map[string]bool{}, star: -1,
		prefix: hiddenPrefix(text)}
	for i, it := range sh.items {
		if it.expr.kind == exprStar && b.star < 0 {
			b.star = i
		}
	}
	b.mp.grouped = len(sh.groupBy) > 0 || sh.having != nil || sh.havingAggs > 0
	for _, it := range sh.items {
		b.mp.grouped = b.mp.grouped || it.expr.kind == exprAgg || it.expr.hasAgg
	}
	for _, o := range sh.orderBy {
		b.mp.grouped = b.mp.grouped || o.expr.kind == exprAgg || o.expr.hasAgg
	}
	if b.mp.grouped && b.star >= 0 {
		return nil, nil, "SELECT * with GROUP BY or aggregates"
	}
	if d == SQLite && b.mp.grouped && len(sh.groupBy) == 0 && !slices.ContainsFunc(sh.items, isAggItem) {
		// SQLite fails it ("HAVING clause on a non-aggregate query",
		// "misuse of aggregate"); each target would not, given the hidden
		// aggregates.
		return nil, nil, "an aggregate in HAVING or ORDER BY without GROUP BY or one in the select list on SQLite"
	}
	b.mp.distinctText = b.eqText("")
	b.sumGuards()
	b.items()
	b.groups()
	b.bareItems()
	if sh.having != nil {
		b.mp.having = b.cond(sh.having)
	}
	b.order()
	b.distinctByGroups()
	if b.why != "" {
		return nil, nil, b.why
	}
	b.mp.hidden = len(b.hidden)
	return b.mp, b.edits(), ""
}

func isAggItem(it shapeItem) bool { return it.expr.kind == exprAgg || it.expr.hasAgg }

func mergeDialect(d Dialect) merge.Dialect {
	switch d {
	case PostgreSQL:
		return merge.PostgreSQL
	case SQLite:
		return merge.SQLite
	}
	return merge.MySQL
}

// orderText is how text ordered by a term with the given COLLATE (or
// none) compares: bytewise where the collation is known to be binary.
func (b *selBuilder) orderText(collate string) merge.Text {
	if collate != "" {
		return binaryCollation(b.d, collate)
	}
	if !b.binary {
		return merge.TextRefused
	}
	if b.d == MySQL {
		return merge.TextPadSpace
	}
	return merge.TextBinary
}

// eqText is how text grouped or made distinct compares. PostgreSQL's
// deterministic collations make equal only identical strings.
func (b *selBuilder) eqText(collate string) merge.Text {
	if t := b.orderText(collate); t != merge.TextRefused || b.d != PostgreSQL {
		return t
	}
	return merge.TextEqualOnly
}

// binaryCollation is the comparison an explicit COLLATE name gives, or
// TextRefused when it is not one sqlhook reproduces.
func binaryCollation(d Dialect, name string) merge.Text {
	switch d {
	case PostgreSQL:
		switch name {
		case "C", "POSIX", "ucs_basic":
			return merge.TextBinary
		}
	case SQLite:
		switch strings.ToLower(name) {
		case "binary":
			return merge.TextBinary
		case "nocase":
			return merge.TextNoCase
		case "rtrim":
			return merge.TextRTrim
		}
	case MySQL:
		n := strings.ToLower(name)
		switch {
		case n == "binary", strings.HasSuffix(n, "_nopad_bin"), strings.HasSuffix(n, "_0900_bin"):
			return merge.TextBinary
		case strings.HasSuffix(n, "_bin"):
			return merge.TextPadSpace
		}
	}
	return merge.TextRefused
}

// hide adds a hidden column of the given text, or finds the one already
// added with the same text.
func (b *selBuilder) hide(pieces ...textPiece) colRef {
	var key strings.Builder
	for _, p := range pieces {
		if p.copy.b > p.copy.a {
			key.WriteString(normText(b.text, b.toks, p.copy))
		} else {
			key.WriteString(p.key)
		}
	}
	if c, ok := b.seen[key.String()]; ok {
		return c
	}
	b.hidden = append(b.hidden, pieces)
	c := colRef(-len(b.hidden))
	b.seen[key.String()] = c
	return c
}

func copyOf(s span) textPiece { return textPiece{copy: s} }

// items records the aggregates of the select list.
func (b *selBuilder) items() {
	for i, it := range b.sh.items {
		switch {
		case it.expr.kind == exprAgg:
			b.agg(it.expr, b.lay.items[i], colRef(i))
		case it.expr.kind == exprOther && it.expr.hasAgg:
			if it.expr.calc == nil || !b.calcCols(it.expr.calc, b.lay.items[i]) {
				b.fail("an aggregate inside an expression")
				continue
			}
			b.mp.calcs = append(b.mp.calcs, calcItem{col: colRef(i), tree: it.expr.calc})
		}
	}
}

// agg records the aggregate call e, written at s, whose value is column
// col of the targets' rows.
func (b *selBuilder) agg(e shapeExpr, s span, col colRef) {
	a := aggTmpl{col: col}
	args := callArgs(b.toks, s)
	if (e.agg.fn == "sum" || e.agg.fn == "avg") && b.d == MySQL && hasToken(b.toks, s, '/') {
		// MariaDB rounds each target's SUM/AVG of a division to
		// div_precision_increment; their sum differs from one table's.
		b.fail(strings.ToUpper(e.agg.fn) + " of an expression with / on MySQL")
		return
	}
	if e.agg.distinct && e.hasParam {
		b.fail(strings.ToUpper(e.agg.fn) + "(DISTINCT ...) of an expression with a placeholder")
		return
	}
	if !e.agg.star && (len(args) == 0 || len(args) != e.agg.nargs) {
		b.fail("aggregate " + strings.ToUpper(e.agg.fn) + " written in an unexpected form")
		return
	}
	if !b.aggFunc(&a, e, args) {
		b.fail("aggregate " + strings.ToUpper(e.agg.fn))
		return
	}
	b.mp.aggs = append(b.mp.aggs, a)
}

// aggFunc says how the aggregate combines across targets, adding the
// hidden columns it needs.
func (b *selBuilder) aggFunc(a *aggTmpl, e shapeExpr, args []span) bool {
	distinct := map[string]merge.Func{"count": merge.CountDistinct, "sum": merge.SumDistinct, "avg": merge.AvgDistinct}
	if f, ok := distinct[e.agg.fn]; ok && e.agg.distinct {
		a.fn, a.text = f, b.eqText("")
		a.args = b.distinctArgs(args)
		return true
	}
	switch e.agg.fn {
	case "count":
		a.fn = merge.Count
	case "sum":
		a.fn = merge.Sum
	case "avg":
		// Keyed apart from a SUM or COUNT the query writes, which is an
		// aggregate column of its own.
		sum := b.hide(textPiece{lit: "SUM(", key: "avg-sum("}, copyOf(args[0]), textPiece{lit: ")", key: ")"})
		cnt := b.hide(textPiece{lit: "COUNT(", key: "avg-count("}, copyOf(args[0]), textPiece{lit: ")", key: ")"})
		a.fn, a.args = merge.Avg, []colRef{sum, cnt}
		b.mp.sqliteSum = b.mp.sqliteSum || b.d == SQLite
	case "min":
		a.fn, a.text = merge.Min, b.orderText("")
	case "max":
		a.fn, a.text = merge.Max, b.orderText("")
	default:
		return false
	}
	return true
}

// sumGuards adds, on SQLite, for every SUM and AVG the query writes, the
// hidden MIN, MAX and COUNT of its argument that bound its partial sums;
// they are the first hidden columns, which the engine returns too.
func (b *selBuilder) sumGuards() {
	if b.d != SQLite || !b.mp.grouped {
		return
	}
	var calls []span
	for _, s := range slices.Concat(b.lay.items, b.lay.orderBy) {
		a, z := tokensIn(b.toks, s)
		if a >= 0 {
			calls = append(calls, aggCalls(b.toks, a, z)...)
		}
	}
	calls = append(calls, b.lay.havingAggs...)
	for _, c := range calls {
		a, _ := tokensIn(b.toks, c)
		if w := b.toks[a].word; w != "sum" && w != "avg" {
			continue
		}
		if args := callArgs(b.toks, c); len(args) == 1 {
			b.guard(args[0])
		}
	}
}

// guard adds the hidden MIN, MAX and COUNT of x.
func (b *selBuilder) guard(x span) {
	col := func(fn string, f merge.Func) colRef {
		n := len(b.hidden)
		c := b.hide(textPiece{lit: fn + "(", key: "guard-" + fn + "("}, copyOf(x), textPiece{lit: ")", key: ")"})
		if len(b.hidden) > n {
			b.mp.aggs = append(b.mp.aggs, aggTmpl{col: c, fn: f, text: merge.TextRefused})
		}
		return c
	}
	g := sumGuard{min: col("MIN", merge.Min), max: col("MAX", merge.Max), count: col("COUNT", merge.Count)}
	b.mp.guards = append(b.mp.guards, g)
	b.mp.sqliteSum = true
}

// distinctArgs makes each argument of a DISTINCT aggregate a hidden
// column and a key of each target's GROUP BY, so that each target returns
// its distinct values for the merge to unite.
func (b *selBuilder) distinctArgs(args []span) []colRef {
	out := make([]colRef, len(args))
	for i, s := range args {
		out[i] = b.hide(copyOf(s))
		if k := normText(b.text, b.toks, s); !b.addSeen[k] {
			b.addSeen[k] = true
			b.groupAdd = append(b.groupAdd, []textPiece{copyOf(s)})
		}
	}
	return out
}

// hiddenAgg is the column of an aggregate written outside the select list
// (HAVING, ORDER BY): a hidden column, merged as its function says.
func (b *selBuilder) hiddenAgg(e shapeExpr, s span) colRef {
	key := normText(b.text, b.toks, s)
	if c, ok := b.seen[key]; ok {
		return c
	}
	c := b.hide(copyOf(s))
	b.agg(e, s, c)
	return c
}

// aliasOf finds the select items whose output name is name.
func (b *selBuilder) aliasOf(name string) []int {
	var out []int
	for i, it := range b.sh.items {
		if it.outName == name || it.alias == name {
			out = append(out, i)
		}
	}
	return out
}

// itemWithRef finds a select item that is the column reference ref.
func (b *selBuilder) itemWithRef(ref []string) int {
	for i, it := range b.sh.items {
		if it.expr.kind == exprColumn && slices.Equal(it.expr.ref, ref) && (b.star < 0 || i < b.star) {
			return i
		}
	}
	return -1
}

// namesOther reports whether name is the output name of a select item
// other than a column of that name.
func (b *selBuilder) namesOther(name string) bool {
	for _, i := range b.aliasOf(name) {
		e := b.sh.items[i].expr
		if e.kind != exprColumn || e.ref[len(e.ref)-1] != name {
			return true
		}
	}
	return false
}

// sameAsItem finds a select item written as the expression at s (up to
// spacing, comments and case): the databases read such an ORDER BY term as
// that output column.
func (b *selBuilder) sameAsItem(s span) int {
	key := normText(b.text, b.toks, s)
	for i, it := range b.sh.items {
		if b.star >= 0 && i >= b.star {
			break
		}
		if it.expr.kind != exprStar && normText(b.text, b.toks, b.lay.items[i]) == key {
			return i
		}
	}
	return -1
}

// sameItems reports whether the items are one expression written several
// times (SELECT k, k ... ORDER BY k is not ambiguous).
func (b *selBuilder) sameItems(items []int) bool {
	first := normText(b.text, b.toks, b.lay.items[items[0]])
	for _, i := range items[1:] {
		if normText(b.text, b.toks, b.lay.items[i]) != first {
			return false
		}
	}
	return true
}

// readsAlias: on MySQL and SQLite a name in an expression may be an output
// alias, which a copy of the expression in the select list would not see.
func (b *selBuilder) readsAlias(e shapeExpr) bool {
	if b.d == PostgreSQL {
		return false
	}
	for _, n := range e.names {
		for _, it := range b.sh.items {
			if it.alias == n {
				return true
			}
		}
	}
	return false
}

// bareItems refuses, on MySQL and SQLite, a grouped select item that
// reads a column neither grouped nor aggregated: MariaDB returns any row's
// value (NULL from a target without rows), SQLite the row of the MIN or
// MAX; the first target's value is neither. PostgreSQL allows only
// columns the groups determine.
func (b *selBuilder) bareItems() {
	for i, it := range b.sh.items {
		if b.star >= 0 && i >= b.star {
			return
		}
		if !b.groupedValue(it.expr, b.lay.items[i]) && !slices.ContainsFunc(b.sh.groupBy, func(g shapeExpr) bool {
			return g.kind == exprOrdinal && g.ordinal == i+1
		}) {
			b.fail("a select item that is neither grouped nor aggregated")
			return
		}
	}
}

// groupedValue reports whether the expression at s has one value per
// group: an aggregate, a GROUP BY term, or reading only GROUP BY columns.
// Any value passes where nothing is grouped, and on PostgreSQL, which
// checks it itself.
func (b *selBuilder) groupedValue(e shapeExpr, s span) bool {
	if !b.mp.grouped || b.d == PostgreSQL || e.kind == exprAgg || e.hasAgg || e.kind == exprOrdinal {
		return true
	}
	key := normText(b.text, b.toks, s)
	for k := range b.sh.groupBy {
		if normText(b.text, b.toks, b.lay.groupBy[k]) == key {
			return true
		}
	}
	keys := b.groupColumns()
	if e.kind == exprColumn {
		// s.id is not l.id; an unqualified name is the one column it
		// resolves to.
		return slices.ContainsFunc(keys, func(g []string) bool {
			return g[len(g)-1] == e.ref[len(e.ref)-1] && (len(g) == 1 || len(e.ref) == 1 || slices.Equal(g, e.ref))
		})
	}
	for _, n := range e.names {
		if !slices.ContainsFunc(keys, func(g []string) bool { return g[len(g)-1] == n }) {
			return false
		}
	}
	return true
}

// groupColumns are the columns GROUP BY names, by name or by the position
// of a select item that is a column.
func (b *selBuilder) groupColumns() [][]string {
	var out [][]string
	for _, g := range b.sh.groupBy {
		if g.kind == exprOrdinal && g.ordinal >= 1 && g.ordinal <= len(b.sh.items) {
			g = b.sh.items[g.ordinal-1].expr
		}
		if g.kind == exprColumn {
			out = append(out, g.ref)
		}
	}
	return out
}

// groups records the GROUP BY keys.
func (b *selBuilder) groups() {
	for k, g := range b.sh.groupBy {
		var col colRef
		switch {
		case g.kind == exprOrdinal:
			if g.ordinal < 1 || g.ordinal > len(b.sh.items) {
				b.fail("GROUP BY a position outside the select list")
				return
			}
			col = colRef(g.ordinal - 1)
		case g.kind == exprAgg || g.hasAgg:
			b.fail("GROUP BY an aggregate")
			return
		case g.kind == exprColumn && b.itemWithRef(g.ref) >= 0:
			col = colRef(b.itemWithRef(g.ref))
		case b.readsAlias(g) || g.kind == exprColumn && len(g.ref) == 1 && b.namesOther(g.ref[0]):
			// The databases group by a table column of that name when
			// there is one, else by the output column: only the schema
			// tells which.
			b.fail("GROUP BY " + strings.Join(g.ref, ".") + ", an output name (GROUP BY the expression or its position)")
			return
		default:
			raw, ok := b.rawCopy(g, b.lay.groupBy[k])
			if ok {
				b.groupDecl = append(b.groupDecl, noDecl)
				b.mp.groupBy = append(b.mp.groupBy, raw)
				b.mp.groupText = append(b.mp.groupText, b.eqText(g.collate))
				continue
			}
			col = b.hide(copyOf(b.lay.groupBy[k]))
		}
		b.groupDecl = append(b.groupDecl, col)
		b.mp.groupBy = append(b.mp.groupBy, b.rawItem(col))
		b.mp.groupText = append(b.mp.groupText, b.eqText(g.collate))
	}
}

// noDecl: a GROUP BY key read only through its raw copy so far.
const noDecl colRef = -1 << 30

// declGroup is GROUP BY key k as the query names it, a hidden copy added
// when only the raw one was read.
func (b *selBuilder) declGroup(k int) colRef {
	if c := b.groupDecl[k]; c != noDecl {
		return c
	}
	return b.hide(copyOf(b.lay.groupBy[k]))
}

// order records the ORDER BY keys.
func (b *selBuilder) order() {
	for k, o := range b.sh.orderBy {
		col, ok := b.orderCol(o.expr, b.lay.orderBy[k])
		if !ok {
			return
		}
		if b.mp.distinct && col < 0 {
			b.fail("SELECT DISTINCT ordered by a term not selected")
			return
		}
		key := keyTmpl{col: b.rawItem(col), desc: o.desc, text: b.orderText(o.expr.collate)}
		// PostgreSQL sorts NULL as the largest value, MySQL and SQLite as
		// the smallest.
		key.nullsFirst = o.desc == (b.d == PostgreSQL)
		if o.nullsSet {
			key.nullsFirst = o.nullsFirst
		}
		b.mp.orderBy = append(b.mp.orderBy, key)
	}
}

// orderCol is the column an ORDER BY term sorts by.
func (b *selBuilder) orderCol(e shapeExpr, s span) (colRef, bool) {
	switch e.kind {
	case exprOrdinal:
		if e.ordinal < 1 {
			b.fail("ORDER BY position 0")
			return 0, false
		}
		b.mp.minVisible = max(b.mp.minVisible, e.ordinal)
		return colRef(e.ordinal - 1), true
	case exprAgg:
		if i := b.sameAsItem(s); i >= 0 {
			return colRef(i), true
		}
		return b.hiddenAgg(e, s), true
	case exprColumn:
		// PostgreSQL reads x COLLATE c as an expression, over the input
		// columns only; MySQL and SQLite still see the output alias.
		if len(e.ref) == 1 && (e.collate == "" || b.d != PostgreSQL) {
			switch m := b.aliasOf(e.ref[0]); {
			case len(m) > 1 && !b.sameItems(m):
				b.fail("ORDER BY " + e.ref[0] + ", an ambiguous output name,")
				return 0, false
			case len(m) > 0 && b.star >= 0 && m[0] > b.star:
				b.fail("ORDER BY " + e.ref[0] + ", an output name after *,")
				return 0, false
			case len(m) >= 1:
				return colRef(m[0]), true
			}
		}
		// Not an output name: the input column, read by a select item
		// naming it as well.
		if i := b.itemWithRef(e.ref); i >= 0 {
			return colRef(i), true
		}
	case exprStar:
		b.fail("ORDER BY *")
		return 0, false
	default:
		if b.readsAlias(e) {
			b.fail("ORDER BY an expression naming an output alias")
			return 0, false
		}
		if e.hasAgg {
			return b.computedKey(e, s)
		}
		if i := b.sameAsItem(s); i >= 0 {
			return colRef(i), true
		}
	}
	// A term not in the select list (with its COLLATE, if any: the values
	// are the same) is read as a hidden column.
	if !b.groupedValue(e, s) {
		b.fail("ORDER BY a column that is neither grouped nor aggregated")
		return 0, false
	}
	if col, ok := b.rawCopy(e, s); ok {
		return col, true
	}
	return b.hide(copyOf(s)), true
}

// rawCopy is, on SQLite, a hidden copy +(x) of the column reference x
// written at s. The driver parses a DATE, DATETIME or TIMESTAMP column's
// text into a time.Time, while SQLite orders, groups and compares the
// stored text ('T' or ' ', 'Z' or '+00:00' are different values); an
// expression has no declared type, so the copy comes as stored (text,
// integer, real), which the engine compares as SQLite does. ok is false on
// the other dialects and for other expressions.
func (b *selBuilder) rawCopy(e shapeExpr, s span) (colRef, bool) {
	if b.d != SQLite || e.kind != exprColumn {
		return 0, false
	}
	return b.hide(textPiece{lit: "+(", key: "+("}, copyOf(s), textPiece{lit: ")", key: ")"}), true
}

// rawItem is rawCopy of output column c when its select item is a column
// reference, else c.
func (b *selBuilder) rawItem(c colRef) colRef {
	if c < 0 || int(c) >= len(b.sh.items) || b.star >= 0 && int(c) >= b.star {
		return c // hidden already, or not an item of its own after *
	}
	if raw, ok := b.rawCopy(b.sh.items[c].expr, b.lay.items[c]); ok {
		return raw
	}
	return c
}

// distinctByGroups merges a SQLite SELECT DISTINCT as groups of the
// items' raw copies (rawItem): DISTINCT would compare the values the
// driver parsed. Each group keeps its first row, the row DISTINCT returns.
func (b *selBuilder) distinctByGroups() {
	if b.d != SQLite || !b.mp.distinct || b.mp.grouped || b.star >= 0 {
		return
	}
	keys := make([]colRef, len(b.sh.items))
	raw := false
	for i := range keys {
		keys[i] = b.rawItem(colRef(i))
		raw = raw || keys[i] < 0
	}
	if !raw {
		return
	}
	b.mp.grouped, b.mp.distinct, b.mp.groupBy = true, false, keys
	for range keys {
		b.mp.groupText = append(b.mp.groupText, b.mp.distinctText)
	}
}

// computedKey is an ORDER BY expression over aggregates: a hidden copy,
// its value computed after merging.
func (b *selBuilder) computedKey(e shapeExpr, s span) (colRef, bool) {
	if i := b.sameAsItem(s); i >= 0 {
		return colRef(i), true
	}
	n := len(b.hidden)
	col := b.hide(copyOf(s))
	if len(b.hidden) == n {
		return col, true // written before: already computed
	}
	if e.calc == nil || !b.calcCols(e.calc, s) {
		b.fail("ORDER BY an expression containing an aggregate")
		return 0, false
	}
	b.mp.calcs = append(b.mp.calcs, calcItem{col: col, tree: e.calc})
	return col, true
}

// cond compiles a HAVING condition.
func (b *selBuilder) cond(c *shapeCond) *condTmpl {
	t := &condTmpl{op: c.op, cmp: c.cmp}
	for _, k := range c.kids {
		t.kids = append(t.kids, b.cond(k))
	}
	if c.op == merge.Compare || c.op == merge.IsNull || c.op == merge.IsNotNull {
		t.l = b.operand(c.l)
		if c.op == merge.Compare {
			t.r = b.operand(c.r)
			t.text = b.eqText("")
			if c.cmp != merge.Eq && c.cmp != merge.Ne {
				t.text = b.orderText("")
			}
		}
	}
	return t
}

// operand is a HAVING operand's column: an aggregate (hidden), a GROUP BY
// key, an output alias where the dialect reads one, or a constant.
func (b *selBuilder) operand(o shapeOperand) opTmpl {
	if o.isConst {
		return opTmpl{isConst: true, val: o.val}
	}
	e := o.expr
	switch e.kind {
	case exprAgg:
		if o.aggIndex < 0 || o.aggIndex >= len(b.lay.havingAggs) {
			b.fail("HAVING written in an unexpected form")
			return opTmpl{}
		}
		return opTmpl{col: b.hiddenAgg(e, b.lay.havingAggs[o.aggIndex])}
	case exprOther:
		if e.calc != nil {
			return opTmpl{col: b.havingCalc(e.calc, o.aggIndex)}
		}
		// A GROUP BY expression (GROUP BY qty % 3 HAVING qty % 3 > 1);
		// MySQL's HAVING reads only names.
		for k, g := range b.sh.groupBy {
			if b.d != MySQL && e.print != "" && g.print == e.print && !e.hasAgg && k < len(b.groupDecl) {
				return opTmpl{col: b.declGroup(k)}
			}
		}
	case exprColumn:
		group := -1
		for k, g := range b.sh.groupBy {
			if g.kind == exprColumn && slices.Equal(g.ref, e.ref) {
				group = k
			}
		}
		// MySQL reads a HAVING name as an output alias first; SQLite as a
		// column of the table first, which only the schema tells.
		alias := -1
		if len(e.ref) == 1 && b.d != PostgreSQL {
			if m := b.aliasOf(e.ref[0]); len(m) == 1 && b.sh.items[m[0]].alias != "" {
				alias = m[0]
			}
		}
		if alias >= 0 && b.d == SQLite {
			b.fail("HAVING " + e.ref[0] + ", an output alias SQLite reads as a column when the table has one,")
			return opTmpl{}
		}
		switch {
		case alias >= 0 && group >= 0:
			b.fail("HAVING " + e.ref[0] + ", both an output alias and a GROUP BY column,")
		case alias >= 0:
			return opTmpl{col: colRef(alias)}
		case group >= 0 && group < len(b.groupDecl):
			return opTmpl{col: b.declGroup(group)}
		default:
			b.fail("HAVING on a column that is not a GROUP BY key")
		}
		return opTmpl{}
	}
	b.fail("HAVING with an expression other than an aggregate, a GROUP BY column or a constant")
	return opTmpl{}
}

// havingCalc is a HAVING operand over aggregates: a hidden column written
// from its parts (HAVING's text is not kept), computed after merging.
// first is the index of its first aggregate among HAVING's.
func (b *selBuilder) havingCalc(n *calcNode, first int) colRef {
	leaves := calcAggs(n, nil)
	if first < 0 || first+len(leaves) > len(b.lay.havingAggs) {
		b.fail("HAVING written in an unexpected form")
		return 0
	}
	for k, l := range leaves {
		l.col = b.hiddenAgg(l.agg, b.lay.havingAggs[first+k])
	}
	next := 0
	pieces := b.calcText(n, b.lay.havingAggs[first:], &next)
	size := len(b.hidden)
	col := b.hide(pieces...)
	if len(b.hidden) > size {
		b.mp.calcs = append(b.mp.calcs, calcItem{col: col, tree: n})
	}
	return col
}

// calcText writes n, every operation in parentheses, its aggregates
// copied from the spans calls (in text order, from *next).
func (b *selBuilder) calcText(n *calcNode, calls []span, next *int) []textPiece {
	lit := func(s string) textPiece { return textPiece{lit: s, key: s} }
	switch n.op {
	case merge.ExprCol:
		*next++
		return []textPiece{copyOf(calls[*next-1])}
	case merge.ExprConst:
		return []textPiece{lit(fmt.Sprint(n.con))}
	case merge.ExprNeg:
		return slices.Concat([]textPiece{lit("(-")}, b.calcText(n.kids[0], calls, next), []textPiece{lit(")")})
	case merge.ExprCoalesce:
		out := []textPiece{lit("COALESCE(")}
		for i, k := range n.kids {
			if i > 0 {
				out = append(out, lit(", "))
			}
			out = append(out, b.calcText(k, calls, next)...)
		}
		return append(out, lit(")"))
	}
	op := map[merge.ExprOp]string{merge.ExprAdd: " + ", merge.ExprSub: " - ", merge.ExprMul: " * ", merge.ExprDiv: " / "}[n.op]
	return slices.Concat([]textPiece{lit("(")}, b.calcText(n.kids[0], calls, next), []textPiece{lit(op)},
		b.calcText(n.kids[1], calls, next), []textPiece{lit(")")})
}

// edits are the changes of the per-target SQL.
func (b *selBuilder) edits() []selEdit {
	var out []selEdit
	if len(b.hidden) > 0 {
		var ps []textPiece
		for k, h := range b.hidden {
			// In parentheses: whatever ends the copy (9. in MySQL) stays
			// apart from the alias.
			ps = append(ps, textPiece{lit: ", ("})
			ps = append(ps, h...)
			ps = append(ps, textPiece{lit: ") AS " + b.prefix + strconv.Itoa(k)})
		}
		out = append(out, selEdit{at: b.lay.listEnd, pieces: ps})
	}
	if len(b.groupAdd) > 0 {
		var ps []textPiece
		at := b.lay.groupEnd
		if !b.lay.hasGroup {
			at = b.lay.groupAt
			ps = append(ps, textPiece{lit: " GROUP BY "})
		} else {
			ps = append(ps, textPiece{lit: ", "})
		}
		for k, g := range b.groupAdd {
			if k > 0 {
				ps = append(ps, textPiece{lit: ", "})
			}
			ps = append(ps, g...)
		}
		out = append(out, selEdit{at: at, pieces: ps})
	}
	if b.lay.hasHaving {
		out = append(out, selEdit{drop: b.lay.having, isDrop: true})
	}
	return out
}

// hiddenPrefix starts the aliases of hidden columns (shardkey_hidden_N):
// they must differ from every name the statement writes, or the targets'
// ORDER BY, GROUP BY or HAVING could read a hidden column for the query's
// own (or fail as ambiguous), so the prefix grows while the text holds it.
func hiddenPrefix(text string) string {
	low := strings.ToLower(text)
	p := "shardkey_hidden_"
	for strings.Contains(low, p) {
		p = "shardkey_" + p
	}
	return p
}

// applySelectEdits adds the merge edits to a statement's template edits.
// A copied span takes the holes inside it (table names, placeholders); a
// dropped span keeps its holes for the single-target rendering.
func applySelectEdits(text string, edits []edit, sel []selEdit) []edit {
	inside := func(s span, take bool) []edit {
		var in []edit
		kept := edits[:0:0]
		for _, e := range edits {
			if e.start >= s.a && e.end <= s.b && e.end > e.start {
				e.start, e.end = e.start-s.a, e.end-s.a
				in = append(in, e)
				if take {
					continue
				}
				e.start, e.end = e.start+s.a, e.end+s.a
			}
			kept = append(kept, e)
		}
		if take {
			edits = kept
		}
		return in
	}
	var add []edit
	for _, se := range sel {
		if se.isDrop {
			sub := buildTemplate(text[se.drop.a:se.drop.b], inside(se.drop, true))
			add = append(add, edit{se.drop.a, se.drop.b, segment{hole: holeMergeDrop, sub: sub}})
			continue
		}
		var sub []segment
		for _, p := range se.pieces {
			if p.copy.b > p.copy.a {
				sub = append(sub, buildTemplate(text[p.copy.a:p.copy.b], inside(p.copy, false))...)
			} else {
				sub = append(sub, segment{text: p.lit})
			}
		}
		if se.at < len(text) && !isSpace(text[se.at]) {
			sub = append(sub, segment{text: " "}) // SELECT(0)FROM: keep the next word apart
		}
		add = append(add, edit{se.at, se.at, segment{hole: holeMergeAdd, sub: sub}})
	}
	return append(edits, add...)
}
