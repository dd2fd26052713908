package merge

import (
	"database/sql/driver"
	"errors"
)

// tri is a truth value of SQL's three-valued logic.
type tri uint8

const (
	tFalse tri = iota
	tTrue
	tUnknown
)

// having tells whether group g passes Plan.Having (true, not unknown).
func (r *Rows) having(g *group) (bool, error) {
	if r.p.Having == nil {
		return true, nil
	}
	t, err := r.eval(r.p.Having, g)
	return t == tTrue, err
}

func (r *Rows) eval(c *Cond, g *group) (tri, error) {
	switch c.Op {
	case And, Or:
		return r.evalJunction(c, g)
	case Not:
		t, err := r.eval(c.Kids[0], g)
		if t != tUnknown {
			t = 1 - t
		}
		return t, err
	case IsNull, IsNotNull:
		v, _ := r.operand(c.L, g)
		if (v == nil) == (c.Op == IsNull) {
			return tTrue, nil
		}
		return tFalse, nil
	}
	return r.evalCompare(c, g)
}

// evalJunction: AND is false if any is false, else unknown if any is;
// OR is true if any is true, else unknown if any is.
func (r *Rows) evalJunction(c *Cond, g *group) (tri, error) {
	decisive, other := tFalse, tTrue
	if c.Op == Or {
		decisive, other = tTrue, tFalse
	}
	out := other
	for _, k := range c.Kids {
		t, err := r.eval(k, g)
		if err != nil {
			return tUnknown, err
		}
		if t == decisive {
			return decisive, nil
		}
		if t == tUnknown {
			out = tUnknown
		}
	}
	return out, nil
}

// operand is an operand's value and the column class that reads it (a
// constant is read as the other side's column would be).
func (r *Rows) operand(o Operand, g *group) (driver.Value, int) {
	if o.IsConst {
		return o.Const, -1
	}
	return g.row[o.Col], o.Col
}

func (r *Rows) evalCompare(c *Cond, g *group) (tri, error) {
	a, ca := r.operand(c.L, g)
	b, cb := r.operand(c.R, g)
	if a == nil || b == nil {
		return tUnknown, nil
	}
	clsA, clsB := r.operandClass(ca, cb, g.shard), r.operandClass(cb, ca, g.shard)
	t := c.Text
	if (c.Cmp == Eq || c.Cmp == Ne) && t == TextEqualOnly {
		t = TextBinary // equality is bytewise; the order is not used
	}
	n, err := compareValues(a, b, clsA, clsB, t)
	if err != nil {
		col := ca
		if col < 0 {
			col = cb
		}
		if col >= 0 {
			err = r.colErr(col, err)
		}
		return tUnknown, err
	}
	if cmpHolds(c.Cmp, n) {
		return tTrue, nil
	}
	return tFalse, nil
}

func (r *Rows) operandClass(col, other, shard int) class {
	switch {
	case col >= 0:
		return r.cls[shard][col]
	case other >= 0:
		return r.cls[shard][other]
	case r.p.Dialect == SQLite:
		return clsSQLite
	}
	return clsValue
}

func cmpHolds(op CmpOp, n int) bool {
	switch op {
	case Eq:
		return n == 0
	case Ne:
		return n != 0
	case Lt:
		return n < 0
	case Le:
		return n <= 0
	case Gt:
		return n > 0
	}
	return n >= 0
}

var errCond = errors.New("malformed HAVING condition")
