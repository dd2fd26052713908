package sqlhook

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shardkey/shardkey/internal/merge"
)

// pgShape reads a SELECT's shape from PostgreSQL's parse tree (also
// SQLite's statements, respelled for it).
func (c *pgCompiler) pgShape(s *pg.SelectStmt) *selectShape {
	sh := &selectShape{}
	switch {
	case len(s.DistinctClause) == 1 && s.DistinctClause[0].GetNode() == nil:
		sh.distinct = true
	case len(s.DistinctClause) > 0:
		sh.fail("SELECT DISTINCT ON")
	}
	if len(s.WindowClause) > 0 {
		sh.fail("WINDOW")
	}
	if s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		sh.fail("FETCH ... WITH TIES")
	}
	if s.GroupDistinct {
		sh.fail("GROUP BY DISTINCT")
	}
	for _, n := range s.TargetList {
		rt := n.GetResTarget()
		if rt == nil {
			sh.fail("a select list written in an unexpected form")
			continue
		}
		it := shapeItem{expr: c.pgExpr(rt.Val, sh), alias: c.fold(rt.Name)}
		it.outName = it.alias
		if it.alias == "" && (c.h.dialect != SQLite || rt.Val.GetColumnRef() != nil) {
			// SQLite names an expression by its text, and an ORDER BY
			// name is an AS alias or a table column: CAST(id AS TEXT) is
			// not the id of ORDER BY id, as it is to PostgreSQL.
			it.outName = c.pgColname(rt.Val)
		}
		sh.items = append(sh.items, it)
	}
	for _, n := range s.GroupClause {
		if n.GetGroupingSet() != nil {
			sh.fail("GROUP BY ROLLUP, CUBE or GROUPING SETS")
			continue
		}
		g := c.pgKey(n, sh)
		g.print = pgPrint(n)
		sh.groupBy = append(sh.groupBy, g)
	}
	if s.HavingClause != nil {
		agg := 0
		sh.having = c.pgCond(s.HavingClause, sh, &agg)
		sh.havingAggs = agg
	}
	for _, n := range s.SortClause {
		sh.orderBy = append(sh.orderBy, c.pgOrder(n, sh))
	}
	return sh
}

// pgOrder reads an ORDER BY term: USING < is ascending, USING > descending
// (with NULLs first, as DESC), any other operator is refused.
func (c *pgCompiler) pgOrder(n *pg.Node, sh *selectShape) shapeOrder {
	sb := n.GetSortBy()
	if sb == nil {
		sh.fail("ORDER BY written in an unexpected form")
		return shapeOrder{}
	}
	o := shapeOrder{expr: c.pgKey(sb.Node, sh), desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC}
	if sb.SortbyDir == pg.SortByDir_SORTBY_USING {
		switch opName(sb.UseOp) {
		case "<":
		case ">":
			o.desc = true
		default:
			sh.fail("ORDER BY ... USING " + opName(sb.UseOp))
		}
	}
	switch sb.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		o.nullsSet, o.nullsFirst = true, true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		o.nullsSet = true
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
func (c *pgCompiler) pgKey(n *pg.Node, sh *selectShape) shapeExpr {
	if a := n.GetAConst(); a != nil {
		if iv, ok := a.Val.(*pg.A_Const_Ival); ok {
			return shapeExpr{kind: exprOrdinal, ordinal: int(iv.Ival.Ival)}
		}
		sh.fail("ORDER BY or GROUP BY a constant")
		return shapeExpr{}
	}
	if cc := n.GetCollateClause(); cc != nil {
		e := c.pgExpr(cc.Arg, sh)
		if len(cc.Collname) > 0 {
			e.collate = cc.Collname[len(cc.Collname)-1].GetString_().GetSval()
		}
		return e
	}
	return c.pgExpr(n, sh)
}

// pgExpr classifies an expression, with the arithmetic over aggregates
// the engine computes.
func (c *pgCompiler) pgExpr(n *pg.Node, sh *selectShape) shapeExpr {
	e := c.pgClass(n, sh)
	if e.kind == exprOther && e.hasAgg {
		e.calc = c.pgCalc(n, sh)
	}
	return e
}

// pgClass classifies an expression.
func (c *pgCompiler) pgClass(n *pg.Node, sh *selectShape) shapeExpr {
	var e shapeExpr
	if n == nil {
		return e
	}
	walkMessages(n.ProtoReflect(), func(m protoreflect.Message) {
		switch x := m.Interface().(type) {
		case *pg.ColumnRef:
			if f := x.Fields; len(f) > 0 && f[len(f)-1].GetString_() != nil {
				e.names = append(e.names, c.fold(f[len(f)-1].GetString_().GetSval()))
			}
		case *pg.ParamRef:
			e.hasParam = true
		case *pg.FuncCall:
			if x.Over != nil {
				sh.fail("window function " + funcName(x))
			}
		}
	})
	e.hasAgg = pgHasAggregate([]*pg.Node{n})
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		for _, f := range x.ColumnRef.Fields {
			if f.GetAStar() != nil {
				e.kind = exprStar
				return e
			}
			e.ref = append(e.ref, c.fold(f.GetString_().GetSval()))
		}
		e.kind = exprColumn
	case *pg.Node_FuncCall:
		fc := x.FuncCall
		fn := funcName(fc)
		qualified := len(fc.Funcname) > 2 || len(fc.Funcname) == 2 && fc.Funcname[0].GetString_().GetSval() != "pg_catalog"
		switch {
		case !e.hasAgg || fc.Over != nil:
		case !mergeableAggNames[fn] && !isAggregateName(fn) && pgHasAggregate(fc.Args):
			// A function of aggregates (ROUND(AVG(x), 2)): an expression.
		case !mergeableAggNames[fn] || qualified:
			sh.fail("aggregate " + strings.ToUpper(fn))
		case fc.AggFilter != nil || len(fc.AggOrder) > 0 || fc.AggWithinGroup:
			sh.fail(strings.ToUpper(fn) + " with FILTER, ORDER BY or WITHIN GROUP")
		case pgHasAggregate(fc.Args):
			sh.fail("nested aggregates")
		default:
			e.kind = exprAgg
			e.agg = shapeAgg{fn: fn, distinct: fc.AggDistinct, star: fc.AggStar, nargs: len(fc.Args)}
		}
	}
	return e
}

