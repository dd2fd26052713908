package merge

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"
)

// A driver may overwrite the bytes it handed out at its next Next (the
// fake scribbles over them first): every way of merging — concatenated,
// ordered, DISTINCT over either, grouped with MIN, MAX, SUM, distinct
// aggregates and HAVING on byte values — gives the same rows as over a
// driver that never reuses its buffers.
func TestEveryMergeGivesTheSameRowsWhenDriversReuseTheirBuffers(t *testing.T) {
	mk := func(reuse bool, seed int) *fakeRows {
		s := shard([]string{"b", "n", "k"}, []string{"BYTEA", "NUMERIC", "INT8"})
		for i := 0; i < 40; i++ {
			v := (i*7 + seed*13) % 23
			s.rows = append(s.rows, row([]byte(fmt.Sprintf("v%02d", v%9)), []byte(fmt.Sprintf("%d.%d", v, i%3)), int64(v%4)))
		}
		s.reuse = reuse
		return s
	}
	sorted := func(s *fakeRows) *fakeRows { // by n, as an ORDER BY n shard returns them
		rows := s.rows
		for i := range rows {
			for j := i + 1; j < len(rows); j++ {
				if c, _ := compareValues(rows[j][1], rows[i][1], clsNumber, clsNumber, TextBinary); c < 0 {
					rows[i], rows[j] = rows[j], rows[i]
				}
			}
		}
		return s
	}
	plans := map[string]Plan{
		"concat":   {Dialect: PostgreSQL, Visible: 3, Offset: 3, Limit: 50},
		"ordered":  {Dialect: PostgreSQL, Visible: 3, OrderBy: []Key{{Col: 1}, {Col: 0}}, Offset: 5, Limit: 60},
		"distinct": {Dialect: PostgreSQL, Visible: 1, Distinct: true, Limit: -1},
		"distinct ordered": {Dialect: PostgreSQL, Visible: 2, Distinct: true, OrderBy: []Key{{Col: 1}, {Col: 0}},
			Limit: -1},
		"grouped": {Dialect: PostgreSQL, Visible: 3, Grouped: true, GroupBy: []int{0}, GroupText: []Text{TextBinary},
			Aggs: []Agg{{Col: 1, Func: Max}, {Col: 2, Func: CountDistinct, Args: []int{1}}, {Col: 3, Func: SumDistinct, Args: []int{4}},
				{Col: 4, Func: Min}},
			Having:  &Cond{Op: Compare, Cmp: Gt, L: Operand{Col: 1}, R: Operand{Const: []byte("3"), IsConst: true}},
			OrderBy: []Key{{Col: 0}}, Limit: -1},
	}
	for name, p := range plans {
		var want string
		for _, reuse := range []bool{false, true} {
			shards := []*fakeRows{mk(reuse, 1), mk(reuse, 2), mk(reuse, 3)}
			if name == "grouped" { // b, MAX(n), COUNT(DISTINCT n), SUM(DISTINCT n), MIN(n)
				for _, s := range shards {
					s.cols, s.types = []string{"b", "max", "cnt", "sum", "n"}, []string{"BYTEA", "NUMERIC", "INT8", "NUMERIC", "NUMERIC"}
					for i, r := range s.rows {
						s.rows[i] = row(r[0], r[1], int64(1), r[1], r[1])
					}
				}
			}
			if len(p.OrderBy) > 0 && !p.Grouped {
				for _, s := range shards {
					sorted(s)
				}
			}
			got := show(run(t, p, shards...))
			if !reuse {
				want = got
			} else if got != want {
				t.Errorf("%s: with reused buffers\n%s\nwant\n%s", name, got, want)
			}
		}
	}
}

// Rows.Close may be called again, and Next after it neither reads a
// shard nor returns a row.
func TestCloseTwiceAndNextAfterCloseAreHarmless(t *testing.T) {
	a := ints([]string{"x"}, row(int64(1)), row(int64(2)))
	r, err := New(Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1}, []driver.Rows{a})
	if err != nil {
		t.Fatal(err)
	}
	dest := make([]driver.Value, 1)
	if err := r.Next(dest); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // the fake fails a second close of a shard
		t.Errorf("second Close: %v", err)
	}
	n := a.nexts
	if err := r.Next(dest); err == nil || a.nexts != n {
		t.Errorf("Next after Close: %v, %d reads", err, a.nexts-n)
	}
}

// OFFSET beyond the rows, and LIMIT with an offset near int64's end,
// return nothing and fail nothing.
func TestOffsetBeyondTheRowsGivesNothing(t *testing.T) {
	for _, p := range []Plan{
		{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Offset: 1 << 62, Limit: 1 << 62},
		{Dialect: PostgreSQL, Visible: 1, Offset: 3, Limit: -1},
		{Dialect: PostgreSQL, Visible: 1, Grouped: true, GroupBy: []int{0}, Offset: 9, Limit: 1},
		{Dialect: PostgreSQL, Visible: 1, Distinct: true, Offset: 2, Limit: 0},
	} {
		got, err := runErr(t, p, ints([]string{"x"}, row(int64(1))), ints([]string{"x"}, row(int64(2))))
		if err != nil || len(got) != 0 {
			t.Errorf("%+v: %v, %v", p, show(got), err)
		}
	}
}

// Physical tables whose columns are in different orders (one altered
// differently) return SELECT * in different orders: New refuses them
// rather than merge one shard's amount under another's id.
func TestShardsWithColumnsInDifferentOrdersAreRefused(t *testing.T) {
	a := ints([]string{"id", "amount"}, row(int64(1), int64(50)))
	b := ints([]string{"amount", "id"}, row(int64(70), int64(2)))
	_, err := New(Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 0}}, Limit: -1}, []driver.Rows{a, b})
	if !errors.Is(err, ErrPlan) {
		t.Fatalf("err %v, want ErrPlan", err)
	}
	// Names differing only in case (MySQL's, on one table) are the same column.
	c := ints([]string{"ID", "Amount"}, row(int64(3), int64(9)))
	if _, err := runErr(t, Plan{Dialect: PostgreSQL, Visible: 2, Limit: -1}, a, c); err != nil {
		t.Fatal(err)
	}
}
