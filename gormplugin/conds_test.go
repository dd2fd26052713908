package gormplugin

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// litScope is a scope whose user_id is an integer column and code a text
// column, on the given dialect.
func litScope(dialect string) condScope {
	return condScope{owner: "orders", dialect: dialect, kindOf: func(c string) litKind {
		switch c {
		case "user_id", "id":
			return litInt
		case "code":
			return litText
		}
		return litNone
	}}
}

// TestWhereLiteralsRouteOnlyWhenReadExactly: a template with literal
// values narrows the targets only where the scanner reads it exactly;
// anything else narrows nothing (the statement then needs its sharding
// key elsewhere, or WithScatter), never a wrong table.
func TestWhereLiteralsRouteOnlyWhenReadExactly(t *testing.T) {
	for _, tc := range []struct {
		sql     string
		dialect string
		want    string // the conditions read, "" for none
	}{
		{"user_id = 101", "", "[user_id = 101]"},
		{"user_id=101", "", "[user_id = 101]"},
		{"user_id = 1010", "", "[user_id = 1010]"},
		{"user_id = -7", "", "[user_id = -7]"},
		{"user_id = - 7", "", "[user_id = -7]"},
		{"user_id = 0101", "", "[user_id = 101]"},
		{"user_id IN (1, 2)", "", "[user_id IN (1, 2)]"},
		{"user_id in (1,-2)", "", "[user_id IN (1, -2)]"},
		{"orders.user_id = 101", "", "[user_id = 101]"},
		{`"orders"."user_id" = 101`, "postgres", "[user_id = 101]"},
		{"`orders`.`user_id` = 101", "mysql", "[user_id = 101]"},
		{"`USER_ID` = 101", "mysql", "[user_id = 101]"},
		{"user_id = 101 AND id > 5", "", "[user_id = 101 id > 5]"},
		{"(user_id = 101)", "", "[user_id = 101]"},
		{"(user_id = 101 AND id = 3)", "", "[user_id = 101 id = 3]"},
		{"(a = 1 OR b = 2) AND user_id = 101", "", "[user_id = 101]"},
		{"a BETWEEN 1 AND 5 AND user_id = 3", "", "[user_id = 3]"},
		{"user_id BETWEEN 1 AND 5", "", "[user_id BETWEEN 1 AND 5]"},
		{"orders.user_id between -3 and 4 AND id = 2", "", "[user_id BETWEEN -3 AND 4 id = 2]"},
		{"user_id NOT BETWEEN 1 AND 5", "", ""},
		{"user_id BETWEEN 1 AND 5 + 1", "", ""},
		{"user_id BETWEEN 1 AND 5 AND", "", ""},
		{"user_id BETWEEN 1 OR 5", "", ""},
		{"code BETWEEN 'a' AND 'b'", "", ""},
		{"items.user_id BETWEEN 1 AND 5", "", ""},
		{"code = '101'", "", "[code = 101]"},
		{"code = 'it''s'", "", "[code = it's]"},
		{"items.user_id = 101", "", ""},
		{"user_id = 101 OR user_id = 102", "", ""},
		{"user_id = 101 or id = 5", "", ""},
		{"user_id = 101 XOR id = 5", "mysql", ""},
		{"a = 1 || b = 2 AND user_id = 101", "mysql", ""},
		{"user_id = 101 -- AND x", "", ""},
		{"user_id = 101 /* c */", "", ""},
		{"user_id = 101 /*!OR 1=1*/", "mysql", ""},
		{"user_id = 101 # c", "mysql", ""},
		{"note = 'user_id = 5'", "", ""},
		{"note = 'x\\' AND user_id = 5 AND y = '", "mysql", ""},
		{"note = E'x\\' AND user_id = 5 AND y = '", "postgres", ""},
		{"note = $$ AND user_id = 5 $$", "postgres", ""},
		{`"user_id" = 101`, "mysql", ""},
		{`"User_ID" = 101`, "postgres", ""},
		{"user_id = '101'", "", ""},
		{"code = 101", "", ""},
		{"user_id = 101.0", "", ""},
		{"user_id = 1e2", "", ""},
		{"user_id = 0x65", "", ""},
		{"user_id = 101abc", "mysql", ""},
		{"user_id = 99999999999999999999", "", ""},
		{"user_id <> 101", "", ""},
		{"user_id != 101", "", ""},
		{"user_id <=> 101", "mysql", ""},
		{"user_id NOT IN (1, 2)", "", ""},
		{"NOT user_id = 101", "", ""},
		{"user_id = 101 IS TRUE", "", ""},
		{"user_id = 101::bigint", "postgres", ""},
		{"user_id = 5 - 3", "", ""},
		{"user_id = --5", "mysql", ""},
		{"CASE WHEN a = 1 AND user_id = 5 THEN 1 END = 1", "", ""},
		{"user_id = 101 AND", "", ""},
		{"user_id = 101; DELETE FROM orders", "", ""},
		{"code > 'a'", "", ""},
		{"other = 101", "", ""},
		{"user_id = 101 COLLATE x", "", ""},
	} {
		got := litScope(tc.dialect).read(tc.sql, nil)
		s := ""
		if got != nil {
			s = fmt.Sprint(got)
		}
		if s != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.dialect, tc.sql, s, tc.want)
		}
	}
}

