package ir

import (
	"strings"
	"testing"
)

// TestMySQLTokensLocateNamesOnly: the tokens that can be a table's name
// are words and quoted names of code; a variable, a string or a comment
// holding the name is none, and an executable comment is reported whole
// (a */ inside a string does not end it).
func TestMySQLTokensLocateNamesOnly(t *testing.T) {
	q := "SELECT @t_order, @@t_order, 't_order', `t_order` FROM t_order -- t_order\nWHERE a = ? # t_order"
	toks, exec, err := LexMySQL(q)
	if err != nil || exec != nil {
		t.Fatal(exec, err)
	}
	var names []string
	for _, tk := range toks {
		if n := IdentText(q, tk); n == "t_order" {
			names = append(names, q[tk.Start:tk.End])
		}
	}
	if got := strings.Join(names, " "); got != "`t_order` t_order" {
		t.Errorf("names %q, want `t_order` t_order", got)
	}

	for _, tc := range []struct{ q, exec string }{
		{"SELECT 1 /*!50100 , '*/' */ FROM t", "/*!50100 , '*/' */"},
		{"SELECT /*M!100100 1, */ 2", "/*M!100100 1, */"},
		{"SELECT /*T![auto_rand] 1 */ 2", "/*T![auto_rand] 1 */"},
	} {
		if _, exec, err := LexMySQL(tc.q); err != nil || exec == nil || exec.Text != tc.exec {
			t.Errorf("%q: exec %v, err %v; want %q", tc.q, exec, err, tc.exec)
		}
	}
	for _, tc := range []struct{ q, err string }{
		{"SELECT 'a\\'", "unterminated ' at byte 7"},
		{"SELECT `a", "unterminated ` at byte 7"},
		{"SELECT /* a", "unterminated comment at byte 7"},
		{"SELECT /*! a", "unterminated comment at byte 7"},
		{"SELECT @'a", "unterminated ' at byte 8"},
	} {
		if _, _, err := LexMySQL(tc.q); err == nil || err.Error() != tc.err {
			t.Errorf("%q: %v, want %s", tc.q, err, tc.err)
		}
	}
}

// BenchmarkLexMySQL: the tokens of a MySQL statement, read once per
// statement compiled.
func BenchmarkLexMySQL(b *testing.B) {
	q := "/* app */ SELECT o.order_id, o.`status`, SUM(i.price * 1.5) AS total\n" +
		"FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id\n" +
		"WHERE o.user_id = ? AND o.created_at >= '2026-01-01' AND o.note <> 'it\\'s' -- recent\n" +
		"GROUP BY o.order_id, o.`status` ORDER BY total DESC LIMIT 10"
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := LexMySQL(q); err != nil {
			b.Fatal(err)
		}
	}
}
