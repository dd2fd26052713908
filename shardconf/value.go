package shardconf

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// kind is the type of a sharding value after normalization.
type kind uint8

const (
	kindInt    kind = iota + 1 // every Go integer type that fits int64, keygen.ID
	kindBig                    // uint64 above math.MaxInt64, kept in u
	kindString                 // string, []byte
	kindTime                   // time.Time
	kindFloat                  // a float with a fraction (integral floats are kindInt)
)

// value is one sharding value, normalized so that algorithms switch on a
// small kind instead of on Go types.
//
// Normalization happens once, here, so that one number reaches every
// algorithm in one form whatever Go type carries it:
//
//   - every Go integer type, keygen.ID, a named integer type, *big.Int,
//     json.Number and an integral float are kindInt when the number fits
//     int64, kindBig when it is above int64 and fits uint64; a number
//     beyond 64 bits is refused (no sharding column type of the three
//     databases holds it as an integer);
//   - a float is an integer only when it is integral and strictly within
//     ±2^53 (±2^24 for a float32, named float32 types included), where
//     every integer has its own float; from 2^53 on one float stands for
//     several integers (2^53+1 is read as the float 2^53) and is refused,
//     as are NaN and ±Inf. A float with
//     a fraction stays kindFloat: only range bounds accept it (id > 1.5),
//     and every algorithm refuses it as a value (a database rounds 3.7 to
//     4 when it stores it in an integer column, where ShardingSphere's MOD
//     would truncate it to 3: a misplaced row);
//   - strings and []byte stay strings: HASH_MOD and INLINE treat a String
//     as ShardingSphere does (String.hashCode, text), and the algorithms
//     that read a number read decimal text through decimalOf, one parser
//     for all of them;
//   - a json.Number is read exactly as the decimal it spells, never
//     through a float: "9007199254740993.0" is 9007199254740993, and
//     "4503599627370497.5" keeps its fraction (a float64 would round it to
//     an integer);
//   - driver.Valuer is asked for its value (a NULL is refused), a pointer
//     is followed (nil refused), and only then a fmt.Stringer is text.
//     Valuers and pointers nest at most maxValueDepth deep: a pointer
//     type that points to itself, or a Valuer whose value leads back to
//     it, is refused instead of recursing forever.
type value struct {
	kind kind
	i    int64
	u    uint64
	f    float64
	s    string
	t    time.Time
}

// errNullValue is wrapped in the error for a NULL sharding value: nil, a
// nil pointer, or a driver.Valuer whose value is NULL (sql.NullInt64{}).
// A NULL matches no row in SQL, and a row whose sharding column is NULL
// has no target: it matches ErrNoRoute.
var errNullValue error = nullValueError{}

type nullValueError struct{}

func (nullValueError) Error() string        { return "a NULL sharding value routes nowhere" }
func (nullValueError) Is(target error) bool { return target == ErrNoRoute }

// toValue normalizes a caller's value. It is on the routing hot path:
// integers must not allocate.
func toValue(v any) (value, error) { return toValueAt(v, 0) }

// maxValueDepth bounds how many pointers and Valuers toValue follows.
const maxValueDepth = 16

// toValueAt is toValue for a value reached through depth pointers or
// Valuers.
func toValueAt(v any, depth int) (value, error) {
	switch x := v.(type) {
	case int64:
		return value{kind: kindInt, i: x}, nil
	case int:
		return value{kind: kindInt, i: int64(x)}, nil
	case int32:
		return value{kind: kindInt, i: int64(x)}, nil
	case int16:
		return value{kind: kindInt, i: int64(x)}, nil
	case int8:
		return value{kind: kindInt, i: int64(x)}, nil
	case uint64:
		return uintValue(x), nil
	case uint:
		return uintValue(uint64(x)), nil
	case uint32:
		return value{kind: kindInt, i: int64(x)}, nil
	case uint16:
		return value{kind: kindInt, i: int64(x)}, nil
	case uint8:
		return value{kind: kindInt, i: int64(x)}, nil
	case keygen.ID:
		return value{kind: kindInt, i: int64(x)}, nil
	case string:
		return value{kind: kindString, s: x}, nil
	case []byte:
		return value{kind: kindString, s: string(x)}, nil
	case time.Time:
		return value{kind: kindTime, t: x}, nil
	case float64:
		return floatValue(x)
	case float32:
		return float32Value(x)
	case json.Number:
		return jsonNumberValue(x)
	case *big.Int:
		if x == nil {
			return value{}, fmt.Errorf("shardconf: a nil *big.Int sharding value: %w", errNullValue)
		}
		return bigValue(x)
	case nil:
		return value{}, fmt.Errorf("shardconf: %w", errNullValue)
	}
	return slowValue(v, depth)
}

