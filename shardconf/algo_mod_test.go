package shardconf

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"
)

// ---- helpers shared by the algo_*_test.go files ----

func atNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func atCompile(t *testing.T, typ string, props map[string]string, targets []string) shardFunc {
	t.Helper()
	f, err := atTry(typ, props, targets)
	if err != nil {
		t.Fatalf("%s %v: %v", typ, props, err)
	}
	return f
}

func atTry(typ string, props map[string]string, targets []string) (shardFunc, error) {
	return atTrySpec(algoSpec{typ: typ, props: props, targets: targets})
}

func atTrySpec(spec algoSpec) (shardFunc, error) {
	f, ok := algorithms.standard[spec.typ]
	if !ok {
		return nil, fmt.Errorf("type %s not registered", spec.typ)
	}
	return f(spec)
}

func atVal(t *testing.T, v any) value {
	t.Helper()
	x, err := toValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// atName routes v and returns the target's name, "" for no route, or
// "error" for an error.
func atName(t *testing.T, f shardFunc, targets []string, v any) string {
	t.Helper()
	x, err := toValue(v) // NaN, NULL, beyond 64 bits: refused before any algorithm
	if err != nil {
		return "error"
	}
	i, err := f.one(x)
	if err != nil {
		return "error"
	}
	if i < 0 {
		return ""
	}
	return targets[i]
}

// atRange routes a range; nil lo or hi is unbounded. It returns the sorted
// distinct target names, or "error".
func atRange(t *testing.T, f shardFunc, targets []string, lo any, loIn bool, hi any, hiIn bool) string {
	t.Helper()
	var s span
	if lo != nil {
		s.lo = bound{v: atVal(t, lo), set: true, inclusive: loIn}
	}
	if hi != nil {
		s.hi = bound{v: atVal(t, hi), set: true, inclusive: hiIn}
	}
	idx, err := f.within(s, nil)
	if err != nil {
		return "error"
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	names := make([]string, len(idx))
	for i, j := range idx {
		names[i] = targets[j]
	}
	return strings.Join(names, ",")
}

// atPropErr checks that err holds a *propError for key.
func atPropErr(t *testing.T, err error, key string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a prop error for %q, got none", key)
	}
	var pe *propError
	if !errors.As(err, &pe) {
		t.Fatalf("want a *propError for %q, got %T: %v", key, err, err)
	}
	// errors.As finds the first; look through joins for the key.
	found := false
	var walk func(error)
	walk = func(e error) {
		if p, ok := e.(*propError); ok && p.key == key {
			found = true
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
		if u := errors.Unwrap(e); u != nil {
			walk(u)
		}
	}
	walk(err)
	if !found {
		t.Fatalf("want a prop error for %q, got %v", key, err)
	}
}

func atErrContains(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want an error containing %q, got %v", want, err)
	}
}

// ---- Java vectors (Java 17: java.lang.Long/String/BigInteger/Double) ----

// Long.hashCode(v), then Math.abs((long) h) % n for n = 3, 4, 10, 16.
var atJavaLongs = []struct {
	v    int64
	h    int32
	mods [4]int64
}{
	{0, 0, [4]int64{0, 0, 0, 0}},
	{1, 1, [4]int64{1, 1, 1, 1}},
	{-1, 0, [4]int64{0, 0, 0, 0}},
	{5, 5, [4]int64{2, 1, 5, 5}},
	{-5, 4, [4]int64{1, 0, 4, 4}},
	{7, 7, [4]int64{1, 3, 7, 7}},
	{2147483647, 2147483647, [4]int64{1, 3, 7, 15}},
	{2147483648, -2147483648, [4]int64{2, 0, 8, 0}},
	{-2147483648, 2147483647, [4]int64{1, 3, 7, 15}},
	{-2147483649, -2147483648, [4]int64{2, 0, 8, 0}},
	{4294967295, -1, [4]int64{1, 1, 1, 1}},
	{4294967296, 1, [4]int64{1, 1, 1, 1}},
	{math.MaxInt64, -2147483648, [4]int64{2, 0, 8, 0}},
	{math.MinInt64, -2147483648, [4]int64{2, 0, 8, 0}},
	{1234567890123456789, 1825280481, [4]int64{0, 1, 1, 1}},
	{1331042935696789505, 1635303550, [4]int64{1, 2, 0, 14}},
	{-1234567890123456789, 1825280480, [4]int64{2, 0, 0, 0}},
	{4611686018427387904, 1073741824, [4]int64{1, 0, 4, 0}},
}

// String.hashCode(s), then Math.abs((long) h) % n for n = 3, 4, 10, 16.
var atJavaStrings = []struct {
	s    string
	h    int32
	mods [4]int64
}{
	{"", 0, [4]int64{0, 0, 0, 0}},
	{"a", 97, [4]int64{1, 1, 7, 1}},
	{"order_1", -1207109760, [4]int64{0, 0, 0, 0}},
	{"\u8ba2\u5355", 1129459, [4]int64{1, 3, 9, 3}}, // 订单
	{"\U0001F600", 1772899, [4]int64{1, 3, 9, 3}},   // 😀, a surrogate pair
	{"hello world", 1794106052, [4]int64{2, 0, 2, 4}},
	{"user_12345", 1871841983, [4]int64{2, 3, 3, 15}},
	{"polygenelubricants", -2147483648, [4]int64{2, 0, 8, 0}},
	{"Aa", 2112, [4]int64{0, 0, 2, 0}},
	{"BB", 2112, [4]int64{0, 0, 2, 0}},
	{"\u00e9t\u00e9", 227742, [4]int64{0, 2, 2, 14}},
	{"a\U0001F600b\u4e2d", 1793360527, [4]int64{1, 3, 7, 15}},
}

// new BigInteger(v).hashCode(), abs % 3, 4, 10, 16; then ModShardingAlgorithm's
// BigInteger.valueOf(v.longValue()).mod(10) and .mod(3).
var atJavaBigs = []struct {
	v      uint64
	h      int32
	mods   [4]int64
	mod10  int64
	mod3   int64
	true10 int64
}{
	{9223372036854775808, -2147483648, [4]int64{2, 0, 8, 0}, 2, 1, 8},
	{18446744073709551615, -32, [4]int64{2, 0, 2, 0}, 9, 2, 5},
	{12345678901234567890, -1436577082, [4]int64{1, 2, 2, 10}, 4, 2, 0},
	{9223372036854775809, -2147483647, [4]int64{1, 3, 7, 15}, 3, 2, 9},
	{17293822569102704640, 268435456, [4]int64{1, 0, 6, 0}, 4, 2, 0},
}

var atJavaDoubles = []struct {
	f float64
	h int32
}{
	{1.5, 1073217536},
	{math.Copysign(0, -1), -2147483648},
	{0, 0},
	{math.NaN(), 2146959360},
	{1e300, -164130400},
	{-2.75, -1073348608},
}

var atMods = [4]int64{3, 4, 10, 16}

func TestJavaHashCode(t *testing.T) {
	for _, c := range atJavaLongs {
		if h, err := javaHashCode(value{kind: kindInt, i: c.v}); err != nil || h != c.h {
			t.Errorf("Long %d: hash %d, %v; Java %d", c.v, h, err, c.h)
		}
	}
	for _, c := range atJavaStrings {
		if h, err := javaHashCode(value{kind: kindString, s: c.s}); err != nil || h != c.h {
			t.Errorf("String %q: hash %d, %v; Java %d", c.s, h, err, c.h)
		}
	}
	for _, c := range atJavaBigs {
		if h, err := javaHashCode(value{kind: kindBig, u: c.v}); err != nil || h != c.h {
			t.Errorf("BigInteger %d: hash %d, %v; Java %d", c.v, h, err, c.h)
		}
	}
	for _, c := range atJavaDoubles {
		if h, err := javaHashCode(value{kind: kindFloat, f: c.f}); err != nil || h != c.h {
			t.Errorf("Double %v: hash %d, %v; Java %d", c.f, h, err, c.h)
		}
	}
	if h := hmString("\xff"); h != 0xFFFD {
		t.Errorf("invalid UTF-8: %d, want U+FFFD", h)
	}
	if _, err := javaHashCode(value{kind: kindTime, t: time.Now()}); err == nil {
		t.Error("time: no error")
	}
}

func TestHashMod(t *testing.T) {
	for mi, n := range atMods {
		targets := atNames("t_order_", int(n))
		f := atCompile(t, "HASH_MOD", map[string]string{"sharding-count": fmt.Sprint(n)}, targets)
		check := func(v any, want int64) {
			t.Helper()
			if got := atName(t, f, targets, v); got != targets[want] {
				t.Errorf("HASH_MOD %d: %v (%T) -> %s, Java %s", n, v, v, got, targets[want])
			}
		}
		for _, c := range atJavaLongs {
			check(c.v, c.mods[mi])
		}
		for _, c := range atJavaStrings {
			check(c.s, c.mods[mi])
			check([]byte(c.s), c.mods[mi])
		}
		for _, c := range atJavaBigs {
			check(c.v, c.mods[mi])
		}
		if got := atName(t, f, targets, time.Now()); got != "error" {
			t.Errorf("time: %s", got)
		}
		if got := atRange(t, f, targets, 1, true, 2, true); got != strings.Join(targets, ",") {
			t.Errorf("range: %s", got)
		}
	}
	// Zero-padded targets match as findMatchedTargetName pads to the
	// shortest suffix.
	targets := atNames("t_0", 10) // t_00..t_09
	f := atCompile(t, "HASH_MOD", map[string]string{"sharding-count": "10"}, targets)
	if got := atName(t, f, targets, "a"); got != "t_07" {
		t.Errorf("padded: %s", got)
	}
}

func TestHashModErrors(t *testing.T) {
	_, err := atTry("HASH_MOD", map[string]string{}, atNames("t_", 4))
	atPropErr(t, err, "sharding-count")
	_, err = atTry("HASH_MOD", map[string]string{"sharding-count": "0"}, atNames("t_", 4))
	atPropErr(t, err, "sharding-count")
	_, err = atTry("HASH_MOD", map[string]string{"sharding-count": "4", "zero-padding": "true"}, atNames("t_", 4))
	atPropErr(t, err, "zero-padding")
	atGaps(t, "HASH_MOD", map[string]string{"sharding-count": "5"}, atNames("t_", 4), "t_4 (shard 4)")
}

func TestMod(t *testing.T) {
	targets := atNames("t_order_", 4)
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "4"}, targets)
	bigStr := "123456789012345678901234567890"
	bigMod, _ := new(big.Int).SetString(bigStr, 10)
	bigMod.Mod(bigMod, big.NewInt(4))
	for _, c := range []struct {
		v    any
		want string
	}{
		{0, "t_order_0"},
		{5, "t_order_1"},
		{int8(-1), "t_order_3"}, // BigInteger.mod is never negative
		{-5, "t_order_3"},
		{int64(math.MinInt64), "t_order_0"},
		{int64(math.MaxInt64), "t_order_3"},
		{uint32(7), "t_order_3"},
		{"7", "t_order_3"},
		{"-7", "t_order_1"},
		{"+7", "t_order_3"},
		{"007", "t_order_3"},
		{bigStr, fmt.Sprintf("t_order_%d", bigMod.Int64())},
		{"-" + bigStr, fmt.Sprintf("t_order_%d", (4-bigMod.Int64())%4)},
		{3.7, "error"},  // Java truncates to 3; a database stores 4: refused
		{-3.7, "error"}, // likewise
		{7.0, "t_order_3"},
		{"abc", "error"},
		{"", "error"},
		{"-", "error"},
		{"1.5", "error"},
		{" 1", "error"},
		{"1_000", "error"},
		{math.NaN(), "error"},
		{math.Inf(1), "error"},
		{time.Now(), "error"},
	} {
		if got := atName(t, f, targets, c.v); got != c.want {
			t.Errorf("MOD 4: %v (%T) -> %q, want %q", c.v, c.v, got, c.want)
		}
	}
	// uint64 above int64: the number's own residue, as its decimal string
	// gets (Java's longValue() would wrap a BigInteger to its low 64 bits).
	for _, c := range atJavaBigs {
		for _, n := range []int64{10, 3} {
			ts := atNames("t_", int(n))
			g := atCompile(t, "MOD", map[string]string{"sharding-count": fmt.Sprint(n)}, ts)
			want := int64(c.v % uint64(n))
			if n == 10 && want != c.true10 {
				t.Fatalf("vector %d: true10 %d, computed %d", c.v, c.true10, want)
			}
			if got := atName(t, g, ts, c.v); got != ts[want] {
				t.Errorf("MOD %d: %d -> %s, Java %s", n, c.v, got, ts[want])
			}
		}
	}
}

