package merge

import (
	"cmp"
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// num is a numeric value as the driver gave it: an integer, an unsigned
// integer, a float, or decimal text (PostgreSQL numeric, MySQL DECIMAL,
// integers of MySQL's text protocol), kept unparsed so that comparing two
// decimals allocates nothing.
type num struct {
	kind byte // 'i', 'u', 'f' or 'd'
	i    int64
	u    uint64
	f    float64
	s    string // 'd': the text, when it came as a string
	b    []byte // 'd': the text, when it came as []byte
}

// numOf reads v as a number of a column of class c. ok is false when v is
// not a number at all (text of a text column, a time...).
func numOf(v driver.Value, c class) (n num, ok bool, err error) {
	switch x := v.(type) {
	case int64:
		return num{kind: 'i', i: x}, true, nil
	case float64:
		return num{kind: 'f', f: x}, true, nil
	case uint64:
		return num{kind: 'u', u: x}, true, nil
	case int:
		return num{kind: 'i', i: int64(x)}, true, nil
	case int32:
		return num{kind: 'i', i: int64(x)}, true, nil
	case int16:
		return num{kind: 'i', i: int64(x)}, true, nil
	case int8:
		return num{kind: 'i', i: int64(x)}, true, nil
	case uint32:
		return num{kind: 'i', i: int64(x)}, true, nil
	case uint16:
		return num{kind: 'i', i: int64(x)}, true, nil
	case uint8:
		return num{kind: 'i', i: int64(x)}, true, nil
	case uint:
		return num{kind: 'u', u: uint64(x)}, true, nil
	case float32:
		return num{kind: 'f', f: float64(x)}, true, nil
	case bool:
		if c != clsSQLite {
			return num{}, false, nil
		}
		if x {
			return num{kind: 'i', i: 1}, true, nil
		}
		return num{kind: 'i'}, true, nil
	case string:
		return textNum(x, nil, c)
	case []byte:
		return textNum("", x, c)
	}
	return num{}, false, nil
}

// textNum reads the text of a numeric column: decimal text, or a float's
// text on a floating-point column.
func textNum(s string, b []byte, c class) (num, bool, error) {
	switch c {
	case clsNumber:
		if b != nil {
			if _, _, _, _, ok := decParts(b); !ok {
				return num{}, false, fmt.Errorf("%q is not a decimal number", b)
			}
			return num{kind: 'd', b: b}, true, nil
		}
		if _, _, _, _, ok := decParts(s); !ok {
			return num{}, false, fmt.Errorf("%q is not a decimal number", s)
		}
		return num{kind: 'd', s: s}, true, nil
	case clsFloat:
		t := s
		if b != nil {
			t = string(b)
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return num{}, false, fmt.Errorf("%q is not a floating-point number", t)
		}
		return num{kind: 'f', f: f}, true, nil
	}
	return num{}, false, nil
}

// decParts splits decimal text into sign, integer digits without leading
// zeros and fraction digits without trailing zeros. special is 0 for a
// finite value, 1 for Infinity, -1 for -Infinity and 2 for NaN, as
// PostgreSQL writes them. ok is false for anything else (exponents
// included: neither PostgreSQL nor MySQL writes decimals with one).
func decParts[T ~string | ~[]byte](t T) (neg bool, ip, fp T, special int8, ok bool) {
	switch string(t) {
	case "NaN":
		return false, ip, fp, 2, true
	case "Infinity", "+Infinity":
		return false, ip, fp, 1, true
	case "-Infinity":
		return true, ip, fp, -1, true
	}
	if len(t) > 0 && (t[0] == '-' || t[0] == '+') {
		neg, t = t[0] == '-', t[1:]
	}
	dot := -1
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] >= '0' && t[i] <= '9':
		case t[i] == '.' && dot < 0:
			dot = i
		default:
			return false, ip, fp, 0, false
		}
	}
	if len(t) == 0 || (dot == 0 && len(t) == 1) {
		return false, ip, fp, 0, false
	}
	ip = t
	if dot >= 0 {
		ip, fp = t[:dot], t[dot+1:]
	}
	for len(ip) > 0 && ip[0] == '0' {
		ip = ip[1:]
	}
	for len(fp) > 0 && fp[len(fp)-1] == '0' {
		fp = fp[:len(fp)-1]
	}
	if len(ip) == 0 && len(fp) == 0 {
		neg = false // -0 is 0
	}
	return neg, ip, fp, 0, true
}

