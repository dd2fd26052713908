package shardconf_test

// Route against an independent oracle: each test below re-derives, from
// ShardingSphere's documented arithmetic (and shardkey's documented
// deviations), the table a value belongs in, and compares Route on many
// random values, carried by every Go type that holds them, over random
// rules with partitions no table serves. Int64, int and keygen.ID values
// take the int kernels (fast.go), the other carriers the general path; both
// must agree with the oracle. IN lists mixing reachable and unreachable
// values must fail with ErrNoRoute, and a range must reach every table a
// value inside it was routed to.

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// orRule is a one-table rule over the tables t_<suffix> (one data source).
func orRule(suffixes []string, algoType string, props map[string]string) string {
	nodes := make([]string, len(suffixes))
	for i, s := range suffixes {
		nodes[i] = "ds.t_" + s
	}
	var p strings.Builder
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&p, "        %s: %q\n", k, props[k])
	}
	return `dataSources:
  ds: {url: "sqlite::memory:"}
rules:
- !SHARDING
  tables:
    t:
      actualDataNodes: ` + strings.Join(nodes, ",") + `
      tableStrategy:
        standard:
          shardingColumn: k
          shardingAlgorithmName: a
  shardingAlgorithms:
    a:
      type: ` + algoType + `
      props:
` + p.String()
}

func orRouter(t *testing.T, yaml string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, yaml)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatalf("NewRouter: %v\n%s", err, yaml)
	}
	return r
}

// orOutcome is a route's outcome as a string: "t_3", "NOROUTE" or "ERR".
func orOutcome(ts []shardconf.Target, err error) string {
	switch {
	case errors.Is(err, shardconf.ErrNoRoute):
		return "NOROUTE"
	case err != nil:
		return "ERR"
	}
	names := make([]string, len(ts))
	for i, x := range ts {
		names[i] = x.Table
	}
	return strings.Join(names, ",")
}

// orCarriers are the Go values that carry the integer n to Route.
func orCarriers(n int64) []any {
	out := []any{n, int(n), keygen.ID(n), json.Number(strconv.FormatInt(n, 10)), new(big.Int).SetInt64(n),
		sql.NullInt64{Int64: n, Valid: true}}
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		out = append(out, int32(n))
	}
	if n >= 0 {
		out = append(out, uint64(n))
	}
	if n > -(1<<53) && n < 1<<53 {
		out = append(out, float64(n))
	}
	return out
}

// orInt draws an integer: small, near the int32 and int64 edges, or any.
func orInt(rng *rand.Rand) int64 {
	switch rng.IntN(6) {
	case 0:
		return rng.Int64N(200) - 100
	case 1:
		return math.MinInt32 + rng.Int64N(5) - 2
	case 2:
		return math.MaxInt32 + rng.Int64N(5) - 2
	case 3:
		return math.MaxInt64 - rng.Int64N(3)
	case 4:
		return math.MinInt64 + rng.Int64N(3)
	}
	return int64(rng.Uint64())
}

// orSubset keeps each of 0..n-1 with probability 3/4 (at least one), as
// the suffixes of the tables that exist.
func orSubset(rng *rand.Rand, n int, render func(i int) string) (suffixes []string, has map[string]bool) {
	has = map[string]bool{}
	for i := 0; i < n; i++ {
		if rng.IntN(4) != 0 || i == n-1 && len(suffixes) == 0 {
			suffixes = append(suffixes, render(i))
			has[render(i)] = true
		}
	}
	return suffixes, has
}

