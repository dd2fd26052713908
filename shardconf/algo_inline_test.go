package shardconf

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func inlineSpec(expr string, targets ...string) algoSpec {
	return algoSpec{
		typ:     "INLINE",
		props:   map[string]string{"algorithm-expression": expr},
		targets: targets,
		column:  "order_id",
	}
}

func TestInlineRegistered(t *testing.T) {
	if algorithms.standard["INLINE"] == nil {
		t.Error("INLINE is not registered as a standard algorithm")
	}
	if algorithms.complex["COMPLEX_INLINE"] == nil {
		t.Error("COMPLEX_INLINE is not registered as a complex algorithm")
	}
}

func TestInlineAlgorithmOne(t *testing.T) {
	tables := []string{"t_order_0", "t_order_1", "t_order_2", "t_order_3"}
	tests := []struct {
		expr    string
		targets []string
		v       any
		want    int
	}{
		{"t_order_${order_id % 4}", tables, 10, 2},
		{"t_order_${order_id % 4}", tables, int64(7), 3},
		{"t_order_${order_id % 4}", tables, -3, -1}, // Java: -3 % 4 = -3, no t_order_-3
		{"t_order_${ORDER_ID % 4}", tables, 0, 0},
		{"${'t_order_' + (order_id % 4)}", tables, 5, 1},
		{"t_order_${order_id}", tables, 3, 3},
		{"t_order_${order_id}", tables, 9, -1},
		{"t_order_${order_id}", tables, "2", 2}, // a string value takes the general path
		{"t_order_${order_id.intdiv(10) % 4}", tables, 35, 3},
		{"t_order_${Math.abs(order_id.hashCode()) % 4}", tables, "hello", 2}, // 99162322 % 4
		// Math.abs(Integer.MIN_VALUE) is Integer.MIN_VALUE, and MIN_VALUE % 4 == 0
		{"t_order_${Math.abs(order_id.hashCode()) % 4}", tables, "polygenelubricants", 0},
		{"t_order_${Math.abs(order_id.hashCode()) % 3}", tables, "polygenelubricants", -1}, // -2
		{"ds_${order_id % 2 + 1}", []string{"ds_1", "ds_2"}, 4, 0},
		{"ds_${order_id % 2 + 1}", []string{"ds_1", "ds_2"}, -1, -1}, // -1 % 2 + 1 = 0
		{"t_order_${order_id % 2}_${order_id % 2}", []string{"t_order_0_0", "t_order_1_1"}, 3, 1},
	}
	for _, tt := range tests {
		f, err := newInlineAlgorithm(inlineSpec(tt.expr, tt.targets...))
		if err != nil {
			t.Errorf("%q: %v", tt.expr, err)
			continue
		}
		got, err := f.one(mustValues(t, tt.v)[0])
		if err != nil || got != tt.want {
			t.Errorf("%q.one(%v) = %d, %v; want %d", tt.expr, tt.v, got, err, tt.want)
		}
	}
}

func TestInlineAlgorithmValueErrors(t *testing.T) {
	f, err := newInlineAlgorithm(inlineSpec("t_${order_id % 2}", "t_0", "t_1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"abc", 1.5, uint64(1) << 63} {
		got, err := f.one(mustValues(t, v)[0])
		var ie *inlineError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), `INLINE algorithm "t_${order_id % 2}"`) {
			t.Errorf("one(%v) = %d, %v; want an *inlineError naming the algorithm", v, got, err)
		}
	}
	// The router can name the missing target.
	name, err := f.(*inlineAlgo).target(mustValues(t, -3)[0])
	if err != nil || name != "t_-1" {
		t.Errorf("target(-3) = %q, %v; want t_-1", name, err)
	}
}

