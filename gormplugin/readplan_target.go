package gormplugin

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/internal/merge"
)

// What each target is asked, and the merge.Plan once the first target's
// result says how many columns a `*` gave and of which types.

// streams reports whether the merge keeps the shards' order and stops
// early, so that each target need return only LIMIT+OFFSET rows.
func (rp *readPlan) streams() bool { return !rp.grouped && !rp.distinct }

// apply rewrites the statement's clauses for one target: the select list
// with the hidden columns, GROUP BY without HAVING (plus DISTINCT
// aggregates' arguments), LIMIT n+m when streaming and none otherwise.
func (rp *readPlan) apply(stmt *gorm.Statement) {
	sel := stmt.Clauses["SELECT"]
	sel.Name, sel.Expression = "SELECT", hiddenSelect{visible: rp.visible, hidden: rp.hidden}
	stmt.Clauses["SELECT"] = sel

	gb, _ := stmt.Clauses["GROUP BY"].Expression.(clause.GroupBy)
	cols := append(slices.Clone(gb.Columns), rp.extraGroup...)
	if len(cols) > 0 {
		c := stmt.Clauses["GROUP BY"]
		c.Name, c.Expression = "GROUP BY", clause.GroupBy{Columns: cols}
		stmt.Clauses["GROUP BY"] = c
	} else {
		delete(stmt.Clauses, "GROUP BY")
	}

	lc, ok := stmt.Clauses["LIMIT"]
	switch {
	case !ok:
	case rp.limit < 0 && rp.offset > 0 && rp.dialect == merge.MySQL:
		// MySQL has no OFFSET without LIMIT: left as GORM writes it, each
		// target fails as one table would.
	case rp.streams() && rp.limit >= 0:
		n := int(rp.limit + rp.offset)
		lc.Expression = clause.Limit{Limit: &n}
		stmt.Clauses["LIMIT"] = lc
	default:
		delete(stmt.Clauses, "LIMIT")
	}
}

// hiddenSelect writes GORM's select list followed by the hidden columns.
type hiddenSelect struct {
	visible clause.Expression
	hidden  []clause.Expression
}

// Each hidden column gets an alias of its own, so that its output name
// (amount, for a hidden sort key amount) never meets a select alias an
// ORDER BY names (ambiguous, or another column, to the database).
func (h hiddenSelect) Build(b clause.Builder) {
	h.visible.Build(b)
	for i, e := range h.hidden {
		b.WriteString(", ")
		e.Build(b)
		b.WriteString(" AS ")
		b.WriteQuoted(hiddenAlias + strconv.Itoa(i))
	}
}

// hiddenAlias starts the aliases of hidden columns.
const hiddenAlias = "shardkey_hidden_"

// innerCollation is the collation a COLLATE inside plan column c's
// expression names (the last one; "several" when they differ).
func (rp *readPlan) innerCollation(c pcol) (string, bool) {
	var ts []token
	switch {
	case c >= 0 && !rp.star && int(c) < len(rp.items):
		ts = rp.items[c].collateIn
	case c < 0 && -int(c)-1 < len(rp.hidden):
		if e, ok := rp.hidden[-int(c)-1].(clause.Expr); ok {
			ts, _ = tokenize(e.SQL)
		}
	}
	return collationOf(ts)
}

// collationOf is the collation the COLLATE clauses in ts name.
func collationOf(ts []token) (string, bool) {
	coll := ""
	for i := 0; i+1 < len(ts); i++ {
		if !ts[i].is("collate") {
			continue
		}
		if coll != "" && !strings.EqualFold(coll, ts[i+1].text) {
			return "several", true
		}
		coll = ts[i+1].text
	}
	return coll, coll != ""
}

// colTypes is what the plan needs of the first target's result.
type colTypes interface {
	Columns() []string
	ColumnTypeDatabaseTypeName(i int) string
}

