package merge

import (
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// PostgreSQL's NaN and ±Infinity (numeric and float8) and float -0:
// NaN sorts above every number and equals itself, -0 equals 0; sums and
// averages with infinities are infinite, or NaN when both meet. Merged,
// ordered, grouped and DISTINCT, they give PostgreSQL's own answers.
func TestPostgresNaNInfinityAndNegativeZeroMergeAsPostgreSQL(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 3}, {3, 6}, {6, 10}}
	defer func() { shardRanges = saved }()
	rows := [][]any{
		{0, 0, "NaN", "NaN"}, {1, 0, "1.5", "1.5"}, {2, 1, "Infinity", "Infinity"},
		{3, 1, "-Infinity", "-Infinity"}, {4, 2, "0", "-0"}, {5, 2, "NaN", "NaN"},
		{6, 2, "-0.0", "0"}, {7, 3, "Infinity", "Infinity"}, {8, 3, "2", "2"}, {9, 4, nil, nil},
	}
	pg := dbtest.Postgres(t, "mergeatk_special")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, g int, n numeric, f float8)`, rows, "$")
	d := &dialectDB{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg}
	for _, x := range []string{"n", "f"} {
		// Ordered, both ways, ties broken by id.
		for _, dir := range []string{"", " DESC"} {
			q := sprintf("SELECT id, %s FROM t%%s ORDER BY %[1]s%s, id", x, dir)
			want := readAll(t, d.query(t, d.conn(t, 7), sprintf(q, "")))
			p := Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 1, Desc: dir != "", NullsFirst: dir != ""}, {Col: 0}}, Limit: -1}
			got, _, err := d.mergeShards(t, sprintf(q, " WHERE id >= ? AND id < ?"), p)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			sameResult(t, q, got, want, noFloats)
		}
		// Grouped by the value, with its aggregates.
		q := sprintf("SELECT %s, COUNT(*), SUM(%[1]s), MIN(%[1]s), MAX(%[1]s) FROM t%%s GROUP BY %[1]s ORDER BY %[1]s", x)
		want := readAll(t, d.query(t, d.conn(t, 7), sprintf(q, "")))
		p := Plan{Dialect: PostgreSQL, Visible: 5, Grouped: true, GroupBy: []int{0},
			Aggs:    []Agg{{Col: 1, Func: Count}, {Col: 2, Func: Sum}, {Col: 3, Func: Min}, {Col: 4, Func: Max}},
			OrderBy: []Key{{Col: 0}}, Limit: -1}
		got, _, err := d.mergeShards(t, sprintf(q, " WHERE id >= ? AND id < ?"), p)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		sameResult(t, q, got, want, noFloats)
		// Per group: sums, averages, distinct counts over the specials.
		q = sprintf("SELECT g, SUM(%[1]s), AVG(%[1]s), COUNT(DISTINCT %[1]s), MIN(%[1]s), MAX(%[1]s) FROM t GROUP BY g ORDER BY g", x)
		want = readAll(t, d.query(t, d.conn(t, 7), q))
		p = Plan{Dialect: PostgreSQL, Visible: 6, Grouped: true, GroupBy: []int{0},
			Aggs: []Agg{{Col: 1, Func: Sum}, {Col: 2, Func: Avg, Args: []int{6, 7}}, {Col: 3, Func: CountDistinct, Args: []int{8}},
				{Col: 4, Func: Min}, {Col: 5, Func: Max}},
			OrderBy: []Key{{Col: 0}}, Limit: -1}
		got, _, err = d.mergeShards(t, sprintf("SELECT g, SUM(%[1]s), AVG(%[1]s), COUNT(DISTINCT %[1]s), MIN(%[1]s), MAX(%[1]s), SUM(%[1]s), COUNT(%[1]s), %[1]s FROM t WHERE id >= ? AND id < ? GROUP BY g, %[1]s", x), p)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		sameResult(t, q, got, want, noFloats)
		// DISTINCT.
		q = sprintf("SELECT DISTINCT %s FROM t%%s ORDER BY 1", x)
		want = readAll(t, d.query(t, d.conn(t, 7), sprintf(q, "")))
		p = Plan{Dialect: PostgreSQL, Visible: 1, Distinct: true, OrderBy: []Key{{Col: 0}}, Limit: -1}
		got, _, err = d.mergeShards(t, sprintf(q, " WHERE id >= ? AND id < ?"), p)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		sameResult(t, q, got, want, noFloats)
	}
}
