package merge

import (
	"fmt"
	"math"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// Aggregates of values at the edges of their types — integers at their
// limits, numerics with many digits on both sides of the point, averages
// whose quotient ends in exactly half a unit of the result scale, negative
// ones, NULL-only groups — merged from shards equal the databases' own
// answers over the whole table. (MariaDB's DECIMAL sum goes wrong when
// its running sum passes 65 digits: 35 integer digits at scale 30 are
// kept below that here.)
func TestAggregatesOfExtremeNumbersEqualTheDatabases(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 3}, {3, 7}, {7, 7}, {7, 12}, {12, 17}, {17, 19}, {19, 20}}
	defer func() { shardRanges = saved }()
	// id, g, s (smallint), i (int), b (bigint), n (numeric/decimal), f (double), u (unsigned/bigint)
	rows := [][]any{
		{0, 0, 32767, 2147483647, int64(math.MaxInt64), "6172839450617283945", 0.5, "18446744073709551615"},
		{1, 0, 32767, 2147483647, int64(math.MaxInt64), "6172839450617283946", 1.5, "18446744073709551614"},
		{2, 0, -32768, -2147483648, int64(math.MinInt64), "-0.000000000000000000000000000001", -2.5, "1"},
		{3, 0, 1, 1, 1, "9999999999999999999999999999999999.999999999999999999999999999999", 1024.0, "0"},
		{4, 0, -1, -1, -1, "-9999999999999999999999999999999999.999999999999999999999999999999", -1024.0, "9223372036854775808"},
		{5, 1, -3, -3, -3, "-0.00005", math.Copysign(0, -1), "5"},
		{6, 1, nil, nil, nil, nil, nil, nil},
		{7, 1, -4, -4, -4, "-0.00000", 0.25, "3"},
		{8, 2, nil, nil, nil, nil, nil, nil},
		{9, 3, 5, 5, 5, "12345678901234567891", 3.0, "7"},
		{10, 3, 6, 6, 6, "0", 4.0, "8"},
		{11, 3, 5, 5, 5, "-12345678901234567891", 5.0, "9"},
		{12, 4, 1, 1, 1, "0.1", 0.1, "1"},
		{13, 4, 2, 2, 2, "0.2", 0.2, "2"},
		{14, 4, 2, 2, 2, "0.2", 0.2, "2"},
		{15, 4, -1, -1, -1, "-0.00000000000000000001", -1e-150, "4"},
		// Quotients exactly half a unit past the result's scale.
		{16, 5, 1, 1, 9223372036854775807, "6172839450617283945", 0.5, "18446744073709551615"},
		{17, 5, 2, 2, 9223372036854775806, "6172839450617283946", 1.0, "18446744073709551612"},
		{18, 6, -1, -1, -9223372036854775807, "-6172839450617283945", -0.5, "1"},
		{19, 6, -2, -2, -9223372036854775806, "-6172839450617283946", -1.0, "2"},
	}
	pg := dbtest.Postgres(t, "mergeatk_extremes")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, g int, s smallint, i int, b bigint, n numeric, f float8, u numeric(20))`, rows, "$")
	my := dbtest.MySQL(t, "mergeatk_extremes")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, g int, s smallint, i int, b bigint, n decimal(65,30), f double, u bigint unsigned)`, rows, "?")
	dbs := []*dialectDB{
		{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg},
		{name: "mariadb-text", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my},
		{name: "mariadb-binary", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my, prepared: true},
	}
	for _, d := range dbs {
		for _, x := range []string{"s", "i", "b", "n", "f", "u"} {
			aggs := fmt.Sprintf("AVG(%[1]s), SUM(%[1]s), COUNT(%[1]s), MIN(%[1]s), MAX(%[1]s), COUNT(*)", x)
			want := readAll(t, d.query(t, d.conn(t, 7), "SELECT g, "+aggs+" FROM t GROUP BY g ORDER BY g"))
			p := Plan{Dialect: d.dialect, Visible: 7, Grouped: true, GroupBy: []int{0},
				Aggs: []Agg{{Col: 1, Func: Avg, Args: []int{7, 8}}, {Col: 2, Func: Sum}, {Col: 3, Func: Count},
					{Col: 4, Func: Min}, {Col: 5, Func: Max}, {Col: 6, Func: Count}},
				OrderBy: []Key{{Col: 0}}, Limit: -1}
			q := fmt.Sprintf("SELECT g, %s, SUM(%[2]s), COUNT(%[2]s) FROM t WHERE id >= ? AND id < ? GROUP BY g", aggs, x)
			got, r, err := d.mergeShards(t, q, p)
			if err != nil {
				t.Errorf("%s %s: %v", d.name, x, err)
				continue
			}
			sameResult(t, d.name+" "+x, got, want, floatColumns(r))
		}
	}
}
