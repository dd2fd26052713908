package merge

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// show writes rows with their Go types visible: 1, f1.5, "s", b"x", NULL.
func show(rows [][]driver.Value) string {
	var sb strings.Builder
	for i, r := range rows {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteByte('[')
		for j, v := range r {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(showValue(v))
		}
		sb.WriteByte(']')
	}
	return sb.String()
}

func showValue(v driver.Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return fmt.Sprintf("b%q", x)
	case string:
		return fmt.Sprintf("%q", x)
	case float64:
		return fmt.Sprintf("f%v", x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

func expect(t *testing.T, got [][]driver.Value, want string) {
	t.Helper()
	if s := show(got); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

var idv = []string{"id", "v"}

func TestOrderByMergesSortedShardsWithTiesInShardOrder(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 0}}, Limit: -1}
	got := run(t, p,
		ints(idv, row(int64(1), int64(10)), row(int64(4), int64(10)), row(int64(4), int64(11))),
		ints(idv, row(int64(2), int64(20)), row(int64(4), int64(20))),
		ints(idv),
		ints(idv, row(int64(0), int64(30)), row(int64(9), int64(30))))
	expect(t, got, "[0 30] [1 10] [2 20] [4 10] [4 11] [4 20] [9 30]")
}

func TestOrderByDescWithSecondKey(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 0, Desc: true, NullsFirst: true}, {Col: 1}}, Limit: -1}
	got := run(t, p,
		ints(idv, row(nil, int64(2)), row(int64(5), int64(1)), row(int64(3), int64(1))),
		ints(idv, row(nil, int64(1)), row(int64(5), int64(0))))
	expect(t, got, "[NULL 1] [NULL 2] [5 0] [5 1] [3 1]")
}

func TestNullPlacementFollowsTheKeyBothWays(t *testing.T) {
	for _, tc := range []struct {
		desc, first bool
		want        string
	}{
		{false, false, "[1] [2] [NULL] [NULL]"},
		{false, true, "[NULL] [NULL] [1] [2]"},
		{true, false, "[2] [1] [NULL] [NULL]"},
		{true, true, "[NULL] [NULL] [2] [1]"},
	} {
		a := []driver.Value{int64(1), nil}
		b := []driver.Value{int64(2), nil}
		if tc.desc != tc.first { // the shard's own order
			a = []driver.Value{nil, int64(1)}
			b = []driver.Value{nil, int64(2)}
		}
		if tc.desc {
			a[0], a[1] = a[1], a[0]
			b[0], b[1] = b[1], b[0]
			if tc.first {
				a = []driver.Value{nil, int64(1)}
				b = []driver.Value{nil, int64(2)}
			} else {
				a = []driver.Value{int64(1), nil}
				b = []driver.Value{int64(2), nil}
			}
		}
		p := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0, Desc: tc.desc, NullsFirst: tc.first}}, Limit: -1}
		got := run(t, p, ints([]string{"x"}, row(a[0]), row(a[1])), ints([]string{"x"}, row(b[0]), row(b[1])))
		expect(t, got, tc.want)
	}
}

func TestOffsetAndLimitAfterTheMerge(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Offset: 2, Limit: 3}
	a := ints([]string{"x"}, row(int64(1)), row(int64(3)), row(int64(5)), row(int64(7)), row(int64(9)))
	b := ints([]string{"x"}, row(int64(2)), row(int64(4)), row(int64(6)), row(int64(8)))
	got := run(t, p, a, b)
	expect(t, got, "[3] [4] [5]")
	// Reading stops at the limit: 5 went out of a, 4 was the last of b read.
	if a.nexts != 3 || b.nexts != 3 {
		t.Errorf("shards read %d and %d times, want 3 and 3", a.nexts, b.nexts)
	}
}

func TestLimitZeroReadsNothing(t *testing.T) {
	a := ints([]string{"x"}, row(int64(1)))
	got := run(t, Plan{Dialect: SQLite, Visible: 1, Limit: 0}, a)
	if len(got) != 0 || a.nexts != 0 {
		t.Errorf("got %v after %d reads", got, a.nexts)
	}
}

func TestConcatenationWithoutOrderBy(t *testing.T) {
	p := Plan{Dialect: SQLite, Visible: 1, Offset: 1, Limit: -1}
	got := run(t, p, ints([]string{"x"}, row(int64(3)), row(int64(1))), ints([]string{"x"}), ints([]string{"x"}, row(int64(2))))
	expect(t, got, "[1] [2]")
}

