package pgsql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shardkey/shardkey/internal/merge"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// pgShape reads a SELECT's shape from PostgreSQL's parse tree (also
// SQLite's statements, respelled for it).
func (c *pgCompiler) pgShape(s *pg.SelectStmt) *ir.SelectShape {
	sh := &ir.SelectShape{}
	switch {
	case len(s.DistinctClause) == 1 && s.DistinctClause[0].GetNode() == nil:
		sh.Distinct = true
	case len(s.DistinctClause) > 0:
		sh.Fail("SELECT DISTINCT ON")
	}
	if len(s.WindowClause) > 0 {
		sh.Fail("WINDOW")
	}
	if s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		sh.Fail("FETCH ... WITH TIES")
	}
	if s.GroupDistinct {
		sh.Fail("GROUP BY DISTINCT")
	}
	for _, n := range s.TargetList {
		rt := n.GetResTarget()
		if rt == nil {
			sh.Fail("a select list written in an unexpected form")
			continue
		}
		it := ir.ShapeItem{Expr: c.pgExpr(rt.Val, sh), Alias: c.fold(rt.Name)}
		it.OutName = it.Alias
		if it.Alias == "" && (c.h.Dialect != ir.SQLite || rt.Val.GetColumnRef() != nil) {
			// SQLite names an expression by its text, and an ORDER BY
			// name is an AS alias or a table column: CAST(id AS TEXT) is
			// not the id of ORDER BY id, as it is to PostgreSQL.
			it.OutName = c.pgColname(rt.Val)
		}
		sh.Items = append(sh.Items, it)
	}
	for _, n := range s.GroupClause {
		if n.GetGroupingSet() != nil {
			sh.Fail("GROUP BY ROLLUP, CUBE or GROUPING SETS")
			continue
		}
		g := c.pgKey(n, sh)
		g.Print = pgPrint(n)
		sh.GroupBy = append(sh.GroupBy, g)
	}
	if s.HavingClause != nil {
		agg := 0
		sh.Having = c.pgCond(s.HavingClause, sh, &agg)
		sh.HavingAggs = agg
	}
	for _, n := range s.SortClause {
		sh.OrderBy = append(sh.OrderBy, c.pgOrder(n, sh))
	}
	return sh
}

// pgOrder reads an ORDER BY term: USING < is ascending, USING > descending
// (with NULLs first, as DESC), any other operator is refused.
func (c *pgCompiler) pgOrder(n *pg.Node, sh *ir.SelectShape) ir.ShapeOrder {
	sb := n.GetSortBy()
	if sb == nil {
		sh.Fail("ORDER BY written in an unexpected form")
		return ir.ShapeOrder{}
	}
	o := ir.ShapeOrder{Expr: c.pgKey(sb.Node, sh), Desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC}
	if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
		switch opName(sb.UseOp) {
		case "<":
		case ">":
			o.Desc = true
		default:
			sh.Fail("ORDER BY ... USING " + opName(sb.UseOp))
		}
	}
	switch sb.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		o.NullsSet, o.NullsFirst = true, true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		o.NullsSet = true
	}
	return o
}

// pgPrint is a node's shape without its text positions: two spellings of
// one expression print alike.
func pgPrint(n *pg.Node) string {
	c := proto.Clone(n)
	walkMessages(c.ProtoReflect(), func(m protoreflect.Message) {
		if fd := m.Descriptor().Fields().ByName("location"); fd != nil && fd.Kind() == protoreflect.Int32Kind {
			m.Set(fd, protoreflect.ValueOfInt32(0))
		}
	})
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		return ""
	}
	return string(b)
}

// pgKey reads a GROUP BY or ORDER BY term: a position, or an expression
// with its COLLATE, if any.
func (c *pgCompiler) pgKey(n *pg.Node, sh *ir.SelectShape) ir.ShapeExpr {
	if a := n.GetAConst(); a != nil {
		if iv, ok := a.Val.(*pg.A_Const_Ival); ok {
			return ir.ShapeExpr{Kind: ir.ExprOrdinal, Ordinal: int(iv.Ival.Ival)}
		}
		sh.Fail("ORDER BY or GROUP BY a constant")
		return ir.ShapeExpr{}
	}
	if cc := n.GetCollateClause(); cc != nil {
		e := c.pgExpr(cc.Arg, sh)
		if len(cc.Collname) > 0 {
			e.Collate = cc.Collname[len(cc.Collname)-1].GetString_().GetSval()
		}
		return e
	}
	return c.pgExpr(n, sh)
}