// orCheckInts routes many integers through every carrier and compares with
// want(n, asString): the table suffix, "" for no route.
func orCheckInts(t *testing.T, rng *rand.Rand, r *shardconf.Router, cfg string, want func(n *big.Int, text bool) string) {
	t.Helper()
	name := func(s string) string {
		if s == "" {
			return "NOROUTE"
		}
		return "t_" + s
	}
	var reach, miss []int64
	for i := 0; i < 300; i++ {
		n := orInt(rng)
		w := name(want(big.NewInt(n), false))
		if w == "NOROUTE" {
			miss = append(miss, n)
		} else {
			reach = append(reach, n)
		}
		for _, c := range orCarriers(n) {
			if got := orOutcome(r.Route("t", shardconf.Eq("k", c))); got != w {
				t.Fatalf("%s\nRoute k = %v (%T) = %s, oracle %s", cfg, c, c, got, w)
			}
		}
		s := strconv.FormatInt(n, 10)
		if got, w := orOutcome(r.Route("t", shardconf.Eq("k", s))), name(want(big.NewInt(n), true)); got != w {
			t.Fatalf("%s\nRoute k = %q (string) = %s, oracle %s", cfg, s, got, w)
		}
	}
	// uint64 above int64: its own number.
	for i := 0; i < 50; i++ {
		u := uint64(math.MaxInt64) + 1 + rng.Uint64N(math.MaxInt64)
		if i == 0 {
			u = math.MaxUint64
		}
		w := name(want(new(big.Int).SetUint64(u), false))
		for _, c := range []any{u, new(big.Int).SetUint64(u), json.Number(strconv.FormatUint(u, 10))} {
			if got := orOutcome(r.Route("t", shardconf.Eq("k", c))); got != w {
				t.Fatalf("%s\nRoute k = %v (%T) = %s, oracle %s", cfg, c, c, got, w)
			}
		}
	}
	// An IN list with an unreachable value is ErrNoRoute, never a partial
	// route; one of reachable values routes to their tables.
	if len(reach) > 1 && len(miss) > 0 {
		vs := []any{reach[0], miss[0], reach[1]}
		if got := orOutcome(r.Route("t", shardconf.In("k", vs...))); got != "NOROUTE" {
			t.Fatalf("%s\nRoute k IN %v = %s, want NOROUTE", cfg, vs, got)
		}
	}
	if len(reach) > 1 {
		set := map[string]bool{}
		for _, n := range reach[:2] {
			set["t_"+want(big.NewInt(n), false)] = true
		}
		w := slices.Sorted(func(yield func(string) bool) {
			for k := range set {
				if !yield(k) {
					return
				}
			}
		})
		ts, err := r.Route("t", shardconf.In("k", reach[0], reach[1]))
		if got := orOutcome(ts, err); !sameSet(got, w) {
			t.Fatalf("%s\nRoute k IN (%d, %d) = %s, want %v", cfg, reach[0], reach[1], got, w)
		}
	}
}

func sameSet(got string, want []string) bool {
	g := strings.Split(got, ",")
	slices.Sort(g)
	return slices.Equal(g, want)
}

// orCheckRanges checks that every range reaches each table that a value
// inside it routes to (values drawn inside the range, and its ends).
func orCheckRanges(t *testing.T, rng *rand.Rand, r *shardconf.Router, cfg string, draw func() int64, want func(n *big.Int, text bool) string) {
	t.Helper()
	for i := 0; i < 300; i++ {
		a, b := draw(), draw()
		if a > b {
			a, b = b, a
		}
		loIn, hiIn := rng.IntN(2) == 0, rng.IntN(2) == 0
		var conds []shardconf.Cond
		lo, hi := a, b
		switch rng.IntN(4) {
		case 0: // lower open
			lo = math.MinInt64
			loIn = true
		case 1: // upper open
			hi = math.MaxInt64
			hiIn = true
		}
		if lo != math.MinInt64 || !loIn {
			if loIn {
				conds = append(conds, shardconf.Ge("k", lo))
			} else {
				conds = append(conds, shardconf.Gt("k", lo))
			}
		}
		if hi != math.MaxInt64 || !hiIn {
			if hiIn {
				conds = append(conds, shardconf.Le("k", hi))
			} else {
				conds = append(conds, shardconf.Lt("k", hi))
			}
		}
		if len(conds) == 0 {
			continue
		}
		ts, err := r.Route("t", conds...)
		if err != nil {
			t.Fatalf("%s\nRoute %v: %v", cfg, conds, err)
		}
		got := map[string]bool{}
		for _, x := range ts {
			got[x.Table] = true
		}
		in := func(n int64) bool {
			return (n > lo || loIn && n == lo) && (n < hi || hiIn && n == hi)
		}
		probe := []int64{lo, hi, lo + 1, hi - 1}
		for j := 0; j < 40; j++ {
			if hi > lo {
				probe = append(probe, lo+int64(rng.Uint64N(uint64(hi-lo))))
			}
			probe = append(probe, draw())
		}
		for _, n := range probe {
			if !in(n) {
				continue
			}
			if s := want(big.NewInt(n), false); s != "" && !got["t_"+s] {
				t.Fatalf("%s\nRoute %v = %s misses t_%s, where %d routes", cfg, conds, orOutcome(ts, nil), s, n)
			}
		}
	}
}

// orJavaLongHash is java.lang.Long.hashCode.
func orJavaLongHash(v int64) int32 {
	u := uint64(v)
	return int32(uint32(u) ^ uint32(u>>32))
}

// orJavaBigHash is java.math.BigInteger.hashCode: over the magnitude's
// big-endian 32-bit words (no leading zero word), h = 31*h + word in int
// arithmetic, times the signum.
func orJavaBigHash(n *big.Int) int32 {
	mag := new(big.Int).Abs(n).Bytes()
	for len(mag)%4 != 0 {
		mag = append([]byte{0}, mag...)
	}
	var h int32
	for i := 0; i < len(mag); i += 4 {
		w := int32(uint32(mag[i])<<24 | uint32(mag[i+1])<<16 | uint32(mag[i+2])<<8 | uint32(mag[i+3]))
		h = 31*h + w
	}
	return h * int32(n.Sign())
}

