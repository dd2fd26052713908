package shardconf

import (
	"fmt"
	"strings"
)

// op is a condition's comparison.
type op uint8

const (
	opEq op = iota + 1
	opIn
	opBetween
	opLt
	opLe
	opGt
	opGe
)

// Cond is a condition on one column, as a WHERE clause or an INSERT's
// values state it. Build it with Eq, In, Between, Lt, Le, Gt or Ge; several
// conds given to Route are ANDed.
//
// Values may be any Go integer type, keygen.ID, *big.Int, json.Number, a
// float, string, []byte, time.Time, a driver.Valuer (sql.NullInt64) or a
// fmt.Stringer. A number routes alike whatever carries it: 7, uint8(7),
// keygen.ID(7), big.NewInt(7), json.Number("7") and 7.0 are one value.
// Refused: NULL (nil, a nil pointer, a Valuer giving NULL), NaN and ±Inf,
// a number beyond 64 bits, a float at or beyond ±2^53 (one float stands
// for several integers there: 2^53+1 arrives as the float 2^53), and, as a
// value to route (not as a range bound), a float with a fraction. A
// json.Number is read exactly ("7.0" and "7e0" are 7), never through a
// float. Strings stay strings: how an algorithm reads one (as a number, as
// text to hash) is the algorithm's, documented in its file.
//
// A time.Time routes by its own wall clock, as ShardingSphere reads a
// LocalDateTime. Pass times in the zone the database stores them in: the
// MySQL driver converts a time to its DSN's loc (UTC unless set) and a
// PostgreSQL timestamptz keeps the instant, so 2024-02-01 03:30 +08:00
// routes to February's table while the row holds 2024-01-31 19:30, where
// a later query for that value looks in January's.
type Cond struct {
	column string
	v      any
	more   *condMore // IN lists and BETWEEN's upper bound; nil for the rest
	op     op
}

type condMore struct {
	hi any
	vs []any
}

// Eq: column = v.
func Eq(column string, v any) Cond { return Cond{column: column, op: opEq, v: v} }

// In: column IN (vs...). An empty list matches nothing.
func In(column string, vs ...any) Cond {
	return Cond{column: column, op: opIn, more: &condMore{vs: vs}}
}

// Between: lo <= column <= hi.
func Between(column string, lo, hi any) Cond {
	return Cond{column: column, op: opBetween, v: lo, more: &condMore{hi: hi}}
}

// Lt: column < v.
func Lt(column string, v any) Cond { return Cond{column: column, op: opLt, v: v} }

// Le: column <= v.
func Le(column string, v any) Cond { return Cond{column: column, op: opLe, v: v} }

// Gt: column > v.
func Gt(column string, v any) Cond { return Cond{column: column, op: opGt, v: v} }

// Ge: column >= v.
func Ge(column string, v any) Cond { return Cond{column: column, op: opGe, v: v} }

// WithColumn returns the condition on another column (an ORM resolving a
// primary-key placeholder, say).
func (c Cond) WithColumn(column string) Cond {
	c.column = column
	return c
}

// Column is the column the condition constrains.
func (c Cond) Column() string { return c.column }

// String renders the condition as SQL-like text.
func (c Cond) String() string {
	switch c.op {
	case opEq:
		return fmt.Sprintf("%s = %v", c.column, c.v)
	case opIn:
		parts := make([]string, len(c.values()))
		for i, v := range c.values() {
			parts[i] = fmt.Sprint(v)
		}
		return fmt.Sprintf("%s IN (%s)", c.column, strings.Join(parts, ", "))
	case opBetween:
		return fmt.Sprintf("%s BETWEEN %v AND %v", c.column, c.v, c.upper())
	case opLt:
		return fmt.Sprintf("%s < %v", c.column, c.v)
	case opLe:
		return fmt.Sprintf("%s <= %v", c.column, c.v)
	case opGt:
		return fmt.Sprintf("%s > %v", c.column, c.v)
	case opGe:
		return fmt.Sprintf("%s >= %v", c.column, c.v)
	}
	return "invalid condition"
}

// values is an IN condition's list.
func (c Cond) values() []any {
	if c.more == nil {
		return nil
	}
	return c.more.vs
}

// upper is BETWEEN's upper bound.
func (c Cond) upper() any {
	if c.more == nil {
		return nil
	}
	return c.more.hi
}

// isRange reports whether the condition is a range rather than a list of
// values.
func (c Cond) isRange() bool { return c.op >= opBetween }

// span converts a range condition.
func (c Cond) span() (span, error) {
	var s span
	lo, err := toValue(c.v)
	if err != nil {
		return s, err
	}
	switch c.op {
	case opBetween:
		hi, err := toValue(c.upper())
		if err != nil {
			return s, err
		}
		s.lo = bound{v: lo, set: true, inclusive: true}
		s.hi = bound{v: hi, set: true, inclusive: true}
	case opLt, opLe:
		s.hi = bound{v: lo, set: true, inclusive: c.op == opLe}
	case opGt, opGe:
		s.lo = bound{v: lo, set: true, inclusive: c.op == opGe}
	}
	return s, nil
}

// compareValues orders two integers; ok is false for anything else.
// Only integers order the same way for every algorithm: strings may be
// decimal numbers ("9" > "10" as text) or dates in any pattern, and times
// route by wall clock in the pattern's zone, so merging or emptying their
// ranges here could lose targets. Those are left to the algorithms.
func compareValues(a, b value) (int, bool) {
	if a.kind != b.kind {
		return 0, false
	}
	switch a.kind {
	case kindInt:
		return cmpOrdered(a.i, b.i), true
	case kindBig:
		return cmpOrdered(a.u, b.u), true
	}
	return 0, false
}

func cmpOrdered[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mergeSpans intersects two ranges on one column, keeping the tighter
// bound on each side; ok is false when bounds do not compare.
func mergeSpans(a, b span) (span, bool) {
	lo, ok := tighter(a.lo, b.lo, 1)
	if !ok {
		return span{}, false
	}
	hi, ok := tighter(a.hi, b.hi, -1)
	if !ok {
		return span{}, false
	}
	return span{lo: lo, hi: hi}, true
}

// tighter picks the stricter of two bounds: the larger lower bound (dir 1)
// or the smaller upper bound (dir -1); an exclusive bound wins a tie.
func tighter(a, b bound, dir int) (bound, bool) {
	switch {
	case !a.set:
		return b, true
	case !b.set:
		return a, true
	}
	c, ok := compareValues(a.v, b.v)
	switch {
	case !ok:
		return bound{}, false
	case c*dir > 0:
		return a, true
	case c*dir < 0:
		return b, true
	case !a.inclusive:
		return a, true
	}
	return b, true
}

// spanEmpty reports a range that no value satisfies (lo above hi).
func spanEmpty(s span) bool {
	if !s.lo.set || !s.hi.set {
		return false
	}
	c, ok := compareValues(s.lo.v, s.hi.v)
	return ok && (c > 0 || c == 0 && !(s.lo.inclusive && s.hi.inclusive))
}
