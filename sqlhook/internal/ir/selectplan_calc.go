package ir

import (
	"database/sql/driver"

	"github.com/shardkey/shardkey/internal/merge"
)

// An aggregate inside an expression (COUNT(*) * 2, SUM(x) / COUNT(*),
// COALESCE(MAX(x), -1)) is computed by the engine after merging: each
// aggregate becomes a hidden column merged as its function says, and the
// expression (merge.Computed) is evaluated on the merged values with the
// dialect's typing, range and division. Other functions and operators are
// refused.

// CalcNode is an expression over aggregates.
type CalcNode struct {
	Op   merge.ExprOp
	kids []*CalcNode
	Agg  ShapeExpr    // ExprCol: the aggregate
	Con  driver.Value // ExprConst: int64 or decimal text
	col  ColRef       // ExprCol: bound by the builder
}

// calcItem is a column computed after merging: a select item, or a hidden
// copy of an ORDER BY term.
type calcItem struct {
	Col  ColRef
	Tree *CalcNode
}

// CalcAggs lists the aggregate leaves of n in text order.
func CalcAggs(n *CalcNode, out []*CalcNode) []*CalcNode {
	if n.Op == merge.ExprCol {
		return append(out, n)
	}
	for _, k := range n.kids {
		out = CalcAggs(k, out)
	}
	return out
}

// CalcOf is a node of n kids read by kid, or nil when one cannot be read.
func CalcOf(op merge.ExprOp, kid func(int) *CalcNode, n int) *CalcNode {
	out := &CalcNode{Op: op}
	for i := range n {
		k := kid(i)
		if k == nil {
			return nil
		}
		out.kids = append(out.kids, k)
	}
	if len(out.kids) == 0 {
		return nil
	}
	return out
}

// BinaryOps are the arithmetic the engine computes.
var BinaryOps = map[string]merge.ExprOp{"+": merge.ExprAdd, "-": merge.ExprSub, "*": merge.ExprMul, "/": merge.ExprDiv}

// calcCols binds an expression's aggregates, written at s, to hidden
// columns; ok is false when it cannot be computed.
func (b *selBuilder) calcCols(n *CalcNode, s Span) bool {
	leaves := CalcAggs(n, nil)
	a, z := tokensIn(b.toks, s)
	if a < 0 {
		return false
	}
	calls := aggCalls(b.toks, a, z)
	if len(calls) != len(leaves) {
		return false
	}
	for k, l := range leaves {
		l.col = b.hiddenAgg(l.Agg, calls[k])
	}
	return b.why == ""
}

// expr is the engine's form of n, with columns resolved.
func (n *CalcNode) Expr(col func(ColRef) int) *merge.Expr {
	e := &merge.Expr{Op: n.Op, Const: n.Con}
	if n.Op == merge.ExprCol {
		e.Col = col(n.col)
	}
	for _, k := range n.kids {
		e.Args = append(e.Args, k.Expr(col))
	}
	return e
}

// PlainDecimal reports whether s is a numeric literal in plain decimal
// notation ("12.50"), the form the engine takes as a constant.
func PlainDecimal(s string) bool {
	digits, dot := 0, false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		case c == '-' && i == 0:
		default:
			return false
		}
	}
	return digits > 0
}
