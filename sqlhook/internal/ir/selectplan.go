package ir

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

// ColRef is a column of the targets' rows: >= 0 an output column of the
// query, < 0 the hidden column -(ColRef+1).
type ColRef int

// MergePlan is the compiled merge of a SELECT over several targets.
type MergePlan struct {
	dialect      merge.Dialect
	Hidden       int  // hidden columns after the query's own
	Grouped      bool // aggregates or GROUP BY: rows are grouped after merging
	Distinct     bool
	DistinctText merge.Text
	GroupBy      []ColRef
	GroupText    []merge.Text
	Aggs         []AggTmpl
	Having       *CondTmpl
	OrderBy      []KeyTmpl
	MinVisible   int        // output columns the plan refers to
	Calcs        []calcItem // select items computed after merging
	// sqliteSum: a target's SUM (the query's, or the hidden one behind
	// AVG) fails with "integer overflow" where one table's AVG would go on
	// in floating point or its SUM fail too: a refusal.
	SQLiteSum bool
	// guards: SQLite adds integers in row order and, for AVG, goes on in
	// floating point once a partial sum leaves int64 (SUM fails): the
	// merged exact sum is its answer only when no order of the rows can
	// overflow, which the merged MIN, MAX and COUNT bound.
	Guards []sumGuard
}

// sumGuard bounds the partial sums of an aggregate's argument.
type sumGuard struct{ Min, Max, Count ColRef }

// streaming: each target's rows flow through a k-way merge, so a LIMIT
// n OFFSET m is pushed down as LIMIT n+m; grouping and DISTINCT need every
// row.
func (m *MergePlan) Streaming() bool { return !m.Grouped && !m.Distinct }

type AggTmpl struct {
	Col  ColRef
	Fn   merge.Func
	Args []ColRef
	Text merge.Text
}

type KeyTmpl struct {
	Col        ColRef
	Desc       bool
	NullsFirst bool
	Text       merge.Text
}

type CondTmpl struct {
	Op   merge.CondOp
	Kids []*CondTmpl
	Cmp  merge.CmpOp
	L, R OpTmpl
	Text merge.Text
}

type OpTmpl struct {
	Col     ColRef
	IsConst bool
	Val     ValRef
}

// textPiece is literal text, or a span of the statement copied with the
// holes inside it.
type textPiece struct {
	lit  string
	key  string // how lit counts when hidden columns are compared
	copy Span
}

// selEdit inserts pieces at a byte offset, or (drop) removes a span, in
// the SQL sent to each of several targets.
type selEdit struct {
	at     int
	pieces []textPiece
	drop   Span
	isDrop bool
}

// selBuilder builds one SELECT's merge.
type selBuilder struct {
	d        Dialect
	binary   bool // WithBinaryCollation
	sh       *SelectShape
	lay      selectLayout
	text     string
	toks     []Stok
	mp       *MergePlan
	hidden   [][]textPiece
	seen     map[string]ColRef // normalized text of a hidden column
	groupAdd [][]textPiece
	// groupDecl: each GROUP BY key as the query names it, not its raw
	// copy: HAVING compares with the column's affinity, which on SQLite
	// comes from the declared type the raw copy does not have.
	groupDecl []ColRef
	addSeen   map[string]bool
	star      int // the first * item, -1 when none
	why       string
	prefix    string // of the hidden columns' aliases
}

func (b *selBuilder) fail(why string) { SetOnce(&b.why, why) }

