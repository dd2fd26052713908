package merge

import (
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
)

// sales is a shard of (region TEXT, qty INT8, amount NUMERIC) rows.
func sales(rows ...[]driver.Value) *fakeRows {
	return shard([]string{"region", "qty", "amount"}, []string{"TEXT", "INT8", "NUMERIC"}, rows...)
}

func TestGroupByMergesGroupsSplitAcrossShards(t *testing.T) {
	// SELECT region, COUNT(*), SUM(amount) ... GROUP BY region ORDER BY region
	p := Plan{Dialect: PostgreSQL, Visible: 3, Grouped: true, GroupBy: []int{0}, GroupText: []Text{TextBinary},
		Aggs:    []Agg{{Col: 1, Func: Count}, {Col: 2, Func: Sum}},
		OrderBy: []Key{{Col: 0, Text: TextBinary}}, Limit: -1}
	got := run(t, p,
		sales(row("east", int64(2), "10.50"), row("west", int64(1), "1")),
		sales(row("east", int64(3), "0.005"), row("north", int64(1), nil)),
		sales(row("west", int64(4), "-1.25")))
	expect(t, got, `["east" 5 "10.505"] ["north" 1 NULL] ["west" 5 "-0.25"]`)
}

func TestGroupedRowsAreSortedByAggregatesWithLimit(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0}, GroupText: []Text{TextEqualOnly},
		Aggs:    []Agg{{Col: 1, Func: Count}},
		OrderBy: []Key{{Col: 1, Desc: true}}, Offset: 1, Limit: 1}
	got := run(t, p,
		sales(row("a", int64(1)), row("b", int64(5))),
		sales(row("c", int64(3)), row("a", int64(1))))
	expect(t, got, `["c" 3]`)
}

func TestGroupKeysEqualAsTheDatabaseComparesThem(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0},
		Aggs: []Agg{{Col: 1, Func: Count}}, OrderBy: []Key{{Col: 0}}, Limit: -1}
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"n", "c"}, []string{"NUMERIC", "INT8"}, rows...)
	}
	got := run(t, p,
		mk(row("1.0", int64(1)), row("-0", int64(1)), row(nil, int64(1)), row("NaN", int64(1))),
		mk(row("1.00", int64(2)), row("0.000", int64(2)), row(nil, int64(2)), row("NaN", int64(2))))
	expect(t, got, `["-0" 3] ["1.0" 3] ["NaN" 3] [NULL 3]`)
}

func TestAggregateWithoutGroupByReturnsOneRowEvenWithoutInput(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 3, Grouped: true,
		Aggs: []Agg{{Col: 0, Func: Count}, {Col: 1, Func: Sum}, {Col: 2, Func: Max}}, Limit: -1}
	cols := []string{"count", "sum", "max"}
	types := []string{"INT8", "NUMERIC", "INT8"}
	expect(t, run(t, p, shard(cols, types), shard(cols, types)), "[0 NULL NULL]")
	expect(t, run(t, p, shard(cols, types, row(int64(0), nil, nil)), shard(cols, types, row(int64(2), "5", int64(7)))), `[2 "5" 7]`)

	// A visible column that is not an aggregate has no value to take.
	q := Plan{Dialect: MySQL, Visible: 2, Grouped: true, Aggs: []Agg{{Col: 1, Func: Count}}, Limit: -1}
	if _, err := runErr(t, q, shard([]string{"x", "c"}, []string{"BIGINT", "BIGINT"})); !errors.Is(err, ErrPlan) {
		t.Errorf("err %v", err)
	}
}