// cmpDec compares two decimal texts decParts accepts.
func cmpDec[A, B ~string | ~[]byte](a A, b B) int {
	an, ai, af, as, _ := decParts(a)
	bn, bi, bf, bs, _ := decParts(b)
	if as != 0 || bs != 0 {
		return cmp.Compare(specialRank(an, as), specialRank(bn, bs))
	}
	az, bz := len(ai) == 0 && len(af) == 0, len(bi) == 0 && len(bf) == 0
	switch {
	case az && bz:
		return 0
	case an != bn:
		if an {
			return -1
		}
		return 1
	}
	c := cmp.Compare(len(ai), len(bi))
	if c == 0 {
		c = cmpBytes(ai, bi)
	}
	if c == 0 {
		c = cmpBytes(af, bf)
	}
	if an {
		return -c
	}
	return c
}

// specialRank orders -Infinity < finite < Infinity < NaN.
func specialRank(neg bool, special int8) int {
	if special == 0 {
		return 0
	}
	return int(special)
}

// cmpBytes compares two byte strings of either Go type, bytewise.
func cmpBytes[A, B ~string | ~[]byte](a A, b B) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return cmp.Compare(len(a), len(b))
}

// cmpFloat orders floats as PostgreSQL does: NaN above every number and
// equal to itself, -0 equal to 0.
func cmpFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn || yn:
		return cmp.Compare(b2i(xn), b2i(yn))
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cmpNum compares two numbers exactly.
func cmpNum(x, y num) int {
	if x.kind == y.kind {
		switch x.kind {
		case 'i':
			return cmp.Compare(x.i, y.i)
		case 'u':
			return cmp.Compare(x.u, y.u)
		case 'f':
			return cmpFloat(x.f, y.f)
		}
		switch {
		case x.b != nil && y.b != nil:
			return cmpDec(x.b, y.b)
		case x.b != nil:
			return cmpDec(x.b, y.s)
		case y.b != nil:
			return cmpDec(x.s, y.b)
		}
		return cmpDec(x.s, y.s)
	}
	switch {
	case x.kind == 'i' && y.kind == 'u':
		if x.i < 0 {
			return -1
		}
		return cmp.Compare(uint64(x.i), y.u)
	case x.kind == 'u' && y.kind == 'i':
		return -cmpNum(y, x)
	}
	return x.ext().cmp(y.ext())
}

// ext is a number on the extended line: finite (r), ±Infinity or NaN.
type ext struct {
	r    *big.Rat
	rank int // -1: -Infinity, 0: finite, 1: Infinity, 2: NaN
}

func (x ext) cmp(y ext) int {
	if x.rank != y.rank || x.rank != 0 {
		return cmp.Compare(x.rank, y.rank)
	}
	return x.r.Cmp(y.r)
}

func (x num) ext() ext {
	switch x.kind {
	case 'i':
		return ext{r: new(big.Rat).SetInt64(x.i)}
	case 'u':
		return ext{r: new(big.Rat).SetUint64(x.u)}
	case 'f':
		switch {
		case math.IsNaN(x.f):
			return ext{rank: 2}
		case math.IsInf(x.f, 0):
			return ext{rank: int(math.Copysign(1, x.f))}
		}
		return ext{r: new(big.Rat).SetFloat64(x.f)}
	}
	d := x.dec()
	if d.special != 0 {
		return ext{rank: int(d.special)}
	}
	r := new(big.Rat).SetInt(d.unscaled)
	return ext{r: r.Quo(r, new(big.Rat).SetInt(pow10(d.scale)))}
}