// pgExpr classifies an expression, with the arithmetic over aggregates
// the engine computes.
func (c *pgCompiler) pgExpr(n *pg.Node, sh *ir.SelectShape) ir.ShapeExpr {
	e := c.pgClass(n, sh)
	if e.Kind == ir.ExprOther && e.HasAgg {
		e.Calc = c.pgCalc(n, sh)
	}
	return e
}

// pgClass classifies an expression.
func (c *pgCompiler) pgClass(n *pg.Node, sh *ir.SelectShape) ir.ShapeExpr {
	var e ir.ShapeExpr
	if n == nil {
		return e
	}
	walkMessages(n.ProtoReflect(), func(m protoreflect.Message) {
		switch x := m.Interface().(type) {
		case *pg.ColumnRef:
			if f := x.Fields; len(f) > 0 && f[len(f)-1].GetString_() != nil {
				e.Names = append(e.Names, c.fold(f[len(f)-1].GetString_().GetSval()))
			}
		case *pg.ParamRef:
			e.HasParam = true
		case *pg.FuncCall:
			if x.Over != nil {
				sh.Fail("window function " + funcName(x))
			}
		}
	})
	e.HasAgg = pgHasAggregate([]*pg.Node{n})
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		for _, f := range x.ColumnRef.Fields {
			if f.GetAStar() != nil {
				e.Kind = ir.ExprStar
				return e
			}
			e.Ref = append(e.Ref, c.fold(f.GetString_().GetSval()))
		}
		e.Kind = ir.ExprColumn
	case *pg.Node_FuncCall:
		fc := x.FuncCall
		fn := funcName(fc)
		qualified := len(fc.Funcname) > 2 || len(fc.Funcname) == 2 && fc.Funcname[0].GetString_().GetSval() != "pg_catalog"
		switch {
		case !e.HasAgg || fc.Over != nil:
		case !ir.MergeableAggNames[fn] && !isAggregateName(fn) && pgHasAggregate(fc.Args):
			// A function of aggregates (ROUND(AVG(x), 2)): an expression.
		case !ir.MergeableAggNames[fn] || qualified:
			sh.Fail("aggregate " + strings.ToUpper(fn))
		case fc.AggFilter != nil || len(fc.AggOrder) > 0 || fc.AggWithinGroup:
			sh.Fail(strings.ToUpper(fn) + " with FILTER, ORDER BY or WITHIN GROUP")
		case pgHasAggregate(fc.Args):
			sh.Fail("nested aggregates")
		default:
			e.Kind = ir.ExprAgg
			e.Agg = ir.ShapeAgg{Fn: fn, Distinct: fc.AggDistinct, Star: fc.AggStar, Nargs: len(fc.Args)}
		}
	}
	return e
}

// fold is a name as the dialect matches it: PostgreSQL's parser has
// already folded the unquoted ones, and a quoted "Amount" is not amount;
// SQLite matches names in any case, quoted or not.
func (c *pgCompiler) fold(name string) string {
	if c.h.Dialect == ir.SQLite {
		return strings.ToLower(name)
	}
	return name
}

func funcName(fc *pg.FuncCall) string {
	return strings.ToLower(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval())
}

// pgColname is the name PostgreSQL gives an output column without alias,
// for the expressions whose name an ORDER BY term could spell.
func (c *pgCompiler) pgColname(n *pg.Node) string {
	if n == nil {
		return ""
	}
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		f := x.ColumnRef.Fields
		if s := f[len(f)-1].GetString_(); s != nil {
			return c.fold(s.Sval)
		}
	case *pg.Node_TypeCast:
		if name := c.pgColname(x.TypeCast.Arg); name != "" && name != "?column?" {
			return name
		}
		if tn := x.TypeCast.TypeName; tn != nil && len(tn.Names) > 0 {
			return strings.ToLower(tn.Names[len(tn.Names)-1].GetString_().GetSval())
		}
	case *pg.Node_FuncCall:
		return funcName(x.FuncCall)
	case *pg.Node_CaseExpr:
		return "case"
	case *pg.Node_CoalesceExpr:
		return "coalesce"
	case *pg.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_GREATEST {
			return "greatest"
		}
		return "least"
	case *pg.Node_AExpr:
		if x.AExpr.Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif"
		}
	case *pg.Node_AIndirection:
		ind := x.AIndirection.Indirection
		if len(ind) > 0 {
			if s := ind[len(ind)-1].GetString_(); s != nil {
				return c.fold(s.Sval)
			}
		}
	}
	return "?column?"
}

