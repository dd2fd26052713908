package gormplugin

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/internal/merge"
)

// HAVING is taken out of every target's query and evaluated by the merge
// on the merged groups: a group's aggregate over one table says nothing
// about its aggregate over all of them.

func (rp *readPlan) planHaving(having []clause.Expression) error {
	if len(having) == 0 {
		return nil
	}
	c, err := rp.condAll(merge.And, having)
	if err != nil {
		return fmt.Errorf("HAVING: %w", err)
	}
	rp.having = c
	return nil
}

func (rp *readPlan) condAll(op merge.CondOp, es []clause.Expression) (*condPlan, error) {
	out := &condPlan{op: op}
	for _, e := range es {
		k, err := rp.condOf(e)
		if err != nil {
			return nil, err
		}
		out.kids = append(out.kids, k)
	}
	if len(out.kids) == 1 && op != merge.Not {
		return out.kids[0], nil
	}
	return out, nil
}

func (rp *readPlan) condOf(e clause.Expression) (*condPlan, error) {
	switch x := e.(type) {
	case clause.Expr:
		ts, err := rp.tokenize(x.SQL)
		if err != nil {
			return nil, err
		}
		cp := &condParser{tokenCursor{rp: rp, src: x.SQL, ts: ts, vars: x.Vars}}
		c, err := cp.or()
		if err == nil && (cp.i != len(ts) || cp.vi != len(x.Vars)) {
			err = fmt.Errorf("%q", x.SQL)
		}
		return c, err
	case clause.AndConditions:
		return rp.condAll(merge.And, x.Exprs)
	case clause.OrConditions:
		return rp.condAll(merge.Or, x.Exprs)
	case clause.NotConditions:
		inner, err := rp.condAll(merge.And, x.Exprs)
		if err != nil {
			return nil, err
		}
		return &condPlan{op: merge.Not, kids: []*condPlan{inner}}, nil
	case clause.IN:
		or := &condPlan{op: merge.Or}
		for _, v := range x.Values {
			k, err := rp.columnCmp(x.Column, merge.Eq, v)
			if err != nil {
				return nil, err
			}
			or.kids = append(or.kids, k)
		}
		if len(or.kids) == 1 {
			return or.kids[0], nil
		}
		if len(or.kids) == 0 {
			return nil, errors.New("IN of no values")
		}
		return or, nil
	case clause.Eq:
		return rp.columnCmp(x.Column, merge.Eq, x.Value)
	case clause.Neq:
		return rp.columnCmp(x.Column, merge.Ne, x.Value)
	case clause.Gt:
		return rp.columnCmp(x.Column, merge.Gt, x.Value)
	case clause.Gte:
		return rp.columnCmp(x.Column, merge.Ge, x.Value)
	case clause.Lt:
		return rp.columnCmp(x.Column, merge.Lt, x.Value)
	case clause.Lte:
		return rp.columnCmp(x.Column, merge.Le, x.Value)
	}
	return nil, fmt.Errorf("a %T condition", e)
}

// columnCmp is a map or struct condition: column op value.
func (rp *readPlan) columnCmp(column any, op merge.CmpOp, v any) (*condPlan, error) {
	var text string
	switch c := column.(type) {
	case string:
		text = c
	case clause.Column:
		text = c.Name
	default:
		return nil, fmt.Errorf("a condition on %T", column)
	}
	ts, err := rp.tokenize(text)
	if err != nil {
		return nil, err
	}
	cp := &condParser{tokenCursor{rp: rp, src: text, ts: ts}}
	l, err := cp.operand()
	if err != nil || cp.i != len(ts) {
		return nil, fmt.Errorf("%q", text)
	}
	r, err := constOf(v)
	if err != nil {
		return nil, err
	}
	if r.val == nil {
		return &condPlan{op: merge.IsNull, l: l}, nil // GORM writes a nil Eq as IS NULL
	}
	return &condPlan{op: merge.Compare, cmp: op, l: l, r: r}, nil
}

// constOf is a bound argument as the driver value the merge compares.
func constOf(v any) (operandPlan, error) {
	if _, ok := v.(clause.Expression); ok {
		return operandPlan{}, fmt.Errorf("an expression argument %T", v)
	}
	if isSlice(v) {
		return operandPlan{}, errors.New("a list argument")
	}
	dv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return operandPlan{}, err
	}
	return operandPlan{val: dv, isConst: true}, nil
}

// condParser reads a HAVING template: comparisons of aggregates, grouped
// columns, ? arguments and literals, joined by AND, OR, NOT, parentheses.
type condParser struct{ tokenCursor }

