package shardconf

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestExpandInline(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{"t_order", []string{"t_order"}},
		{"ds_${0..1}.t_order_${0..3}", []string{
			"ds_0.t_order_0", "ds_0.t_order_1", "ds_0.t_order_2", "ds_0.t_order_3",
			"ds_1.t_order_0", "ds_1.t_order_1", "ds_1.t_order_2", "ds_1.t_order_3",
		}},
		{"ds_$->{0..1}.t_$->{0..1}", []string{"ds_0.t_0", "ds_0.t_1", "ds_1.t_0", "ds_1.t_1"}},
		{"ds_${0..1}.t_$->{[2, 3]}", []string{"ds_0.t_2", "ds_0.t_3", "ds_1.t_2", "ds_1.t_3"}},
		{"t_${['a','b']}", []string{"t_a", "t_b"}},
		{`t_${["x", 'y']}`, []string{"t_x", "t_y"}},
		{"t_${[0,1]}", []string{"t_0", "t_1"}},
		{"t_${[0, 1, ]}", []string{"t_0", "t_1"}},
		{"t_${[-1, 'z']}", []string{"t_-1", "t_z"}},
		{"t_${3..0}", []string{"t_3", "t_2", "t_1", "t_0"}},
		{"t_${0..<3}", []string{"t_0", "t_1", "t_2"}},
		{"t_${3..<0}", []string{"t_3", "t_2", "t_1"}},
		{"t_${-1..1}", []string{"t_-1", "t_0", "t_1"}},
		{"t_${2..2}", []string{"t_2"}},
		{"t_${'a'..'c'}", []string{"t_a", "t_b", "t_c"}},
		{"t_${'c'..'a'}", []string{"t_c", "t_b", "t_a"}},
		{"t_${'x'}", []string{"t_x"}},
		{"t_${7}", []string{"t_7"}},
		{"t_${ ( 0 .. 1 ) }", []string{"t_0", "t_1"}},
		{"ds_0.t_${0..1},ds_1.t_${2..3}", []string{"ds_0.t_0", "ds_0.t_1", "ds_1.t_2", "ds_1.t_3"}},
		{" ds_0.t_0 ,\n\tds_1.t_1 ", []string{"ds_0.t_0", "ds_1.t_1"}},
		{"${['online', 'offline']}_table${1..3}", []string{
			"online_table1", "online_table2", "online_table3",
			"offline_table1", "offline_table2", "offline_table3",
		}},
		// commas inside ${} do not split, not even inside quotes
		{"t_${['a,b','c']}", []string{"t_a,b", "t_c"}},
		{"t_${'}'}", []string{"t_}"}},
		// trimming only touches literal text, never a segment's value
		{"  ${' a '}  ", []string{" a "}},
		{"t_${'\\u8ba2\\u5355'}", []string{"t_订单"}},
		{"订单_${0..1}", []string{"订单_0", "订单_1"}},
		{"ds_${0..1}.t_${0..1}_${['x','y']}", []string{
			"ds_0.t_0_x", "ds_0.t_0_y", "ds_0.t_1_x", "ds_0.t_1_y",
			"ds_1.t_0_x", "ds_1.t_0_y", "ds_1.t_1_x", "ds_1.t_1_y",
		}},
		{"<GROOVY>t_${1..2}", []string{"t_1", "t_2"}},
		{"<LITERAL>t_${1..3}, t_x ,y", []string{"t_${1..3}", "t_x", "y"}},
		// text without a segment is split and trimmed, nothing else
		{"a,,b", []string{"a", "b"}},
		{"a, ,b,", []string{"a", "b"}},
		{"t_$x", []string{"t_$x"}},
		{"t_${1},", []string{"t_1"}},
		// Groovy's '..' binds more loosely than '+'
		{"t_${0..1 + 1}", []string{"t_0", "t_1", "t_2"}},
		{"ds_${0..999}", nil}, // length checked below
	}
	for _, tt := range tests {
		got, err := expandInline(tt.expr)
		if err != nil {
			t.Errorf("expandInline(%q): %v", tt.expr, err)
			continue
		}
		if tt.want == nil {
			if len(got) != 1000 || got[0] != "ds_0" || got[999] != "ds_999" {
				t.Errorf("expandInline(%q) = %d names, first %q", tt.expr, len(got), got[0])
			}
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("expandInline(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

func TestExpandInlineErrors(t *testing.T) {
	tests := []struct {
		expr   string
		offset int
		msg    string // a part of the message
	}{
		{"", 0, "empty expression"},
		{"   ", 0, "empty expression"},
		{"t_${0..3", 2, "unclosed ${"},
		{"t_$->{0..3", 2, "unclosed $->{"},
		{"a,t_${[0,1]", 4, "unclosed"},
		{"t_${a..3}", 4, "identifier"},
		{"t_${0..b}", 7, "identifier"},
		{"t_${}", 2, "empty ${}"},
		{"t_$->{ }", 2, "empty $->{}"},
		{"t_${1},,b", 7, "empty item"},
		{"t_${1}, ,b", 8, "empty item"},
		{"t_${1},b, ", 10, "empty item"},
		{"t_${1}$x", 6, "'$' must start"},
		{"t_${0..3}$", 9, "'$' must start"},
		{"t_${01}", 4, "leading zero"},
		{"t_${1.5}", 4, "floating-point"},
		{"t_${0x10}", 4, "malformed number"},
		{"t_${99999999999999999999}", 4, "out of Long range"},
		{"t_${[]}", 4, "empty list"},
		{"t_${[0..1]}", 6, "range inside a list"},
		{"t_${[0 1]}", 7, "expected ',' or ']'"},
		{"t_${0..<0}", 5, "empty range"},
		{"t_${'ab'..'c'}", 4, "single characters"},
		{"t_${'a'..1}", 7, "mixes"},
		{"t_${'abc}", 4, "unterminated string"},
		{"t_${\"a${x}\"}", 8, "identifier"},
		{"t_${'\\q'}", 5, "escape"},
		{"t_${0..3 1}", 9, "expected '}'"},
		{"t_${{0}}", 4, "closure without parameters"},
		{"t_${-> 1}", 7, "closure"},
		{"t_${0..2000000}", 4, "more than 1000000"},
		{"t_${0..999}_${0..9999}", 12, "more than 1000000"},
		{"t_${-9223372036854775807..9223372036854775807}", 4, "more than 1000000"},
		{"a_${0..999999},b_${0..1}", 15, "more than 1000000"},
		{"<FOO>x", 0, "unsupported inline expression type"},
		{"<LITERAL>a,,b", 11, "empty item"},
		{"<GROOVY>", 8, "empty expression"},
	}
	for _, tt := range tests {
		got, err := expandInline(tt.expr)
		var ie *inlineError
		if !errors.As(err, &ie) {
			t.Errorf("expandInline(%q) = %q, %v; want an *inlineError", tt.expr, got, err)
			continue
		}
		if ie.Offset != tt.offset || !strings.Contains(ie.Msg, tt.msg) {
			t.Errorf("expandInline(%q): %v; want offset %d and %q", tt.expr, err, tt.offset, tt.msg)
		}
		if want := fmt.Sprintf("offset %d: ", ie.Offset); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("expandInline(%q): Error() = %q, want prefix %q", tt.expr, err.Error(), want)
		}
	}
}

// Vectors printed by OpenJDK 17 (String.hashCode, Long.hashCode).
func TestJavaHashes(t *testing.T) {
	strs := []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"hello", 99162322},
		{"ShardingSphere", 342650961},
		{"订单", 1129459},
		{"😀", 1772899},
		{"a😀b", 57849694},
		{"t_order_1", 1939794613},
		{"Aa", 2112},
		{"BB", 2112},
		{"polygenelubricants", math.MinInt32},
		{"été", 227742},
		{"abcdefghijklmnopqrstuvwxyz0123456789", 1478768498},
		{"\xff", 0xFFFD}, // invalid UTF-8 decodes to U+FFFD, as in Java
	}
	for _, tt := range strs {
		if got := javaStringHash(tt.s); got != tt.want {
			t.Errorf("javaStringHash(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
	longs := []struct {
		v    int64
		want int32
	}{
		{0, 0}, {1, 1}, {-1, 0}, {1 << 32, 1},
		{math.MinInt64, math.MinInt32}, {math.MaxInt64, math.MinInt32},
		{123456789012345, -2045923535}, {-123456789012345, -2045923536},
		{4294967295, -1}, {-4294967296, -1},
	}
	for _, tt := range longs {
		if got := javaLongHash(tt.v); got != tt.want {
			t.Errorf("javaLongHash(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { javaStringHash("a😀b订单") }); n != 0 {
		t.Errorf("javaStringHash allocates %v times", n)
	}
}

func mustValues(t testing.TB, vs ...any) []value {
	t.Helper()
	out := make([]value, len(vs))
	for i, v := range vs {
		x, err := toValue(v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = x
	}
	return out
}

func TestCompileInlineEval(t *testing.T) {
	tests := []struct {
		expr string
		cols []string
		vals []any
		want string
	}{
		{"t_order_${order_id % 4}", []string{"order_id"}, []any{10}, "t_order_2"},
		{"t_order_${order_id % 4}", []string{"order_id"}, []any{int64(-3)}, "t_order_-3"},
		{"ds_${user_id % 2}", []string{"user_id"}, []any{-3}, "ds_-1"}, // Java remainder
		{"ds_$->{user_id % 2}", []string{"user_id"}, []any{7}, "ds_1"},
		{"t_${(order_id.intdiv(10)) % 4}", []string{"order_id"}, []any{123}, "t_0"},
		{"t_${order_id.intdiv(10) % 4}", []string{"order_id"}, []any{-15}, "t_-1"}, // truncating
		{"t_${Math.abs(name.hashCode()) % 3}", []string{"name"}, []any{"hello"}, "t_1"},
		// Math.abs(Integer.MIN_VALUE) is negative in Java
		{"t_${Math.abs(name.hashCode()) % 3}", []string{"name"}, []any{"polygenelubricants"}, "t_-2"},
		{"t_${Math.abs(name.hashCode())}", []string{"name"}, []any{"polygenelubricants"}, "t_-2147483648"},
		{"t_${name.hashCode()}", []string{"name"}, []any{"订单"}, "t_1129459"},
		{"t_${id.hashCode()}", []string{"id"}, []any{int64(1) << 32}, "t_1"},
		{"t_${id.hashCode()}", []string{"id"}, []any{-1}, "t_0"},
		{"t_${id.hashCode().hashCode()}", []string{"id"}, []any{int64(123456789012345)}, "t_-2045923535"},
		{"ds_${user_id % 2 + 1}", []string{"user_id"}, []any{5}, "ds_2"},
		{"t_order_${order_id % 2}_${user_id % 2}", []string{"order_id", "user_id"}, []any{3, 4}, "t_order_1_0"},
		{"t_${USER_ID % 2}_${Order_Id % 2}_${user_id % 3}", []string{"user_id", "order_id"}, []any{5, 2}, "t_1_0_2"},
		{"${'t_' + (id % 4)}", []string{"id"}, []any{7}, "t_3"},
		{"${'t_' + id % 4}", []string{"id"}, []any{7}, "t_3"},
		{"${'t_' + id + 1}", []string{"id"}, []any{7}, "t_71"}, // (('t_' + id) + 1)
		{"${id + 1 + '_t'}", []string{"id"}, []any{7}, "8_t"},
		{"${\"t_\" + id}", []string{"id"}, []any{"abc"}, "t_abc"},
		{"t_${id}", []string{"id"}, []any{"abc"}, "t_abc"},
		{"t_${ID % 4}", []string{"id"}, []any{6}, "t_2"},
		{"t_${id * 2}", []string{"id"}, []any{int64(math.MaxInt64)}, "t_-2"}, // Long wraps
		{"t_${2147483647 + 1}", nil, nil, "t_-2147483648"},                   // Integer wraps
		{"t_${2147483647L + 1}", nil, nil, "t_2147483648"},
		{"t_${2147483648 + 1}", nil, nil, "t_2147483649"}, // a literal beyond int is a Long
		{"t_${-3 % 2}", nil, nil, "t_-1"},
		{"t_${7.intdiv(-2)}", nil, nil, "t_-3"},
		{"t_${-id % 3}", []string{"id"}, []any{4}, "t_-1"},
		{"t_${- -id}", []string{"id"}, []any{4}, "t_4"},
		{"t_${+id}", []string{"id"}, []any{4}, "t_4"},
		{"t_${Math.abs(id)}", []string{"id"}, []any{int64(math.MinInt64)}, "t_-9223372036854775808"},
		{"t_${id.abs()}", []string{"id"}, []any{-5}, "t_5"},
		{"t_${id.toString() + 'x'}", []string{"id"}, []any{5}, "t_5x"},
		{"t_${id.toString().hashCode()}", []string{"id"}, []any{1}, "t_49"},
		{"t_${'a\\'b' + \"\\$\"}", nil, nil, "t_a'b$"},
		{"$->{'t_'}${id % 2}", []string{"id"}, []any{3}, "t_1"},
		{"<GROOVY>t_${id % 2}", []string{"id"}, []any{3}, "t_1"},
		{"t_${(a - b) * 3 % 5}", []string{"a", "b"}, []any{10, 3}, "t_1"},
		{"t_${a.intdiv(b)}", []string{"a", "b"}, []any{math.MinInt64, -1}, "t_-9223372036854775808"},
		{"t_${a % b}", []string{"a", "b"}, []any{math.MinInt64, -1}, "t_0"},
		{"t_${ id\n %\t4 }", []string{"id"}, []any{uint8(9)}, "t_1"},
		{"订单_${id % 2}", []string{"id"}, []any{3}, "订单_1"},
		{"t_0", nil, nil, "t_0"},
	}
	for _, tt := range tests {
		e, err := compileInline(tt.expr)
		if err != nil {
			t.Errorf("compileInline(%q): %v", tt.expr, err)
			continue
		}
		if got := e.columns(); !reflect.DeepEqual(got, tt.cols) && (len(got) != 0 || len(tt.cols) != 0) {
			t.Errorf("compileInline(%q).columns() = %q, want %q", tt.expr, got, tt.cols)
		}
		got, err := e.eval(mustValues(t, tt.vals...))
		if err != nil {
			t.Errorf("eval(%q, %v): %v", tt.expr, tt.vals, err)
			continue
		}
		if got != tt.want {
			t.Errorf("eval(%q, %v) = %q, want %q", tt.expr, tt.vals, got, tt.want)
		}
	}
}

func TestCompileInlineErrors(t *testing.T) {
	tests := []struct {
		expr   string
		offset int
		msg    string
	}{
		{"", 0, "empty expression"},
		{"<LITERAL>t_0", 0, "cannot be an algorithm expression"},
		{"t_${id / 2}", 7, "intdiv"},
		{"t_${id % 0}", 7, "division by zero"},
		{"t_${id % (1 - 1)}", 7, "division by zero"},
		{"t_${id.intdiv(0)}", 7, "division by zero"},
		{"t_${id - 'a'}", 7, "not supported on a String"},
		{"t_${id.toString() % 2}", 18, "not supported on a String"},
		{"t_${-'a'}", 4, "not supported on a String"},
		{"t_${Math.abs('a' + id)}", 9, "not supported on a String"},
		{"t_${'a' * 2}", 8, "not supported on a String"},
		{"t_${id.foo()}", 7, "unsupported method"},
		{"t_${id.hashCode}", 7, "parentheses"},
		{"t_${id.hashCode(1)}", 7, "no arguments"},
		{"t_${id.intdiv()}", 7, "1 argument"},
		{"t_${id.intdiv(1, 2)}", 7, "1 argument"},
		{"t_${Math.max(id, 1)}", 9, "Math.max"},
		{"t_${Math}", 4, "not supported here"},
		{"t_${true}", 4, "not supported here"},
		{"t_${id %}", 8, "ends early"},
		{"t_${(id % 2}", 11, "expected ')'"},
		{"t_${id id}", 7, "expected an operator"},
		{"t_${1.5}", 4, "floating-point"},
		{"t_${id % 010}", 9, "leading zero"},
		{"t_${id ** 2}", 7, "**"},
		{"t_${[1]}", 4, "lists are not allowed"},
		{"t_${0..1}", 5, "expected an operator"},
		{"t_${..1}", 4, "ranges are not allowed"},
		{"t_${id", 2, "unclosed ${"},
		{"t_$->{id", 2, "unclosed $->{"},
		{"t_$id", 2, "'$' must start"},
		{"t_${}", 2, "empty ${}"},
		{"t_${id ? 1 : 2}", 7, "unexpected character"},
		{"t_${\"x$id\"}", 6, "must start ${...}"},
		{"t_${'\\ud800'}", 5, "surrogate"},
		{"t_${" + strings.Repeat("(", 100) + "id" + strings.Repeat(")", 100) + "}", 68, "nested too deeply"},
		{"t_${" + strings.Repeat("-", 100) + "id}", 67, "nested too deeply"},
	}
	for _, tt := range tests {
		e, err := compileInline(tt.expr)
		var ie *inlineError
		if !errors.As(err, &ie) {
			t.Errorf("compileInline(%q) = %v, %v; want an *inlineError", tt.expr, e, err)
			continue
		}
		if ie.Offset != tt.offset || !strings.Contains(ie.Msg, tt.msg) {
			t.Errorf("compileInline(%q): %v; want offset %d and %q", tt.expr, err, tt.offset, tt.msg)
		}
	}
}

func TestInlineEvalErrors(t *testing.T) {
	tests := []struct {
		expr   string
		vals   []any
		offset int
		msg    string
	}{
		{"t_${id % 4}", []any{"abc"}, 7, "not supported on a String"},
		{"t_${-id}", []any{"abc"}, 4, "not supported on a String"},
		{"t_${id % 4}", []any{1.5}, 4, "floating-point"},
		{"t_${id}", []any{1.5}, 4, "floating-point"},
		{"t_${id}", []any{uint64(math.MaxUint64)}, 4, "beyond Long range"},
		{"t_${10 % id}", []any{0}, 7, "division by zero"},
		{"t_${10.intdiv(id)}", []any{0}, 7, "division by zero"},
		{"t_${a}_${b}", []any{1}, 0, "given 1 values"},
	}
	for _, tt := range tests {
		e, err := compileInline(tt.expr)
		if err != nil {
			t.Errorf("compileInline(%q): %v", tt.expr, err)
			continue
		}
		got, err := e.eval(mustValues(t, tt.vals...))
		var ie *inlineError
		if !errors.As(err, &ie) {
			t.Errorf("eval(%q, %v) = %q, %v; want an *inlineError", tt.expr, tt.vals, got, err)
			continue
		}
		if ie.Offset != tt.offset || !strings.Contains(ie.Msg, tt.msg) {
			t.Errorf("eval(%q, %v): %v; want offset %d and %q", tt.expr, tt.vals, err, tt.offset, tt.msg)
		}
	}
}

// checkIntTemplate checks that the fast path agrees with eval for x.
func checkIntTemplate(t testing.TB, e *inlineExpr, x int64) {
	t.Helper()
	prefix, suffix, f, ok := e.intTemplate()
	if !ok {
		return
	}
	want, werr := e.eval([]value{{kind: kindInt, i: x}})
	n, err := f(x)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%q at %d: fast path error %v, eval error %v", e.src, x, err, werr)
	}
	if err != nil {
		if err.Error() != werr.Error() {
			t.Fatalf("%q at %d: fast path error %v, eval error %v", e.src, x, err, werr)
		}
		return
	}
	if got := prefix + strconv.FormatInt(n, 10) + suffix; got != want {
		t.Fatalf("%q at %d: fast path %q, eval %q", e.src, x, got, want)
	}
}

// checkStrTemplate checks that the String fast path agrees with eval for s.
func checkStrTemplate(t testing.TB, e *inlineExpr, s string) {
	t.Helper()
	if !e.fast || e.strFn == nil {
		return
	}
	want, werr := e.eval([]value{{kind: kindString, s: s}})
	n, err := e.strFn(s)
	if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("%q at %q: fast path error %v, eval error %v", e.src, s, err, werr)
	}
	if err != nil {
		return
	}
	if got := e.prefix + strconv.FormatInt(n, 10) + e.suffix; got != want {
		t.Fatalf("%q at %q: fast path %q, eval %q", e.src, s, got, want)
	}
}

var probeStrings = []string{"", "hello", "polygenelubricants", "订单", "a😀b", "\xff", "ShardingSphere"}

func TestStrTemplate(t *testing.T) {
	tests := []struct {
		expr string
		ok   bool
	}{
		{"t_${Math.abs(name.hashCode()) % 3}", true},
		{"${'t_' + name.hashCode() % 4 + '_x'}", true},
		{"t_${name.hashCode().hashCode() * 31 + 7L}", true},
		{"t_${(name.hashCode() - 100).intdiv(3).abs()}", true},
		{"t_${name % 4}", false},              // a String % 4 is an error
		{"t_${name}", false},                  // a String, not an integer
		{"t_${(name + 1).hashCode()}", false}, // "abc1".hashCode(): not compiled
		{"t_${name.toString().hashCode()}", false},
	}
	for _, tt := range tests {
		e, err := compileInline(tt.expr)
		if err != nil {
			t.Fatalf("compileInline(%q): %v", tt.expr, err)
		}
		if ok := e.strFn != nil; ok != tt.ok {
			t.Errorf("%q: string fast path = %v, want %v", tt.expr, ok, tt.ok)
		}
		for _, s := range probeStrings {
			checkStrTemplate(t, e, s)
		}
		if e.strFn != nil {
			if n := testing.AllocsPerRun(100, func() { _, _ = e.strFn("a😀b") }); n != 0 {
				t.Errorf("%q: strFn allocates %v times", tt.expr, n)
			}
		}
	}
}

var probeInts = []int64{0, 1, 2, 3, 7, 10, 99, -1, -2, -3, -10, 1 << 31, -1 << 31, 1<<31 - 1,
	1 << 32, 123456789012345, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}

func TestIntTemplate(t *testing.T) {
	tests := []struct {
		expr           string
		ok             bool
		prefix, suffix string
		at             int64
		want           int64
	}{
		{"t_order_${order_id % 4}", true, "t_order_", "", 10, 2},
		{"t_order_${order_id % 4}", true, "t_order_", "", -3, -3},
		{"t_${(order_id.intdiv(10)) % 4}", true, "t_", "", 123, 0},
		{"t_${Math.abs(id.hashCode()) % 3}", true, "t_", "", 1 << 32, 1},
		{"ds_${user_id % 2 + 1}", true, "ds_", "", 5, 2},
		{"${'t_' + (id % 4)}", true, "t_", "", 7, 3},
		{"${'t_' + id % 4 + '_x'}", true, "t_", "_x", 7, 3},
		{"t_${'a'}${id % 4}${'b'}_c", true, "t_a", "b_c", 6, 2},
		{"$->{'t'}_${id}", true, "t_", "", 42, 42},
		{"t_${id * 3 - 1}", true, "t_", "", 2, 5},
		{"t_${-id}", true, "t_", "", 2, -2},
		{"t_${id.hashCode()}", true, "t_", "", -1, 0},
		{"t_${id % 2}_${id % 3}", false, "", "", 0, 0},
		{"t_${a % 2}_${b % 2}", false, "", "", 0, 0},
		{"t_${id.toString()}", true, "t_", "", 42, 42},
		{"t_${\"x${id % 4}\"}", true, "t_x", "", 7, 3},
		{"${'t_' + id + 1}", true, "t_", "1", 7, 7}, // (('t_' + id) + 1): "t_71"
		{"t_${'x'}", false, "", "", 0, 0},
		{"t_0", false, "", "", 0, 0},
	}
	for _, tt := range tests {
		e, err := compileInline(tt.expr)
		if err != nil {
			t.Fatalf("compileInline(%q): %v", tt.expr, err)
		}
		prefix, suffix, f, ok := e.intTemplate()
		if ok != tt.ok {
			t.Errorf("%q: intTemplate ok = %v, want %v", tt.expr, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if prefix != tt.prefix || suffix != tt.suffix {
			t.Errorf("%q: intTemplate = %q, %q; want %q, %q", tt.expr, prefix, suffix, tt.prefix, tt.suffix)
		}
		if n, err := f(tt.at); err != nil || n != tt.want {
			t.Errorf("%q: f(%d) = %d, %v; want %d", tt.expr, tt.at, n, err, tt.want)
		}
		for _, x := range probeInts {
			checkIntTemplate(t, e, x)
		}
		if allocs := testing.AllocsPerRun(100, func() { _, _ = f(tt.at) }); allocs != 0 {
			t.Errorf("%q: f allocates %v times", tt.expr, allocs)
		}
	}
}

// The fast path of an expression whose divisor is a column reports the
// same error as eval, without allocating.
func TestIntTemplateDivisionByZero(t *testing.T) {
	e, err := compileInline("t_${100 % (id - 5)}")
	if err != nil {
		t.Fatal(err)
	}
	_, _, f, ok := e.intTemplate()
	if !ok {
		t.Fatal("want an int template")
	}
	_, err = f(5)
	var ie *inlineError
	if !errors.As(err, &ie) || ie.Offset != 8 {
		t.Fatalf("f(5) error = %v, want division by zero at offset 8", err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = f(5) }); n != 0 {
		t.Errorf("error path allocates %v times", n)
	}
	checkIntTemplate(t, e, 5)
	checkIntTemplate(t, e, 7)
}

func TestIntTargetIndex(t *testing.T) {
	idx := intTargetIndex("t_", "_x", []string{"t_0_x", "t_01_x", "t_-1_x", "t_-0_x", "t_+2_x", "u_3_x", "t_4", "t_5_x", "t_5_x", "t__x"})
	want := map[int64]int{0: 0, -1: 2, 5: 7}
	if !reflect.DeepEqual(idx, want) {
		t.Errorf("intTargetIndex = %v, want %v", idx, want)
	}
}

func FuzzExpandInline(f *testing.F) {
	for _, s := range []string{
		"ds_${0..1}.t_order_${0..3}", "ds_$->{0..1}.t_$->{[0, 1]}", "t_${3..0}", "t_${0..<3}",
		"a,b , c", "t_${['a,b', \"c\"]}", "t_${'a'..'c'}", "<LITERAL>a,b", "<GROOVY>t_${1..2}",
		"t_${0..3", "t_${a..3}", "", "t_${}", "t_$", "t_${-1..1}", "t_${'\\u8ba2'}", "${(0..1)}",
		"t_${[\"new${1+2}\",'old']}_${1..2}", "t_${null}_${[0,0,1]}", "${1+2}", "\"t_${0..1}\",x",
		"<INTERVAL>P=t_;SP=yyyy_MM;DIA=1;DIU=Months;DL=2023_01;DU=2023_06",
		"<INTERVAL>P=t_;SP=HH_mm;DIA=-7;DIU=Minutes;DL=23_59;DU=00_00", "<INTERVAL>P=t_;SP=MM;DIA=5;DIU=Days;DL=12;DU=01",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		names, err := expandInline(expr)
		if err != nil {
			var ie *inlineError
			if !errors.As(err, &ie) {
				t.Fatalf("expandInline(%q): error %T %v is not an *inlineError", expr, err, err)
			}
			if ie.Offset < 0 || ie.Offset > len(expr) {
				t.Fatalf("expandInline(%q): offset %d out of [0, %d]", expr, ie.Offset, len(expr))
			}
			return
		}
		if len(names) == 0 || len(names) > maxInlineNames {
			t.Fatalf("expandInline(%q) gave %d names", expr, len(names))
		}
	})
}

func FuzzCompileInline(f *testing.F) {
	for _, s := range []string{
		"t_order_${order_id % 4}", "ds_${user_id % 2}", "t_${(order_id.intdiv(10)) % 4}",
		"t_${Math.abs(name.hashCode()) % 3}", "ds_${user_id % 2 + 1}", "t_order_${order_id % 2}_${user_id % 2}",
		"${'t_' + (id % 4)}", "$->{'t_' + id + 1}", "t_${-id * 3 - 7}", "t_${id.hashCode().abs()}",
		"t_${2147483647 + id.hashCode()}", "t_${100 % (id - 5)}", "t_${id.toString()}", "t_${id / 2}",
		"t_${id", "t_${'a\\u00e9'}", "t_${Math.abs(id) % 3L}",
		"t_${\"x${id % 2}\"}", "t_${-> id % 2}", "t_${{-> id}}", "t_${null}", "t_${\"${null}\"}",
		"a_${Math.floorMod(Math.floorDiv(id.longValue(), 2L), 2L)}", "t_${Math.floorMod(id, 3).intValue()}",
		"ds_${Integer.valueOf(value) % 2}", "t_${Long.parseLong(id) + 1}",
	} {
		f.Add(s, int64(7), "abc")
	}
	f.Fuzz(func(t *testing.T, expr string, x int64, s string) {
		e, err := compileInline(expr)
		if err != nil {
			var ie *inlineError
			if !errors.As(err, &ie) {
				t.Fatalf("compileInline(%q): error %T %v is not an *inlineError", expr, err, err)
			}
			if ie.Offset < 0 || ie.Offset > len(expr) {
				t.Fatalf("compileInline(%q): offset %d out of [0, %d]", expr, ie.Offset, len(expr))
			}
			return
		}
		n := len(e.columns())
		for _, v := range []value{{kind: kindInt, i: x}, {kind: kindString, s: s}, {kind: kindFloat, f: 1.5}} {
			vals := make([]value, n)
			for i := range vals {
				vals[i] = v
			}
			if _, err := e.eval(vals); err != nil {
				var ie *inlineError
				if !errors.As(err, &ie) || ie.Offset < 0 || ie.Offset > len(expr) {
					t.Fatalf("eval(%q): bad error %T %v", expr, err, err)
				}
			}
		}
		checkIntTemplate(t, e, x)
		checkIntTemplate(t, e, -x)
		checkIntTemplate(t, e, 0)
		checkStrTemplate(t, e, s)
	})
}
