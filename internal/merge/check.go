package merge

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
)

// check validates the plan against the shards' columns and refuses, before
// any row is read, what can never be merged exactly: ordering or grouping
// text the plan does not allow, values of unsupported types.
func (r *Rows) check() error {
	p, n := r.p, len(r.names)
	if p.Visible <= 0 || p.Visible > n {
		return planErr("Visible is %d of %d columns", p.Visible, n)
	}
	if p.Offset < 0 || p.Limit < -1 {
		return planErr("offset %d, limit %d", p.Offset, p.Limit)
	}
	if !p.Grouped && (len(p.Aggs) > 0 || len(p.GroupBy) > 0 || p.Having != nil) {
		return planErr("aggregates, GROUP BY or HAVING without Grouped")
	}
	for _, k := range p.OrderBy {
		if err := r.checkCol(k.Col, k.Text, true); err != nil {
			return err
		}
	}
	for i, c := range p.GroupBy {
		if err := r.checkCol(c, r.groupText(i), false); err != nil {
			return err
		}
	}
	if p.Grouped {
		for _, k := range r.groupOrder() {
			if err := r.checkCol(k.Col, k.Text, true); err != nil {
				return err
			}
		}
	}
	if p.Distinct {
		for c := 0; c < p.Visible; c++ {
			if err := r.checkCol(c, r.distinctText(c), false); err != nil {
				return err
			}
		}
	}
	if err := r.checkAggs(); err != nil {
		return err
	}
	if err := r.checkComputed(); err != nil {
		return err
	}
	if p.Having != nil {
		return r.checkCond(p.Having, 0)
	}
	return nil
}

// checkCol checks column c on every shard.
func (r *Rows) checkCol(c int, t Text, order bool) error {
	if c < 0 || c >= len(r.names) {
		return planErr("column %d of %d", c, len(r.names))
	}
	for s := range r.shards {
		if err := checkClass(r.cls[s][c], t, order); err != nil {
			return r.colErr(c, err)
		}
	}
	return nil
}

// checkNumeric checks that column c holds numbers on every shard.
func (r *Rows) checkNumeric(c int) error {
	if c < 0 || c >= len(r.names) {
		return planErr("column %d of %d", c, len(r.names))
	}
	for s := range r.shards {
		switch r.cls[s][c] {
		case clsNumber, clsFloat, clsValue, clsSQLite:
		default:
			return r.colErr(c, ErrUnsupportedType)
		}
	}
	return nil
}