func TestModPaddingAndOffsets(t *testing.T) {
	// zero-padding pads to the digits of sharding-count - 1.
	t16 := make([]string, 16)
	for i := range t16 {
		t16[i] = fmt.Sprintf("t_%02d", i)
	}
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "16", "zero-padding": "true"}, t16)
	if got := atName(t, f, t16, 19); got != "t_03" {
		t.Errorf("zero-padding: %s", got)
	}
	// Without zero-padding the shortest target suffix (2) pads the same way.
	f = atCompile(t, "MOD", map[string]string{"sharding-count": "16"}, t16)
	if got := atName(t, f, t16, 19); got != "t_03" {
		t.Errorf("DataNodeInfo padding: %s", got)
	}
	// zero-padding with unpadded targets: t_00..t_09 do not exist.
	atGaps(t, "MOD", map[string]string{"sharding-count": "16", "zero-padding": "TRUE"}, atNames("t_", 16),
		"t_00 to t_09 (shards 0..9, 10 in all: values whose remainder mod 16 is 0..9)")
	_, err := atTry("MOD", map[string]string{"sharding-count": "16", "zero-padding": "TRUE"}, atNames("t_", 10))
	atErrContains(t, err, "sharding-count 16 but no target ends in any shard's suffix (00..15")
	// sharding-count 10: width 1, so zero-padding changes nothing.
	t10 := atNames("t_", 10)
	f = atCompile(t, "MOD", map[string]string{"sharding-count": "10", "zero-padding": "true"}, t10)
	if got := atName(t, f, t10, 13); got != "t_3" {
		t.Errorf("count 10 padding: %s", got)
	}
	// sharding-count 1: width 1, everything to t_0.
	f = atCompile(t, "MOD", map[string]string{"sharding-count": "1", "zero-padding": "true"}, []string{"t_0"})
	if got := atName(t, f, []string{"t_0"}, -99); got != "t_0" {
		t.Errorf("count 1: %s", got)
	}

	targets := atNames("t_", 4)
	f = atCompile(t, "MOD", map[string]string{"sharding-count": "4", "start-offset": "2", "stop-offset": "1"}, targets)
	for _, c := range []struct {
		v    any
		want string
	}{
		{1234567, "t_0"},                // "3456"
		{"ab123x", "t_3"},               // "123"
		{-12345, "t_2"},                 // "-12345"[2:5] = "234"
		{"xy-7z", "t_1"},                // "-7" mod 4 = 1
		{12, "error"},                   // len 2 - 1 <= 2
		{"abc", "error"},                // len 3 - 1 <= 2
		{"ab1", "error"},                // len 3 - 1 <= 2
		{"abc1", "error"},               // "c" is not a digit
		{uint64(math.MaxUint64), "t_1"}, // "18446744073709551615"[2:19] = "44674407370955161"
		{1.5, "error"},
		{"订单123", "t_0"},           // Java: substring(2, 4) over UTF-16 units is "12"
		{"\U0001F600123", "t_0"},   // a surrogate pair, then units [2, 4) = "12"
		{"x\U0001F60012", "error"}, // units [2, 4) start inside the pair
	} {
		if got := atName(t, f, targets, c.v); got != c.want {
			t.Errorf("offsets: %v -> %q, want %q", c.v, got, c.want)
		}
	}
	if got := atRange(t, f, targets, 1, true, 2, true); got != "t_0,t_1,t_2,t_3" {
		t.Errorf("offsets range: %s", got)
	}
}