func TestInlineAlgorithmZeroAllocs(t *testing.T) {
	targets := make([]string, 16)
	for i := range targets {
		targets[i] = "t_order_" + strconv.Itoa(i)
	}
	for _, expr := range []string{
		"t_order_${order_id % 16}",
		"t_order_${(order_id.intdiv(1000)) % 16}",
		"t_order_${Math.abs(order_id.hashCode()) % 16}",
		"${'t_order_' + order_id % 16}",
	} {
		f, err := newInlineAlgorithm(inlineSpec(expr, targets...))
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		if f.(*inlineAlgo).fast == nil {
			t.Fatalf("%q: no fast path", expr)
		}
		v := value{kind: kindInt, i: 123456789}
		var sink int
		allocs := testing.AllocsPerRun(1000, func() {
			v.i++
			i, err := f.one(v)
			if err != nil {
				panic(err)
			}
			sink += i
		})
		if allocs != 0 {
			t.Errorf("%q: one allocates %v times per call", expr, allocs)
		}
		// and it agrees with building the name
		for _, x := range probeInts {
			i, err := f.one(value{kind: kindInt, i: x})
			name, nerr := f.(*inlineAlgo).target(value{kind: kindInt, i: x})
			if err != nil || nerr != nil {
				t.Fatalf("%q at %d: %v, %v", expr, x, err, nerr)
			}
			want := -1
			for k, tn := range targets {
				if tn == name {
					want = k
					break
				}
			}
			if i != want {
				t.Errorf("%q at %d: one = %d, name %q is target %d", expr, x, i, name, want)
			}
		}
	}
}

func TestInlineAlgorithmStringZeroAllocs(t *testing.T) {
	targets := []string{"t_0", "t_1", "t_2"}
	f, err := newInlineAlgorithm(inlineSpec("t_${Math.abs(order_id.hashCode()) % 3}", targets...))
	if err != nil {
		t.Fatal(err)
	}
	if f.(*inlineAlgo).strFast == nil {
		t.Fatal("no string fast path")
	}
	v := value{kind: kindString, s: "customer-42"}
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := f.one(v); err != nil {
			panic(err)
		}
	}); n != 0 {
		t.Errorf("one allocates %v times per call", n)
	}
	for _, s := range []string{"hello", "polygenelubricants", "订单", ""} {
		i, err := f.one(value{kind: kindString, s: s})
		name, nerr := f.(*inlineAlgo).target(value{kind: kindString, s: s})
		if err != nil || nerr != nil {
			t.Fatal(err, nerr)
		}
		want := -1
		for k, tn := range targets {
			if tn == name {
				want = k
			}
		}
		if i != want {
			t.Errorf("one(%q) = %d, name %q is target %d", s, i, name, want)
		}
	}
}