// BuildMerge compiles the merge of a SELECT; why is the reason several
// targets cannot be merged ("" when they can).
func BuildMerge(d Dialect, binary bool, sh *SelectShape, lay selectLayout, text string, toks []Stok) (*MergePlan, []selEdit, string) {
	if sh.refuse != "" {
		return nil, nil, sh.refuse
	}
	b := &selBuilder{d: d, binary: binary, sh: sh, lay: lay, text: text, toks: toks,
		mp: &MergePlan{dialect: MergeDialect(d), Distinct: sh.Distinct}, seen: map[string]ColRef{}, addSeen: map[string]bool{}, star: -1,
		prefix: hiddenPrefix(text)}
	for i, it := range sh.Items {
		if it.Expr.Kind == ExprStar && b.star < 0 {
			b.star = i
		}
	}
	b.mp.Grouped = len(sh.GroupBy) > 0 || sh.Having != nil || sh.HavingAggs > 0
	for _, it := range sh.Items {
		b.mp.Grouped = b.mp.Grouped || it.Expr.Kind == ExprAgg || it.Expr.HasAgg
	}
	for _, o := range sh.OrderBy {
		b.mp.Grouped = b.mp.Grouped || o.Expr.Kind == ExprAgg || o.Expr.HasAgg
	}
	if b.mp.Grouped && b.star >= 0 {
		return nil, nil, "SELECT * with GROUP BY or aggregates"
	}
	if d == SQLite && b.mp.Grouped && len(sh.GroupBy) == 0 && !slices.ContainsFunc(sh.Items, isAggItem) {
		// SQLite fails it ("HAVING clause on a non-aggregate query",
		// "misuse of aggregate"); each target would not, given the hidden
		// aggregates.
		return nil, nil, "an aggregate in HAVING or ORDER BY without GROUP BY or one in the select list on SQLite"
	}
	b.mp.DistinctText = b.eqText("")
	b.sumGuards()
	b.items()
	b.groups()
	b.bareItems()
	if sh.Having != nil {
		b.mp.Having = b.cond(sh.Having)
	}
	b.order()
	b.distinctByGroups()
	if b.why != "" {
		return nil, nil, b.why
	}
	b.mp.Hidden = len(b.hidden)
	return b.mp, b.edits(), ""
}

func isAggItem(it ShapeItem) bool { return it.Expr.Kind == ExprAgg || it.Expr.HasAgg }