func TestModRange(t *testing.T) {
	targets := atNames("t_", 4)
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "4"}, targets)
	all := "t_0,t_1,t_2,t_3"
	for _, c := range []struct {
		lo, hi     any
		loIn, hiIn bool
		want       string
	}{
		{1, 2, true, true, "t_1,t_2"},
		{1, 4, true, true, all}, // 4 - 1 >= 3
		{1, 4, false, false, "t_2,t_3"},
		{1, 3, true, false, "t_1,t_2"},
		{nil, 2, true, true, all},
		{2, nil, true, true, all},
		{-2, -1, true, true, "t_2,t_3"},
		{5, 3, true, true, ""},
		{2, 2, true, false, ""},
		{"6", "7", true, true, all}, // text bounds: '60' is between '6' and '7' on a text column
		{"6", "x", true, true, "error"},
		{int64(math.MaxInt64), int64(math.MaxInt64), false, true, ""},
		{int64(math.MinInt64), int64(math.MaxInt64), true, true, all},
		{int64(math.MaxInt64 - 1), int64(math.MaxInt64), true, true, "t_2,t_3"},
		{uint64(math.MaxUint64), uint64(math.MaxUint64), true, true, all},
		{"100000000000000000000", "100000000000000000001", true, true, all},
		{1.5, 2.5, true, true, all},
		{time.Now(), time.Now(), true, true, "error"},
	} {
		if got := atRange(t, f, targets, c.lo, c.loIn, c.hi, c.hiIn); got != c.want {
			t.Errorf("range %v..%v (%v,%v): %q, want %q", c.lo, c.hi, c.loIn, c.hiIn, got, c.want)
		}
	}
	// more targets than shards: "all" is every target.
	t6 := atNames("t_", 6)
	f = atCompile(t, "MOD", map[string]string{"sharding-count": "4"}, t6)
	if got := atRange(t, f, t6, nil, true, 1, true); got != strings.Join(t6, ",") {
		t.Errorf("unbounded with extra targets: %s", got)
	}
	if got := atRange(t, f, t6, 3, true, 4, true); got != "t_0,t_3" {
		t.Errorf("wrapping range: %s", got)
	}
}

