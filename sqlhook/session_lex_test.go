package sqlhook

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// showSess writes tokens as kind:text, kinds by their initial.
func showSess(toks []sessToken) string {
	names := map[sessTokKind]string{slWord: "w", slQuoted: "q", slString: "s", slNumber: "n", slParam: "p", slUserVar: "u", slSysVar: "v", slOp: "o"}
	var b []string
	for _, t := range toks {
		b = append(b, fmt.Sprintf("%s:%s", names[t.kind], t.text))
	}
	return strings.Join(b, " ")
}

// TestSessionLexerReadsEachDialectsCode: the session layer sees the code
// the server runs: a PostgreSQL cast is no placeholder, a name ending in
// a non-ASCII letter and e before a quote opens a standard string (no
// backslash escape), ` is an operator in PostgreSQL, $name a name in
// MySQL, an executable comment's content is code and one left open is
// unreadable.
func TestSessionLexerReadsEachDialectsCode(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		q    string
		want string
		err  bool // errSessLex
	}{
		{PostgreSQL, "SET a = x::int", "w:set w:a o:= w:x o:: o:: w:int", false},
		{PostgreSQL, `SELECT ée'\', 1`, `w:select w:ée s:\ o:, n:`, false},
		{PostgreSQL, `SELECT E'\'', e'x'`, `w:select w:e s:\' o:, w:e s:x`, false},
		{PostgreSQL, "SAVEPOINT `a`", "w:savepoint o:` w:a o:`", false},
		{PostgreSQL, "SELECT $1, $$a;b$$, $ x", "w:select p: o:, s: o:, o:$ w:x", false},
		{PostgreSQL, `SELECT "a""b" /* /* */ */ ?`, `w:select q:a"b p:`, false},
		{MySQL, "SET @a := $b", "w:set u:a o::= w:$b", false},
		{MySQL, "SET @@SESSION.sql_mode = 'x', @`Y` = 1 -- c", "w:set v:session.sql_mode o:= s:x o:, u:y o:= n:", false},
		{MySQL, "SET /*!50100 @a = 1 */", "w:set u:a o:= n:", false},
		{MySQL, "SET /*!50100 @a = 1", "", true},
		{MySQL, "SET sql_mode = N'ANSI_QUOTES'", "w:set w:sql_mode o:= w:n s:ANSI_QUOTES", false},
		{MySQL, "SELECT 1--1", "w:select n: o:- o:- n:", false},
		{SQLite, "SAVEPOINT [a]]", "w:savepoint q:a o:]", false},
		{SQLite, "SELECT :a, @b, $c, ?2, $", "w:select p: o:, p: o:, p: o:, p: o:, o:$", false},
		{SQLite, "SELECT 'a", "", true},
	} {
		toks, err := sessLex(tc.d, tc.q)
		if tc.err {
			if !errors.Is(err, errSessLex) {
				t.Errorf("%v %q: %v, want errSessLex", tc.d, tc.q, err)
			}
			continue
		}
		if err != nil || showSess(toks) != tc.want {
			t.Errorf("%v %q:\ngot  %s (%v)\nwant %s", tc.d, tc.q, showSess(toks), err, tc.want)
		}
	}
}

// BenchmarkSessionLex: the session layer's read of a routed statement
// (every statement is read so when the connector has several data
// sources).
func BenchmarkSessionLex(b *testing.B) {
	q := `/* app */ SELECT o.order_id, o."status", SUM(i.price * 1.5) AS total
FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id
WHERE o.user_id = $1 AND o.created_at >= '2026-01-01' AND o.note <> 'it''s' -- recent
GROUP BY o.order_id, o."status" ORDER BY total DESC LIMIT 10`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sessLex(PostgreSQL, q); err != nil {
			b.Fatal(err)
		}
	}
}
