package gormplugin

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/internal/merge"
)

// GROUP BY, the aggregates of the select list, ORDER BY.

// groupCol is the column holding GROUP BY key name, if it is one.
func (rp *readPlan) groupCol(name string) (pcol, bool) {
	for i, c := range rp.groupBy {
		if rp.groupNames[i] == name {
			return c, true
		}
	}
	return 0, false
}

// visibleCol is the visible column reading column name, if any (unknown
// behind a `*`).
func (rp *readPlan) visibleCol(name string) (pcol, bool) {
	if rp.star {
		return 0, false
	}
	for i, it := range rp.items {
		if it.col == name && it.agg == nil {
			return pcol(i), true
		}
	}
	return 0, false
}

// aliasCol is the visible column named alias.
func (rp *readPlan) aliasCol(alias string) (pcol, bool) {
	if rp.star {
		return 0, false
	}
	for i, it := range rp.items {
		if it.alias == alias {
			return pcol(i), true
		}
	}
	return 0, false
}

func (rp *readPlan) planGroups(stmt *gorm.Statement, gb clause.GroupBy) error {
	if !rp.grouped {
		return nil
	}
	if rp.star {
		return errors.New("SELECT * with GROUP BY or aggregates")
	}
	for _, c := range gb.Columns {
		if !c.Raw {
			name, _ := rp.columnKey(stmt, c)
			rp.addGroup(name, clause.Expr{SQL: "?", Vars: []any{c}})
			continue
		}
		ts, err := rp.tokenize(c.Name)
		if err != nil {
			return err
		}
		for _, term := range splitTop(ts) {
			name, ok := colRef(term, rp.logic)
			if !ok {
				if err := rowExpr(term); err != nil {
					return fmt.Errorf("GROUP BY %q: %w", source(c.Name, term), err)
				}
				name = exprName(term)
			} else if a, ok := rp.aliasCol(name); ok && rp.items[a].col != name {
				return fmt.Errorf("GROUP BY alias %q", name)
			}
			rp.addGroup(name, clause.Expr{SQL: source(c.Name, term)})
		}
	}
	return nil
}

func (rp *readPlan) addGroup(name string, e clause.Expression) {
	if _, dup := rp.groupCol(name); dup {
		return
	}
	col, ok := rp.visibleCol(name)
	if !ok {
		col, ok = rp.visibleExpr(name)
	}
	if !ok {
		col = rp.hide("group:"+name, e)
	}
	rp.groupBy = append(rp.groupBy, col)
	rp.groupNames = append(rp.groupNames, name)
	rp.nameCol(col, name)
}

// planItems checks the select list of a grouped read and plans its
// aggregates.
func (rp *readPlan) planItems() error {
	for i, it := range rp.items {
		if it.col != "" && !rp.star {
			rp.nameCol(pcol(i), it.col)
		}
		switch {
		case it.agg != nil:
			if err := rp.planAgg(pcol(i), it.agg); err != nil {
				return err
			}
		case it.computed:
			if err := rp.planComputed(pcol(i), it.src, it.ts, it.vars); err != nil {
				return err
			}
		case !rp.grouped:
		case it.col != "":
			if _, ok := rp.groupCol(it.col); !ok {
				return fmt.Errorf("column %s is neither grouped nor aggregated", it.col)
			}
		case constant(it):
			// The same value in every row: each group's first row gives it.
		default:
			if _, ok := rp.groupCol("expr:" + it.text); !ok {
				return fmt.Errorf("expression %q is neither grouped nor an aggregate", it.text)
			}
		}
	}
	return nil
}

// constant reports whether a select item is a literal or an argument.
func constant(it selItem) bool {
	ts, err := tokenize(it.text)
	if err != nil {
		return false
	}
	if len(ts) == 2 && ts[0].punct("-") {
		ts = ts[1:]
	}
	return len(ts) == 1 && (ts[0].punct("?") || ts[0].kind == tokNumber || ts[0].kind == tokString ||
		ts[0].is("null") || ts[0].is("true") || ts[0].is("false"))
}

