package gormplugin

import (
	"errors"
	"fmt"

	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/internal/merge"
)

// Aggregates inside expressions (COUNT(*) * 2, SUM(a) / COUNT(*),
// COALESCE(MAX(x), 0)) are computed by the merge from the merged
// aggregates, never from one table's values: each aggregate becomes a
// column of its own (visible or hidden) and the expression a
// merge.Computed column over them.

// exprPlan is a merge.Expr over plan columns.
type exprPlan struct {
	op   merge.ExprOp
	col  pcol
	val  any
	args []*exprPlan
}

// computedPlan is a column whose merged value the engine computes.
type computedPlan struct {
	col  pcol
	expr *exprPlan
}

// tokenCursor is a parser's place in a template's tokens and its ?
// arguments.
type tokenCursor struct {
	rp   *readPlan
	src  string
	ts   []token
	i    int
	vars []any
	vi   int
}

func (c *tokenCursor) peek() token {
	if c.i < len(c.ts) {
		return c.ts[c.i]
	}
	return token{}
}

// exprParser reads + - * /, unary minus, parentheses, COALESCE, numeric
// literals, ? arguments (in HAVING), aggregates and grouped columns.
type exprParser struct{ tokenCursor }

func (ep *exprParser) sum() (*exprPlan, error) {
	return ep.chain(ep.product, map[string]merge.ExprOp{"+": merge.ExprAdd, "-": merge.ExprSub})
}

func (ep *exprParser) product() (*exprPlan, error) {
	return ep.chain(ep.factor, map[string]merge.ExprOp{"*": merge.ExprMul, "/": merge.ExprDiv})
}

func (ep *exprParser) chain(next func() (*exprPlan, error), ops map[string]merge.ExprOp) (*exprPlan, error) {
	l, err := next()
	for err == nil {
		op, ok := ops[ep.peek().text]
		if !ok || ep.peek().kind != tokPunct {
			return l, nil
		}
		ep.i++
		var r *exprPlan
		if r, err = next(); err == nil {
			l = &exprPlan{op: op, args: []*exprPlan{l, r}}
		}
	}
	return nil, err
}

func (ep *exprParser) factor() (*exprPlan, error) {
	t := ep.peek()
	switch {
	case t.punct("-") && ep.ahead(1).kind == tokNumber:
		ep.i += 2
		c, err := numberConst("-"+ep.ts[ep.i-1].text, ep.rp.dialect)
		return &exprPlan{op: merge.ExprConst, val: c.val}, err
	case t.punct("-"):
		ep.i++
		x, err := ep.factor()
		if err != nil {
			return nil, err
		}
		return &exprPlan{op: merge.ExprNeg, args: []*exprPlan{x}}, nil
	case t.punct("("):
		ep.i++
		x, err := ep.sum()
		if err != nil || !ep.peek().punct(")") {
			return nil, fmt.Errorf("%q", ep.src)
		}
		ep.i++
		return x, nil
	case t.kind == tokNumber:
		ep.i++
		c, err := numberConst(t.text, ep.rp.dialect)
		return &exprPlan{op: merge.ExprConst, val: c.val}, err
	case t.punct("?") && ep.vi < len(ep.vars):
		ep.i, ep.vi = ep.i+1, ep.vi+1
		c, err := constOf(ep.vars[ep.vi-1])
		return &exprPlan{op: merge.ExprConst, val: c.val}, err
	case t.is("coalesce") && ep.ahead(1).punct("("):
		return ep.coalesce()
	case t.is("ifnull") && ep.ahead(1).punct("(") && ep.rp.dialect != merge.PostgreSQL:
		// MySQL's and SQLite's IFNULL(a, b) is COALESCE of two.
		x, err := ep.coalesce()
		if err == nil && len(x.args) != 2 {
			err = fmt.Errorf("%q: IFNULL of %d arguments", ep.src, len(x.args))
		}
		return x, err
	case t.kind == tokIdent && !t.quoted && ep.ahead(1).punct("("):
		return ep.aggregate()
	case t.kind == tokIdent:
		return ep.column()
	}
	return nil, fmt.Errorf("%q (only + - * /, COALESCE, numbers, aggregates and grouped columns are computed)", ep.src)
}

func (ep *exprParser) ahead(n int) token {
	if ep.i+n < len(ep.ts) {
		return ep.ts[ep.i+n]
	}
	return token{}
}