func TestInlineAlgorithmRange(t *testing.T) {
	expr := "t_order_${order_id % 2}"
	f, err := newInlineAlgorithm(inlineSpec(expr, "t_order_0", "t_order_1"))
	if err != nil {
		t.Fatal(err)
	}
	r := span{lo: bound{v: value{kind: kindInt, i: 1}, set: true, inclusive: true}}
	_, err = f.within(r, nil)
	want := `shardconf: INLINE algorithm "t_order_${order_id % 2}" cannot route a range on order_id; set allow-range-query-with-inline-sharding: true to scatter`
	if err == nil || err.Error() != want {
		t.Errorf("within error = %v, want %s", err, want)
	}
	spec := inlineSpec(expr, "t_order_0", "t_order_1")
	spec.props["allow-range-query-with-inline-sharding"] = "true"
	f, err = newInlineAlgorithm(spec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.within(r, []int{9})
	if err != nil || !reflect.DeepEqual(got, []int{9, 0, 1}) {
		t.Errorf("within = %v, %v; want [9 0 1]", got, err)
	}
}

func TestInlineAlgorithmProps(t *testing.T) {
	tables := []string{"t_0", "t_1", "t_2", "t_3"}
	tests := []struct {
		name    string
		props   map[string]string
		column  string
		targets []string
		key     string // the propError key
		msg     string
	}{
		{"missing expression", map[string]string{}, "id", tables, "algorithm-expression", "required"},
		{"blank expression", map[string]string{"algorithm-expression": "  "}, "id", tables, "algorithm-expression", "required"},
		{"unknown prop", map[string]string{"algorithm-expression": "t_${id % 4}", "sharding-count": "4"}, "id", tables, "sharding-count", "unknown prop"},
		{"bad bool", map[string]string{"algorithm-expression": "t_${id % 4}", "allow-range-query-with-inline-sharding": "yes"}, "id", tables, "allow-range-query-with-inline-sharding", "true"},
		{"syntax", map[string]string{"algorithm-expression": "t_${id / 4}"}, "id", tables, "algorithm-expression", "offset 7"},
		{"wrong column", map[string]string{"algorithm-expression": "t_${user_id % 4}"}, "id", tables, "algorithm-expression", "sharding column is id"},
		{"two columns", map[string]string{"algorithm-expression": "t_${id % 2}${user_id % 2}"}, "id", tables, "algorithm-expression", "COMPLEX_INLINE"},
		{"no column", map[string]string{"algorithm-expression": "t_0"}, "id", tables, "algorithm-expression", "uses no column"},
		{"no target at all", map[string]string{"algorithm-expression": "x_${id % 8}"}, "id", tables, "algorithm-expression", `builds no target name for the values 0..9999 (the first is x_0`},
	}
	for _, tt := range tests {
		_, err := newInlineAlgorithm(algoSpec{typ: "INLINE", props: tt.props, targets: tt.targets, column: tt.column})
		var pe *propError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *propError", tt.name, err)
			continue
		}
		if pe.key != tt.key || !strings.Contains(pe.Error(), tt.msg) {
			t.Errorf("%s: %v; want key %q and %q", tt.name, err, tt.key, tt.msg)
		}
	}
	// Valid: a case-insensitive column, a bool in any case, an expression
	// that is not a remainder (values are not enumerable) over few targets.
	for _, props := range []map[string]string{
		{"algorithm-expression": "t_${ID % 4}", "allow-range-query-with-inline-sharding": "TRUE"},
		{"algorithm-expression": "t_${id}", "allow-range-query-with-inline-sharding": "false"},
		{"algorithm-expression": "t_${id.intdiv(100000) % 4}"},
		{"algorithm-expression": "<GROOVY>t_$->{id % 4}"},
		{"algorithm-expression": "t_${Math.abs(id.hashCode()) % 4}"},
	} {
		if _, err := newInlineAlgorithm(algoSpec{typ: "INLINE", props: props, targets: tables, column: "Id"}); err != nil {
			t.Errorf("%v: %v", props, err)
		}
	}
}

func complexSpec(expr string, columns []string, targets ...string) algoSpec {
	return algoSpec{
		typ:     "COMPLEX_INLINE",
		props:   map[string]string{"algorithm-expression": expr},
		targets: targets,
		columns: columns,
	}
}

