package sqlhook_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// sqliteParamRules: t_order over two SQLite files by user_id and two
// tables each by order_id.
const sqliteParamRules = `
dataSources:
  ds_0: {driver: sqlite, dsn: %q}
  ds_1: {driver: sqlite, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`

// sqliteParamEnv is a sharded t_order through sqlhook and the same rows in
// one unsharded table (the oracle).
type sqliteParamEnv struct {
	hook, oracle *sql.DB
	dsn          [2]string
}

func newSQLiteParamEnv(t *testing.T) *sqliteParamEnv {
	t.Helper()
	dir := t.TempDir()
	e := &sqliteParamEnv{dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, sqliteParamRules, e.dsn[0], e.dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	if e.hook, err = sqlhook.Open(cfg, sqlhook.WithScatter()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.hook.Close() })
	if e.oracle, err = sql.Open("sqlite", filepath.Join(dir, "oracle.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.oracle.Close() })
	const ddl = `CREATE TABLE t_order (order_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, status TEXT, amount INTEGER)`
	e.both(t, ddl)
	// Rows written with numbered placeholders in reverse order: each row
	// must land where its own values route it.
	for start := 1; start <= 120; start += 10 {
		var vals []string
		var args []any
		for id := start; id < start+10; id++ {
			n := len(args)
			vals = append(vals, fmt.Sprintf("(?%d, ?%d, ?%d, ?%d)", n+4, n+3, n+2, n+1))
			var amount any = (id * 13) % 50
			if id%11 == 0 {
				amount = nil
			}
			args = append(args, amount, fmt.Sprintf("s%d", id%3), 1+(id*7)%5, id)
		}
		e.both(t, "INSERT INTO t_order (order_id, user_id, status, amount) VALUES "+strings.Join(vals, ", "), args...)
	}
	return e
}

// both runs a write through sqlhook and on the oracle.
func (e *sqliteParamEnv) both(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := e.hook.Exec(q, args...); err != nil {
		t.Fatalf("sqlhook: %s: %v", q, err)
	}
	if _, err := e.oracle.Exec(q, args...); err != nil {
		t.Fatalf("oracle: %s: %v", q, err)
	}
}

// readAll is every row of q, printed one per entry.
func readAll(db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vs := make([]any, len(cols))
		ps := make([]any, len(cols))
		for i := range vs {
			ps[i] = &vs[i]
		}
		if err := rows.Scan(ps...); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprint(vs...))
	}
	return out, rows.Err()
}

// sameAnswer runs q through sqlhook and on the oracle and wants the same
// rows (in the same order when ordered is set, as a multiset otherwise).
func (e *sqliteParamEnv) sameAnswer(t *testing.T, ordered bool, q string, args ...any) {
	t.Helper()
	want, err := readAll(e.oracle, q, args...)
	if err != nil {
		t.Fatalf("oracle: %s: %v", q, err)
	}
	got, err := readAll(e.hook, q, args...)
	if err != nil {
		t.Errorf("%s %v: refused or failed: %v (SQLite runs it)", q, args, err)
		return
	}
	if !ordered {
		slices.Sort(want)
		slices.Sort(got)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s %v:\n got %q\nwant %q", q, args, got, want)
	}
}

// TestSQLiteNumberedPlaceholdersRouteAsSQLiteBinds: rows written with
// ?NNN land in the table their own values route to, and reads with ?NNN,
// $NNN and mixed bare ? (numbered one above the largest so far) give the
// one-table answer on one target and across several.
func TestSQLiteNumberedPlaceholdersRouteAsSQLiteBinds(t *testing.T) {
	e := newSQLiteParamEnv(t)
	e.checkPlacement(t, 120)
	e.sameAnswer(t, true, `SELECT * FROM t_order ORDER BY order_id`)
	for _, c := range []struct {
		q    string
		args []any
	}{
		// one target: user_id picks the data source, even order_ids the table
		{`SELECT order_id, status FROM t_order WHERE user_id = ?2 AND order_id IN (?1, ?3) ORDER BY order_id`, []any{2, 3, 12}},
		{`SELECT order_id FROM t_order WHERE order_id = $1 AND user_id = ?`, []any{4, 4}},
		{`SELECT order_id FROM t_order WHERE user_id = ?3 AND order_id IN (?1, ?2, ?) ORDER BY order_id`, []any{2, 4, 4, 12}},
		// several targets
		{`SELECT order_id, user_id FROM t_order WHERE user_id = ?1 OR user_id = ?2 OR order_id = ?1 ORDER BY order_id`, []any{3, 5}},
		{`SELECT order_id, user_id FROM t_order WHERE user_id = $2 AND order_id > ? ORDER BY order_id`, []any{100, 3}},
		{`SELECT order_id, user_id FROM t_order WHERE user_id = $2 AND order_id > ?1 ORDER BY order_id`, []any{0, 2}},
		{`SELECT order_id, user_id FROM t_order WHERE user_id = ?2 AND order_id > ?1 AND status <> ? ORDER BY order_id`, []any{10, 1, "s1", "s0"}},
		{`SELECT count(*), sum(amount), min(order_id), max(amount) FROM t_order WHERE order_id > ?2 AND user_id <> ?1`, []any{4, 10}},
		{`SELECT order_id, amount FROM t_order WHERE user_id IN (?1, ?2) AND amount > ?3 ORDER BY amount DESC, order_id LIMIT ?3`, []any{1, 2, 7}},
	} {
		e.sameAnswer(t, strings.Contains(c.q, "ORDER BY"), c.q, c.args...)
	}
	// A write by ?NNN reaches the row its arguments name.
	e.both(t, `UPDATE t_order SET status = ?2 WHERE user_id = ?3 AND order_id = ?1`, 10, "moved", 1+(10*7)%5)
	e.both(t, `DELETE FROM t_order WHERE order_id = ?2 AND user_id = $1`, 1+(11*7)%5, 11)
	e.sameAnswer(t, true, `SELECT * FROM t_order ORDER BY order_id`)
}

