package bench

// BenchmarkMergeGroupBy: GROUP BY over 16 shards (one SQLite data source
// each) of 50,000 rows with 10,000 groups, every group in every shard, so
// the merge reads 160,000 per-shard groups and yields 10,000:
//
//	impl=sqlhook   through sqlhook, merged
//	impl=fanout    the same 16 per-shard queries through plain database/sql,
//	               read one after another, not merged: what the databases
//	               and the driver cost without any merge
//	impl=onetable  the query on one table of 800,000 rows
//
// ns/inrow is per row the merge reads (160,000 per operation on the
// sharded sides); ns/group per result row (10,000). The merge's own cost
// per input row is sqlhook's ns/inrow minus fanout's.

import (
	"database/sql"
	"testing"
)

const (
	groupCount  = 10_000
	groupInRows = 16 * groupCount // per-shard groups the merge reads
)

func BenchmarkMergeGroupBy(b *testing.B) {
	for _, c := range []struct {
		order string
		q     string
	}{
		{"none", `SELECT g, COUNT(*), SUM(a), MAX(a) FROM t_grp GROUP BY g`},
		{"g", `SELECT g, COUNT(*), SUM(a), MAX(a) FROM t_grp GROUP BY g ORDER BY g`},
	} {
		b.Run("order="+c.order+"/impl=sqlhook", func(b *testing.B) {
			sharded, one := groupSet.sharded(b), groupSet.one(b, -1)
			checkAnswer(b, sharded, one, c.order != "none", c.q)
			benchReadInts(b, []*sql.DB{sharded}, 4, groupCount, c.q)
			reportPerRow(b, groupInRows, "inrow")
		})
		b.Run("order="+c.order+"/impl=fanout", func(b *testing.B) {
			dbs := make([]*sql.DB, groupSet.shards)
			for i := range dbs {
				dbs[i] = groupSet.one(b, i)
			}
			benchReadInts(b, dbs, 4, groupInRows, c.q)
			reportPerRow(b, groupInRows, "inrow")
		})
		b.Run("order="+c.order+"/impl=onetable", func(b *testing.B) {
			benchReadInts(b, []*sql.DB{groupSet.one(b, -1)}, 4, groupCount, c.q)
			reportPerRow(b, groupCount, "group")
		})
	}
}

// benchReadInts times running q (of ncols integer columns) on each of dbs
// in turn and reading every row; want is the rows of one operation.
func benchReadInts(b *testing.B, dbs []*sql.DB, ncols, want int, q string, args ...any) {
	b.Helper()
	vals := make([]int64, ncols)
	op := func() int {
		total := 0
		for _, db := range dbs {
			n, err := readInts(db, vals, q, args...)
			if err != nil {
				b.Fatal(err)
			}
			total += n
		}
		return total
	}
	if n := op(); n != want { // warm: plan cache, connections, page cache
		b.Fatalf("%d rows, want %d", n, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		op()
	}
}
