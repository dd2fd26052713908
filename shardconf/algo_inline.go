package shardconf

import (
	"fmt"
	"slices"
	"strings"
)

// The INLINE and COMPLEX_INLINE algorithms: ShardingSphere's
// InlineShardingAlgorithm and ComplexInlineShardingAlgorithm, over
// expressions compiled once by compileInline.

const (
	propInlineExpression = "algorithm-expression"
	propAllowRangeInline = "allow-range-query-with-inline-sharding"
	propInlineColumns    = "sharding-columns"
)

// inlineProbe is how many non-negative values the INLINE factory tries
// when checking that a "% N" expression only routes to existing targets.
const inlineProbe = 10_000

func init() {
	registerStandard("INLINE", newInlineAlgorithm)
	registerComplex("COMPLEX_INLINE", newComplexInlineAlgorithm)
}

// inlineCheckProps rejects props not in known.
func inlineCheckProps(typ string, props map[string]string, known ...string) error {
	for k, v := range props {
		ok := false
		for _, want := range known {
			if k == want {
				ok = true
				break
			}
		}
		if !ok {
			return &propError{key: k, value: v, reason: fmt.Sprintf("unknown prop for %s (known: %s)", typ, strings.Join(known, ", "))}
		}
	}
	return nil
}

// inlineBoolProp reads a "true"/"false" prop (case-insensitive); absent is def.
func inlineBoolProp(props map[string]string, key string, def bool) (bool, error) {
	v, ok := props[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &propError{key: key, value: v, reason: `want "true" or "false"`}
}

// inlineExprProp reads and compiles the required algorithm-expression.
func inlineExprProp(props map[string]string) (*inlineExpr, string, error) {
	expr, ok := props[propInlineExpression]
	if !ok || strings.TrimSpace(expr) == "" {
		return nil, "", &propError{key: propInlineExpression, value: expr, reason: "required"}
	}
	e, err := compileInline(expr)
	if err != nil {
		return nil, "", &propError{key: propInlineExpression, value: expr, reason: err.Error()}
	}
	return e, expr, nil
}

// inlineNameIndex maps each target name to its index; the first of duplicates wins.
func inlineNameIndex(targets []string) map[string]int {
	m := make(map[string]int, len(targets))
	for i, t := range targets {
		if _, dup := m[t]; !dup {
			m[t] = i
		}
	}
	return m
}

// inlineAlgo is a compiled INLINE algorithm.
type inlineAlgo struct {
	expr       *inlineExpr
	src        string
	column     string
	n          int                         // number of targets
	byName     map[string]int              // target name -> index
	fast       func(int64) (int64, error)  // fast path for integer values
	strFast    func(string) (int64, error) // fast path for strings (x.hashCode())
	byInt      map[int64]int               // fast paths: f(v) -> index
	dense      []int32                     // byInt as a slice when its keys are small (fast.go)
	allowRange bool
}

func newInlineAlgorithm(spec algoSpec) (shardFunc, error) {
	if err := inlineCheckProps("INLINE", spec.props, propInlineExpression, propAllowRangeInline); err != nil {
		return nil, err
	}
	allow, err := inlineBoolProp(spec.props, propAllowRangeInline, false)
	if err != nil {
		return nil, err
	}
	e, src, err := inlineExprProp(spec.props)
	if err != nil {
		return nil, err
	}
	cols := e.columns()
	switch {
	case len(cols) == 0:
		return nil, &propError{key: propInlineExpression, value: src, reason: fmt.Sprintf("uses no column; it must use the sharding column %s", spec.column)}
	case len(cols) > 1:
		return nil, &propError{key: propInlineExpression, value: src, reason: fmt.Sprintf("uses columns %s; a standard strategy has the one sharding column %s (use a complex strategy with COMPLEX_INLINE)", strings.Join(cols, ", "), spec.column)}
	case !strings.EqualFold(cols[0], strings.TrimSpace(spec.column)):
		return nil, &propError{key: propInlineExpression, value: src, reason: fmt.Sprintf("uses column %s, but the sharding column is %s", cols[0], spec.column)}
	}
	a := &inlineAlgo{expr: e, src: src, column: spec.column, n: len(spec.targets), byName: inlineNameIndex(spec.targets), allowRange: allow}
	if prefix, suffix, f, ok := e.intTemplate(); ok {
		a.fast, a.strFast = f, e.strFn
		a.byInt = intTargetIndex(prefix, suffix, spec.targets)
		a.dense = denseIndex(a.byInt)
		if e.modForm {
			if err := inlineReportUnreachable(spec, prefix, suffix, f, a.byInt); err != nil {
				return nil, &propError{key: propInlineExpression, value: src, reason: err.Error()}
			}
		}
	}
	return a, nil
}

// inlineReportUnreachable probes a remainder expression ("t_${id % 4}")
// over the values 0..inlineProbe-1 and reports each name it builds that
// is not a target: ShardingSphere loads such a rule and fails only when a
// value lands there, and so does shardkey (ErrNoRoute at the statement).
// Consecutive numbers are reported as one run. An expression that fails
// for a probed value, or that reaches no target at all, is an error.
// Negative values are not probed: their remainders are negative, and no
// table is named with a minus sign.
func inlineReportUnreachable(spec algoSpec, prefix, suffix string, f func(int64) (int64, error), byInt map[int64]int) error {
	missing := map[int64]bool{}
	reached := false
	var first int64
	for x := int64(0); x < inlineProbe; x++ {
		n, err := f(x)
		if err != nil {
			return fmt.Errorf("fails for value %d: %w", x, err)
		}
		if x == 0 {
			first = n
		}
		if _, ok := byInt[n]; ok {
			reached = true
		} else {
			missing[n] = true
		}
	}
	if !reached {
		return fmt.Errorf("builds no target name for the values 0..%d (the first is %s%d%s; targets: %s)", inlineProbe-1, prefix, first, suffix, apList(spec.targets))
	}
	nums := make([]int64, 0, len(missing))
	for n := range missing {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		if i == j {
			spec.noTarget(fmt.Sprintf("%s%d%s", prefix, nums[i], suffix))
		} else {
			spec.noTarget(fmt.Sprintf("%s%d%s to %s%d%s (%d names)", prefix, nums[i], suffix, prefix, nums[j], suffix, j-i+1))
		}
		i = j + 1
	}
	return nil
}

func (a *inlineAlgo) one(v value) (int, error) {
	if a.fast != nil && (v.kind == kindInt || v.kind == kindString && a.strFast != nil) {
		var (
			n   int64
			err error
		)
		if v.kind == kindInt {
			n, err = a.fast(v.i)
		} else {
			n, err = a.strFast(v.s)
		}
		if err != nil {
			return -1, a.valueError(err)
		}
		if i, ok := a.byInt[n]; ok {
			return i, nil
		}
		return -1, nil
	}
	name, err := a.expr.eval([]value{v})
	if err != nil {
		return -1, a.valueError(err)
	}
	if i, ok := a.byName[name]; ok {
		return i, nil
	}
	return -1, nil
}

// valueError says which algorithm could not take a value.
func (a *inlineAlgo) valueError(err error) error {
	return fmt.Errorf("shardconf: INLINE algorithm %q: %w", a.src, err)
}

// target returns the name v maps to, whether or not it is a target: the
// router can name it when one returns -1.
func (a *inlineAlgo) target(v value) (string, error) { return a.expr.eval([]value{v}) }

func (a *inlineAlgo) within(_ span, dst []int) ([]int, error) {
	if !a.allowRange {
		return dst, fmt.Errorf("shardconf: INLINE algorithm %q cannot route a range on %s; set allow-range-query-with-inline-sharding: true to scatter", a.src, a.column)
	}
	for i := 0; i < a.n; i++ {
		dst = append(dst, i)
	}
	return dst, nil
}

// complexInlineAlgo is a compiled COMPLEX_INLINE algorithm.
type complexInlineAlgo struct {
	expr       *inlineExpr
	src        string
	cols       []string // the sharding columns, in the order one takes values
	idx        []int    // expression column k reads vs[idx[k]]
	byName     map[string]int
	allowRange bool
}

func newComplexInlineAlgorithm(spec algoSpec) (multiFunc, error) {
	if err := inlineCheckProps("COMPLEX_INLINE", spec.props, propInlineColumns, propInlineExpression, propAllowRangeInline); err != nil {
		return nil, err
	}
	allow, err := inlineBoolProp(spec.props, propAllowRangeInline, false)
	if err != nil {
		return nil, err
	}
	cols := spec.columns
	if raw, ok := spec.props[propInlineColumns]; ok && strings.TrimSpace(raw) != "" {
		cols = nil
		for _, c := range strings.Split(raw, ",") {
			c = strings.TrimSpace(c)
			if c == "" {
				return nil, &propError{key: propInlineColumns, value: raw, reason: "empty column name"}
			}
			cols = append(cols, c)
		}
		if len(spec.columns) > 0 && !inlineSameColumns(cols, spec.columns) {
			return nil, &propError{key: propInlineColumns, value: raw, reason: fmt.Sprintf("differs from the strategy's sharding columns %s", strings.Join(spec.columns, ","))}
		}
	}
	if len(cols) == 0 {
		return nil, &propError{key: propInlineColumns, reason: "no sharding columns: set the strategy's shardingColumns or this prop"}
	}
	for i, c := range cols {
		for _, d := range cols[:i] {
			if strings.EqualFold(c, d) {
				return nil, &propError{key: propInlineColumns, value: strings.Join(cols, ","), reason: fmt.Sprintf("column %s is listed twice", c)}
			}
		}
	}
	e, src, err := inlineExprProp(spec.props)
	if err != nil {
		return nil, err
	}
	a := &complexInlineAlgo{expr: e, src: src, cols: cols, byName: inlineNameIndex(spec.targets), allowRange: allow}
	for _, ec := range e.columns() {
		k := -1
		for i, c := range cols {
			if strings.EqualFold(ec, c) {
				k = i
				break
			}
		}
		if k < 0 {
			return nil, &propError{key: propInlineExpression, value: src, reason: fmt.Sprintf("uses column %s, which is not among the sharding columns %s", ec, strings.Join(cols, ","))}
		}
		a.idx = append(a.idx, k)
	}
	return a, nil
}

// inlineSameColumns reports whether a and b hold the same columns, ignoring
// case and order.
func inlineSameColumns(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if strings.EqualFold(x, strings.TrimSpace(y)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (a *complexInlineAlgo) columns() []string { return a.cols }

func (a *complexInlineAlgo) one(vs []value) (int, error) {
	name, err := a.target(vs)
	if err != nil {
		return -1, err
	}
	if i, ok := a.byName[name]; ok {
		return i, nil
	}
	return -1, nil
}

// target returns the name vs map to, whether or not it is a target.
func (a *complexInlineAlgo) target(vs []value) (string, error) {
	if len(vs) != len(a.cols) {
		return "", fmt.Errorf("shardconf: COMPLEX_INLINE algorithm %q takes %d values (%s), given %d", a.src, len(a.cols), strings.Join(a.cols, ", "), len(vs))
	}
	name, err := a.expr.evalMapped(vs, a.idx)
	if err != nil {
		return "", fmt.Errorf("shardconf: COMPLEX_INLINE algorithm %q: %w", a.src, err)
	}
	return name, nil
}

// allowsRange reports allow-range-query-with-inline-sharding: when true,
// a range condition on a sharding column scatters to every target; when
// false the router must refuse it (multiFunc has no range method).
func (a *complexInlineAlgo) allowsRange() bool { return a.allowRange }
