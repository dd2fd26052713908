package shardconf

import "testing"

// The integer fast path of HINT_INLINE agrees with evaluating the
// expression, including values that route nowhere (Java's negative
// remainders) and values past the targets.
func TestHintInlineFastPathAgreesWithTheExpression(t *testing.T) {
	targets := []string{"t_0", "t_1", "t_2", "t_3", "t_10"}
	for _, expr := range []string{"t_${value % 4}", "t_$->{value}", "t_${(value + 2) % 4}", "t_${value.intdiv(10)}"} {
		f, err := newHintInlineAlgorithm(algoSpec{typ: hintInlineType, props: map[string]string{propInlineExpression: expr}, targets: targets})
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		a := f.(*hintInlineAlgo)
		if a.fast == nil {
			t.Errorf("%s: no integer fast path", expr)
		}
		for _, n := range []int64{-101, -5, -3, -1, 0, 1, 2, 3, 4, 7, 10, 99, 100, 109, 1 << 40} {
			v := value{kind: kindInt, i: n}
			got, err := a.one(v)
			if err != nil {
				t.Fatalf("%s, %d: %v", expr, n, err)
			}
			name, err := a.expr.eval([]value{v})
			if err != nil {
				t.Fatalf("%s, %d: eval: %v", expr, n, err)
			}
			want, ok := a.byName[name]
			if !ok {
				want = -1
			}
			if got != want {
				t.Errorf("%s, %d: fast path gives %d, the expression %q (%d)", expr, n, got, name, want)
			}
		}
	}
}
