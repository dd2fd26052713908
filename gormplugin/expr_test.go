package gormplugin

import (
	"fmt"
	"testing"

	"gorm.io/gorm/clause"
)

func TestExprConds(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		vars []any
		want string // conditions, "" for none
	}{
		{"order_id = ?", []any{5}, "[order_id = 5]"},
		{`"t"."order_id" = ?`, []any{5}, "[order_id = 5]"},
		{"`order_id`=?", []any{5}, "[order_id = 5]"},
		{"order_id IN ?", []any{[]int{1, 2}}, "[order_id IN (1, 2)]"},
		{"order_id in (?)", []any{[]int64{3}}, "[order_id IN (3)]"},
		{"user_id = ? AND order_id >= ?", []any{1, 9}, "[user_id = 1 order_id >= 9]"},
		{"user_id = ? and order_id < ?", []any{1, 9}, "[user_id = 1 order_id < 9]"},
		{"order_id = ? OR order_id = ?", []any{1, 2}, ""},
		{"NOT order_id = ?", []any{1}, ""},
		{"order_id BETWEEN ? AND ?", []any{1, 2}, "[order_id BETWEEN 1 AND 2]"},
		{"order_id NOT BETWEEN ? AND ?", []any{1, 2}, ""},
		{"(order_id = ?)", []any{1}, "[order_id = 1]"},
		{"order_id = ?", []any{[]int{1}}, ""},
		{"order_id + 1 = ?", []any{1}, ""},
		{"lower(name) = ?", []any{"x"}, ""},
		{"order_id = ? AND", []any{1}, ""},
		{"items.order_id = ?", []any{1}, ""},
		{"t.order_id = ? AND items.id = ?", []any{1, 2}, "[order_id = 1]"},
	} {
		got := exprConds(clause.Expr{SQL: tc.sql, Vars: tc.vars}, "t")
		s := ""
		if got != nil {
			s = fmt.Sprint(got)
		}
		if s != tc.want {
			t.Errorf("%q: %s, want %s", tc.sql, s, tc.want)
		}
	}
}