// fold is a name as the dialect matches it: PostgreSQL's parser has
// already folded the unquoted ones, and a quoted "Amount" is not amount;
// SQLite matches names in any case, quoted or not.
func (c *pgCompiler) fold(name string) string {
	if c.h.dialect == SQLite {
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
func (c *pgCompiler) pgCond(n *pg.Node, sh *selectShape, agg *int) *shapeCond {
	switch x := n.Node.(type) {
	case *pg.Node_BoolExpr:
		op := map[pg.BoolExprType]merge.CondOp{pg.BoolExprType_AND_EXPR: merge.And, pg.BoolExprType_OR_EXPR: merge.Or, pg.BoolExprType_NOT_EXPR: merge.Not}[x.BoolExpr.Boolop]
		out := &shapeCond{op: op}
		for _, k := range x.BoolExpr.Args {
			out.kids = append(out.kids, c.pgCond(k, sh, agg))
		}
		return out
	case *pg.Node_NullTest:
		op := merge.IsNull
		if x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			op = merge.IsNotNull
		}
		return &shapeCond{op: op, l: c.pgOperand(x.NullTest.Arg, sh, agg)}
	case *pg.Node_AExpr:
		return c.pgCompare(x.AExpr, sh, agg)
	}
	sh.fail("HAVING with a condition other than comparisons, IN, BETWEEN and IS NULL")
	return &shapeCond{op: merge.And}
}

func (c *pgCompiler) pgCompare(a *pg.A_Expr, sh *selectShape, agg *int) *shapeCond {
	l := c.pgOperand(a.Lexpr, sh, agg)
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if cmp, ok := pgCmpOps[opName(a.Name)]; ok && len(a.Name) == 1 {
			return &shapeCond{op: merge.Compare, cmp: cmp, l: l, r: c.pgOperand(a.Rexpr, sh, agg)}
		}
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		if list := a.Rexpr.GetList(); list != nil && len(list.Items) == 2 {
			lo, hi := c.pgOperand(list.Items[0], sh, agg), c.pgOperand(list.Items[1], sh, agg)
			out := &shapeCond{op: merge.And, kids: []*shapeCond{
				{op: merge.Compare, cmp: merge.Ge, l: l, r: lo}, {op: merge.Compare, cmp: merge.Le, l: l, r: hi}}}
			if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
				out = &shapeCond{op: merge.Not, kids: []*shapeCond{out}}
			}
			return out
		}
	case pg.A_Expr_Kind_AEXPR_IN:
		if list := a.Rexpr.GetList(); list != nil && len(list.Items) > 0 {
			out := &shapeCond{op: merge.Or}
			cmp := merge.Eq
			if opName(a.Name) == "<>" {
				out.op, cmp = merge.And, merge.Ne
			}
			for _, it := range list.Items {
				out.kids = append(out.kids, &shapeCond{op: merge.Compare, cmp: cmp, l: l, r: c.pgOperand(it, sh, agg)})
			}
			if len(out.kids) == 1 {
				return out.kids[0]
			}
			return out
		}
	}
	sh.fail("HAVING with an operator other than =, <>, <, <=, >, >=, IN and BETWEEN")
	return &shapeCond{op: merge.And}
}