// mergePlan is the engine's plan for results shaped like first.
func (rp *readPlan) mergePlan(first colTypes) (merge.Plan, error) {
	n := len(first.Columns())
	visible := n - len(rp.hidden)
	if visible < 1 || !rp.star && visible != len(rp.items) {
		return merge.Plan{}, fmt.Errorf("%w: the select list of %s has %d columns where the merge expected %d", ErrUnsupported, rp.logic, visible, len(rp.items))
	}
	b := &mergeBuilder{rp: rp, first: first, visible: visible}
	p := merge.Plan{Dialect: rp.dialect, Visible: visible, Grouped: rp.grouped, Distinct: rp.distinct,
		Offset: rp.offset, Limit: rp.limit}
	for _, g := range rp.groupBy {
		p.GroupBy = append(p.GroupBy, b.at(g))
		p.GroupText = append(p.GroupText, b.text(g, useEqual, nil))
	}
	for _, a := range rp.aggs {
		p.Aggs = append(p.Aggs, b.agg(a))
	}
	for _, c := range rp.computed {
		p.Computed = append(p.Computed, merge.Computed{Col: b.at(c.col), Expr: mergeExpr(c.expr, b.at)})
	}
	p.Having = rp.mergeCond(rp.having, b.at, b.text)
	if rp.distinct {
		for i := range visible {
			p.DistinctText = append(p.DistinctText, b.text(pcol(i), useEqual, nil))
		}
	}
	for _, k := range rp.orderBy {
		p.OrderBy = append(p.OrderBy, merge.Key{Col: b.at(k.col), Desc: k.desc, NullsFirst: k.nullsFirst, Text: b.text(k.col, useOrder, k.collate)})
	}
	return p, b.refusal
}

// mergeBuilder builds a merge.Plan for results shaped like first; refusal
// is the first reason found that the merge cannot answer as one table
// would.
type mergeBuilder struct {
	rp      *readPlan
	first   colTypes
	visible int
	refusal error
}

// at is the result column of c: a hidden column (c < 0) follows the
// visible ones.
func (b *mergeBuilder) at(c pcol) int {
	if c >= 0 {
		return int(c)
	}
	return b.visible - int(c) - 1
}

func (b *mergeBuilder) refuse(err error) {
	if b.refusal == nil {
		b.refusal = err
	}
}

// text is how the text values of column c compare for use u: as explicit
// says, else as a COLLATE inside the column's expression or the model's
// declared collation says, else as the column's type and the dialect say.
func (b *mergeBuilder) text(c pcol, u use, explicit *merge.Text) merge.Text {
	rp := b.rp
	other := ""
	if coll, ok := rp.innerCollation(c); ok && explicit == nil {
		// A COLLATE inside the column's expression decides.
		if t, ok := collateText(rp.dialect, coll); ok {
			explicit = &t
		} else {
			other = coll
		}
	} else if coll, ok := rp.declared(rp.colNames[c]); ok && explicit == nil {
		// The model declares the column's collation: it decides.
		if t, ok := collateText(rp.dialect, coll); ok {
			explicit = &t
		} else {
			other = coll
		}
	}
	t, err := rp.textMode(b.first.ColumnTypeDatabaseTypeName(b.at(c)), u, explicit, other)
	if err != nil {
		b.refuse(fmt.Errorf("%w: %s (column %s of %s)", ErrUnsupported, err, b.first.Columns()[b.at(c)], rp.logic))
	}
	return t
}

// agg is the merge's aggregate for a.
func (b *mergeBuilder) agg(a aggPlan) merge.Agg {
	rp := b.rp
	ag := merge.Agg{Col: b.at(a.col), Func: a.fn}
	if rp.dialect == merge.MySQL && (a.fn == merge.Min || a.fn == merge.Max) &&
		strings.EqualFold(b.first.ColumnTypeDatabaseTypeName(b.at(a.col)), "BIT") {
		// MariaDB returns MIN/MAX of a BIT as its bytes or, in some
		// plans (beside COUNT(DISTINCT)), as decimal digits, both typed BIT.
		b.refuse(fmt.Errorf("%w: MIN/MAX of a BIT column over several tables of %s", ErrUnsupported, rp.logic))
	}
	if a.fn != merge.Count && a.fn != merge.Sum && a.fn != merge.Avg {
		// Values compared: MIN/MAX, distinct values. One Text serves
		// every argument of COUNT(DISTINCT a, b): the text ones must agree.
		for i, c := range a.textCols {
			t := b.text(c, a.use, nil)
			if i > 0 && t != ag.Text && t != merge.TextRefused && ag.Text != merge.TextRefused {
				b.refuse(fmt.Errorf("%w: COUNT(DISTINCT ...) of text compared in different ways over several tables of %s", ErrUnsupported, rp.logic))
			}
			if t != merge.TextRefused {
				ag.Text = t
			}
		}
	}
	for _, c := range a.args {
		ag.Args = append(ag.Args, b.at(c))
	}
	return ag
}