// TestSQLiteLimitOffsetCommaIsOffsetThenCount: LIMIT a, b skips a rows and
// returns b, on one target and merged across several, as SQLite does on
// one table.
func TestSQLiteLimitOffsetCommaIsOffsetThenCount(t *testing.T) {
	e := newSQLiteParamEnv(t)
	for _, c := range []struct {
		q    string
		args []any
	}{
		{`SELECT order_id, user_id, status FROM t_order ORDER BY order_id LIMIT 5, 10`, nil},
		{`SELECT order_id, user_id FROM t_order ORDER BY order_id DESC LIMIT ?, ?`, []any{7, 4}},
		{`SELECT order_id FROM t_order ORDER BY order_id LIMIT ?2, ?1`, []any{3, 100}},
		{`SELECT order_id FROM t_order WHERE user_id = ?1 ORDER BY order_id LIMIT ?2, ?3`, []any{2, 1, 5}},
		{`SELECT order_id FROM t_order WHERE user_id = ?2 OR user_id = ?1 ORDER BY order_id LIMIT 2, 3`, []any{1, 3}},
		{`SELECT order_id, amount FROM t_order WHERE amount IS NOT NULL ORDER BY amount, order_id LIMIT /* skip */ 4 , /* take */ 6`, nil},
		{`SELECT order_id FROM t_order ORDER BY order_id LIMIT 1000, 5`, nil},
		{`SELECT order_id FROM t_order ORDER BY order_id LIMIT (2), (3)`, nil},
		{`SELECT count(*), sum(amount) FROM t_order WHERE order_id > ? LIMIT 0, 1`, []any{10}},
		{`SELECT order_id, status FROM t_order WHERE user_id = ?1 AND order_id IN (2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30) ORDER BY order_id LIMIT ?2, ?3`, []any{2, 1, 2}},
		{`SELECT order_id FROM t_order WHERE user_id = ? AND order_id IN (?, ?, ?) ORDER BY order_id DESC LIMIT ?, ?`, []any{3, 2, 4, 12, 1, 1}},
	} {
		e.sameAnswer(t, true, c.q, c.args...)
	}
}

