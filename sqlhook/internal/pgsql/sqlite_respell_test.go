package pgsql

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // SQLite itself says how it binds the text as written

	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// respellCase is a statement run on SQLite as written and as respelled.
type respellCase struct {
	q    string
	args []any
	// mayRefuse: sqlhook may refuse the form (an error from the respelling)
	// where SQLite runs it; it must never give another answer.
	mayRefuse bool
}

// sqliteParamCases mix every parameter form SQLite's tokenizer reads, in
// the orders where its numbering is least obvious.
var sqliteParamCases = []respellCase{
	{q: `SELECT ?, ?`, args: []any{1, 2}},
	{q: `SELECT ?2, ?1`, args: []any{1, 2}},
	{q: `SELECT ?1, ?1, ?`, args: []any{1, 2}},
	{q: `SELECT ?3, ?1, ?`, args: []any{1, 2, 3, 4}},
	{q: `SELECT ?3, ?1, ?`, args: []any{1, 2, 3}}, // SQLite: no argument 4
	{q: `SELECT ?, ?1, ?`, args: []any{1, 2}},
	{q: `SELECT ?5`, args: []any{1, 2, 3, 4, 5}},
	{q: `SELECT ?5`, args: []any{1, 2}},
	{q: `SELECT $2, ?`, args: []any{1, 2}},
	{q: `SELECT $2, ?1`, args: []any{1, 2}},
	{q: `SELECT ?1, $1, ?`, args: []any{1, 2, 3}},
	{q: `SELECT $1, $1, ?`, args: []any{1, 2}},
	{q: `SELECT ?, $1`, args: []any{1, 2}},
	{q: `SELECT ?01`, args: []any{1}},
	{q: `SELECT $01`, args: []any{1}},
	{q: `SELECT ?0`, args: []any{1}, mayRefuse: true},
	{q: `SELECT :a, ?`, args: []any{sql.Named("a", "x"), 5}},
	{q: `SELECT :a, @a, $a, :b`, args: []any{sql.Named("b", "y"), sql.Named("a", "x")}},
	{q: `SELECT :a, ?1, ?`, args: []any{sql.Named("a", "x"), 7}},
	{q: `SELECT ?2, :a, ?`, args: []any{sql.Named("a", "x"), 7, 8}},
	{q: `SELECT :a`, args: []any{1}},
	{q: `SELECT @a_b$c, ?`, args: []any{sql.Named("a_b$c", "x"), 2}},
	{q: `SELECT $a(1)`, args: []any{sql.Named("a", "x")}, mayRefuse: true},
	{q: `SELECT [column1], "?1", '?', ? FROM (VALUES (?1))`, args: []any{1}},
	{q: `SELECT ?2 -- ?1` + "\n, ? /* ?1 */", args: []any{1, 2, 3}},
}

// sqliteLimitCases: LIMIT offset, count in the places SQLite reads it.
var sqliteLimitCases = []respellCase{
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT 1, 2`},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT ?, ?`, args: []any{2, 3}},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT ?2, ?1`, args: []any{3, 1}},
	{q: `SELECT column1, ? FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT ?, ?`, args: []any{"t", 4, 1}},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 limit /* skip */ 2 , -- take` + "\n 1"},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT (SELECT 2), (3)`},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT -1, 2`},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT 2, -1`},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT :o, :n`, args: []any{sql.Named("n", 2), sql.Named("o", 3)}},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT 2 OFFSET 1`},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) WHERE column1 IN (SELECT column1 FROM (VALUES (2),(3),(4)) ORDER BY 1 LIMIT 1, 5) ORDER BY 1 LIMIT 0, 1`},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT (SELECT 1 LIMIT 0, 1), 2;`},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT 1 + 1, 2`, mayRefuse: true},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT 1, 2 + 1`, mayRefuse: true},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT abs(-1), 2`, mayRefuse: true},
	{q: `SELECT column1 FROM (VALUES (1),(2),(3),(4),(5),(6)) ORDER BY 1 LIMIT CASE WHEN ? THEN 1 ELSE 2 END, 2`, args: []any{1}, mayRefuse: true},
	{q: `SELECT 'LIMIT 1, 2', "limit" FROM (SELECT 1 AS "limit")`},
}

// sqliteCollateCases: COLLATE BINARY, a keyword to PostgreSQL's grammar.
var sqliteCollateCases = []respellCase{
	{q: `SELECT column1 FROM (VALUES ('a'),('B'),(NULL),('c')) ORDER BY column1 COLLATE BINARY DESC NULLS FIRST`},
	{q: `SELECT column1 FROM (VALUES ('a'),('B'),(NULL),('c')) ORDER BY column1 collate /* c */ binary`},
	{q: `SELECT column1 FROM (VALUES ('a'),('B'),('c')) ORDER BY column1 COLLATE NOCASE`},
	{q: `SELECT column1 = 'A' COLLATE Binary, column1 = 'A' COLLATE nocase FROM (VALUES ('a'))`},
}