// orJavaStringHash is java.lang.String.hashCode of ASCII text.
func orJavaStringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}

func TestModRoutesAsShardingSphereArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	for cfgN := 0; cfgN < 40; cfgN++ {
		count := int64(1 + rng.IntN(12))
		if cfgN%8 == 7 {
			count = int64(90 + rng.IntN(30))
		}
		pad := rng.IntN(2) == 0
		width := len(strconv.FormatInt(count-1, 10))
		render := func(i int) string {
			s := strconv.Itoa(i)
			if pad {
				for len(s) < width {
					s = "0" + s
				}
			}
			return s
		}
		// Some tables beyond the count never match (no residue reaches them).
		suffixes, has := orSubset(rng, int(count)+rng.IntN(3), render)
		if !slices.ContainsFunc(suffixes, func(s string) bool { n, _ := strconv.Atoi(s); return int64(n) < count }) {
			suffixes, has = append(suffixes, render(0)), map[string]bool{render(0): true}
			for _, s := range suffixes {
				has[s] = true
			}
		}
		// ShardingSphere's DataNodeInfo pads every suffix to the shortest
		// suffix among the tables.
		minLen := math.MaxInt
		for _, s := range suffixes {
			minLen = min(minLen, len(s))
		}
		want := func(n *big.Int, _ bool) string {
			s := render(int(new(big.Int).Mod(n, big.NewInt(count)).Int64()))
			for len(s) < minLen {
				s = "0" + s
			}
			if !has[s] {
				return ""
			}
			return s
		}
		props := map[string]string{"sharding-count": strconv.FormatInt(count, 10)}
		if pad {
			props["zero-padding"] = "true"
		}
		cfg := orRule(suffixes, "MOD", props)
		r := orRouter(t, cfg)
		orCheckInts(t, rng, r, cfg, want)
		orCheckRanges(t, rng, r, cfg, func() int64 { return rng.Int64N(3*count) - count }, want)
		orCheckRanges(t, rng, r, cfg, func() int64 { return orInt(rng) }, want)
	}
}

func TestHashModRoutesAsJavaHashCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	for cfgN := 0; cfgN < 40; cfgN++ {
		count := int64(1 + rng.IntN(12))
		normalize := rng.IntN(2) == 0
		suffixes, has := orSubset(rng, int(count), strconv.Itoa)
		want := func(n *big.Int, text bool) string {
			var h int32
			switch {
			case text:
				h = orJavaStringHash(n.String())
			case normalize && n.IsInt64() && n.Int64() >= math.MinInt32 && n.Int64() <= math.MaxInt32:
				h = int32(n.Int64()) // Integer.hashCode
			case n.IsInt64():
				h = orJavaLongHash(n.Int64()) // every integer as a Long
			default:
				h = orJavaBigHash(n)
			}
			a := int64(h)
			if a < 0 {
				a = -a
			}
			s := strconv.FormatInt(a%count, 10)
			if !has[s] {
				return ""
			}
			return s
		}
		props := map[string]string{"sharding-count": strconv.FormatInt(count, 10)}
		if normalize {
			props["normalize-numeric-int-range"] = "true"
		}
		cfg := orRule(suffixes, "HASH_MOD", props)
		orCheckInts(t, rng, orRouter(t, cfg), cfg, want)
	}
}

// orPartitions routes n by partition boundaries: partition k holds
// [starts[k-1], starts[k]), partition 0 everything below starts[0].
func orPartition(starts []*big.Int, n *big.Int) int {
	p := 0
	for _, s := range starts {
		if n.Cmp(s) >= 0 {
			p++
		}
	}
	return p
}

