package gormplugin

import (
	"testing"

	"github.com/shardkey/shardkey/internal/merge"
)

// TestFragmentReaderRecognisesWhatMergesAndNothingElse: the reader of
// Select/Order/Group/Having fragments sees columns, aliases and the five
// aggregates, and flags what must not pass through a merge.
func TestFragmentReaderRecognisesWhatMergesAndNothingElse(t *testing.T) {
	for _, c := range []struct {
		in            string
		col, alias    string
		agg, distinct bool
		problem       bool
	}{
		{in: "amount", col: "amount"},
		{in: `"orders"."Amount" AS "A"`, col: "amount", alias: "a"},
		{in: "orders.amount total", col: "amount", alias: "total"},
		{in: "other.amount"},
		{in: "COUNT(DISTINCT(`user_id`))", agg: true, distinct: true},
		{in: "count( * ) as n", agg: true, alias: "n"},
		{in: "sum(amount) + 1", problem: true},
		{in: "coalesce(max(qty), 0)", problem: true},
		{in: "row_number() over (order by id)", problem: true},
		{in: "(select 1)", problem: true},
		{in: "amount % 3 AS m", alias: "m"},
		{in: "CASE WHEN amount > 1 THEN 'a''b' END", alias: ""},
		{in: "count(*) filter (where qty > 1)", problem: true},
	} {
		ts, err := tokenize(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		expr, alias := cutAlias(ts)
		col, _ := colRef(expr, "orders")
		a, isAgg := readAgg(c.in, expr, "orders")
		problem := !isAgg && opaqueProblem(expr) != ""
		if col != c.col || alias != c.alias || isAgg != c.agg || a.distinct != c.distinct || problem != c.problem {
			t.Errorf("%q: col %q alias %q agg %v distinct %v problem %v", c.in, col, alias, isAgg, a.distinct, problem)
		}
	}
	for _, bad := range []string{"a -- comment", "a /* c */", "a = @name", "a = $1", "'open", `"open`, `'a\'b'`} {
		if _, err := tokenize(bad); err == nil {
			t.Errorf("%q: read, want refused", bad)
		}
	}
}

// TestSourceKeepsTheTextAsWritten: hidden columns are the user's own text.
func TestSourceKeepsTheTextAsWritten(t *testing.T) {
	for _, s := range []string{`"amount"`, "`a b`", "'it''s'", "sum( x )", "[col]"} {
		ts, err := tokenize(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := source(s, ts); got != s {
			t.Errorf("source(%q) = %q", s, got)
		}
	}
}

// TestExplicitCollationsTheMergeImplements: only collations whose order the
// engine reproduces allow a text key.
func TestExplicitCollationsTheMergeImplements(t *testing.T) {
	for _, c := range []struct {
		d    merge.Dialect
		name string
		want merge.Text
		ok   bool
	}{
		{merge.PostgreSQL, "C", merge.TextBinary, true},
		{merge.PostgreSQL, "POSIX", merge.TextBinary, true},
		{merge.PostgreSQL, "en-x-icu", 0, false},
		{merge.MySQL, "utf8mb4_bin", merge.TextPadSpace, true},
		{merge.MySQL, "utf8mb4_nopad_bin", merge.TextBinary, true},
		{merge.MySQL, "utf8mb4_0900_bin", merge.TextBinary, true},
		{merge.MySQL, "binary", merge.TextBinary, true},
		{merge.MySQL, "utf8mb4_general_ci", 0, false},
		{merge.MySQL, "latin1_bin", 0, false}, // cp1252 bytes, not the UTF-8 the driver returns
		{merge.MySQL, "utf8mb3_bin", merge.TextPadSpace, true},
		{merge.SQLite, "BINARY", merge.TextBinary, true},
		{merge.SQLite, "NOCASE", merge.TextNoCase, true},
		{merge.SQLite, "RTRIM", merge.TextRTrim, true},
	} {
		got, ok := collateText(c.d, c.name)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%v %s: %v %v", c.d, c.name, got, ok)
		}
	}
}

// FuzzFragmentReader: no fragment makes the reader panic, and source
// gives back the text of every token range it read.
func FuzzFragmentReader(f *testing.F) {
	for _, s := range []string{"amount", `"a"."b" AS c`, "count(distinct(x))", "'it''s' x", "sum(a*2) - min(b)", "a, b desc nulls first", "((", "a > ? AND (count(*) BETWEEN 1 AND ?) OR a NOT IN ?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := tokenize(s)
		if err != nil {
			return
		}
		for _, part := range splitTop(ts) {
			_ = source(s, part)
			expr, _ := cutAlias(part)
			_, _ = colRef(expr, "t")
			_, _ = readAgg(s, expr, "t")
			_ = opaqueProblem(expr)
			_ = normTokens(expr)
			_ = arithmetic(expr)
			ep := &exprParser{tokenCursor{rp: fuzzPlan(), src: s, ts: expr}}
			_, _ = ep.sum()
		}
		rp := fuzzPlan()
		rp.groupBy, rp.groupNames, rp.items = []pcol{0}, []string{"a"}, []selItem{{col: "a"}}
		cp := &condParser{tokenCursor{rp: rp, src: s, ts: ts, vars: []any{1, []int{1, 2}, "x"}}}
		_, _ = cp.or()
	})
}

// fuzzPlan is an empty plan as planRead starts one.
func fuzzPlan() *readPlan {
	return &readPlan{logic: "t", hiddenAt: map[string]int{}, colNames: map[pcol]string{}, limit: -1,
		mayBeColumn: func(string) bool { return true }}
}