func TestHavingUsesThreeValuedLogicOnMergedGroups(t *testing.T) {
	// GROUP BY region HAVING SUM(amount) > 5 OR NOT (COUNT(*) < 3)
	// evaluated on merged groups, never per shard.
	gt := &Cond{Op: Compare, Cmp: Gt, L: Operand{Col: 2}, R: Operand{IsConst: true, Const: int64(5)}}
	lt := &Cond{Op: Compare, Cmp: Lt, L: Operand{Col: 1}, R: Operand{IsConst: true, Const: int64(3)}}
	p := Plan{Dialect: PostgreSQL, Visible: 3, Grouped: true, GroupBy: []int{0}, GroupText: []Text{TextBinary},
		Aggs:    []Agg{{Col: 1, Func: Count}, {Col: 2, Func: Sum}},
		Having:  &Cond{Op: Or, Kids: []*Cond{gt, {Op: Not, Kids: []*Cond{lt}}}},
		OrderBy: []Key{{Col: 0, Text: TextBinary}}, Limit: -1}
	got := run(t, p,
		sales(row("a", int64(1), "3"), row("b", int64(1), nil), row("c", int64(1), nil), row("d", int64(2), "1")),
		sales(row("a", int64(1), "3"), row("b", int64(2), nil), row("c", int64(1), "1")))
	// a: sum 6 > 5. b: sum NULL (unknown) OR NOT(3<3) = true. c: 2 rows,
	// sum 1: false OR false. d: false.
	expect(t, got, `["a" 2 "6"] ["b" 3 NULL]`)

	isNull := Plan{Dialect: PostgreSQL, Visible: 3, Grouped: true, GroupBy: []int{0}, GroupText: []Text{TextBinary},
		Aggs:   []Agg{{Col: 1, Func: Count}, {Col: 2, Func: Sum}},
		Having: &Cond{Op: And, Kids: []*Cond{{Op: IsNull, L: Operand{Col: 2}}, {Op: Not, Kids: []*Cond{gt}}}}, Limit: -1}
	// NOT (NULL > 5) is unknown: the AND is unknown, the group dropped.
	if got := run(t, isNull, sales(row("b", int64(1), nil))); len(got) != 0 {
		t.Errorf("got %s", show(got))
	}
}

func TestHavingOnTextNeedsItsCollation(t *testing.T) {
	eq := &Cond{Op: Compare, Cmp: Eq, L: Operand{Col: 0}, R: Operand{IsConst: true, Const: "a"}, Text: TextEqualOnly}
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0}, GroupText: []Text{TextEqualOnly},
		Aggs: []Agg{{Col: 1, Func: Count}}, Having: eq, Limit: -1}
	expect(t, run(t, p, sales(row("a", int64(1)), row("b", int64(1))), sales(row("a", int64(1)))), `["a" 2]`)
	lt := *eq
	lt.Cmp = Lt
	p.Having = &lt
	if _, err := runErr(t, p, sales(row("a", int64(1)))); !errors.Is(err, ErrCollation) {
		t.Errorf("err %v", err)
	}
}

func TestMySQLGroupsComeInGroupByOrderWithoutOrderBy(t *testing.T) {
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"k", "c"}, []string{"BIGINT", "BIGINT"}, rows...)
	}
	p := Plan{Dialect: MySQL, Visible: 2, Grouped: true, GroupBy: []int{0}, Aggs: []Agg{{Col: 1, Func: Count}}, Limit: -1}
	got := run(t, p, mk(row([]byte("10"), []byte("1")), row([]byte("9"), []byte("1"))), mk(row(nil, []byte("2")), row([]byte("10"), []byte("4"))))
	expect(t, got, `[NULL b"2"] [b"9" b"1"] [b"10" b"5"]`)
}

func TestTooManyGroupsFails(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0}, Aggs: []Agg{{Col: 1, Func: Count}}, MaxGroups: 2, Limit: -1}
	_, err := runErr(t, p, ints(idv, row(int64(1), int64(1)), row(int64(2), int64(1))), ints(idv, row(int64(1), int64(1))))
	if err != nil {
		t.Fatalf("two groups: %v", err)
	}
	_, err = runErr(t, p, ints(idv, row(int64(1), int64(1)), row(int64(2), int64(1))), ints(idv, row(int64(3), int64(1))))
	if !errors.Is(err, ErrTooManyGroups) {
		t.Errorf("err %v", err)
	}
}

func TestDistinctAfterGrouping(t *testing.T) {
	// SELECT DISTINCT COUNT(*) FROM t GROUP BY region
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, GroupBy: []int{1}, GroupText: []Text{TextBinary},
		Aggs: []Agg{{Col: 0, Func: Count}}, Distinct: true, OrderBy: []Key{{Col: 0}}, Limit: -1}
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"count", "region"}, []string{"INT8", "TEXT"}, rows...)
	}
	got := run(t, p, mk(row(int64(1), "a"), row(int64(2), "b")), mk(row(int64(1), "b"), row(int64(3), "c"), row(int64(1), "d")))
	expect(t, got, "[1] [3]")
}

func TestCountDistinctMergesDistinctValuesAcrossShards(t *testing.T) {
	// SELECT g, COUNT(DISTINCT v): shards return (g, count, v) per distinct v.
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0},
		Aggs:    []Agg{{Col: 1, Func: CountDistinct, Args: []int{2}}},
		OrderBy: []Key{{Col: 0}}, Limit: -1}
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"g", "count", "v"}, []string{"INT8", "INT8", "NUMERIC"}, rows...)
	}
	got := run(t, p,
		mk(row(int64(1), int64(1), "1.0"), row(int64(1), int64(1), "2"), row(int64(2), int64(0), nil)),
		mk(row(int64(1), int64(1), "1.00"), row(int64(1), int64(1), "3"), row(int64(2), int64(1), "7")))
	expect(t, got, "[1 3] [2 1]")
}