// planAgg plans the aggregate whose shard value is in col.
func (rp *readPlan) planAgg(col pcol, a *aggCall) error {
	ap := aggPlan{col: col, textCols: []pcol{col}, use: useOrder}
	switch {
	case len(a.parts) > 1:
		ap.fn, ap.use = merge.CountDistinct, useEqual
		for _, part := range a.parts {
			ap.args = append(ap.args, rp.distinctArg(part))
		}
		ap.textCols = ap.args
	case a.fn == "count" && !a.distinct:
		ap.fn = merge.Count
	case a.fn == "min", a.fn == "max":
		rp.ordered = append(rp.ordered, a.argCol)
		rp.nameCol(col, a.argCol)
		ap.fn = merge.Min
		if a.fn == "max" {
			ap.fn = merge.Max
		}
	case a.argCol == "" && !arithmetic(a.arg):
		// Each table's SUM of a division is already rounded (MySQL), and
		// functions may round too: only + - * of columns and numbers add up.
		return fmt.Errorf("%s(%s) of an expression (SUM and AVG of columns combined by + - * are merged)", strings.ToUpper(a.fn), a.argText)
	case a.distinct:
		arg := rp.distinctArg(a.argText)
		ap.args, ap.textCols, ap.use = []pcol{arg}, []pcol{arg}, useEqual
		ap.fn = map[string]merge.Func{"count": merge.CountDistinct, "sum": merge.SumDistinct, "avg": merge.AvgDistinct}[a.fn]
	case a.fn == "sum":
		ap.fn = merge.Sum
	default: // avg: the merge divides the sum of the shards' sums by the sum of their counts
		ap.fn = merge.Avg
		sum := "SUM("
		if rp.dialect == merge.SQLite {
			// SQLite's avg() adds in floating point and never overflows;
			// an integer SUM of the same values can.
			sum = "TOTAL("
		}
		ap.args = []pcol{rp.hideText("avg", sum+a.argText+")"), rp.hideText("avg", "COUNT("+a.argText+")")}
	}
	rp.aggs = append(rp.aggs, ap)
	return nil
}

// distinctArg hides a DISTINCT aggregate's argument and groups each
// target's rows by it, so that each target returns its distinct values.
func (rp *readPlan) distinctArg(text string) pcol {
	col := rp.hideText("distinct", text)
	if ts, err := tokenize(text); err == nil {
		if name, ok := colRef(ts, rp.logic); ok {
			rp.nameCol(col, name)
		}
	}
	g := clause.Column{Name: text, Raw: true}
	if !slices.Contains(rp.extraGroup, g) {
		rp.extraGroup = append(rp.extraGroup, g)
	}
	return col
}

// aggCol is the column of an aggregate named in HAVING or ORDER BY: the
// select list's own, or a hidden one.
func (rp *readPlan) aggCol(text string, ts []token) (pcol, error) {
	a, ok := readAgg(text, ts, rp.logic)
	if !ok {
		return 0, fmt.Errorf("expression %q", source(text, ts))
	}
	if p := opaqueProblem(a.arg); p != "" {
		return 0, errors.New(p)
	}
	norm := normTokens(ts)
	for i, it := range rp.items {
		if it.agg != nil && it.text == norm {
			return pcol(i), nil
		}
	}
	// Only a column planned as this aggregate holds its merged value.
	if j, ok := rp.hiddenAt["agg:"+strings.ToLower(source(text, ts))]; ok {
		return hiddenCol(j), nil
	}
	col := rp.hideText("agg", source(text, ts))
	return col, rp.planAgg(col, &a)
}

// planOrder reads ORDER BY into merge keys.
func (rp *readPlan) planOrder(stmt *gorm.Statement) error {
	ob, ok := stmt.Clauses["ORDER BY"].Expression.(clause.OrderBy)
	if !ok {
		return nil
	}
	if ob.Expression != nil {
		e, ok := ob.Expression.(clause.Expr)
		if !ok || len(e.Vars) > 0 {
			return errors.New("an ORDER BY expression")
		}
		return rp.orderText(e.SQL, false)
	}
	for _, c := range ob.Columns {
		if c.Column.Raw {
			if err := rp.orderText(c.Column.Name, c.Desc); err != nil {
				return err
			}
			continue
		}
		if t := c.Column.Table; t != "" && t != clause.CurrentTable && !strings.EqualFold(t, rp.logic) {
			return fmt.Errorf("ORDER BY a column of table %s", t)
		}
		name, isCol := rp.columnKey(stmt, c.Column)
		if !isCol {
			return fmt.Errorf("ORDER BY %s, a column of another table", c.Column.Name)
		}
		var col pcol
		var err error
		found := false
		if c.Column.Table == "" && c.Column.Name != clause.PrimaryKey && !strings.Contains(c.Column.Name, ".") {
			// Unqualified, the name is an output column's first, as in
			// ORDER BY text: every database sorts by the alias.
			col, found, err = rp.orderName(name)
		}
		if err == nil && !found {
			col, err = rp.orderColumn(name, clause.Expr{SQL: "?", Vars: []any{c.Column}})
		}
		if err != nil {
			return err
		}
		rp.addKey(sortKey{col: col, desc: c.Desc}, false)
	}
	return nil
}