// TestSQLiteRespellingBindsAsSQLite runs every case on SQLite as written
// and respelled, with the arguments laid out as sqlhook lays them out (one
// bare ? per $k, in order), and wants the same rows or the same failure.
func TestSQLiteRespellingBindsAsSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "respell.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range slices.Concat(sqliteParamCases, sqliteLimitCases, sqliteCollateCases) {
		want, wantErr := sqliteRows(db, c.q, c.args...)
		text, names, err := ir.SQLiteRespell(c.q)
		if err != nil {
			if !c.mayRefuse && wantErr == nil {
				t.Errorf("%s: refused (%v), SQLite runs it", c.q, err)
			}
			continue
		}
		if _, err := Parse(text); err != nil && wantErr == nil {
			t.Errorf("%s: respelled %q does not parse: %v", c.q, text, err)
			continue
		}
		got, gotErr := runRespelled(db, text, names, c.args)
		switch {
		case wantErr != nil && gotErr == nil:
			t.Errorf("%s: respelled %q gives %v, SQLite fails: %v", c.q, text, got, wantErr)
		case wantErr == nil && gotErr != nil:
			t.Errorf("%s: respelled %q fails (%v), SQLite gives %v", c.q, text, gotErr, want)
		case got != want:
			t.Errorf("%s: respelled %q gives %v, SQLite %v", c.q, text, got, want)
		}
	}
}