func TestRangeAlgorithmsRouteAsShardingSpherePartitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	for cfgN := 0; cfgN < 60; cfgN++ {
		var (
			starts []*big.Int // the lower end of partitions 1..
			typ    string
			props  map[string]string
			draw   func() int64
		)
		if cfgN%2 == 0 {
			typ = "VOLUME_RANGE"
			lower := rng.Int64N(2000) - 1000
			if cfgN%6 == 4 {
				lower = math.MinInt64 / 2
			}
			volume := 1 + rng.Int64N(50)
			upper := lower + volume*(1+rng.Int64N(8)) - rng.Int64N(volume)
			if upper-lower < volume {
				upper = lower + volume
			}
			// Java: partition 0 = (-inf, lower), then [i, min(i+volume, upper))
			// for i = lower, lower+volume, ... below upper, then [upper, +inf).
			for i := lower; i < upper; i += volume {
				starts = append(starts, big.NewInt(i))
			}
			starts = append(starts, big.NewInt(upper))
			props = map[string]string{"range-lower": strconv.FormatInt(lower, 10), "range-upper": strconv.FormatInt(upper, 10),
				"sharding-volume": strconv.FormatInt(volume, 10)}
			draw = func() int64 {
				if rng.IntN(10) == 0 {
					return orInt(rng)
				}
				return lower - 2*volume + rng.Int64N(upper-lower+4*volume)
			}
		} else {
			typ = "BOUNDARY_RANGE"
			var bs []string
			var vals []int64
			for i := 0; i < 1+rng.IntN(6); i++ {
				b := rng.Int64N(200) - 100
				if rng.IntN(5) == 0 && len(vals) > 0 {
					b = vals[0] // duplicates are kept: an empty partition
				}
				vals = append(vals, b)
				bs = append(bs, strconv.FormatInt(b, 10))
			}
			slices.Sort(vals)
			for _, b := range vals {
				starts = append(starts, big.NewInt(b))
			}
			props = map[string]string{"sharding-ranges": strings.Join(bs, ", ")}
			draw = func() int64 {
				if rng.IntN(10) == 0 {
					return orInt(rng)
				}
				return rng.Int64N(260) - 130
			}
		}
		suffixes, has := orSubset(rng, len(starts)+1, strconv.Itoa)
		want := func(n *big.Int, _ bool) string {
			s := strconv.Itoa(orPartition(starts, n))
			if !has[s] {
				return ""
			}
			return s
		}
		cfg := orRule(suffixes, typ, props)
		r := orRouter(t, cfg)
		orCheckInts(t, rng, r, cfg, want)
		orCheckRanges(t, rng, r, cfg, draw, want)
	}
}

// orAutoPartition is AutoIntervalShardingAlgorithm's partition of a time s
// seconds after datetime-lower: ceil of new DecimalFormat("0.00") (HALF_EVEN,
// on the double's exact value) of s / seconds, clamped to 0..tables-1.
func orAutoPartition(s, seconds, tables int64) int64 {
	q := float64(s) / float64(seconds)
	x := new(big.Float).SetPrec(200).SetFloat64(q)
	x.Mul(x, big.NewFloat(100).SetPrec(200))
	fl, _ := x.Int(nil) // truncated toward zero
	if x.Sign() < 0 {
		if f := new(big.Float).SetPrec(200).SetInt(fl); f.Cmp(x) != 0 {
			fl.Sub(fl, big.NewInt(1))
		}
	}
	frac := new(big.Float).SetPrec(200).Sub(x, new(big.Float).SetPrec(200).SetInt(fl))
	switch c := frac.Cmp(big.NewFloat(0.5)); {
	case c > 0, c == 0 && fl.Bit(0) == 1:
		fl.Add(fl, big.NewInt(1))
	}
	// ceil(fl / 100)
	p, m := new(big.Int).DivMod(fl, big.NewInt(100), new(big.Int))
	if m.Sign() != 0 {
		p.Add(p, big.NewInt(1))
	}
	v := p.Int64()
	return max(0, min(v, tables-1))
}

