package sqlhook_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// selRules: t_sale over two data sources by user_id and two tables in
// each by id.
const selRules = `
dataSources:
  ds_0: {driver: %s, dsn: %q}
  ds_1: {driver: %s, dsn: %q}
rules:
- !SHARDING
  tables:
    t_sale:
      actualDataNodes: ds_${0..1}.t_sale_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`

// selEnv is t_sale through sqlhook over two data sources, and o_sale, one
// unsharded table holding the same rows, the oracle.
type selEnv struct {
	name   string
	db     *sql.DB // through sqlhook
	oracle *sql.DB
	dollar bool
}

type selBackend struct {
	name, driver string
	dsn          [3]string // ds_0, ds_1, oracle
	schema       string    // CREATE TABLE %s (...)
	dollar       bool
}

func selBackends(t *testing.T) []selBackend { return selBackendsNamed(t, "sqlsel") }

// selBackendsNamed is selBackends on databases named prefix_0, prefix_1
// and prefix_oracle.
func selBackendsNamed(t *testing.T, prefix string) []selBackend {
	dir := t.TempDir()
	return []selBackend{
		{name: "postgres", driver: "pgx", dollar: true,
			dsn: [3]string{dbtest.Postgres(t, prefix+"_0"), dbtest.Postgres(t, prefix+"_1"), dbtest.Postgres(t, prefix+"_oracle")},
			schema: `CREATE TABLE %s (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, grp TEXT, amount INT,
				price NUMERIC(10,2), score DOUBLE PRECISION, note TEXT, dur INTERVAL)`},
		{name: "mariadb", driver: "mysql",
			dsn: [3]string{dbtest.MySQL(t, prefix+"_0"), dbtest.MySQL(t, prefix+"_1"), dbtest.MySQL(t, prefix+"_oracle")},
			schema: `CREATE TABLE %s (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, grp VARCHAR(10), amount INT,
				price DECIMAL(10,2), score DOUBLE, note VARCHAR(20), dur TIME)`},
		{name: "sqlite", driver: "sqlite",
			dsn: [3]string{filepath.Join(dir, "s0.db"), filepath.Join(dir, "s1.db"), filepath.Join(dir, "so.db")},
			schema: `CREATE TABLE %s (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, grp TEXT, amount INT,
				price NUMERIC(10,2), score REAL, note TEXT, dur TEXT)`},
	}
}

