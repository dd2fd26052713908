package difftest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/shardkey/shardkey/keygen"
)

// t_hint: tenants 0..7; tenant t's rows live where HINT_INLINE puts t
// (ds_{t%2}.t_hint_{t%3}), so tenants t and t+6 share a table. Each id
// belongs to the table of tenant id%6 and only tenants of that table
// write it: the shards could otherwise hold an id twice where the oracle
// refuses it (a limit of sharding, not a bug).
const hintTenants = 8

// tenantsOfClass lists the tenants whose rows share table class c (0..5).
func tenantsOfClass(c int64) []int64 {
	if c+6 < hintTenants {
		return []int64{c, c + 6}
	}
	return []int64{c}
}

// hintRow is a t_hint row's (id, tenant); stored: read from the oracle.
type hintRow struct {
	id, tenant int64
	stored     bool
}

// hintID is an id of the small domain.
func hintID(rng *rand.Rand) int64 { return int64(1 + rng.IntN(36)) }

// tenantFor is a tenant allowed to hold id.
func tenantFor(rng *rand.Rand, id int64) int64 { return pick(rng, tenantsOfClass(mod(id, 6))) }

// existingHint picks a stored t_hint row, or a new id with a tenant of
// its class.
func (h *harness) existingHint(rng *rand.Rand) hintRow {
	rows := h.last.oracle["t_hint"]
	j := rng.IntN(1 << 20)
	if len(rows) > 0 && rng.IntN(3) > 0 {
		r := rows[j%len(rows)]
		id, _ := strconv.ParseInt(r[0], 10, 64)
		tenant, _ := strconv.ParseInt(r[1], 10, 64)
		return hintRow{id, tenant, true}
	}
	id := hintID(rng)
	return hintRow{id: id, tenant: tenantFor(rng, id)}
}

// insertHint is a row to insert: a fresh id mostly, now and then a stored
// one (a duplicate key), with a tenant of its table.
func (h *harness) insertHint(rng *rand.Rand) hintRow {
	id := h.freshHintIDs(rng, 1, -1)[0]
	if rng.IntN(3) == 0 {
		id = h.existingHint(rng).id
	}
	return hintRow{id: id, tenant: tenantFor(rng, id)}
}

// freshHintIDs are n ids no stored row has, of class c (any class if c < 0).
func (h *harness) freshHintIDs(rng *rand.Rand, n int, c int64) []int64 {
	used := map[int64]bool{}
	for _, r := range h.last.oracle["t_hint"] {
		id, _ := strconv.ParseInt(r[0], 10, 64)
		used[id] = true
	}
	var out []int64
	for len(out) < n {
		id := int64(100 + rng.IntN(1000))
		if !used[id] && (c < 0 || mod(id, 6) == c) {
			used[id] = true
			out = append(out, id)
		}
	}
	return out
}

// otherClassTenant is a tenant whose rows live in another table than t's.
func otherClassTenant(rng *rand.Rand, t int64) int64 {
	for {
		if o := int64(rng.IntN(hintTenants)); mod(o, 6) != mod(t, 6) {
			return o
		}
	}
}

// someTenants are 2..3 distinct tenants.
func someTenants(rng *rand.Rand) []int64 {
	ts := rng.Perm(hintTenants)[:2+rng.IntN(2)]
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = int64(t)
	}
	return out
}

// hintValue carries a tenant in some Go integer type, as callers do.
func hintValue(rng *rand.Rand, t int64) any {
	switch rng.IntN(6) {
	case 0:
		return int(t)
	case 1:
		return int32(t)
	case 2:
		return uint64(t)
	case 3:
		return keygen.ID(t)
	}
	return t
}

// t_algo: k splits data sources at 100 (DIFFTEST_SPLIT) and tables by
// floor(k/10) mod 2 (the CLASS_BASED decade algorithm).
var algoBoundaryKeys = []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, 99, 100, 9, 10, -10, -11, 0}

// algoKey is a key of the small domain, now and then a boundary.
func algoKey(rng *rand.Rand) int64 {
	if rng.IntN(8) == 0 {
		return pick(rng, algoBoundaryKeys)
	}
	return int64(rng.IntN(160) - 30)
}

// algoTarget is (data source, table) of k.
func algoTarget(k int64) [2]int64 {
	ds := int64(0)
	if k >= 100 {
		ds = 1
	}
	d := k / 10
	if k%10 != 0 && k < 0 {
		d--
	}
	return [2]int64{ds, mod(d, 2)}
}

// existingAlgo picks a stored t_algo key or one of the domain.
func (h *harness) existingAlgo(rng *rand.Rand) int64 {
	rows := h.last.oracle["t_algo"]
	j := rng.IntN(1 << 20)
	if len(rows) > 0 && rng.IntN(3) > 0 {
		k, _ := strconv.ParseInt(rows[j%len(rows)][0], 10, 64)
		return k
	}
	return algoKey(rng)
}

// freshAlgoKeys are n keys of the domain no stored row has.
func (h *harness) freshAlgoKeys(rng *rand.Rand, n int) []int64 {
	var used []int64
	for _, r := range h.last.oracle["t_algo"] {
		k, _ := strconv.ParseInt(r[0], 10, 64)
		used = append(used, k)
	}
	var out []int64
	for tries := 0; len(out) < n && tries < 1000; tries++ {
		if k := algoKey(rng); !slices.Contains(used, k) {
			used = append(used, k)
			out = append(out, k)
		}
	}
	return out
}

// algoKeyLike is a key in k's target (same) or in another one.
func algoKeyLike(rng *rand.Rand, k int64, same bool) int64 {
	for range 1000 {
		if o := algoKey(rng); (algoTarget(o) == algoTarget(k)) == same {
			return o
		}
	}
	return k
}