func TestAutoIntervalRoutesAsShardingSphereArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 4))
	zones := []*time.Location{time.UTC, time.FixedZone("E", 5*3600+1800), time.FixedZone("W", -8*3600)}
	const layout = "2006-01-02 15:04:05"
	for cfgN := 0; cfgN < 40; cfgN++ {
		lower := time.Date(2020+rng.IntN(3), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), 0, 0, 0, time.UTC)
		seconds := []int64{1, 7, 60, 3600, 86400, 86400 * 7, 1000}[rng.IntN(7)]
		upper := lower.Add(time.Duration(seconds*(rng.Int64N(10))+rng.Int64N(seconds)) * time.Second)
		tables := (upper.Unix()-lower.Unix())/seconds + 2
		suffixes, has := orSubset(rng, int(tables), strconv.Itoa)
		if rng.IntN(2) == 0 { // a table past the last partition: never reached
			suffixes = append(suffixes, strconv.FormatInt(tables, 10))
		}
		cfg := orRule(suffixes, "AUTO_INTERVAL", map[string]string{"datetime-lower": lower.Format(layout),
			"datetime-upper": upper.Format(layout), "sharding-seconds": strconv.FormatInt(seconds, 10)})
		r := orRouter(t, cfg)
		// want routes a wall clock (a time read in its own zone).
		want := func(wall time.Time) string {
			civil, err := time.Parse(layout, wall.Format(layout))
			if err != nil {
				t.Fatal(err)
			}
			s := strconv.FormatInt(orAutoPartition(civil.Unix()-lower.Unix(), seconds, tables), 10)
			if !has[s] {
				return "NOROUTE"
			}
			return "t_" + s
		}
		span := time.Duration(seconds*(tables+2)) * time.Second
		draw := func() time.Time {
			d := time.Duration(rng.Int64N(int64(span))) - time.Duration(seconds)*time.Second
			if rng.IntN(3) == 0 { // on a boundary, or just past it
				d = time.Duration(seconds*rng.Int64N(tables+1)+rng.Int64N(3)-1)*time.Second + time.Duration(rng.IntN(2))*time.Millisecond*500
			}
			wall := lower.Add(d)
			z := zones[rng.IntN(len(zones))]
			// the same wall clock in zone z
			return time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), z)
		}
		for i := 0; i < 300; i++ {
			v := draw()
			w := want(v)
			if got := orOutcome(r.Route("t", shardconf.Eq("k", v))); got != w {
				t.Fatalf("%s\nRoute k = %v = %s, oracle %s", cfg, v, got, w)
			}
			if v.Location() == time.UTC && v.Nanosecond() == 0 {
				s := v.Format(layout)
				if got := orOutcome(r.Route("t", shardconf.Eq("k", s))); got != w {
					t.Fatalf("%s\nRoute k = %q = %s, oracle %s", cfg, s, got, w)
				}
			}
		}
		// Ranges (bounds in UTC: a database compares instants) reach every
		// table a value inside routes to.
		for i := 0; i < 200; i++ {
			a, b := draw().UTC(), draw().UTC()
			if a.After(b) {
				a, b = b, a
			}
			var conds []shardconf.Cond
			loSet, hiSet := rng.IntN(4) != 0, rng.IntN(4) != 0
			if loSet {
				conds = append(conds, shardconf.Gt("k", a))
			}
			if hiSet {
				conds = append(conds, shardconf.Lt("k", b))
			}
			if len(conds) == 0 {
				continue
			}
			ts, err := r.Route("t", conds...)
			if err != nil {
				t.Fatalf("%s\nRoute %v: %v", cfg, conds, err)
			}
			got := map[string]bool{}
			for _, x := range ts {
				got[x.Table] = true
			}
			for j := 0; j < 60; j++ {
				v := draw().UTC()
				if loSet && !v.After(a) || hiSet && !v.Before(b) {
					continue
				}
				if w := want(v); w != "NOROUTE" && !got[w] {
					t.Fatalf("%s\nRoute %v = %s misses %s, where %v routes", cfg, conds, orOutcome(ts, nil), w, v)
				}
			}
		}
	}
}

// orIvTemplate is an INTERVAL rule shape: its datetime-pattern as a Go
// layout, how a value is truncated to it, and the suffix a start gives.
type orIvTemplate struct {
	pattern, layout string
	units           []string // datetime-interval-unit choices
	suffixes        []string // sharding-suffix-pattern choices
	month, clock    bool     // a Month (MM) or a LocalTime pattern
}

var orIvTemplates = []orIvTemplate{
	{pattern: "yyyy-MM-dd HH:mm:ss", layout: "2006-01-02 15:04:05", units: []string{"Hours", "Days", "Months", "Years", "Minutes"},
		suffixes: []string{"yyyyMMdd", "yyyyMM", "MM", "HH", "dd", "yyyyQQ", "yyyy'_'QQQ", "QQ"}},
	{pattern: "yyyy-MM-dd", layout: "2006-01-02", units: []string{"Days", "Weeks", "Months", "Years"},
		suffixes: []string{"yyyyMMdd", "yyyyMM", "MM", "dd", "yyyyQ", "Q"}},
	{pattern: "yyyyMM", layout: "200601", units: []string{"Months", "Years"}, suffixes: []string{"yyyyMM", "MM", "yyyyQQ", "QQ"}},
	{pattern: "MM", layout: "01", units: []string{"Months"}, suffixes: []string{"MM", "QQ"}, month: true},
	{pattern: "HH:mm", layout: "15:04", units: []string{"Minutes", "Hours"}, suffixes: []string{"HHmm", "HH", "mm"}, clock: true},
}

// orSuffix formats a start with a sharding-suffix-pattern of the list above.
func orSuffix(pattern string, t time.Time) string {
	q := (int(t.Month())-1)/3 + 1
	switch pattern {
	case "yyyyMMdd":
		return t.Format("20060102")
	case "yyyyMM":
		return t.Format("200601")
	case "MM":
		return t.Format("01")
	case "HH":
		return t.Format("15")
	case "dd":
		return t.Format("02")
	case "HHmm":
		return t.Format("1504")
	case "mm":
		return t.Format("04")
	case "yyyyQQ":
		return fmt.Sprintf("%04d%02d", t.Year(), q)
	case "yyyy'_'QQQ":
		return fmt.Sprintf("%04d_Q%d", t.Year(), q)
	case "yyyyQ":
		return fmt.Sprintf("%04d%d", t.Year(), q)
	case "QQ":
		return fmt.Sprintf("%02d", q)
	case "Q":
		return strconv.Itoa(q)
	}
	panic(pattern)
}

