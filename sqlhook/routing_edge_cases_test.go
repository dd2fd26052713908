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

// openEdge opens rules (a format with %s driver / %q dsn pairs for
// ds_0 and ds_1) on fresh databases and runs ddl through sqlhook.
func openEdge(t *testing.T, drv, rules string, ddl []string, opts ...Option) routedDB {
	t.Helper()
	return openEdgeNamed(t, "sqlhook_edge", drv, rules, ddl, opts...)
}

func openEdgeNamed(t *testing.T, prefix, drv, rules string, ddl []string, opts ...Option) routedDB {
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
	r := routedDB{db: db}
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

var edgeDDL = []string{
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

// A write that runs as several units and is read with Query (RETURNING)
// gives every unit's RETURNING rows (2 here), or is refused before
// anything runs; never no rows (on SQLite, where INSERT ... RETURNING runs
// as its rows are stepped, no rows would also mean nothing inserted).
func TestMultiUnitReturningGivesEveryUnitsRowsOrIsRefused(t *testing.T) {
	for _, drv := range []string{"pgx", "sqlite"} {
		t.Run(drv, func(t *testing.T) {
			rv := openEdge(t, drv, routedRules, edgeDDL)
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

// A write to a broadcast table runs once per data source but reports the
// rows affected of one copy (1 for one logical row), as an unsharded table
// would: ORMs read RowsAffected for optimistic locking and "not found".
// RETURNING likewise gives one copy's rows.
func TestBroadcastWriteReportsOneCopysRowsAffected(t *testing.T) {
	rv := openEdge(t, "sqlite", routedRules, edgeDDL)
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

// SAVEPOINT, ROLLBACK TO SAVEPOINT and RELEASE run on every data source the
// transaction has begun on, and on those it begins on later (or are refused
// before anything runs); they name no table, but sent to the default data
// source only they would be ErrCrossSourceTx in a transaction working on
// another data source, and with WithMultiSourceTx a ROLLBACK TO would undo
// the default data source only and commit what the application rolled
// back.
func TestSavepointRunsOnEveryDataSourceOfTheTransaction(t *testing.T) {
	ctx := context.Background()
	rv := openEdge(t, "pgx", routedRules, edgeDDL)
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

	multi := openEdgeNamed(t, "sqlhook_edge_multi", "pgx", routedRules, edgeDDL, WithMultiSourceTx())
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

// edgeRules: t_order over ds_0/ds_1 by user_id (MOD 2); t_log on ds_0
// by month (INTERVAL on created); t_user on ds_0/ds_1 by HASH_MOD of a
// code (3 tables on ds_0); t_acct by HASH_MOD
// of an integer acct_id (4 tables on ds_0); t_dict broadcast.
const edgeRules = `
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

// A time.Time sharding value routes by the value go-sql-driver/mysql sends
// and the table stores (converted to the DSN's loc, UTC by default), or is
// refused: 2024-02-01 03:00 +09:00 is stored as 2024-01-31 18:00:00, so it
// belongs in t_log_202401, where a query for it looks.
func TestMySQLTimeInAnotherZoneRoutesAsStored(t *testing.T) {
	rv := openEdge(t, "mysql", edgeRules, []string{
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

// Text of a SQLite column declared COLLATE NOCASE (or RTRIM) is merged as
// SQLite compares it, or the merge is refused: SQLite's default collation is
// BINARY, but such a column orders by its own in ORDER BY and MIN/MAX (one
// table returns a, B; a bytewise merge would return B, a and MIN 'B').
func TestSQLiteNocaseColumnIsNeverMergedBytewise(t *testing.T) {
	rv := openEdge(t, "sqlite", routedRules, []string{
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

// With SELECT * (or o.*, i.*), ORDER BY o.amount merges by o.amount's
// column, or the ambiguous name is refused; never by the first result
// column named amount, which in a join of binding tables may be i.amount.
func TestStarOrderByQualifiedNameNeverMergesByAnotherTablesColumn(t *testing.T) {
	rv := openEdge(t, "sqlite", routedRules, []string{
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

// MariaDB's executable comment /*M!100000 AND status = 'x' */ is code to
// MariaDB: the statement is sent with it (or refused), never without it,
// which would count and delete a row the statement excludes.
func TestMariaDBExecutableCommentIsNeverDropped(t *testing.T) {
	rv := openEdge(t, "mysql", routedRules, edgeDDL)
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