// TestWherePlaceholderTemplatesRoute: placeholders are read as GORM binds
// them, in order, wherever the ? is; one inside quotes is not read.
func TestWherePlaceholderTemplatesRoute(t *testing.T) {
	sc := litScope("postgres")
	for _, tc := range []struct {
		sql  string
		vars []any
		want string
	}{
		{"user_id = ?", []any{5}, "[user_id = 5]"},
		{"user_id IN ?", []any{[]int{1, 2}}, "[user_id IN (1, 2)]"},
		{"user_id IN (?)", []any{[]int{3}}, "[user_id IN (3)]"},
		{"user_id IN (?, ?)", []any{1, 2}, "[user_id IN (1, 2)]"},
		{"user_id = ? AND id = 7", []any{5}, "[user_id = 5 id = 7]"},
		{"user_id BETWEEN ? AND ?", []any{3, 9}, "[user_id BETWEEN 3 AND 9]"},
		{"user_id BETWEEN ? AND ? AND id = ?", []any{3, 9, 1}, "[user_id BETWEEN 3 AND 9 id = 1]"},
		{"user_id BETWEEN ? AND ?", []any{3, []int{9}}, ""},
		{"note = '?' AND user_id = ?", []any{"x", 5}, ""},
		{"user_id = ?", []any{gorm.Expr("user_id")}, ""},
		{"user_id = ?", []any{clause.Column{Name: "id"}}, ""},
		{"user_id IN ?", []any{[]any{1, gorm.Expr("2")}}, ""},
		{"user_id = ?", []any{[]int{1}}, ""},
		{"user_id = ? AND id = ?", []any{5}, ""},
	} {
		got := scopeCondsExpr(sc, clause.Expr{SQL: tc.sql, Vars: tc.vars})
		s := ""
		if got != nil {
			s = fmt.Sprint(got)
		}
		if s != tc.want {
			t.Errorf("%q %v: %s, want %s", tc.sql, tc.vars, s, tc.want)
		}
	}
}

// TestWhereNamedArgumentsRoute: @name is read with the value GORM gives
// it from sql.Named, a map or a struct; an unknown name is not a value.
func TestWhereNamedArgumentsRoute(t *testing.T) {
	sc := litScope("mysql")
	type byStruct struct{ UID int }
	for _, tc := range []struct {
		sql  string
		vars []any
		want string
	}{
		{"user_id = @uid", []any{sql.Named("uid", 101)}, "[user_id = 101]"},
		{"user_id=@uid", []any{sql.Named("uid", 101)}, "[user_id = 101]"},
		{"user_id = @uid", []any{map[string]any{"uid": 7}}, "[user_id = 7]"},
		{"user_id = @UID AND id = @id", []any{byStruct{UID: 3}, sql.Named("id", 9)}, "[user_id = 3 id = 9]"},
		{"user_id IN (@a, @b)", []any{map[string]any{"a": 1, "b": 2}}, "[user_id IN (1, 2)]"},
		{"user_id IN @ids", []any{sql.Named("ids", []int64{4, 5})}, "[user_id IN (4, 5)]"},
		{"user_id = @other", []any{sql.Named("uid", 101)}, ""},
		{"user_id = @uid OR id = 1", []any{sql.Named("uid", 101)}, ""},
		{"note = '@uid' AND user_id = 1", []any{sql.Named("uid", 101)}, ""},
		{"user_id = @uid AND id = ?", []any{sql.Named("uid", 101), 3}, ""},
		// A time from a map or struct escapes the time-location check.
		{"user_id = 1 AND id = @t", []any{map[string]any{"t": time.Unix(0, 0)}}, ""},
	} {
		got := scopeCondsNamed(sc, clause.NamedExpr{SQL: tc.sql, Vars: tc.vars})
		s := ""
		if got != nil {
			s = fmt.Sprint(got)
		}
		if s != tc.want {
			t.Errorf("%q %v: %s, want %s", tc.sql, tc.vars, s, tc.want)
		}
	}
}

