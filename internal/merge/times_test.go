package merge

import (
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// Times merge by instant as the databases compare them: PostgreSQL's
// timestamptz written with different offsets for one instant is one
// value, its timestamp (no zone) is a wall clock, ±infinity sit at the
// ends; MariaDB's DATETIME(6) keeps microseconds and its zero date sorts
// first. Ordered, grouped and DISTINCT, with MIN and MAX.
func TestTimesMergeByInstantAsTheDatabasesCompareThem(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 3}, {3, 5}, {5, 9}}
	defer func() { shardRanges = saved }()
	base := time.Date(2024, 3, 31, 1, 30, 0, 0, time.UTC)
	pgRows := [][]any{
		{0, "2024-03-31 01:30:00+00", "2024-03-31 01:30:00"}, {1, "2024-03-31 03:30:00+02", "2024-03-31 03:30:00"},
		{2, "infinity", "-infinity"}, {3, "2024-03-30 20:30:00-05", "2024-03-31 01:30:00.000001"},
		{4, nil, nil}, {5, "-infinity", "infinity"}, {6, "2024-03-31 01:30:00.000001+00", "2024-03-31 01:30:00"},
		{7, "2024-03-31 01:29:59.999999+00", "2024-03-30 23:59:59"}, {8, "2024-03-31 02:30:00+01", "infinity"},
	}
	pg := dbtest.Postgres(t, "mergeatk_times")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, tz timestamptz, ts timestamp)`, pgRows, "$")
	myRows := [][]any{
		{0, base, "2024-03-31 01:30:00"}, {1, base.Add(time.Microsecond), "0000-00-00 00:00:00"}, {2, "0000-00-00 00:00:00", nil},
		{3, base, "2024-03-31 01:30:00.000001"}, {4, nil, "0000-00-00 00:00:00"}, {5, base.Add(-time.Microsecond), "2024-03-31 01:30:00"},
		{6, "0000-00-00 00:00:00", "1970-01-02 00:00:00"}, {7, base.Add(time.Hour), "2038-01-01 00:00:00.999999"}, {8, base, nil},
	}
	my := dbtest.MySQL(t, "mergeatk_times")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, tz datetime(6), ts timestamp(6) NULL)`, myRows, "?")
	for _, d := range []*dialectDB{
		{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg},
		{name: "mariadb", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my},
		{name: "mariadb-binary", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my, prepared: true},
	} {
		for _, x := range []string{"tz", "ts"} {
			for _, desc := range []bool{false, true} {
				dir, nullsFirst := "", d.dialect != PostgreSQL
				if desc {
					dir, nullsFirst = " DESC", !nullsFirst
				}
				q := sprintf("SELECT id, %s FROM t%%s ORDER BY 2%s, 1", x, dir)
				want := readAll(t, d.query(t, d.conn(t, 7), sprintf(q, "")))
				p := Plan{Dialect: d.dialect, Visible: 2, OrderBy: []Key{{Col: 1, Desc: desc, NullsFirst: nullsFirst}, {Col: 0}}, Limit: -1}
				got, _, err := d.mergeShards(t, sprintf(q, " WHERE id >= ? AND id < ?"), p)
				if err != nil {
					t.Fatalf("%s %s: %v", d.name, q, err)
				}
				sameResult(t, d.name+" "+q, got, want, noFloats)
			}
			order := " ORDER BY 1"
			if d.dialect == PostgreSQL {
				order += " NULLS FIRST"
			}
			q := sprintf("SELECT %s, COUNT(*), MIN(id), MAX(id) FROM t%%s GROUP BY 1"+order, x)
			want := readAll(t, d.query(t, d.conn(t, 7), sprintf(q, "")))
			p := Plan{Dialect: d.dialect, Visible: 4, Grouped: true, GroupBy: []int{0},
				Aggs:    []Agg{{Col: 1, Func: Count}, {Col: 2, Func: Min}, {Col: 3, Func: Max}},
				OrderBy: []Key{{Col: 0, NullsFirst: true}}, Limit: -1}
			got, _, err := d.mergeShards(t, sprintf("SELECT %s, COUNT(*), MIN(id), MAX(id) FROM t WHERE id >= ? AND id < ? GROUP BY 1", x), p)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, q, err)
			}
			sameResult(t, d.name+" "+q, got, want, noFloats)

			q = sprintf("SELECT MIN(%[1]s), MAX(%[1]s), COUNT(DISTINCT %[1]s) FROM t", x)
			want = readAll(t, d.query(t, d.conn(t, 7), q))
			p = Plan{Dialect: d.dialect, Visible: 3, Grouped: true,
				Aggs: []Agg{{Col: 0, Func: Min}, {Col: 1, Func: Max}, {Col: 2, Func: CountDistinct, Args: []int{3}}}, Limit: -1}
			got, _, err = d.mergeShards(t, sprintf("SELECT MIN(%[1]s), MAX(%[1]s), COUNT(DISTINCT %[1]s), %[1]s FROM t WHERE id >= ? AND id < ? GROUP BY %[1]s", x), p)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, q, err)
			}
			sameResult(t, d.name+" "+q, got, want, noFloats)
		}
	}
}