// TestSQLiteCollateBinaryReadOnOneTargetAndAcross: ORDER BY ... COLLATE
// BINARY (a keyword to the PostgreSQL grammar sqlhook reads SQLite with)
// gives the one-table answer on one target, and across several is merged
// as SQLite orders or refused.
func TestSQLiteCollateBinaryReadOnOneTargetAndAcross(t *testing.T) {
	e := newSQLiteParamEnv(t)
	e.both(t, `UPDATE t_order SET status = 'S1' WHERE user_id = ? AND order_id = ?`, 1+(4*7)%5, 4)
	e.sameAnswer(t, true, `SELECT order_id, status FROM t_order WHERE user_id = ? AND order_id IN (2, 4, 6, 8, 10, 12) ORDER BY status COLLATE BINARY DESC, order_id`, 4)
	q := `SELECT order_id, status FROM t_order ORDER BY status COLLATE BINARY, order_id`
	want, err := readAll(e.oracle, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(e.hook, q)
	switch {
	case errors.Is(err, sqlhook.ErrUnsupported):
		t.Logf("across targets: refused: %v", err)
	case err != nil:
		t.Errorf("%s: %v, want the one-table answer or ErrUnsupported", q, err)
	case !slices.Equal(got, want):
		t.Errorf("%s:\n got %q\nwant %q", q, got, want)
	}
}

// TestSQLiteLimitCommaExpressionRefused: an expression in LIMIT a, b that
// sqlhook does not read is refused, never run as another statement.
func TestSQLiteLimitCommaExpressionRefused(t *testing.T) {
	e := newSQLiteParamEnv(t)
	for _, q := range []string{
		`SELECT order_id FROM t_order ORDER BY order_id LIMIT 1 + 1, 2`,
		`SELECT order_id FROM t_order ORDER BY order_id LIMIT 1, 2 * 2`,
	} {
		if _, err := e.oracle.Query(q); err != nil {
			t.Fatalf("oracle: %s: %v", q, err)
		}
		if _, err := readAll(e.hook, q); err == nil {
			t.Errorf("%s: ran, want a refusal", q)
		}
	}
}

// TestSQLiteNamedParametersBindAsSQLite: :name, @name and $name bind
// sql.Named arguments (and a bare ? after them the next position), on one
// target and across several, in writes and in LIMIT a, b, giving the
// one-table answer.
func TestSQLiteNamedParametersBindAsSQLite(t *testing.T) {
	e := newSQLiteParamEnv(t)
	e.both(t, `INSERT INTO t_order (order_id, user_id, status, amount) VALUES (:id, @u, $s, ?)`,
		sql.Named("s", "named"), sql.Named("u", 2), 7, sql.Named("id", 500))
	e.both(t, `UPDATE t_order SET amount = :a WHERE user_id = :u AND order_id = :id`,
		sql.Named("id", 12), sql.Named("u", 1+(12*7)%5), sql.Named("a", 99))
	e.checkPlacement(t, 121)
	for _, c := range []struct {
		q    string
		args []any
	}{
		{`SELECT order_id FROM t_order WHERE user_id = :u ORDER BY order_id`, []any{sql.Named("u", 2)}},
		{`SELECT order_id, amount FROM t_order WHERE user_id = @u AND order_id IN ($a, :b) ORDER BY order_id`, []any{sql.Named("a", 12), sql.Named("b", 2), sql.Named("u", 1+(12*7)%5)}},
		{`SELECT * FROM t_order WHERE order_id = :id AND user_id = ?`, []any{sql.Named("id", 500), 2}},
		{`SELECT order_id FROM t_order ORDER BY order_id LIMIT :o, :n`, []any{sql.Named("n", 3), sql.Named("o", 4)}},
		{`SELECT order_id, status FROM t_order WHERE user_id = :u OR status = ?2 ORDER BY order_id LIMIT ?, :n`, []any{sql.Named("u", 3), "named", 1, sql.Named("n", 4)}},
		{`SELECT count(*), sum(amount) FROM t_order WHERE user_id <> :u`, []any{sql.Named("u", 2)}},
	} {
		e.sameAnswer(t, true, c.q, c.args...)
	}
	if _, err := readAll(e.hook, `SELECT order_id FROM t_order WHERE user_id = :u`, sql.Named("v", 2)); err == nil {
		t.Errorf("a missing named argument ran; SQLite fails")
	}
}

// checkPlacement opens each data source directly: every row sits in the
// table its user_id and order_id route to.
func (e *sqliteParamEnv) checkPlacement(t *testing.T, rows int) {
	t.Helper()
	total := 0
	for ds, dsn := range e.dsn {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for tb := range 2 {
			var n, wrong int
			q := fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE user_id %% 2 <> %d OR order_id %% 2 <> %d) FROM t_order_%d`, ds, tb, tb)
			if err := db.QueryRow(q).Scan(&n, &wrong); err != nil {
				t.Fatal(err)
			}
			if wrong != 0 {
				t.Errorf("ds_%d.t_order_%d holds %d rows routed elsewhere", ds, tb, wrong)
			}
			total += n
		}
	}
	if total != rows {
		t.Errorf("%d rows across the tables, want %d", total, rows)
	}
}

// TestSQLiteLimitEdgeValuesAgreeOrRefuse: the values SQLite gives a
// meaning of its own in LIMIT a, b (a negative count is no limit, a
// negative offset is none, text holding an integer or an integral float is
// that integer) give the one-table answer across targets, or are refused;
// those SQLite fails on (NULL, 2.5) fail through sqlhook too.
func TestSQLiteLimitEdgeValuesAgreeOrRefuse(t *testing.T) {
	e := newSQLiteParamEnv(t)
	const q = `SELECT order_id FROM t_order WHERE order_id > 100 ORDER BY order_id LIMIT ?, ?`
	for _, args := range [][]any{{-1, 5}, {-3, -1}, {2, -1}, {2, -7}, {"2", "3"}, {0, 0}, {2.0, 3.0}, {2.5, 3}, {nil, 3}, {2, nil}} {
		want, err := readAll(e.oracle, q, args...)
		if err != nil {
			t.Logf("%v: SQLite fails (%v)", args, err)
			if _, err := readAll(e.hook, q, args...); err == nil {
				t.Errorf("%v: sqlhook answers where SQLite fails", args)
			}
			continue
		}
		got, err := readAll(e.hook, q, args...)
		switch {
		case err != nil:
			t.Logf("%v: refused: %v", args, err)
		case !slices.Equal(got, want):
			t.Errorf("%v:\n got %q\nwant %q", args, got, want)
		}
	}
}
