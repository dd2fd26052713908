package sqlhook

// Each test states a guarantee of routing, rewriting or merging: sqlhook
// gives the answer one unsharded table would give, or refuses before
// anything runs.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// routedRules is testdata/rules/two_sources.yaml (the external tests'
// e2eRules): rulesYAML's t_order/t_order_item/t_dict as a fmt format of
// driver, DSN, driver, DSN.
var routedRules = readRules("two_sources.yaml")

// readRules is a rule file under testdata/rules, read when the tests start.
func readRules(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", "rules", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

type routedDB struct {
	db     *sql.DB
	direct [2]*sql.DB
}

// openTwoSources opens the rules on driver ("pgx", "mysql", "sqlite") with
// fresh databases, creates t_order (with a status column) and t_dict.
func openTwoSources(t *testing.T, drv string, opts ...Option) routedDB {
	t.Helper()
	var dsn [2]string
	for i := range dsn {
		name := fmt.Sprintf("sqlhook_routed_%d", i)
		switch drv {
		case "pgx":
			dsn[i] = dbtest.Postgres(t, name)
		case "mysql":
			dsn[i] = dbtest.MySQL(t, name)
		default:
			dsn[i] = filepath.Join(t.TempDir(), name+".db")
		}
	}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, routedRules, drv, dsn[0], drv, dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := routedDB{db: db}
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
// 1. Writes land in the table their values route to.

// A fractional literal for an integer sharding column is refused, or the
// row goes where the value the database stores routes: PostgreSQL and
// MariaDB store 3.5 as 4 (t_order_0), so routing by the truncated 3
// (t_order_1) would put the row where WHERE order_id = 4 never looks.
func TestInsertOfAFractionalShardingLiteralIsRefusedOrStoredWhereItRoutes(t *testing.T) {
	for _, d := range []Dialect{PostgreSQL, MySQL} {
		h := testHook(t, d)
		r, err := h.route(`INSERT INTO t_order (order_id, user_id, status) VALUES (3.5, 1, 'x')`, nil)
		if err == nil && !strings.Contains(r.units[0].sql, "t_order_0") {
			t.Errorf("%v: 3.5 is stored as 4 (table t_order_0) but the row goes to:\n%s", d, show(r))
		}
	}
	for _, drv := range []string{"pgx", "mysql"} {
		t.Run(drv, func(t *testing.T) {
			rv := openTwoSources(t, drv)
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

// One NULL key argument used by two rows never gives both rows the same
// key, nor writes a row in the table of another row's key: each row gets
// its own key and table, or the statement is refused.
func TestInsertRowsSharingANullKeyPlaceholderNeverShareAKey(t *testing.T) {
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

// A MySQL multi-table UPDATE that sets a column of broadcast table t_dict,
// joined with sharded t_order, is refused (ErrUnsupported): it would run on
// one data source and change only that copy of t_dict. PostgreSQL refuses
// the equivalent UPDATE ... FROM as well.
func TestMySQLMultiTableUpdateOfABroadcastTableIsRefused(t *testing.T) {
	h := testHook(t, MySQL)
	q := "UPDATE t_order o JOIN t_dict d ON d.k = o.status SET d.v = 'x' WHERE o.user_id = 1 AND o.order_id = 1"
	r, err := h.route(q, nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported; routed:\n%s", err, showOrNil(r))
	}
}

// An UPDATE with a WITH clause that sets a sharding column is refused
// (ErrUnsupported) as it is without the WITH clause: with WithScatter,
// SET user_id = 5 on every table would leave user 5's row in user 1's
// shard.
func TestMySQLUpdateWithACTESettingAShardingColumnIsRefused(t *testing.T) {
	h := testHook(t, MySQL, WithScatter())
	q := "WITH c AS (SELECT 1) UPDATE t_order SET user_id = 5 WHERE user_id = 1"
	r, err := h.route(q, nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported; routed:\n%s", err, showOrNil(r))
	}
}

// A CTE named like a logic table is never rewritten to a physical table
// (the statement is refused, or CTE references are left alone): FROM
// t_order_item below means the CTE's rows, not the table's.
func TestCTENamedLikeALogicTableIsNotRewritten(t *testing.T) {
	h := testHook(t, PostgreSQL)
	q := `WITH t_order_item AS (SELECT 1 AS order_id) UPDATE t_order SET status = 'x' FROM t_order_item WHERE t_order.user_id = 1 AND t_order.order_id = 1 AND t_order.order_id = t_order_item.order_id`
	r, err := h.route(q, nil)
	if err == nil && strings.Contains(show(r), "t_order_item_") {
		t.Errorf("the CTE reference was rewritten to a physical table:\n%s", show(r))
	}
}

// ---------------------------------------------------------------------
// 2. Reads reach every target that holds their rows.

// SQLite block comments do not nest, and the router reads them as SQLite
// does although the text is parsed by PostgreSQL's grammar, where they do:
// SQLite reads ... OR user_id = 2 ... below, so the query reaches user 2's
// data source too (or is refused with ErrParse), and user 2's rows are
// never silently missing.
func TestSQLiteBlockCommentsDoNotNestForTheRouter(t *testing.T) {
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
	rv := openTwoSources(t, "sqlite")
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

// A literal under a cast is routed as an expression (the route widens), not
// by its uncast value: 2.5::int is 3 in PostgreSQL (t_order_1), which
// truncating 2.5 to 2 (t_order_0) would miss.
func TestCastLiteralIsRoutedAsAnExpression(t *testing.T) {
	h := testHook(t, PostgreSQL, WithScatter()) // a widened route needs scatter
	r := mustRoute(t, h, `SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2.5::int`)
	if !strings.Contains(show(r), "t_order_1") {
		t.Errorf("order_id = 2.5::int is order_id = 3 (t_order_1), routed to:\n%s", show(r))
	}
}

// ---------------------------------------------------------------------
// 3. Arguments and LIMIT keep their values.

// LIMIT ? OFFSET ? keeps each placeholder's value in its place: TiDB's
// parser restores it as LIMIT ?,? (offset first), and sqlhook sends the
// caller's bytes, so the arguments stay in the caller's order.
func TestMySQLLimitOffsetPlaceholdersKeepTheirValues(t *testing.T) {
	h := testHook(t, MySQL)
	r := mustRoute(t, h, "SELECT id FROM t_order WHERE user_id = ? AND order_id = ? LIMIT ? OFFSET ?", int64(1), int64(3), int64(10), int64(5))
	want := "ds_1: SELECT id FROM `t_order_1` WHERE user_id = ? AND order_id = ? LIMIT ? OFFSET ? [1] [3] [10] [5]\n"
	if got := show(r); got != want {
		t.Errorf("got  %s want %s", got, want)
	}
}

// The same on a real server: the rows LIMIT ? OFFSET ? selects.
func TestMySQLLimitOffsetPlaceholdersKeepTheirValuesEndToEnd(t *testing.T) {
	rv := openTwoSources(t, "mysql")
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

// LIMIT ALL, and LIMIT $n with a NULL argument (no limit in PostgreSQL),
// over several targets is no limit on each target (or LIMIT ALL/NULL
// kept), never LIMIT 0, which would make the merged result empty.
func TestLimitAllOrNullIsNoLimitOnEachTarget(t *testing.T) {
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

// A bare ? after numbered placeholders binds as SQLite binds it, or mixing
// is refused: SQLite numbers it one above the largest number so far (in
// ?3 ... ?1 ... ? the last is ?4), not one above the previous (?2).
func TestSQLiteBarePlaceholderAfterNumberedOnesBindsAsSQLite(t *testing.T) {
	h := testHook(t, SQLite)
	r, err := h.route(`SELECT * FROM t_order WHERE user_id = ?3 AND order_id = ?1 AND status = ?`, args(int64(1), "two", int64(3)))
	if err == nil && strings.HasSuffix(strings.TrimSpace(show(r)), "[two]") {
		t.Errorf("the bare ? bound argument 2, SQLite binds ?4:\n%s", show(r))
	}
}

// ---------------------------------------------------------------------
// 4. Merged reads give one table's answer or are refused.

// An aggregate under an expression or a non-aggregate function
// (count(*) + 1, coalesce(sum(x), 0), IFNULL(SUM(x), 0)), and aggregates
// the merge does not know (SQLite total(), PostgreSQL json_object_agg,
// any_value), over several targets are merged correctly or refused
// (ErrUnsupported), never returned as one row per target.
func TestAggregateUnderAnExpressionOverSeveralTargetsIsMergedOrRefused(t *testing.T) {
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

// The same on SQLite: count(*) + 0 over two tables is one row, 2, as one
// table would give (or a refusal).
func TestAggregateUnderAnExpressionOverSeveralTargetsIsMergedOrRefusedEndToEnd(t *testing.T) {
	rv := openTwoSources(t, "sqlite")
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

// A qualified ORDER BY column (o.id) means the table's column: the merge
// orders by the selected o.id (or refuses), never by a result column that
// merely has the alias id (status AS id).
func TestOrderByQualifiedColumnMergesByTheColumnNotAnAlias(t *testing.T) {
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

// Merged ORDER BY and MIN/MAX on text follow the column's collation or are
// refused: MariaDB's default utf8mb4_general_ci is case-insensitive (one
// table returns a, B), so a bytewise merge (B, a; MIN 'B') is never
// returned.
func TestTextMergeFollowsTheCollationOrIsRefused(t *testing.T) {
	rv := openTwoSources(t, "mysql")
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

// A LEFT/RIGHT/FULL join whose preserved side is a broadcast table, not the
// routed table, is refused (ErrUnsupported) over several targets: each
// target would return the broadcast rows without a match once, so the
// caller would get them once per target instead of once.
func TestOuterJoinPreservingABroadcastTableOverSeveralTargetsIsRefused(t *testing.T) {
	h := testHook(t, PostgreSQL, WithScatter())
	r, err := h.route(`SELECT d.k FROM t_dict d LEFT JOIN t_order o ON o.status = d.k`, nil)
	if err == nil && len(r.units) > 1 {
		t.Errorf("outer join preserving t_dict runs on %d targets and concatenates:\n%s", len(r.units), show(r))
	}

	rv := openTwoSources(t, "sqlite", WithScatter())
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
// 5. Rewrites touch only the names they mean; DDL never stops part-way.

// Inside a subquery where t_order is the alias of another table, t_order.x
// keeps its qualifier (or the statement is refused): renaming it to
// `t_order_1`.x would make it a correlated reference to the outer table.
func TestMySQLSubqueryAliasNamedLikeTheLogicTableKeepsItsQualifier(t *testing.T) {
	h := testHook(t, MySQL)
	r := routeOrRefuse(t, h, "SELECT t_order.id FROM t_order WHERE user_id = 1 AND order_id = 1 AND EXISTS (SELECT 1 FROM other t_order WHERE t_order.x = 1)")
	if r != nil && strings.Contains(show(r), "`t_order_1`.`x`") {
		t.Errorf("the inner alias's column was rewritten to the outer table:\n%s", show(r))
	}
}

// DDL that would give every physical table the same schema-wide name is
// refused (ErrUnsupported) before anything runs, or the names are made
// unique per physical table; sent table by table it would succeed on the
// first and fail on the next, leaving the rest unchanged. MySQL's ALTER
// TABLE ... RENAME TO and CREATE TABLE x LIKE <logic> name one new table for
// all; PostgreSQL's named UNIQUE/PRIMARY KEY constraints create schema-wide
// indexes; DROP TABLE other, t_user would drop other with the first unit
// only.
func TestDDLGivingEveryPhysicalTableOneNameIsRefusedBeforeAnythingRuns(t *testing.T) {
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

// End to end on PostgreSQL: a named constraint added to the logic table
// never alters t_order_0 and then fails on t_order_1.
func TestPostgresNamedConstraintDDLNeverRunsPartWay(t *testing.T) {
	rv := openTwoSources(t, "pgx")
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

// An INSERT's target gets its logic name as alias ("t_order_1" AS t_order),
// so RETURNING t_order.order_id works, as the package documentation says of
// every table without an alias.
func TestInsertReturningAQualifiedColumnRuns(t *testing.T) {
	h := testHook(t, PostgreSQL)
	r := mustRoute(t, h, `INSERT INTO t_order (order_id, user_id) VALUES (1, 1) RETURNING t_order.order_id`)
	if !strings.Contains(show(r), `"t_order_1" AS t_order`) {
		t.Errorf("RETURNING t_order.order_id has no t_order in scope:\n%s", show(r))
	}
}

// OR with a non-sharding predicate widens the route to every data source;
// a PostgreSQL string, dollar-quoted literal or comment containing a table
// name and $n is left alone; $2 before $1 in a split INSERT is renumbered
// with the right values.
func TestRoutingBasics(t *testing.T) {
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