// text is a 'd' number's text.
func (x num) text() string {
	if x.b != nil {
		return string(x.b)
	}
	return x.s
}

// decimal is an exact decimal: unscaled / 10^scale, or a special value.
type decimal struct {
	unscaled *big.Int
	scale    int
	special  int8 // as decParts
}

// dec parses a 'd' number (or converts an integer) exactly.
func (x num) dec() decimal {
	switch x.kind {
	case 'i':
		return decimal{unscaled: big.NewInt(x.i)}
	case 'u':
		return decimal{unscaled: new(big.Int).SetUint64(x.u)}
	}
	t := x.text()
	neg, ip, fp, special, _ := decParts(t)
	if special != 0 {
		return decimal{special: special}
	}
	// The scale is the written one ("1.50" has scale 2), as PostgreSQL's
	// display scale, which sums and averages carry.
	scale := 0
	for i := 0; i < len(t); i++ {
		if t[i] == '.' {
			scale = len(t) - i - 1
		}
	}
	u, _ := new(big.Int).SetString(ip+fp+zeros(scale-len(fp)), 10)
	if u == nil {
		u = new(big.Int)
	}
	if neg {
		u.Neg(u)
	}
	return decimal{unscaled: u, scale: scale}
}

func zeros(n int) string {
	if n <= 0 {
		return ""
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

var pow10Cache [40]*big.Int

func init() {
	p := big.NewInt(1)
	for i := range pow10Cache {
		pow10Cache[i] = new(big.Int).Set(p)
		p.Mul(p, big.NewInt(10))
	}
}

// pow10 returns 10^n; callers must not modify it.
func pow10(n int) *big.Int {
	if n < len(pow10Cache) {
		return pow10Cache[n]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// String writes d as PostgreSQL and MySQL write decimals: scale digits
// after the point, no exponent.
func (d decimal) String() string {
	switch d.special {
	case 2:
		return "NaN"
	case 1:
		return "Infinity"
	case -1:
		return "-Infinity"
	}
	s := new(big.Int).Abs(d.unscaled).String()
	if d.scale > 0 {
		if len(s) <= d.scale {
			s = zeros(d.scale-len(s)+1) + s
		}
		s = s[:len(s)-d.scale] + "." + s[len(s)-d.scale:]
	}
	if d.unscaled.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// appendNumKey appends n's canonical form: equal numbers (1.0, 1.00, 1,
// -0, 0) get equal keys, as the databases group them.
func appendNumKey(buf []byte, n num) []byte {
	switch n.kind {
	case 'i':
		return strconv.AppendInt(buf, n.i, 10)
	case 'u':
		return strconv.AppendUint(buf, n.u, 10)
	case 'f':
		f := n.f
		switch {
		case math.IsNaN(f):
			return append(buf, "NaN"...)
		case math.IsInf(f, 1):
			return append(buf, "Infinity"...)
		case math.IsInf(f, -1):
			return append(buf, "-Infinity"...)
		case f == 0:
			return append(buf, '0')
		case f == math.Trunc(f):
			return strconv.AppendFloat(buf, f, 'f', 0, 64) // exact
		}
		// A fraction: the float's shortest text, marked so that it never
		// equals a decimal (the two never share a column but in SQLite,
		// which has no decimals).
		return strconv.AppendFloat(append(buf, 'f'), f, 'g', -1, 64)
	}
	if n.b != nil {
		return appendDecKey(buf, n.b)
	}
	return appendDecKey(buf, n.s)
}

func appendDecKey[T ~string | ~[]byte](buf []byte, t T) []byte {
	neg, ip, fp, special, _ := decParts(t)
	switch special {
	case 2:
		return append(buf, "NaN"...)
	case 1:
		return append(buf, "Infinity"...)
	case -1:
		return append(buf, "-Infinity"...)
	}
	if neg {
		buf = append(buf, '-')
	}
	if len(ip) == 0 {
		buf = append(buf, '0')
	}
	buf = append(buf, ip...)
	if len(fp) > 0 {
		buf = append(append(buf, '.'), fp...)
	}
	return buf
}
