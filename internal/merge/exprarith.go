package merge

import (
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
)

// arith applies a binary operator to two non-NULL values with the
// dialect's typing: a float makes the operation a float one, a decimal a
// decimal one; two integers stay integers except under MySQL's /.
func (r *Rows) arith(op ExprOp, x, y xnum, divScale int) (xnum, error) {
	switch {
	case x.kind == 'f' || y.kind == 'f':
		return r.floatArith(op, x.float(), y.float(), x.f4 && y.f4)
	case op == ExprDiv:
		return r.divide(x, y, divScale)
	case x.kind == 'i' && y.kind == 'i':
		return r.intArith(op, x, y)
	}
	a, b := x.dec(), y.dec()
	switch op {
	case ExprAdd, ExprSub:
		sc := max(a.scale, b.scale)
		u := new(big.Int).Mul(a.unscaled, pow10(sc-a.scale))
		v := new(big.Int).Mul(b.unscaled, pow10(sc-b.scale))
		if op == ExprAdd {
			return xnum{kind: 'd', v: u.Add(u, v), scale: sc}, nil
		}
		return xnum{kind: 'd', v: u.Sub(u, v), scale: sc}, nil
	}
	return xnum{kind: 'd', v: new(big.Int).Mul(a.unscaled, b.unscaled), scale: a.scale + b.scale}, nil
}

func (x xnum) float() float64 {
	switch x.kind {
	case 'f':
		return x.f
	case 'i':
		f, _ := new(big.Float).SetInt(x.v).Float64()
		return f
	}
	f, _ := new(big.Rat).SetFrac(x.v, pow10(x.scale)).Float64()
	return f
}

func (x xnum) dec() decimal {
	if x.kind == 'i' {
		return decimal{unscaled: x.v}
	}
	return decimal{unscaled: x.v, scale: x.scale}
}

// floatArith computes in double precision; f4 (PostgreSQL, two reals)
// rounds the result to real, as real arithmetic does at every step.
func (r *Rows) floatArith(op ExprOp, a, b float64, f4 bool) (xnum, error) {
	var f float64
	switch op {
	case ExprAdd:
		f = a + b
	case ExprSub:
		f = a - b
	case ExprMul:
		f = a * b
	default:
		if b == 0 {
			return r.byZero()
		}
		f = a / b
	}
	if f4 {
		f = float64(float32(f))
	}
	x, err := r.floatRange(op, f, a, b)
	x.f4 = f4
	return x, err
}

// floatRange fails a float result the way PostgreSQL and MySQL fail it:
// infinite from finite operands (both), or zero from a product or
// quotient of non-zero ones (PostgreSQL's underflow). SQLite goes on.
func (r *Rows) floatRange(op ExprOp, f, a, b float64) (xnum, error) {
	if r.p.Dialect != SQLite {
		if math.IsInf(f, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
			return xnum{}, fmt.Errorf("%w: a double precision result out of range", ErrOverflow)
		}
		if r.p.Dialect == PostgreSQL && f == 0 && a != 0 && b != 0 && (op == ExprMul || op == ExprDiv) {
			return xnum{}, fmt.Errorf("%w: a double precision result underflows", ErrOverflow)
		}
	}
	return xnum{kind: 'f', f: f}, nil
}

// byZero is a division by zero: PostgreSQL fails, MySQL and SQLite give
// NULL.
func (r *Rows) byZero() (xnum, error) {
	if r.p.Dialect == PostgreSQL {
		return xnum{}, ErrDivisionByZero
	}
	return xnum{null: true}, nil
}

