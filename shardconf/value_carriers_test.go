package shardconf

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// Carriers of a number that lose it on the way: a json.Number read through
// a float64, a float at exactly ±2^53 (±2^24 for a float32), a named
// float32 type, and pointer or Valuer chains that never end. Each either
// routes as the number it spells or is refused.

// A json.Number is the decimal it spells, whatever its spelling: a
// trailing ".0" or an exponent does not send it through a float64, which
// reads 9007199254740993.0 as 2^53 (another shard under MOD 7).
func TestJSONNumberRoutesAsTheDecimalItSpells(t *testing.T) {
	targets := atNames("t_", 7)
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "7"}, targets)
	for _, c := range []struct {
		want  string
		forms []any
	}{
		{vnRoute(f, targets, int64(9007199254740993)), []any{json.Number("9007199254740993.0"),
			json.Number("9.007199254740993e15"), json.Number("90071992547409930e-1"), json.Number("9007199254740993.000E+0")}},
		{vnRoute(f, targets, int64(-9007199254740995)), []any{json.Number("-9007199254740995.0"), json.Number("-9.007199254740995E15")}},
		{vnRoute(f, targets, uint64(math.MaxUint64)), []any{json.Number("18446744073709551615.0"), json.Number("1.8446744073709551615e19")}},
		{vnRoute(f, targets, int64(math.MinInt64)), []any{json.Number("-9223372036854775808.0"), json.Number("-9.223372036854775808e18")}},
		{vnRoute(f, targets, 0), []any{json.Number("-0.0"), json.Number("0e99999999999999999999"), json.Number("0.000")}},
	} {
		if strings.HasPrefix(c.want, "error") {
			t.Fatal(c.want)
		}
		for _, v := range c.forms {
			if got := vnRoute(f, targets, v); got != c.want {
				t.Errorf("json.Number %s -> %q, want %q (the integer it spells)", v, got, c.want)
			}
		}
	}
}

// A json.Number with a fraction is never made an integer by a float64's
// rounding, and an exponent never hides a number beyond 64 bits, however
// many fraction digits offset it.
func TestJSONNumberFractionOrSizeIsNeverRoundedAway(t *testing.T) {
	targets := atNames("t_", 7)
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "7"}, targets)
	offset := "0." + strings.Repeat("0", 998) + "5e99999" // 5 × 10^99000
	for _, c := range []struct{ v, want string }{
		{"4503599627370497.5", "fraction"},     // a float64 rounds it to ...498
		{"0.99999999999999999999", "fraction"}, // a float64 reads 1
		{"1e-400", "fraction"},                 // a float64 reads 0
		{"2.5", "fraction"},
		{"1e20", "beyond 64 bits"},
		{"18446744073709551616.0", "beyond 64 bits"},
		{"-9.223372036854775809e18", "beyond 64 bits"},
		{offset, "beyond 64 bits"},
		{"0x1p4", "not a number"}, // hexadecimal: not JSON
		{"Infinity", "not a number"},
		{"1e", "not a number"},
		{".", "not a number"},
	} {
		got := vnRoute(f, targets, json.Number(c.v))
		if !strings.HasPrefix(got, "error") || !strings.Contains(got, c.want) {
			t.Errorf("json.Number %.40s -> %q, want an error saying %q", c.v, got, c.want)
		}
	}
	// A fraction a float64 keeps is still a range bound: id > 1.5 is id >= 2.
	v, err := toValue(json.Number("15e-1"))
	if err != nil || v.kind != kindFloat || v.f != 1.5 {
		t.Errorf("json.Number 15e-1: %+v, %v; want the float 1.5", v, err)
	}
}

// The float 2^53 is also what 2^53+1 becomes, so it stands for two
// integers: refused, like every float beyond it; 2^53-1 is exact. The same
// holds at 2^24 for a float32, also when a named type carries it.
func TestFloatThatStandsForTwoIntegersIsRefused(t *testing.T) {
	type f32 float32
	targets := atNames("t_", 7)
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "7"}, targets)
	for _, v := range []any{float64(1 << 53), -float64(1 << 53), float64(9007199254740993), vnFloat(1 << 53),
		float32(1 << 24), -float32(1 << 24), f32(1 << 24), f32(1<<24 + 2), f32(-(1 << 25))} {
		if got := vnRoute(f, targets, v); !strings.HasPrefix(got, "error") || !strings.Contains(got, "stands for several integers") {
			t.Errorf("%T %v -> %q, want a refusal", v, v, got)
		}
	}
	for _, c := range []struct {
		v any
		n int64
	}{
		{float64(1<<53 - 1), 1<<53 - 1}, {-float64(1<<53 - 1), -(1<<53 - 1)},
		{float32(1<<24 - 1), 1<<24 - 1}, {f32(1<<24 - 1), 1<<24 - 1}, {f32(-12), -12},
	} {
		if got, want := vnRoute(f, targets, c.v), vnRoute(f, targets, c.n); got != want || strings.HasPrefix(got, "error") {
			t.Errorf("%T %v -> %q, want %q (as the integer %d)", c.v, c.v, got, want, c.n)
		}
	}
}

type cvSelf *cvSelf

// cvLoop's value is a pointer to a pointer to another cvLoop: a Valuer
// chain without end.
type cvLoop struct{}

func (cvLoop) Value() (driver.Value, error) {
	p := &cvLoop{}
	return &p, nil
}

// A pointer type that points to itself, or a Valuer whose value leads back
// to a Valuer, is refused with an error instead of recursing until the
// stack overflows (a crash no caller can recover from).
func TestEndlessPointerOrValuerChainIsRefused(t *testing.T) {
	var self cvSelf
	self = &self
	for _, v := range []any{self, cvLoop{}, &cvLoop{}} {
		_, err := toValue(v)
		if err == nil || !strings.Contains(err.Error(), "deep") {
			t.Errorf("%T: %v, want a refusal", v, err)
		}
		if _, err := (Cond{column: "c", op: opEq, v: v}).span(); err == nil {
			t.Errorf("%T as a range bound: no error", v)
		}
	}
	// A finite chain is followed: **int64 routes as the int64.
	n := int64(42)
	p := &n
	if v, err := toValue(&p); err != nil || v != (value{kind: kindInt, i: 42}) {
		t.Errorf("**int64: %+v, %v", v, err)
	}
	if _, err := toValue((**int64)(nil)); !errors.Is(err, errNullValue) {
		t.Errorf("nil **int64: %v, want errNullValue", err)
	}
}

// TestNullShardingValueIsNoRoute: a NULL sharding value is refused with an
// error matching ErrNoRoute, so callers and observers classify it as the
// route it cannot have.
func TestNullShardingValueIsNoRoute(t *testing.T) {
	for _, v := range []any{nil, (*int64)(nil), sql.NullInt64{}} {
		if _, err := toValue(v); !errors.Is(err, ErrNoRoute) || !errors.Is(err, errNullValue) {
			t.Errorf("toValue(%#v) = %v, want an error matching ErrNoRoute", v, err)
		}
	}
}