func (rp *readPlan) addKey(k sortKey, nullsGiven bool) {
	if !nullsGiven {
		// PostgreSQL sorts NULL as the largest value; MySQL, MariaDB and
		// SQLite as the smallest.
		k.nullsFirst = k.desc == (rp.dialect == merge.PostgreSQL)
	}
	rp.orderBy = append(rp.orderBy, k)
}

// orderColumn is the column an ORDER BY column reference sorts by.
func (rp *readPlan) orderColumn(name string, e clause.Expression) (c pcol, err error) {
	rp.ordered = append(rp.ordered, name)
	defer func() { rp.nameCol(c, name) }()
	if rp.grouped {
		if c, ok := rp.groupCol(name); ok {
			return c, nil
		}
		return 0, fmt.Errorf("ORDER BY %s, which is not grouped", name)
	}
	if c, ok := rp.visibleCol(name); ok {
		return c, nil
	}
	if rp.distinct && !rp.star {
		return 0, fmt.Errorf("ORDER BY %s, which DISTINCT does not select", name)
	}
	return rp.hide("col:"+name, e), nil
}

// orderText reads ORDER BY terms written as text ("a desc, b").
func (rp *readPlan) orderText(text string, desc bool) error {
	ts, err := rp.tokenize(text)
	if err != nil {
		return err
	}
	terms := splitTop(ts)
	for i, term := range terms {
		k, nullsGiven, err := rp.orderTerm(text, term)
		if err != nil {
			return err
		}
		if i == len(terms)-1 && desc { // OrderByColumn{Raw, Desc} appends DESC
			k.desc = true
		}
		rp.addKey(k, nullsGiven)
	}
	return nil
}

// orderTerm reads `expr [COLLATE c] [ASC|DESC|USING op] [NULLS FIRST|LAST]`.
func (rp *readPlan) orderTerm(text string, ts []token) (k sortKey, nullsGiven bool, err error) {
	n := len(ts)
	if n >= 2 && ts[n-2].is("nulls") && (ts[n-1].is("first") || ts[n-1].is("last")) {
		k.nullsFirst, nullsGiven, n = ts[n-1].is("first"), true, n-2
	}
	switch {
	case n >= 1 && (ts[n-1].is("asc") || ts[n-1].is("desc")):
		k.desc, n = ts[n-1].is("desc"), n-1
	case n >= 2 && ts[n-2].is("using") && (ts[n-1].punct("<") || ts[n-1].punct(">")):
		k.desc, n = ts[n-1].punct(">"), n-2
	case n >= 2 && ts[n-2].is("using"):
		return k, false, fmt.Errorf("ORDER BY ... USING %s", ts[n-1].text)
	}
	if n >= 3 && ts[n-2].is("collate") {
		t, ok := collateText(rp.dialect, ts[n-1].text)
		if !ok {
			return k, false, fmt.Errorf("ORDER BY ... COLLATE %s: the merge compares text only in binary collations (and SQLite's NOCASE and RTRIM)", ts[n-1].text)
		}
		k.collate, n = &t, n-2
	}
	k.col, err = rp.orderExpr(text, ts[:n])
	return k, nullsGiven, err
}

// orderExpr resolves an ORDER BY expression: a position, an alias, a
// column, an aggregate of a grouped read.
func (rp *readPlan) orderExpr(text string, ts []token) (pcol, error) {
	if len(ts) == 1 && ts[0].kind == tokNumber {
		var pos int
		if _, err := fmt.Sscanf(ts[0].text, "%d", &pos); err != nil || pos < 1 || pos > len(rp.items) || rp.star {
			return 0, fmt.Errorf("ORDER BY %s", ts[0].text)
		}
		return pcol(pos - 1), nil
	}
	if len(ts) == 1 && ts[0].kind == tokIdent {
		if c, ok, err := rp.orderName(rp.identKey(ts[0])); ok || err != nil {
			return c, err
		}
	}
	if name, ok := colRef(ts, rp.logic); ok {
		return rp.orderColumn(name, clause.Expr{SQL: source(text, ts)})
	}
	if _, ok := readAgg(text, ts, rp.logic); ok && rp.grouped {
		return rp.aggCol(text, ts)
	}
	if rp.grouped && onlyAggregates(ts) {
		return rp.computedCol(text, ts)
	}
	return rp.orderRowExpr(text, ts)
}

