package difftest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// These read through sqlhook (scatter, binary collation declared) over two
// data sources of two tables each, and through database/sql over one
// table holding the same rows: every statement must give the one table's
// rows (as a multiset without ORDER BY) or be refused. They cover what the
// merge engine decides in the planners' hands: SQLite's comparison
// affinity in HAVING, SQLite times (refused), MySQL arithmetic on AVG
// (refused), NULL placement, LIMIT/OFFSET extremes, text orders.

func scan(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return out, err
		}
		var sb strings.Builder
		for _, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			fmt.Fprintf(&sb, "%T:%v|", v, v)
		}
		out = append(out, sb.String())
	}
	return out, rows.Err()
}

func TestSQLHookReadsOnPostgreSQLEqualOneTableOrAreRefused(t *testing.T) {
	ds0, ds1, orc := dbtest.Postgres(t, "mergeatk_e2e0"), dbtest.Postgres(t, "mergeatk_e2e1"), dbtest.Postgres(t, "mergeatk_e2eo")
	runE2E(t, "pgx", fmt.Sprintf("  ds_0: {driver: pgx, dsn: %q}\n  ds_1: {driver: pgx, dsn: %q}\n", ds0, ds1), orc, pgQueries, strings.ReplaceAll(ddl, "DATETIME", "timestamptz"))
}

func TestSQLHookReadsOnMariaDBEqualOneTableOrAreRefused(t *testing.T) {
	ds0, ds1, orc := dbtest.MySQL(t, "mergeatk_e2e0"), dbtest.MySQL(t, "mergeatk_e2e1"), dbtest.MySQL(t, "mergeatk_e2eo")
	runE2E(t, "mysql", fmt.Sprintf("  ds_0: {driver: mysql, dsn: %q}\n  ds_1: {driver: mysql, dsn: %q}\n", ds0, ds1), orc, myQueries, strings.ReplaceAll(ddl, "status TEXT", "status VARCHAR(8) COLLATE utf8mb4_bin"))
}

// e2eRules shard t_order over two data sources of two tables each.
const e2eRules = `rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}
  shardingAlgorithms:
    by_user: {type: INLINE, props: {algorithm-expression: "ds_${user_id % 2}"}}
    by_order: {type: MOD, props: {sharding-count: 2}}
`

const ddl = `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status TEXT, k INTEGER, amount REAL, d DECIMAL(10,2), created DATETIME)`

func TestSQLHookReadsOnSQLiteEqualOneTableOrAreRefused(t *testing.T) {
	dir := t.TempDir()
	runE2E(t, "sqlite", fmt.Sprintf("  ds_0: {driver: sqlite, dsn: %q}\n  ds_1: {driver: sqlite, dsn: %q}\n", filepath.Join(dir, "ds_0.db"), filepath.Join(dir, "ds_1.db")), filepath.Join(dir, "oracle.db"), queries, ddl)
}

