package sqlhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// openReview2 opens rules (a format with %s driver / %q dsn pairs for
// ds_0 and ds_1) on fresh databases and runs ddl through sqlhook.
func openReview2(t *testing.T, drv, rules string, ddl []string, opts ...Option) reviewDB {
	t.Helper()
	return openReview2Named(t, "sqlhook_review2", drv, rules, ddl, opts...)
}

func openReview2Named(t *testing.T, prefix, drv, rules string, ddl []string, opts ...Option) reviewDB {
	t.Helper()
	var dsn [2]string
	for i := range dsn {
		name := fmt.Sprintf("%s_%d", prefix, i)
		switch drv {
		case "pgx":
			dsn[i] = dbtest.Postgres(t, name)
		case "mysql":
			dsn[i] = dbtest.MySQL(t, name)
		default:
			dsn[i] = filepath.Join(t.TempDir(), name+".db")
		}
	}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, rules, drv, dsn[0], drv, dsn[1]))
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
	for _, q := range ddl {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return r
}

var review2DDL = []string{
	`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(16))`,
	`CREATE TABLE t_dict (k VARCHAR(16) PRIMARY KEY, v VARCHAR(16))`,
}

func queryInts(t *testing.T, q func() (*sql.Rows, error)) ([]int64, error) {
	t.Helper()
	rows, err := q()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return out, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// (wrong result: rows silently missing) A write that runs as several units
// and is read with Query (RETURNING) gets a zero mergeSpec, whose limit is
// 0: the merged rows end at once. A split INSERT ... RETURNING and an
// UPDATE/DELETE ... RETURNING on several targets return no rows at all,
// although on PostgreSQL every unit ran; on SQLite, where INSERT ...
// RETURNING runs as its rows are stepped, the rows are never stepped and
// nothing is inserted at all, without error. Correct: every unit's
// RETURNING rows (2 here), or a refusal before anything runs.
func TestMultiUnitReturningReturnsNoRows(t *testing.T) {
	for _, drv := range []string{"pgx", "sqlite"} {
		t.Run(drv, func(t *testing.T) {
			rv := openReview2(t, drv, reviewRules, review2DDL)
			got, err := queryInts(t, func() (*sql.Rows, error) {
				return rv.db.Query((`INSERT INTO t_order (user_id, order_id, status) VALUES (1, 1, 'a'), (2, 2, 'b') RETURNING order_id`))
			})
			if err != nil {
				t.Fatal(err)
			}
			var n0, n1 int
			rv.direct[0].QueryRow(`SELECT count(*) FROM t_order_0`).Scan(&n0)
			rv.direct[1].QueryRow(`SELECT count(*) FROM t_order_1`).Scan(&n1)
			if len(got) != 2 {
				t.Errorf("split INSERT ... RETURNING order_id inserted %d row(s) but returned %v, want 2 ids", n0+n1, got)
			}
			got, err = queryInts(t, func() (*sql.Rows, error) {
				return rv.db.Query(`UPDATE t_order SET status = 'x' WHERE user_id IN (1, 2) AND order_id IN (1, 2) RETURNING order_id`)
			})
			if err != nil && !errors.Is(err, ErrUnsupported) {
				t.Fatal(err)
			}
			var changed int
			rv.direct[0].QueryRow(`SELECT count(*) FROM t_order_0 WHERE status = 'x'`).Scan(&n0)
			rv.direct[1].QueryRow(`SELECT count(*) FROM t_order_1 WHERE status = 'x'`).Scan(&n1)
			changed = n0 + n1
			if err == nil && len(got) != changed {
				t.Errorf("UPDATE ... RETURNING on several targets updated %d row(s) but returned %v", changed, got)
			}
		})
	}
}

// (wrong result) A write to a broadcast table runs once per data source and
// its RowsAffected is the sum over the copies: inserting or updating one
// logical row reports 2 (one per data source). ORMs use RowsAffected for
// optimistic locking and "not found" checks. Correct: the count of one copy
// (1), as an unsharded table would report. Same with RETURNING: one logical
// row comes back once per copy, or not at all.
func TestBroadcastWriteRowsAffectedSummedOverCopies(t *testing.T) {
	rv := openReview2(t, "sqlite", reviewRules, review2DDL)
	res, err := rv.db.Exec(`INSERT INTO t_dict (k, v) VALUES ('a', 'x')`)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Errorf("INSERT of one broadcast row: RowsAffected = %d, %v; want 1", n, err)
	}
	res, err = rv.db.Exec(`UPDATE t_dict SET v = 'y' WHERE k = 'a'`)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Errorf("UPDATE of one broadcast row: RowsAffected = %d, %v; want 1", n, err)
	}
	var ks []string
	rows, err := rv.db.Query(`INSERT INTO t_dict (k, v) VALUES ('b', 'x') RETURNING k`)
	if err == nil {
		for rows.Next() {
			var k string
			rows.Scan(&k)
			ks = append(ks, k)
		}
		rows.Close()
		if len(ks) != 1 {
			t.Errorf("INSERT of one broadcast row RETURNING k returned %q, want [b]", ks)
		}
	} else if !errors.Is(err, ErrUnsupported) {
		t.Fatal(err)
	}
}