// orPlus is java.time's plus(amount, unit): months and years clamp the day
// to the end of the month they land in.
func orPlus(t time.Time, amount int, unit string) time.Time {
	months := 0
	switch unit {
	case "Minutes":
		return t.Add(time.Duration(amount) * time.Minute)
	case "Hours":
		return t.Add(time.Duration(amount) * time.Hour)
	case "Days":
		return t.AddDate(0, 0, amount)
	case "Weeks":
		return t.AddDate(0, 0, 7*amount)
	case "Months":
		months = amount
	case "Years":
		months = 12 * amount
	}
	first := time.Date(t.Year(), t.Month(), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).AddDate(0, months, 0)
	last := time.Date(first.Year(), first.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return first.AddDate(0, 0, min(t.Day(), last)-1)
}

func TestIntervalRoutesAsShardingSphereIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 5))
	zones := []*time.Location{time.UTC, time.FixedZone("E", 9*3600), time.FixedZone("W", -5*3600-1800)}
	for cfgN := 0; cfgN < 150; cfgN++ {
		tp := orIvTemplates[cfgN%len(orIvTemplates)]
		unit := tp.units[rng.IntN(len(tp.units))]
		suffix := tp.suffixes[rng.IntN(len(tp.suffixes))]
		amount := 1 + rng.IntN(3)
		var lower time.Time
		switch {
		case tp.month:
			lower = time.Date(2000, time.Month(1+rng.IntN(11)), 1, 0, 0, 0, 0, time.UTC)
		case tp.clock:
			lower = time.Date(2000, 1, 1, rng.IntN(6), rng.IntN(60), 0, 0, time.UTC)
		default:
			lower = time.Date(2019+rng.IntN(3), time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC)
			lower, _ = time.Parse(tp.layout, lower.Format(tp.layout))
		}
		// Upper: a few steps on, not on a step boundary in general.
		upper := lower
		for i := 0; i < 2+rng.IntN(30); i++ {
			upper = orPlus(upper, amount, unit)
		}
		upper = upper.Add(-time.Duration(rng.IntN(3)) * time.Hour)
		switch {
		case tp.month:
			upper = time.Date(2000, time.Month(int(lower.Month())+rng.IntN(13-int(lower.Month()))), 1, 0, 0, 0, 0, time.UTC)
		case tp.clock && upper.Day() != 1:
			upper = time.Date(2000, 1, 1, 18, 0, 0, 0, time.UTC)
		}
		upper, _ = time.Parse(tp.layout, upper.Format(tp.layout))
		if tp.clock || tp.month {
			upper = time.Date(2000, upper.Month(), upper.Day(), upper.Hour(), upper.Minute(), 0, 0, time.UTC)
		}
		if upper.Before(lower) {
			upper = lower
		}
		// The intervals, as ShardingSphere walks them.
		var starts []time.Time
		for s := lower; !s.After(upper); s = orPlus(s, amount, unit) {
			if tp.month && int(s.Month())+amount > 12 {
				break
			}
			if tp.clock && orPlus(s, amount, unit).Day() != 1 {
				break
			}
			starts = append(starts, s)
		}
		if len(starts) == 0 {
			continue
		}
		if tp.clock && !orPlus(starts[len(starts)-1], amount, unit).After(upper) {
			continue // shardkey refuses an interval reaching midnight; not what this test is about
		}
		end := orPlus(starts[len(starts)-1], amount, unit)
		var all []string
		for _, s := range starts {
			if x := orSuffix(suffix, s); !slices.Contains(all, x) {
				all = append(all, x)
			}
		}
		var tables []string
		has := map[string]bool{}
		for i, x := range all {
			if rng.IntN(4) != 0 || i == len(all)-1 && len(tables) == 0 {
				tables = append(tables, x)
				has[x] = true
			}
		}
		props := map[string]string{"datetime-pattern": tp.pattern, "datetime-lower": lower.Format(tp.layout),
			"datetime-upper": upper.Format(tp.layout), "sharding-suffix-pattern": suffix,
			"datetime-interval-amount": strconv.Itoa(amount), "datetime-interval-unit": unit}
		cfg := orRule(tables, "INTERVAL", props)
		if tp.clock && upper.Hour() >= 23 {
			continue
		}
		r := orRouter(t, cfg)
		// want routes a value's wall clock, cut to the pattern.
		want := func(v time.Time) string {
			c, _ := time.Parse(tp.layout, v.Format(tp.layout))
			switch {
			case tp.month:
				c = time.Date(2000, v.Month(), 1, 0, 0, 0, 0, time.UTC)
			case tp.clock:
				c = time.Date(2000, 1, 1, c.Hour(), c.Minute(), 0, 0, time.UTC)
			}
			for k, s := range starts {
				next := end
				if k+1 < len(starts) {
					next = starts[k+1]
				}
				if !c.Before(s) && c.Before(next) {
					if x := orSuffix(suffix, s); has[x] {
						return "t_" + x
					}
					return "NOROUTE"
				}
			}
			return "NOROUTE"
		}
		spanD := end.Sub(lower)
		draw := func() time.Time {
			var v time.Time
			if rng.IntN(3) == 0 {
				v = starts[rng.IntN(len(starts))].Add(time.Duration(rng.IntN(3)-1) * time.Second)
			} else {
				v = lower.Add(time.Duration(rng.Int64N(int64(spanD/4)*5+1)) - spanD/16)
			}
			if tp.month || tp.clock {
				v = v.AddDate(rng.IntN(3)-1, 0, 0) // any year: only the month or clock counts
			}
			z := zones[rng.IntN(len(zones))]
			return time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), rng.IntN(2)*5e8, z)
		}
		for i := 0; i < 200; i++ {
			v := draw()
			w := want(v)
			if got := orOutcome(r.Route("t", shardconf.Eq("k", v))); got != w {
				t.Fatalf("%s\nRoute k = %v = %s, oracle %s", cfg, v, got, w)
			}
			if !tp.month {
				s := v.Format(tp.layout)
				if got := orOutcome(r.Route("t", shardconf.Eq("k", s))); got != w {
					t.Fatalf("%s\nRoute k = %q = %s, oracle %s", cfg, s, got, w)
				}
			}
		}
		for i := 0; i < 200; i++ {
			a, b := draw(), draw()
			a, b = time.Date(a.Year(), a.Month(), a.Day(), a.Hour(), a.Minute(), a.Second(), a.Nanosecond(), time.UTC),
				time.Date(b.Year(), b.Month(), b.Day(), b.Hour(), b.Minute(), b.Second(), b.Nanosecond(), time.UTC)
			if a.After(b) {
				a, b = b, a
			}
			loSet, hiSet := rng.IntN(4) != 0, rng.IntN(4) != 0
			loIn, hiIn := rng.IntN(2) == 0, rng.IntN(2) == 0
			var conds []shardconf.Cond
			if loSet {
				if loIn {
					conds = append(conds, shardconf.Ge("k", a))
				} else {
					conds = append(conds, shardconf.Gt("k", a))
				}
			}
			if hiSet {
				if hiIn {
					conds = append(conds, shardconf.Le("k", b))
				} else {
					conds = append(conds, shardconf.Lt("k", b))
				}
			}
			if len(conds) == 0 {
				continue
			}
			ts, err := r.Route("t", conds...)
			if err != nil {
				t.Fatalf("%s\nRoute %v: %v", cfg, conds, err)
			}
			got := map[string]bool{}
			for _, x := range ts {
				got[x.Table] = true
			}
			for j := 0; j < 80; j++ {
				v := draw()
				v = time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC)
				if j == 0 {
					v = a
				} else if j == 1 {
					v = b
				}
				if loSet && (v.Before(a) || !loIn && v.Equal(a)) || hiSet && (v.After(b) || !hiIn && v.Equal(b)) {
					continue
				}
				if w := want(v); w != "NOROUTE" && !got[w] {
					t.Fatalf("%s\nRoute %v = %s misses %s, where %v routes", cfg, conds, orOutcome(ts, nil), w, v)
				}
			}
		}
	}
}

