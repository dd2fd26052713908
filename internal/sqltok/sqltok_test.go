package sqltok

import (
	"strings"
	"testing"
)

// show writes the tokens of src as "Kind:text" lines, spaces left out.
func show(src string, m Mode) string {
	var b strings.Builder
	for _, t := range Tokens(nil, src, m) {
		if t.Kind == Space {
			continue
		}
		b.WriteString(t.Kind.String())
		b.WriteByte(':')
		b.WriteString(t.Text(src))
		b.WriteByte('\n')
	}
	return b.String()
}

type lexCase struct {
	name, src string
	want      []string // "Kind:text", spaces left out
}

func runCases(t *testing.T, m Mode, cases []lexCase) {
	t.Helper()
	for _, tc := range cases {
		want := strings.Join(tc.want, "\n")
		if want != "" {
			want += "\n"
		}
		if got := show(tc.src, m); got != want {
			t.Errorf("%s: %q:\ngot:\n%swant:\n%s", tc.name, tc.src, got, want)
		}
	}
}

// Cases every dialect reads alike.
var commonCases = []lexCase{
	{"words and punctuation", "SELECT a.b, c FROM t WHERE x>=1;",
		[]string{"Ident:SELECT", "Ident:a", "Punct:.", "Ident:b", "Punct:,", "Ident:c", "Ident:FROM", "Ident:t",
			"Ident:WHERE", "Ident:x", "Punct:>", "Punct:=", "Number:1", "Punct:;"}},
	{"name with $ and digits", "a$1 _x9 é", []string{"Ident:a$1", "Ident:_x9", "Ident:é"}},
	{"string with doubled quote", "'it''s' x", []string{"String:'it''s'", "Ident:x"}},
	{"line comment keeps the line break out", "a -- b 'c\nd", []string{"Ident:a", "Comment:-- b 'c", "Ident:d"}},
	{"block comment", "a /* b ' */ c", []string{"Ident:a", "Comment:/* b ' */", "Ident:c"}},
	{"numbers", "1 1.5 .5 1e3 1.5E-3 0x1F", []string{"Number:1", "Number:1.5", "Number:.5", "Number:1e3", "Number:1.5E-3", "Number:0x1F"}},
	{"dot after a name is punctuation", "t.5", nil},
	{"unterminated string", "a 'b", []string{"Ident:a", "Error:'b"}},
	{"unterminated comment", "a /* b", []string{"Ident:a", "Error:/* b"}},
	{"X'..' is one literal", "X'0A' x'0b'", []string{"String:X'0A'", "String:x'0b'"}},
}

func TestCommonRulesInEveryDialect(t *testing.T) {
	for _, m := range []Mode{PostgreSQL, MySQL, SQLite} {
		cases := append([]lexCase(nil), commonCases...)
		// "t.5": a name's qualifier, not the number .5; MySQL reads 5 as a
		// number too, PostgreSQL and SQLite likewise.
		cases[6].want = []string{"Ident:t", "Punct:.", "Number:5"}
		runCases(t, m, cases)
	}
}