// runRespelled writes each $k of text as ? and binds it as sqlhook does.
func runRespelled(db *sql.DB, text string, names []string, vals []any) (string, error) {
	nv := make([]driver.NamedValue, len(vals))
	for i, v := range vals {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
		if n, ok := v.(sql.NamedArg); ok {
			nv[i].Name, nv[i].Value = n.Name, n.Value
		}
	}
	if names != nil {
		var err error
		if nv, err = ir.SQLiteArgs(names, nv); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	var out []any
	for i := 0; i < len(text); i++ {
		if text[i] != '$' || i+1 >= len(text) || !ir.IsDigit(text[i+1]) {
			b.WriteByte(text[i])
			continue
		}
		j := i + 1
		for j < len(text) && ir.IsDigit(text[j]) {
			j++
		}
		k, _ := strconv.Atoi(text[i+1 : j])
		if k > len(nv) {
			return "", fmt.Errorf("no argument %d", k)
		}
		out = append(out, nv[k-1].Value)
		b.WriteByte('?')
		i = j - 1
	}
	return sqliteRows(db, b.String(), out...)
}

// sqliteRows is every row of the query, printed.
func sqliteRows(db *sql.DB, q string, args ...any) (string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for rows.Next() {
		vs := make([]any, len(cols))
		ps := make([]any, len(cols))
		for i := range vs {
			ps[i] = &vs[i]
		}
		if err := rows.Scan(ps...); err != nil {
			return "", err
		}
		fmt.Fprintln(&b, vs...)
	}
	return b.String(), rows.Err()
}

// TestSQLiteLimitCommaIsLimitOffset checks the respelled text itself: the
// count moves before OFFSET and the placeholders keep SQLite's numbers.
func TestSQLiteLimitCommaIsLimitOffset(t *testing.T) {
	for q, want := range map[string]string{
		`SELECT a FROM t LIMIT 5, 10`:                                                            `SELECT a FROM t LIMIT 10 OFFSET 5`,
		`SELECT a FROM t LIMIT ?, ?`:                                                             `SELECT a FROM t LIMIT $2 OFFSET $1`,
		`SELECT a FROM t WHERE b = ? LIMIT ?, ?`:                                                 `SELECT a FROM t WHERE b = $1 LIMIT $3 OFFSET $2`,
		`SELECT a FROM t LIMIT ?2, ?1`:                                                           `SELECT a FROM t LIMIT $1 OFFSET $2`,
		`SELECT a FROM t LIMIT 10 OFFSET ?`:                                                      `SELECT a FROM t LIMIT 10 OFFSET $1`,
		`SELECT a FROM [t] LIMIT (1), ?;`:                                                        `SELECT a FROM "t" LIMIT $1 OFFSET (1);`,
		`SELECT a FROM t WHERE a IN (SELECT b FROM u LIMIT 1, 2) LIMIT 3`:                        `SELECT a FROM t WHERE a IN (SELECT b FROM u LIMIT 2 OFFSET 1) LIMIT 3`,
		`INSERT INTO t SELECT a, b FROM u LIMIT 1, 2 ON CONFLICT (a) DO UPDATE SET a = 1, b = 2`: `INSERT INTO t SELECT a, b FROM u LIMIT 2 OFFSET 1 ON CONFLICT (a) DO UPDATE SET a = 1, b = 2`,
		`INSERT INTO t SELECT a, b FROM u LIMIT 2 ON CONFLICT (a) DO UPDATE SET a = 1, b = 2`:    `INSERT INTO t SELECT a, b FROM u LIMIT 2 ON CONFLICT (a) DO UPDATE SET a = 1, b = 2`,
		`INSERT INTO t SELECT a, b FROM u LIMIT ? OFFSET ? RETURNING a, b`:                       `INSERT INTO t SELECT a, b FROM u LIMIT $1 OFFSET $2 RETURNING a, b`,
		`SELECT a FROM t LIMIT 5; SELECT 1, 2`:                                                   `SELECT a FROM t LIMIT 5; SELECT 1, 2`,
	} {
		got, err := ir.SQLiteToPG(q)
		if err != nil || got != want {
			t.Errorf("%s:\n got %q, %v\nwant %q", q, got, err, want)
		}
	}
}

// TestSQLiteToPGRefusesNamedParameters: ir.SQLiteToPG, the respelling for
// callers that bind by position only, refuses a parameter the driver
// binds by name rather than bind another argument.
func TestSQLiteToPGRefusesNamedParameters(t *testing.T) {
	for _, q := range []string{`SELECT a FROM t WHERE b = :b`, `SELECT a FROM t WHERE b = @b`, `SELECT a FROM t WHERE b = $b`, `SELECT ?01`} {
		if got, err := ir.SQLiteToPG(q); err == nil {
			t.Errorf("%s: respelled as %q, want a refusal", q, got)
		}
	}
	for q, want := range map[string]string{
		`SELECT a$b FROM t WHERE c = $2 AND d = ?`: `SELECT a$b FROM t WHERE c = $2 AND d = $2`,
		`SELECT a FROM t WHERE b::text = ?`:        `SELECT a FROM t WHERE b::text = $1`,
	} {
		if got, err := ir.SQLiteToPG(q); err != nil || got != want {
			t.Errorf("%s:\n got %q, %v\nwant %q", q, got, err, want)
		}
	}
}

// TestSQLiteRespellingRandomParameterMixes: seeded random mixes of every
// parameter form, in the select list and in LIMIT a, b, with arguments
// positional and named in random places (and sometimes too few), run as
// written and respelled: the same rows or both failing, every time.
func TestSQLiteRespellingRandomParameterMixes(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "mixes.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(15, 2026))
	forms := []string{"?", "?", "?1", "?2", "?4", "$1", "$2", "$3", ":a", "@a", "$a", ":b"}
	agreed, failedBoth := 0, 0
	for range 4000 {
		var items []string
		for range 1 + rng.IntN(5) {
			items = append(items, forms[rng.IntN(len(forms))])
		}
		q := "SELECT " + strings.Join(items, ", ")
		if rng.IntN(2) == 0 {
			q += fmt.Sprintf(" FROM (VALUES (1),(2),(3),(4),(5),(6),(7)) ORDER BY 1 LIMIT %s, %s",
				forms[rng.IntN(len(forms))], forms[rng.IntN(len(forms))])
		}
		var vals []any
		for range rng.IntN(7) {
			vals = append(vals, 1+rng.IntN(3))
		}
		for _, name := range []string{"a", "b"} {
			if rng.IntN(4) > 0 {
				vals = slices.Insert(vals, rng.IntN(len(vals)+1), any(sql.Named(name, 1+rng.IntN(3))))
			}
		}
		want, wantErr := sqliteRows(db, q, vals...)
		text, names, err := ir.SQLiteRespell(q)
		if err != nil {
			t.Fatalf("%s: refused: %v", q, err)
		}
		got, gotErr := runRespelled(db, text, names, vals)
		switch {
		case (wantErr != nil) != (gotErr != nil):
			t.Fatalf("%s %v: as written %q, %v; respelled %q: %q, %v", q, vals, want, wantErr, text, got, gotErr)
		case got != want:
			t.Fatalf("%s %v: respelled %q gives %q, SQLite %q", q, vals, text, got, want)
		case wantErr != nil:
			failedBoth++
		default:
			agreed++
		}
	}
	t.Logf("%d agreed, %d failed both ways (too few arguments)", agreed, failedBoth)
}