func TestHiddenColumnsAreNotReturned(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 1, Desc: true}}, Limit: -1}
	r, err := New(p, []driver.Rows{ints(idv, row(int64(1), int64(5))), ints(idv, row(int64(2), int64(9)))})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Columns(); len(c) != 1 || c[0] != "id" {
		t.Errorf("columns %v", c)
	}
	got, err := collect(t, r)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, "[2] [1]")
}

func TestMergeSurvivesDriversReusingBuffers(t *testing.T) {
	mk := func(vals ...string) *fakeRows {
		s := shard([]string{"b", "n"}, []string{"BYTEA", "NUMERIC"})
		for _, v := range vals {
			s.rows = append(s.rows, row([]byte(v), []byte(v[1:])))
		}
		s.reuse = true
		return s
	}
	p := Plan{Dialect: PostgreSQL, Visible: 2, OrderBy: []Key{{Col: 1}}, Limit: -1}
	got := run(t, p, mk("a1", "a5", "a9"), mk("b2", "b3", "b10"))
	expect(t, got, `[b"a1" b"1"] [b"b2" b"2"] [b"b3" b"3"] [b"a5" b"5"] [b"a9" b"9"] [b"b10" b"10"]`)

	// Grouping holds rows: it must copy them.
	g := Plan{Dialect: PostgreSQL, Visible: 2, Grouped: true, GroupBy: []int{0},
		Aggs: []Agg{{Col: 1, Func: Max}}, OrderBy: []Key{{Col: 0}}, Limit: -1}
	mk2 := func(vals ...string) *fakeRows {
		s := mk(vals...)
		for _, r := range s.rows {
			r[0] = r[0].([]byte)[:1]
		}
		return s
	}
	got = run(t, g, mk2("x1", "y2", "x30"), mk2("y7", "x4"))
	expect(t, got, `[b"x" b"30"] [b"y" b"7"]`)
}

func TestShardErrorMidStreamIsReturnedAndSticky(t *testing.T) {
	a := ints([]string{"x"}, row(int64(1)), row(int64(2)), row(int64(3)))
	a.errAt = 2
	b := ints([]string{"x"}, row(int64(1)))
	r, err := New(Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1}, []driver.Rows{a, b})
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(t, r)
	var se *ShardError
	if !errors.Is(err, errFake) || !errors.As(err, &se) || se.Shard != 0 {
		t.Fatalf("err %v", err)
	}
	expect(t, got, "[1]")
	if err2 := r.Next(make([]driver.Value, 1)); !errors.Is(err2, errFake) {
		t.Errorf("second Next: %v", err2)
	}
}

func TestEmptyShardsGiveNoRows(t *testing.T) {
	for _, p := range []Plan{
		{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1},
		{Dialect: PostgreSQL, Visible: 1, Limit: -1},
		{Dialect: PostgreSQL, Visible: 1, Grouped: true, GroupBy: []int{0}, Limit: -1},
	} {
		if got := run(t, p, ints([]string{"x"}), ints([]string{"x"})); len(got) != 0 {
			t.Errorf("%+v: %v", p, got)
		}
	}
}

func TestCloseClosesEveryShardAndJoinsErrors(t *testing.T) {
	a, b := ints([]string{"x"}), ints([]string{"x"})
	r, err := New(Plan{Dialect: SQLite, Visible: 1, Limit: -1}, []driver.Rows{a, b})
	if err != nil {
		t.Fatal(err)
	}
	b.closed = true // its Close now fails
	if err := r.Close(); err == nil || !a.closed {
		t.Errorf("close: %v, a closed %v", err, a.closed)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestOrderingTextIsRefusedUnlessTheCollationIsBinary(t *testing.T) {
	txt := func(vs ...string) *fakeRows {
		s := shard([]string{"s"}, []string{"TEXT"})
		for _, v := range vs {
			s.rows = append(s.rows, row(v))
		}
		return s
	}
	for _, tx := range []Text{TextRefused, TextEqualOnly} {
		_, err := runErr(t, Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0, Text: tx}}, Limit: -1}, txt("a"), txt("B"))
		if !errors.Is(err, ErrCollation) || !strings.Contains(err.Error(), "COLLATE") {
			t.Errorf("text %d: %v", tx, err)
		}
	}
	got := run(t, Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0, Text: TextBinary}}, Limit: -1}, txt("B", "a"), txt("C", "b"))
	expect(t, got, `["B"] ["C"] ["a"] ["b"]`)
}

