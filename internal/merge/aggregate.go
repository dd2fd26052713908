package merge

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
)

// goKind is the Go type a driver returned for a column, which merged
// values keep: 'i' int64, 'u' uint64, 'f' float64, 's' string, 'b' []byte.
type goKind byte

func kindOf(v driver.Value) goKind {
	switch v.(type) {
	case int64, int, int32, int16, int8, uint32, uint16, uint8:
		return 'i'
	case uint64, uint:
		return 'u'
	case float64, float32:
		return 'f'
	case string:
		return 's'
	case []byte:
		return 'b'
	}
	return 0
}

// asKind writes text as kind k's text type.
func asKind(s string, k goKind) driver.Value {
	if k == 'b' {
		return []byte(s)
	}
	return s
}

// sumAcc adds numbers exactly: int64 while they fit, then a scaled big
// integer (decimals keep the largest scale added, as PostgreSQL's numeric
// and MySQL's DECIMAL sums do); floats as float64.
type sumAcc struct {
	kind    byte // 0: nothing added, 'i', 'd' or 'f'
	i       int64
	u       *big.Int // 'd': the sum * 10^scale
	scale   int
	f       float64
	special int8 // PostgreSQL numeric NaN/Infinity: bit 1 +Inf, bit 2 -Inf, bit 4 NaN
	// overflow: a float sum became infinite adding finite values, which
	// PostgreSQL fails on and MariaDB turns into 0 (see floatOverflow).
	overflow bool
}

// floatOverflow fails a float sum the merge took beyond float64's range
// from finite values: PostgreSQL fails the query ("value out of range"),
// MariaDB returns 0 for it; SQLite returns the infinity.
func (a *sumAcc) floatOverflow(d Dialect) error {
	if a.overflow && d != SQLite {
		return fmt.Errorf("%w: a floating-point sum beyond the range of double precision", ErrOverflow)
	}
	return nil
}

// add adds v, a value of a column of class c; NULL adds nothing.
func (a *sumAcc) add(v driver.Value, c class) error {
	if v == nil {
		return nil
	}
	n, ok, err := numOf(v, c)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: cannot add a %T", ErrUnsupportedType, v)
	}
	switch {
	case n.kind == 'f' || a.kind == 'f':
		a.addFloat(n)
	case n.kind == 'i' && (a.kind == 0 || a.kind == 'i'):
		if s, ok := addInt64(a.i, n.i); ok {
			a.kind, a.i = 'i', s
			return nil
		}
		a.toDec()
		a.addDec(n.dec())
	default:
		a.toDec()
		a.addDec(n.dec())
	}
	return nil
}

func addInt64(x, y int64) (int64, bool) {
	s := x + y
	if (y > 0 && s < x) || (y < 0 && s > x) {
		return 0, false
	}
	return s, true
}

func (a *sumAcc) toDec() {
	switch a.kind {
	case 0:
		a.u = new(big.Int)
	case 'i':
		a.u = big.NewInt(a.i)
	default:
		return
	}
	a.kind = 'd'
}

func (a *sumAcc) addDec(d decimal) {
	switch d.special {
	case 2:
		a.special |= 4
		return
	case 1:
		a.special |= 1
		return
	case -1:
		a.special |= 2
		return
	}
	x := d.unscaled
	switch {
	case d.scale > a.scale:
		a.u.Mul(a.u, pow10(d.scale-a.scale))
		a.scale = d.scale
	case d.scale < a.scale:
		x = new(big.Int).Mul(x, pow10(a.scale-d.scale))
	}
	a.u.Add(a.u, x)
}

func (a *sumAcc) addFloat(n num) {
	if a.kind != 'f' {
		a.f = a.float()
		a.kind = 'f'
	}
	f := float64(n.i)
	switch n.kind {
	case 'f':
		f = n.f
	case 'i':
	default:
		f, _ = n.ext().float()
	}
	before := a.f
	a.f += f
	if math.IsInf(a.f, 0) && !math.IsInf(before, 0) && !math.IsInf(f, 0) {
		a.overflow = true
	}
}

