package sqlhook

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/shardkey/shardkey/internal/merge"
)

// myShape reads a SELECT's shape from TiDB's MySQL tree.
func (c *myCompiler) myShape(s *ast.SelectStmt) *selectShape {
	sh := &selectShape{distinct: s.Distinct}
	if len(s.WindowSpecs) > 0 {
		sh.fail("WINDOW")
	}
	if s.Fields != nil {
		for _, f := range s.Fields.Fields {
			if f.WildCard != nil {
				sh.items = append(sh.items, shapeItem{expr: shapeExpr{kind: exprStar}})
				continue
			}
			it := shapeItem{expr: myExpr(f.Expr, sh), alias: f.AsName.L}
			it.outName = it.alias
			if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok && it.alias == "" {
				it.outName = cn.Name.Name.L
			}
			sh.items = append(sh.items, it)
		}
	}
	if g := s.GroupBy; g != nil {
		if g.Rollup {
			sh.fail("GROUP BY ... WITH ROLLUP")
		}
		for _, it := range g.Items {
			if it.Desc {
				// MariaDB orders the groups by it when there is no ORDER BY;
				// the merge's implicit order is ascending.
				sh.fail("GROUP BY ... DESC (write the order as ORDER BY)")
			}
			g := myKey(it.Expr, sh)
			g.print = myPrint(it.Expr)
			sh.groupBy = append(sh.groupBy, g)
		}
	}
	if s.Having != nil && s.Having.Expr != nil {
		agg := 0
		sh.having = myCond(s.Having.Expr, sh, &agg)
		sh.havingAggs = agg
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			sh.orderBy = append(sh.orderBy, shapeOrder{expr: myKey(it.Expr, sh), desc: it.Desc})
		}
	}
	return sh
}

// myKey reads a GROUP BY or ORDER BY term.
func myKey(e ast.ExprNode, sh *selectShape) shapeExpr {
	switch x := e.(type) {
	case *ast.PositionExpr:
		if x.P != nil {
			sh.fail("ORDER BY or GROUP BY a placeholder position")
		}
		return shapeExpr{kind: exprOrdinal, ordinal: x.N}
	case *ast.SetCollationExpr:
		k := myExpr(x.Expr, sh)
		k.collate = x.Collate
		return k
	case *test_driver.ValueExpr:
		sh.fail("ORDER BY or GROUP BY a constant")
	}
	return myExpr(e, sh)
}

// exprVisitor collects what an expression reads.
type exprVisitor struct {
	names    []string
	hasParam bool
	window   bool
}

func (v *exprVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.ColumnName:
		v.names = append(v.names, x.Name.L)
	case *test_driver.ParamMarkerExpr:
		v.hasParam = true
	case *ast.WindowFuncExpr:
		v.window = true
	}
	return n, false
}

func (v *exprVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// myExpr classifies an expression, with the arithmetic over aggregates
// the engine computes.
func myExpr(e ast.ExprNode, sh *selectShape) shapeExpr {
	out := myClass(e, sh)
	if out.kind == exprOther && out.hasAgg {
		out.calc = myCalc(e, sh)
	}
	return out
}

// myClass classifies an expression.
func myClass(e ast.ExprNode, sh *selectShape) shapeExpr {
	v := &exprVisitor{}
	e.Accept(v)
	out := shapeExpr{names: v.names, hasParam: v.hasParam, hasAgg: myHasAggregate(e)}
	if v.window {
		sh.fail("window function")
	}
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	switch x := e.(type) {
	case *ast.ColumnNameExpr:
		out.kind, out.ref = exprColumn, columnFields(x.Name)
	case *ast.AggregateFuncExpr:
		fn := strings.ToLower(x.F)
		switch {
		case !mergeableAggNames[fn]:
			sh.fail("aggregate " + strings.ToUpper(fn))
		case x.Order != nil:
			sh.fail(strings.ToUpper(fn) + " with ORDER BY")
		case myHasAggregate(x.Args...):
			sh.fail("nested aggregates")
		default:
			out.kind = exprAgg
			out.agg = shapeAgg{fn: fn, distinct: x.Distinct, nargs: len(x.Args)}
		}
	}
	return out
}

var myCmpOps = map[opcode.Op]merge.CmpOp{opcode.EQ: merge.Eq, opcode.NE: merge.Ne, opcode.LT: merge.Lt, opcode.LE: merge.Le, opcode.GT: merge.Gt, opcode.GE: merge.Ge}

// myCond reads a HAVING condition; agg counts the aggregate calls in text
// order.
func myCond(e ast.ExprNode, sh *selectShape, agg *int) *shapeCond {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return myCond(x.Expr, sh, agg)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicAnd, opcode.LogicOr:
			op := merge.And
			if x.Op == opcode.LogicOr {
				op = merge.Or
			}
			l := myCond(x.L, sh, agg)
			return &shapeCond{op: op, kids: []*shapeCond{l, myCond(x.R, sh, agg)}}
		}
		if cmp, ok := myCmpOps[x.Op]; ok {
			l := myOperand(x.L, sh, agg)
			return &shapeCond{op: merge.Compare, cmp: cmp, l: l, r: myOperand(x.R, sh, agg)}
		}
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Not || x.Op == opcode.Not2 {
			return &shapeCond{op: merge.Not, kids: []*shapeCond{myCond(x.V, sh, agg)}}
		}
	case *ast.IsNullExpr:
		op := merge.IsNull
		if x.Not {
			op = merge.IsNotNull
		}
		return &shapeCond{op: op, l: myOperand(x.Expr, sh, agg)}
	case *ast.BetweenExpr:
		l := myOperand(x.Expr, sh, agg)
		lo := myOperand(x.Left, sh, agg)
		out := &shapeCond{op: merge.And, kids: []*shapeCond{
			{op: merge.Compare, cmp: merge.Ge, l: l, r: lo}, {op: merge.Compare, cmp: merge.Le, l: l, r: myOperand(x.Right, sh, agg)}}}
		if x.Not {
			out = &shapeCond{op: merge.Not, kids: []*shapeCond{out}}
		}
		return out
	case *ast.PatternInExpr:
		if x.Sel != nil || len(x.List) == 0 {
			break
		}
		l := myOperand(x.Expr, sh, agg)
		out := &shapeCond{op: merge.Or}
		cmp := merge.Eq
		if x.Not {
			out.op, cmp = merge.And, merge.Ne
		}
		for _, it := range x.List {
			out.kids = append(out.kids, &shapeCond{op: merge.Compare, cmp: cmp, l: l, r: myOperand(it, sh, agg)})
		}
		if len(out.kids) == 1 {
			return out.kids[0]
		}
		return out
	}
	sh.fail("HAVING with a condition other than comparisons, IN, BETWEEN and IS NULL")
	return &shapeCond{op: merge.And}
}

