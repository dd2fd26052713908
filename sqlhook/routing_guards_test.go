package sqlhook

// Each test names a misroute or wrong merge sqlhook must never make (it
// routes correctly or refuses); those marked PIN pin correct behaviour.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// reviewRules is rulesYAML's t_order/t_order_item/t_dict with real DSNs.
const reviewRules = `
dataSources:
  ds_0: {driver: %s, dsn: %q}
  ds_1: {driver: %s, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snow}
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
  bindingTables: ["t_order,t_order_item"]
  broadcastTables: [t_dict]
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snow: {type: SNOWFLAKE, props: {worker-id: 5}}
`

type reviewDB struct {
	db     *sql.DB
	direct [2]*sql.DB
}

// openReview opens the rules on driver ("pgx", "mysql", "sqlite") with
// fresh databases, creates t_order (with a status column) and t_dict.
func openReview(t *testing.T, drv string, opts ...Option) reviewDB {
	t.Helper()
	var dsn [2]string
	for i := range dsn {
		name := fmt.Sprintf("sqlhook_review_%d", i)
		switch drv {
		case "pgx":
			dsn[i] = dbtest.Postgres(t, name)
		case "mysql":
			dsn[i] = dbtest.MySQL(t, name)
		default:
			dsn[i] = filepath.Join(t.TempDir(), name+".db")
		}
	}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, reviewRules, drv, dsn[0], drv, dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := reviewDB{db: db}
	for i := range dsn {
		d, err := sql.Open(drv, dsn[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		r.direct[i] = d
	}
	for _, ddl := range []string{
		`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(16))`,
		`CREATE TABLE t_dict (k VARCHAR(16) PRIMARY KEY, v VARCHAR(16))`,
	} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	return r
}

func mustRoute(t *testing.T, h *hook, q string, a ...any) *routed {
	t.Helper()
	r, err := h.route(q, args(a...))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

// routeOrRefuse routes q; a refusal with ErrUnsupported is an accepted
// outcome (it returns nil), any other error fails the test.
func routeOrRefuse(t *testing.T, h *hook, q string, a ...any) *routed {
	t.Helper()
	r, err := h.route(q, args(a...))
	if errors.Is(err, ErrUnsupported) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

// ---------------------------------------------------------------------
// 1. Writes land in the wrong physical table.

// Regression (found in review; fixed) (misrouted write, PostgreSQL and MariaDB): a fractional literal for
// an integer sharding column is routed by truncation (3.5 -> 3 -> table
// t_order_1), but both databases store it rounded (4), which belongs to
// t_order_0. The row is then invisible to `WHERE user_id = 1 AND
// order_id = 4`. Correct: refuse a non-integral literal for the sharding
// column (ErrUnsupported), or route by the value the database will store.
func TestInsertFractionalShardingLiteralLandsInWrongTable(t *testing.T) {
	for _, d := range []Dialect{PostgreSQL, MySQL} {
		h := testHook(t, d)
		r, err := h.route(`INSERT INTO t_order (order_id, user_id, status) VALUES (3.5, 1, 'x')`, nil)
		if err == nil && !strings.Contains(r.units[0].sql, "t_order_0") {
			t.Errorf("%v: 3.5 is stored as 4 (table t_order_0) but the row goes to:\n%s", d, show(r))
		}
	}
	for _, drv := range []string{"pgx", "mysql"} {
		t.Run(drv, func(t *testing.T) {
			rv := openReview(t, drv)
			if _, err := rv.db.Exec(`INSERT INTO t_order (order_id, user_id, status) VALUES (3.5, 1, 'x')`); err != nil {
				return // refusing is correct
			}
			var n int
			q := `SELECT count(*) FROM t_order WHERE user_id = 1 AND order_id = 4`
			if err := rv.db.QueryRow(q).Scan(&n); err != nil {
				t.Fatal(err)
			}
			var misplaced int
			rv.direct[1].QueryRow(`SELECT count(*) FROM t_order_1 WHERE order_id = 4`).Scan(&misplaced)
			if n != 1 {
				t.Errorf("the row stored as order_id 4 is not found by %q (%d rows); ds_1.t_order_1 holds %d row(s) with order_id 4", q, n, misplaced)
			}
		})
	}
}

// Regression (found in review; fixed) (misrouted write): the same NULL key argument used in two rows.
// Row 1 is routed by generated key k0, row 2 by k1, but both rows are
// written with the single argument $1, which is overwritten with k1: row 1
// lands in the table of k0 carrying k1 (wrong table when their parities
// differ), and both rows get the same key. Correct: give each row its own
// placeholder/key, or refuse a key placeholder shared by several rows.
func TestInsertSharedNullKeyPlaceholder(t *testing.T) {
	h := testHook(t, PostgreSQL)
	r := routeOrRefuse(t, h, `INSERT INTO t_order (order_id, user_id) VALUES ($1, 1), ($1, 1)`, nil)
	if r == nil {
		return // refused: accepted
	}
	seen := map[int64]bool{}
	for _, u := range r.units {
		for _, a := range u.args {
			id, ok := a.Value.(int64)
			if !ok {
				continue
			}
			if seen[id] && len(r.units) == 1 {
				t.Errorf("key %d written twice: %s", id, show(r))
			}
			seen[id] = true
			if !strings.Contains(u.sql, fmt.Sprintf("t_order_%d\"", id%2)) {
				t.Errorf("row with key %d (table t_order_%d) written to: %s", id, id%2, u.sql)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("two rows got %d distinct keys:\n%s", len(seen), show(r))
	}
}

// Regression (found in review; fixed) (broadcast copies diverge, MySQL): a multi-table UPDATE that sets a
// column of broadcast table t_dict, joined with sharded t_order, runs on
// ds_1 only, so only ds_1's copy of t_dict changes. PostgreSQL refuses the
// equivalent (broadcast UPDATE joined with a sharded table); the check in
// writeTarget only looks at the first table. Correct: ErrUnsupported.
func TestMySQLMultiTableUpdateOfBroadcastTable(t *testing.T) {
	h := testHook(t, MySQL)
	q := "UPDATE t_order o JOIN t_dict d ON d.k = o.status SET d.v = 'x' WHERE o.user_id = 1 AND o.order_id = 1"
	r, err := h.route(q, nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported; routed:\n%s", err, showOrNil(r))
	}
}

// Regression (found in review; fixed) (rows moved to the wrong shard, MySQL): UPDATE with a WITH clause
// skips the "UPDATE sets a sharding column" check (and WHERE is not read
// at all), so with WithScatter `SET user_id = 5` runs on every table and
// leaves user 5's row in user 1's shard. Correct: ErrUnsupported, as
// without the WITH clause.
func TestMySQLWithUpdateOfShardingColumn(t *testing.T) {
	h := testHook(t, MySQL, WithScatter())
	q := "WITH c AS (SELECT 1) UPDATE t_order SET user_id = 5 WHERE user_id = 1"
	r, err := h.route(q, nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported; routed:\n%s", err, showOrNil(r))
	}
}

// Regression (found in review; fixed) (wrong table touched, PostgreSQL): a CTE named like a logic table is
// rewritten to a physical table: `FROM t_order_item` below means the CTE,
// but becomes "t_order_item_0" AS t_order_item, so the UPDATE joins the
// real table instead of the CTE's rows. Correct: refuse (ErrUnsupported)
// or leave CTE references alone.
func TestCTEShadowingLogicTableRewritten(t *testing.T) {
	h := testHook(t, PostgreSQL)
	q := `WITH t_order_item AS (SELECT 1 AS order_id) UPDATE t_order SET status = 'x' FROM t_order_item WHERE t_order.user_id = 1 AND t_order.order_id = 1 AND t_order.order_id = t_order_item.order_id`
	r, err := h.route(q, nil)
	if err == nil && strings.Contains(show(r), "t_order_item_") {
		t.Errorf("the CTE reference was rewritten to a physical table:\n%s", show(r))
	}
}

// ---------------------------------------------------------------------
// 2. Reads routed to too few targets.

// Regression (found in review; fixed) (misrouted read, SQLite): SQLite block comments do not nest, but the
// text is handed to the PostgreSQL grammar, where they do. SQLite reads
// `... OR user_id = 2 ...`; the router reads only `user_id = 1 ...` and a
// comment, and sends the query to user 1's shard only: user 2's rows are
// silently missing. Correct: route to both data sources (or ErrParse).
func TestSQLiteNestedCommentHidesPredicate(t *testing.T) {
	h := testHook(t, SQLite)
	r := mustRoute(t, h, "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 1 /* /* */ OR user_id = 2 AND order_id = 1 -- */\n")
	ds := map[string]bool{}
	for _, u := range r.units {
		ds[u.ds] = true
	}
	if !ds["ds_0"] {
		t.Errorf("SQLite also selects user 2 (ds_0), but the query reaches only:\n%s", show(r))
	}

	// End to end: one row per user, the query should see both.
	rv := openReview(t, "sqlite")
	for _, u := range []int64{1, 2} {
		if _, err := rv.db.Exec(`INSERT INTO t_order (order_id, user_id, status) VALUES (1, ?, 'x')`, u); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	q := "SELECT count(*) FROM t_order WHERE user_id = 1 AND order_id = 1 /* /* */ OR user_id = 2 AND order_id = 1 -- */\n"
	if err := rv.db.QueryRow(q).Scan(&n); err == nil && n != 2 {
		t.Errorf("SQLite's reading of %q matches 2 rows; got %d", q, n)
	}
}

// Regression (found in review; fixed) (misrouted read, PostgreSQL): a literal under a cast is routed by
// the uncast value: 2.5::int is 3 in PostgreSQL (table t_order_1), the
// router truncates 2.5 to 2 (table t_order_0) and the row is not found.
// Correct: treat a cast value as an expression (widen the route) unless
// the cast is known not to change it.
func TestCastLiteralRoutedByUncastValue(t *testing.T) {
	h := testHook(t, PostgreSQL, WithScatter()) // a widened route needs scatter
	r := mustRoute(t, h, `SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2.5::int`)
	if !strings.Contains(show(r), "t_order_1") {
		t.Errorf("order_id = 2.5::int is order_id = 3 (t_order_1), routed to:\n%s", show(r))
	}
}

// ---------------------------------------------------------------------
// 3. Wrong arguments / LIMIT.

// Regression (found in review; fixed) (wrong result, MySQL): `LIMIT ? OFFSET ?` is restored by TiDB as
// `LIMIT ?,?` (offset first) but the placeholders keep the caller's order,
// so a single-target query runs with LIMIT 10,5 instead of LIMIT 5,10.
// Correct args: [1 3 5 10].
func TestMySQLLimitOffsetPlaceholdersSwapped(t *testing.T) {
	h := testHook(t, MySQL)
	r := mustRoute(t, h, "SELECT id FROM t_order WHERE user_id = ? AND order_id = ? LIMIT ? OFFSET ?", int64(1), int64(3), int64(10), int64(5))
	want := "ds_1: SELECT id FROM `t_order_1` WHERE user_id = ? AND order_id = ? LIMIT ? OFFSET ? [1] [3] [10] [5]\n"
	if got := show(r); got != want {
		t.Errorf("got  %s want %s", got, want)
	}
}

// Regression (found in review; fixed) (empty result, MySQL end to end): the same swap on a real server.
func TestMySQLLimitOffsetEndToEnd(t *testing.T) {
	rv := openReview(t, "mysql")
	for i := int64(0); i < 6; i++ {
		if _, err := rv.db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, 'x')", 2*i); err != nil {
			t.Fatal(err)
		}
	}
	// t_order_0 of user 1 holds order ids 0,2,...,10: LIMIT 2 OFFSET 1 is 2, 4.
	rows, err := rv.db.Query("SELECT order_id FROM t_order WHERE user_id = ? AND order_id IN (0,2,4,6,8,10) ORDER BY order_id LIMIT ? OFFSET ?", 1, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		got = append(got, id)
	}
	if fmt.Sprint(got) != "[2 4]" {
		t.Errorf("LIMIT 2 OFFSET 1 returned %v, want [2 4]", got)
	}
}

// Regression (found in review; fixed) (empty result): LIMIT ALL, or LIMIT $n with a NULL argument (no
// limit in PostgreSQL), across several targets becomes LIMIT 0 on each
// target, so the merged result is empty. Correct: no LIMIT on the targets
// (or LIMIT ALL/NULL kept).
func TestLimitAllOrNullBecomesLimitZero(t *testing.T) {
	h := testHook(t, PostgreSQL)
	for _, c := range []struct {
		q string
		a []any
	}{
		{`SELECT * FROM t_order WHERE user_id = 1 AND order_id IN (1, 2) ORDER BY id LIMIT ALL OFFSET 2`, nil},
		{`SELECT * FROM t_order WHERE user_id = $1 AND order_id IN (1, 2) ORDER BY id LIMIT $2`, []any{int64(1), nil}},
	} {
		r := mustRoute(t, h, c.q, c.a...)
		for _, u := range r.units {
			for _, a := range u.args {
				if v, ok := a.Value.(int64); ok && v == 0 {
					t.Errorf("%s: a target runs with LIMIT 0:\n%s", c.q, show(r))
				}
			}
		}
	}
}

// Regression (found in review; fixed) (wrong placeholder numbering, SQLite): SQLite numbers a bare ? one
// above the LARGEST number used so far, so in `?3 ... ?1 ... ?` the last
// one is ?4; ir.SQLiteToPG numbers it ?2 (one above the previous), so the
// rewritten statement binds argument 2 where SQLite would bind ?4 (NULL).
// Correct: number it 4 (then it needs a 4th argument) or refuse mixing.
func TestSQLiteMixedNumberedPlaceholders(t *testing.T) {
	h := testHook(t, SQLite)
	r, err := h.route(`SELECT * FROM t_order WHERE user_id = ?3 AND order_id = ?1 AND status = ?`, args(int64(1), "two", int64(3)))
	if err == nil && strings.HasSuffix(strings.TrimSpace(show(r)), "[two]") {
		t.Errorf("the bare ? bound argument 2, SQLite binds ?4:\n%s", show(r))
	}
}

// ---------------------------------------------------------------------
// 4. Wrong merges.

// Regression (found in review; fixed) (wrong result): an aggregate under an expression or a non-aggregate
// function (count(*) + 1, coalesce(sum(x), 0), IFNULL(SUM(x), 0)), and
// aggregates missing from the known lists (SQLite total(), PostgreSQL
// json_object_agg, any_value), are neither merged nor refused: each target
// returns its one row and the caller gets one row per target. Correct:
// ErrUnsupported across several targets (or a correct merge).
func TestAggregateUnderExpressionConcatenated(t *testing.T) {
	for _, c := range []struct {
		d Dialect
		q string
	}{
		{PostgreSQL, `SELECT count(*) + 1 FROM t_order WHERE user_id = 1 AND order_id IN (2, 3)`},
		{PostgreSQL, `SELECT coalesce(sum(order_id), 0) FROM t_order WHERE user_id = 1 AND order_id IN (2, 3)`},
		{PostgreSQL, `SELECT count(*)::int FROM t_order WHERE user_id = 1 AND order_id IN (2, 3)`},
		{PostgreSQL, `SELECT json_object_agg(order_id, status) FROM t_order WHERE user_id = 1 AND order_id IN (2, 3)`},
		{PostgreSQL, `SELECT any_value(status) FROM t_order WHERE user_id = 1 AND order_id IN (2, 3)`},
		{MySQL, `SELECT IFNULL(SUM(order_id), 0) FROM t_order WHERE user_id = 1 AND order_id IN (2, 3)`},
		{SQLite, `SELECT total(order_id) FROM t_order WHERE user_id = 1 AND order_id IN (2, 3)`},
	} {
		h := testHook(t, c.d)
		r, err := h.route(c.q, nil)
		if err == nil && len(r.units) > 1 && (r.merge.merge == nil || !r.merge.merge.Grouped) {
			t.Errorf("%v %s: %d one-row results concatenated, not merged", c.d, c.q, len(r.units))
		}
	}
}

// Regression (found in review; fixed) (wrong result, SQLite end to end): count(*) + 0 over two tables
// returns two rows; one table would return one row, 2.
func TestAggregateUnderExpressionEndToEnd(t *testing.T) {
	rv := openReview(t, "sqlite")
	for _, id := range []int64{2, 3} {
		if _, err := rv.db.Exec(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, 'x')`, id); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := rv.db.Query(`SELECT count(*) + 0 FROM t_order WHERE user_id = 1 AND order_id IN (2, 3)`)
	if err != nil {
		return // refusing is correct
	}
	defer rows.Close()
	var got []int64
	for rows.Next() {
		var n int64
		rows.Scan(&n)
		got = append(got, n)
	}
	if fmt.Sprint(got) != "[2]" {
		t.Errorf("count(*) + 0 = %v, want [2]", got)
	}
}

// Regression (found in review; fixed) (wrong order): a qualified ORDER BY column (o.id) always means the
// table's column, but the merge looks the bare name up among the result
// columns and finds the alias `status AS id`: rows are merged by status.
// Correct: merge by the selected o.id (column x) or refuse.
func TestOrderByQualifiedColumnMatchesAlias(t *testing.T) {
	h := testHook(t, PostgreSQL)
	r := routeOrRefuse(t, h, `SELECT status AS id, id AS x FROM t_order o WHERE user_id = 1 AND order_id IN (1, 2) ORDER BY o.id`)
	if r == nil {
		return // refused: accepted
	}
	if len(r.units) < 2 {
		t.Fatalf("expected several targets:\n%s", show(r))
	}
	// o.id is read as a hidden column after the two selected.
	cols := []string{"id", "x", "shardkey_hidden_0"}
	// Each target's rows arrive sorted by o.id.
	types := []string{"TEXT", "INT8", "INT8"}
	a := mk(cols, types, row("b", int64(1), int64(1)), row("a", int64(4), int64(4)))
	b := mk(cols, types, row("z", int64(2), int64(2)), row("c", int64(3), int64(3)))
	got, err := readAll(t, r.merge, a, b)
	check(t, "merged by o.id", got, err, "b 1", "z 2", "c 3", "a 4")
}

// Regression (found in review; fixed) (wrong order/value, MariaDB): merged ORDER BY and MIN/MAX compare
// text bytewise, but MariaDB's default collation (utf8mb4_general_ci) is
// case-insensitive: one table returns a, B; the merge returns B, a, and
// MIN(status) is 'B' instead of 'a'. Correct: refuse text merges whose
// collation is not binary, or compare with the column's collation.
func TestMergeIgnoresCollation(t *testing.T) {
	rv := openReview(t, "mysql")
	// user 1, order 2 -> ds_1.t_order_0; order 1 -> ds_1.t_order_1.
	for _, r := range []struct {
		id     int64
		status string
	}{{2, "a"}, {1, "B"}} {
		if _, err := rv.db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, ?)", r.id, r.status); err != nil {
			t.Fatal(err)
		}
	}
	// A refusal (ErrUnsupported, from Next) is accepted; a wrong order
	// or value is not.
	rows, err := rv.db.Query("SELECT status FROM t_order WHERE user_id = 1 AND order_id IN (1, 2) ORDER BY status")
	if errors.Is(err, ErrUnsupported) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		got = append(got, s)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, ErrUnsupported) {
		t.Fatal(err)
	} else if err == nil && fmt.Sprint(got) != "[a B]" {
		t.Errorf("ORDER BY status = %v, MariaDB orders one table [a B]", got)
	}
	rows.Close()
	var lo string
	if err := rv.db.QueryRow("SELECT MIN(status) FROM t_order WHERE user_id = 1 AND order_id IN (1, 2)").Scan(&lo); err != nil && !errors.Is(err, ErrUnsupported) {
		t.Fatal(err)
	} else if err == nil && lo != "a" {
		t.Errorf("MIN(status) = %q, MariaDB says 'a'", lo)
	}
}

// Regression (found in review; fixed) (duplicated rows, WithScatter): an outer join that preserves a
// broadcast table against a sharded one runs once per target, so every
// t_dict row without a match comes back once per target (4 times). One
// unsharded t_order would return it once. Correct: ErrUnsupported for a
// LEFT/RIGHT/FULL join whose preserved side is not the routed table when
// there are several targets.
func TestOuterJoinBroadcastDuplicated(t *testing.T) {
	h := testHook(t, PostgreSQL, WithScatter())
	r, err := h.route(`SELECT d.k FROM t_dict d LEFT JOIN t_order o ON o.status = d.k`, nil)
	if err == nil && len(r.units) > 1 {
		t.Errorf("outer join preserving t_dict runs on %d targets and concatenates:\n%s", len(r.units), show(r))
	}

	rv := openReview(t, "sqlite", WithScatter())
	if _, err := rv.db.Exec(`INSERT INTO t_dict (k, v) VALUES ('only', 'v')`); err != nil {
		t.Fatal(err)
	}
	rows, err := rv.db.Query(`SELECT d.k FROM t_dict d LEFT JOIN t_order o ON o.status = d.k`)
	if err != nil {
		return
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if n != 1 {
		t.Errorf("t_dict LEFT JOIN t_order returned the one t_dict row %d times", n)
	}
}

// ---------------------------------------------------------------------
// 5. Rewrites touching the wrong names; DDL that fails part-way.

// Regression (found in review; fixed) (wrong result, MySQL): the qualifier rewrite ignores scope. Inside
// the subquery `t_order` is the alias of table other, but t_order.x is
// rewritten to `t_order_1`.`x`, which now names the OUTER table (a
// correlated reference). Correct: leave the inner qualifier alone (or
// refuse).
func TestMySQLSubqueryAliasShadowingLogicName(t *testing.T) {
	h := testHook(t, MySQL)
	r := routeOrRefuse(t, h, "SELECT t_order.id FROM t_order WHERE user_id = 1 AND order_id = 1 AND EXISTS (SELECT 1 FROM other t_order WHERE t_order.x = 1)")
	if r != nil && strings.Contains(show(r), "`t_order_1`.`x`") {
		t.Errorf("the inner alias's column was rewritten to the outer table:\n%s", show(r))
	}
}

// Regression (found in review; fixed) (DDL fails part-way, after changing some tables): statements that
// give every physical table the same schema-wide name are sent table by
// table: the first succeeds, the second fails, the rest never run. The
// doc promises refusals before anything reaches a database. MySQL ALTER
// TABLE ... RENAME TO and CREATE TABLE x LIKE <logic> name one new table
// for all; PostgreSQL named UNIQUE/PRIMARY KEY constraints create
// schema-wide indexes (unlike CREATE INDEX, their names are not made
// unique); DROP TABLE other, t_user drops `other` in the first unit only.
// Correct: ErrUnsupported (or unique names per physical table).
func TestDDLSameNameOnEveryPhysicalTable(t *testing.T) {
	for _, c := range []struct {
		d Dialect
		q string
	}{
		{MySQL, `ALTER TABLE t_user RENAME TO t_x`},
		{MySQL, `CREATE TABLE t_x LIKE t_user`},
		{PostgreSQL, `ALTER TABLE t_user ADD CONSTRAINT uq_name UNIQUE (name)`},
		{PostgreSQL, `CREATE TABLE t_user (user_id BIGINT, name TEXT, CONSTRAINT uq_name UNIQUE (name))`},
		{PostgreSQL, `DROP TABLE other, t_user`},
	} {
		h := testHook(t, c.d)
		r, err := h.route(c.q, nil)
		if err == nil {
			t.Errorf("%v %s: sent to every physical table of one data source:\n%s", c.d, c.q, show(r))
		}
	}
}

// End to end on PostgreSQL: the named constraint fails on t_order_1 after
// t_order_0 was altered.
func TestPGNamedConstraintDDLPartial(t *testing.T) {
	rv := openReview(t, "pgx")
	// Refusing before anything runs is accepted; failing part-way is not.
	_, err := rv.db.Exec(`ALTER TABLE t_order ADD CONSTRAINT uq_status UNIQUE (status)`)
	if err != nil {
		var n int
		rv.direct[0].QueryRow(`SELECT count(*) FROM pg_constraint WHERE conname = 'uq_status'`).Scan(&n)
		if n != 0 || !errors.Is(err, ErrUnsupported) {
			t.Errorf("ALTER TABLE ... ADD CONSTRAINT failed part-way (%d physical table(s) of ds_0 altered): %v", n, err)
		}
	}
}

// Regression (found in review; fixed) (error instead of a working statement, PostgreSQL): the doc says a
// table without an alias gets its logic name as alias "so qualified
// columns keep working", but INSERT only gets it with ON CONFLICT, so
// RETURNING t_order.order_id fails on the database ("missing FROM-clause
// entry"). Correct: INSERT INTO "t_order_1" AS t_order ...
func TestInsertReturningQualifiedColumn(t *testing.T) {
	h := testHook(t, PostgreSQL)
	r := mustRoute(t, h, `INSERT INTO t_order (order_id, user_id) VALUES (1, 1) RETURNING t_order.order_id`)
	if !strings.Contains(show(r), `"t_order_1" AS t_order`) {
		t.Errorf("RETURNING t_order.order_id has no t_order in scope:\n%s", show(r))
	}
}

// PIN (correct today): OR with a non-sharding predicate widens the route
// to every data source; a PostgreSQL string/dollar-quoted literal or
// comment containing a table name and $n is left alone; $2-before-$1 in a
// split INSERT is renumbered with the right values.
func TestPinRoutingBasics(t *testing.T) {
	h := testHook(t, PostgreSQL, WithScatter())
	r := mustRoute(t, h, `SELECT * FROM t_order WHERE user_id = 1 OR status = 'x'`)
	if len(r.units) != 4 {
		t.Errorf("OR with a non-sharding predicate must reach all 4 tables:\n%s", show(r))
	}
	r = mustRoute(t, h, `SELECT $q$ t_order $1 $q$, E't_order\' t_order' FROM t_order /* $1 t_order */ WHERE user_id = 1 AND order_id = 1`)
	if want := "ds_1: SELECT $q$ t_order $1 $q$, E't_order\\' t_order' FROM \"t_order_1\" AS t_order /* $1 t_order */ WHERE user_id = 1 AND order_id = 1\n"; show(r) != want {
		t.Errorf("got  %swant %s", show(r), want)
	}
	r = mustRoute(t, h, `INSERT INTO t_order (user_id, order_id) VALUES ($2, $1), ($4, $3)`, int64(2), int64(1), int64(3), int64(2))
	if want := "ds_1: INSERT INTO \"t_order_0\" (user_id, order_id) VALUES ($1, $2) [1] [2]\nds_0: INSERT INTO \"t_order_1\" (user_id, order_id) VALUES ($1, $2) [2] [3]\n"; show(r) != want {
		t.Errorf("got  %swant %s", show(r), want)
	}
}

func showOrNil(r *routed) string {
	if r == nil {
		return "(nothing)\n"
	}
	return show(r)
}

var _ = context.Background
var _ driver.Value
