package shardconf

import (
	"fmt"
	"strings"
)

// customStandard is a Go ShardingAlgorithm compiled against one strategy's
// targets: it converts values for the algorithm and checks its answers.
type customStandard struct {
	name       string // the type (or class name) as registered
	algo       ShardingAlgorithm
	rng        RangeShardingAlgorithm // nil: the algorithm does not route ranges
	allowRange bool                   // allow-range-query: a range goes everywhere
	table      string
	column     string // "" for a hint strategy
	targets    []string
	index      map[string]int // target name -> index
}

// fromFactory builds a Go algorithm with its factory (its own copy of the
// props, a panic recovered as ErrAlgorithmPanic) and reads its
// allow-range-query prop.
func fromFactory[A any](e *customEntry, spec algoSpec, factory func(map[string]string) (A, error)) (a A, allowRange bool, err error) {
	if allowRange, err = inlineBoolProp(spec.props, PropAllowRangeQuery, false); err != nil {
		return a, false, err
	}
	err = recoverAlgorithm("factory", func() (err error) { a, err = factory(copyProps(spec.props)); return err })
	if err == nil && any(a) == nil {
		err = fmt.Errorf("the factory of algorithm %s returned no algorithm and no error", e.name)
	}
	return a, allowRange, err
}

func newCustomStandard(e *customEntry, spec algoSpec) (shardFunc, error) {
	a, allow, err := fromFactory(e, spec, e.std)
	if err != nil {
		return nil, err
	}
	c := &customStandard{name: e.name, algo: a, allowRange: allow, table: spec.table, column: spec.column,
		targets: spec.targets[:len(spec.targets):len(spec.targets)], index: targetIndex(spec.targets)}
	c.rng, _ = a.(RangeShardingAlgorithm)
	return c, nil
}

// doSharding calls the algorithm, turning a panic into an error.
func (c *customStandard) doSharding(v ShardingValue) (name string, err error) {
	err = recoverAlgorithm("DoSharding", func() (err error) { name, err = c.algo.DoSharding(c.targets, v); return err })
	return name, err
}

// recoverAlgorithm runs f, a call into a Go algorithm or its factory
// (what names it for the message), turning a panic into an error.
func recoverAlgorithm(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(what, p)
		}
	}()
	return f()
}

func panicError(what string, p any) error {
	return fmt.Errorf("%s panicked: %v: %w", what, p, ErrAlgorithmPanic)
}

// targetIndex maps each target name to its index.
func targetIndex(targets []string) map[string]int {
	idx := make(map[string]int, len(targets))
	for i, t := range targets {
		idx[t] = i
	}
	return idx
}

func (c *customStandard) one(v value) (int, error) {
	x, err := publicValue(v)
	if err != nil {
		return -1, err
	}
	name, err := c.doSharding(ShardingValue{Table: c.table, Column: c.column, Value: x})
	if err != nil {
		return -1, fmt.Errorf("algorithm %s: %w", c.name, err)
	}
	i, ok := c.index[name]
	if !ok {
		return -1, resultError(c.name, name, c.targets)
	}
	return i, nil
}

func (c *customStandard) within(r span, dst []int) ([]int, error) {
	if c.rng == nil {
		if !c.allowRange {
			return dst, fmt.Errorf("algorithm %s cannot route a range on %s: %w; implement DoRangeSharding "+
				"(RangeShardingAlgorithm) or set %s: true in its props to send such statements to every target",
				c.name, c.column, ErrRangeNotSupported, PropAllowRangeQuery)
		}
		for i := range c.targets {
			dst = append(dst, i)
		}
		return dst, nil
	}
	rv := RangeShardingValue{Table: c.table, Column: c.column}
	var err error
	if rv.Range.Lower, err = publicBound(integralBound(r.lo, true)); err != nil {
		return dst, err
	}
	if rv.Range.Upper, err = publicBound(integralBound(r.hi, false)); err != nil {
		return dst, err
	}
	var names []string
	err = recoverAlgorithm("DoRangeSharding", func() (err error) { names, err = c.rng.DoRangeSharding(c.targets, rv); return err })
	if err != nil {
		return dst, fmt.Errorf("algorithm %s: %w", c.name, err)
	}
	for _, n := range names {
		i, ok := c.index[n]
		if !ok {
			return dst, resultError(c.name, n, c.targets)
		}
		dst = append(dst, i)
	}
	return dst, nil
}

