package bench

// BenchmarkMergeRowOverhead: reading the same 160,000 rows (three integer
// columns) spread over 16 shards (one SQLite data source each, 10,000
// rows per shard) through sqlhook, against reading them from one table
// through plain database/sql, same run:
//
//	order=none  no ORDER BY: sqlhook concatenates the shards' rows
//	order=id    ORDER BY id: sqlhook merges 16 ordered streams
//
//	impl=sqlhook   through sqlhook
//	impl=fanout    the 16 per-shard queries through plain database/sql,
//	               one after another (no merge)
//	impl=onetable  one table, plain database/sql (the target: sqlhook
//	               within 1.5x of it)
//
// ns/row is per row read.

import (
	"database/sql"
	"testing"
)

const overheadRows = 160_000

func BenchmarkMergeRowOverhead(b *testing.B) {
	for _, c := range []struct {
		order string
		q     string
	}{
		{"none", `SELECT id, g, a FROM t_grp WHERE id < ?`},
		{"id", `SELECT id, g, a FROM t_grp WHERE id < ? ORDER BY id`},
	} {
		b.Run("order="+c.order+"/impl=sqlhook", func(b *testing.B) {
			sharded, one := groupSet.sharded(b), groupSet.one(b, -1)
			checkAnswer(b, sharded, one, c.order != "none", c.q, overheadRows)
			benchReadInts(b, []*sql.DB{sharded}, 3, overheadRows, c.q, overheadRows)
			reportPerRow(b, overheadRows, "row")
		})
		b.Run("order="+c.order+"/impl=fanout", func(b *testing.B) {
			dbs := make([]*sql.DB, groupSet.shards)
			for i := range dbs {
				dbs[i] = groupSet.one(b, i)
			}
			benchReadInts(b, dbs, 3, overheadRows, c.q, overheadRows)
			reportPerRow(b, overheadRows, "row")
		})
		b.Run("order="+c.order+"/impl=onetable", func(b *testing.B) {
			benchReadInts(b, []*sql.DB{groupSet.one(b, -1)}, 3, overheadRows, c.q, overheadRows)
			reportPerRow(b, overheadRows, "row")
		})
	}
}
