package shardconf

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// Sharding values are normalised once (value.go): one number reaches every
// algorithm in one form whatever Go type, Valuer or string carries it, and
// a value no algorithm can represent is refused, never wrapped.

type (
	vnUserID   int64
	vnUnsigned uint16
	vnFloat    float64
)

// vnCarriers returns every Go form of n: the integer types it fits,
// keygen.ID and pointers to it, named types, *big.Int, json.Number,
// driver.Valuers and, within ±2^53, floats.
func vnCarriers(n *big.Int) []any {
	var out []any
	if n.IsInt64() {
		i := n.Int64()
		id := keygen.ID(i)
		out = append(out, i, int(i), keygen.ID(i), &id, &i, vnUserID(i),
			sql.NullInt64{Int64: i, Valid: true}, json.Number(fmt.Sprint(i)))
		if i >= math.MinInt32 && i <= math.MaxInt32 {
			out = append(out, int32(i))
		}
		if i >= math.MinInt16 && i <= math.MaxInt16 {
			out = append(out, int16(i))
		}
		if i >= math.MinInt8 && i <= math.MaxInt8 {
			out = append(out, int8(i))
		}
		out = append(out, json.Number(fmt.Sprint(i)+".0"), json.Number(fmt.Sprint(i)+"e0"), json.Number(fmt.Sprint(i)+"00e-2"),
			json.Number(vnScientific(n)))
		if i > -(1<<53) && i < 1<<53 { // ±2^53 is also the float of ±(2^53+1): refused
			f := float64(i)
			out = append(out, f, vnFloat(f), sql.NullFloat64{Float64: f, Valid: true})
			if i > -(1<<24) && i < 1<<24 {
				out = append(out, float32(i))
			}
		}
	}
	if n.IsUint64() {
		u := n.Uint64()
		out = append(out, u, uint(u))
		if u <= math.MaxUint32 {
			out = append(out, uint32(u))
		}
		if u <= math.MaxUint16 {
			out = append(out, uint16(u), vnUnsigned(u))
		}
		if u <= math.MaxUint8 {
			out = append(out, uint8(u))
		}
		out = append(out, json.Number(fmt.Sprint(u)), json.Number(fmt.Sprint(u)+".000"), json.Number(vnScientific(n)))
	}
	return append(out, new(big.Int).Set(n))
}

// vnScientific spells n as d.ddddE+k, as a JSON encoder of floats may.
func vnScientific(n *big.Int) string {
	s := n.String()
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	if len(s) == 1 {
		return sign + s + ".0E+0"
	}
	return fmt.Sprintf("%s%s.%sE+%d", sign, s[:1], s[1:], len(s)-1)
}

// vnDecimalForms returns decimal strings that spell n: plain, with '+',
// with leading zeros, and as []byte.
func vnDecimalForms(n *big.Int) []any {
	s := n.String()
	digits, sign := strings.TrimPrefix(s, "-"), ""
	if n.Sign() < 0 {
		sign = "-"
	}
	out := []any{s, []byte(s), sign + "000" + digits}
	if n.Sign() >= 0 {
		out = append(out, "+"+digits, "+0"+digits)
	}
	if n.Sign() == 0 {
		out = append(out, "-0", "-000")
	}
	return out
}

func vnNumbers() []*big.Int {
	var out []*big.Int
	for _, s := range []string{"0", "1", "5", "7", "-1", "-5", "127", "-128", "255", "65535", "2147483647",
		"2147483648", "-2147483649", "4294967295", "4294967296", "9007199254740992", "-9007199254740992",
		"9007199254740993", "1331042935696789505", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "12345678901234567890", "18446744073709551615"} {
		n, _ := new(big.Int).SetString(s, 10)
		out = append(out, n)
	}
	// And seeded random ones: small, 32-bit, 53-bit, 64-bit and above int64.
	rng := rand.New(rand.NewPCG(14, 14))
	for i := 0; i < 40; i++ {
		for _, bits := range []uint{8, 32, 53, 63} {
			v := int64(rng.Uint64() >> (64 - bits))
			if rng.IntN(2) == 0 {
				v = -v
			}
			out = append(out, big.NewInt(v))
		}
		out = append(out, new(big.Int).SetUint64(rng.Uint64()|1<<63))
	}
	return out
}

type vnAlgo struct {
	name    string
	typ     string
	props   map[string]string
	targets []string
	// strings reports whether the algorithm reads a decimal string as the
	// number it spells (HASH_MOD and INLINE read a String as text, as
	// ShardingSphere does).
	strings bool
}