// pgOperand reads a side of a HAVING comparison.
func (c *pgCompiler) pgOperand(n *pg.Node, sh *selectShape, agg *int) shapeOperand {
	switch n.Node.(type) {
	case *pg.Node_AConst, *pg.Node_ParamRef, *pg.Node_TypeCast:
		v := c.value(n)
		if v.expr {
			sh.fail("HAVING with a constant other than an integer, a string, NULL or a placeholder")
		}
		return shapeOperand{isConst: true, val: v}
	}
	e := c.pgExpr(n, sh)
	e.print = pgPrint(n)
	o := shapeOperand{expr: e, aggIndex: -1}
	switch {
	case e.kind == exprAgg:
		o.aggIndex = *agg
		*agg++
	case e.calc != nil:
		o.aggIndex = *agg
		*agg += len(calcAggs(e.calc, nil))
	case e.kind != exprColumn && e.hasAgg:
		sh.fail("HAVING with an expression other than an aggregate, a GROUP BY column or a constant")
	}
	return o
}

// pgToks converts the scanner's tokens for the select layout.
func (c *pgCompiler) pgToks() []stok {
	out := make([]stok, 0, len(c.toks))
	for i, t := range c.toks {
		text := c.tokText(i)
		st := stok{start: int(t.Start), end: int(t.End)}
		switch {
		case t.Token == pg.Token_SQL_COMMENT || t.Token == pg.Token_C_COMMENT:
			continue
		case t.Token == pg.Token_PARAM:
			st.kind = '?'
		case t.Token == pg.Token_ICONST || t.Token == pg.Token_FCONST:
			st.kind, st.word = 'w', text
		case t.Token == pg.Token_SCONST || t.Token == pg.Token_BCONST || t.Token == pg.Token_XCONST || t.Token == pg.Token_USCONST:
			st.kind = '\''
		case strings.HasPrefix(text, `"`) || strings.HasPrefix(strings.ToUpper(text), `U&"`):
			st.kind = '"'
		case t.Token == pg.Token_IDENT || t.KeywordKind != pg.KeywordKind_NO_KEYWORD:
			st.kind, st.word = 'w', strings.ToLower(text)
		case len(text) == 1:
			st.kind = text[0]
		default:
			st.kind = 'o'
		}
		out = append(out, st)
	}
	return out
}

// finishSelect builds the merge of a SELECT over several targets and adds
// its edits; it runs when every other edit (tables, placeholders) is
// known.
func (c *pgCompiler) finishSelect() {
	sp := c.p.sel
	if sp == nil || c.shape == nil || sp.multi != "" {
		return
	}
	toks := c.pgToks()
	lay, ok := layoutOf(toks, c.shape)
	if !ok {
		sp.multi = "a SELECT whose text cannot be read for merging"
		return
	}
	mp, edits, why := buildMerge(c.h.dialect, c.h.opts.binaryText, c.shape, lay, c.text, toks)
	if why != "" {
		sp.multi = why
		return
	}
	sp.merge = mp
	c.edits = applySelectEdits(c.text, c.edits, edits)
}

// pgCalc reads an expression over aggregates the engine computes (+, -,
// *, /, negation, COALESCE, numeric constants), or nil.
func (c *pgCompiler) pgCalc(n *pg.Node, sh *selectShape) *calcNode {
	if n == nil {
		return nil
	}
	switch x := n.Node.(type) {
	case *pg.Node_FuncCall:
		if e := c.pgClass(n, sh); e.kind == exprAgg {
			return &calcNode{op: merge.ExprCol, agg: e}
		}
	case *pg.Node_AConst:
		switch v := x.AConst.Val.(type) {
		case *pg.A_Const_Ival:
			return &calcNode{op: merge.ExprConst, con: int64(v.Ival.Ival)}
		case *pg.A_Const_Fval:
			if plainDecimal(v.Fval.Fval) {
				return &calcNode{op: merge.ExprConst, con: v.Fval.Fval}
			}
		}
	case *pg.Node_CoalesceExpr:
		return calcOf(merge.ExprCoalesce, func(i int) *calcNode { return c.pgCalc(x.CoalesceExpr.Args[i], sh) }, len(x.CoalesceExpr.Args))
	case *pg.Node_AExpr:
		a := x.AExpr
		op, ok := binaryOps[opName(a.Name)]
		if a.Kind != pg.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 || !ok {
			return nil
		}
		if a.Lexpr == nil {
			if op != merge.ExprSub {
				return nil
			}
			return calcOf(merge.ExprNeg, func(int) *calcNode { return c.pgCalc(a.Rexpr, sh) }, 1)
		}
		sides := []*pg.Node{a.Lexpr, a.Rexpr}
		return calcOf(op, func(i int) *calcNode { return c.pgCalc(sides[i], sh) }, 2)
	}
	return nil
}