func (ep *exprParser) coalesce() (*exprPlan, error) {
	ep.i += 2
	out := &exprPlan{op: merge.ExprCoalesce}
	for {
		x, err := ep.sum()
		if err != nil {
			return nil, err
		}
		out.args = append(out.args, x)
		if !ep.peek().punct(",") {
			break
		}
		ep.i++
	}
	if !ep.peek().punct(")") {
		return nil, fmt.Errorf("%q", ep.src)
	}
	ep.i++
	return out, nil
}

// aggregate reads an aggregate call into the column holding its merged
// value.
func (ep *exprParser) aggregate() (*exprPlan, error) {
	start, depth := ep.i, 0
	for ep.i < len(ep.ts) {
		t := ep.ts[ep.i]
		ep.i++
		if t.punct("(") {
			depth++
		} else if t.punct(")") {
			if depth--; depth == 0 {
				break
			}
		}
	}
	col, err := ep.rp.aggCol(ep.src, ep.ts[start:ep.i])
	return &exprPlan{op: merge.ExprCol, col: col}, err
}

// column reads a grouped column, or (MySQL, SQLite, in HAVING) a select
// alias.
func (ep *exprParser) column() (*exprPlan, error) {
	start := ep.i
	ep.i++
	for ep.peek().punct(".") && ep.ahead(1).kind == tokIdent {
		ep.i += 2
	}
	name, ok := colRef(ep.ts[start:ep.i], ep.rp.logic)
	if !ok {
		return nil, fmt.Errorf("%q", ep.src)
	}
	if c, ok := ep.rp.groupCol(name); ok {
		return &exprPlan{op: merge.ExprCol, col: c}, nil
	}
	if c, ok := ep.rp.aliasCol(name); ok && ep.rp.dialect != merge.PostgreSQL && ep.i-start == 1 {
		if ep.rp.dialect == merge.SQLite && ep.rp.mayBeColumn(name) {
			// SQLite reads a table's column before an alias: an ungrouped
			// column, whose value comes from some row of each table.
			return nil, fmt.Errorf("%s, a select alias SQLite reads as the table's column", name)
		}
		return &exprPlan{op: merge.ExprCol, col: c}, nil
	}
	return nil, fmt.Errorf("column %s, which is neither grouped nor a select alias", name)
}

// planComputed plans the expression ts, whose per-table value is in col.
func (rp *readPlan) planComputed(col pcol, src string, ts []token, vars []any) error {
	for _, t := range ts {
		if t.is("over") || t.is("select") {
			return errors.New("a window or subquery")
		}
	}
	ep := &exprParser{tokenCursor{rp: rp, src: src, ts: ts, vars: vars}}
	e, err := ep.sum()
	if err != nil {
		return err
	}
	if ep.i != len(ts) || ep.vi != len(vars) {
		return fmt.Errorf("%q (only + - * /, COALESCE, numbers, aggregates and grouped columns are computed)", src)
	}
	rp.computed = append(rp.computed, computedPlan{col: col, expr: e})
	return nil
}

// computedCol is the column of an expression over aggregates named in
// ORDER BY: the select list's own, or a hidden one.
func (rp *readPlan) computedCol(text string, ts []token) (pcol, error) {
	norm := normTokens(ts)
	for i, it := range rp.items {
		if it.computed && it.text == norm {
			return pcol(i), nil
		}
	}
	if j, ok := rp.hiddenAt["computed:"+norm]; ok {
		return hiddenCol(j), nil
	}
	col := rp.hide("computed:"+norm, clause.Expr{SQL: source(text, ts)})
	return col, rp.planComputed(col, text, ts, nil)
}

// onlyAggregates reports whether an expression's problem for a merge is
// only that it holds aggregates, which a Computed column can combine.
func onlyAggregates(ts []token) bool {
	if opaqueProblem(ts) != "an aggregate inside an expression" {
		return false
	}
	for _, t := range ts {
		if t.is("over") || t.is("select") {
			return false
		}
	}
	return true
}

// mergeExpr converts an exprPlan to the engine's form.
func mergeExpr(e *exprPlan, at func(pcol) int) *merge.Expr {
	out := &merge.Expr{Op: e.op, Const: e.val}
	if e.op == merge.ExprCol {
		out.Col = at(e.col)
	}
	for _, a := range e.args {
		out.Args = append(out.Args, mergeExpr(a, at))
	}
	return out
}
