package sqlhook_test

import (
	"strings"
	"testing"

	"github.com/shardkey/shardkey/sqlhook"
)

// SQLite orders, groups and compares a DATETIME column by the value it
// stores: '2024-01-01 10:00:00' and '2024-01-01T10:00:00Z' are two values
// ("T" sorts after " "), an integer or real sorts before all text, NULL
// first. The driver parses the text into a time.Time, which has lost the
// spelling, so the merge reads each sort, group and DISTINCT key through a
// raw copy of the column and returns the column as the driver gives it.
// The stored text is text: it is compared as BINARY, here declared by
// WithBinaryCollation (TestSQLiteDatetimeTextNeedsAKnownCollation).
func TestSQLiteDatetimeOrderedGroupedAndDistinctByItsStoredValue(t *testing.T) {
	b := selBackendsNamed(t, "sqltime")[2]
	b.schema = strings.Replace(b.schema, "dur TEXT", "dur TEXT, ts DATETIME", 1)
	e := openSel(t, b, sqlhook.WithBinaryCollation())
	fill := `UPDATE %s SET ts = CASE id % 8
		WHEN 0 THEN '2024-01-01 10:00:00' WHEN 1 THEN '2024-01-01T10:00:00'
		WHEN 2 THEN '2024-01-01T10:00:00Z' WHEN 3 THEN '2024-01-01 10:00:00+00:00'
		WHEN 4 THEN 1704103200 WHEN 5 THEN NULL WHEN 6 THEN '2024-01-01T09:30:00'
		ELSE 1704103200.5 END`
	if _, err := e.db.Exec(strings.ReplaceAll(fill, "%s", "t_sale")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.oracle.Exec(strings.ReplaceAll(fill, "%s", "o_sale")); err != nil {
		t.Fatal(err)
	}
	ordered := []string{
		`SELECT id, ts FROM t_sale ORDER BY ts, id LIMIT 20`,
		`SELECT id, ts FROM t_sale ORDER BY ts DESC, id DESC LIMIT 20`,
		`SELECT id, ts FROM t_sale ORDER BY 2 DESC, 1 LIMIT 30 OFFSET 3`,
		`SELECT id AS k, ts AS w FROM t_sale ORDER BY w, k LIMIT 25`,
		`SELECT id FROM t_sale ORDER BY ts DESC, id LIMIT 15`,
		`SELECT id FROM t_sale ORDER BY t_sale.ts, id`,
		`SELECT ts, COUNT(*) FROM t_sale GROUP BY ts ORDER BY ts`,
		`SELECT ts, COUNT(*), MIN(id) FROM t_sale GROUP BY 1 ORDER BY 1 DESC LIMIT 5`,
		`SELECT COUNT(*), MAX(id) FROM t_sale GROUP BY ts ORDER BY ts DESC`,
		`SELECT DISTINCT ts FROM t_sale ORDER BY ts`,
		`SELECT DISTINCT ts FROM t_sale ORDER BY ts DESC LIMIT 4`,
		`SELECT DISTINCT ts, user_id FROM t_sale ORDER BY 2, 1`,
	}
	for _, q := range ordered {
		e.agree(t, q, true)
	}
	for _, q := range []string{
		`SELECT ts, COUNT(*) FROM t_sale GROUP BY ts`,
		`SELECT COUNT(*) FROM t_sale GROUP BY ts`,
		`SELECT DISTINCT ts FROM t_sale`,
		`SELECT DISTINCT ts, id % 2 FROM t_sale`,
	} {
		e.agree(t, q, false)
	}
	// Every spelling is its own value to SQLite: eight, as one table has.
	r, err := e.db.Query(`SELECT DISTINCT ts FROM t_sale`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readResult(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.rows) != 8 {
		t.Errorf("SELECT DISTINCT ts: %d rows %q, want 8", len(got.rows), got.rows)
	}
}

// Without WithBinaryCollation the stored text of a DATETIME column has a
// collation sqlhook does not know, like any text: refused, unless the
// query names one.
func TestSQLiteDatetimeTextNeedsAKnownCollation(t *testing.T) {
	b := selBackendsNamed(t, "sqltimec")[2]
	b.schema = strings.Replace(b.schema, "dur TEXT", "dur TEXT, ts DATETIME", 1)
	e := openSel(t, b)
	fill := `UPDATE %s SET ts = CASE id % 3 WHEN 0 THEN '2024-01-01 10:00:00' WHEN 1 THEN '2024-01-01T10:00:00Z' END`
	if _, err := e.db.Exec(strings.ReplaceAll(fill, "%s", "t_sale")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.oracle.Exec(strings.ReplaceAll(fill, "%s", "o_sale")); err != nil {
		t.Fatal(err)
	}
	e.refused(t, `SELECT id, ts FROM t_sale ORDER BY ts DESC LIMIT 5`)
	e.refused(t, `SELECT DISTINCT ts FROM t_sale`)
	e.refused(t, `SELECT ts, COUNT(*) FROM t_sale GROUP BY ts`)
	e.agree(t, `SELECT id, ts FROM t_sale ORDER BY ts COLLATE BINARY, id LIMIT 30`, true)
	e.agree(t, `SELECT ts, COUNT(*) FROM t_sale GROUP BY ts COLLATE BINARY ORDER BY 1 COLLATE BINARY`, true)
}

// HAVING compares a GROUP BY column with the affinity of its declared type
// (amount INT > '5' compares numbers), which the raw copy the groups are
// merged by does not have: HAVING reads the column as declared.
func TestSQLiteHavingOnARawGroupedColumnKeepsItsAffinity(t *testing.T) {
	e := openSel(t, selBackendsNamed(t, "sqltimeh")[2], sqlhook.WithBinaryCollation())
	e.agree(t, `SELECT amount, COUNT(*) FROM t_sale GROUP BY amount HAVING amount > '5' ORDER BY amount`, true)
	e.agree(t, `SELECT COUNT(*), MIN(id) FROM t_sale GROUP BY amount HAVING amount > '5' ORDER BY 2`, true)
	e.agree(t, `SELECT COUNT(*) FROM t_sale GROUP BY amount HAVING amount IS NULL OR amount < '0'`, false)
}