// TestTemplatesThatReshapeTheWhereClauseNarrowNothing: GORM puts a
// template in parentheses only when its text holds " AND " or " OR ";
// one that reshapes the WHERE clause around it (an OR spelled otherwise,
// a comment, a parenthesis closed outside it) makes the whole clause
// narrow nothing.
func TestTemplatesThatReshapeTheWhereClauseNarrowNothing(t *testing.T) {
	for _, tc := range []struct {
		sql     string
		dialect string
		tainted bool
	}{
		{"user_id = 1", "", false},
		{"a = 1 OR b = 2", "", false}, // GORM wraps it
		{"a = 1 or b = 2", "", false},
		{"a = 1\tOR b = 2", "", true},
		{"a = 1\nOR b = 2", "", true},
		{"a=1 OR(b=2)", "", true},
		{"(a=1)OR b=2", "", true},
		{"a = 1 XOR b = 2", "mysql", true}, // " XOR " is not " OR ": not wrapped
		{"a = 1 || b = 2", "mysql", true},
		{"a = 1 || 'x'", "postgres", true},
		{"a = 1 -- note", "", true},
		{"a = 1 /* note */", "", true},
		{"a = 1 # note", "mysql", true},
		{"a = 1) OR (b = 2", "", true},
		{"a IN (1", "", true},
		{"a BETWEEN 1", "", true},
		{"a BETWEEN 1 AND 2", "", false},
		{"a = 'x\\'", "mysql", true},
		{"a = $$x$$", "postgres", true},
		{"a = 1; DELETE FROM t", "", true},
		{"[a AND b] = 1", "sqlite", true},
		{"data @> ?", "postgres", false},
		{"created::date = ?", "postgres", false},
		{"a = 'it''s'", "", false},
		// Numbers other than integers are operands GORM leaves alone.
		{"price > 1.5", "", false},
		{"price > .5e3", "mysql", false},
		// What runs on from a number into a name: PostgreSQL before 15
		// reads 1or as 1 OR, before 16 1_000 as 1 and a name.
		{"a = 1or b = 2", "postgres", true},
		{"a = 1_000", "postgres", true},
		// In PostgreSQL ` is an operator character, not a quote: the OR
		// is code.
		{"`a\tOR b` = 1", "postgres", true},
		{"`a\tOR b` = 1", "mysql", false},
		// MySQL's user variables and SQLite's named parameters are
		// operands, whatever they are called.
		{"@or = 1", "mysql", false},
		{":or = 1", "sqlite", false},
		// An executable comment runs in MySQL.
		{"a = 1 /*!50100 OR b = 2 */", "mysql", true},
	} {
		if got := condTainted(tc.sql, tc.dialect, false); got != tc.tainted {
			t.Errorf("%s %q: tainted %v, want %v", tc.dialect, tc.sql, got, tc.tainted)
		}
	}
}

// BenchmarkWhereTemplateRead: reading one template with a placeholder and
// a literal, as routing does for every such Where (taint check included).
func BenchmarkWhereTemplateRead(b *testing.B) {
	sc := litScope("postgres")
	x := clause.Expr{SQL: "user_id = ? AND id > 100", Vars: []any{int64(7)}}
	b.ReportAllocs()
	for b.Loop() {
		if condTainted(x.SQL, sc.dialect, false) || len(scopeCondsExpr(sc, x)) != 2 {
			b.Fatal("not read")
		}
	}
}