func uintValue(u uint64) value {
	if u > math.MaxInt64 {
		return value{kind: kindBig, u: u}
	}
	return value{kind: kindInt, i: int64(u)}
}

// maxExactFloat is 2^53: every integer below it has its own float64. The
// float 2^53 itself is also what 2^53+1 becomes, so it is refused too.
const maxExactFloat = 1 << 53

// floatValue makes an integral float the integer it is (a JSON number
// decoded into any is a float64), keeps a fraction as kindFloat, and
// refuses NaN, ±Inf and integers a float cannot tell apart.
func floatValue(f float64) (value, error) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return value{}, fmt.Errorf("shardconf: sharding value %v is not a number", f)
	case f != math.Trunc(f):
		return value{kind: kindFloat, f: f}, nil
	case f >= maxExactFloat || f <= -maxExactFloat:
		return value{}, fmt.Errorf("shardconf: sharding value %v is a float at or beyond ±2^53, "+
			"where a float stands for several integers; pass an integer type", f)
	}
	return value{kind: kindInt, i: int64(f)}, nil
}

// float32Value is floatValue for a float32, whose integers are exact only
// strictly within ±2^24 (2^24+1 is read as the float32 2^24).
func float32Value(f float32) (value, error) {
	if g := float64(f); !math.IsInf(g, 0) && g == math.Trunc(g) && (g >= 1<<24 || g <= -(1<<24)) {
		return value{}, fmt.Errorf("shardconf: sharding value %v is a float32 at or beyond ±2^24, "+
			"where a float32 stands for several integers; pass an integer type", f)
	}
	return floatValue(float64(f))
}

// jsonNumberValue reads a json.Number as the number it spells, exactly:
// 1e3, 5.0 and 50e-1 are integers, and any number beyond 64 bits is
// refused whatever its spelling. A float64 would not do: it reads
// "9007199254740993.0" as 2^53 and "4503599627370497.5" as an integer.
// A number with a fraction is kindFloat (a range bound, never a value),
// unless no float64 keeps its fraction ("0.99999999999999999999").
func jsonNumberValue(n json.Number) (value, error) {
	s := string(n)
	if d, ok := decimalOf(s); ok {
		return d.value(s)
	}
	d, fraction, ok := jsonDecimal(s)
	if !ok {
		return value{}, fmt.Errorf("shardconf: json.Number %q is not a number", s)
	}
	if !fraction {
		return d.value(s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f == math.Trunc(f) {
		return value{}, fmt.Errorf("shardconf: json.Number %q has a fraction that a float64 cannot hold", s)
	}
	return value{kind: kindFloat, f: f}, nil
}

// jsonDecimal reads [+-] digits [. digits] [(e|E) [+-] digits] exactly:
// d is its integer part, fraction reports a non-zero fractional part.
func jsonDecimal(s string) (d decimal, fraction, ok bool) {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		d.neg = s[0] == '-'
		s = s[1:]
	}
	mant, exp, hasExp := s, "", false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp, hasExp = s[:i], s[i+1:], true
	}
	whole, frac, _ := strings.Cut(mant, ".")
	if whole+frac == "" || !allDigits(whole) || !allDigits(frac) {
		return d, false, false
	}
	e, ok := jsonExponent(exp, hasExp)
	if !ok {
		return d, false, false
	}
	// The value is digits × 10^e, with leading zeros dropped.
	digits := strings.TrimLeft(whole+frac, "0")
	e -= int64(len(frac))
	if digits == "" {
		return decimal{}, false, true
	}
	n := int64(len(digits))
	switch {
	case e >= 0 && n+e > 20: // beyond 64 bits: any 21 digits say so
		d.digits = strings.Repeat("9", 21)
	case e >= 0:
		d.digits = digits + strings.Repeat("0", int(e))
	case n+e <= 0: // |value| < 1
		return decimal{}, true, true
	default:
		cut := int(n + e)
		d.digits = digits[:cut]
		fraction = strings.Trim(digits[cut:], "0") != ""
	}
	if d.digits == "" {
		d.neg = false
	}
	return d, fraction, true
}