func (cp *condParser) or() (*condPlan, error) {
	return cp.chain("or", merge.Or, cp.and)
}

func (cp *condParser) and() (*condPlan, error) {
	return cp.chain("and", merge.And, cp.not)
}

func (cp *condParser) chain(word string, op merge.CondOp, next func() (*condPlan, error)) (*condPlan, error) {
	first, err := next()
	if err != nil {
		return nil, err
	}
	out := &condPlan{op: op, kids: []*condPlan{first}}
	for cp.peek().is(word) {
		cp.i++
		k, err := next()
		if err != nil {
			return nil, err
		}
		out.kids = append(out.kids, k)
	}
	if len(out.kids) == 1 {
		return first, nil
	}
	return out, nil
}

func (cp *condParser) not() (*condPlan, error) {
	if cp.peek().is("not") {
		cp.i++
		k, err := cp.not()
		if err != nil {
			return nil, err
		}
		return &condPlan{op: merge.Not, kids: []*condPlan{k}}, nil
	}
	return cp.comparison()
}

var cmpOps = map[string]merge.CmpOp{"=": merge.Eq, "<>": merge.Ne, "!=": merge.Ne, "<": merge.Lt, "<=": merge.Le, ">": merge.Gt, ">=": merge.Ge}

func (cp *condParser) comparison() (*condPlan, error) {
	if cp.peek().punct("(") && !cp.operandAhead() {
		cp.i++
		c, err := cp.or()
		if err != nil {
			return nil, err
		}
		if !cp.peek().punct(")") {
			return nil, fmt.Errorf("%q", cp.src)
		}
		cp.i++
		return c, nil
	}
	l, err := cp.operand()
	if err != nil {
		return nil, err
	}
	if cp.peek().is("is") {
		cp.i++
		op := merge.IsNull
		if cp.peek().is("not") {
			op, cp.i = merge.IsNotNull, cp.i+1
		}
		if !cp.peek().is("null") {
			return nil, fmt.Errorf("%q", cp.src)
		}
		cp.i++
		return &condPlan{op: op, l: l}, nil
	}
	negate := cp.peek().is("not") && (cp.peekAt(cp.i+1).is("in") || cp.peekAt(cp.i+1).is("between"))
	if negate {
		cp.i++
	}
	var c *condPlan
	switch {
	case cp.peek().is("between"):
		cp.i++
		c, err = cp.between(l)
	case cp.peek().is("in"):
		cp.i++
		c, err = cp.in(l)
	}
	if c != nil || err != nil {
		if negate && err == nil {
			c = &condPlan{op: merge.Not, kids: []*condPlan{c}}
		}
		return c, err
	}
	op, ok := cmpOps[cp.peek().text]
	if !ok || cp.peek().kind != tokPunct {
		return nil, fmt.Errorf("%q (only comparisons, AND, OR, NOT and IS NULL are merged)", cp.src)
	}
	cp.i++
	r, err := cp.operand()
	if err != nil {
		return nil, err
	}
	return &condPlan{op: merge.Compare, cmp: op, l: l, r: r}, nil
}

// between reads `lo AND hi` after x BETWEEN: x >= lo AND x <= hi, which
// has the same three-valued result.
func (cp *condParser) between(x operandPlan) (*condPlan, error) {
	lo, err := cp.operand()
	if err != nil {
		return nil, err
	}
	if !cp.peek().is("and") {
		return nil, fmt.Errorf("%q", cp.src)
	}
	cp.i++
	hi, err := cp.operand()
	if err != nil {
		return nil, err
	}
	return &condPlan{op: merge.And, kids: []*condPlan{
		{op: merge.Compare, cmp: merge.Ge, l: x, r: lo},
		{op: merge.Compare, cmp: merge.Le, l: x, r: hi},
	}}, nil
}

// in reads the list after x IN, `(a, b, ...)` or a list argument: x = a
// OR x = b ..., which has the same three-valued result.
func (cp *condParser) in(x operandPlan) (*condPlan, error) {
	var items []operandPlan
	paren := cp.peek().punct("(")
	if paren {
		cp.i++
	}
	switch {
	case cp.peek().punct("?") && cp.vi < len(cp.vars) && isSlice(cp.vars[cp.vi]):
		list, err := listArg(cp.vars[cp.vi])
		if err != nil {
			return nil, err
		}
		cp.i, cp.vi, items = cp.i+1, cp.vi+1, list
	case !paren:
		return nil, fmt.Errorf("%q", cp.src)
	default:
		for {
			o, err := cp.operand()
			if err != nil {
				return nil, err
			}
			items = append(items, o)
			if !cp.peek().punct(",") {
				break
			}
			cp.i++
		}
	}
	if paren {
		if !cp.peek().punct(")") {
			return nil, fmt.Errorf("%q", cp.src)
		}
		cp.i++
	}
	out := &condPlan{op: merge.Or}
	for _, it := range items {
		out.kids = append(out.kids, &condPlan{op: merge.Compare, cmp: merge.Eq, l: x, r: it})
	}
	if len(out.kids) == 1 {
		return out.kids[0], nil
	}
	return out, nil
}

