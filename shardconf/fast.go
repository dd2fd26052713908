package shardconf

import (
	"math/bits"
	"strings"

	"github.com/shardkey/shardkey/keygen"
)

// The equality fast path. Route's budget for an equality on an integer key
// is a few map lookups, so when every constrained strategy has one equality
// on an integer, the router skips value normalization, index sets and
// error wrapping and goes straight from the integer to the node. Anything
// else (strings, IN, ranges, values that route nowhere) takes the general
// path, which also produces the errors.

// intShardFunc is implemented by algorithms with an allocation-free int64
// path. ok is false when the general path must decide (offsets, errors).
type intShardFunc interface {
	oneInt(i int64) (idx int, ok bool)
}

func (m *modAlgorithm) oneInt(i int64) (int, bool) {
	if m.offsets || i < 0 {
		return 0, false
	}
	return int(m.idx[m.div.mod(uint64(i))]), true
}

func (h *hashModAlgorithm) oneInt(i int64) (int, bool) {
	c := int64(hmLong(i))
	if c < 0 {
		c = -c
	}
	return int(h.idx[h.div.mod(uint64(c))]), true
}

func (a *snowflakeBitsAlgorithm) oneInt(i int64) (int, bool) {
	if i < 0 || i > a.maxID {
		return 0, false
	}
	return int(a.idx[a.div.mod(uint64(i>>a.shift&a.mask))]), true
}

func (a *inlineAlgo) oneInt(i int64) (int, bool) {
	if a.fast == nil {
		return 0, false
	}
	n, err := a.fast(i)
	if err != nil {
		return 0, false
	}
	if n >= 0 && n < int64(len(a.dense)) {
		if idx := a.dense[n]; idx >= 0 {
			return int(idx), true
		}
		return 0, false
	}
	idx, ok := a.byInt[n]
	return idx, ok
}

// denseIndex turns a number -> target map with small non-negative keys
// into a slice (-1 for gaps), which is cheaper to index than a map.
func denseIndex(m map[int64]int) []int32 {
	var hi int64 = -1
	for k := range m {
		if k < 0 || k >= 1<<16 {
			return nil
		}
		hi = max(hi, k)
	}
	if hi < 0 || hi >= 4*int64(len(m))+16 {
		return nil
	}
	d := make([]int32, hi+1)
	for i := range d {
		d[i] = -1
	}
	for k, v := range m {
		d[k] = int32(v)
	}
	return d
}

// intKernel is an algorithm's int64 path flattened into data, so the
// common algorithms cost no indirect call.
type intKernel struct {
	kind  uint8 // kernelMod, kernelHash, kernelBits, or kernelFunc (call fn)
	div   divisor
	idx   []int32
	shift uint
	mask  int64
	maxID int64
	fn    intShardFunc
}

const (
	kernelFunc uint8 = iota
	kernelMod
	kernelHash
	kernelBits
)

func newKernel(f shardFunc) (intKernel, bool) {
	switch a := f.(type) {
	case *modAlgorithm:
		if !a.offsets {
			return intKernel{kind: kernelMod, div: a.div, idx: a.idx}, true
		}
	case *hashModAlgorithm:
		return intKernel{kind: kernelHash, div: a.div, idx: a.idx}, true
	case *snowflakeBitsAlgorithm:
		return intKernel{kind: kernelBits, div: a.div, idx: a.idx, shift: a.shift, mask: a.mask, maxID: a.maxID}, true
	}
	if fn, ok := f.(intShardFunc); ok {
		return intKernel{kind: kernelFunc, fn: fn}, true
	}
	return intKernel{}, false
}

// index is the target index of n; ok false defers to the general path,
// which also reports a partition no target serves (idx -1) as ErrNoRoute.
func (k *intKernel) index(n int64) (int, bool) {
	var j int32 = -1
	switch k.kind {
	case kernelMod:
		if n >= 0 {
			j = k.idx[k.div.mod(uint64(n))]
		}
	case kernelHash:
		c := int64(hmLong(n))
		if c < 0 {
			c = -c // at most 2^31: fits 32 bits
		}
		j = k.idx[k.div.mod32(uint32(c))]
	case kernelBits:
		if n >= 0 && n <= k.maxID {
			j = k.idx[k.div.mod(uint64(n>>k.shift&k.mask))]
		}
	default:
		if i, ok := k.fn.oneInt(n); ok && i >= 0 {
			return i, true
		}
	}
	return int(j), j >= 0
}

