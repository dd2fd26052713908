package bench

// BenchmarkMergeScatterOrderByLimit: SELECT ... ORDER BY k LIMIT 10 over
// 64 shards of 100,000 rows (one SQLite data source each) through sqlhook,
// against the same query on one table of 6,400,000 rows through plain
// database/sql, same run:
//
//	order=indexed  ORDER BY k, k indexed: each shard reads 10 rows off its
//	               index, so the sharded side is 64 small queries and
//	               their merge against one small query
//	order=scan     ORDER BY u, not indexed: every side reads all rows
//
//	impl=sqlhook   through sqlhook: 64 queries, merged
//	impl=fanout    the 64 per-shard queries through plain database/sql, one
//	               after another, 640 rows read, no merge
//	impl=onetable  one table, plain database/sql
//
// ns/row is per result row (10 per operation, also for fanout, which
// reads 640).

import (
	"database/sql"
	"testing"
)

func BenchmarkMergeScatterOrderByLimit(b *testing.B) {
	for _, c := range []struct{ order, q string }{
		{"indexed", `SELECT id, k, v FROM t_big ORDER BY k LIMIT 10`},
		{"scan", `SELECT id, u, v FROM t_big ORDER BY u LIMIT 10`},
	} {
		b.Run("order="+c.order+"/impl=sqlhook", func(b *testing.B) {
			sharded, one := scatterSet.sharded(b), scatterSet.one(b, -1)
			checkAnswer(b, sharded, one, true, c.q)
			benchTopRows(b, []*sql.DB{sharded}, c.q)
		})
		b.Run("order="+c.order+"/impl=fanout", func(b *testing.B) {
			dbs := make([]*sql.DB, scatterSet.shards)
			for i := range dbs {
				dbs[i] = scatterSet.one(b, i)
			}
			benchTopRows(b, dbs, c.q)
		})
		b.Run("order="+c.order+"/impl=onetable", func(b *testing.B) {
			benchTopRows(b, []*sql.DB{scatterSet.one(b, -1)}, c.q)
		})
	}
}

// benchTopRows times reading the 10 rows of q (id, an integer key and a
// text) from each of dbs in turn, scanned as an application scans them.
func benchTopRows(b *testing.B, dbs []*sql.DB, q string) {
	var id, k int64
	var v string
	read := func(db *sql.DB) int {
		rows, err := db.Query(q)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			if err := rows.Scan(&id, &k, &v); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		return n
	}
	for _, db := range dbs { // warm: plan cache, connections, page cache
		if n := read(db); n != 10 {
			b.Fatalf("%d rows, want 10", n)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, db := range dbs {
			read(db)
		}
	}
	reportPerRow(b, 10, "row")
}