func MergeDialect(d Dialect) merge.Dialect {
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
func (b *selBuilder) hide(pieces ...textPiece) ColRef {
	var key strings.Builder
	for _, p := range pieces {
		if p.copy.B > p.copy.A {
			key.WriteString(normText(b.text, b.toks, p.copy))
		} else {
			key.WriteString(p.key)
		}
	}
	if c, ok := b.seen[key.String()]; ok {
		return c
	}
	b.hidden = append(b.hidden, pieces)
	c := ColRef(-len(b.hidden))
	b.seen[key.String()] = c
	return c
}

func copyOf(s Span) textPiece { return textPiece{copy: s} }

// items records the aggregates of the select list.
func (b *selBuilder) items() {
	for i, it := range b.sh.Items {
		switch {
		case it.Expr.Kind == ExprAgg:
			b.agg(it.Expr, b.lay.items[i], ColRef(i))
		case it.Expr.Kind == ExprOther && it.Expr.HasAgg:
			if it.Expr.Calc == nil || !b.calcCols(it.Expr.Calc, b.lay.items[i]) {
				b.fail("an aggregate inside an expression")
				continue
			}
			b.mp.Calcs = append(b.mp.Calcs, calcItem{Col: ColRef(i), Tree: it.Expr.Calc})
		}
	}
}

// agg records the aggregate call e, written at s, whose value is column
// col of the targets' rows.
func (b *selBuilder) agg(e ShapeExpr, s Span, col ColRef) {
	a := AggTmpl{Col: col}
	args := callArgs(b.toks, s)
	if (e.Agg.Fn == "sum" || e.Agg.Fn == "avg") && b.d == MySQL && hasToken(b.toks, s, '/') {
		// MariaDB rounds each target's SUM/AVG of a division to
		// div_precision_increment; their sum differs from one table's.
		b.fail(strings.ToUpper(e.Agg.Fn) + " of an expression with / on MySQL")
		return
	}
	if e.Agg.Distinct && e.HasParam {
		b.fail(strings.ToUpper(e.Agg.Fn) + "(DISTINCT ...) of an expression with a placeholder")
		return
	}
	if !e.Agg.Star && (len(args) == 0 || len(args) != e.Agg.Nargs) {
		b.fail("aggregate " + strings.ToUpper(e.Agg.Fn) + " written in an unexpected form")
		return
	}
	if !b.aggFunc(&a, e, args) {
		b.fail("aggregate " + strings.ToUpper(e.Agg.Fn))
		return
	}
	b.mp.Aggs = append(b.mp.Aggs, a)
}

// aggFunc says how the aggregate combines across targets, adding the
// hidden columns it needs.
func (b *selBuilder) aggFunc(a *AggTmpl, e ShapeExpr, args []Span) bool {
	distinct := map[string]merge.Func{"count": merge.CountDistinct, "sum": merge.SumDistinct, "avg": merge.AvgDistinct}
	if f, ok := distinct[e.Agg.Fn]; ok && e.Agg.Distinct {
		a.Fn, a.Text = f, b.eqText("")
		a.Args = b.distinctArgs(args)
		return true
	}
	switch e.Agg.Fn {
	case "count":
		a.Fn = merge.Count
	case "sum":
		a.Fn = merge.Sum
	case "avg":
		// Keyed apart from a SUM or COUNT the query writes, which is an
		// aggregate column of its own.
		sum := b.hide(textPiece{lit: "SUM(", key: "avg-sum("}, copyOf(args[0]), textPiece{lit: ")", key: ")"})
		cnt := b.hide(textPiece{lit: "COUNT(", key: "avg-count("}, copyOf(args[0]), textPiece{lit: ")", key: ")"})
		a.Fn, a.Args = merge.Avg, []ColRef{sum, cnt}
		b.mp.SQLiteSum = b.mp.SQLiteSum || b.d == SQLite
	case "min":
		a.Fn, a.Text = merge.Min, b.orderText("")
	case "max":
		a.Fn, a.Text = merge.Max, b.orderText("")
	default:
		return false
	}
	return true
}

// sumGuards adds, on SQLite, for every SUM and AVG the query writes, the
// hidden MIN, MAX and COUNT of its argument that bound its partial sums;
// they are the first hidden columns, which the engine returns too.
func (b *selBuilder) sumGuards() {
	if b.d != SQLite || !b.mp.Grouped {
		return
	}
	var calls []Span
	for _, s := range slices.Concat(b.lay.items, b.lay.orderBy) {
		a, z := tokensIn(b.toks, s)
		if a >= 0 {
			calls = append(calls, aggCalls(b.toks, a, z)...)
		}
	}
	calls = append(calls, b.lay.havingAggs...)
	for _, c := range calls {
		a, _ := tokensIn(b.toks, c)
		if w := b.toks[a].Word; w != "sum" && w != "avg" {
			continue
		}
		if args := callArgs(b.toks, c); len(args) == 1 {
			b.guard(args[0])
		}
	}
}

// guard adds the hidden MIN, MAX and COUNT of x.
func (b *selBuilder) guard(x Span) {
	col := func(fn string, f merge.Func) ColRef {
		n := len(b.hidden)
		c := b.hide(textPiece{lit: fn + "(", key: "guard-" + fn + "("}, copyOf(x), textPiece{lit: ")", key: ")"})
		if len(b.hidden) > n {
			b.mp.Aggs = append(b.mp.Aggs, AggTmpl{Col: c, Fn: f, Text: merge.TextRefused})
		}
		return c
	}
	g := sumGuard{Min: col("MIN", merge.Min), Max: col("MAX", merge.Max), Count: col("COUNT", merge.Count)}
	b.mp.Guards = append(b.mp.Guards, g)
	b.mp.SQLiteSum = true
}

// distinctArgs makes each argument of a DISTINCT aggregate a hidden
// column and a key of each target's GROUP BY, so that each target returns
// its distinct values for the merge to unite.
func (b *selBuilder) distinctArgs(args []Span) []ColRef {
	out := make([]ColRef, len(args))
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
func (b *selBuilder) hiddenAgg(e ShapeExpr, s Span) ColRef {
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
	for i, it := range b.sh.Items {
		if it.OutName == name || it.Alias == name {
			out = append(out, i)
		}
	}
	return out
}

// itemWithRef finds a select item that is the column reference ref.
func (b *selBuilder) itemWithRef(ref []string) int {
	for i, it := range b.sh.Items {
		if it.Expr.Kind == ExprColumn && slices.Equal(it.Expr.Ref, ref) && (b.star < 0 || i < b.star) {
			return i
		}
	}
	return -1
}

// namesOther reports whether name is the output name of a select item
// other than a column of that name.
func (b *selBuilder) namesOther(name string) bool {
	for _, i := range b.aliasOf(name) {
		e := b.sh.Items[i].Expr
		if e.Kind != ExprColumn || e.Ref[len(e.Ref)-1] != name {
			return true
		}
	}
	return false
}

// sameAsItem finds a select item written as the expression at s (up to
// spacing, comments and case): the databases read such an ORDER BY term as
// that output column.
func (b *selBuilder) sameAsItem(s Span) int {
	key := normText(b.text, b.toks, s)
	for i, it := range b.sh.Items {
		if b.star >= 0 && i >= b.star {
			break
		}
		if it.Expr.Kind != ExprStar && normText(b.text, b.toks, b.lay.items[i]) == key {
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
func (b *selBuilder) readsAlias(e ShapeExpr) bool {
	if b.d == PostgreSQL {
		return false
	}
	for _, n := range e.Names {
		for _, it := range b.sh.Items {
			if it.Alias == n {
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
	for i, it := range b.sh.Items {
		if b.star >= 0 && i >= b.star {
			return
		}
		if !b.groupedValue(it.Expr, b.lay.items[i]) && !slices.ContainsFunc(b.sh.GroupBy, func(g ShapeExpr) bool {
			return g.Kind == ExprOrdinal && g.Ordinal == i+1
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
func (b *selBuilder) groupedValue(e ShapeExpr, s Span) bool {
	if !b.mp.Grouped || b.d == PostgreSQL || e.Kind == ExprAgg || e.HasAgg || e.Kind == ExprOrdinal {
		return true
	}
	key := normText(b.text, b.toks, s)
	for k := range b.sh.GroupBy {
		if normText(b.text, b.toks, b.lay.groupBy[k]) == key {
			return true
		}
	}
	keys := b.groupColumns()
	if e.Kind == ExprColumn {
		// s.id is not l.id; an unqualified name is the one column it
		// resolves to.
		return slices.ContainsFunc(keys, func(g []string) bool {
			return g[len(g)-1] == e.Ref[len(e.Ref)-1] && (len(g) == 1 || len(e.Ref) == 1 || slices.Equal(g, e.Ref))
		})
	}
	for _, n := range e.Names {
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
	for _, g := range b.sh.GroupBy {
		if g.Kind == ExprOrdinal && g.Ordinal >= 1 && g.Ordinal <= len(b.sh.Items) {
			g = b.sh.Items[g.Ordinal-1].Expr
		}
		if g.Kind == ExprColumn {
			out = append(out, g.Ref)
		}
	}
	return out
}

// groups records the GROUP BY keys.
func (b *selBuilder) groups() {
	for k, g := range b.sh.GroupBy {
		var col ColRef
		switch {
		case g.Kind == ExprOrdinal:
			if g.Ordinal < 1 || g.Ordinal > len(b.sh.Items) {
				b.fail("GROUP BY a position outside the select list")
				return
			}
			col = ColRef(g.Ordinal - 1)
		case g.Kind == ExprAgg || g.HasAgg:
			b.fail("GROUP BY an aggregate")
			return
		case g.Kind == ExprColumn && b.itemWithRef(g.Ref) >= 0:
			col = ColRef(b.itemWithRef(g.Ref))
		case b.readsAlias(g) || g.Kind == ExprColumn && len(g.Ref) == 1 && b.namesOther(g.Ref[0]):
			// The databases group by a table column of that name when
			// there is one, else by the output column: only the schema
			// tells which.
			b.fail("GROUP BY " + strings.Join(g.Ref, ".") + ", an output name (GROUP BY the expression or its position)")
			return
		default:
			raw, ok := b.rawCopy(g, b.lay.groupBy[k])
			if ok {
				b.groupDecl = append(b.groupDecl, noDecl)
				b.mp.GroupBy = append(b.mp.GroupBy, raw)
				b.mp.GroupText = append(b.mp.GroupText, b.eqText(g.Collate))
				continue
			}
			col = b.hide(copyOf(b.lay.groupBy[k]))
		}
		b.groupDecl = append(b.groupDecl, col)
		b.mp.GroupBy = append(b.mp.GroupBy, b.rawItem(col))
		b.mp.GroupText = append(b.mp.GroupText, b.eqText(g.Collate))
	}
}

// noDecl: a GROUP BY key read only through its raw copy so far.
const noDecl ColRef = -1 << 30

// declGroup is GROUP BY key k as the query names it, a hidden copy added
// when only the raw one was read.
func (b *selBuilder) declGroup(k int) ColRef {
	if c := b.groupDecl[k]; c != noDecl {
		return c
	}
	return b.hide(copyOf(b.lay.groupBy[k]))
}

// order records the ORDER BY keys.
func (b *selBuilder) order() {
	for k, o := range b.sh.OrderBy {
		col, ok := b.orderCol(o.Expr, b.lay.orderBy[k])
		if !ok {
			return
		}
		if b.mp.Distinct && col < 0 {
			b.fail("SELECT DISTINCT ordered by a term not selected")
			return
		}
		key := KeyTmpl{Col: b.rawItem(col), Desc: o.Desc, Text: b.orderText(o.Expr.Collate)}
		// PostgreSQL sorts NULL as the largest value, MySQL and SQLite as
		// the smallest.
		key.NullsFirst = o.Desc == (b.d == PostgreSQL)
		if o.NullsSet {
			key.NullsFirst = o.NullsFirst
		}
		b.mp.OrderBy = append(b.mp.OrderBy, key)
	}
}

// orderCol is the column an ORDER BY term sorts by.
func (b *selBuilder) orderCol(e ShapeExpr, s Span) (ColRef, bool) {
	switch e.Kind {
	case ExprOrdinal:
		if e.Ordinal < 1 {
			b.fail("ORDER BY position 0")
			return 0, false
		}
		b.mp.MinVisible = max(b.mp.MinVisible, e.Ordinal)
		return ColRef(e.Ordinal - 1), true
	case ExprAgg:
		if i := b.sameAsItem(s); i >= 0 {
			return ColRef(i), true
		}
		return b.hiddenAgg(e, s), true
	case ExprColumn:
		// PostgreSQL reads x COLLATE c as an expression, over the input
		// columns only; MySQL and SQLite still see the output alias.
		if len(e.Ref) == 1 && (e.Collate == "" || b.d != PostgreSQL) {
			switch m := b.aliasOf(e.Ref[0]); {
			case len(m) > 1 && !b.sameItems(m):
				b.fail("ORDER BY " + e.Ref[0] + ", an ambiguous output name,")
				return 0, false
			case len(m) > 0 && b.star >= 0 && m[0] > b.star:
				b.fail("ORDER BY " + e.Ref[0] + ", an output name after *,")
				return 0, false
			case len(m) >= 1:
				return ColRef(m[0]), true
			}
		}
		// Not an output name: the input column, read by a select item
		// naming it as well.
		if i := b.itemWithRef(e.Ref); i >= 0 {
			return ColRef(i), true
		}
	case ExprStar:
		b.fail("ORDER BY *")
		return 0, false
	default:
		if b.readsAlias(e) {
			b.fail("ORDER BY an expression naming an output alias")
			return 0, false
		}
		if e.HasAgg {
			return b.computedKey(e, s)
		}
		if i := b.sameAsItem(s); i >= 0 {
			return ColRef(i), true
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
func (b *selBuilder) rawCopy(e ShapeExpr, s Span) (ColRef, bool) {
	if b.d != SQLite || e.Kind != ExprColumn {
		return 0, false
	}
	return b.hide(textPiece{lit: "+(", key: "+("}, copyOf(s), textPiece{lit: ")", key: ")"}), true
}

// rawItem is rawCopy of output column c when its select item is a column
// reference, else c.
func (b *selBuilder) rawItem(c ColRef) ColRef {
	if c < 0 || int(c) >= len(b.sh.Items) || b.star >= 0 && int(c) >= b.star {
		return c // hidden already, or not an item of its own after *
	}
	if raw, ok := b.rawCopy(b.sh.Items[c].Expr, b.lay.items[c]); ok {
		return raw
	}
	return c
}

// distinctByGroups merges a SQLite SELECT DISTINCT as groups of the
// items' raw copies (rawItem): DISTINCT would compare the values the
// driver parsed. Each group keeps its first row, the row DISTINCT returns.
func (b *selBuilder) distinctByGroups() {
	if b.d != SQLite || !b.mp.Distinct || b.mp.Grouped || b.star >= 0 {
		return
	}
	keys := make([]ColRef, len(b.sh.Items))
	raw := false
	for i := range keys {
		keys[i] = b.rawItem(ColRef(i))
		raw = raw || keys[i] < 0
	}
	if !raw {
		return
	}
	b.mp.Grouped, b.mp.Distinct, b.mp.GroupBy = true, false, keys
	for range keys {
		b.mp.GroupText = append(b.mp.GroupText, b.mp.DistinctText)
	}
}

// computedKey is an ORDER BY expression over aggregates: a hidden copy,
// its value computed after merging.
func (b *selBuilder) computedKey(e ShapeExpr, s Span) (ColRef, bool) {
	if i := b.sameAsItem(s); i >= 0 {
		return ColRef(i), true
	}
	n := len(b.hidden)
	col := b.hide(copyOf(s))
	if len(b.hidden) == n {
		return col, true // written before: already computed
	}
	if e.Calc == nil || !b.calcCols(e.Calc, s) {
		b.fail("ORDER BY an expression containing an aggregate")
		return 0, false
	}
	b.mp.Calcs = append(b.mp.Calcs, calcItem{Col: col, Tree: e.Calc})
	return col, true
}

// cond compiles a HAVING condition.
func (b *selBuilder) cond(c *ShapeCond) *CondTmpl {
	t := &CondTmpl{Op: c.Op, Cmp: c.Cmp}
	for _, k := range c.Kids {
		t.Kids = append(t.Kids, b.cond(k))
	}
	if c.Op == merge.Compare || c.Op == merge.IsNull || c.Op == merge.IsNotNull {
		t.L = b.operand(c.L)
		if c.Op == merge.Compare {
			t.R = b.operand(c.R)
			t.Text = b.eqText("")
			if c.Cmp != merge.Eq && c.Cmp != merge.Ne {
				t.Text = b.orderText("")
			}
		}
	}
	return t
}

// operand is a HAVING operand's column: an aggregate (hidden), a GROUP BY
// key, an output alias where the dialect reads one, or a constant.
func (b *selBuilder) operand(o ShapeOperand) OpTmpl {
	if o.IsConst {
		return OpTmpl{IsConst: true, Val: o.Val}
	}
	e := o.Expr
	switch e.Kind {
	case ExprAgg:
		if o.AggIndex < 0 || o.AggIndex >= len(b.lay.havingAggs) {
			b.fail("HAVING written in an unexpected form")
			return OpTmpl{}
		}
		return OpTmpl{Col: b.hiddenAgg(e, b.lay.havingAggs[o.AggIndex])}
	case ExprOther:
		if e.Calc != nil {
			return OpTmpl{Col: b.havingCalc(e.Calc, o.AggIndex)}
		}
		// A GROUP BY expression (GROUP BY qty % 3 HAVING qty % 3 > 1);
		// MySQL's HAVING reads only names.
		for k, g := range b.sh.GroupBy {
			if b.d != MySQL && e.Print != "" && g.Print == e.Print && !e.HasAgg && k < len(b.groupDecl) {
				return OpTmpl{Col: b.declGroup(k)}
			}
		}
	case ExprColumn:
		group := -1
		for k, g := range b.sh.GroupBy {
			if g.Kind == ExprColumn && slices.Equal(g.Ref, e.Ref) {
				group = k
			}
		}
		// MySQL reads a HAVING name as an output alias first; SQLite as a
		// column of the table first, which only the schema tells.
		alias := -1
		if len(e.Ref) == 1 && b.d != PostgreSQL {
			if m := b.aliasOf(e.Ref[0]); len(m) == 1 && b.sh.Items[m[0]].Alias != "" {
				alias = m[0]
			}
		}
		if alias >= 0 && b.d == SQLite {
			b.fail("HAVING " + e.Ref[0] + ", an output alias SQLite reads as a column when the table has one,")
			return OpTmpl{}
		}
		switch {
		case alias >= 0 && group >= 0:
			b.fail("HAVING " + e.Ref[0] + ", both an output alias and a GROUP BY column,")
		case alias >= 0:
			return OpTmpl{Col: ColRef(alias)}
		case group >= 0 && group < len(b.groupDecl):
			return OpTmpl{Col: b.declGroup(group)}
		default:
			b.fail("HAVING on a column that is not a GROUP BY key")
		}
		return OpTmpl{}
	}
	b.fail("HAVING with an expression other than an aggregate, a GROUP BY column or a constant")
	return OpTmpl{}
}

// havingCalc is a HAVING operand over aggregates: a hidden column written
// from its parts (HAVING's text is not kept), computed after merging.
// first is the index of its first aggregate among HAVING's.
func (b *selBuilder) havingCalc(n *CalcNode, first int) ColRef {
	leaves := CalcAggs(n, nil)
	if first < 0 || first+len(leaves) > len(b.lay.havingAggs) {
		b.fail("HAVING written in an unexpected form")
		return 0
	}
	for k, l := range leaves {
		l.col = b.hiddenAgg(l.Agg, b.lay.havingAggs[first+k])
	}
	next := 0
	pieces := b.calcText(n, b.lay.havingAggs[first:], &next)
	size := len(b.hidden)
	col := b.hide(pieces...)
	if len(b.hidden) > size {
		b.mp.Calcs = append(b.mp.Calcs, calcItem{Col: col, Tree: n})
	}
	return col
}

// calcText writes n, every operation in parentheses, its aggregates
// copied from the spans calls (in text order, from *next).
func (b *selBuilder) calcText(n *CalcNode, calls []Span, next *int) []textPiece {
	lit := func(s string) textPiece { return textPiece{lit: s, key: s} }
	switch n.Op {
	case merge.ExprCol:
		*next++
		return []textPiece{copyOf(calls[*next-1])}
	case merge.ExprConst:
		return []textPiece{lit(fmt.Sprint(n.Con))}
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
	op := map[merge.ExprOp]string{merge.ExprAdd: " + ", merge.ExprSub: " - ", merge.ExprMul: " * ", merge.ExprDiv: " / "}[n.Op]
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

// ApplySelectEdits adds the merge edits to a statement's template edits.
// A copied span takes the holes inside it (table names, placeholders); a
// dropped span keeps its holes for the single-target rendering.
func ApplySelectEdits(text string, edits []Edit, sel []selEdit) []Edit {
	inside := func(s Span, take bool) []Edit {
		var in []Edit
		kept := edits[:0:0]
		for _, e := range edits {
			if e.Start >= s.A && e.End <= s.B && e.End > e.Start {
				e.Start, e.End = e.Start-s.A, e.End-s.A
				in = append(in, e)
				if take {
					continue
				}
				e.Start, e.End = e.Start+s.A, e.End+s.A
			}
			kept = append(kept, e)
		}
		if take {
			edits = kept
		}
		return in
	}
	var add []Edit
	for _, se := range sel {
		if se.isDrop {
			sub := BuildTemplate(text[se.drop.A:se.drop.B], inside(se.drop, true))
			add = append(add, Edit{se.drop.A, se.drop.B, Segment{Hole: holeMergeDrop, sub: sub}})
			continue
		}
		var sub []Segment
		for _, p := range se.pieces {
			if p.copy.B > p.copy.A {
				sub = append(sub, BuildTemplate(text[p.copy.A:p.copy.B], inside(p.copy, false))...)
			} else {
				sub = append(sub, Segment{Text: p.lit})
			}
		}
		if se.at < len(text) && !IsSpace(text[se.at]) {
			sub = append(sub, Segment{Text: " "}) // SELECT(0)FROM: keep the next word apart
		}
		add = append(add, Edit{se.at, se.at, Segment{Hole: holeMergeAdd, sub: sub}})
	}
	return append(edits, add...)
}
