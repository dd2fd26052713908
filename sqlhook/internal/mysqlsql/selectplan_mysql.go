package mysqlsql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/shardkey/shardkey/internal/merge"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// myShape reads a SELECT's shape from TiDB's MySQL tree.
func (c *myCompiler) myShape(s *ast.SelectStmt) *ir.SelectShape {
	sh := &ir.SelectShape{Distinct: s.Distinct}
	if len(s.WindowSpecs) > 0 {
		sh.Fail("WINDOW")
	}
	if s.Fields != nil {
		for _, f := range s.Fields.Fields {
			if f.WildCard != nil {
				sh.Items = append(sh.Items, ir.ShapeItem{Expr: ir.ShapeExpr{Kind: ir.ExprStar}})
				continue
			}
			it := ir.ShapeItem{Expr: myExpr(f.Expr, sh), Alias: f.AsName.L}
			it.OutName = it.Alias
			if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok && it.Alias == "" {
				it.OutName = cn.Name.Name.L
			}
			sh.Items = append(sh.Items, it)
		}
	}
	if g := s.GroupBy; g != nil {
		if g.Rollup {
			sh.Fail("GROUP BY ... WITH ROLLUP")
		}
		for _, it := range g.Items {
			if it.Desc {
				// MariaDB orders the groups by it when there is no ORDER BY;
				// the merge's implicit order is ascending.
				sh.Fail("GROUP BY ... DESC (write the order as ORDER BY)")
			}
			g := myKey(it.Expr, sh)
			g.Print = myPrint(it.Expr)
			sh.GroupBy = append(sh.GroupBy, g)
		}
	}
	if s.Having != nil && s.Having.Expr != nil {
		agg := 0
		sh.Having = myCond(s.Having.Expr, sh, &agg)
		sh.HavingAggs = agg
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			sh.OrderBy = append(sh.OrderBy, ir.ShapeOrder{Expr: myKey(it.Expr, sh), Desc: it.Desc})
		}
	}
	return sh
}

// myKey reads a GROUP BY or ORDER BY term.
func myKey(e ast.ExprNode, sh *ir.SelectShape) ir.ShapeExpr {
	switch x := e.(type) {
	case *ast.PositionExpr:
		if x.P != nil {
			sh.Fail("ORDER BY or GROUP BY a placeholder position")
		}
		return ir.ShapeExpr{Kind: ir.ExprOrdinal, Ordinal: x.N}
	case *ast.SetCollationExpr:
		k := myExpr(x.Expr, sh)
		k.Collate = x.Collate
		return k
	case *test_driver.ValueExpr:
		sh.Fail("ORDER BY or GROUP BY a constant")
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
func myExpr(e ast.ExprNode, sh *ir.SelectShape) ir.ShapeExpr {
	out := myClass(e, sh)
	if out.Kind == ir.ExprOther && out.HasAgg {
		out.Calc = myCalc(e, sh)
	}
	return out
}

// myClass classifies an expression.
func myClass(e ast.ExprNode, sh *ir.SelectShape) ir.ShapeExpr {
	v := &exprVisitor{}
	e.Accept(v)
	out := ir.ShapeExpr{Names: v.names, HasParam: v.hasParam, HasAgg: myHasAggregate(e)}
	if v.window {
		sh.Fail("window function")
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
		out.Kind, out.Ref = ir.ExprColumn, columnFields(x.Name)
	case *ast.AggregateFuncExpr:
		fn := strings.ToLower(x.F)
		switch {
		case !ir.MergeableAggNames[fn]:
			sh.Fail("aggregate " + strings.ToUpper(fn))
		case x.Order != nil:
			sh.Fail(strings.ToUpper(fn) + " with ORDER BY")
		case myHasAggregate(x.Args...):
			sh.Fail("nested aggregates")
		default:
			out.Kind = ir.ExprAgg
			out.Agg = ir.ShapeAgg{Fn: fn, Distinct: x.Distinct, Nargs: len(x.Args)}
		}
	}
	return out
}

var myCmpOps = map[opcode.Op]merge.CmpOp{opcode.EQ: merge.Eq, opcode.NE: merge.Ne, opcode.LT: merge.Lt, opcode.LE: merge.Le, opcode.GT: merge.Gt, opcode.GE: merge.Ge}

// myCond reads a HAVING condition; agg counts the aggregate calls in text
// order.
func myCond(e ast.ExprNode, sh *ir.SelectShape, agg *int) *ir.ShapeCond {
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
			return &ir.ShapeCond{Op: op, Kids: []*ir.ShapeCond{l, myCond(x.R, sh, agg)}}
		}
		if cmp, ok := myCmpOps[x.Op]; ok {
			l := myOperand(x.L, sh, agg)
			return &ir.ShapeCond{Op: merge.Compare, Cmp: cmp, L: l, R: myOperand(x.R, sh, agg)}
		}
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Not || x.Op == opcode.Not2 {
			return &ir.ShapeCond{Op: merge.Not, Kids: []*ir.ShapeCond{myCond(x.V, sh, agg)}}
		}
	case *ast.IsNullExpr:
		op := merge.IsNull
		if x.Not {
			op = merge.IsNotNull
		}
		return &ir.ShapeCond{Op: op, L: myOperand(x.Expr, sh, agg)}
	case *ast.BetweenExpr:
		l := myOperand(x.Expr, sh, agg)
		lo := myOperand(x.Left, sh, agg)
		out := &ir.ShapeCond{Op: merge.And, Kids: []*ir.ShapeCond{
			{Op: merge.Compare, Cmp: merge.Ge, L: l, R: lo}, {Op: merge.Compare, Cmp: merge.Le, L: l, R: myOperand(x.Right, sh, agg)}}}
		if x.Not {
			out = &ir.ShapeCond{Op: merge.Not, Kids: []*ir.ShapeCond{out}}
		}
		return out
	case *ast.PatternInExpr:
		if x.Sel != nil || len(x.List) == 0 {
			break
		}
		l := myOperand(x.Expr, sh, agg)
		out := &ir.ShapeCond{Op: merge.Or}
		cmp := merge.Eq
		if x.Not {
			out.Op, cmp = merge.And, merge.Ne
		}
		for _, it := range x.List {
			out.Kids = append(out.Kids, &ir.ShapeCond{Op: merge.Compare, Cmp: cmp, L: l, R: myOperand(it, sh, agg)})
		}
		if len(out.Kids) == 1 {
			return out.Kids[0]
		}
		return out
	}
	sh.Fail("HAVING with a condition other than comparisons, IN, BETWEEN and IS NULL")
	return &ir.ShapeCond{Op: merge.And}
}