// myOperand reads a side of a HAVING comparison.
func myOperand(e ast.ExprNode, sh *selectShape, agg *int) shapeOperand {
	switch e.(type) {
	case *test_driver.ValueExpr, *test_driver.ParamMarkerExpr, *ast.UnaryOperationExpr:
		v := myValue(e)
		if v.expr {
			sh.fail("HAVING with a constant other than an integer, a string, NULL or a placeholder")
		}
		return shapeOperand{isConst: true, val: v}
	}
	x := myExpr(e, sh)
	x.print = myPrint(e)
	o := shapeOperand{expr: x, aggIndex: -1}
	switch {
	case x.kind == exprAgg:
		o.aggIndex = *agg
		*agg++
	case x.calc != nil:
		o.aggIndex = *agg
		*agg += len(calcAggs(x.calc, nil))
	case x.kind != exprColumn && x.hasAgg:
		sh.fail("HAVING with an expression other than an aggregate, a GROUP BY column or a constant")
	}
	return o
}

// myPrint is an expression written back by the grammar: two spellings of
// one expression print alike.
func myPrint(e ast.ExprNode) string {
	var b strings.Builder
	if err := e.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return ""
	}
	return b.String()
}

// myStoks converts the MySQL tokens for the select layout.
func myStoks(q string, toks []myTok) []stok {
	out := make([]stok, len(toks))
	for i, t := range toks {
		st := stok{start: t.start, end: t.end, kind: t.kind}
		switch t.kind {
		case 'w':
			st.word = strings.ToLower(q[t.start:t.end])
		case '`':
			st.kind = '"'
		}
		out[i] = st
	}
	return out
}

// selectMerge builds the merge of a SELECT over several targets and adds
// its edits, once the other edits (tables, placeholders, LIMIT) are made.
func (t *myTemplate) selectMerge() {
	sp := t.c.p.sel
	if sp == nil || t.c.shape == nil || sp.multi != "" {
		return
	}
	toks := myStoks(t.q, t.toks)
	lay, ok := layoutOf(toks, t.c.shape)
	if !ok {
		sp.multi = "a SELECT whose text cannot be read for merging"
		return
	}
	mp, edits, why := buildMerge(t.c.h.dialect, t.c.h.opts.binaryText, t.c.shape, lay, t.q, toks)
	if why != "" {
		sp.multi = why
		return
	}
	sp.merge = mp
	t.edits = applySelectEdits(t.q, t.edits, edits)
}

// myCalc reads an expression over aggregates the engine computes (+, -,
// *, /, negation, COALESCE/IFNULL, numeric constants), or nil.
func myCalc(e ast.ExprNode, sh *selectShape) *calcNode {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return myCalc(x.Expr, sh)
	case *ast.AggregateFuncExpr:
		if a := myClass(x, sh); a.kind == exprAgg {
			return &calcNode{op: merge.ExprCol, agg: a}
		}
	case *test_driver.ValueExpr:
		switch v := x.GetValue().(type) {
		case int64:
			return &calcNode{op: merge.ExprConst, con: v}
		case *test_driver.MyDecimal:
			if plainDecimal(v.String()) {
				return &calcNode{op: merge.ExprConst, con: v.String()}
			}
		}
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Minus {
			return calcOf(merge.ExprNeg, func(int) *calcNode { return myCalc(x.V, sh) }, 1)
		}
	case *ast.BinaryOperationExpr:
		op := map[opcode.Op]merge.ExprOp{opcode.Plus: merge.ExprAdd, opcode.Minus: merge.ExprSub, opcode.Mul: merge.ExprMul, opcode.Div: merge.ExprDiv}[x.Op]
		if op != 0 {
			sides := []ast.ExprNode{x.L, x.R}
			return calcOf(op, func(i int) *calcNode { return myCalc(sides[i], sh) }, 2)
		}
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "coalesce", "ifnull":
			return calcOf(merge.ExprCoalesce, func(i int) *calcNode { return myCalc(x.Args[i], sh) }, len(x.Args))
		}
	}
	return nil
}