// intArith is +, - or * of two integers: PostgreSQL fails beyond the
// wider operand type's range, MySQL beyond BIGINT's, SQLite goes on in
// floating point.
func (r *Rows) intArith(op ExprOp, x, y xnum) (xnum, error) {
	v := new(big.Int)
	switch op {
	case ExprAdd:
		v.Add(x.v, y.v)
	case ExprSub:
		v.Sub(x.v, y.v)
	default:
		v.Mul(x.v, y.v)
	}
	w := max(x.width, y.width)
	if fitsWidth(v, w) {
		return xnum{kind: 'i', v: v, width: w}, nil
	}
	if r.p.Dialect == SQLite {
		return r.floatArith(op, x.float(), y.float(), false)
	}
	return xnum{}, fmt.Errorf("%w: %s is out of the integer type's range", ErrOverflow, v)
}

func fitsWidth(v *big.Int, w int) bool {
	if !v.IsInt64() {
		return false
	}
	switch n := v.Int64(); w {
	case 2:
		return n >= math.MinInt16 && n <= math.MaxInt16
	case 4:
		return n >= math.MinInt32 && n <= math.MaxInt32
	}
	return true
}

// divide is x/y of integers and decimals: PostgreSQL divides integers
// truncating and decimals at select_div_scale; MySQL gives a decimal
// rounded at the column's scale; SQLite divides integers truncating.
func (r *Rows) divide(x, y xnum, divScale int) (xnum, error) {
	if y.v.Sign() == 0 {
		return r.byZero()
	}
	switch {
	case r.p.Dialect == MySQL:
		d := quoRound(x.dec(), y.dec(), divScale)
		return xnum{kind: 'd', v: d.unscaled, scale: d.scale}, nil
	case x.kind == 'i' && y.kind == 'i':
		v := new(big.Int).Quo(x.v, y.v) // truncates toward zero
		w := max(x.width, y.width)
		if fitsWidth(v, w) {
			return xnum{kind: 'i', v: v, width: w}, nil
		}
		if r.p.Dialect == SQLite {
			return r.floatArith(ExprDiv, x.float(), y.float(), false)
		}
		return xnum{}, fmt.Errorf("%w: %s is out of the integer type's range", ErrOverflow, v)
	case r.p.Dialect == PostgreSQL:
		d := pgDiv(x.dec(), y.dec())
		return xnum{kind: 'd', v: d.unscaled, scale: d.scale}, nil
	}
	return xnum{}, fmt.Errorf("%w: a decimal division on SQLite", ErrUnsupportedType)
}

// exprValue is a computed value in the Go type the shards returned for
// its column, or an error where the merge's typing disagrees with the
// database's (a float where the column is an integer...).
func (r *Rows) exprValue(x xnum, c *compInfo) (driver.Value, error) {
	if x.null {
		return nil, nil
	}
	k := c.kind
	if k == 0 || r.p.Dialect == SQLite { // SQLite types each value
		k = map[byte]goKind{'i': 'i', 'f': 'f', 'd': 's'}[x.kind]
		if x.kind == 'd' && r.p.Dialect == MySQL {
			k = 'b'
		}
	}
	switch {
	case k == 'f' && x.kind == 'f':
		if r.p.Dialect == PostgreSQL && r.types[c.Col] == "FLOAT4" {
			return float64(float32(x.f)), nil
		}
		return x.f, nil
	case k == 'i' && x.kind == 'i' && x.v.IsInt64():
		return x.v.Int64(), nil
	case k == 'u' && x.kind == 'i' && x.v.IsUint64():
		return x.v.Uint64(), nil
	case (k == 's' || k == 'b') && x.kind == 'f' && r.p.Dialect == MySQL:
		return asKind(formatDouble(x.f, r.p.Dialect), k), nil
	case (k == 's' || k == 'b') && x.kind != 'f':
		d := x.dec()
		if r.p.Dialect == MySQL && d.scale != c.divScale && c.mysqlDecimal {
			d = quoRound(d, decimal{unscaled: big.NewInt(1)}, c.divScale)
		}
		return asKind(d.String(), k), nil
	}
	return nil, fmt.Errorf("%w: the merge computes a %s where the database returns %s", ErrUnsupportedType,
		map[byte]string{'i': "integer", 'd': "decimal", 'f': "float"}[x.kind], r.types[c.Col])
}