func TestTypesWhoseOrderIsUnknownAreRefusedNamingTheColumn(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		typ  string
		plan func(p *Plan)
	}{
		{PostgreSQL, "INET", func(p *Plan) { p.OrderBy = []Key{{Col: 0, Text: TextBinary}} }},
		{PostgreSQL, "MONEY", func(p *Plan) { p.Grouped, p.Aggs = true, []Agg{{Col: 0, Func: Min, Text: TextBinary}} }},
		{PostgreSQL, "JSONB", func(p *Plan) { p.Distinct, p.DistinctText = true, []Text{TextBinary} }},
		{PostgreSQL, "_INT4", func(p *Plan) { p.Grouped, p.GroupBy, p.GroupText = true, []int{0}, []Text{TextBinary} }},
		{PostgreSQL, "16403", func(p *Plan) { p.OrderBy = []Key{{Col: 0, Text: TextBinary}} }}, // an enum's OID
		{MySQL, "JSON", func(p *Plan) { p.OrderBy = []Key{{Col: 0, Text: TextBinary}} }},
		{MySQL, "ENUM", func(p *Plan) { p.OrderBy = []Key{{Col: 0, Text: TextBinary}} }},
	} {
		p := Plan{Dialect: tc.d, Visible: 1, Limit: -1}
		tc.plan(&p)
		_, err := runErr(t, p, shard([]string{"c"}, []string{tc.typ}, row("9 days")), shard([]string{"c"}, []string{tc.typ}, row("10 days")))
		var ce *ColumnError
		if !errors.Is(err, ErrUnsupportedType) || !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.typ) || !strings.Contains(err.Error(), "(c,") {
			t.Errorf("%s: %v", tc.typ, err)
		}
	}
}

func TestNumbersCompareExactlyAcrossRepresentations(t *testing.T) {
	num := func(vs ...driver.Value) *fakeRows {
		s := shard([]string{"n"}, []string{"NUMERIC"})
		for _, v := range vs {
			s.rows = append(s.rows, row(v))
		}
		return s
	}
	p := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1}
	got := run(t, p,
		num("-Infinity", "-10.5", "-0", "9.75", "10", "NaN"),
		num("-2", "0.000", "9.7500000000000000001", "100", "Infinity"),
		num(int64(-3), int64(10), "99999999999999999999999"))
	expect(t, got, `["-Infinity"] ["-10.5"] [-3] ["-2"] ["-0"] ["0.000"] ["9.75"] ["9.7500000000000000001"] ["10"] [10] ["100"] ["99999999999999999999999"] ["Infinity"] ["NaN"]`)

	f := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0, Desc: true}}, Limit: -1}
	fl := func(vs ...float64) *fakeRows {
		s := shard([]string{"f"}, []string{"FLOAT8"})
		for i := len(vs) - 1; i >= 0; i-- {
			s.rows = append(s.rows, row(vs[i]))
		}
		return s
	}
	got = run(t, f, fl(math.Inf(-1), 0.1, math.NaN()), fl(-1, 1e300, math.Inf(1)))
	expect(t, got, "[fNaN] [f+Inf] [f1e+300] [f0.1] [f-1] [f-Inf]")
}

func TestMySQLTextProtocolNumbersCompareAsNumbers(t *testing.T) {
	mk := func(typ string, vs ...string) *fakeRows {
		s := shard([]string{"n"}, []string{typ})
		for _, v := range vs {
			s.rows = append(s.rows, row([]byte(v)))
		}
		return s
	}
	p := Plan{Dialect: MySQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1}
	expect(t, run(t, p, mk("BIGINT", "9", "100"), mk("BIGINT", "-5", "10")), `[b"-5"] [b"9"] [b"10"] [b"100"]`)
	expect(t, run(t, p, mk("DOUBLE", "9.5", "1e20"), mk("DOUBLE", "-1e-5", "10")), `[b"-1e-5"] [b"9.5"] [b"10"] [b"1e20"]`)
	expect(t, run(t, p, mk("UNSIGNED BIGINT", "9", "18446744073709551615"), mk("UNSIGNED BIGINT", "10")), `[b"9"] [b"10"] [b"18446744073709551615"]`)
}

