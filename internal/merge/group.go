package merge

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"io"
	"slices"
)

// aggInfo is an aggregate of the plan with what the engine resolved for it.
type aggInfo struct {
	Agg
	mode  avgMode // Avg, AvgDistinct
	scale int     // avgMySQLDecimal's scale
	kind  goKind  // Go type of the first non-NULL value of Col: the output's
}

// aggState is one aggregate's state in one group.
type aggState struct {
	sum   sumAcc
	count int64
	best  driver.Value // Min, Max: a copy
	bestS int          // the shard best came from
	set   map[string]distinctVal
}

// distinctVal is a distinct value of SumDistinct/AvgDistinct (a copy).
type distinctVal struct {
	v driver.Value
	s int
}

// group is one GROUP BY group: its first row (a copy), whose
// non-aggregate columns it keeps, and its aggregates.
type group struct {
	row   []driver.Value
	shard int
	aggs  []aggState
}

func tooMany(n int) error {
	return fmt.Errorf("%w: more than %d (Plan.MaxGroups)", ErrTooManyGroups, n)
}

// grouped is the source of a grouped query: every shard read into groups
// on the first call, then the groups' rows.
type grouped struct {
	r    *Rows
	done bool
	out  []*group
	i    int
}

func (g *grouped) next() ([]driver.Value, int, error) {
	if !g.done {
		g.done = true
		out, err := g.r.groupAll()
		if err != nil {
			return nil, 0, err
		}
		g.out = out
	}
	if g.i >= len(g.out) {
		return nil, 0, io.EOF
	}
	gr := g.out[g.i]
	g.out[g.i] = nil // let it go once returned
	g.i++
	return gr.row, gr.shard, nil
}

// groupAll reads every shard, groups and aggregates, then applies HAVING,
// DISTINCT and ORDER BY (OFFSET and LIMIT are Next's).
func (r *Rows) groupAll() ([]*group, error) {
	groups, err := r.readGroups()
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 && len(r.p.GroupBy) == 0 {
		g, err := r.emptyGroup()
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	kept := groups[:0]
	for _, g := range groups {
		if err := r.finish(g); err != nil {
			return nil, err
		}
		if err := r.compute(g); err != nil {
			return nil, err
		}
		ok, err := r.having(g)
		if err != nil {
			return nil, err
		}
		if ok {
			kept = append(kept, g)
		}
	}
	if r.p.Distinct {
		if kept, err = r.distinctGroups(kept); err != nil {
			return nil, err
		}
	}
	return kept, r.sortGroups(kept)
}

// readGroups reads the shards one after another into groups, in the order
// groups are first seen.
func (r *Rows) readGroups() ([]*group, error) {
	var (
		groups []*group
		index  = map[string]*group{}
		buf    = make([]driver.Value, len(r.names))
		key    []byte
		held   int // groups and distinct values in memory
	)
	for s := range r.shards {
		for {
			ok, err := r.pull(s, buf)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if key, err = r.groupKey(key[:0], buf, s); err != nil {
				return nil, err
			}
			g := index[string(key)]
			if g == nil {
				if held++; held > r.max {
					return nil, tooMany(r.max)
				}
				g = &group{row: cloneRow(buf), shard: s, aggs: make([]aggState, len(r.aggs))}
				index[string(key)] = g
				groups = append(groups, g)
			}
			if held, err = r.accumulate(g, buf, s, held); err != nil {
				return nil, err
			}
		}
	}
	return groups, nil
}

func (r *Rows) groupKey(buf []byte, row []driver.Value, s int) ([]byte, error) {
	for i, c := range r.p.GroupBy {
		var err error
		if buf, err = appendKey(buf, row[c], r.cls[s][c], r.groupText(i)); err != nil {
			return buf, r.colErr(c, err)
		}
	}
	return buf, nil
}

// emptyGroup is the one group of an aggregate query without GROUP BY when
// no shard returned a row: COUNT 0, other aggregates NULL.
func (r *Rows) emptyGroup() (*group, error) {
	g := &group{row: make([]driver.Value, len(r.names)), aggs: make([]aggState, len(r.aggs))}
	isAgg := make([]bool, len(r.names))
	for _, a := range r.aggs {
		isAgg[a.Col] = true
	}
	for _, c := range r.comps {
		isAgg[c.Col] = true
	}
	for c := 0; c < r.p.Visible; c++ {
		if !isAgg[c] {
			return nil, r.colErr(c, planErr("no shard returned a row to take this non-aggregate column from"))
		}
	}
	return g, nil
}

// cloneRow copies a row with its []byte values, which drivers reuse.
func cloneRow(row []driver.Value) []driver.Value {
	out := make([]driver.Value, len(row))
	for i, v := range row {
		out[i] = cloneValue(v)
	}
	return out
}

func cloneValue(v driver.Value) driver.Value {
	if b, ok := v.([]byte); ok {
		return bytes.Clone(b)
	}
	return v
}

// distinctGroups keeps the first of the grouped rows equal on the
// visible columns.
func (r *Rows) distinctGroups(gs []*group) ([]*group, error) {
	seen := map[string]struct{}{}
	var key []byte
	out := gs[:0]
	for _, g := range gs {
		var err error
		if key, err = r.rowKey(key[:0], g.row, g.shard); err != nil {
			return nil, err
		}
		if _, dup := seen[string(key)]; dup {
			continue
		}
		seen[string(key)] = struct{}{}
		out = append(out, g)
	}
	return out, nil
}

// sortGroups orders the grouped rows by OrderBy; without one, MariaDB's
// ascending order of the GROUP BY columns on MySQL.
func (r *Rows) sortGroups(gs []*group) error {
	keys := r.groupOrder()
	if len(keys) == 0 {
		return nil
	}
	var err error
	slices.SortStableFunc(gs, func(a, b *group) int {
		for _, k := range keys {
			c, e := r.compareKey(k, a.row[k.Col], a.shard, b.row[k.Col], b.shard)
			if e != nil && err == nil {
				err = e
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return err
}

// groupOrder is the order of grouped rows.
func (r *Rows) groupOrder() []Key {
	if len(r.p.OrderBy) > 0 || r.p.Dialect != MySQL {
		return r.p.OrderBy
	}
	keys := make([]Key, len(r.p.GroupBy))
	for i, c := range r.p.GroupBy {
		keys[i] = Key{Col: c, NullsFirst: true, Text: r.groupText(i)}
	}
	return keys
}

func (r *Rows) groupText(i int) Text {
	if i < len(r.p.GroupText) {
		return r.p.GroupText[i]
	}
	return TextRefused
}