func vnAlgos() []vnAlgo {
	return []vnAlgo{
		{"MOD", "MOD", map[string]string{"sharding-count": "7"}, atNames("t_", 7), true},
		{"MOD zero-padding", "MOD", map[string]string{"sharding-count": "16", "zero-padding": "true"}, vnPadded(16), true},
		{"HASH_MOD", "HASH_MOD", map[string]string{"sharding-count": "10"}, atNames("t_", 10), false},
		{"INLINE", "INLINE", map[string]string{"algorithm-expression": "t_${order_id % 4}"}, atNames("t_", 4), false},
		{"INLINE hashCode", "INLINE", map[string]string{"algorithm-expression": "t_${Math.abs(order_id.hashCode()) % 3}"}, atNames("t_", 3), false},
		{"VOLUME_RANGE", "VOLUME_RANGE", map[string]string{"range-lower": "-10", "range-upper": "4294967296", "sharding-volume": "1073741824"}, atNames("t_", 7), true},
		{"BOUNDARY_RANGE", "BOUNDARY_RANGE", map[string]string{"sharding-ranges": "-128,0,7,2147483648,9223372036854775807"}, atNames("t_", 6), true},
	}
}

func vnCompile(t *testing.T, a vnAlgo) shardFunc {
	t.Helper()
	f, err := atTrySpec(algoSpec{typ: a.typ, props: a.props, targets: a.targets, column: "order_id"})
	if err != nil {
		t.Fatalf("%s: %v", a.name, err)
	}
	return f
}

func vnPadded(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("t_%02d", i)
	}
	return out
}

// vnRoute routes v: a target name, "" for no route, or "error: ...".
func vnRoute(f shardFunc, targets []string, v any) string {
	x, err := toValue(v)
	if err != nil {
		return "error: " + err.Error()
	}
	i, err := f.one(x)
	switch {
	case err != nil:
		return "error: " + err.Error()
	case i < 0:
		return ""
	}
	return targets[i]
}

func TestSameNumberRoutesAlikeWhateverItsGoType(t *testing.T) {
	for _, a := range vnAlgos() {
		f := vnCompile(t, a)
		for _, n := range vnNumbers() {
			forms := vnCarriers(n)
			if a.strings {
				forms = append(forms, vnDecimalForms(n)...)
			}
			want := vnRoute(f, a.targets, forms[0])
			for _, v := range forms[1:] {
				if got := vnRoute(f, a.targets, v); got != want {
					t.Errorf("%s: %s as %T (%v) -> %q; as %T -> %q", a.name, n, v, v, got, forms[0], want)
				}
			}
		}
	}
}

// The reported case: a uint64 above int64 and the same number as a string
// routed to different tables (MOD wrapped the uint64 to its low 64 bits).
func TestUint64AboveInt64RoutesAsItsDecimalString(t *testing.T) {
	for _, a := range vnAlgos() {
		if !a.strings {
			continue
		}
		f := vnCompile(t, a)
		for _, u := range []uint64{1 << 63, 1<<63 + 1, 12345678901234567890, math.MaxUint64} {
			byInt, byText := vnRoute(f, a.targets, u), vnRoute(f, a.targets, fmt.Sprint(u))
			if byInt != byText || strings.HasPrefix(byInt, "error") {
				t.Errorf("%s: uint64 %d -> %q, string -> %q; want one target", a.name, u, byInt, byText)
			}
		}
	}
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "10"}, atNames("t_", 10))
	if got := vnRoute(f, atNames("t_", 10), uint64(math.MaxUint64)); got != "t_5" {
		t.Errorf("MOD 10 of 18446744073709551615: %q, want t_5 (not the wrapped -1's t_9)", got)
	}
}

// HASH_MOD hashes a String by String.hashCode and a number by
// Long.hashCode, as ShardingSphere does: the string "15" and 15 may route
// apart, and so may "+15" and "15". That is ShardingSphere's definition,
// kept so that a Java fleet and shardkey agree.
func TestHashModKeepsShardingSphereStringAndNumberHashes(t *testing.T) {
	targets := atNames("t_", 10)
	f := atCompile(t, "HASH_MOD", map[string]string{"sharding-count": "10"}, targets)
	for _, c := range []struct {
		v    any
		want string
	}{
		{15, "t_5"},                     // Long.hashCode(15) = 15
		{15.0, "t_5"},                   // the integer 15
		{json.Number("15"), "t_5"},      // likewise
		{"15", "t_2"},                   // "15".hashCode() = 1572
		{[]byte("15"), "t_2"},           // the same String
		{"+15", "t_5"},                  // "+15".hashCode() = 42895
		{"015", "t_0"},                  // "015".hashCode() = 47700
		{uint64(1 << 63), "t_8"},        // BigInteger.hashCode() = -2147483648
		{big.NewInt(15), "t_5"},         // a BigInteger that fits a long: the Long
		{uint64(math.MaxUint64), "t_2"}, // BigInteger.hashCode() = -32
	} {
		if got := vnRoute(f, targets, c.v); got != c.want {
			t.Errorf("HASH_MOD 10: %v (%T) -> %q, want %q", c.v, c.v, got, c.want)
		}
	}
}