func (r *Rows) checkAggs() error {
	r.aggs = make([]aggInfo, len(r.p.Aggs))
	for i, a := range r.p.Aggs {
		r.aggs[i].Agg = a
		if a.Col < 0 || a.Col >= len(r.names) {
			return planErr("aggregate column %d of %d", a.Col, len(r.names))
		}
		if err := r.checkAgg(&r.aggs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rows) checkAgg(a *aggInfo) error {
	args := map[Func]int{Avg: 2, SumDistinct: 1, AvgDistinct: 1}
	if want, ok := args[a.Func]; ok && len(a.Args) != want {
		return planErr("aggregate %d on column %d needs %d arguments", a.Func, a.Col, want)
	}
	switch a.Func {
	case Count:
		return r.checkNumeric(a.Col)
	case Sum:
		return r.checkNumeric(a.Col)
	case Min, Max:
		return r.checkCol(a.Col, a.Text, true)
	case Avg:
		if err := r.checkNumeric(a.Args[0]); err != nil {
			return err
		}
		if err := r.checkNumeric(a.Args[1]); err != nil {
			return err
		}
		if r.p.Dialect == PostgreSQL && r.types[a.Args[0]] == "FLOAT4" {
			// avg(real) adds in float8; per-shard sum(real) rounds each
			// shard's sum to float4 first.
			return r.colErr(a.Args[0], fmt.Errorf("%w: AVG's sum of a real is rounded to real on each shard; sum it as double precision (SUM(x::float8))", ErrUnsupportedType))
		}
		return r.avgMode(a)
	case CountDistinct:
		if len(a.Args) == 0 {
			return planErr("COUNT(DISTINCT) on column %d without arguments", a.Col)
		}
		for _, c := range a.Args {
			if err := r.checkCol(c, a.Text, false); err != nil {
				return err
			}
		}
		return nil
	case SumDistinct, AvgDistinct:
		if err := r.checkNumeric(a.Args[0]); err != nil {
			return err
		}
		if a.Func == AvgDistinct {
			return r.avgMode(a)
		}
		return nil
	}
	return planErr("unknown aggregate %d on column %d", a.Func, a.Col)
}

func (r *Rows) avgMode(a *aggInfo) error {
	mode, scale, err := avgModeOf(r.p.Dialect, r.shards[0], a.Col)
	if err != nil {
		return r.colErr(a.Col, err)
	}
	a.mode, a.scale = mode, scale
	return nil
}

// checkCond checks a HAVING condition's shape and columns.
func (r *Rows) checkCond(c *Cond, depth int) error {
	if c == nil || depth > 1000 {
		return planErr("%v", errCond)
	}
	switch c.Op {
	case And, Or:
		if len(c.Kids) < 2 {
			return planErr("%v: AND/OR with %d operands", errCond, len(c.Kids))
		}
	case Not:
		if len(c.Kids) != 1 {
			return planErr("%v: NOT with %d operands", errCond, len(c.Kids))
		}
	case IsNull, IsNotNull:
		if !c.L.IsConst && (c.L.Col < 0 || c.L.Col >= len(r.names)) {
			return planErr("column %d of %d", c.L.Col, len(r.names))
		}
		return nil
	case Compare:
		if c.Cmp < Eq || c.Cmp > Ge {
			return planErr("%v: comparison %d", errCond, c.Cmp)
		}
		order := c.Cmp != Eq && c.Cmp != Ne
		t := c.Text
		if !order && t == TextEqualOnly {
			t = TextBinary
		}
		if err := r.checkOperand(c.L, t, order); err != nil {
			return err
		}
		return r.checkOperand(c.R, t, order)
	default:
		return planErr("%v: operator %d", errCond, c.Op)
	}
	for _, k := range c.Kids {
		if err := r.checkCond(k, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rows) checkOperand(o Operand, t Text, order bool) error {
	if o.IsConst {
		return nil
	}
	return r.checkCol(o.Col, t, order)
}

// checkComputed checks the computed columns' expressions and resolves
// MySQL's decimal scale of each.
func (r *Rows) checkComputed() error {
	if len(r.p.Computed) > 0 && !r.p.Grouped {
		return planErr("computed columns without Grouped")
	}
	isAgg := map[int]bool{}
	for _, a := range r.p.Aggs {
		isAgg[a.Col] = true
	}
	avgCols := map[int]bool{} // MySQL DECIMAL AVGs, and computed columns holding one
	for _, a := range r.aggs {
		if (a.Func == Avg || a.Func == AvgDistinct) && a.mode == avgMySQLDecimal {
			avgCols[a.Col] = true
		}
	}
	r.comps = make([]compInfo, len(r.p.Computed))
	for i, c := range r.p.Computed {
		if c.Col < 0 || c.Col >= len(r.names) || isAgg[c.Col] {
			return planErr("computed column %d", c.Col)
		}
		if err := r.checkExpr(c.Expr, true, 0); err != nil {
			if errors.Is(err, ErrPlan) {
				return err
			}
			return r.colErr(c.Col, err)
		}
		if r.hiddenAvgDigits(c.Expr, false, avgCols) {
			return r.colErr(c.Col, fmt.Errorf("%w: arithmetic on a DECIMAL AVG on MySQL (it computes with digits beyond the AVG's scale, which no shard returns)", ErrUnsupportedType))
		}
		if r.hiddenAvgDigits(c.Expr, true, avgCols) {
			avgCols[c.Col] = true
		}
		ci := &r.comps[i]
		ci.Computed = c
		if r.p.Dialect == MySQL && strings.ToUpper(r.types[c.Col]) == "DECIMAL" {
			ps, ok := r.shards[0].(driver.RowsColumnTypePrecisionScale)
			if !ok {
				return r.colErr(c.Col, fmt.Errorf("%w: the driver does not report the column's scale", ErrUnsupportedType))
			}
			_, sc, ok := ps.ColumnTypePrecisionScale(c.Col)
			if !ok || sc < 0 || sc > 1000 {
				return r.colErr(c.Col, fmt.Errorf("%w: the driver does not report the column's scale", ErrUnsupportedType))
			}
			ci.mysqlDecimal, ci.divScale = true, int(sc)
		}
	}
	return nil
}

// checkExpr checks an expression's shape; MySQL divides only at the root
// (it rounds there at the column's scale; below it keeps digits no shard
// result shows).
func (r *Rows) checkExpr(e *Expr, root bool, depth int) error {
	if e == nil || depth > 100 {
		return planErr("malformed expression")
	}
	want := map[ExprOp]int{ExprAdd: 2, ExprSub: 2, ExprMul: 2, ExprDiv: 2, ExprNeg: 1}
	switch e.Op {
	case ExprCol:
		return r.checkNumeric(e.Col)
	case ExprConst:
		switch e.Const.(type) {
		case nil, int64, float64, string, []byte:
			return nil
		}
		return planErr("an expression constant of type %T", e.Const)
	case ExprCoalesce:
		if len(e.Args) == 0 {
			return planErr("COALESCE without arguments")
		}
	case ExprDiv:
		if r.p.Dialect == MySQL && !root {
			return fmt.Errorf("%w: a division inside an expression on MySQL (rounded with digits the shards' results lack)", ErrUnsupportedType)
		}
	}
	if n, ok := want[e.Op]; ok && len(e.Args) != n {
		return planErr("expression operator %d with %d operands", e.Op, len(e.Args))
	} else if !ok && e.Op != ExprCoalesce {
		return planErr("expression operator %d", e.Op)
	}
	for _, a := range e.Args {
		if err := r.checkExpr(a, false, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// hiddenAvgDigits tells whether e does arithmetic (under) on a MySQL
// DECIMAL AVG (a column of avgCols): MariaDB's AVG(x) * 3 multiplies the
// average with 9 digits kept past its scale (1.333333333 * 3 = 4.0000),
// the merged one has only the AVG column's (1.3333 * 3 = 3.9999). Alone,
// negated or in COALESCE it is returned at its scale, as merged.
func (r *Rows) hiddenAvgDigits(e *Expr, under bool, avgCols map[int]bool) bool {
	if e == nil || r.p.Dialect != MySQL {
		return false
	}
	switch e.Op {
	case ExprCol:
		return under && avgCols[e.Col]
	case ExprAdd, ExprSub, ExprMul, ExprDiv:
		under = true
	}
	for _, a := range e.Args {
		if r.hiddenAvgDigits(a, under, avgCols) {
			return true
		}
	}
	return false
}