// openSel creates the tables, fills both sides with the same rows and
// opens t_sale through sqlhook.
func openSel(t *testing.T, b selBackend, opts ...sqlhook.Option) selEnv {
	t.Helper()
	var direct [3]*sql.DB
	for i, dsn := range b.dsn {
		d, err := sql.Open(b.driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		direct[i] = d
		tables := []string{"t_sale_0", "t_sale_1"}
		if i == 2 {
			tables = []string{"o_sale"}
		}
		for _, tb := range tables {
			if _, err := d.Exec(fmt.Sprintf(b.schema, tb)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, selRules, b.driver, b.dsn[0], b.driver, b.dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg, append([]sqlhook.Option{sqlhook.WithScatter()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := selEnv{name: b.name, db: db, oracle: direct[2], dollar: b.dollar}
	ins := e.q(`INSERT INTO %s (id, user_id, grp, amount, price, score, note, dur) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	for i := 1; i <= 48; i++ {
		grp := []any{"a", "B", "c", nil}[i%4]
		var amount any = (i*37)%23 - 5
		if i%5 == 0 {
			amount = nil
		}
		price := fmt.Sprintf("%d.%02d", (i*13)%50, (i*7)%4*25) // exact in binary: SQLite stores it as a REAL
		score := float64((i*3)%17) * 0.5
		note := []string{"x", "Y", "z", "Ab", "ab"}[i%5]
		dur := fmt.Sprintf("%d days", i%12)
		if b.driver == "mysql" {
			dur = fmt.Sprintf("%02d:00:00", i%12)
		}
		row := []any{i, i%7 + 1, grp, amount, price, score, note, dur}
		if _, err := db.Exec(fmt.Sprintf(ins, "t_sale"), row...); err != nil {
			t.Fatal(err)
		}
		if _, err := e.oracle.Exec(fmt.Sprintf(ins, "o_sale"), row...); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// q spells ? placeholders as $1, $2, ... for PostgreSQL.
func (e selEnv) q(s string) string {
	if !e.dollar {
		return s
	}
	var out strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			out.WriteString("$" + strconv.Itoa(n))
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}

// result is a query's column names and rows, each row as text.
type result struct {
	cols []string
	rows []string
}

func readResult(rows *sql.Rows) (result, error) {
	defer rows.Close()
	var r result
	var err error
	if r.cols, err = rows.Columns(); err != nil {
		return r, err
	}
	for rows.Next() {
		vals := make([]any, len(r.cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return r, err
		}
		var parts []string
		for _, v := range vals {
			switch x := v.(type) {
			case nil:
				parts = append(parts, "NULL")
			case []byte:
				parts = append(parts, string(x))
			case time.Time:
				parts = append(parts, x.UTC().Format(time.RFC3339Nano))
			case float64:
				parts = append(parts, strconv.FormatFloat(x, 'g', -1, 64))
			default:
				parts = append(parts, fmt.Sprint(x))
			}
		}
		r.rows = append(r.rows, strings.Join(parts, " | "))
	}
	return r, rows.Err()
}

// agree runs q on t_sale through sqlhook and on o_sale, and requires the
// same column names and rows (in order when ordered).
func (e selEnv) agree(t *testing.T, q string, ordered bool, args ...any) {
	t.Helper()
	q = e.q(q)
	rows, err := e.db.Query(q, args...)
	if err != nil {
		t.Errorf("%s: %s: %v", e.name, q, err)
		return
	}
	got, err := readResult(rows)
	if err != nil {
		t.Errorf("%s: %s: reading: %v", e.name, q, err)
		return
	}
	orows, err := e.oracle.Query(oracleTables.Replace(q), args...)
	if err != nil {
		t.Fatalf("%s: oracle: %s: %v", e.name, q, err)
	}
	want, err := readResult(orows)
	if err != nil {
		t.Fatalf("%s: oracle: %s: %v", e.name, q, err)
	}
	if !slices.Equal(got.cols, want.cols) {
		t.Errorf("%s: %s:\ncolumns %q\n   want %q", e.name, q, got.cols, want.cols)
	}
	if !ordered {
		slices.Sort(got.rows)
		slices.Sort(want.rows)
	}
	if !slices.Equal(got.rows, want.rows) {
		t.Errorf("%s: %s:\n got %q\nwant %q", e.name, q, got.rows, want.rows)
	}
}

// oracleTables names the oracle's tables in a statement on the logic ones.
var oracleTables = strings.NewReplacer("t_sale", "o_sale", "t_line", "o_line", "t_kind", "o_kind")

// refused requires q to fail with ErrUnsupported.
func (e selEnv) refused(t *testing.T, q string, args ...any) {
	t.Helper()
	q = e.q(q)
	rows, err := e.db.Query(q, args...)
	if err == nil {
		_, err = readResult(rows)
	}
	if !errors.Is(err, sqlhook.ErrUnsupported) {
		t.Errorf("%s: %s: got %v, want ErrUnsupported", e.name, q, err)
	}
}

func TestScatterReadsGiveTheSingleTableAnswer(t *testing.T) {
	for _, b := range selBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			// GROUP BY + HAVING + ORDER BY an aggregate + LIMIT.
			e.agree(t, `SELECT user_id, COUNT(*), SUM(amount) FROM t_sale GROUP BY user_id HAVING COUNT(*) > ? ORDER BY SUM(amount) DESC, user_id LIMIT 4`, true, 6)
			e.agree(t, `SELECT user_id, MIN(amount) AS lo, MAX(amount) FROM t_sale GROUP BY user_id HAVING SUM(amount) BETWEEN 10 AND 60 OR MIN(amount) IS NULL ORDER BY 1 LIMIT 5 OFFSET 1`, true)
			e.agree(t, `SELECT COUNT(*) FROM t_sale GROUP BY amount ORDER BY COUNT(*) DESC, MIN(id)`, true)
			e.agree(t, `SELECT user_id FROM t_sale GROUP BY user_id HAVING COUNT(amount) < 7`, false)
			// DISTINCT.
			e.agree(t, `SELECT DISTINCT user_id FROM t_sale`, false)
			e.agree(t, `SELECT DISTINCT amount, user_id FROM t_sale ORDER BY amount DESC, user_id LIMIT 6`, true)
			// AVG on integer, decimal and double columns.
			e.agree(t, `SELECT AVG(amount), AVG(price), AVG(score) FROM t_sale`, true)
			e.agree(t, `SELECT user_id, AVG(amount), AVG(price) FROM t_sale GROUP BY user_id ORDER BY user_id`, true)
			e.agree(t, `SELECT AVG(amount) FROM t_sale WHERE id > 1000`, true)
			// COUNT(DISTINCT), SUM(DISTINCT), AVG(DISTINCT).
			e.agree(t, `SELECT COUNT(DISTINCT amount), SUM(DISTINCT amount), AVG(DISTINCT amount), COUNT(*) FROM t_sale`, true)
			e.agree(t, `SELECT user_id, COUNT(DISTINCT amount) FROM t_sale GROUP BY user_id ORDER BY user_id`, true)
			// NULL placement, per dialect and as written.
			e.agree(t, `SELECT id, amount FROM t_sale ORDER BY amount, id LIMIT 12`, true)
			e.agree(t, `SELECT id, amount FROM t_sale ORDER BY amount DESC, id LIMIT 12`, true)
			// A sort key that is not selected.
			e.agree(t, `SELECT id FROM t_sale ORDER BY amount DESC, id LIMIT 9`, true)
			e.agree(t, `SELECT id, user_id FROM t_sale ORDER BY price * 2, id DESC LIMIT 7 OFFSET 2`, true)
			e.agree(t, `SELECT * FROM t_sale ORDER BY score, id LIMIT 5`, true)
			// Column names are the database's own.
			e.agree(t, `SELECT COUNT(*), SUM(amount), MIN(id) FROM t_sale`, true)
			e.agree(t, `SELECT COUNT(*), SUM(amount) FROM t_sale WHERE user_id = 3 AND id = 2`, true)
			// Text is ordered only under a binary collation.
			e.refused(t, `SELECT id, note FROM t_sale ORDER BY note, id`)
			e.refused(t, `SELECT MAX(note) FROM t_sale`)
			// Aggregates inside expressions and other forms no merge answers.
			e.agree(t, `SELECT COUNT(*) + 1 FROM t_sale`, true)
			e.refused(t, `SELECT ABS(MIN(amount)) FROM t_sale`)
			e.agree(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY user_id HAVING COUNT(*) * 2 > 13`, false)
			e.refused(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY user_id HAVING ABS(SUM(amount)) > 3`)
		})
	}
}

func TestScatterReadsPerDialect(t *testing.T) {
	for _, b := range selBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			switch b.name {
			case "postgres":
				e.agree(t, `SELECT id, amount FROM t_sale ORDER BY amount NULLS FIRST, id LIMIT 8`, true)
				e.agree(t, `SELECT id, amount FROM t_sale ORDER BY amount DESC NULLS LAST, id LIMIT 8`, true)
				e.agree(t, `SELECT id FROM t_sale ORDER BY id USING > LIMIT 5`, true)
				e.agree(t, `SELECT id, note FROM t_sale ORDER BY note COLLATE "C", id LIMIT 10`, true)
				e.agree(t, `SELECT grp, COUNT(*) FROM t_sale GROUP BY grp`, false)
				e.agree(t, `SELECT COUNT(DISTINCT note) FROM t_sale`, true)
				e.agree(t, `SELECT DISTINCT note FROM t_sale`, false)
				e.agree(t, `SELECT MIN(dur), MAX(dur) FROM t_sale`, true)
				e.refused(t, `SELECT SUM(dur) FROM t_sale`)
				e.refused(t, `SELECT id FROM t_sale ORDER BY id USING ~<~`)
				e.refused(t, `SELECT DISTINCT ON (user_id) id FROM t_sale ORDER BY user_id, id`)
				e.refused(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY ROLLUP (user_id)`)
				e.refused(t, `SELECT id FROM t_sale ORDER BY id FETCH FIRST 3 ROWS WITH TIES`)
				e.refused(t, `SELECT id, ROW_NUMBER() OVER (ORDER BY id) FROM t_sale`)
			case "mariadb":
				e.agree(t, `SELECT id, note FROM t_sale ORDER BY note COLLATE utf8mb4_bin, id LIMIT 10`, true)
				e.refused(t, `SELECT grp, COUNT(*) FROM t_sale GROUP BY grp`)
				e.refused(t, `SELECT SUM(amount / 3) FROM t_sale`)
				e.refused(t, `SELECT AVG(price / 7) FROM t_sale`)
				e.refused(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY user_id WITH ROLLUP`)
				e.agree(t, `SELECT user_id, COUNT(*) AS n FROM t_sale GROUP BY user_id HAVING n > 6 ORDER BY n, user_id`, true)
				// MySQL reads a HAVING name as an output alias first, even
				// when the table has a column of that name.
				e.agree(t, `SELECT user_id, COUNT(*) AS amount FROM t_sale GROUP BY user_id HAVING amount > 6 ORDER BY user_id`, true)
				e.agree(t, `SELECT user_id, SUM(amount) / COUNT(*) AS r FROM t_sale GROUP BY user_id HAVING r > 5 ORDER BY r DESC, user_id`, true)
			case "sqlite":
				e.agree(t, `SELECT id, amount FROM t_sale ORDER BY amount NULLS LAST, id LIMIT 8`, true)
				e.agree(t, `SELECT id, note FROM t_sale ORDER BY note COLLATE "BINARY", id LIMIT 10`, true)
				e.agree(t, `SELECT id, note FROM t_sale ORDER BY note COLLATE BINARY DESC, id LIMIT 10`, true)
				e.agree(t, `SELECT id, note FROM t_sale ORDER BY note COLLATE NOCASE, id LIMIT 10`, true)
				e.agree(t, `SELECT id, note FROM t_sale ORDER BY note COLLATE RTRIM DESC, id LIMIT 10`, true)
				e.refused(t, `SELECT grp, COUNT(*) FROM t_sale GROUP BY grp`)
				// SQLite reads a HAVING name as the table's column first.
				e.refused(t, `SELECT user_id, COUNT(*) AS n FROM t_sale GROUP BY user_id HAVING n > 6 ORDER BY n, user_id`)
				e.refused(t, `SELECT user_id, COUNT(*) AS amount FROM t_sale GROUP BY user_id HAVING amount > 6`)
			}
		})
	}
}

func TestScatterTextUnderWithBinaryCollation(t *testing.T) {
	for _, b := range selBackends(t) {
		if b.name != "sqlite" {
			continue // their columns' collations are not binary: the option would be a false declaration
		}
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b, sqlhook.WithBinaryCollation())
			e.agree(t, `SELECT id, note FROM t_sale ORDER BY note, id LIMIT 10`, true)
			e.agree(t, `SELECT MIN(note), MAX(note), COUNT(DISTINCT note) FROM t_sale`, true)
			e.agree(t, `SELECT grp, COUNT(*) FROM t_sale GROUP BY grp ORDER BY grp`, true)
		})
	}
}

func TestScatterGroupsHavingAndEmptyResults(t *testing.T) {
	for _, b := range selBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			e.agree(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY user_id HAVING COUNT(*) IN (?, ?) ORDER BY user_id`, true, 6, 7)
			e.agree(t, `SELECT COUNT(*) FROM t_sale GROUP BY user_id HAVING user_id > 3 ORDER BY 1`, true)
			if b.name == "mariadb" {
				// MariaDB's HAVING reads names, not GROUP BY expressions.
				e.refused(t, `SELECT COUNT(*) FROM t_sale GROUP BY user_id % 3 HAVING (user_id % 3) > 0`)
			} else {
				e.agree(t, `SELECT user_id % 3, SUM(amount) FROM t_sale GROUP BY user_id % 3 HAVING user_id % 3 <= ? AND SUM(amount) > 0 ORDER BY 1`, true, 1)
				e.agree(t, `SELECT COUNT(*) FROM t_sale GROUP BY user_id % 3 HAVING (user_id % 3) > 0 ORDER BY 1`, true)
			}
			e.agree(t, `SELECT user_id, SUM(amount) AS s FROM t_sale GROUP BY user_id HAVING user_id > 3 AND NOT (SUM(amount) < 20) ORDER BY s DESC, user_id`, true)
			e.agree(t, `SELECT user_id % 3, COUNT(DISTINCT amount) FROM t_sale GROUP BY 1 HAVING COUNT(DISTINCT amount) >= 2 ORDER BY 1`, true)
			e.agree(t, `SELECT COUNT(*) FROM t_sale GROUP BY user_id ORDER BY user_id DESC LIMIT 3`, true)
			e.agree(t, `SELECT t_sale.user_id, COUNT(*) FROM t_sale GROUP BY user_id ORDER BY 1`, true)
			e.agree(t, `SELECT user_id AS user_id, COUNT(*) FROM t_sale GROUP BY user_id ORDER BY 1`, true)
			e.refused(t, `SELECT user_id % 3 AS m, COUNT(*) FROM t_sale GROUP BY m`)
			e.agree(t, `SELECT DISTINCT user_id, amount FROM t_sale ORDER BY user_id, amount DESC LIMIT 5 OFFSET 3`, true)
			// No row: one row of the empty aggregates; no group.
			e.agree(t, `SELECT COUNT(*), SUM(amount), AVG(amount), MIN(id), COUNT(DISTINCT amount) FROM t_sale WHERE id < 0`, true)
			e.agree(t, `SELECT user_id, COUNT(*) FROM t_sale WHERE id < 0 GROUP BY user_id`, true)
			e.agree(t, `SELECT MIN(price), MAX(price), MIN(score), MAX(score), SUM(price), SUM(score) FROM t_sale`, true)
			e.agree(t, `SELECT * FROM t_sale ORDER BY amount DESC, id LIMIT 3 OFFSET 1`, true)
			e.agree(t, `SELECT id FROM t_sale WHERE user_id IN (1, 2) ORDER BY price DESC, id`, true)
			// Placeholders copied into hidden columns and removed with HAVING.
			e.agree(t, `SELECT id FROM t_sale WHERE id > ? ORDER BY amount * ? DESC, id LIMIT ?`, true, 3, 2, 6)
			e.agree(t, `SELECT id FROM t_sale ORDER BY amount * ?, amount * ?, id LIMIT 9`, true, 0, -1)
			e.agree(t, `SELECT user_id, COUNT(*) FROM t_sale WHERE id > ? GROUP BY user_id HAVING SUM(amount) > ? ORDER BY MAX(amount) + 1 DESC, user_id LIMIT ?`, true, 4, 10, 3)
		})
	}
}

func TestScatterComputesExpressionsOverAggregates(t *testing.T) {
	for _, b := range selBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			e.agree(t, `SELECT COUNT(*) * 2, SUM(amount) - MIN(amount), MAX(amount) + 1, COALESCE(MAX(amount), -1), -MIN(id) FROM t_sale`, true)
			e.agree(t, `SELECT user_id, COUNT(*) * 2 AS c, SUM(price) * 2 - MIN(price), COALESCE(SUM(price), 0) FROM t_sale GROUP BY user_id ORDER BY user_id`, true)
			e.agree(t, `SELECT COALESCE(SUM(price), 0), SUM(price) * 3 FROM t_sale WHERE id < 0`, true)
			e.agree(t, `SELECT COUNT(*) * 2, SUM(amount) - MIN(amount), COALESCE(MAX(amount), -1) FROM t_sale WHERE id < 0`, true)
			e.agree(t, `SELECT user_id, SUM(amount) + 1 FROM t_sale WHERE id > ? GROUP BY user_id ORDER BY user_id`, true, 20)
			e.agree(t, `SELECT user_id, COUNT(*) * 2 AS c FROM t_sale GROUP BY user_id ORDER BY c, user_id`, true)
			e.agree(t, `SELECT user_id FROM t_sale GROUP BY user_id ORDER BY MAX(amount) - MIN(amount) DESC, user_id LIMIT 4`, true)
			e.agree(t, `SELECT SUM(amount) / COUNT(*), SUM(price) / 7 FROM t_sale`, true)
			e.agree(t, `SELECT user_id, COUNT(*) FROM t_sale GROUP BY user_id HAVING SUM(amount) / COUNT(*) > 5 ORDER BY user_id`, true)
			e.agree(t, `SELECT user_id FROM t_sale GROUP BY user_id HAVING COUNT(*) * 2 BETWEEN 10 AND 14 AND COALESCE(MAX(amount), 0) - MIN(amount) >= 10 ORDER BY 1`, true)
			if b.name != "mariadb" {
				// MariaDB 10.11 answers this over one table with one row,
				// 8, though its groups count 6 and 7 rows: not an answer to
				// reproduce.
				e.agree(t, `SELECT DISTINCT COUNT(*) + 1 FROM t_sale GROUP BY user_id`, false)
			}
		})
	}
}