// toReal rounds a float sum to real (float32), noting an overflow of
// real's range.
func (a *sumAcc) toReal() {
	r := float64(float32(a.f))
	if math.IsInf(r, 0) && !math.IsInf(a.f, 0) {
		a.overflow = true
	}
	a.f = r
}

// float is the sum as the nearest float64.
func (a *sumAcc) float() float64 {
	switch a.kind {
	case 'i':
		return float64(a.i)
	case 'f':
		return a.f
	case 'd':
		if f, ok := a.specialFloat(); ok {
			return f
		}
		r := new(big.Rat).SetFrac(a.u, pow10(a.scale))
		f, _ := r.Float64()
		return f
	}
	return 0
}

func (a *sumAcc) specialFloat() (float64, bool) {
	switch {
	case a.special&4 != 0 || a.special == 3:
		return math.NaN(), true
	case a.special == 1:
		return math.Inf(1), true
	case a.special == 2:
		return math.Inf(-1), true
	}
	return 0, false
}

func (x ext) float() (float64, bool) {
	switch x.rank {
	case 2:
		return math.NaN(), true
	case 1, -1:
		return math.Inf(x.rank), true
	}
	return x.r.Float64()
}

// decimal is the sum as an exact decimal (PostgreSQL's NaN and infinities
// as special: NaN when any was NaN or both infinities met).
func (a *sumAcc) decimal() decimal {
	switch {
	case a.special&4 != 0 || a.special == 3:
		return decimal{special: 2}
	case a.special == 1:
		return decimal{special: 1}
	case a.special == 2:
		return decimal{special: -1}
	case a.kind == 'i':
		return decimal{unscaled: big.NewInt(a.i)}
	case a.kind == 'd':
		return decimal{unscaled: a.u, scale: a.scale}
	}
	return decimal{unscaled: new(big.Int)}
}

// value is the sum in Go type k (nil when nothing was added).
func (a *sumAcc) value(k goKind, d Dialect) (driver.Value, error) {
	switch {
	case a.kind == 0:
		return nil, nil
	case a.kind == 'f':
		return floatValue(a.f, k, d), nil
	}
	dec := a.decimal()
	switch k {
	case 's', 'b':
		return asKind(dec.String(), k), nil
	case 'f':
		return a.float(), nil
	case 'u':
		if dec.special == 0 && dec.scale == 0 && dec.unscaled.IsUint64() {
			return dec.unscaled.Uint64(), nil
		}
	default:
		if dec.special == 0 && dec.scale == 0 && dec.unscaled.IsInt64() {
			return dec.unscaled.Int64(), nil
		}
	}
	return nil, fmt.Errorf("%w: the sum %s does not fit the driver's type", ErrOverflow, dec)
}

// floatValue is f in Go type k: float64, or text as the dialect writes a
// double (MySQL's text protocol).
func floatValue(f float64, k goKind, d Dialect) driver.Value {
	if k != 's' && k != 'b' {
		return f
	}
	return asKind(formatDouble(f, d), k)
}

// formatDouble writes a double as MySQL/MariaDB's text protocol does: the
// shortest text that reads back as f, in exponent form (1e20, 1.5e-7)
// outside the range it writes plainly.
func formatDouble(f float64, d Dialect) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if i := bytes.IndexByte([]byte(s), 'e'); i >= 0 && d == MySQL {
		exp := s[i+1:]
		if exp[0] == '+' {
			exp = exp[1:]
		}
		if len(exp) > 1 && exp[0] == '0' {
			exp = exp[1:]
		} else if len(exp) > 2 && exp[:2] == "-0" {
			exp = "-" + exp[2:]
		}
		s = s[:i+1] + exp
	}
	return s
}

// countOf reads a COUNT a shard returned.
func countOf(v driver.Value) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return x, nil
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
	case []byte:
		return parseCount(string(x))
	case string:
		return parseCount(x)
	}
	return 0, fmt.Errorf("%w: a count of %T %v", ErrUnsupportedType, v, v)
}