// (transaction semantics broken) SAVEPOINT / ROLLBACK TO SAVEPOINT name no
// table, so they pass through to the default data source. In a transaction
// working on ds_1 only (user 1), SAVEPOINT is ErrCrossSourceTx, although
// the doc promises full transactional semantics for work on one data
// source; issued first, it begins the transaction on ds_0, and the first
// INSERT for user 1 is then refused. With WithMultiSourceTx it is worse:
// the savepoint is taken on ds_0, ROLLBACK TO SAVEPOINT rolls back ds_0
// only, and the INSERT made after the savepoint on ds_1 is committed
// although the application rolled it back. Correct: run savepoint commands
// on every data source the transaction has begun on (and on the ones it
// begins on later), or refuse them before anything runs.
func TestSavepointGoesToDefaultDataSource(t *testing.T) {
	ctx := context.Background()
	rv := openReview2(t, "pgx", reviewRules, review2DDL)
	// user 1 -> ds_1 only.
	tx, err := rv.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'kept')`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SAVEPOINT sp`); err != nil {
		t.Errorf("SAVEPOINT in a transaction on one data source (ds_1): %v", err)
	}
	tx.Rollback()

	tx, err = rv.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A SAVEPOINT before any data source: refusing it (nothing runs) is
	// accepted; starting the transaction on the wrong data source is not.
	if _, err := tx.Exec(`SAVEPOINT sp`); err != nil && !errors.Is(err, ErrUnsupported) {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO t_order (order_id, user_id, status) VALUES (3, 1, 'x')`); err != nil {
		t.Errorf("INSERT for user 1 after SAVEPOINT, one data source in all: %v", err)
	}
	tx.Rollback()

	multi := openReview2Named(t, "sqlhook_review2_multi", "pgx", reviewRules, review2DDL, WithMultiSourceTx())
	tx, err = multi.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec := func(q string) {
		t.Helper()
		if _, err := tx.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`INSERT INTO t_order (order_id, user_id, status) VALUES (5, 1, 'kept')`)
	mustExec(`SAVEPOINT sp`)
	mustExec(`INSERT INTO t_order (order_id, user_id, status) VALUES (7, 1, 'rolled back')`)
	mustExec(`ROLLBACK TO SAVEPOINT sp`)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var n int
	multi.direct[1].QueryRow(`SELECT count(*) FROM t_order_1 WHERE order_id = 7`).Scan(&n)
	if n != 0 {
		t.Errorf("the row inserted after SAVEPOINT sp and rolled back with ROLLBACK TO SAVEPOINT sp was committed (ds_1.t_order_1)")
	}
}

// review2Rules: t_order over ds_0/ds_1 by user_id (MOD 2); t_log on ds_0
// by month (INTERVAL on created); t_user on ds_0/ds_1 by HASH_MOD of a
// code (3 tables on ds_0); t_acct by HASH_MOD
// of an integer acct_id (4 tables on ds_0); t_dict broadcast.
const review2Rules = `
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
    t_log:
      actualDataNodes: ds_0.t_log_20240${1..2}
      tableStrategy:
        standard: {shardingColumn: created, shardingAlgorithmName: month}
    t_user:
      actualDataNodes: ds_0.t_user_${0..2}
      tableStrategy:
        standard: {shardingColumn: code, shardingAlgorithmName: hash3}
    t_acct:
      actualDataNodes: ds_0.t_acct_${0..3}
      tableStrategy:
        standard: {shardingColumn: acct_id, shardingAlgorithmName: hash4}
  broadcastTables: [t_dict]
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
    hash4: {type: HASH_MOD, props: {sharding-count: 4}}
    hash3: {type: HASH_MOD, props: {sharding-count: 3}}
    month:
      type: INTERVAL
      props: {datetime-pattern: "yyyy-MM-dd HH:mm:ss", datetime-lower: "2024-01-01 00:00:00", datetime-upper: "2024-02-29 23:59:59",
              sharding-suffix-pattern: yyyyMM, datetime-interval-unit: MONTHS}
`

// (misrouted write, MySQL/MariaDB) A time.Time sharding value is routed by
// its own wall clock (its Location), but go-sql-driver/mysql sends it
// converted to the DSN's loc (UTC by default), and that is the value
// stored. 2024-02-01 03:00 +09:00 routes to t_log_202402, but the row
// stored there says 2024-01-31 18:00:00, a January value: a query for it
// (created = '2024-01-31 18:00:00', or any January range) goes to
// t_log_202401 and does not find it. Correct: route by the value the
// driver sends (t.In(loc)), or refuse a time.Time outside the DSN's loc.
func TestMySQLTimeInOtherZoneMisrouted(t *testing.T) {
	rv := openReview2(t, "mysql", review2Rules, []string{
		"CREATE TABLE t_log (id BIGINT PRIMARY KEY, created DATETIME NOT NULL)",
	})
	jst := time.FixedZone("JST", 9*3600)
	at := time.Date(2024, 2, 1, 3, 0, 0, 0, jst) // 2024-01-31 18:00:00 UTC
	if _, err := rv.db.Exec("INSERT INTO t_log (id, created) VALUES (?, ?)", 1, at); err != nil {
		t.Fatal(err)
	}
	var stored string
	var inFeb int
	rv.direct[0].QueryRow("SELECT count(*) FROM t_log_202402").Scan(&inFeb)
	rv.direct[0].QueryRow("SELECT CAST(created AS CHAR) FROM t_log_202402 UNION ALL SELECT CAST(created AS CHAR) FROM t_log_202401").Scan(&stored)
	var n int
	if err := rv.db.QueryRow("SELECT count(*) FROM t_log WHERE created = ?", stored).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the row stored with created = %s (in t_log_202402: %d) is not found by created = '%s' (%d rows)", stored, inFeb, stored, n)
	}
}

// (wrong order / wrong MIN, SQLite) Text is merged bytewise for SQLite on
// the ground that its default collation is BINARY, but a column declared
// COLLATE NOCASE (or RTRIM) orders by that collation in every ORDER BY and
// MIN/MAX: one table returns a, B; the merge returns B, a, and MIN(status)
// is 'B' instead of 'a'. Correct: refuse text merges whose collation is
// not known to be BINARY (as for PostgreSQL and MySQL), or apply it.
func TestSQLiteNocaseColumnMergedBytewise(t *testing.T) {
	rv := openReview2(t, "sqlite", reviewRules, []string{
		`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status TEXT COLLATE NOCASE)`,
	})
	// user 1, order 2 -> ds_1.t_order_0; order 1 -> ds_1.t_order_1.
	for _, r := range []struct {
		id     int64
		status string
	}{{2, "a"}, {1, "B"}} {
		if _, err := rv.db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, ?)", r.id, r.status); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := rv.db.Query("SELECT status FROM t_order WHERE user_id = 1 AND order_id IN (1, 2) ORDER BY status")
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
		t.Errorf("ORDER BY status (COLLATE NOCASE) = %v; SQLite orders one table [a B]", got)
	}
	rows.Close()
	var lo string
	if err := rv.db.QueryRow("SELECT MIN(status) FROM t_order WHERE user_id = 1 AND order_id IN (1, 2)").Scan(&lo); err != nil && !errors.Is(err, ErrUnsupported) {
		t.Fatal(err)
	} else if err == nil && lo != "a" {
		t.Errorf("MIN(status) (COLLATE NOCASE) = %q; SQLite says 'a'", lo)
	}
}

// (wrong order) With SELECT * (or o.*, i.*), a qualified ORDER BY column
// that is not in the select list by name is looked up in the result by its
// bare name, and the first column of that name wins. In a join of binding
// tables that both have the column, ORDER BY o.amount merges by i.amount
// (the first "amount" of the result), while each target sorted by
// o.amount: the merged rows come out in the wrong order. Correct: merge by
// o.amount's column, or refuse the ambiguous name.
func TestStarOrderByQualifiedNameMergesByOtherTable(t *testing.T) {
	rv := openReview2(t, "sqlite", reviewRules, []string{
		`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, amount BIGINT)`,
		`CREATE TABLE t_order_item (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, amount BIGINT)`,
	})
	for _, r := range []struct{ id, oAmount, iAmount int64 }{{1, 10, 2}, {2, 20, 1}} {
		if _, err := rv.db.Exec("INSERT INTO t_order (order_id, user_id, amount) VALUES (?, 1, ?)", r.id, r.oAmount); err != nil {
			t.Fatal(err)
		}
		if _, err := rv.db.Exec("INSERT INTO t_order_item (order_id, user_id, amount) VALUES (?, 1, ?)", r.id, r.iAmount); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"SELECT * FROM t_order_item i JOIN t_order o ON o.order_id = i.order_id WHERE o.user_id = 1 AND o.order_id IN (1, 2) ORDER BY o.amount",
		"SELECT i.*, o.* FROM t_order_item i JOIN t_order o ON o.order_id = i.order_id WHERE o.user_id = 1 AND o.order_id IN (1, 2) ORDER BY o.amount",
	} {
		rows, err := rv.db.Query(q)
		if errors.Is(err, ErrUnsupported) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for rows.Next() {
			var a, b, c, d, e, f sql.NullInt64
			if err := rows.Scan(&a, &b, &c, &d, &e, &f); err != nil {
				t.Fatal(err)
			}
			got = append(got, d.Int64) // o.order_id
		}
		if err := rows.Err(); err != nil && !errors.Is(err, ErrUnsupported) {
			t.Fatal(err)
		}
		rows.Close()
		if rows.Err() == nil && fmt.Sprint(got) != "[1 2]" {
			t.Errorf("%s\n  returned orders %v; by o.amount (10, 20) they are [1 2]", q, got)
		}
	}
}

// (wrong rows read and deleted, MariaDB) The MySQL rewrite restores the
// statement from TiDB's tree, which drops comments. MariaDB's executable
// comment /*M!100000 AND status = 'x' */ is code to MariaDB (it runs on
// every MariaDB >= 10.0), so dropping it removes a condition: the SELECT
// counts a row the statement excludes, and the DELETE deletes it. Correct:
// keep executable comments, or refuse a statement that has one.
func TestMariaDBExecutableCommentDropped(t *testing.T) {
	rv := openReview2(t, "mysql", reviewRules, review2DDL)
	if _, err := rv.db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'keep')"); err != nil {
		t.Fatal(err)
	}
	const cond = "user_id = 1 AND order_id = 1 /*M!100000 AND status = 'x' */"
	var direct, n int
	rv.direct[1].QueryRow("SELECT count(*) FROM t_order_1 WHERE " + cond).Scan(&direct)
	if err := rv.db.QueryRow("SELECT count(*) FROM t_order WHERE " + cond).Scan(&n); errors.Is(err, ErrUnsupported) {
		n = direct // a refusal is acceptable
	} else if err != nil {
		t.Fatal(err)
	}
	if n != direct {
		t.Errorf("WHERE %s counts %d row(s) through sqlhook, %d on the table itself", cond, n, direct)
	}
	res, err := rv.db.Exec("DELETE FROM t_order WHERE " + cond)
	if err != nil {
		return // a refusal is acceptable
	}
	if k, _ := res.RowsAffected(); k != 0 {
		t.Errorf("DELETE FROM t_order WHERE %s deleted the row whose status is 'keep'", cond)
	}
}