// jsonExponent reads an exponent's digits. One of more than 18 digits
// (leading zeros aside) is clamped to ±10^18: no string has that many
// digits to offset it, so the outcome (beyond 64 bits, or a fraction) is
// the same.
func jsonExponent(exp string, present bool) (int64, bool) {
	if !present {
		return 0, true
	}
	neg := false
	if len(exp) > 0 && (exp[0] == '+' || exp[0] == '-') {
		neg = exp[0] == '-'
		exp = exp[1:]
	}
	if exp == "" || !allDigits(exp) {
		return 0, false
	}
	e := int64(1e18)
	if t := strings.TrimLeft(exp, "0"); len(t) <= 18 {
		e, _ = strconv.ParseInt("0"+t, 10, 64)
	}
	if neg {
		e = -e
	}
	return e, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func bigValue(b *big.Int) (value, error) {
	switch {
	case b.IsInt64():
		return value{kind: kindInt, i: b.Int64()}, nil
	case b.IsUint64():
		return value{kind: kindBig, u: b.Uint64()}, nil
	}
	return value{}, fmt.Errorf("shardconf: sharding value %s is beyond 64 bits", b)
}

// slowValue handles named types: driver.Valuer (sql.NullInt64, keygen.ID
// behind a pointer), integer, float and string kinds, and only then
// fmt.Stringer, so that a named integer type is never hashed as a string.
func slowValue(v any, depth int) (value, error) {
	if depth >= maxValueDepth {
		return value{}, fmt.Errorf("shardconf: sharding value %T: more than %d pointers or Valuers deep", v, maxValueDepth)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return value{}, fmt.Errorf("shardconf: a nil %T sharding value: %w", v, errNullValue)
	}
	// A Valuer first, even behind a pointer: its Value method may have a
	// pointer receiver, which the pointed-to value would not have.
	if dv, ok := v.(driver.Valuer); ok {
		x, err := dv.Value()
		if err != nil {
			return value{}, fmt.Errorf("shardconf: sharding value %T: %w", v, err)
		}
		if x == nil {
			return value{}, fmt.Errorf("shardconf: sharding value %T is NULL: %w", v, errNullValue)
		}
		if _, same := x.(driver.Valuer); same {
			return value{}, fmt.Errorf("shardconf: sharding value %T has no usable value", v)
		}
		return toValueAt(x, depth+1)
	}
	if rv.Kind() == reflect.Pointer {
		return toValueAt(rv.Elem().Interface(), depth+1)
	}
	switch {
	case rv.CanInt():
		return value{kind: kindInt, i: rv.Int()}, nil
	case rv.CanUint():
		return uintValue(rv.Uint()), nil
	case rv.Kind() == reflect.Float32:
		return float32Value(float32(rv.Float()))
	case rv.CanFloat():
		return floatValue(rv.Float())
	case rv.Kind() == reflect.String:
		return value{kind: kindString, s: rv.String()}, nil
	}
	if s, ok := v.(fmt.Stringer); ok {
		return value{kind: kindString, s: s.String()}, nil
	}
	return value{}, fmt.Errorf("shardconf: unsupported sharding value type %T", v)
}

// decimal is a decimal integer read from text: [+-] then ASCII digits,
// leading zeros allowed (as Java's Long.parseLong and new BigInteger
// read it); nothing else, no spaces, no '_' (Java refuses them, and a
// database compares ' 5' with '5' differently in a text column).
type decimal struct {
	neg    bool
	digits string // without sign and leading zeros; "" is zero
}

// decimalOf parses s; ok is false when s is not a decimal integer.
func decimalOf(s string) (d decimal, ok bool) {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		d.neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return d, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return d, false
		}
	}
	for len(s) > 0 && s[0] == '0' {
		s = s[1:]
	}
	d.digits = s
	if s == "" {
		d.neg = false
	}
	return d, true
}

