package merge

import (
	"database/sql/driver"
	"errors"
	"testing"
)

func TestColumnTypesAreShardZerosVisibleOnes(t *testing.T) {
	a := shard([]string{"id", "amount", "hidden"}, []string{"INT8", "NUMERIC", "INT8"})
	a.prec = map[int][2]int64{1: {12, 3}}
	b := shard([]string{"id", "amount", "hidden"}, []string{"INT8", "NUMERIC", "INT8"})
	r, err := New(Plan{Dialect: PostgreSQL, Visible: 2, Limit: -1}, []driver.Rows{a, b})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if c := r.Columns(); len(c) != 2 || c[1] != "amount" {
		t.Errorf("columns %v", c)
	}
	if n := r.ColumnTypeDatabaseTypeName(1); n != "NUMERIC" {
		t.Errorf("type %q", n)
	}
	if p, s, ok := r.ColumnTypePrecisionScale(1); !ok || p != 12 || s != 3 {
		t.Errorf("precision %d scale %d %v", p, s, ok)
	}
	if _, _, ok := r.ColumnTypePrecisionScale(0); ok {
		t.Error("precision of an integer")
	}
	if _, ok := r.ColumnTypeLength(0); ok {
		t.Error("length the shard does not report")
	}
}

func TestNonAggregateColumnsTakeTheGroupsFirstRow(t *testing.T) {
	// MySQL: SELECT k, name, COUNT(*) ... GROUP BY k
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"k", "name", "c"}, []string{"BIGINT", "VARCHAR", "BIGINT"}, rows...)
	}
	p := Plan{Dialect: MySQL, Visible: 3, Grouped: true, GroupBy: []int{0}, Aggs: []Agg{{Col: 2, Func: Count}}, Limit: -1}
	got := run(t, p, mk(row(int64(2), []byte("x"), int64(1)), row(int64(1), []byte("y"), int64(1))), mk(row(int64(2), []byte("z"), int64(4))))
	expect(t, got, `[1 b"y" 1] [2 b"x" 5]`)
}

func TestHavingConstantsAreReadAsTheirColumn(t *testing.T) {
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"g", "s"}, []string{"INT8", "NUMERIC"}, rows...)
	}
	// HAVING SUM(x) >= '2.50' (a string argument bound to a numeric)
	p := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0}, Aggs: []Agg{{Col: 1, Func: Sum}},
		Having:  &Cond{Op: Compare, Cmp: Ge, L: Operand{Col: 1}, R: Operand{IsConst: true, Const: "2.50"}},
		OrderBy: []Key{{Col: 0}}, Limit: -1}
	got := run(t, p, mk(row(int64(1), "1.25"), row(int64(2), "10")), mk(row(int64(1), "1.25"), row(int64(3), "2.4")))
	expect(t, got, `[1 "2.50"] [2 "10"]`)
	p.Having.R.Const = "abc"
	if _, err := runErr(t, p, mk(row(int64(1), "1"))); err == nil {
		t.Error("compared a number with text")
	}
}

func TestCountDistinctOfSeveralColumnsSkipsTuplesWithANull(t *testing.T) {
	mk := func(rows ...[]driver.Value) *fakeRows {
		return shard([]string{"c", "a", "b"}, []string{"INT8", "INT8", "INT8"}, rows...)
	}
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: CountDistinct, Args: []int{1, 2}}}, Limit: -1}
	got := run(t, p,
		mk(row(int64(1), int64(1), int64(1)), row(int64(1), int64(1), nil), row(int64(1), int64(1), int64(2))),
		mk(row(int64(1), int64(1), int64(1)), row(int64(1), nil, nil), row(int64(1), int64(2), int64(1))))
	expect(t, got, "[3]")
}

func TestSQLiteTextUnderARefusedCollationFailsWhenMet(t *testing.T) {
	mk := func(vs ...driver.Value) *fakeRows {
		s := shard([]string{"x"}, []string{""})
		for _, v := range vs {
			s.rows = append(s.rows, row(v))
		}
		return s
	}
	p := Plan{Dialect: SQLite, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1}
	expect(t, run(t, p, mk(int64(1), int64(3)), mk(int64(2))), "[1] [2] [3]")
	if _, err := runErr(t, p, mk("a"), mk("B")); !errors.Is(err, ErrCollation) {
		t.Errorf("err %v", err)
	}
}

func TestNextAfterCloseIsEOF(t *testing.T) {
	r, err := New(Plan{Dialect: SQLite, Visible: 1, Limit: -1}, []driver.Rows{ints([]string{"x"}, row(int64(1)))})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := r.Next(make([]driver.Value, 1)); err == nil {
		t.Error("a row after Close")
	}
}
