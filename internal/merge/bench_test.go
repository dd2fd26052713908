package merge

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"
)

// genRows is a shard of n generated rows (key, value), keys ascending:
// shard s of k holds keys s, s+k, s+2k..., so a merge interleaves them.
type genRows struct {
	n, i, s, k int
	groups     int // > 0: key is i % groups, value 1 (GROUP BY input)
}

var genCols = []string{"key", "val"}

func (g *genRows) Columns() []string { return genCols }
func (g *genRows) Close() error      { return nil }
func (g *genRows) Next(dest []driver.Value) error {
	if g.i >= g.n {
		return io.EOF
	}
	if g.groups > 0 {
		dest[0], dest[1] = int64(g.i%g.groups), int64(1)
	} else {
		dest[0], dest[1] = int64(g.i*g.k+g.s), int64(g.i)
	}
	g.i++
	return nil
}
func (g *genRows) ColumnTypeDatabaseTypeName(int) string { return "INT8" }

func genShards(k, n, groups int) []driver.Rows {
	out := make([]driver.Rows, k)
	for s := range out {
		out[s] = &genRows{n: n, s: s, k: k, groups: groups}
	}
	return out
}

func drain(b *testing.B, r driver.Rows) int {
	dest := make([]driver.Value, len(r.Columns()))
	n := 0
	for {
		err := r.Next(dest)
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// ORDER BY key LIMIT 10 over 64 shards: the work and allocations are the
// heap's, whatever the shards' sizes.
func BenchmarkOrderByLimit10Over64Shards(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			p := Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 0}}, Limit: 10}
			b.ReportAllocs()
			for b.Loop() {
				r, err := New(p, genShards(64, n, 0))
				if err != nil {
					b.Fatal(err)
				}
				if got := drain(b, r); got != 10 {
					b.Fatalf("%d rows", got)
				}
				r.Close()
			}
		})
	}
}

// A k-way merge of 16 shards against reading the same rows from one
// source: the difference is the merge's cost per row.
func BenchmarkMergePerRow(b *testing.B) {
	const shards, perShard = 16, 10_000
	b.Run("one-source", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			drain(b, &genRows{n: shards * perShard, k: 1})
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*perShard), "ns/row")
	})
	b.Run("merge-16", func(b *testing.B) {
		p := Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 0}}, Limit: -1}
		b.ReportAllocs()
		for b.Loop() {
			r, err := New(p, genShards(shards, perShard, 0))
			if err != nil {
				b.Fatal(err)
			}
			drain(b, r)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*perShard), "ns/row")
	})
	b.Run("concat-16", func(b *testing.B) {
		p := Plan{Dialect: PostgreSQL, Visible: 2, Limit: -1}
		b.ReportAllocs()
		for b.Loop() {
			r, err := New(p, genShards(shards, perShard, 0))
			if err != nil {
				b.Fatal(err)
			}
			drain(b, r)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*perShard), "ns/row")
	})
}

// GROUP BY key, COUNT over 16 shards each returning every one of 10,000
// groups: the cost per input row.
func BenchmarkGroupBy16Shards10000Groups(b *testing.B) {
	const shards, groups = 16, 10_000
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0},
		Aggs: []Agg{{Col: 1, Func: Count}}, Limit: -1}
	b.ReportAllocs()
	for b.Loop() {
		r, err := New(p, genShards(shards, groups, groups))
		if err != nil {
			b.Fatal(err)
		}
		if got := drain(b, r); got != groups {
			b.Fatalf("%d groups", got)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*groups), "ns/input-row")
}
