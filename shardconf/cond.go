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
// Values may be any Go integer type, keygen.ID, string, []byte, time.Time
// or a fmt.Stringer.
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