func parseCount(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: the count %q is not an integer", ErrUnsupportedType, s)
	}
	return n, nil
}

// countValue is n in Go type k.
func countValue(n int64, k goKind) driver.Value {
	switch k {
	case 's', 'b':
		return asKind(strconv.FormatInt(n, 10), k)
	case 'u':
		return uint64(n)
	case 'f':
		return float64(n)
	}
	return n
}

// accumulate adds row (of shard s) to g's aggregates. held counts the
// groups and distinct values in memory, bounded by MaxGroups.
func (r *Rows) accumulate(g *group, row []driver.Value, s int, held int) (int, error) {
	for i := range r.comps {
		if c := &r.comps[i]; c.kind == 0 && row[c.Col] != nil {
			c.kind = kindOf(row[c.Col])
		}
	}
	for i := range r.aggs {
		a := &r.aggs[i]
		if a.kind == 0 && row[a.Col] != nil {
			a.kind = kindOf(row[a.Col])
		}
		var err error
		if held, err = r.accumulateOne(a, &g.aggs[i], row, s, held); err != nil {
			return held, r.colErr(a.Col, err)
		}
	}
	return held, nil
}

func (r *Rows) accumulateOne(a *aggInfo, st *aggState, row []driver.Value, s int, held int) (int, error) {
	switch a.Func {
	case Count:
		return held, addCount(st, row[a.Col])
	case Sum:
		if err := st.sum.add(row[a.Col], r.cls[s][a.Col]); err != nil {
			return held, err
		}
		if st.sum.kind == 'f' && r.p.Dialect == PostgreSQL && r.types[a.Col] == "FLOAT4" {
			st.sum.toReal() // sum(real) adds in real, rounding every step
		}
		return held, nil
	case Min, Max:
		return held, r.minMax(a, st, row[a.Col], s)
	case Avg:
		if err := st.sum.add(row[a.Args[0]], r.cls[s][a.Args[0]]); err != nil {
			return held, err
		}
		return held, addCount(st, row[a.Args[1]])
	}
	return r.addDistinct(a, st, row, s, held)
}

func addCount(st *aggState, v driver.Value) error {
	n, err := countOf(v)
	if err != nil {
		return err
	}
	var ok bool
	if st.count, ok = addInt64(st.count, n); !ok {
		return fmt.Errorf("%w: the count exceeds int64", ErrOverflow)
	}
	return nil
}

// minMax keeps the least (Min) or greatest (Max) non-NULL value.
func (r *Rows) minMax(a *aggInfo, st *aggState, v driver.Value, s int) error {
	if v == nil {
		return nil
	}
	if st.best == nil {
		st.best, st.bestS = cloneValue(v), s
		return nil
	}
	c, err := compareValues(v, st.best, r.cls[s][a.Col], r.cls[st.bestS][a.Col], a.Text)
	if err != nil {
		return err
	}
	// Of equal values written differently (numeric 0 and 0.0, float -0
	// and 0), PostgreSQL's min and max keep the last one read
	// (numeric_smaller returns its second argument on a tie); MariaDB and
	// SQLite keep the first.
	tie := c == 0 && r.p.Dialect == PostgreSQL
	if (a.Func == Min && c < 0) || (a.Func == Max && c > 0) || tie {
		st.best, st.bestS = cloneValue(v), s
	}
	return nil
}

// addDistinct adds the row's distinct values (CountDistinct: the tuple of
// Args; SumDistinct, AvgDistinct: Args[0]) to the group's set; a tuple
// with a NULL is not counted, as COUNT(DISTINCT) does.
func (r *Rows) addDistinct(a *aggInfo, st *aggState, row []driver.Value, s int, held int) (int, error) {
	key := r.keyBuf[:0]
	defer func() { r.keyBuf = key }()
	for _, c := range a.Args {
		if row[c] == nil {
			return held, nil
		}
		var err error
		if key, err = appendKey(key, row[c], r.cls[s][c], a.Text); err != nil {
			return held, err
		}
	}
	if _, ok := st.set[string(key)]; ok {
		return held, nil
	}
	if held++; held > r.max {
		return held, tooMany(r.max)
	}
	if st.set == nil {
		st.set = map[string]distinctVal{}
	}
	dv := distinctVal{s: s}
	if a.Func != CountDistinct {
		dv.v = cloneValue(row[a.Args[0]])
	}
	st.set[string(key)] = dv
	return held, nil
}