func TestSumAndAvgOfDistinctValues(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true,
		Aggs: []Agg{{Col: 0, Func: SumDistinct, Args: []int{2}}, {Col: 1, Func: AvgDistinct, Args: []int{2}}}, Limit: -1}
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"sum", "avg", "v"}, []string{"INT8", "NUMERIC", "INT4"}, rows...)
	}
	got := run(t, p,
		mk(row(int64(3), "1.5", int64(1)), row(int64(3), "1.5", int64(2))),
		mk(row(int64(7), "3.5", int64(2)), row(int64(7), "3.5", int64(5)), row(nil, nil, nil)))
	expect(t, got, `[8 "2.6666666666666667"]`)
}

func TestMinMaxOfTextFollowTheCollationPolicy(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true,
		Aggs: []Agg{{Col: 0, Func: Min, Text: TextBinary}, {Col: 1, Func: Max, Text: TextBinary}}, Limit: -1}
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"min", "max"}, []string{"TEXT", "TEXT"}, rows...)
	}
	expect(t, run(t, p, mk(row("b", "b")), mk(row("B", "a")), mk(row(nil, nil))), `["B" "b"]`)
	p.Aggs[0].Text = TextEqualOnly
	if _, err := runErr(t, p, mk(row("b", "b"))); !errors.Is(err, ErrCollation) {
		t.Errorf("err %v", err)
	}
}

func TestCountsAndSumsOverflowAreErrors(t *testing.T) {
	p := Plan{Dialect: SQLite, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: Sum}}, Limit: -1}
	mk := func(v driver.Value) *fakeRows { return shard([]string{"s"}, []string{""}, row(v)) }
	_, err := runErr(t, p, mk(int64(1<<62)), mk(int64(1<<62)))
	if !errors.Is(err, ErrOverflow) {
		t.Errorf("sum: %v", err)
	}
	p.Aggs[0].Func = Count
	_, err = runErr(t, p, mk(int64(1<<62)), mk(int64(1<<62)))
	if !errors.Is(err, ErrOverflow) {
		t.Errorf("count: %v", err)
	}
}

func TestSumKeepsTheDriversGoTypes(t *testing.T) {
	p := Plan{Dialect: MySQL, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: Sum}}, Limit: -1}
	mk := func(typ string, v driver.Value) *fakeRows { return shard([]string{"s"}, []string{typ}, row(v)) }
	expect(t, run(t, p, mk("DECIMAL", []byte("1.10")), mk("DECIMAL", []byte("99999999999999999999.005"))), `[b"100000000000000000000.105"]`)
	expect(t, run(t, p, mk("DOUBLE", 0.5), mk("DOUBLE", 0.25)), `[f0.75]`)
	expect(t, run(t, p, mk("DOUBLE", []byte("0.5")), mk("DOUBLE", []byte("1e20"))), `[b"1e20"]`)
	p.Dialect = PostgreSQL
	expect(t, run(t, p, mk("NUMERIC", "NaN"), mk("NUMERIC", "1")), `["NaN"]`)
	expect(t, run(t, p, mk("NUMERIC", "Infinity"), mk("NUMERIC", "-Infinity")), `["NaN"]`)
	expect(t, run(t, p, mk("INT8", int64(-5)), mk("INT8", int64(5))), `[0]`)
}

func TestTextSumsAreRefused(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: Sum}}, Limit: -1}
	_, err := runErr(t, p, shard([]string{"s"}, []string{"INTERVAL"}, row("1 day")))
	if !errors.Is(err, ErrUnsupportedType) || !strings.Contains(err.Error(), "INTERVAL") {
		t.Errorf("err %v", err)
	}
}

func TestSQLiteSumIsAnIntegerUnlessAFloatWasAdded(t *testing.T) {
	p := Plan{Dialect: SQLite, Visible: 2, Grouped: true, GroupBy: []int{0}, Aggs: []Agg{{Col: 1, Func: Sum}}, OrderBy: []Key{{Col: 0}}, Limit: -1}
	mk := func(rows ...[]driver.Value) *fakeRows { return shard([]string{"g", "s"}, []string{"", ""}, rows...) }
	got := run(t, p, mk(row(int64(1), 1.5), row(int64(2), int64(3))), mk(row(int64(1), int64(1)), row(int64(2), int64(4))))
	expect(t, got, "[1 f2.5] [2 7]")
}