func TestPadSpaceAndCharacterComparisons(t *testing.T) {
	mk := func(typ string, vs ...string) *fakeRows {
		s := shard([]string{"s"}, []string{typ})
		for _, v := range vs {
			s.rows = append(s.rows, row(v))
		}
		return s
	}
	// MySQL PAD SPACE: "a\t" < "a" (padded: "a " > "a\t").
	p := Plan{Dialect: MySQL, Visible: 1, OrderBy: []Key{{Col: 0, Text: TextPadSpace}}, Limit: -1}
	expect(t, run(t, p, mk("VARCHAR", "a\t", "a "), mk("VARCHAR", "a", "ab")), `["a\t"] ["a "] ["a"] ["ab"]`)
	d := Plan{Dialect: MySQL, Visible: 1, Distinct: true, DistinctText: []Text{TextPadSpace}, Limit: -1}
	expect(t, run(t, d, mk("VARCHAR", "a ", "b"), mk("VARCHAR", "a", "b  ")), `["a "] ["b"]`)
	// PostgreSQL character(n) ignores trailing spaces.
	b := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0, Text: TextBinary}}, Limit: -1}
	expect(t, run(t, b, mk("BPCHAR", "a  ", "a\t "), mk("BPCHAR", "a   ")), `["a  "] ["a   "] ["a\t "]`)
}

func TestSQLiteOrdersByStorageClass(t *testing.T) {
	mk := func(vs ...driver.Value) *fakeRows {
		s := shard([]string{"x"}, []string{""})
		for _, v := range vs {
			s.rows = append(s.rows, row(v))
		}
		return s
	}
	p := Plan{Dialect: SQLite, Visible: 1, OrderBy: []Key{{Col: 0, NullsFirst: true, Text: TextBinary}}, Limit: -1}
	got := run(t, p, mk(nil, int64(2), "10", []byte("a")), mk(1.5, int64(3), "9"), mk(int64(1), []byte("B")))
	expect(t, got, `[NULL] [1] [f1.5] [2] [3] ["10"] ["9"] [b"B"] [b"a"]`)
}

func TestSQLiteTimesAreRefusedBecauseSQLiteComparesTheirText(t *testing.T) {
	a := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	b := time.Date(2024, 1, 1, 10, 0, 0, 0, time.FixedZone("", 3600))
	p := Plan{Dialect: SQLite, Visible: 1, OrderBy: []Key{{Col: 0, Text: TextBinary}}, Limit: -1}
	mk := func(v driver.Value) *fakeRows { return shard([]string{"t"}, []string{"DATETIME"}, row(v)) }
	for _, pair := range [][2]driver.Value{{a, b}, {a.Add(time.Hour), a}, {a, "2024-01-01 10:00:00"}} {
		if _, err := runErr(t, p, mk(pair[0]), mk(pair[1])); !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("%v, %v: err %v", pair[0], pair[1], err)
		}
	}
	// A number in a DATETIME column is a number: it sorts before any text.
	expect(t, run(t, p, mk(a), mk(int64(1))), "[1] [2024-01-01T10:00:00Z]")
}

func TestPostgresTimestampInfinity(t *testing.T) {
	a := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	mk := func(vs ...driver.Value) *fakeRows {
		s := shard([]string{"t"}, []string{"TIMESTAMPTZ"})
		for _, v := range vs {
			s.rows = append(s.rows, row(v))
		}
		return s
	}
	p := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1}
	expect(t, run(t, p, mk("-infinity", a.Add(time.Hour)), mk(a, "infinity")), `["-infinity"] [2024-01-01T10:00:00Z] [2024-01-01T11:00:00Z] ["infinity"]`)
}

func TestDistinctWithoutGroupingKeepsFirstAndStreams(t *testing.T) {
	p := Plan{Dialect: PostgreSQL, Visible: 1, Distinct: true, OrderBy: []Key{{Col: 0}}, Limit: 3}
	num := func(vs ...string) *fakeRows {
		s := shard([]string{"n"}, []string{"NUMERIC"})
		for _, v := range vs {
			s.rows = append(s.rows, row(v))
		}
		return s
	}
	a, b := num("1.0", "2", "3", "4"), num("1.00", "2.0", "5")
	expect(t, run(t, p, a, b), `["1.0"] ["2"] ["3"]`)
	if a.nexts+b.nexts > 6 {
		t.Errorf("read %d rows for 3 distinct", a.nexts+b.nexts)
	}
	m := Plan{Dialect: PostgreSQL, Visible: 1, Distinct: true, Limit: -1, MaxGroups: 2}
	if _, err := runErr(t, m, num("1", "2"), num("3")); !errors.Is(err, ErrTooManyGroups) {
		t.Errorf("err %v", err)
	}
}