func TestInlineRemainderRoutesAsGroovyRemainder(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 6))
	for cfgN := 0; cfgN < 40; cfgN++ {
		count := int64(1 + rng.IntN(12))
		suffixes, has := orSubset(rng, int(count), strconv.Itoa)
		// Groovy's % on a Long (or a positive BigInteger) is Java's
		// remainder: negative for a negative value, naming no table.
		want := func(n *big.Int, text bool) string {
			if text {
				return "" // a String has no %: an error, checked below
			}
			s := new(big.Int).Rem(n, big.NewInt(count)).String()
			if !has[s] {
				return ""
			}
			return s
		}
		cfg := orRule(suffixes, "INLINE", map[string]string{"algorithm-expression": fmt.Sprintf("t_${k %% %d}", count)})
		r := orRouter(t, cfg)
		var reach, miss []int64
		for i := 0; i < 300; i++ {
			n := orInt(rng)
			w := want(big.NewInt(n), false)
			if w == "" {
				w, miss = "NOROUTE", append(miss, n)
			} else {
				w, reach = "t_"+w, append(reach, n)
			}
			for _, c := range orCarriers(n) {
				if got := orOutcome(r.Route("t", shardconf.Eq("k", c))); got != w {
					t.Fatalf("%s\nRoute k = %v (%T) = %s, oracle %s", cfg, c, c, got, w)
				}
			}
		}
		if len(reach) > 0 && len(miss) > 0 {
			vs := []any{reach[0], miss[0]}
			if got := orOutcome(r.Route("t", shardconf.In("k", vs...))); got != "NOROUTE" {
				t.Fatalf("%s\nRoute k IN %v = %s, want NOROUTE", cfg, vs, got)
			}
		}
	}
}

