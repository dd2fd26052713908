package shardconf

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
)

// ReadWriteGroup is one readwrite-splitting data source (an entry of
// ShardingSphere's !READWRITE_SPLITTING dataSourceGroups): a logical data
// source that the sharding rules name in actualDataNodes, backed by one
// write database and its read replicas.
//
// A write, and every statement inside a transaction, goes to Write. A read
// outside a transaction may go to one of Reads, chosen by LoadBalancer;
// replicas lag behind the write database, so a read that must see a write
// just made belongs in the same transaction. shardkey reads inside a
// transaction from Write whatever TransactionalReadQueryStrategy says: a
// transaction runs on one connection of the write database, and a read
// elsewhere could miss the transaction's own writes.
type ReadWriteGroup struct {
	Name  string       // the logical data source
	Write DataSource   // the write data source (Driver and DSN when the file gives them)
	Reads []DataSource // the read data sources, in file order
	// TransactionalReadQueryStrategy is PRIMARY, FIXED or DYNAMIC as
	// written ("" when absent); see above.
	TransactionalReadQueryStrategy string
	LoadBalancer                   LoadBalancer
	Pos                            Pos
}

// LoadBalancer chooses the read data source of each read (loadBalancers).
type LoadBalancer struct {
	Name string // "" for the default (ROUND_ROBIN)
	// Type is ROUND_ROBIN (in turn), RANDOM (uniform) or WEIGHT (random,
	// in proportion to Weights).
	Type string
	// Weights of the read data sources, by name (WEIGHT only): each
	// read data source has one, >= 0; 0 never receives reads.
	Weights map[string]float64
	Pos     Pos
}

// Load balancer types.
const (
	BalanceRoundRobin = "ROUND_ROBIN"
	BalanceRandom     = "RANDOM"
	BalanceWeight     = "WEIGHT"
)

// Names returns the names of the group's physical data sources: the write
// data source, then the read ones.
func (g *ReadWriteGroup) Names() []string {
	out := []string{g.Write.Name}
	for _, r := range g.Reads {
		out = append(out, r.Name)
	}
	return out
}

func (g *ReadWriteGroup) clone() ReadWriteGroup {
	c := *g
	c.Reads = slices.Clone(g.Reads)
	if g.LoadBalancer.Weights != nil {
		c.LoadBalancer.Weights = make(map[string]float64, len(g.LoadBalancer.Weights))
		for k, v := range g.LoadBalancer.Weights {
			c.LoadBalancer.Weights[k] = v
		}
	}
	return c
}

// ReadWriteGroup returns the readwrite-splitting group of ds, a data
// source name DataSources returns; false when ds is a plain database.
// The group is a copy: changing it changes nothing in the router.
func (r *Router) ReadWriteGroup(ds string) (ReadWriteGroup, bool) {
	if !slices.Contains(r.dataSources, ds) {
		return ReadWriteGroup{}, false
	}
	for _, g := range r.cfg.ReadWriteGroups {
		if g.Name == ds {
			return g.clone(), true
		}
	}
	return ReadWriteGroup{}, false
}

// ReadBalancer picks the read data source of each read of one group, as
// its LoadBalancer says. It is safe for concurrent use.
type ReadBalancer struct {
	typ  string
	n    int
	turn atomic.Uint64
	cum  []float64 // WEIGHT: cumulative weights, in Reads order
}

// NewReadBalancer returns a balancer over g.Reads. A WEIGHT balancer
// whose weights are missing or all zero is not possible in a loaded
// Config; built in code, it falls back to ROUND_ROBIN over every read
// data source rather than send reads nowhere.
func (g *ReadWriteGroup) NewReadBalancer() *ReadBalancer {
	b := &ReadBalancer{typ: g.LoadBalancer.Type, n: len(g.Reads)}
	if b.typ == BalanceWeight {
		total := 0.0
		for _, rd := range g.Reads {
			w := g.LoadBalancer.Weights[rd.Name]
			if w > 0 {
				total += w
			}
			b.cum = append(b.cum, total)
		}
		if total <= 0 {
			b.typ, b.cum = BalanceRoundRobin, nil
		}
	}
	return b
}

// Next returns the index in Reads of the data source for the next read;
// -1 when the group has no read data source.
func (b *ReadBalancer) Next() int {
	if b.n == 0 {
		return -1
	}
	switch b.typ {
	case BalanceRandom:
		return rand.IntN(b.n)
	case BalanceWeight:
		x := rand.Float64() * b.cum[len(b.cum)-1]
		for i, c := range b.cum {
			if x < c {
				return i
			}
		}
		// x == total only by rounding: the last read data source with a
		// weight
		for i := len(b.cum) - 1; i > 0; i-- {
			if b.cum[i] > b.cum[i-1] {
				return i
			}
		}
		return 0
	default:
		return int((b.turn.Add(1) - 1) % uint64(b.n))
	}
}