func TestPostgreSQLRules(t *testing.T) {
	runCases(t, PostgreSQL, []lexCase{
		{"double quotes name", `"a""b" 'x'`, []string{`QuotedIdent:"a""b"`, "String:'x'"}},
		{"backslash is ordinary in a standard string", `'a\' b`, []string{`String:'a\'`, "Ident:b"}},
		{"E'..' takes backslash escapes", `E'a\'b' e'\\'`, []string{`String:E'a\'b'`, `String:e'\\'`}},
		{"E alone before a space is a name", `E 'a'`, []string{"Ident:E", "String:'a'"}},
		{"longer word before a quote is a name", `xe'a'`, []string{"Ident:xe", "String:'a'"}},
		{"prefixed literals", `B'101' N'x' U&'d\0061' U&"d!0061"`, []string{"String:B'101'", "String:N'x'", `String:U&'d\0061'`, `QuotedIdent:U&"d!0061"`}},
		{"U& with space is not a prefix", `U& 'x'`, []string{"Ident:U", "Punct:&", "String:'x'"}},
		{"dollar quotes", `$$a'b$$ $fn$ x $$ y $fn$`, []string{`String:$$a'b$$`, "String:$fn$ x $$ y $fn$"}},
		{"dollar tag with digits", `$a1$x$a1$`, []string{"String:$a1$x$a1$"}},
		{"unterminated dollar quote", `$a$ x $b$`, []string{"Error:$a$ x $b$"}},
		{"dollar inside a name is part of it", `a$b$ c`, []string{"Ident:a$b$", "Ident:c"}},
		{"placeholders", `$1 $23`, []string{"Placeholder:$1", "Placeholder:$23"}},
		{"lone dollar", `$ x`, []string{"Punct:$", "Ident:x"}},
		{"question mark is an operator", `a ? 'k'`, []string{"Ident:a", "Punct:?", "String:'k'"}},
		{"casts", `x::int`, []string{"Ident:x", "Punct::", "Punct::", "Ident:int"}},
		{"nested comments", `/* a /* b */ c */ d`, []string{"Comment:/* a /* b */ c */", "Ident:d"}},
		{"unterminated nested comment", `/* a /* b */ c`, []string{"Error:/* a /* b */ c"}},
		{"# is an operator", `a # b`, []string{"Ident:a", "Punct:#", "Ident:b"}},
		{"-- needs no space", `1--1`, []string{"Number:1", "Comment:--1"}},
		{"comment inside an operator run", `a+--x`, []string{"Ident:a", "Punct:+", "Comment:--x"}},
		{"backticks are operators", "`a`", []string{"Punct:`", "Ident:a", "Punct:`"}},
		{"@ is an operator", "@a", []string{"Punct:@", "Ident:a"}},
		{"/*! is an ordinary comment", "/*! a */ b", []string{"Comment:/*! a */", "Ident:b"}},
		{"radix literals and underscores", "0b101 0o17 1_000 0x_1", []string{"Number:0b101", "Number:0o17", "Number:1_000", "Number:0", "Ident:x_1"}},
		{"trailing junk starts another token", "123abc", []string{"Number:123", "Ident:abc"}},
		{"range dots", "1..2", []string{"Number:1", "Punct:.", "Number:.2"}},
	})
	runCases(t, PostgreSQL|BacktickQuotes, []lexCase{
		{"BacktickQuotes", "`a``b`", []string{"QuotedIdent:`a``b`"}},
	})
}

func TestMySQLRules(t *testing.T) {
	runCases(t, MySQL, []lexCase{
		{"double quotes are a string", `"a""b" "c\"d"`, []string{`String:"a""b"`, `String:"c\"d"`}},
		{"backslash escapes in strings", `'a\'b' 'c'`, []string{`String:'a\'b'`, "String:'c'"}},
		{"backslash at the end leaves the string open", `'a\'`, []string{`Error:'a\'`}},
		{"backticks name", "`a``b` `c\\`", []string{"QuotedIdent:`a``b`", "QuotedIdent:`c\\`"}},
		{"# comment", "a # b\nc", []string{"Ident:a", "Comment:# b", "Ident:c"}},
		{"-- needs a space", "1--1 -- c\n2 --\t3\n4 --", []string{"Number:1", "Punct:-", "Punct:-", "Number:1", "Comment:-- c", "Number:2", "Comment:--\t3", "Number:4", "Comment:--"}},
		{"names may start with digits", "1abc 12_3 0xZZ 0x1F 0b101 1e5 1e+5 1e 1ex", []string{"Ident:1abc", "Ident:12_3", "Ident:0xZZ",
			"Number:0x1F", "Number:0b101", "Number:1e5", "Number:1e+5", "Ident:1e", "Ident:1ex"}},
		{"names may start with $", "$a a$b", []string{"Ident:$a", "Ident:a$b"}},
		{"placeholder", "a = ?", []string{"Ident:a", "Punct:=", "Placeholder:?"}},
		{"variables", "@a @a.b @'x y' @`z` @\"w\" @@session.sql_mode @@x @", []string{"Variable:@a", "Variable:@a.b", "Variable:@'x y'",
			"Variable:@`z`", "Variable:@\"w\"", "Variable:@@session.sql_mode", "Variable:@@x", "Punct:@"}},
		{"prefixed literals", `N'x' B'1' _utf8mb4'y' E'z'`, []string{"String:N'x'", "String:B'1'", "Ident:_utf8mb4", "String:'y'", "Ident:E", "String:'z'"}},
		{"executable comment is read as code", "SELECT /*!50100 'a*/' , */ 1", []string{"Ident:SELECT", "ExecCommentStart:/*!50100",
			"String:'a*/'", "Punct:,", "ExecCommentEnd:*/", "Number:1"}},
		{"MariaDB executable comment", "/*M!100100 x */", []string{"ExecCommentStart:/*M!100100", "Ident:x", "ExecCommentEnd:*/"}},
		{"comment inside an executable comment", "/*! a /* b */ c */", []string{"ExecCommentStart:/*!", "Ident:a", "Comment:/* b */", "Ident:c", "ExecCommentEnd:*/"}},
		{"executable comment left open", "/*! a", []string{"ExecCommentStart:/*!", "Ident:a", "Error:"}},
		{"optimizer hints and TiDB comments are comments", "/*+ BKA(t) */ /*T! x */", []string{"Comment:/*+ BKA(t) */", "Comment:/*T! x */"}},
		{"comments do not nest", "/* a /* b */ c */", []string{"Comment:/* a /* b */", "Ident:c", "Punct:*", "Punct:/"}},
		{"*/ outside a comment is punctuation", "a */ b", []string{"Ident:a", "Punct:*", "Punct:/", "Ident:b"}},
		{"no dollar quotes", "$$", []string{"Ident:$$"}},
		{"colon", "@a := 1", []string{"Variable:@a", "Punct::", "Punct:=", "Number:1"}},
	})
	runCases(t, MySQL|ANSIQuotes, []lexCase{
		{"ANSI_QUOTES: double quotes name", `"a\" 'b\'c'`, []string{`QuotedIdent:"a\"`, `String:'b\'c'`}},
	})
	runCases(t, MySQL|NoBackslashEscapes, []lexCase{
		{"NO_BACKSLASH_ESCAPES", `'a\' "b\"`, []string{`String:'a\'`, `String:"b\"`}},
	})
}

