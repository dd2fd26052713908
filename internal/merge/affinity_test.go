package merge

import (
	"path/filepath"
	"testing"
)

// HAVING on SQLite compares as SQLite does after its comparison affinity:
// an INTEGER group column against text compares numbers, a TEXT column
// against a number compares text, an aggregate (no affinity) against text
// compares storage classes (a number is always less than text).
func TestSQLiteHavingAppliesComparisonAffinityAsSQLite(t *testing.T) {
	lite := "file:" + filepath.Join(t.TempDir(), "aff.db")
	var rows [][]any
	ks := []any{3, 7, 10, 12, nil}
	ss := []any{"5", "10", "abc", "7", " 7", "2.0", "12", nil}
	for i := 0; i < 40; i++ {
		rows = append(rows, []any{i, ks[i%len(ks)], ss[i%len(ss)], float64(i % 3)})
	}
	fill(t, "sqlite", lite, `CREATE TABLE t (id integer PRIMARY KEY, k integer, s varchar(8), r real)`, rows, "?")
	saved := shardRanges
	shardRanges = [][2]int{{0, 13}, {13, 27}, {27, 27}, {27, 40}}
	defer func() { shardRanges = saved }()
	d := &dialectDB{name: "sqlite", dialect: SQLite, drv: driverOf(t, "sqlite", lite), dsn: lite}
	col := func(c int) Operand { return Operand{Col: c} }
	con := func(v any) Operand { return Operand{Const: v, IsConst: true} }
	for _, c := range []struct {
		having string
		op     CmpOp
		l, r   Operand
	}{
		{"k > '5'", Gt, col(0), con("5")},
		{"k = ' 7 '", Eq, col(0), con(" 7 ")},
		{"k > '5x'", Gt, col(0), con("5x")},
		{"k < '1e1'", Lt, col(0), con("1e1")},
		{"s > 5", Gt, col(1), con(int64(5))},
		{"s = 10", Eq, col(1), con(int64(10))},
		{"s = 2.0", Eq, col(1), con(2.0)},
		{"COUNT(*) > '0'", Gt, col(2), con("0")},
		{"MIN(k) > '5'", Gt, col(3), con("5")},
		{"MIN(k) < s", Lt, col(3), col(1)},
		{"k > s", Gt, col(0), col(1)},
		{"s = k", Eq, col(1), col(0)},
		{"MAX(r) = '1'", Eq, col(4), con("1")},
	} {
		q := "SELECT k, s FROM t GROUP BY k, s HAVING " + c.having + " ORDER BY k, s"
		want := readAll(t, d.query(t, d.conn(t, 0), q))
		p := Plan{Dialect: SQLite, Visible: 2, Grouped: true, GroupBy: []int{0, 1}, GroupText: []Text{TextBinary, TextBinary},
			Aggs:    []Agg{{Col: 2, Func: Count}, {Col: 3, Func: Min}, {Col: 4, Func: Max}},
			Having:  &Cond{Op: Compare, Cmp: c.op, L: c.l, R: c.r, Text: TextBinary},
			OrderBy: []Key{{Col: 0, NullsFirst: true}, {Col: 1, NullsFirst: true, Text: TextBinary}}, Limit: -1}
		got, _, err := d.mergeShards(t, "SELECT k, s, COUNT(*), MIN(k), MAX(r) FROM t WHERE id >= ? AND id < ? GROUP BY k, s", p)
		if err != nil {
			t.Errorf("%s: %v", c.having, err)
			continue
		}
		sameResult(t, c.having, got, want, noFloats)
	}
}
