package merge

import (
	"path/filepath"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// NULLs as each database treats them, merged: NULL group keys form one
// group; COUNT(x) skips NULLs where COUNT(*) does not; SUM, MIN and MAX
// of only NULLs are NULL; HAVING on a NULL aggregate is unknown, so
// neither the condition nor its NOT keeps the group; ordering by an
// aggregate puts NULL where the dialect does for each direction.
func TestNullsGroupOrderAndHavingAsEachDatabase(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 4}, {4, 9}, {9, 9}, {9, 14}}
	defer func() { shardRanges = saved }()
	rows := [][]any{
		{0, nil, nil}, {1, 1, nil}, {2, 2, 5}, {3, nil, 3}, {4, 1, nil}, {5, 3, nil},
		{6, nil, 1}, {7, 2, nil}, {8, 4, 2}, {9, 3, nil}, {10, nil, nil}, {11, 4, 7}, {12, 5, 2}, {13, 1, nil},
	}
	pg := dbtest.Postgres(t, "mergeatk_nulls")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, g int, x int)`, rows, "$")
	my := dbtest.MySQL(t, "mergeatk_nulls")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, g int, x int)`, rows, "?")
	lite := "file:" + filepath.Join(t.TempDir(), "n.db")
	fill(t, "sqlite", lite, `CREATE TABLE t (id integer PRIMARY KEY, g integer, x integer)`, rows, "?")
	for _, d := range []*dialectDB{
		{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg},
		{name: "mariadb", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my},
		{name: "sqlite", dialect: SQLite, drv: driverOf(t, "sqlite", lite), dsn: lite},
	} {
		for _, c := range []struct {
			having string
			cond   *Cond
			desc   bool
		}{
			{"", nil, false},
			{"", nil, true},
			{" HAVING MAX(x) > 2", &Cond{Op: Compare, Cmp: Gt, L: Operand{Col: 5}, R: Operand{Const: int64(2), IsConst: true}}, true},
			{" HAVING NOT (MAX(x) > 2)", &Cond{Op: Not, Kids: []*Cond{{Op: Compare, Cmp: Gt, L: Operand{Col: 5}, R: Operand{Const: int64(2), IsConst: true}}}}, false},
			{" HAVING MAX(x) IS NULL OR COUNT(x) = 1", &Cond{Op: Or, Kids: []*Cond{{Op: IsNull, L: Operand{Col: 5}},
				{Op: Compare, Cmp: Eq, L: Operand{Col: 2}, R: Operand{Const: int64(1), IsConst: true}}}}, true},
		} {
			dir, nullsFirst := "", d.dialect != PostgreSQL
			if c.desc {
				dir, nullsFirst = " DESC", !nullsFirst
			}
			q := "SELECT g, COUNT(*), COUNT(x), SUM(x), MIN(x), MAX(x) FROM t%s GROUP BY g" + c.having + " ORDER BY MAX(x)" + dir + ", g" + dir
			want := readAll(t, d.query(t, d.conn(t, 7), sprintf(q, "")))
			p := Plan{Dialect: d.dialect, Visible: 6, Grouped: true, GroupBy: []int{0},
				Aggs:    []Agg{{Col: 1, Func: Count}, {Col: 2, Func: Count}, {Col: 3, Func: Sum}, {Col: 4, Func: Min}, {Col: 5, Func: Max}},
				Having:  c.cond,
				OrderBy: []Key{{Col: 5, Desc: c.desc, NullsFirst: nullsFirst}, {Col: 0, Desc: c.desc, NullsFirst: nullsFirst}}, Limit: -1}
			got, _, err := d.mergeShards(t, sprintf("SELECT g, COUNT(*), COUNT(x), SUM(x), MIN(x), MAX(x) FROM t WHERE id >= ? AND id < ? GROUP BY g"), p)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, q, err)
			}
			sameResult(t, d.name+" "+q, got, want, noFloats)

			// DISTINCT over NULLs: one NULL row.
			dq := "SELECT DISTINCT g, x IS NULL FROM t%s ORDER BY 1" + dir + ", 2"
			want = readAll(t, d.query(t, d.conn(t, 7), sprintf(dq, "")))
			dp := Plan{Dialect: d.dialect, Visible: 2, Distinct: true,
				OrderBy: []Key{{Col: 0, Desc: c.desc, NullsFirst: nullsFirst}, {Col: 1, NullsFirst: d.dialect != PostgreSQL}}, Limit: -1}
			got, _, err = d.mergeShards(t, sprintf(dq, " WHERE id >= ? AND id < ?"), dp)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, dq, err)
			}
			sameResult(t, d.name+" "+dq, got, want, noFloats)
		}
	}
}