func TestModErrors(t *testing.T) {
	targets := atNames("t_", 4)
	for _, c := range []struct {
		props map[string]string
		key   string
	}{
		{map[string]string{}, "sharding-count"},
		{map[string]string{"sharding-count": "0"}, "sharding-count"},
		{map[string]string{"sharding-count": "-4"}, "sharding-count"},
		{map[string]string{"sharding-count": "four"}, "sharding-count"},
		{map[string]string{"sharding-count": "2147483648"}, "sharding-count"},
		{map[string]string{"sharding-count": "4", "start-offset": "-1"}, "start-offset"},
		{map[string]string{"sharding-count": "4", "stop-offset": "x"}, "stop-offset"},
		{map[string]string{"sharding-count": "4", "zero-padding": "yes"}, "zero-padding"},
		{map[string]string{"sharding-count": "4", "sharding-cnt": "4"}, "sharding-cnt"},
		{map[string]string{"sharding-count": "4", "sharding.count": "4"}, "sharding.count"},
	} {
		_, err := atTry("MOD", c.props, targets)
		atPropErr(t, err, c.key)
	}
	// several problems are all reported
	_, err := atTry("MOD", map[string]string{"start-offset": "-1", "bogus": "1"}, targets)
	atPropErr(t, err, "sharding-count")
	atPropErr(t, err, "start-offset")
	atPropErr(t, err, "bogus")
	// other spellings of the keys
	if _, err := atTry("MOD", map[string]string{"shardingCount": "4", "zero_padding": "false"}, targets); err != nil {
		t.Errorf("camelCase/snake keys: %v", err)
	}
	// missing and ambiguous targets
	atGaps(t, "MOD", map[string]string{"sharding-count": "4"}, atNames("t_", 3), "t_3 (shard 3: values whose remainder mod 4 is 3)")
	atGaps(t, "MOD", map[string]string{"sharding-count": "4"}, []string{"t_0", "t_1", "t_2", "t_5"}, "t_3 (shard 3: values whose remainder mod 4 is 3)")
	_, err = atTry("MOD", map[string]string{"sharding-count": "2"}, []string{"a_0", "a_1", "b_1"})
	atErrContains(t, err, "a_1, b_1")
	atGaps(t, "MOD", map[string]string{"sharding-count": "2147483647"}, targets,
		"t_4 to t_2147483646 (shards 4..2147483646, 2147483643 in all: values whose remainder mod 2147483647 is 4..2147483646)")
	_, err = atTry("MOD", map[string]string{"sharding-count": "4"}, []string{"t_a", "t_b"})
	atErrContains(t, err, "no target ends in any shard's suffix")
	// targets with different prefixes still match on their digits
	if _, err := atTry("MOD", map[string]string{"sharding-count": "2"}, []string{"ds_0", "other1"}); err != nil {
		t.Errorf("mixed prefixes: %v", err)
	}
}

