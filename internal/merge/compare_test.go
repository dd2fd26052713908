package merge

import (
	"database/sql/driver"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// randomNumber is a number as some driver returns it, with its exact
// value (nil for NaN/Infinity, whose rank goes in special).
func randomNumber(rng *rand.Rand) (driver.Value, *big.Rat, int) {
	switch rng.IntN(7) {
	case 0:
		n := rng.Int64N(2001) - 1000
		return n, new(big.Rat).SetInt64(n), 0
	case 1:
		f := float64(rng.IntN(4001)-2000) / 8
		if rng.IntN(20) == 0 {
			f = math.Copysign(0, -1)
		}
		return f, new(big.Rat).SetFloat64(f), 0
	case 2, 3:
		// decimal text with leading/trailing zeros and signs
		ip := strconv.Itoa(rng.IntN(300))
		s := ip
		if rng.IntN(2) == 0 {
			s = "00" + s
		}
		if rng.IntN(2) == 0 {
			s += "." + strconv.Itoa(rng.IntN(1000))[:1] + []string{"", "0", "00", "5", "25"}[rng.IntN(5)]
		}
		if rng.IntN(3) == 0 {
			s = "-" + s
		}
		r, _ := new(big.Rat).SetString(s)
		if rng.IntN(2) == 0 {
			return []byte(s), r, 0
		}
		return s, r, 0
	case 4:
		return uint64(rng.IntN(1000)), new(big.Rat).SetInt64(int64(rng.IntN(1000))), -9 // value fixed below
	case 5:
		sp := []struct {
			v    driver.Value
			rank int
		}{{"NaN", 2}, {math.NaN(), 2}, {"Infinity", 1}, {math.Inf(1), 1}, {"-Infinity", -1}, {math.Inf(-1), -1}}[rng.IntN(6)]
		return sp.v, nil, sp.rank
	}
	n := rng.Int64N(1 << 62)
	return strconv.FormatInt(n, 10) + "000", new(big.Rat).SetInt(new(big.Int).Mul(big.NewInt(n), big.NewInt(1000))), 0
}

// Ordering and grouping keys agree with exact arithmetic over every
// representation a driver uses for numbers.
func TestNumberOrderAndKeysAgreeWithExactValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, ra, sa := randomNumber(rng)
		b, rb, sb := randomNumber(rng)
		if sa == -9 {
			ra = new(big.Rat).SetUint64(a.(uint64))
			sa = 0
		}
		if sb == -9 {
			rb = new(big.Rat).SetUint64(b.(uint64))
			sb = 0
		}
		want := 0
		switch {
		case sa != 0 || sb != 0:
			want = cmpInt(sa, sb)
		default:
			want = ra.Cmp(rb)
		}
		got, err := compareValues(a, b, clsNumber, clsNumber, TextRefused)
		if err != nil || got != want {
			t.Fatalf("compare %#v %#v = %d, %v; want %d", a, b, got, err, want)
		}
		ka, err1 := appendKey(nil, a, clsNumber, TextRefused)
		kb, err2 := appendKey(nil, b, clsNumber, TextRefused)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		_, fa := a.(float64)
		_, fb := b.(float64)
		if fa != fb && want == 0 && sa == 0 && ra.IsInt() == false {
			continue // a float fraction and a decimal never share a key (they never share a column)
		}
		if (string(ka) == string(kb)) != (want == 0) {
			t.Fatalf("keys of %#v and %#v: %q %q, compare %d", a, b, ka, kb, want)
		}
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Text ordering under each policy is a total order whose equality is the
// grouping key's.
func TestTextOrderAndKeysAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() driver.Value {
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = "aAb \t\x00é"[rng.IntN(8)]
		}
		if rng.IntN(2) == 0 {
			return b
		}
		return string(b)
	}
	for _, tc := range []struct {
		c class
		t Text
	}{{clsText, TextBinary}, {clsText, TextPadSpace}, {clsText, TextNoCase}, {clsText, TextRTrim}, {clsBPChar, TextBinary}} {
		for range 5000 {
			a, b, c := word(), word(), word()
			ab, err1 := compareValues(a, b, tc.c, tc.c, tc.t)
			ba, err2 := compareValues(b, a, tc.c, tc.c, tc.t)
			if err1 != nil || err2 != nil || ab != -ba {
				t.Fatalf("%v: %q %q: %d %d %v %v", tc, a, b, ab, ba, err1, err2)
			}
			bc, _ := compareValues(b, c, tc.c, tc.c, tc.t)
			ac, _ := compareValues(a, c, tc.c, tc.c, tc.t)
			if ab <= 0 && bc <= 0 && ac > 0 {
				t.Fatalf("%v: not transitive: %q %q %q", tc, a, b, c)
			}
			ka, _ := appendKey(nil, a, tc.c, tc.t)
			kb, _ := appendKey(nil, b, tc.c, tc.t)
			if (string(ka) == string(kb)) != (ab == 0) {
				t.Fatalf("%v: %q %q: keys %q %q, compare %d", tc, a, b, ka, kb, ab)
			}
		}
	}
}
