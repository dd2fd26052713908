package merge

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// SQLite stores a time as text and compares the text, not the instant:
// "2024-01-01 10:00:00", "2024-01-01 10:00:00+00:00" and
// "2024-01-01 10:00:00Z" are three values to it, and "2024-01-01T09:00:00"
// sorts after "2024-01-01 10:00:00". Its driver returns all of them as one
// time.Time, so the merge refuses them; read as text they merge exactly.
func TestSQLiteTimesOfOneInstantSpelledDifferentlyAreRefusedNotMerged(t *testing.T) {
	lite := "file:" + filepath.Join(t.TempDir(), "ts.db")
	rows := [][]any{
		{0, "2024-01-01 10:00:00"}, {1, "2024-01-01 10:00:00+00:00"}, {2, "2024-01-01 11:00:00"},
		{3, "2024-01-01T09:00:00"}, {4, "2024-01-01 10:00:00Z"}, {5, nil},
	}
	fill(t, "sqlite", lite, `CREATE TABLE t (id integer PRIMARY KEY, ts datetime)`, rows, "?")
	d := &dialectDB{name: "sqlite", dialect: SQLite, drv: driverOf(t, "sqlite", lite), dsn: lite}
	saved := shardRanges
	shardRanges = [][2]int{{0, 3}, {3, 6}} // each shard's rows are in both orders
	defer func() { shardRanges = saved }()

	distinct := Plan{Dialect: SQLite, Visible: 1, Distinct: true, DistinctText: []Text{TextBinary}, Limit: -1}
	ordered := Plan{Dialect: SQLite, Visible: 2, OrderBy: []Key{{Col: 1, NullsFirst: true, Text: TextBinary}, {Col: 0}}, Limit: -1}
	grouped := Plan{Dialect: SQLite, Visible: 2, Grouped: true, GroupBy: []int{0}, GroupText: []Text{TextBinary},
		Aggs: []Agg{{Col: 1, Func: Count}}, Limit: -1}
	minmax := Plan{Dialect: SQLite, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: Min, Text: TextBinary}}, Limit: -1}
	for _, c := range []struct {
		whole, shard string
		p            Plan
	}{
		{"SELECT DISTINCT %s FROM t", "SELECT DISTINCT %s FROM t WHERE id >= ? AND id < ?", distinct},
		{"SELECT id, %s FROM t ORDER BY 2, 1", "SELECT id, %s FROM t WHERE id >= ? AND id < ? ORDER BY 2, 1", ordered},
		{"SELECT %s, COUNT(*) FROM t GROUP BY 1", "SELECT %s, COUNT(*) FROM t WHERE id >= ? AND id < ? GROUP BY 1", grouped},
		{"SELECT MIN(%s) FROM t", "SELECT MIN(%s) FROM t WHERE id >= ? AND id < ?", minmax},
	} {
		_, _, err := d.mergeShards(t, sprintf(c.shard, "ts"), c.p)
		if c.p.Aggs == nil || c.p.Aggs[0].Func != Min {
			if !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("%s: err %v, want ErrUnsupportedType", c.shard, err)
			}
		} else if err != nil { // MIN(ts) has no declared type: the driver returns its text
			t.Errorf("%s: %v", c.shard, err)
		}
		want := readAll(t, d.query(t, d.conn(t, 0), sprintf(c.whole, "CAST(ts AS TEXT)")))
		got, _, err := d.mergeShards(t, sprintf(c.shard, "CAST(ts AS TEXT)"), c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.shard, err)
		}
		if c.p.Distinct || len(c.p.GroupBy) > 0 {
			sortRows(got)
			sortRows(want)
		}
		sameResult(t, c.shard, got, want, noFloats)
	}
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// sortRows orders rows by their shown values, for results SQL leaves
// unordered.
func sortRows(rows [][]driver.Value) {
	slices.SortFunc(rows, func(a, b []driver.Value) int {
		return strings.Compare(show([][]driver.Value{a}), show([][]driver.Value{b}))
	})
}
