package merge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
)

// genRows is a shard of n generated rows (key, value), keys ascending:
// shard s of k holds keys s, s+k, s+2k..., so a merge interleaves them.
// With vals, the values come from there (boxed once, so that reading
// them allocates nothing and only the merge's own cost is measured).
type genRows struct {
	n, i, s, k int
	groups     int // > 0: key is i % groups, value 1 (GROUP BY input)
	vals       []driver.Value
}

var genCols = []string{"key", "val"}

func (g *genRows) Columns() []string { return genCols }
func (g *genRows) Close() error      { return nil }
func (g *genRows) Next(dest []driver.Value) error {
	if g.i >= g.n {
		return io.EOF
	}
	if g.vals != nil {
		dest[0], dest[1] = g.vals[2*g.i], g.vals[2*g.i+1]
	} else if g.groups > 0 {
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

// boxedShards are genShards with their values boxed once; reset rewinds
// them for the next iteration.
func boxedShards(k, n, groups int) (shards []driver.Rows, reset func()) {
	gs := make([]*genRows, k)
	shards = make([]driver.Rows, k)
	for s := range gs {
		g := &genRows{n: n, s: s, k: k, groups: groups}
		vals := make([]driver.Value, 2*n)
		for i := 0; i < n; i++ {
			g.Next(vals[2*i : 2*i+2])
		}
		g.i, g.vals = 0, vals
		gs[s], shards[s] = g, g
	}
	return shards, func() {
		for _, g := range gs {
			g.i = 0
		}
	}
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
		one, reset := boxedShards(1, shards*perShard, 0)
		b.ReportAllocs()
		for b.Loop() {
			reset()
			drain(b, one[0])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*perShard), "ns/row")
	})
	b.Run("merge-16", func(b *testing.B) {
		p := Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 0}}, Limit: -1}
		in, reset := boxedShards(shards, perShard, 0)
		b.ReportAllocs()
		for b.Loop() {
			reset()
			r, err := New(p, in)
			if err != nil {
				b.Fatal(err)
			}
			drain(b, r)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*perShard), "ns/row")
	})
	b.Run("concat-16", func(b *testing.B) {
		p := Plan{Dialect: PostgreSQL, Visible: 2, Limit: -1}
		in, reset := boxedShards(shards, perShard, 0)
		b.ReportAllocs()
		for b.Loop() {
			reset()
			r, err := New(p, in)
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
	in, reset := boxedShards(shards, groups, groups)
	b.ReportAllocs()
	for b.Loop() {
		reset()
		r, err := New(p, in)
		if err != nil {
			b.Fatal(err)
		}
		if got := drain(b, r); got != groups {
			b.Fatalf("%d groups", got)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*groups), "ns/input-row")
}

// The merge against reading one table, on SQLite, same run: 16 tables of
// 10,000 rows merged by key, against one table of their 160,000 rows read
// in key order. ns/row is per row of the result.
func BenchmarkMergeVsOneSQLiteTable(b *testing.B) {
	const shards, perShard = 16, 10_000
	dsn := "file:" + filepath.Join(b.TempDir(), "bench.db")
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, _ := db.Begin()
	exec := func(q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatal(err)
		}
	}
	exec("CREATE TABLE tall (k integer PRIMARY KEY, v integer)")
	for s := range shards {
		exec(fmt.Sprintf("CREATE TABLE t%d (k integer PRIMARY KEY, v integer)", s))
	}
	for i := range shards * perShard {
		exec("INSERT INTO tall VALUES (?, ?)", i, i*7)
		exec(fmt.Sprintf("INSERT INTO t%d VALUES (?, ?)", i%shards), i, i*7)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	conns := make([]driver.Conn, shards)
	for s := range conns {
		if conns[s], err = db.Driver().Open(dsn); err != nil {
			b.Fatal(err)
		}
		defer conns[s].Close()
	}
	query := func(c driver.Conn, q string) driver.Rows {
		r, err := c.(driver.QueryerContext).QueryContext(context.Background(), q, nil)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	perRow := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*shards*perShard), "ns/row")
	}
	b.Run("one-table", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := query(conns[0], "SELECT k, v FROM tall ORDER BY k")
			if n := drain(b, r); n != shards*perShard {
				b.Fatalf("%d rows", n)
			}
			r.Close()
		}
		perRow(b)
	})
	b.Run("merge-16-tables", func(b *testing.B) {
		p := Plan{Dialect: SQLite, Visible: 2, OrderBy: []Key{{Col: 0}}, Limit: -1}
		b.ReportAllocs()
		for b.Loop() {
			in := make([]driver.Rows, shards)
			for s := range in {
				in[s] = query(conns[s], fmt.Sprintf("SELECT k, v FROM t%d ORDER BY k", s))
			}
			r, err := New(p, in)
			if err != nil {
				b.Fatal(err)
			}
			if n := drain(b, r); n != shards*perShard {
				b.Fatalf("%d rows", n)
			}
			r.Close()
		}
		perRow(b)
	})
}
