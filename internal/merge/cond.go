package merge

import (
	"database/sql/driver"
	"errors"
	"math"
	"strconv"
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
	if r.p.Dialect == SQLite {
		var err error
		if a, b, err = r.sqliteAffinity(ca, cb, a, b); err != nil {
			return tUnknown, err
		}
	}
	if r.p.Dialect == PostgreSQL {
		a, b = r.pgRealParam(ca, cb, a), r.pgRealParam(cb, ca, b)
	}
	clsA, clsB := r.operandClass(ca, cb, g.shard), r.operandClass(cb, ca, g.shard)
	t := c.Text
	if (c.Cmp == Eq || c.Cmp == Ne) && t == TextEqualOnly {
		t = TextBinary // equality is bytewise; the order is not used
	}
	n, mixed := r.compareMixed(a, b, clsA, clsB, ca < 0, cb < 0)
	var err error
	if !mixed {
		n, err = compareValues(a, b, clsA, clsB, t)
	}
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

// compareMixed compares a float with an exact number as the databases
// do: MySQL, and PostgreSQL between columns or against a float column,
// in double precision; PostgreSQL types a float argument compared with a
// numeric as numeric, so the float's shortest decimal text is compared
// exactly. SQLite compares exactly (ok false: the caller's exact
// comparison).
func (r *Rows) compareMixed(a, b driver.Value, ca, cb class, aConst, bConst bool) (int, bool) {
	if r.p.Dialect == SQLite {
		return 0, false
	}
	x, okA, errA := numOf(a, ca)
	y, okB, errB := numOf(b, cb)
	if !okA || !okB || errA != nil || errB != nil || (x.kind == 'f') == (y.kind == 'f') {
		return 0, false
	}
	if r.p.Dialect == PostgreSQL && ((x.kind == 'f' && aConst && !bConst) || (y.kind == 'f' && bConst && !aConst)) {
		if x.kind == 'f' {
			x = floatAsNumeric(x.f)
		} else {
			y = floatAsNumeric(y.f)
		}
		return cmpNum(x, y), true
	}
	fx, _ := x.ext().float()
	fy, _ := y.ext().float()
	return cmpFloat(fx, fy), true
}

// floatAsNumeric is a float argument as pgx sends it for a numeric
// parameter: its shortest decimal text.
func floatAsNumeric(f float64) num {
	switch {
	case math.IsNaN(f):
		return num{kind: 'd', s: "NaN"}
	case math.IsInf(f, 1):
		return num{kind: 'd', s: "Infinity"}
	case math.IsInf(f, -1):
		return num{kind: 'd', s: "-Infinity"}
	}
	return num{kind: 'd', s: strconv.FormatFloat(f, 'f', -1, 64)}
}

// pgRealParam: PostgreSQL types a parameter compared with a real as a
// real, so a float argument is rounded to float32 first (MAX(a) > $1 with
// a real 0.1 and the argument 0.1 is false).
func (r *Rows) pgRealParam(col, other int, v driver.Value) driver.Value {
	if f, ok := v.(float64); ok && col < 0 && other >= 0 && r.types[other] == "FLOAT4" {
		return float64(float32(f))
	}
	return v
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
