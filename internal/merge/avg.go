package merge

import (
	"database/sql/driver"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// avgMode is how a dialect divides AVG's sum by its count.
type avgMode uint8

const (
	avgFloat        avgMode = iota + 1 // double precision (float args; SQLite always)
	avgPGNumeric                       // PostgreSQL numeric_div: select_div_scale, half away from zero
	avgMySQLDecimal                    // DECIMAL at the scale the AVG column reports, half away from zero
)

// avgModeOf picks the division from the AVG column as shard 0 reports it:
// its database type and, for MySQL's DECIMAL, its scale (the argument's
// scale plus div_precision_increment).
func avgModeOf(d Dialect, r driver.Rows, col int) (avgMode, int, error) {
	if d == SQLite {
		return avgFloat, 0, nil
	}
	t := strings.ToUpper(typeName(r, col))
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = t[:i]
	}
	switch {
	case d == PostgreSQL && t == "NUMERIC":
		return avgPGNumeric, 0, nil
	case d == PostgreSQL && (t == "FLOAT8" || t == "FLOAT4"):
		return avgFloat, 0, nil
	case d == MySQL && (t == "DOUBLE" || t == "FLOAT"):
		return avgFloat, 0, nil
	case d == MySQL && t == "DECIMAL":
		ps, ok := r.(driver.RowsColumnTypePrecisionScale)
		if !ok {
			return 0, 0, fmt.Errorf("%w: the driver does not report the scale of the AVG column", ErrUnsupportedType)
		}
		_, scale, ok := ps.ColumnTypePrecisionScale(col)
		if !ok || scale < 0 || scale > 1000 {
			return 0, 0, fmt.Errorf("%w: the driver does not report the scale of the AVG column", ErrUnsupportedType)
		}
		return avgMySQLDecimal, int(scale), nil
	}
	return 0, 0, fmt.Errorf("%w: AVG returning %s", ErrUnsupportedType, t)
}

// average divides sum by count as mode says and returns the result in Go
// type k; NULL when count is 0.
func average(sum *sumAcc, count int64, mode avgMode, scale int, k goKind, d Dialect) (driver.Value, error) {
	if count == 0 {
		return nil, nil
	}
	if count < 0 {
		return nil, fmt.Errorf("%w: a negative count %d", ErrOverflow, count)
	}
	if err := sum.floatOverflow(d); err != nil {
		return nil, err
	}
	if mode == avgFloat {
		return floatValue(sum.float()/float64(count), k, d), nil
	}
	if sum.kind == 'f' {
		// The shards summed in floating point: the exact decimal sum is lost.
		return nil, fmt.Errorf("%w: a decimal average of floating-point sums", ErrUnsupportedType)
	}
	if mode == avgPGNumeric {
		return decimalValue(pgDivide(sum.decimal(), count), k)
	}
	return decimalValue(divRound(sum.decimal(), count, scale), k)
}

func decimalValue(d decimal, k goKind) (driver.Value, error) {
	switch k {
	case 's', 'b':
		return asKind(d.String(), k), nil
	case 'f':
		f, _ := strconv.ParseFloat(d.String(), 64)
		return f, nil
	}
	return nil, fmt.Errorf("%w: a decimal average returned as %c", ErrUnsupportedType, k)
}

// divRound is sum/count at scale digits, rounded half away from zero.
func divRound(sum decimal, count int64, scale int) decimal {
	if sum.special != 0 {
		return decimal{special: sum.special}
	}
	return quoRound(sum, decimal{unscaled: big.NewInt(count)}, scale)
}

// quoRound is a/b (b non-zero) at scale digits, rounded half away from
// zero.
func quoRound(a, b decimal, scale int) decimal {
	// a/b = ua*10^sb / (ub*10^sa); times 10^scale.
	n := new(big.Int).Mul(a.unscaled, pow10(b.scale))
	den := new(big.Int).Mul(b.unscaled, pow10(a.scale))
	n.Mul(n, pow10(scale))
	neg := (n.Sign() < 0) != (den.Sign() < 0)
	n.Abs(n)
	den.Abs(den)
	q, r := new(big.Int).QuoRem(n, den, new(big.Int))
	if r.Lsh(r, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return decimal{unscaled: q, scale: scale}
}

// PostgreSQL's numeric keeps base-10000 digits; a division's result scale
// depends on the weights of the operands' leading digits.
const (
	pgMinSigDigits = 16   // at least as precise as float8
	pgDecDigits    = 4    // decimal digits per base-10000 digit
	pgMaxScale     = 1000 // the largest display scale
)

// pgDivide is sum/count as PostgreSQL's numeric division computes it for
// avg: the quotient at the scale that gives at least 16 significant
// digits (and no less than the sum's own scale), rounded half away from
// zero.
func pgDivide(sum decimal, count int64) decimal {
	if sum.special != 0 {
		return decimal{special: sum.special}
	}
	return pgDiv(sum, decimal{unscaled: big.NewInt(count)})
}

// pgDiv is a/b (b non-zero) as PostgreSQL's numeric division: at the
// scale select_div_scale picks from the operands' leading base-10000
// digits and display scales, rounded half away from zero.
func pgDiv(a, b decimal) decimal {
	w1, f1 := nbaseLead(a.unscaled, a.scale)
	w2, f2 := nbaseLead(b.unscaled, b.scale)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight-- // the quotient's first digit may be lower
	}
	scale := pgMinSigDigits - qweight*pgDecDigits
	scale = min(max(scale, a.scale, b.scale, 0), pgMaxScale)
	return quoRound(a, b, scale)
}

// nbaseLead returns the weight and value of the first non-zero base-10000
// digit of |u| / 10^scale, the digits being aligned on the decimal point
// (weight 0: units to 9999; 1: 10^4 to 10^8-1; -1: 0.0001 to 0.9999...).
// Zero has weight 0 and digit 0.
func nbaseLead(u *big.Int, scale int) (weight, digit int) {
	if u.Sign() == 0 {
		return 0, 0
	}
	s := new(big.Int).Abs(u).String()
	e := len(s) - 1 - scale // decimal exponent of the leading digit
	weight = floorDiv(e, pgDecDigits)
	width := e - weight*pgDecDigits + 1 // decimal digits of it in the first group
	lead := s
	if len(lead) > width {
		lead = lead[:width]
	} else {
		lead += zeros(width - len(lead))
	}
	digit, _ = strconv.Atoi(lead)
	return weight, digit
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