func TestSQLiteRules(t *testing.T) {
	runCases(t, SQLite, []lexCase{
		{"quoted names", "\"a\"\"b\" `c``d` [e f] [g]]", []string{`QuotedIdent:"a""b"`, "QuotedIdent:`c``d`", "QuotedIdent:[e f]", "QuotedIdent:[g]", "Punct:]"}},
		{"unterminated bracket", "[a", []string{"Error:[a"}},
		{"no backslash escapes", `'a\' b`, []string{`String:'a\'`, "Ident:b"}},
		{"placeholders", "? ?12 :a @b $c #d :1", []string{"Placeholder:?", "Placeholder:?12", "Placeholder::a", "Placeholder:@b", "Placeholder:$c", "Placeholder:#d", "Placeholder::1"}},
		{"lone sigils", ": @ $ #", []string{"Punct::", "Punct:@", "Punct:$", "Punct:#"}},
		{"comments do not nest", "/* a /* b */ c", []string{"Comment:/* a /* b */", "Ident:c"}},
		{"-- needs no space", "1--1", []string{"Number:1", "Comment:--1"}},
		{"only X'..' is prefixed", "X'0a' N'x' E'y'", []string{"String:X'0a'", "Ident:N", "String:'x'", "Ident:E", "String:'y'"}},
		{"/*! is an ordinary comment", "/*! a */", []string{"Comment:/*! a */"}},
	})
}

func TestTokenOffsetsAreTheInputsBytes(t *testing.T) {
	src := "SELECT\t'a' -- c\n/* d */ \"e\""
	toks := Tokens(nil, src, PostgreSQL)
	want := []Token{{Ident, 0, 6}, {Space, 6, 7}, {String, 7, 10}, {Space, 10, 11}, {Comment, 11, 15}, {Space, 15, 16},
		{Comment, 16, 23}, {Space, 23, 24}, {QuotedIdent, 24, 27}}
	if len(toks) != len(want) {
		t.Fatalf("tokens %v, want %v", toks, want)
	}
	for i := range want {
		if toks[i] != want[i] {
			t.Errorf("token %d: %v, want %v", i, toks[i], want[i])
		}
	}
}