func (rp *readPlan) mergeCond(c *condPlan, at func(pcol) int, text func(pcol, use, *merge.Text) merge.Text) *merge.Cond {
	if c == nil {
		return nil
	}
	out := &merge.Cond{Op: c.op, Cmp: c.cmp}
	for _, k := range c.kids {
		out.Kids = append(out.Kids, rp.mergeCond(k, at, text))
	}
	operand := func(o operandPlan) merge.Operand {
		if o.isConst {
			return merge.Operand{Const: o.val, IsConst: true}
		}
		return merge.Operand{Col: at(o.col)}
	}
	if c.op == merge.Compare || c.op == merge.IsNull || c.op == merge.IsNotNull {
		out.L = operand(c.l)
		if c.op == merge.Compare {
			out.R = operand(c.r)
		}
		u := useOrder
		if c.cmp == merge.Eq || c.cmp == merge.Ne {
			u = useEqual
		}
		for _, o := range []operandPlan{c.l, c.r} {
			if !o.isConst && c.op == merge.Compare {
				out.Text = text(o.col, u, nil)
			}
		}
	}
	return out
}

// textMode is how text values of a column of type dbType compare, or why
// they cannot be compared.
// other is a collation the model declares for the column that the merge
// does not implement.
func (rp *readPlan) textMode(dbType string, u use, explicit *merge.Text, other string) (merge.Text, error) {
	t := strings.ToUpper(dbType)
	if binaryType(t) {
		return merge.TextBinary, nil
	}
	if t == "" && rp.dialect == merge.SQLite {
		// An expression: SQLite gives it no type. Its text values compare
		// in BINARY unless a COLLATE says otherwise; without a declaration
		// the engine refuses any text value it meets.
		switch {
		case explicit != nil:
			return *explicit, nil
		case other != "":
			return merge.TextRefused, fmt.Errorf("COLLATE %s, which the merge does not reproduce", other)
		case rp.binary:
			return merge.TextBinary, nil
		}
		return merge.TextRefused, nil
	}
	if !textType(rp.dialect, t) {
		return merge.TextRefused, nil // not text: compared as its type
	}
	switch {
	case explicit != nil:
		return *explicit, nil
	case other != "":
		// Declared by the model, the collation is known to be one the merge
		// cannot reproduce, whatever WithBinaryCollation says.
		return merge.TextRefused, fmt.Errorf("the model declares COLLATE %s, which the merge does not reproduce; "+
			"order with an explicit binary COLLATE (%s)", other, binaryCollateHint(rp.dialect))
	case t == "NAME" && rp.dialect == merge.PostgreSQL:
		return merge.TextBinary, nil // PostgreSQL's name type always uses "C"
	case t == "CITEXT":
	case rp.binary && (rp.dialect == merge.MySQL || t == "BPCHAR"):
		return merge.TextPadSpace, nil
	case rp.binary:
		return merge.TextBinary, nil
	case u == useEqual && rp.dialect == merge.PostgreSQL:
		return merge.TextEqualOnly, nil
	}
	what := "ordering (ORDER BY, MIN, MAX, < >)"
	if u == useEqual {
		what = "grouping (GROUP BY, DISTINCT, COUNT(DISTINCT), =)"
	}
	return merge.TextRefused, fmt.Errorf("%s text across several tables compares as the column's collation, which the merge cannot know; "+
		"declare binary collations with gormplugin.WithBinaryCollation(), or order with an explicit binary COLLATE (%s)", what, binaryCollateHint(rp.dialect))
}

func binaryCollateHint(d merge.Dialect) string {
	switch d {
	case merge.PostgreSQL:
		return `COLLATE "C"`
	case merge.MySQL:
		return "COLLATE utf8mb4_bin"
	}
	return "COLLATE BINARY"
}

func binaryType(t string) bool {
	switch t {
	case "BYTEA", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY":
		return true
	}
	return false
}

// textType reports whether a column of type t holds text compared by a
// collation.
func textType(d merge.Dialect, t string) bool {
	switch d {
	case merge.PostgreSQL:
		switch t {
		case "TEXT", "VARCHAR", "BPCHAR", "NAME", "CITEXT", "CHAR":
			return true
		}
		return false
	case merge.MySQL:
		switch t {
		case "CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT":
			return true
		}
		return false
	}
	// SQLite: a declared type with text affinity.
	return strings.Contains(t, "CHAR") || strings.Contains(t, "CLOB") || strings.Contains(t, "TEXT")
}