// customComplex is a Go ComplexShardingAlgorithm compiled against one
// strategy's targets.
type customComplex struct {
	name       string
	algo       ComplexShardingAlgorithm
	allowRange bool
	table      string
	cols       []string
	targets    []string
	index      map[string]int
}

func newCustomComplex(e *customEntry, spec algoSpec) (multiFunc, error) {
	if len(spec.columns) == 0 {
		return nil, fmt.Errorf("algorithm %s serves a complex strategy, which needs shardingColumns", e.name)
	}
	a, allow, err := fromFactory(e, spec, e.cpx)
	if err != nil {
		return nil, err
	}
	return &customComplex{name: e.name, algo: a, allowRange: allow, table: spec.table,
		cols: append([]string(nil), spec.columns...), targets: spec.targets[:len(spec.targets):len(spec.targets)],
		index: targetIndex(spec.targets)}, nil
}

func (c *customComplex) columns() []string { return c.cols }

// allowsRange tells the router that a range on a column may go to every
// target (allow-range-query).
func (c *customComplex) allowsRange() bool { return c.allowRange }

// rangeError is the router's refusal of a range on column when
// allowsRange is false.
func (c *customComplex) rangeError(table, column string) error {
	return fmt.Errorf("shardconf: table %s: algorithm %s cannot route a range on complex sharding column %s: %w; "+
		"set %s: true in its props to send such statements to every target, or use Scatter",
		table, c.name, column, ErrRangeNotSupported, PropAllowRangeQuery)
}

func (c *customComplex) one(vs []value) (int, error) {
	svs := make([]ShardingValue, len(vs))
	for i, v := range vs {
		x, err := publicValue(v)
		if err != nil {
			return -1, fmt.Errorf("column %s, value %s: %w", c.cols[i], v, err)
		}
		svs[i] = ShardingValue{Table: c.table, Column: c.cols[i], Value: x}
	}
	var name string
	err := recoverAlgorithm("DoSharding", func() (err error) { name, err = c.algo.DoSharding(c.targets, svs); return err })
	if err != nil {
		return -1, fmt.Errorf("algorithm %s: %w", c.name, err)
	}
	i, ok := c.index[name]
	if !ok {
		return -1, resultError(c.name, name, c.targets)
	}
	return i, nil
}

// publicValue is a value as a Go algorithm sees it (ShardingValue.Value).
func publicValue(v value) (any, error) {
	switch v.kind {
	case kindInt:
		return v.i, nil
	case kindBig:
		return v.u, nil
	case kindString:
		return v.s, nil
	case kindTime:
		return v.t.Round(0), nil // no monotonic reading: the instant alone
	case kindFloat:
		// As every built-in algorithm: a database rounds 3.7 to 4 in an
		// integer column, where the algorithm would see 3.7.
		return nil, fmt.Errorf("a float with a fraction (%s) is not a sharding value", v)
	}
	return nil, fmt.Errorf("no sharding value")
}

// publicBound converts one end of a range; an open end has a nil Value.
func publicBound(b bound) (Bound, error) {
	if !b.set {
		return Bound{}, nil
	}
	x, err := publicValue(b.v)
	if err != nil {
		return Bound{}, err
	}
	return Bound{Value: x, Inclusive: b.inclusive}, nil
}

// resultError is a Go algorithm's answer that is not one of its targets.
func resultError(algo, got string, targets []string) error {
	const show = 8
	list := targets
	more := ""
	if len(list) > show {
		list, more = list[:show], fmt.Sprintf(" and %d more", len(targets)-show)
	}
	return fmt.Errorf("algorithm %s returned %q, which is not one of its targets (%s%s): %w",
		algo, got, strings.Join(list, ", "), more, ErrAlgorithmResult)
}