func TestNextAfterErrorIsEOF(t *testing.T) {
	l := New("a 'b c", MySQL)
	var kinds []Kind
	for range 5 {
		kinds = append(kinds, l.Next().Kind)
	}
	if want := []Kind{Ident, Space, Error, EOF, EOF}; !equalKinds(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	var zero Lexer
	if tok := zero.Next(); tok.Kind != EOF {
		t.Errorf("zero Lexer: %v", tok)
	}
}

func equalKinds(a, b []Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUnquote(t *testing.T) {
	for _, tc := range []struct {
		text string
		m    Mode
		want string
		ok   bool
	}{
		{`"a""b"`, PostgreSQL, `a"b`, true},
		{"`a``b`", MySQL, "a`b", true},
		{"[a]]", SQLite, "a]", true},
		{"'it''s'", SQLite, "it's", true},
		{`'a\b'`, PostgreSQL, `a\b`, true},
		{`'a\b'`, MySQL, "", false},
		{`'a\b'`, MySQL | NoBackslashEscapes, `a\b`, true},
		{`"a\b"`, MySQL, "", false},
		{`"a\b"`, MySQL | ANSIQuotes, `a\b`, true},
		{"$t$ x $t$", PostgreSQL, " x ", true},
		{"$$$$", PostgreSQL, "", true},
		{"$$", PostgreSQL, "", false},
		{"$t$", PostgreSQL, "", false},
		{"E'x'", PostgreSQL, "", false},
		{`U&"x"`, PostgreSQL, "", false},
		{"x", PostgreSQL, "", false},
		{"'", PostgreSQL, "", false},
		{"'ab", PostgreSQL, "", false},
	} {
		got, ok := Unquote(tc.text, tc.m)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Unquote(%q, %d) = %q, %v; want %q, %v", tc.text, tc.m, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzTokensCoverInput: in every mode the tokens cover the input exactly,
// each starting where the one before ended, none empty but a final Error,
// and an Error is last.
func FuzzTokensCoverInput(f *testing.F) {
	for _, tc := range commonCases {
		f.Add(tc.src)
	}
	f.Add("SELECT /*!50100 'a*/' */ @`x` @@y $$a$$ E'\\'' U&\"z\" [w] ?1 :n $1 1e+5 0x_1 1..2")
	f.Add("/* a /* b */ c */ -- d\n# e\n`f`")
	modes := []Mode{PostgreSQL, PostgreSQL | BacktickQuotes, MySQL, MySQL | ANSIQuotes | NoBackslashEscapes, SQLite}
	f.Fuzz(func(t *testing.T, src string) {
		for _, m := range modes {
			l := New(src, m)
			pos := 0
			for n := 0; ; n++ {
				tok := l.Next()
				if tok.Start != pos {
					t.Fatalf("mode %d: token %d %v starts at %d, want %d", m, n, tok, tok.Start, pos)
				}
				if tok.End < tok.Start || tok.End > len(src) {
					t.Fatalf("mode %d: token %d %v out of range", m, n, tok)
				}
				if tok.Kind == EOF {
					if pos != len(src) {
						t.Fatalf("mode %d: EOF at %d of %d", m, pos, len(src))
					}
					break
				}
				if tok.Kind == Error {
					if tok.End != len(src) {
						t.Fatalf("mode %d: Error %v before the end", m, tok)
					}
					if next := l.Next(); next.Kind != EOF {
						t.Fatalf("mode %d: %v after an Error", m, next)
					}
					break
				}
				if tok.End == tok.Start {
					t.Fatalf("mode %d: empty token %v", m, tok)
				}
				if tok.Kind == QuotedIdent || tok.Kind == String {
					if s, ok := Unquote(tok.Text(src), m); ok && len(s) > tok.End-tok.Start {
						t.Fatalf("mode %d: Unquote(%q) = %q, longer", m, tok.Text(src), s)
					}
				}
				pos = tok.End
			}
		}
	})
}

// benchSQL is a statement with a bit of everything a routed statement
// holds: names, quoted names, strings, numbers, placeholders, a comment.
const benchSQL = `/* app */ SELECT o.order_id, o."status", SUM(i.price * 1.5) AS total
FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id
WHERE o.user_id = ? AND o.created_at >= '2026-01-01' AND o.note <> 'it''s' -- recent
GROUP BY o.order_id, o."status" ORDER BY total DESC LIMIT 10`

// BenchmarkNext: tokenizing benchSQL (spelled for each dialect) with Next.
func BenchmarkNext(b *testing.B) {
	for _, bc := range []struct {
		name string
		m    Mode
		src  string
	}{
		{"postgres", PostgreSQL, strings.ReplaceAll(benchSQL, "?", "$1")},
		{"mysql", MySQL, strings.ReplaceAll(benchSQL, `"`, "`")},
		{"sqlite", SQLite, benchSQL},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.src)))
			b.ReportAllocs()
			for b.Loop() {
				l := New(bc.src, bc.m)
				for l.Next().Kind > Error {
				}
			}
		})
	}
}
