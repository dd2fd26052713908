package difftest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Value domains, small so that updates collide and upserts conflict.
var (
	smallUsers    = []int64{0, 1, 2, 3, 4, 5}
	boundaryUsers = []int64{-1, -2, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1}
	boundaryKeys  = []int64{0, -4, -3, math.MaxInt64, math.MinInt64, math.MaxInt32 + 1}
	statuses      = []any{"a", "b", "t_order", nil} // a table's name as data must stay data
	amounts       = []any{int64(0), int64(1), int64(2), int64(-1), nil}
)

// dsOf is the data source (0 or 1) a user_id routes to: MOD 2, non-negative.
func dsOf(u int64) int { return int(((u % 2) + 2) % 2) }

// ownerDS is the data source every row with order key k lives in. Rows
// sharing a key must share the data source, or the shards would hold the
// key twice where the oracle refuses it (a limit of sharding, not a bug),
// so explicit keys always go with a user of this parity.
func ownerDS(k int64) int {
	x := uint64(k) * 0x9e3779b97f4a7c15
	return int((x >> 61) & 1)
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// userIn picks a user of data source ds, now and then a boundary value.
func userIn(rng *rand.Rand, ds int) int64 {
	pool := smallUsers
	if rng.IntN(8) == 0 {
		pool = boundaryUsers
	}
	for {
		if u := pick(rng, pool); dsOf(u) == ds {
			return u
		}
	}
}

// explicitKey picks an order key of the small domain, now and then a
// boundary value.
func explicitKey(rng *rand.Rand) int64 {
	if rng.IntN(10) == 0 {
		return pick(rng, boundaryKeys)
	}
	return int64(1 + rng.IntN(30))
}

// pair is a row's (key, user); stored says it came from a stored row.
type pair struct {
	key, user int64
	stored    bool
}

// existing picks a stored row of the oracle's table (its key and user),
// or an explicit key with a user of its owner's data source.
func (h *harness) existing(rng *rand.Rand, table string) pair {
	rows := h.last.oracle[table]
	j := rng.IntN(1 << 20)
	if len(rows) > 0 && rng.IntN(3) > 0 {
		r := rows[j%len(rows)]
		var key, user int64
		switch table {
		case "t_order":
			key, _ = strconv.ParseInt(r[0], 10, 64)
			user, _ = strconv.ParseInt(r[1], 10, 64)
		case "t_item":
			key, _ = strconv.ParseInt(r[0], 10, 64)
			user, _ = strconv.ParseInt(r[2], 10, 64)
		}
		return pair{key, user, true}
	}
	k := explicitKey(rng)
	return pair{key: k, user: userIn(rng, ownerDS(k))}
}

// sameDSUser is another user of u's data source (or u itself).
func sameDSUser(rng *rand.Rand, u int64) int64 { return userIn(rng, dsOf(u)) }

// otherDSUser is a user of the other data source.
func otherDSUser(rng *rand.Rand, u int64) int64 { return userIn(rng, 1-dsOf(u)) }

// otherTableKey is a key of the explicit domain in another table (MOD 3)
// than k, owned by data source ds (see ownerDS).
func otherTableKey(rng *rand.Rand, k int64, ds int) int64 {
	for {
		if o := int64(1 + rng.IntN(30)); mod(o, 3) != mod(k, 3) && ownerDS(o) == ds {
			return o
		}
	}
}

func mod(a, m int64) int64 { return ((a % m) + m) % m }

// distinct drops repeated keys, keeping order.
func distinct(ps []pair) []pair {
	var out []pair
	for _, p := range ps {
		if !slices.ContainsFunc(out, func(q pair) bool { return q.key == p.key }) {
			out = append(out, p)
		}
	}
	return out
}