// finish writes g's merged aggregates into its row.
func (r *Rows) finish(g *group) error {
	for i := range r.aggs {
		a := &r.aggs[i]
		v, err := r.result(a, &g.aggs[i])
		if err != nil {
			return r.colErr(a.Col, err)
		}
		g.row[a.Col] = v
		g.aggs[i] = aggState{} // free the distinct sets
	}
	return nil
}

func (r *Rows) result(a *aggInfo, st *aggState) (driver.Value, error) {
	switch a.Func {
	case Count:
		return countValue(st.count, a.kind), nil
	case Sum:
		return r.sumValue(a, &st.sum)
	case Min, Max:
		return st.best, nil
	case Avg:
		return average(&st.sum, st.count, a.mode, a.scale, r.avgKind(a), r.p.Dialect)
	case CountDistinct:
		return countValue(int64(len(st.set)), a.kind), nil
	}
	sum, err := r.sumDistinct(a, st)
	if err != nil {
		return nil, err
	}
	if a.Func == SumDistinct {
		return r.sumValue(a, sum)
	}
	return average(sum, int64(len(st.set)), a.mode, a.scale, r.avgKind(a), r.p.Dialect)
}

// avgKind is the Go type of an average: the AVG column's, or, when every
// shard's was NULL, what the dialect's drivers use.
func (r *Rows) avgKind(a *aggInfo) goKind {
	switch {
	case a.kind != 0:
		return a.kind
	case a.mode == avgFloat:
		return 'f'
	case r.p.Dialect == MySQL:
		return 'b'
	}
	return 's'
}

// sumDistinct adds a group's distinct values in ascending order, as the
// databases do after sorting them (which matters for floats).
func (r *Rows) sumDistinct(a *aggInfo, st *aggState) (*sumAcc, error) {
	vals := make([]distinctVal, 0, len(st.set))
	for _, dv := range st.set {
		vals = append(vals, dv)
	}
	c := a.Args[0]
	slices.SortFunc(vals, func(x, y distinctVal) int {
		n, _ := compareValues(x.v, y.v, r.cls[x.s][c], r.cls[y.s][c], a.Text)
		return n
	})
	sum := &sumAcc{}
	real := r.p.Dialect == PostgreSQL && r.types[a.Col] == "FLOAT4" // sum(DISTINCT real) adds in real
	for _, dv := range vals {
		if err := sum.add(dv.v, r.cls[dv.s][c]); err != nil {
			return nil, err
		}
		if real && sum.kind == 'f' {
			sum.toReal()
		}
	}
	return sum, nil
}

// sumValue is a merged sum in the Go type of its column (SQLite: of its
// value). PostgreSQL's
// sum(real) is a real: the shards' sums are added in float32, rounding
// every step as the database's own sum does (in its scan order).
func (r *Rows) sumValue(a *aggInfo, sum *sumAcc) (driver.Value, error) {
	k := a.kind
	if r.p.Dialect == SQLite {
		k = 0 // SQLite types each value: an integer sum unless a float was added
	}
	if err := sum.floatOverflow(r.p.Dialect); err != nil {
		return nil, err
	}
	v, err := sum.value(k, r.p.Dialect)
	if f, ok := v.(float64); ok && r.p.Dialect == PostgreSQL && r.types[a.Col] == "FLOAT4" {
		if f32 := float32(f); math.IsInf(float64(f32), 0) && !math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: a sum beyond the range of real", ErrOverflow)
		}
		v = float64(float32(f))
	}
	return v, err
}