func TestComplexInlineAlgorithm(t *testing.T) {
	targets := []string{"t_order_0_0", "t_order_0_1", "t_order_1_0", "t_order_1_1"}
	f, err := newComplexInlineAlgorithm(complexSpec("t_order_${order_id % 2}_${user_id % 2}", []string{"user_id", "order_id"}, targets...))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.columns(); !reflect.DeepEqual(got, []string{"user_id", "order_id"}) {
		t.Errorf("columns = %q", got)
	}
	tests := []struct {
		vs   []any // user_id, order_id
		want int
	}{
		{[]any{4, 3}, 2},
		{[]any{5, 3}, 3},
		{[]any{"x", 3}, -2}, // error: string % 2
		{[]any{-1, 3}, -1},
	}
	for _, tt := range tests {
		got, err := f.one(mustValues(t, tt.vs...))
		if tt.want == -2 {
			if err == nil {
				t.Errorf("one(%v) = %d, want an error", tt.vs, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("one(%v) = %d, %v; want %d", tt.vs, got, err, tt.want)
		}
	}
	if _, err := f.one(mustValues(t, 1)); err == nil {
		t.Error("one with too few values: want an error")
	}
	if f.(*complexInlineAlgo).allowsRange() {
		t.Error("allowsRange defaults to true")
	}

	// sharding-columns sets the order of values; the expression may leave
	// one out; string values concatenate.
	spec := complexSpec("${region}_${order_id % 2}", nil, "eu_0", "eu_1", "us_0")
	spec.props["sharding-columns"] = "order_id, Region, user_id"
	spec.props["allow-range-query-with-inline-sharding"] = "true"
	f, err = newComplexInlineAlgorithm(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.columns(); !reflect.DeepEqual(got, []string{"order_id", "Region", "user_id"}) {
		t.Errorf("columns = %q", got)
	}
	if got, err := f.one(mustValues(t, 5, "eu", 0)); err != nil || got != 1 {
		t.Errorf("one(5, eu, 0) = %d, %v; want 1", got, err)
	}
	if got, err := f.one(mustValues(t, 5, "us", 0)); err != nil || got != -1 {
		t.Errorf("one(5, us, 0) = %d, %v; want -1", got, err)
	}
	if !f.(*complexInlineAlgo).allowsRange() {
		t.Error("allowsRange = false")
	}
	name, err := f.(*complexInlineAlgo).target(mustValues(t, 5, "us", 0))
	if err != nil || name != "us_1" {
		t.Errorf("target = %q, %v", name, err)
	}
}

func TestComplexInlineAlgorithmProps(t *testing.T) {
	tests := []struct {
		name    string
		props   map[string]string
		columns []string
		key     string
		msg     string
	}{
		{"missing expression", map[string]string{}, []string{"a"}, "algorithm-expression", "required"},
		{"unknown prop", map[string]string{"algorithm-expression": "t_${a}", "x": "1"}, []string{"a"}, "x", "unknown prop"},
		{"bad bool", map[string]string{"algorithm-expression": "t_${a}", "allow-range-query-with-inline-sharding": "1"}, []string{"a"}, "allow-range-query-with-inline-sharding", "true"},
		{"no columns", map[string]string{"algorithm-expression": "t_${a}"}, nil, "sharding-columns", "no sharding columns"},
		{"column not listed", map[string]string{"algorithm-expression": "t_${a}_${c}"}, []string{"a", "b"}, "algorithm-expression", "uses column c"},
		{"prop differs", map[string]string{"algorithm-expression": "t_${a}", "sharding-columns": "a,c"}, []string{"a", "b"}, "sharding-columns", "differs"},
		{"empty column", map[string]string{"algorithm-expression": "t_${a}", "sharding-columns": "a,,b"}, nil, "sharding-columns", "empty column"},
		{"duplicate column", map[string]string{"algorithm-expression": "t_${a}", "sharding-columns": "a,A"}, nil, "sharding-columns", "twice"},
		{"syntax", map[string]string{"algorithm-expression": "t_${a % 0}"}, []string{"a"}, "algorithm-expression", "division by zero"},
	}
	for _, tt := range tests {
		_, err := newComplexInlineAlgorithm(algoSpec{typ: "COMPLEX_INLINE", props: tt.props, columns: tt.columns, targets: []string{"t_0"}})
		var pe *propError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *propError", tt.name, err)
			continue
		}
		if pe.key != tt.key || !strings.Contains(pe.Error(), tt.msg) {
			t.Errorf("%s: %v; want key %q and %q", tt.name, err, tt.key, tt.msg)
		}
	}
	// the prop may agree with the strategy in another case and order
	spec := complexSpec("t_${a % 2}_${b % 2}", []string{"a", "b"}, "t_0_0")
	spec.props["sharding-columns"] = "B, A"
	if _, err := newComplexInlineAlgorithm(spec); err != nil {
		t.Error(err)
	}
}

func BenchmarkInlineOneInt(b *testing.B) {
	f, err := newInlineAlgorithm(inlineSpec("t_order_${order_id % 4}", "t_order_0", "t_order_1", "t_order_2", "t_order_3"))
	if err != nil {
		b.Fatal(err)
	}
	v := value{kind: kindInt}
	for b.Loop() {
		v.i++
		if _, err := f.one(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInlineOneString(b *testing.B) {
	f, err := newInlineAlgorithm(inlineSpec("t_order_${Math.abs(order_id.hashCode()) % 4}", "t_order_0", "t_order_1", "t_order_2", "t_order_3"))
	if err != nil {
		b.Fatal(err)
	}
	v := value{kind: kindString, s: "customer-42"}
	for b.Loop() {
		if _, err := f.one(v); err != nil {
			b.Fatal(err)
		}
	}
}