func TestModHashModNoAllocs(t *testing.T) {
	targets := atNames("t_", 16)
	mod := atCompile(t, "MOD", map[string]string{"sharding-count": "16"}, targets)
	modOff := atCompile(t, "MOD", map[string]string{"sharding-count": "16", "start-offset": "1"}, targets)
	hash := atCompile(t, "HASH_MOD", map[string]string{"sharding-count": "16"}, targets)
	iv := value{kind: kindInt, i: 1331042935696789505}
	sv := value{kind: kindString, s: "user_12345"}
	for name, run := range map[string]func(){
		"MOD int":          func() { _, _ = mod.one(iv) },
		"MOD string":       func() { _, _ = mod.one(value{kind: kindString, s: "1331042935696789505"}) },
		"MOD offsets int":  func() { _, _ = modOff.one(iv) },
		"HASH_MOD int":     func() { _, _ = hash.one(iv) },
		"HASH_MOD string":  func() { _, _ = hash.one(sv) },
		"MOD toValue+one":  func() { v, _ := toValue(int64(42)); _, _ = mod.one(v) },
		"HASH toValue+one": func() { v, _ := toValue(int64(42)); _, _ = hash.one(v) },
	} {
		if n := testing.AllocsPerRun(1000, run); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, n)
		}
	}
}

func BenchmarkModOne(b *testing.B) {
	f, err := atTry("MOD", map[string]string{"sharding-count": "16"}, atNames("t_", 16))
	if err != nil {
		b.Fatal(err)
	}
	v := value{kind: kindInt, i: 1331042935696789505}
	for b.Loop() {
		_, _ = f.one(v)
	}
}

func BenchmarkHashModOneString(b *testing.B) {
	f, err := atTry("HASH_MOD", map[string]string{"sharding-count": "16"}, atNames("t_", 16))
	if err != nil {
		b.Fatal(err)
	}
	v := value{kind: kindString, s: "user_12345"}
	for b.Loop() {
		_, _ = f.one(v)
	}
}
