package merge

import (
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// xnum is a computed expression's value: NULL, an integer, a decimal or a
// float, exact where the database is.
type xnum struct {
	null  bool
	kind  byte     // 'i', 'd' or 'f'
	v     *big.Int // 'i': the integer; 'd': the unscaled decimal
	scale int      // 'd'
	f     float64  // 'f'
	width int      // 'i' on PostgreSQL: bytes of the integer type (2, 4, 8), its range
	f4    bool     // 'f' on PostgreSQL: a real, which real arithmetic rounds at every step
}

// compInfo is a Computed column with what New resolved for it.
type compInfo struct {
	Computed
	kind         goKind // Go type of the shard's values of Col
	mysqlDecimal bool   // MySQL and Col is DECIMAL: divScale is its scale
	divScale     int    // MySQL: the scale of Col, where results round
}

// compute evaluates g's computed columns in order into its row.
func (r *Rows) compute(g *group) error {
	for i := range r.comps {
		c := &r.comps[i]
		x, err := r.eval1(c.Expr, g, c, true)
		if err == nil {
			var v driver.Value
			if v, err = r.exprValue(x, c); err == nil {
				g.row[c.Col] = v
				continue
			}
		}
		return r.colErr(c.Col, err)
	}
	return nil
}

// eval1 evaluates e; root says e is the computed column's own expression
// (MySQL rounds a division there, at the column's scale).
func (r *Rows) eval1(e *Expr, g *group, c *compInfo, root bool) (xnum, error) {
	switch e.Op {
	case ExprCol:
		return r.leaf(g.row[e.Col], r.cls[g.shard][e.Col], r.types[e.Col])
	case ExprConst:
		return r.constant(e.Const)
	case ExprCoalesce:
		for _, a := range e.Args {
			x, err := r.eval1(a, g, c, false)
			if err != nil || !x.null {
				return x, err
			}
		}
		return xnum{null: true}, nil
	case ExprNeg:
		x, err := r.eval1(e.Args[0], g, c, false)
		if err != nil || x.null {
			return x, err
		}
		if x.kind == 'f' {
			return xnum{kind: 'f', f: -x.f, f4: x.f4}, nil
		}
		return r.arith(ExprSub, xnum{kind: x.kind, v: new(big.Int), width: 2}, x, 0)
	}
	x, err := r.eval1(e.Args[0], g, c, false)
	if err != nil {
		return x, err
	}
	y, err := r.eval1(e.Args[1], g, c, false)
	if err != nil || x.null || y.null {
		return xnum{null: true}, err
	}
	if r.p.Dialect == PostgreSQL {
		x, y = pgParamType(e.Args[0], x, y), pgParamType(e.Args[1], y, x)
	}
	scale := 0
	if root {
		scale = c.divScale
	}
	z, err := r.arith(e.Op, x, y, scale)
	if err == nil && z.kind == 'i' && z.v.Sign() < 0 && e.Op != ExprDiv && (r.unsigned(e.Args[0]) || r.unsigned(e.Args[1])) {
		return z, fmt.Errorf("%w: %s is out of BIGINT UNSIGNED's range", ErrOverflow, z.v)
	}
	return z, err
}

// unsigned tells whether MySQL types e's integer value BIGINT UNSIGNED:
// an UNSIGNED column's, or +, - or * with such an operand, or COALESCE of
// such values only. A negative result of those fails in MySQL.
func (r *Rows) unsigned(e *Expr) bool {
	if r.p.Dialect != MySQL {
		return false
	}
	switch e.Op {
	case ExprCol:
		return strings.HasPrefix(strings.ToUpper(r.types[e.Col]), "UNSIGNED ")
	case ExprAdd, ExprSub, ExprMul:
		return r.unsigned(e.Args[0]) || r.unsigned(e.Args[1])
	case ExprCoalesce:
		for _, a := range e.Args {
			if !r.unsigned(a) {
				return false
			}
		}
		return true
	}
	return false // constants, unary minus and / are signed
}

// leaf reads a merged value as a number; integer types' text (MySQL's
// text protocol) is an integer, decimal text a decimal.
func (r *Rows) leaf(v driver.Value, c class, typ string) (xnum, error) {
	if v == nil {
		return xnum{null: true}, nil
	}
	n, ok, err := numOf(v, c)
	if err != nil {
		return xnum{}, err
	}
	if !ok {
		return xnum{}, fmt.Errorf("%w: arithmetic on a %T", ErrUnsupportedType, v)
	}
	switch n.kind {
	case 'f':
		return xnum{kind: 'f', f: n.f, f4: r.p.Dialect == PostgreSQL && typ == "FLOAT4"}, nil
	case 'i', 'u':
		d := n.dec()
		return xnum{kind: 'i', v: d.unscaled, width: intWidth(typ)}, nil
	}
	d := n.dec()
	if d.special != 0 {
		return xnum{}, fmt.Errorf("%w: arithmetic on %s", ErrUnsupportedType, d)
	}
	if isIntegerType(typ) && d.scale == 0 {
		return xnum{kind: 'i', v: d.unscaled, width: intWidth(typ)}, nil
	}
	return xnum{kind: 'd', v: d.unscaled, scale: d.scale}, nil
}

// intWidth is the byte width of a PostgreSQL integer type (8 for any
// other).
func intWidth(typ string) int {
	switch typ {
	case "INT2":
		return 2
	case "INT4":
		return 4
	}
	return 8
}

func isIntegerType(typ string) bool {
	t := strings.TrimPrefix(strings.ToUpper(typ), "UNSIGNED ")
	switch t {
	case "INT2", "INT4", "INT8", "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "YEAR":
		return true
	}
	return false
}

// constant reads a literal: int64 an integer (int4 on PostgreSQL when it
// fits, as PostgreSQL types integer literals), decimal text a decimal,
// float64 a float.
func (r *Rows) constant(v driver.Value) (xnum, error) {
	switch x := v.(type) {
	case nil:
		return xnum{null: true}, nil
	case int64:
		w := 8
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			w = 4
		}
		return xnum{kind: 'i', v: big.NewInt(x), width: w}, nil
	case float64:
		return xnum{kind: 'f', f: x}, nil
	case string, []byte:
		n, err := r.leaf(v, clsNumber, "NUMERIC")
		if err == nil && n.kind == 'd' && r.p.Dialect == SQLite {
			if n.scale == 0 {
				return xnum{kind: 'i', v: n.v, width: 8}, nil
			}
			return xnum{kind: 'f', f: n.float()}, nil // SQLite has no decimals: 2.5 is a REAL
		}
		return n, err
	}
	return xnum{}, fmt.Errorf("%w: a constant of type %T in an expression", ErrUnsupportedType, v)
}

// pgParamType: PostgreSQL types a parameter by the other operand, so a
// float argument next to an integer or numeric is a numeric (pgx sends its
// shortest decimal text), and next to a real is a real.
func pgParamType(e *Expr, x, other xnum) xnum {
	if e.Op != ExprConst || x.kind != 'f' || math.IsNaN(x.f) || math.IsInf(x.f, 0) {
		return x
	}
	if other.kind == 'f' {
		if other.f4 {
			return xnum{kind: 'f', f: float64(float32(x.f)), f4: true}
		}
		return x
	}
	n, _, err := numOf(strconv.FormatFloat(x.f, 'f', -1, 64), clsNumber)
	if err != nil {
		return x
	}
	d := n.dec()
	return xnum{kind: 'd', v: d.unscaled, scale: d.scale}
}