// listArg is a list argument's values as constants; an empty list is
// GORM's IN (NULL).
func listArg(v any) ([]operandPlan, error) {
	vs, ok := sliceValues(v)
	if !ok {
		return nil, fmt.Errorf("IN %T", v)
	}
	items := []operandPlan{}
	for _, e := range vs {
		o, err := constOf(e)
		if err != nil {
			return nil, err
		}
		items = append(items, o)
	}
	if len(vs) == 0 {
		items = append(items, operandPlan{isConst: true})
	}
	return items, nil
}

// operandAhead reports whether a "(" starts a parenthesised operand
// rather than a group of conditions: "(count(*)) > 1".
func (cp *condParser) operandAhead() bool {
	depth := 0
	for j := cp.i; j < len(cp.ts); j++ {
		switch t := cp.ts[j]; {
		case t.punct("("):
			depth++
		case t.punct(")"):
			if depth--; depth == 0 {
				_, isCmp := cmpOps[cp.peekAt(j+1).text]
				return isCmp || cp.peekAt(j+1).is("is")
			}
		case depth == 1 && (t.is("and") || t.is("or") || t.is("not")):
			return false
		case depth == 1 && t.kind == tokPunct && cmpOps[t.text] != 0:
			return false
		}
	}
	return false
}

func (cp *condParser) peekAt(j int) token {
	if j < len(cp.ts) {
		return cp.ts[j]
	}
	return token{}
}

func (cp *condParser) operand() (operandPlan, error) {
	t := cp.peek()
	switch {
	case t.kind == tokString:
		cp.i++
		return operandPlan{val: t.text, isConst: true}, nil
	case t.is("true"), t.is("false"):
		cp.i++
		return operandPlan{val: t.is("true"), isConst: true}, nil
	case t.is("null"):
		cp.i++
		return operandPlan{isConst: true}, nil
	case t.punct("?") && cp.vi < len(cp.vars):
		// An argument stands alone here: a list (IN ?) or a value of any
		// type, not only a number.
		if next := cp.peekAt(cp.i + 1); next.kind != tokPunct || !strings.Contains("+-*/", next.text) {
			cp.i, cp.vi = cp.i+1, cp.vi+1
			return constOf(cp.vars[cp.vi-1])
		}
	}
	start, vi := cp.i, cp.vi
	ep := &exprParser{cp.tokenCursor}
	e, err := ep.sum()
	if err != nil {
		return operandPlan{}, err
	}
	cp.i, cp.vi = ep.i, ep.vi
	switch e.op {
	case merge.ExprCol:
		return operandPlan{col: e.col}, nil
	case merge.ExprConst:
		return operandPlan{val: e.val, isConst: true}, nil
	}
	// Arithmetic: a hidden column each table computes (for its type), whose
	// value the merge computes again from the merged aggregates.
	ts, vars := cp.ts[start:cp.i], cp.vars[vi:cp.vi]
	key := fmt.Sprintf("computed:%s|%v", normTokens(ts), vars)
	if j, ok := cp.rp.hiddenAt[key]; ok {
		return operandPlan{col: hiddenCol(j)}, nil
	}
	col := cp.rp.hide(key, clause.Expr{SQL: source(cp.src, ts), Vars: vars})
	cp.rp.computed = append(cp.rp.computed, computedPlan{col: col, expr: e})
	return operandPlan{col: col}, nil
}

// numberConst is a numeric literal: an integer, or a decimal kept as its
// exact text (PostgreSQL and MySQL read it as an exact numeric; SQLite as
// a REAL).
func numberConst(text string, d merge.Dialect) (operandPlan, error) {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return operandPlan{val: n, isConst: true}, nil
	}
	if strings.ContainsAny(text, "eExX") {
		return operandPlan{}, fmt.Errorf("the literal %s", text)
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return operandPlan{}, fmt.Errorf("the literal %s", text)
	}
	if d == merge.SQLite {
		return operandPlan{val: f, isConst: true}, nil
	}
	return operandPlan{val: text, isConst: true}, nil
}
