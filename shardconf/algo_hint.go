package shardconf

import (
	"fmt"
	"strings"
)

// The HINT_INLINE algorithm: ShardingSphere's HintInlineShardingAlgorithm.
// Its algorithm-expression is an inline expression over the variable
// value, one hint value at a time (default ${value}: the value is the
// target's name). A hint strategy routes each hint value through it and
// takes the union.

const (
	hintInlineType    = "HINT_INLINE"
	hintInlineVar     = "value"
	hintInlineDefault = "${value}"
)

func init() {
	registerStandard(hintInlineType, newHintInlineAlgorithm)
}

// hintInlineAlgo is a compiled HINT_INLINE algorithm.
type hintInlineAlgo struct {
	expr   *inlineExpr
	src    string
	byName map[string]int
	// constant: the expression uses no variable, so every value routes to
	// the one target it names.
	constant bool
	// fast, byInt: an integer value's target without building its name,
	// as INLINE's fast path (fast.go).
	fast  func(int64) (int64, error)
	byInt map[int64]int
}

func newHintInlineAlgorithm(spec algoSpec) (shardFunc, error) {
	if err := inlineCheckProps(hintInlineType, spec.props, propInlineExpression); err != nil {
		return nil, err
	}
	src, ok := spec.props[propInlineExpression]
	if !ok || strings.TrimSpace(src) == "" {
		src = hintInlineDefault
	}
	e, err := compileInline(src)
	if err != nil {
		return nil, &propError{key: propInlineExpression, value: src, reason: err.Error()}
	}
	cols := e.columns()
	for _, c := range cols {
		if c != hintInlineVar {
			return nil, &propError{key: propInlineExpression, value: src,
				reason: fmt.Sprintf("uses %s; a HINT_INLINE expression has the one variable %s (the hint value)", strings.Join(cols, ", "), hintInlineVar)}
		}
	}
	a := &hintInlineAlgo{expr: e, src: src, byName: inlineNameIndex(spec.targets), constant: len(cols) == 0}
	if prefix, suffix, f, ok := e.intTemplate(); ok && !a.constant {
		a.fast, a.byInt = f, intTargetIndex(prefix, suffix, spec.targets)
		// As INLINE: a remainder naming tables that do not exist loads, and
		// validate lists them (ErrNoRoute when a hint lands there).
		if e.modForm {
			if err := inlineReportUnreachable(spec, prefix, suffix, f, a.byInt); err != nil {
				return nil, &propError{key: propInlineExpression, value: src, reason: err.Error()}
			}
		}
	}
	return a, nil
}

func (a *hintInlineAlgo) one(v value) (int, error) {
	if a.fast != nil && v.kind == kindInt {
		n, err := a.fast(v.i)
		if err != nil {
			return -1, fmt.Errorf("shardconf: HINT_INLINE algorithm %q: %w", a.src, err)
		}
		if i, ok := a.byInt[n]; ok {
			return i, nil
		}
		return -1, nil
	}
	var vals []value
	if !a.constant {
		vals = []value{v}
	}
	name, err := a.expr.eval(vals)
	if err != nil {
		return -1, fmt.Errorf("shardconf: HINT_INLINE algorithm %q: %w", a.src, err)
	}
	if i, ok := a.byName[name]; ok {
		return i, nil
	}
	return -1, nil
}

// target returns the name v maps to, whether or not it is a target.
func (a *hintInlineAlgo) target(v value) (string, error) {
	if a.constant {
		return a.expr.eval(nil)
	}
	return a.expr.eval([]value{v})
}

// within is never reached: a hint strategy routes values, not ranges.
func (a *hintInlineAlgo) within(_ span, dst []int) ([]int, error) {
	return dst, fmt.Errorf("shardconf: HINT_INLINE algorithm %q routes hint values only, not a range", a.src)
}

// nonHintAlgorithms are the built-in algorithms ShardingSphere implements
// as standard (or complex) algorithms only: a hint strategy naming one is
// refused at load, as ShardingSphere refuses it.
var nonHintAlgorithms = map[string]bool{"MOD": true, "HASH_MOD": true, "VOLUME_RANGE": true, "BOUNDARY_RANGE": true,
	"AUTO_INTERVAL": true, "INTERVAL": true, "INLINE": true, "COMPLEX_INLINE": true, "SNOWFLAKE_BITS": true,
	"SNOWFLAKE_INTERVAL": true}

// hintAlgorithm reports whether a may serve a hint strategy, reporting why
// not: HINT_INLINE, CLASS_BASED (whose factory requires strategy: HINT
// when the spec has no column), or a Go algorithm registered with
// RegisterAlgorithm.
func (c *compiler) hintAlgorithm(a *Algorithm) bool {
	if nonHintAlgorithms[a.Type] {
		c.errorf(a.Pos, "algorithm %s: %s is not a hint sharding algorithm; a hint strategy takes %s, "+
			"CLASS_BASED with strategy: HINT, or a Go algorithm registered with shardconf.RegisterAlgorithm", a.Name, a.Type, hintInlineType)
		return false
	}
	if _, ok := lookupStandard(a.Type); !ok {
		c.errorf(a.Pos, "algorithm %s: type %q is not a hint sharding algorithm (known: %s)", a.Name, a.Type, hintInlineType)
		return false
	}
	return true
}
