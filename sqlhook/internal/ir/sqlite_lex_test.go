package ir

import (
	"strings"
	"testing"
)

// TestSQLiteRespellReadsSQLiteTokens: the respelling reads SQLite's tokens:
// a number run on into name bytes is one (illegal) token with no
// parameter in it, @e before a quote is a parameter (not PostgreSQL's
// E'...' syntax), a huge $N is a name, not a position to size the arguments
// by, and names, comments and LIMIT o, n are respelled as before.
func TestSQLiteRespellReadsSQLiteTokens(t *testing.T) {
	for _, tc := range []struct{ q, want, err string }{
		{"SELECT 0$0, ?", "SELECT 0$0, $1", ""},
		{"SELECT @e'x'", "SELECT $1'x'", ""},
		{"SELECT E'x'", "", "PostgreSQL escape syntax at offset 8"},
		{"SELECT U&\"x\"", "", "PostgreSQL escape syntax at offset 9"},
		{"SELECT `a``b`, [c d] /* x /* y */ FROM t COLLATE BINARY LIMIT ?2, (1) -- z", `SELECT "a` + "`" + `b", "c d" /* x / * y */ FROM t COLLATE "binary" LIMIT (1) OFFSET $2 -- z`, ""},
		{"SELECT 1 LIMIT ?, 0..", "", "LIMIT offset, count at offset 14"},
		{"SELECT X'0", "", "unterminated ' at offset 8"},
		{"SELECT $$x$$", "", "$$ at offset 7"},
		{"SELECT $a(1)", "", "parameter $a followed by ("},
	} {
		got, _, err := SQLiteRespell(tc.q)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q, %v; want error %q", tc.q, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q:\ngot  %q, %v\nwant %q", tc.q, got, err, tc.want)
		}
	}
	// A position this large would have sized a slice of 10^9 names.
	_, names, err := SQLiteRespell("SELECT $1000000000, :a")
	if err != nil || len(names) != 2 || names[0] != "1000000000" || names[1] != "a" {
		t.Errorf("$1000000000, :a: names %q, %v; want both bound by name", names, err)
	}
}

// BenchmarkSQLiteRespell: respelling a SQLite statement for the
// PostgreSQL grammar, once per statement compiled.
func BenchmarkSQLiteRespell(b *testing.B) {
	q := "/* app */ SELECT o.order_id, `o`.\"status\", SUM(i.price * 1.5) AS total\n" +
		"FROM t_order o JOIN [t_order_item] i ON i.order_id = o.order_id\n" +
		"WHERE o.user_id = ? AND o.created_at >= '2026-01-01' AND o.note <> 'it''s' -- recent\n" +
		"GROUP BY o.order_id, o.\"status\" ORDER BY total COLLATE BINARY DESC LIMIT ?, 10"
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := SQLiteRespell(q); err != nil {
			b.Fatal(err)
		}
	}
}