// orderName is the output column an unqualified ORDER BY name is the
// alias of, if any (ok).
func (rp *readPlan) orderName(name string) (c pcol, ok bool, err error) {
	if c, ok := rp.aliasCol(name); ok {
		return c, true, nil
	}
	for _, it := range rp.items {
		if rp.star && it.alias == name { // its position behind the * is unknown
			return 0, false, fmt.Errorf("ORDER BY %s, an alias beside *", name)
		}
	}
	return 0, false, nil
}

// orderRowExpr resolves an ORDER BY expression computed from one row: a
// select item, a grouping key, or a hidden column.
func (rp *readPlan) orderRowExpr(text string, ts []token) (pcol, error) {
	if err := rowExpr(ts); err != nil {
		return 0, fmt.Errorf("ORDER BY %q: %w", source(text, ts), err)
	}
	name := exprName(ts)
	if c, ok := rp.visibleExpr(name); ok {
		return c, nil
	}
	if rp.grouped {
		if c, ok := rp.groupCol(name); ok {
			return c, nil
		}
		return 0, fmt.Errorf("ORDER BY %q, which is neither grouped nor an aggregate", source(text, ts))
	}
	if rp.distinct && !rp.star {
		return 0, fmt.Errorf("ORDER BY %q, which DISTINCT does not select", source(text, ts))
	}
	for _, t := range ts {
		for _, it := range rp.items {
			if t.kind == tokIdent && it.alias != "" && it.alias != it.col && strings.EqualFold(t.text, it.alias) {
				// MySQL and SQLite read the alias there; a hidden select
				// column could not.
				return 0, fmt.Errorf("ORDER BY %q, an expression over the alias %s", source(text, ts), it.alias)
			}
		}
	}
	// Each table sorts by the expression; the merge compares its values,
	// read as a hidden column.
	return rp.hide("order:"+name, clause.Expr{SQL: source(text, ts)}), nil
}

// exprName names an expression among grouping keys and hidden columns.
func exprName(ts []token) string { return "expr:" + normTokens(ts) }

// visibleExpr is the visible column computing the expression named name.
func (rp *readPlan) visibleExpr(name string) (pcol, bool) {
	if rp.star {
		return 0, false
	}
	for i, it := range rp.items {
		if it.agg == nil && it.col == "" && "expr:"+it.text == name {
			return pcol(i), true
		}
	}
	return 0, false
}

// rowExpr checks that an expression is computed from one row: no
// aggregate, window or subquery, and no placeholder (the fragment carries
// no arguments).
func rowExpr(ts []token) error {
	if p := opaqueProblem(ts); p != "" {
		return errors.New(p)
	}
	for _, t := range ts {
		if t.punct("?") {
			return errors.New("a placeholder")
		}
	}
	return nil
}

// arithmetic reports whether ts combines columns and numbers with + - *
// and parentheses only.
func arithmetic(ts []token) bool {
	for _, t := range ts {
		switch {
		case t.kind == tokIdent && !reservedWords[strings.ToLower(t.text)], t.kind == tokNumber:
		case t.kind == tokPunct && strings.Contains("+-*().", t.text):
		default:
			return false
		}
	}
	for i := 0; i+1 < len(ts); i++ { // a function call
		if ts[i].kind == tokIdent && ts[i+1].punct("(") {
			return false
		}
	}
	return true
}

// collateText is the comparison an explicit COLLATE names, when the merge
// implements it.
func collateText(d merge.Dialect, name string) (merge.Text, bool) {
	n := strings.ToLower(name)
	switch d {
	case merge.PostgreSQL:
		return merge.TextBinary, n == "c" || n == "posix"
	case merge.SQLite:
		switch n {
		case "binary":
			return merge.TextBinary, true
		case "nocase":
			return merge.TextNoCase, true
		case "rtrim":
			return merge.TextRTrim, true
		}
	case merge.MySQL:
		if n != "binary" && !strings.HasPrefix(n, "utf8") && !strings.HasPrefix(n, "ascii") {
			// The driver returns UTF-8: another character set's bytes
			// (latin1 is cp1252: € is 0x80) order otherwise.
			return merge.TextRefused, false
		}
		switch {
		case n == "binary", strings.Contains(n, "nopad_bin"), strings.HasSuffix(n, "_0900_bin"):
			return merge.TextBinary, true
		case strings.HasSuffix(n, "_bin"):
			return merge.TextPadSpace, true
		}
	}
	return merge.TextRefused, false
}