func TestPlansThatDoNotFitAreErrors(t *testing.T) {
	for _, p := range []Plan{
		{Dialect: PostgreSQL, Visible: 3, Limit: -1},
		{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 5}}, Limit: -1},
		{Dialect: PostgreSQL, Visible: 1, Aggs: []Agg{{Col: 0, Func: Count}}, Limit: -1},
		{Dialect: PostgreSQL, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 0, Func: Avg, Args: []int{1}}}, Limit: -1},
		{Dialect: 0, Visible: 1, Limit: -1},
		{Dialect: PostgreSQL, Visible: 1, Offset: -1, Limit: -1},
	} {
		_, err := New(p, []driver.Rows{ints(idv), ints(idv)})
		if !errors.Is(err, ErrPlan) {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if _, err := New(Plan{Dialect: PostgreSQL, Visible: 1, Limit: -1}, []driver.Rows{ints(idv), ints([]string{"x"})}); !errors.Is(err, ErrPlan) {
		t.Errorf("different columns: %v", err)
	}
}

func TestMySQLTimeOrdersAsADuration(t *testing.T) {
	mk := func(vs ...string) *fakeRows {
		s := shard([]string{"t"}, []string{"TIME"})
		for _, v := range vs {
			s.rows = append(s.rows, row([]byte(v)))
		}
		return s
	}
	p := Plan{Dialect: MySQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1}
	expect(t, run(t, p, mk("-100:00:00", "-00:00:00.5", "09:00:00"), mk("-01:00:00", "00:00:00", "100:00:00.000001")),
		`[b"-100:00:00"] [b"-01:00:00"] [b"-00:00:00.5"] [b"00:00:00"] [b"09:00:00"] [b"100:00:00.000001"]`)
	d := Plan{Dialect: MySQL, Visible: 1, Distinct: true, Limit: -1}
	expect(t, run(t, d, mk("01:00:00.000", "01:00:00"), mk("-00:00:00")), `[b"01:00:00.000"] [b"-00:00:00"]`)
}

func TestSQLiteNoCaseAndRTrimCollations(t *testing.T) {
	mk := func(vs ...string) *fakeRows {
		s := shard([]string{"s"}, []string{"TEXT"})
		for _, v := range vs {
			s.rows = append(s.rows, row(v))
		}
		return s
	}
	p := Plan{Dialect: SQLite, Visible: 1, OrderBy: []Key{{Col: 0, Text: TextNoCase}}, Limit: -1}
	expect(t, run(t, p, mk("a", "B", "é"), mk("A", "b", "Ž")), `["a"] ["A"] ["B"] ["b"] ["é"] ["Ž"]`)
	d := Plan{Dialect: SQLite, Visible: 1, Distinct: true, DistinctText: []Text{TextNoCase}, Limit: -1}
	expect(t, run(t, d, mk("a", "É"), mk("A", "é")), `["a"] ["É"] ["é"]`)
	r := Plan{Dialect: SQLite, Visible: 1, OrderBy: []Key{{Col: 0, Text: TextRTrim}}, Limit: -1}
	expect(t, run(t, r, mk("a ", "a\t"), mk("a"), mk("a  ")), `["a "] ["a"] ["a  "] ["a\t"]`)
}

func TestShardRowsOutOfThePlansOrderAreAnError(t *testing.T) {
	// The plan merges ascending, a shard sorted descending (ORDER BY x USING > read as ascending).
	p := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0}}, Limit: -1}
	_, err := runErr(t, p, ints([]string{"x"}, row(int64(3)), row(int64(2))), ints([]string{"x"}, row(int64(1))))
	if !errors.Is(err, ErrOrder) {
		t.Errorf("direction: %v", err)
	}
	// A case-insensitive collation's order ('a' < 'B') under a plan declaring it binary ('B' < 'a').
	txt := func(vs ...string) *fakeRows {
		s := shard([]string{"s"}, []string{"VARCHAR"})
		for _, v := range vs {
			s.rows = append(s.rows, row([]byte(v)))
		}
		s.reuse = true
		return s
	}
	b := Plan{Dialect: MySQL, Visible: 1, OrderBy: []Key{{Col: 0, Text: TextPadSpace}}, Limit: -1}
	if _, err := runErr(t, b, txt("a", "B", "c"), txt("b")); !errors.Is(err, ErrOrder) {
		t.Errorf("collation: %v", err)
	}
	// NULL placement: the shard puts NULL last, the plan first.
	n := Plan{Dialect: PostgreSQL, Visible: 1, OrderBy: []Key{{Col: 0, NullsFirst: true}}, Limit: -1}
	if _, err := runErr(t, n, ints([]string{"x"}, row(int64(1)), row(nil))); !errors.Is(err, ErrOrder) {
		t.Errorf("NULLs: %v", err)
	}
	// Ties on the keys are in order; reused buffers do not fool the check.
	expect(t, run(t, b, txt("a", "a", "b"), txt("a ", "c")), `[b"a"] [b"a"] [b"a "] [b"b"] [b"c"]`)
}