// fastRoute routes when every strategy is absent or has exactly one
// equality on an integer with an int fast path; ok false otherwise.
func (tr *tableRoute) fastRoute(conds []Cond) ([]Target, bool) {
	if tr.tableOnly != nil {
		// The common shape: tables chosen by one key, data sources by none.
		t, ok := fastIndex(tr.table, conds)
		if !ok {
			return nil, false
		}
		ts := tr.tableOnly[t]
		return ts, ts != nil
	}
	d, ok := fastIndex(tr.db, conds)
	if !ok {
		return nil, false
	}
	t, ok := fastIndex(tr.table, conds)
	if !ok {
		return nil, false
	}
	k := -1
	switch {
	case d >= 0 && t >= 0:
		k = tr.node[d*len(tr.tbl)+t]
	case d == -1 && t >= 0:
		k = tr.byTable[t]
	case t == -1 && d >= 0:
		k = tr.byDS[d]
	}
	if k < 0 {
		return nil, false
	}
	return tr.single[k], true
}

// fastIndex is the target index an integer equality picks, -1 for a
// strategy that is absent.
func fastIndex(s *compiledStrategy, conds []Cond) (int, bool) {
	if s == nil {
		return -1, true
	}
	if !s.hasKernel {
		return 0, false
	}
	var c *Cond
	if len(conds) == 1 {
		if c = &conds[0]; c.column != s.col && !strings.EqualFold(c.column, s.col) {
			return 0, false
		}
	} else {
		for i := range conds {
			if x := &conds[i]; x.column == s.col || strings.EqualFold(x.column, s.col) {
				if c != nil {
					return 0, false
				}
				c = x
			}
		}
		if c == nil {
			return 0, false
		}
	}
	if c.op != opEq {
		return 0, false
	}
	n, ok := intOf(c.v)
	if !ok {
		return 0, false
	}
	return s.kernel.index(n)
}

// intOf extracts the common integer types without normalizing.
func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case keygen.ID:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

// divisor computes a % d for non-negative a without a hardware divide
// (a 64-bit IDIV costs tens of cycles; this is three multiplications):
// Lemire, Kaser and Kurz, "Faster remainder by direct computation" (2019),
// with a 128-bit magic number M = floor((2^128-1)/d) + 1.
type divisor struct {
	d        uint64
	mHi, mLo uint64
	m32      uint64 // floor((2^64-1)/d) + 1, for 32-bit operands (d < 2^32)
}

func newDivisor(d uint64) divisor {
	if d <= 1 {
		return divisor{d: d}
	}
	q1, r1 := bits.Div64(0, ^uint64(0), d)
	q0, _ := bits.Div64(r1, ^uint64(0), d)
	lo, carry := bits.Add64(q0, 1, 0)
	v := divisor{d: d, mHi: q1 + carry, mLo: lo}
	if d < 1<<32 {
		v.m32 = ^uint64(0)/d + 1
	}
	return v
}

// mod32 is mod for a < 2^32 and d < 2^32 (one multiplication fewer).
func (v divisor) mod32(a uint32) uint64 {
	if v.m32 == 0 {
		return v.mod(uint64(a))
	}
	hi, _ := bits.Mul64(v.m32*uint64(a), v.d)
	return hi
}

func (v divisor) mod(a uint64) uint64 {
	if v.d <= 1 {
		return 0
	}
	h0, lowLo := bits.Mul64(v.mLo, a)
	lowHi := h0 + v.mHi*a
	p1hi, p1lo := bits.Mul64(lowHi, v.d)
	p0hi, _ := bits.Mul64(lowLo, v.d)
	_, carry := bits.Add64(p1lo, p0hi, 0)
	return p1hi + carry
}

// tableIndex finds a logic table by name faster than a Go map: names are
// few and known at compile time, so a hash of the length and two bytes
// picks a short bucket, and one string comparison confirms.
type tableIndex struct {
	buckets [256][]tableEntry
}

type tableEntry struct {
	name string
	tr   *tableRoute
}

func tableHash(s string) uint8 {
	n := len(s)
	return uint8(n*31) ^ s[n-1]*7 ^ s[n/2]*3 ^ s[0]
}

func (x *tableIndex) add(name string, tr *tableRoute) {
	if name == "" {
		return
	}
	h := tableHash(name)
	x.buckets[h] = append(x.buckets[h], tableEntry{name, tr})
}

func (x *tableIndex) get(name string) *tableRoute {
	if name == "" {
		return nil
	}
	for _, e := range x.buckets[tableHash(name)] {
		if e.name == name {
			return e.tr
		}
	}
	return nil
}