// SQLite adds integers in row order; AVG goes on in floating point when a
// partial sum leaves int64, SUM fails: the merged exact sum is refused
// where some order of the rows would overflow.
func TestSQLiteSumsThatMayOverflowAreRefused(t *testing.T) {
	for _, b := range selBackends(t) {
		if b.name != "sqlite" {
			continue
		}
		e := openSel(t, b)
		for _, id := range []int{101, 102, 103, 104} {
			amount := int64(math.MaxInt64 - 10)
			if id%2 == 0 {
				amount = math.MinInt64 + 20
			}
			if _, err := e.db.Exec(`INSERT INTO t_sale (id, user_id, amount) VALUES (?, ?, ?)`, id, id%2, amount); err != nil {
				t.Fatal(err)
			}
		}
		e.refused(t, `SELECT AVG(amount) FROM t_sale WHERE id > 100`)
		e.refused(t, `SELECT user_id, SUM(amount) FROM t_sale WHERE id > 100 GROUP BY user_id`)
		e.agree(t, `SELECT user_id, AVG(amount), SUM(amount) FROM t_sale WHERE id < 100 GROUP BY user_id ORDER BY user_id`, true)
	}
}

// SQLite's driver reports a column's scan type only while a row is
// current; merged rows report it as a single target's do (GORM builds map
// values from it).
func TestMergedRowsReportTheDriversScanTypes(t *testing.T) {
	for _, b := range selBackends(t) {
		if b.name != "sqlite" {
			continue
		}
		e := openSel(t, b)
		if _, err := e.db.Exec(`ALTER TABLE t_sale ADD COLUMN flag BOOLEAN`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Exec(`UPDATE t_sale SET flag = id % 2 = 0`); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`SELECT id, flag FROM t_sale WHERE user_id = 1 AND id = 7`, `SELECT id, flag FROM t_sale WHERE user_id = 1`,
			`SELECT id, flag FROM t_sale ORDER BY id`} {
			rows, err := e.db.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				cts, err := rows.ColumnTypes()
				if err != nil {
					t.Fatal(err)
				}
				if st := cts[1].ScanType(); st == nil || st.Kind() != reflect.Bool {
					t.Errorf("%s: flag's scan type %v, want bool", q, st)
					break
				}
			}
			rows.Close()
		}
	}
}

// A prepared statement binds its merge (HAVING's constants, LIMIT) on
// each execution.
func TestPreparedMergedSelectBindsEachExecution(t *testing.T) {
	for _, b := range selBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			e := openSel(t, b)
			q := e.q(`SELECT user_id, COUNT(*), AVG(amount) FROM t_sale GROUP BY user_id HAVING COUNT(*) > ? ORDER BY SUM(amount) DESC, user_id LIMIT ?`)
			st, err := e.db.Prepare(q)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, a := range [][2]int{{6, 3}, {0, 10}, {7, 1}} {
				rows, err := st.Query(a[0], a[1])
				if err != nil {
					t.Fatal(err)
				}
				got, err := readResult(rows)
				if err != nil {
					t.Fatal(err)
				}
				orows, err := e.oracle.Query(strings.ReplaceAll(q, "t_sale", "o_sale"), a[0], a[1])
				if err != nil {
					t.Fatal(err)
				}
				want, err := readResult(orows)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.rows, want.rows) || !slices.Equal(got.cols, want.cols) {
					t.Errorf("%v: got %q %q, want %q %q", a, got.cols, got.rows, want.cols, want.rows)
				}
			}
		})
	}
}