func TestValuesNoAlgorithmCanRepresentAreRefused(t *testing.T) {
	var nilID *keygen.ID
	huge, _ := new(big.Int).SetString("18446744073709551616", 10)
	negHuge, _ := new(big.Int).SetString("-9223372036854775809", 10)
	type refusal struct {
		v    any
		want string // in the error
	}
	// Refused by normalisation, whatever the algorithm.
	everywhere := []refusal{
		{nil, "NULL"},
		{nilID, "NULL"},
		{(*big.Int)(nil), "NULL"},
		{sql.NullInt64{}, "NULL"},
		{sql.NullString{}, "NULL"},
		{math.NaN(), "not a number"},
		{math.Inf(1), "not a number"},
		{float32(math.Inf(-1)), "not a number"},
		{huge, "beyond 64 bits"},
		{negHuge, "beyond 64 bits"},
		{json.Number("18446744073709551616"), "beyond 64 bits"},
		{json.Number("1e300"), "beyond 64 bits"},
		{json.Number("0x10"), "not a number"},
		{float64(1<<53 + 2), "beyond ±2^53"},
		{-float64(1 << 60), "beyond ±2^53"},
		{float32(1<<24 + 2), "beyond ±2^24"},
		{float32(1e30), "beyond ±2^24"},
		{struct{}{}, "unsupported"},
	}
	for _, a := range vnAlgos() {
		f := vnCompile(t, a)
		fraction := "fraction"
		if a.typ == "INLINE" {
			fraction = "floating-point"
		}
		cases := append([]refusal{
			{3.5, fraction},
			{json.Number("2.5"), fraction},
			{sql.NullFloat64{Float64: -0.5, Valid: true}, fraction},
		}, everywhere...)
		if a.strings {
			// Java's Long.parseLong and new BigInteger refuse these; a text
			// column compares ' 5' and '5' as different values.
			cases = append(cases, refusal{" 5", "decimal"}, refusal{"5 ", "decimal"}, refusal{"1_000", "decimal"},
				refusal{"5.0", "decimal"}, refusal{"", "decimal"}, refusal{"+", "decimal"}, refusal{"0x10", "decimal"})
		}
		if a.typ == "INLINE" {
			// Java long semantics cannot hold it: refused, never wrapped.
			cases = append(cases, refusal{uint64(math.MaxUint64), "beyond Long"}, refusal{uint64(1 << 63), "beyond Long"},
				refusal{json.Number("9223372036854775808"), "beyond Long"})
		}
		for _, c := range cases {
			got := vnRoute(f, a.targets, c.v)
			if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, c.want) {
				t.Errorf("%s: %#v -> %q, want an error saying %q", a.name, c.v, got, c.want)
			}
		}
	}
	if _, err := toValue(sql.NullInt64{}); !errors.Is(err, errNullValue) {
		t.Errorf("sql.NullInt64{}: %v, want errNullValue", err)
	}
}

// SNOWFLAKE_* read a key: every form of a key routes alike, and a number
// that is no key of the layout (negative, above it, above int64) is refused.
func TestSnowflakeKeyRoutesAlikeWhateverItsFormAndRefusesNonKeys(t *testing.T) {
	l := atLayout(t, "SNOWFLAKE", nil)
	targets := atNames("t_", 4)
	f, err := atTrySpec(algoSpec{typ: "SNOWFLAKE_BITS", props: nil, targets: targets, keyLayout: l})
	if err != nil {
		t.Fatal(err)
	}
	n := big.NewInt(1331042935696789505)
	forms := append(vnCarriers(n), vnDecimalForms(n)...)
	want := vnRoute(f, targets, forms[0])
	if strings.HasPrefix(want, "error") {
		t.Fatal(want)
	}
	for _, v := range forms {
		if got := vnRoute(f, targets, v); got != want {
			t.Errorf("key as %T (%v) -> %q, want %q", v, v, got, want)
		}
	}
	for _, v := range []any{-1, "-1", uint64(1 << 63), "9223372036854775808", "99999999999999999999999", 2.5, " 1"} {
		if got := vnRoute(f, targets, v); !strings.HasPrefix(got, "error") {
			t.Errorf("%v (%T) -> %q, want an error", v, v, got)
		}
	}
}