func TestTwoLevelRoutesReachOnlyExistingNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 7))
	for cfgN := 0; cfgN < 40; cfgN++ {
		nds, ntb := int64(1+rng.IntN(4)), int64(1+rng.IntN(6))
		// An irregular node set: each (data source, table) pair with
		// probability 2/3; MOD on user_id picks the data source, HASH_MOD on
		// order_id the table.
		var nodes []string
		has := map[string]bool{}
		for d := int64(0); d < nds; d++ {
			for tb := int64(0); tb < ntb; tb++ {
				if rng.IntN(3) != 0 || len(nodes) == 0 && d == nds-1 && tb == ntb-1 {
					n := fmt.Sprintf("ds_%d.t_%d", d, tb)
					nodes = append(nodes, n)
					has[n] = true
				}
			}
		}
		var dss strings.Builder
		for d := int64(0); d < nds; d++ {
			fmt.Fprintf(&dss, "  ds_%d: {url: \"sqlite::memory:\"}\n", d)
		}
		cfg := `dataSources:
` + dss.String() + `rules:
- !SHARDING
  tables:
    t:
      actualDataNodes: ` + strings.Join(nodes, ",") + `
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: ` + strconv.FormatInt(nds, 10) + `}}
    by_order: {type: HASH_MOD, props: {sharding-count: ` + strconv.FormatInt(ntb, 10) + `}}
`
		cfgParsed, err := shardconf.Parse([]byte(cfg))
		if err != nil {
			t.Fatalf("%s\n%v", cfg, err)
		}
		r, err := shardconf.NewRouter(cfgParsed)
		if err != nil {
			t.Fatalf("%s\nNewRouter: %v", cfg, err)
		}
		want := func(u, o int64) string {
			d := new(big.Int).Mod(big.NewInt(u), big.NewInt(nds)).Int64()
			h := int64(orJavaLongHash(o))
			if h < 0 {
				h = -h
			}
			n := fmt.Sprintf("ds_%d.t_%d", d, h%ntb)
			if !has[n] {
				return "NOROUTE"
			}
			return n
		}
		for i := 0; i < 300; i++ {
			u, o := orInt(rng), orInt(rng)
			w := want(u, o)
			for _, c := range [][2]any{{u, o}, {int(u), keygen.ID(o)}, {json.Number(strconv.FormatInt(u, 10)), new(big.Int).SetInt64(o)}} {
				ts, err := r.Route("t", shardconf.Eq("order_id", c[1]), shardconf.Eq("user_id", c[0]))
				got := "NOROUTE"
				if err == nil {
					got = targetList(ts)
				} else if !errors.Is(err, shardconf.ErrNoRoute) {
					got = "ERR " + err.Error()
				}
				if got != w {
					t.Fatalf("%s\nRoute user_id = %v, order_id = %v (%T) = %s, oracle %s", cfg, c[0], c[1], c[1], got, w)
				}
			}
		}
	}
}

// ShardingSphere numbers a logic table's data nodes after the logic table's
// name (ShardingTable's DataNodeInfo prefix): logic table t1 over t10 ..
// t115 has shards 0 .. 15, so 10 routes to t110 and 0 to t10. Read as bare
// trailing digits, t10 was shard 10 (and t110 shard 110): rows of residue
// 10 were placed where a Java fleet puts residue 0.
func TestNumberedTablesAreNumberedAfterTheLogicTableName(t *testing.T) {
	r := orRouter(t, `dataSources:
  ds: {url: "sqlite::memory:"}
rules:
- !SHARDING
  tables:
    t1:
      actualDataNodes: ds.t1${0..15}
      tableStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: m}}
    t2:
      actualDataNodes: ds.t2${0..3}
      tableStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: v}}
  shardingAlgorithms:
    m: {type: MOD, props: {sharding-count: 16}}
    v: {type: VOLUME_RANGE, props: {range-lower: 0, range-upper: 20, sharding-volume: 10}}
`)
	if u := r.Unreachable(); len(u) != 0 {
		t.Errorf("Unreachable = %v, want none", u)
	}
	for _, c := range []struct {
		table string
		v     any
		want  string
	}{
		{"t1", int64(0), "t10"}, {"t1", int64(10), "t110"}, {"t1", 26, "t110"}, {"t1", "15", "t115"}, {"t1", int64(1), "t11"},
		{"t2", -5, "t20"}, {"t2", 5, "t21"}, {"t2", 15, "t22"}, {"t2", 25, "t23"},
	} {
		if got := orOutcome(r.Route(c.table, shardconf.Eq("k", c.v))); got != c.want {
			t.Errorf("%s k = %v -> %s, want %s", c.table, c.v, got, c.want)
		}
	}
}