// myOperand reads a side of a HAVING comparison.
func myOperand(e ast.ExprNode, sh *ir.SelectShape, agg *int) ir.ShapeOperand {
	switch e.(type) {
	case *test_driver.ValueExpr, *test_driver.ParamMarkerExpr, *ast.UnaryOperationExpr:
		v := myValue(e)
		if v.Expr {
			sh.Fail("HAVING with a constant other than an integer, a string, NULL or a placeholder")
		}
		return ir.ShapeOperand{IsConst: true, Val: v}
	}
	x := myExpr(e, sh)
	x.Print = myPrint(e)
	o := ir.ShapeOperand{Expr: x, AggIndex: -1}
	switch {
	case x.Kind == ir.ExprAgg:
		o.AggIndex = *agg
		*agg++
	case x.Calc != nil:
		o.AggIndex = *agg
		*agg += len(ir.CalcAggs(x.Calc, nil))
	case x.Kind != ir.ExprColumn && x.HasAgg:
		sh.Fail("HAVING with an expression other than an aggregate, a GROUP BY column or a constant")
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
func myStoks(q string, toks []ir.MyTok) []ir.Stok {
	out := make([]ir.Stok, len(toks))
	for i, t := range toks {
		st := ir.Stok{Start: t.Start, End: t.End, Kind: t.Kind}
		switch t.Kind {
		case 'w':
			st.Word = strings.ToLower(q[t.Start:t.End])
		case '`':
			st.Kind = '"'
		}
		out[i] = st
	}
	return out
}

// selectMerge builds the merge of a SELECT over several targets and adds
// its edits, once the other edits (tables, placeholders, LIMIT) are made.
func (t *myTemplate) selectMerge() {
	sp := t.c.p.Sel
	if sp == nil || t.c.shape == nil || sp.Multi != "" {
		return
	}
	toks := myStoks(t.q, t.toks)
	lay, ok := ir.LayoutOf(toks, t.c.shape)
	if !ok {
		sp.Multi = "a SELECT whose text cannot be read for merging"
		return
	}
	mp, edits, why := ir.BuildMerge(t.c.h.Dialect, t.c.h.BinaryText, t.c.shape, lay, t.q, toks)
	if why != "" {
		sp.Multi = why
		return
	}
	sp.Merge = mp
	t.edits = ir.ApplySelectEdits(t.q, t.edits, edits)
}

// myCalc reads an expression over aggregates the engine computes (+, -,
// *, /, negation, COALESCE/IFNULL, numeric constants), or nil.
func myCalc(e ast.ExprNode, sh *ir.SelectShape) *ir.CalcNode {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return myCalc(x.Expr, sh)
	case *ast.AggregateFuncExpr:
		if a := myClass(x, sh); a.Kind == ir.ExprAgg {
			return &ir.CalcNode{Op: merge.ExprCol, Agg: a}
		}
	case *test_driver.ValueExpr:
		switch v := x.GetValue().(type) {
		case int64:
			return &ir.CalcNode{Op: merge.ExprConst, Con: v}
		case *test_driver.MyDecimal:
			if ir.PlainDecimal(v.String()) {
				return &ir.CalcNode{Op: merge.ExprConst, Con: v.String()}
			}
		}
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Minus {
			return ir.CalcOf(merge.ExprNeg, func(int) *ir.CalcNode { return myCalc(x.V, sh) }, 1)
		}
	case *ast.BinaryOperationExpr:
		op := map[opcode.Op]merge.ExprOp{opcode.Plus: merge.ExprAdd, opcode.Minus: merge.ExprSub, opcode.Mul: merge.ExprMul, opcode.Div: merge.ExprDiv}[x.Op]
		if op != 0 {
			sides := []ast.ExprNode{x.L, x.R}
			return ir.CalcOf(op, func(i int) *ir.CalcNode { return myCalc(sides[i], sh) }, 2)
		}
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "coalesce", "ifnull":
			return ir.CalcOf(merge.ExprCoalesce, func(i int) *ir.CalcNode { return myCalc(x.Args[i], sh) }, len(x.Args))
		}
	}
	return nil
}