var pgCmpOps = map[string]merge.CmpOp{"=": merge.Eq, "<>": merge.Ne, "!=": merge.Ne, "<": merge.Lt, "<=": merge.Le, ">": merge.Gt, ">=": merge.Ge}

// pgCond reads a HAVING condition; agg counts the aggregate calls in text
// order.
func (c *pgCompiler) pgCond(n *pg.Node, sh *ir.SelectShape, agg *int) *ir.ShapeCond {
	switch x := n.Node.(type) {
	case *pg.Node_BoolExpr:
		op := map[pg.BoolExprType]merge.CondOp{pg.BoolExprType_AND_EXPR: merge.And, pg.BoolExprType_OR_EXPR: merge.Or, pg.BoolExprType_NOT_EXPR: merge.Not}[x.BoolExpr.Boolop]
		out := &ir.ShapeCond{Op: op}
		for _, k := range x.BoolExpr.Args {
			out.Kids = append(out.Kids, c.pgCond(k, sh, agg))
		}
		return out
	case *pg.Node_NullTest:
		op := merge.IsNull
		if x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			op = merge.IsNotNull
		}
		return &ir.ShapeCond{Op: op, L: c.pgOperand(x.NullTest.Arg, sh, agg)}
	case *pg.Node_AExpr:
		return c.pgCompare(x.AExpr, sh, agg)
	}
	sh.Fail("HAVING with a condition other than comparisons, IN, BETWEEN and IS NULL")
	return &ir.ShapeCond{Op: merge.And}
}

func (c *pgCompiler) pgCompare(a *pg.A_Expr, sh *ir.SelectShape, agg *int) *ir.ShapeCond {
	l := c.pgOperand(a.Lexpr, sh, agg)
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if cmp, ok := pgCmpOps[opName(a.Name)]; ok && len(a.Name) == 1 {
			return &ir.ShapeCond{Op: merge.Compare, Cmp: cmp, L: l, R: c.pgOperand(a.Rexpr, sh, agg)}
		}
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		if list := a.Rexpr.GetList(); list != nil && len(list.Items) == 2 {
			lo, hi := c.pgOperand(list.Items[0], sh, agg), c.pgOperand(list.Items[1], sh, agg)
			out := &ir.ShapeCond{Op: merge.And, Kids: []*ir.ShapeCond{
				{Op: merge.Compare, Cmp: merge.Ge, L: l, R: lo}, {Op: merge.Compare, Cmp: merge.Le, L: l, R: hi}}}
			if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
				out = &ir.ShapeCond{Op: merge.Not, Kids: []*ir.ShapeCond{out}}
			}
			return out
		}
	case pg.A_Expr_Kind_AEXPR_IN:
		if list := a.Rexpr.GetList(); list != nil && len(list.Items) > 0 {
			out := &ir.ShapeCond{Op: merge.Or}
			cmp := merge.Eq
			if opName(a.Name) == "<>" {
				out.Op, cmp = merge.And, merge.Ne
			}
			for _, it := range list.Items {
				out.Kids = append(out.Kids, &ir.ShapeCond{Op: merge.Compare, Cmp: cmp, L: l, R: c.pgOperand(it, sh, agg)})
			}
			if len(out.Kids) == 1 {
				return out.Kids[0]
			}
			return out
		}
	}
	sh.Fail("HAVING with an operator other than =, <>, <, <=, >, >=, IN and BETWEEN")
	return &ir.ShapeCond{Op: merge.And}
}

// pgOperand reads a side of a HAVING comparison.
func (c *pgCompiler) pgOperand(n *pg.Node, sh *ir.SelectShape, agg *int) ir.ShapeOperand {
	switch n.Node.(type) {
	case *pg.Node_AConst, *pg.Node_ParamRef, *pg.Node_TypeCast:
		v := c.value(n)
		if v.Expr {
			sh.Fail("HAVING with a constant other than an integer, a string, NULL or a placeholder")
		}
		return ir.ShapeOperand{IsConst: true, Val: v}
	}
	e := c.pgExpr(n, sh)
	e.Print = pgPrint(n)
	o := ir.ShapeOperand{Expr: e, AggIndex: -1}
	switch {
	case e.Kind == ir.ExprAgg:
		o.AggIndex = *agg
		*agg++
	case e.Calc != nil:
		o.AggIndex = *agg
		*agg += len(ir.CalcAggs(e.Calc, nil))
	case e.Kind != ir.ExprColumn && e.HasAgg:
		sh.Fail("HAVING with an expression other than an aggregate, a GROUP BY column or a constant")
	}
	return o
}