// class says where the number lies: 0 within int64 (n set), 1 above int64
// within uint64 (u set), 2 above uint64, -1 below int64.
func (d decimal) class() (c int, n int64, u uint64) {
	if len(d.digits) > 20 {
		if d.neg {
			return -1, 0, 0
		}
		return 2, 0, 0
	}
	if d.digits == "" {
		return 0, 0, 0
	}
	x, err := strconv.ParseUint(d.digits, 10, 64)
	switch {
	case err != nil && d.neg:
		return -1, 0, 0
	case err != nil:
		return 2, 0, 0
	case d.neg && x > 1<<63:
		return -1, 0, 0
	case d.neg:
		return 0, int64(-x), 0 // -(1<<63) wraps to MinInt64 exactly
	case x > math.MaxInt64:
		return 1, 0, x
	}
	return 0, int64(x), 0
}

// value is the decimal as an integer value; beyond 64 bits is an error
// naming src.
func (d decimal) value(src string) (value, error) {
	switch c, n, u := d.class(); c {
	case 0:
		return value{kind: kindInt, i: n}, nil
	case 1:
		return value{kind: kindBig, u: u}, nil
	}
	return value{}, fmt.Errorf("shardconf: sharding value %s is beyond 64 bits", src)
}

// integralBound makes a range bound holding a float with a fraction the
// integer bound that selects the same integers: x > 1.5 and x >= 1.5 are
// x >= 2 (a lower bound rounds up), x < 2.5 is x <= 2 (an upper bound
// rounds down). Other bounds are returned as they are.
func integralBound(b bound, lower bool) bound {
	if !b.set || b.v.kind != kindFloat {
		return b
	}
	f := math.Floor(b.v.f)
	if lower {
		f = math.Ceil(b.v.f)
	}
	// A fraction means |f| < 2^52: the integer fits int64 exactly.
	return bound{v: value{kind: kindInt, i: int64(f)}, set: true, inclusive: true}
}

// integerView is how the algorithms that read numbers (VOLUME_RANGE,
// BOUNDARY_RANGE, SNOWFLAKE_*) see a value: an integer kind as it is, a
// decimal string as the number it spells. class is that of decimal.class;
// ok is false for anything else (text, a fraction, a time).
func integerView(v value) (c int, n int64, u uint64, ok bool) {
	switch v.kind {
	case kindInt:
		return 0, v.i, 0, true
	case kindBig:
		return 1, 0, v.u, true
	case kindString:
		d, good := decimalOf(v.s)
		if !good {
			return 0, 0, 0, false
		}
		c, n, u = d.class()
		return c, n, u, true
	}
	return 0, 0, 0, false
}

// String renders the value as ShardingSphere's toString would.
func (v value) String() string {
	switch v.kind {
	case kindInt:
		return strconv.FormatInt(v.i, 10)
	case kindBig:
		return strconv.FormatUint(v.u, 10)
	case kindString:
		return v.s
	case kindTime:
		return v.t.Format(time.RFC3339Nano)
	case kindFloat:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	}
	return ""
}

// bound is one end of a range; a nil-kind bound is open (unbounded).
type bound struct {
	v         value
	set       bool
	inclusive bool
}

// span is a range of values: lo and hi may each be unbounded.
type span struct{ lo, hi bound }