func runE2E(t *testing.T, drv, sources, oracle, queries, ddl string) {
	cfg, err := shardconf.Parse([]byte(`
dataSources:
` + sources + e2eRules))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg, sqlhook.WithScatter(), sqlhook.WithBinaryCollation())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	or, _ := sql.Open(drv, oracle)
	defer or.Close()
	ctx := context.Background()
	for _, x := range []*sql.DB{db, or} {
		if _, err := x.ExecContext(ctx, ddl); err != nil {
			t.Fatal(err)
		}
	}
	statuses := []any{"a", "B", "10", "9", nil, "", "a "}
	creates := []any{"2024-01-01 10:00:00", "2024-01-01 09:00:00", "2024-01-01 10:00:00.5", nil}
	for i := 0; i < 60; i++ {
		var k any = i % 5
		if i%7 == 0 {
			k = nil
		}
		var amt any = float64(i%9) / 4
		if i%11 == 0 {
			amt = nil
		}
		args := []any{i + 1, i % 4, statuses[i%len(statuses)], k, amt, fmt.Sprintf("%d.%02d", i%13, i%7), creates[i%len(creates)]}
		for _, x := range []*sql.DB{db, or} {
			ins := `INSERT INTO t_order (order_id, user_id, status, k, amount, d, created) VALUES (?, ?, ?, ?, ?, ?, ?)`
			if drv == "pgx" {
				ins = `INSERT INTO t_order (order_id, user_id, status, k, amount, d, created) VALUES ($1, $2, $3, $4, $5, $6, $7)`
			}
			if _, err := x.ExecContext(ctx, ins, args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	compareReads(t, drv, db, or, queries)

}

const queries = `
SELECT t_order.k * 2 FROM t_order
SELECT MAX(t_order.k), t_order.status FROM t_order GROUP BY t_order.status
SELECT CAST(k AS INTEGER), COUNT(*) FROM t_order GROUP BY CAST(k AS INTEGER) HAVING CAST(k AS INTEGER) > '2' ORDER BY 1
SELECT k + 0, COUNT(*) FROM t_order GROUP BY k + 0 HAVING k + 0 > '2' ORDER BY 1
SELECT status, COUNT(*) FROM t_order GROUP BY status HAVING status > 5 ORDER BY 1
SELECT CAST(status AS TEXT), COUNT(*) FROM t_order GROUP BY CAST(status AS TEXT) HAVING CAST(status AS TEXT) > 5 ORDER BY 1
SELECT order_id FROM t_order ORDER BY order_id LIMIT 9223372036854775807 OFFSET 55
SELECT order_id FROM t_order ORDER BY order_id LIMIT -1 OFFSET 57
SELECT order_id FROM t_order ORDER BY order_id LIMIT 3, 2
SELECT order_id FROM t_order ORDER BY k DESC NULLS FIRST, order_id DESC LIMIT 9
SELECT order_id FROM t_order ORDER BY k + 0 DESC, order_id LIMIT 9
SELECT order_id FROM t_order ORDER BY -amount, order_id LIMIT 9
SELECT DISTINCT k FROM t_order ORDER BY k IS NULL, k
SELECT k FROM t_order GROUP BY k ORDER BY AVG(amount), k
SELECT k FROM t_order GROUP BY k ORDER BY AVG(amount) DESC, k LIMIT 2
SELECT k, AVG(amount) FROM t_order GROUP BY k HAVING AVG(amount) > 1 ORDER BY k
SELECT k FROM t_order GROUP BY k HAVING SUM(k) / COUNT(*) > 2 ORDER BY k
SELECT k FROM t_order GROUP BY k HAVING SUM(amount) * 1.0 / COUNT(*) >= 1.1 ORDER BY k
SELECT MIN(status), MAX(status) FROM t_order
SELECT status, COUNT(*) FROM t_order GROUP BY status ORDER BY status DESC
SELECT COUNT(*) FROM t_order WHERE k IS NULL
SELECT k, COUNT(*) FROM t_order WHERE 1 = 0 GROUP BY k
SELECT COUNT(*), MIN(k), AVG(k), SUM(k) FROM t_order WHERE 1 = 0
SELECT k, status FROM t_order GROUP BY k, status HAVING COUNT(*) > 1 ORDER BY k DESC, status
SELECT DISTINCT amount FROM t_order ORDER BY amount DESC LIMIT 4 OFFSET 1
SELECT COUNT(*) + 1, COUNT(k) - COUNT(*), MAX(k) * MIN(k) FROM t_order
SELECT k, COUNT(*) * 100 / (SELECT 1) FROM t_order GROUP BY k
SELECT k, SUM(amount) / 0, COUNT(*) / 0 FROM t_order GROUP BY k ORDER BY k
SELECT AVG(k) FROM t_order
SELECT AVG(CAST(k AS REAL)), AVG(k * 1.0) FROM t_order
SELECT k, MAX(status) FROM t_order GROUP BY k HAVING MAX(status) > 'B' ORDER BY k
SELECT k, MAX(status) FROM t_order GROUP BY k HAVING MAX(status) = 'a' ORDER BY k
SELECT order_id, status FROM t_order ORDER BY status, order_id LIMIT 12
SELECT status, COUNT(DISTINCT k) FROM t_order GROUP BY status ORDER BY 2 DESC, 1
SELECT k, SUM(amount) s FROM t_order GROUP BY k ORDER BY s DESC NULLS LAST, k
SELECT k, SUM(amount) FROM t_order GROUP BY k HAVING SUM(amount) IS NOT NULL AND NOT (k = 2 OR k = 3) ORDER BY k
`

// compareReads runs each query through sqlhook (db) and on the one table
// (or): the rows must be equal (as multisets where SQL leaves the order
// open), or sqlhook must refuse.
func compareReads(t *testing.T, drv string, db, or *sql.DB, queries string) {
	ctx := context.Background()
	for _, q := range strings.Split(queries, "\n") {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		// MariaDB returns groups in GROUP BY order unless told ORDER BY NULL.
		ordered := (strings.Contains(q, "ORDER BY") || (drv == "mysql" && strings.Contains(q, "GROUP BY"))) &&
			!strings.Contains(q, "ORDER BY NULL")
		rs, err := db.QueryContext(ctx, q)
		var got []string
		if err == nil {
			got, err = scan(rs)
		}
		rw, werr := or.QueryContext(ctx, q)
		var want []string
		if werr == nil {
			want, werr = scan(rw)
		}
		if err != nil {
			if !errors.Is(err, sqlhook.ErrUnsupported) && werr == nil {
				t.Errorf("%s: %v, neither a refusal nor the database's error", q, err)
			}
			continue
		}
		if !ordered {
			sort.Strings(got)
			sort.Strings(want)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || werr != nil {
			t.Errorf("DIFF %s\n got  %v\n want %v %v", q, got, want, werr)
		}
	}
}

const pgQueries = `
SELECT t_order.k * 2 FROM t_order
SELECT MAX(t_order.k), t_order.status FROM t_order GROUP BY t_order.status
SELECT k, COUNT(*) FROM t_order GROUP BY k ORDER BY k DESC NULLS LAST
SELECT DISTINCT k FROM t_order ORDER BY k NULLS FIRST
SELECT status, COUNT(*) FROM t_order GROUP BY status
SELECT k, MIN(status), MAX(status) FROM t_order GROUP BY k ORDER BY k
SELECT k, COUNT(*) FROM t_order GROUP BY k HAVING k IN (1, 2) ORDER BY 1
SELECT order_id FROM t_order ORDER BY amount DESC NULLS LAST, order_id LIMIT 5 OFFSET 40
SELECT k, COUNT(*) c FROM t_order GROUP BY k ORDER BY c DESC, k NULLS FIRST LIMIT 3
SELECT k, SUM(d), AVG(d), MIN(d) FROM t_order GROUP BY k HAVING SUM(d) > 55 ORDER BY 1
SELECT COUNT(*), COUNT(DISTINCT k), SUM(DISTINCT d) FROM t_order
SELECT DISTINCT d FROM t_order ORDER BY d DESC LIMIT 5
SELECT order_id, created FROM t_order ORDER BY created, order_id LIMIT 8
SELECT DISTINCT created FROM t_order ORDER BY 1
SELECT created, COUNT(*) FROM t_order GROUP BY created ORDER BY 1 NULLS FIRST
SELECT order_id, created FROM t_order ORDER BY created DESC NULLS LAST, order_id
SELECT k, AVG(k), AVG(d), SUM(d), AVG(amount) FROM t_order GROUP BY k ORDER BY k
SELECT AVG(k)::numeric(10,3), AVG(d) * 3, SUM(d) / COUNT(*), COUNT(*) / 7, COUNT(*)::float8 / 7 FROM t_order
SELECT k, COUNT(*) FROM t_order GROUP BY k HAVING AVG(d) > 5.9 ORDER BY k
SELECT k, COUNT(*) FROM t_order GROUP BY k HAVING AVG(d) > 5.9 ORDER BY AVG(d) DESC
SELECT order_id FROM t_order ORDER BY status COLLATE "C", order_id LIMIT 10
SELECT DISTINCT status COLLATE "C" FROM t_order ORDER BY 1
SELECT order_id FROM t_order ORDER BY k USING >, order_id LIMIT 10
SELECT MIN(d), MAX(d), MIN(k), MAX(amount) FROM t_order
SELECT k, STDDEV(d) FROM t_order GROUP BY k
SELECT k, COUNT(*) FILTER (WHERE d > 3) FROM t_order GROUP BY k
SELECT DISTINCT ON (k) k, order_id FROM t_order ORDER BY k, order_id
SELECT k, SUM(k), SUM(k::int2), SUM(order_id) FROM t_order GROUP BY k ORDER BY k
SELECT k FROM t_order GROUP BY k HAVING SUM(d) - MIN(d) * 2 > 20 ORDER BY k
SELECT SUM(d) / 0 FROM t_order
SELECT k, MAX(created) - MIN(created) FROM t_order GROUP BY k ORDER BY k
SELECT date_trunc('hour', created) h, COUNT(*) FROM t_order GROUP BY 1 ORDER BY 1
SELECT k, BOOL_AND(d > 1) FROM t_order GROUP BY k ORDER BY k
SELECT order_id FROM t_order ORDER BY created NULLS FIRST, order_id LIMIT 5 OFFSET 2
`

const myQueries = `
SELECT t_order.k * 2 FROM t_order
SELECT MAX(t_order.k), t_order.status FROM t_order GROUP BY t_order.status
SELECT t_order.k * 2 FROM t_order ORDER BY t_order.k * 2, 1
SELECT DISTINCT status FROM t_order ORDER BY status DESC
SELECT k, AVG(DISTINCT d), SUM(DISTINCT d), COUNT(DISTINCT d, k) FROM t_order GROUP BY k
SELECT k, MIN(created), MAX(created) FROM t_order GROUP BY k
SELECT COUNT(*) FROM t_order LIMIT 0
SELECT k FROM t_order GROUP BY k HAVING k IN (1, 2)
SELECT k, COUNT(*) AS c FROM t_order GROUP BY k HAVING c > 9
SELECT k, COUNT(*) FROM t_order GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 2 OFFSET 1
SELECT order_id FROM t_order ORDER BY IF(k IS NULL, 1, 0), k, order_id LIMIT 5
SELECT DISTINCT k, k FROM t_order
SELECT k, COUNT(*) FROM t_order GROUP BY k, k
SELECT COUNT(DISTINCT k), COUNT(DISTINCT status) FROM t_order
SELECT status, COUNT(*), MIN(order_id) FROM t_order GROUP BY status ORDER BY status
SELECT k, COUNT(*) FROM t_order GROUP BY k HAVING MIN(status) = 'a'
SELECT order_id, amount FROM t_order ORDER BY amount DESC, order_id DESC LIMIT 4 OFFSET 50
SELECT k, SUM(k), SUM(order_id), MAX(order_id) - MIN(order_id) FROM t_order GROUP BY k
SELECT k, COUNT(*) FROM t_order WHERE created >= '2024-01-01 10:00:00' GROUP BY k
SELECT k, COUNT(*) FROM t_order GROUP BY k ORDER BY NULL
SELECT DISTINCT k FROM t_order ORDER BY k DESC LIMIT 2
SELECT SQL_NO_CACHE k, COUNT(*) FROM t_order GROUP BY k
SELECT k, COUNT(*) FROM t_order GROUP BY k HAVING COUNT(*) > 1.5 ORDER BY 1
SELECT k, MAX(amount) - MIN(amount) FROM t_order GROUP BY k ORDER BY 2, 1
SELECT DISTINCT created FROM t_order
SELECT created, COUNT(*) FROM t_order GROUP BY created
SELECT order_id, created FROM t_order ORDER BY created DESC, order_id
SELECT k, AVG(k), AVG(d), SUM(d), AVG(amount) FROM t_order GROUP BY k ORDER BY k
SELECT AVG(k) * 3, AVG(d) * 3, SUM(d) / COUNT(*), COUNT(*) / 7 FROM t_order
SELECT k, COUNT(*) FROM t_order GROUP BY k HAVING AVG(d) > 5.9 ORDER BY k
SELECT k, COUNT(*) FROM t_order GROUP BY k
SELECT status, COUNT(*) FROM t_order GROUP BY status
SELECT DISTINCT status FROM t_order
SELECT status, COUNT(*) FROM t_order GROUP BY status ORDER BY status DESC
SELECT order_id, status FROM t_order ORDER BY status, order_id LIMIT 12
SELECT MIN(status), MAX(status), MIN(d), MAX(amount) FROM t_order
SELECT k, MIN(k) - COUNT(*) FROM t_order GROUP BY k ORDER BY k
SELECT k, SUM(d) / 3 FROM t_order GROUP BY k ORDER BY k
SELECT k, COUNT(*) FROM t_order GROUP BY k HAVING k > '2'
SELECT k, COUNT(*) FROM t_order GROUP BY k HAVING SUM(d) = '61.36'
SELECT k, COUNT(*) FROM t_order GROUP BY k WITH ROLLUP
SELECT k, GROUP_CONCAT(status) FROM t_order GROUP BY k
SELECT k, BIT_OR(k) FROM t_order GROUP BY k
SELECT order_id FROM t_order ORDER BY amount DESC, order_id LIMIT 3, 4
SELECT k, SUM(amount) s FROM t_order GROUP BY k ORDER BY s DESC, k
`
