package difftest

import (
	"context"
	"strconv"
)

// algoWhere builds a condition on t_algo.k of some shape around k:
// equality, IN, and ranges closed and open, which DoRangeSharding routes.
func (g *sqlGen) algoWhere(k int64) (string, cell) {
	rng := g.rng
	c := cell{}
	lo := k - int64(rng.IntN(25))
	if lo > k { // overflow at the int64 limits
		lo = k
	}
	hi := lo + int64(rng.IntN(30))
	if hi < lo {
		hi = lo
	}
	switch shape := pick(rng, []string{"eq", "in", "between", "gelt", "gtle", "ge", "lt", "or", "text", "notbetween"}); shape {
	case "eq":
		c.add("k = ")
		c.addCell(g.num(k))
		return shape, c
	case "text": // a numeric column compared with text: the algorithm parses it
		c.add("k = ?", strconv.FormatInt(k, 10))
		return shape, c
	case "in":
		c.add("k IN (")
		c.addCell(g.num(k))
		for range 1 + rng.IntN(3) {
			c.add(", ")
			c.addCell(g.num(algoKey(rng)))
		}
		c.add(")")
		return shape, c
	case "between":
		c.add("k BETWEEN ")
		c.addCell(g.num(lo))
		c.add(" AND ")
		c.addCell(g.num(hi))
		return shape, c
	case "gelt":
		c.add("k >= ")
		c.addCell(g.num(lo))
		c.add(" AND k < ")
		c.addCell(g.num(hi))
		return shape, c
	case "gtle":
		c.add("k > ")
		c.addCell(g.num(lo))
		c.add(" AND k <= ")
		c.addCell(g.num(hi))
		return shape, c
	case "ge":
		c.add("k >= ")
		c.addCell(g.num(k))
		return shape, c
	case "lt":
		c.add("k < ")
		c.addCell(g.num(k))
		return shape, c
	case "or":
		c.add("k BETWEEN ")
		c.addCell(g.num(lo))
		c.add(" AND ")
		c.addCell(g.num(hi))
		c.add(" OR k = ")
		c.addCell(g.num(algoKey(rng)))
		return shape, c
	default: // the router cannot narrow NOT: every target, or refused without scatter
		c.add("k NOT BETWEEN ")
		c.addCell(g.num(lo))
		c.add(" AND ")
		c.addCell(g.num(hi))
		return shape, c
	}
}

func (g *sqlGen) algoInsert(keys []int64, suffix string) cell {
	c := cell{}
	c.add("INSERT INTO t_algo (k, grp, v) VALUES ")
	for i, k := range keys {
		if i > 0 {
			c.add(", ")
		}
		c.add("(")
		c.addCell(g.num(k))
		c.add(", ")
		c.addCell(g.val(pick(g.rng, amounts)))
		c.add(", ")
		c.addCell(g.val(pick(g.rng, statuses)))
		c.add(")")
	}
	c.add(suffix)
	return c
}

// algoPlan draws a step on t_algo, routed by the Go algorithms.
func (g *sqlGen) algoPlan() xplan {
	rng := g.rng
	bg := context.Background()
	one := func(kind string, c cell) xplan { return xplan{kind: "sql.algo." + kind, execs: []xexec{{bg, "", c}}} }
	switch n := rng.IntN(100); {
	case n < 15:
		return one("insert1", g.algoInsert([]int64{g.h.existingAlgo(rng)}, ""))
	case n < 25: // fresh keys only: a multi-row INSERT split over targets is not atomic
		return one("insertN", g.algoInsert(g.h.freshAlgoKeys(rng, 2+rng.IntN(3)), ""))
	case n < 50:
		shape, w := g.algoWhere(g.h.existingAlgo(rng))
		c := cell{}
		c.add("UPDATE t_algo SET v = ")
		c.addCell(g.val(pick(rng, statuses)))
		if rng.IntN(2) == 0 {
			c.add(", grp = grp + 1")
		}
		c.add(" WHERE ")
		c.addCell(w)
		return one("update."+shape, c)
	case n < 68:
		shape, w := g.algoWhere(g.h.existingAlgo(rng))
		c := cell{}
		c.add("DELETE FROM t_algo WHERE ")
		c.addCell(w)
		return one("delete."+shape, c)
	case n < 78: // the sharding column to a key of the same target (allowed) or another (refused)
		k := g.h.existingAlgo(rng)
		same := rng.IntN(2) == 0
		kind := map[bool]string{true: "setk.same", false: "setk.other"}[same]
		c := cell{}
		c.add("UPDATE t_algo SET k = ")
		c.addCell(g.num(algoKeyLike(rng, k, same)))
		c.add(" WHERE k = ")
		c.addCell(g.num(k))
		return one(kind, c)
	case n < 84: // a read routed by the algorithms' ranges
		shape, w := g.algoWhere(g.h.existingAlgo(rng))
		c := cell{}
		c.add("SELECT k FROM t_algo WHERE ")
		c.addCell(w)
		p := one("select."+shape, c)
		p.query = true
		return p
	case n < 90:
		k := g.h.existingAlgo(rng)
		suffix := " ON CONFLICT (k) DO UPDATE SET v = excluded.v, grp = t_algo.grp + 1"
		if g.b.mysql {
			suffix = " ON DUPLICATE KEY UPDATE v = VALUES(v), grp = grp + 1"
		}
		return one("upsert", g.algoInsert([]int64{k}, suffix))
	default: // one prepared range UPDATE, executed with several ranges
		p := xplan{kind: "sql.algo.prepared.range", prepared: true}
		for range 2 + rng.IntN(2) {
			lo := g.h.existingAlgo(rng) - int64(rng.IntN(10))
			p.execs = append(p.execs, xexec{bg, "", cell{text: "UPDATE t_algo SET v = ? WHERE k BETWEEN ? AND ?",
				args: []any{pick(rng, statuses), lo, lo + int64(rng.IntN(30))}}})
		}
		return p
	}
}