// A range bound spelled as a decimal string or carried by another type
// selects the same targets as the number itself.
func TestRangeBoundsAgreeWhateverTheirForm(t *testing.T) {
	for _, a := range vnAlgos() {
		if !a.strings {
			continue
		}
		f := vnCompile(t, a)
		for _, lo := range vnNumbers() {
			hi := new(big.Int).Add(lo, big.NewInt(3))
			want := atRange(t, f, a.targets, lo.String(), true, hi.String(), false)
			for _, l := range vnCarriers(lo) {
				if got := atRange(t, f, a.targets, l, true, hi.String(), false); got != want {
					t.Errorf("%s: [%v (%T), %s) -> %q, want %q", a.name, l, l, hi, got, want)
				}
			}
		}
	}
}

// A float with a fraction is a fine range bound: id > 1.5 is id >= 2.
func TestFractionalFloatIsARangeBoundNotAValue(t *testing.T) {
	targets := atNames("t_", 7)
	f := atCompile(t, "VOLUME_RANGE", map[string]string{"range-lower": "0", "range-upper": "50", "sharding-volume": "10"}, targets)
	if got := atRange(t, f, targets, 1.5, false, nil, true); got == "error" {
		t.Errorf("VOLUME_RANGE > 1.5: %s", got)
	}
	m := atCompile(t, "MOD", map[string]string{"sharding-count": "4"}, atNames("t_", 4))
	if got := atRange(t, m, atNames("t_", 4), 1.5, true, 2.5, true); got != "t_0,t_1,t_2,t_3" {
		t.Errorf("MOD [1.5, 2.5]: %q, want every target", got)
	}
}

const vnRules = `
dataSources: {ds_0: {driver: sqlite, dsn: a}, ds_1: {driver: sqlite, dsn: b}}
rules:
- !SHARDING
  tables:
    t_mod: {actualDataNodes: "ds_${0..1}.t_mod_${0..6}", databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}, tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: m}}}
    t_hash: {actualDataNodes: "ds_0.t_hash_${0..9}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: h}}}
    t_inline: {actualDataNodes: "ds_0.t_inline_${0..3}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: i}}}
  shardingAlgorithms:
    db: {type: MOD, props: {sharding-count: 2}}
    m: {type: MOD, props: {sharding-count: 7}}
    h: {type: HASH_MOD, props: {sharding-count: 10}}
    i: {type: INLINE, props: {algorithm-expression: "t_inline_${order_id % 4}"}}
`

// The router's allocation-free path for int64, int and keygen.ID
// (fast.go) and its general path for every other carrier agree, on
// equality and in IN lists.
func TestRouterFastAndGeneralPathsAgreeOnEveryCarrier(t *testing.T) {
	cfg, err := Parse([]byte(vnRules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	render := func(ts []Target, err error) string {
		if err != nil {
			return "error"
		}
		return fmt.Sprint(ts)
	}
	for _, n := range vnNumbers() {
		if !n.IsInt64() {
			continue
		}
		for _, table := range []string{"t_mod", "t_hash", "t_inline"} {
			base := []Cond{Eq("order_id", n.Int64()), Eq("user_id", n.Int64())}
			want := render(r.Route(table, base...))
			for _, v := range vnCarriers(n) {
				if got := render(r.Route(table, Eq("order_id", v), Eq("user_id", v))); got != want {
					t.Errorf("%s: %s as %T -> %s; as int64 -> %s", table, n, v, got, want)
				}
				if got := render(r.Route(table, In("order_id", v), In("user_id", v))); got != want {
					t.Errorf("%s: IN (%s as %T) -> %s; = int64 -> %s", table, n, v, got, want)
				}
			}
		}
	}
}

// vnPtrValuer has its Value method on the pointer only.
type vnPtrValuer struct{ id int64 }

func (p *vnPtrValuer) Value() (driver.Value, error) { return p.id, nil }

// A driver.Valuer is asked for its value even when its method needs a
// pointer receiver; a NULL it gives is refused.
func TestValuerBehindPointerRoutesByItsValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		want value
	}{
		{&vnPtrValuer{id: 42}, value{kind: kindInt, i: 42}},
		{&sql.NullInt64{Int64: 7, Valid: true}, value{kind: kindInt, i: 7}},
		{sql.Null[uint16]{V: 9, Valid: true}, value{kind: kindInt, i: 9}},
		{sql.NullString{String: "+7", Valid: true}, value{kind: kindString, s: "+7"}},
	} {
		got, err := toValue(c.v)
		if err != nil || got != c.want {
			t.Errorf("%T: %+v, %v; want %+v", c.v, got, err, c.want)
		}
	}
	if _, err := toValue(&sql.NullInt64{}); !errors.Is(err, errNullValue) {
		t.Errorf("*sql.NullInt64{} (NULL): %v, want errNullValue", err)
	}
	if _, err := toValue((*vnPtrValuer)(nil)); !errors.Is(err, errNullValue) {
		t.Errorf("nil *vnPtrValuer: %v, want errNullValue", err)
	}
}