// pgToks converts the scanner's tokens for the select layout.
func (c *pgCompiler) pgToks() []ir.Stok {
	out := make([]ir.Stok, 0, len(c.toks))
	for i, t := range c.toks {
		text := c.tokText(i)
		st := ir.Stok{Start: int(t.Start), End: int(t.End)}
		switch {
		case t.Token == pg.Token_SQL_COMMENT || t.Token == pg.Token_C_COMMENT:
			continue
		case t.Token == pg.Token_PARAM:
			st.Kind = '?'
		case t.Token == pg.Token_ICONST || t.Token == pg.Token_FCONST:
			st.Kind, st.Word = 'w', text
		case t.Token == pg.Token_SCONST || t.Token == pg.Token_BCONST || t.Token == pg.Token_XCONST || t.Token == pg.Token_USCONST:
			st.Kind = '\''
		case strings.HasPrefix(text, `"`) || strings.HasPrefix(strings.ToUpper(text), `U&"`):
			st.Kind = '"'
		case t.Token == pg.Token_IDENT || t.KeywordKind != pg.KeywordKind_NO_KEYWORD:
			st.Kind, st.Word = 'w', strings.ToLower(text)
		case len(text) == 1:
			st.Kind = text[0]
		default:
			st.Kind = 'o'
		}
		out = append(out, st)
	}
	return out
}

// finishSelect builds the merge of a SELECT over several targets and adds
// its edits; it runs when every other edit (tables, placeholders) is
// known.
func (c *pgCompiler) finishSelect() {
	sp := c.p.Sel
	if sp == nil || c.shape == nil || sp.Multi != "" {
		return
	}
	toks := c.pgToks()
	lay, ok := ir.LayoutOf(toks, c.shape)
	if !ok {
		sp.Multi = "a SELECT whose text cannot be read for merging"
		return
	}
	mp, edits, why := ir.BuildMerge(c.h.Dialect, c.h.BinaryText, c.shape, lay, c.text, toks)
	if why != "" {
		sp.Multi = why
		return
	}
	sp.Merge = mp
	c.edits = ir.ApplySelectEdits(c.text, c.edits, edits)
}

// pgCalc reads an expression over aggregates the engine computes (+, -,
// *, /, negation, COALESCE, numeric constants), or nil.
func (c *pgCompiler) pgCalc(n *pg.Node, sh *ir.SelectShape) *ir.CalcNode {
	if n == nil {
		return nil
	}
	switch x := n.Node.(type) {
	case *pg.Node_FuncCall:
		if e := c.pgClass(n, sh); e.Kind == ir.ExprAgg {
			return &ir.CalcNode{Op: merge.ExprCol, Agg: e}
		}
	case *pg.Node_AConst:
		switch v := x.AConst.Val.(type) {
		case *pg.A_Const_Ival:
			return &ir.CalcNode{Op: merge.ExprConst, Con: int64(v.Ival.Ival)}
		case *pg.A_Const_Fval:
			if ir.PlainDecimal(v.Fval.Fval) {
				return &ir.CalcNode{Op: merge.ExprConst, Con: v.Fval.Fval}
			}
		}
	case *pg.Node_CoalesceExpr:
		return ir.CalcOf(merge.ExprCoalesce, func(i int) *ir.CalcNode { return c.pgCalc(x.CoalesceExpr.Args[i], sh) }, len(x.CoalesceExpr.Args))
	case *pg.Node_AExpr:
		a := x.AExpr
		op, ok := ir.BinaryOps[opName(a.Name)]
		if a.Kind != pg.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 || !ok {
			return nil
		}
		if a.Lexpr == nil {
			if op != merge.ExprSub {
				return nil
			}
			return ir.CalcOf(merge.ExprNeg, func(int) *ir.CalcNode { return c.pgCalc(a.Rexpr, sh) }, 1)
		}
		sides := []*pg.Node{a.Lexpr, a.Rexpr}
		return ir.CalcOf(op, func(i int) *ir.CalcNode { return c.pgCalc(sides[i], sh) }, 2)
	}
	return nil
}
