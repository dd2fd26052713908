package shardconf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// hintOracleCases are HINT_INLINE expressions over an integer hint value
// and what Java computes for them on a Long (Groovy's Long arithmetic
// wraps, % keeps the dividend's sign, abs(MIN_VALUE) is MIN_VALUE), written
// with Go's int64 operators, which behave the same.
var hintOracleCases = map[string]func(int64) int64{
	"t_${value % 4}":               func(v int64) int64 { return v % 4 },
	"t_$->{value % -4}":            func(v int64) int64 { return v % -4 },
	"t_${value + 1}":               func(v int64) int64 { return v + 1 },
	"t_${value - 1}":               func(v int64) int64 { return v - 1 },
	"t_${-value % 4}":              func(v int64) int64 { return -v % 4 },
	"t_${value * 3 % 4}":           func(v int64) int64 { return v * 3 % 4 },
	"t_${value * value % 7}":       func(v int64) int64 { return v * v % 7 },
	"t_${(value + 3) % 5}":         func(v int64) int64 { return (v + 3) % 5 },
	"t_${Math.abs(value % 4)}":     func(v int64) int64 { return javaAbs(v % 4) },
	"t_${value.abs() % 8}":         func(v int64) int64 { return javaAbs(v) % 8 },
	"t_${value.intdiv(2) % 4}":     func(v int64) int64 { return v / 2 % 4 },
	"t_${value % 4 * 2}":           func(v int64) int64 { return v % 4 * 2 },
	"t_${Math.floorMod(value, 4)}": func(v int64) int64 { return (v%4 + 4) % 4 },
	"t_${value.intValue() % 4}":    func(v int64) int64 { return int64(int32(v) % 4) },
	"t_${value.longValue() % 4}":   func(v int64) int64 { return v % 4 },
	"${'t_' + value % 4}":          func(v int64) int64 { return v % 4 },
}

func javaAbs(v int64) int64 {
	if v < 0 {
		return -v // -MinInt64 is MinInt64, as Math.abs(Long.MIN_VALUE)
	}
	return v
}

func hintOracleValues() []int64 {
	vs := []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1, math.MaxInt32, math.MaxInt32 + 1,
		math.MinInt32, math.MinInt32 - 1, 3037000500, -3037000500}
	for i := int64(-20); i <= 20; i++ {
		vs = append(vs, i)
	}
	rng := rand.New(rand.NewPCG(16, 1))
	for range 3000 {
		vs = append(vs, int64(rng.Uint64()))
	}
	return vs
}

// Every integer hint value routes, on HINT_INLINE's fast path (an int
// kernel) and on its general path (the evaluator), to the target Java's
// Long arithmetic names, or to none (index -1) when that name is no
// target.
func TestHintInlineRoutesIntegerHintValuesAsJavaLongArithmetic(t *testing.T) {
	var targets []string
	for i := -9; i <= 12; i++ {
		targets = append(targets, fmt.Sprintf("t_%d", i))
	}
	index := map[string]int{}
	for i, n := range targets {
		index[n] = i
	}
	vs := hintOracleValues()
	for src, java := range hintOracleCases {
		f, err := newHintInlineAlgorithm(algoSpec{typ: hintInlineType, props: map[string]string{propInlineExpression: src}, targets: targets})
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		a := f.(*hintInlineAlgo)
		general := *a
		general.fast = nil // the evaluator alone
		for _, v := range vs {
			want, ok := index[fmt.Sprintf("t_%d", java(v))]
			if !ok {
				want = -1
			}
			for path, alg := range map[string]*hintInlineAlgo{"fast": a, "general": &general} {
				got, err := alg.one(value{kind: kindInt, i: v})
				if err != nil || got != want {
					t.Errorf("%s, value %d, %s path: %d, %v; want index %d (t_%d)", src, v, path, got, err, want, java(v))
				}
			}
		}
	}
}
