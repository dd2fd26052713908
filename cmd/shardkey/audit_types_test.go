package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// What each database hands back for a column is not what the application
// routed: MySQL's text protocol (a page read without arguments) gives
// numbers as []byte and its binary protocol gives int64 or float64; pgx
// and MySQL give a NUMERIC or DECIMAL as its text ("10.00"); a MySQL
// latin1 column sorts by latin1 bytes while Go holds UTF-8. Audit must read
// every row as the application's value, whatever the page or protocol.

// atOpen opens two databases of one kind, named name_0 and name_1.
func atOpen(t *testing.T, which, name string) (driver string, dsns [2]string, dbs [2]*sql.DB) {
	t.Helper()
	switch which {
	case "postgres":
		driver, dsns = "pgx", [2]string{dbtest.Postgres(t, name+"_0"), dbtest.Postgres(t, name+"_1")}
	case "mariadb":
		driver, dsns = "mysql", [2]string{dbtest.MySQL(t, name+"_0"), dbtest.MySQL(t, name+"_1")}
	default:
		dir := t.TempDir()
		driver, dsns = "sqlite", [2]string{filepath.Join(dir, name+"_0.db"), filepath.Join(dir, name+"_1.db")}
	}
	for i, dsn := range dsns {
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return driver, dsns, dbs
}

func atExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// atReport runs audit -o json and decodes the report.
func atReport(t *testing.T, args ...string) (int, auditReport, string) {
	t.Helper()
	code, out, errs := runAudit(append([]string{"-o", "json"}, args...)...)
	var rep auditReport
	if code != exitUsage {
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("audit %v: exit %d, %v\n%s%s", args, code, err, out, errs)
		}
	}
	return code, rep, errs
}

const atNumericRules = `dataSources:
  ds_0: {driver: %[1]s, dsn: '%[2]s'}
  ds_1: {driver: %[1]s, dsn: '%[3]s'}
rules:
- !SHARDING
  tables:
    t_num:
      actualDataNodes: ds_0.t_num_${0..2}
      tableStrategy: {standard: {shardingColumn: n, shardingAlgorithmName: hash3}}
    t_dbl:
      actualDataNodes: ds_0.t_dbl_${0..2}
      tableStrategy: {standard: {shardingColumn: d, shardingAlgorithmName: hash3}}
    t_inl:
      actualDataNodes: ds_0.t_inl_${0..1}
      tableStrategy: {standard: {shardingColumn: n, shardingAlgorithmName: inl}}
  shardingAlgorithms:
    hash3: {type: HASH_MOD, props: {sharding-count: 3}}
    inl: {type: INLINE, props: {algorithm-expression: 't_inl_${n %% 2}'}}
`

// TestAuditReadsNumericAndFloatColumnsAsTheirNumbers: rows whose NUMERIC,
// DECIMAL or DOUBLE sharding column holds an integer, each placed where the
// application's integer routes (HASH_MOD hashes the Long, not the text
// "10.00", which routes elsewhere), are clean on every database whatever
// the page size, so whether MySQL read a page by its text or its binary
// protocol; a NUMERIC with a fraction is unroutable, never misplaced. The
// keys sit near 2^60, where a key sent back as text and compared as a
// double would lose its last bits.
func TestAuditReadsNumericAndFloatColumnsAsTheirNumbers(t *testing.T) {
	for _, which := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(which, func(t *testing.T) {
			driver, dsns, dbs := atOpen(t, which, "audit_num")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(atNumericRules, driver, dsns[0], dsns[1]))
			r := auditRouter(t, rules)
			for i := 0; i < 3; i++ {
				atExec(t, dbs[0], fmt.Sprintf("CREATE TABLE t_num_%d (id BIGINT NOT NULL PRIMARY KEY, n NUMERIC(20,2))", i))
				atExec(t, dbs[0], fmt.Sprintf("CREATE TABLE t_dbl_%d (id BIGINT NOT NULL PRIMARY KEY, d DOUBLE PRECISION)", i))
			}
			for i := 0; i < 2; i++ {
				atExec(t, dbs[0], fmt.Sprintf("CREATE TABLE t_inl_%d (id BIGINT NOT NULL PRIMARY KEY, n DECIMAL(20,0))", i))
			}
			const base = int64(1) << 60
			textRoutesApart := false
			for v := int64(10); v < 40; v++ {
				key := base + v
				for _, c := range []struct{ logic, col string }{{"t_num", "n"}, {"t_dbl", "d"}, {"t_inl", "n"}} {
					ts, err := r.Route(c.logic, shardconf.Eq(c.col, v))
					if err != nil || len(ts) != 1 {
						t.Fatalf("route %s %d: %v %v", c.logic, v, ts, err)
					}
					atExec(t, dbs[0], fmt.Sprintf("INSERT INTO %s (id, %s) VALUES (%d, %d)", ts[0].Table, c.col, key, v))
					if c.logic == "t_num" {
						byText, _ := r.Route(c.logic, shardconf.Eq(c.col, fmt.Sprintf("%d.00", v)))
						textRoutesApart = textRoutesApart || fmt.Sprint(byText) != fmt.Sprint(ts)
					}
				}
			}
			if !textRoutesApart {
				t.Fatal("no value whose text routes apart from its integer: the test would prove nothing")
			}
			for _, batch := range []string{"1000", "7", "1"} {
				code, rep, errs := atReport(t, "-key", "id", "-batch", batch, rules)
				if code != exitOK || rep.Totals.Rows != 90 || errs != "" {
					t.Errorf("-batch %s: exit %d, %+v, %s\n%+v", batch, code, rep.Totals, errs, rep.Tables)
				}
			}
			atExec(t, dbs[0], "INSERT INTO t_num_0 (id, n) VALUES (1, 5.5)")
			code, rep, errs := atReport(t, "-key", "id", rules, "t_num")
			if code != exitRuntime || rep.Totals.Unroutable != 1 || rep.Totals.Misplaced != 0 {
				t.Errorf("NUMERIC 5.5: exit %d, %+v, %s", code, rep.Totals, errs)
			}
		})
	}
}

const atTextKeyRules = `dataSources:
  ds_0: {driver: %[1]s, dsn: '%[2]s'}
  ds_1: {driver: %[1]s, dsn: '%[3]s'}
rules:
- !SHARDING
  tables:
    t_txt:
      actualDataNodes: ds_${0..1}.t_txt
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
`

// TestAuditPagesTextKeysOfEveryColumnType: a MariaDB latin1 key column
// and a PostgreSQL uuid key are read whole, page after page, and a key in
// both data sources is found. Paging a latin1 column by its own bytes
// restarted at 'é' (reported as a key that is not unique) or skipped 'Á',
// 'Â' and 'Ã' after 'À' and called the table clean; a uuid key failed
// ("collations are not supported by type uuid").
func TestAuditPagesTextKeysOfEveryColumnType(t *testing.T) {
	for _, c := range []struct {
		which, keyType string
		keys           []string
	}{
		{"mariadb", "VARCHAR(40) CHARACTER SET latin1 COLLATE latin1_bin", []string{"À", "Á", "Â", "Ã", "a", "é", "z", "ü", "ÿ", "Zz"}},
		{"mariadb", "VARBINARY(40)", []string{"\x00", "\xc0", "\xc1", "\xc3\x80", "a", "\xff", "z"}},
		{"postgres", "UUID", []string{"00000000-0000-0000-0000-00000000000a", "10000000-0000-0000-0000-000000000000",
			"0000000a-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "00000000-0000-0000-0000-000000000000"}},
		{"postgres", "TEXT", []string{"À", "Á", "Â", "Ã", "a", "é", "z", "ü", "B"}},
		{"sqlite", "TEXT", []string{"À", "Á", "Â", "Ã", "a", "é", "z", "ü", "B"}},
	} {
		t.Run(c.which+" "+strings.Fields(c.keyType)[0], func(t *testing.T) {
			driver, dsns, dbs := atOpen(t, c.which, "audit_txt")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(atTextKeyRules, driver, dsns[0], dsns[1]))
			ph := "?"
			if c.which == "postgres" {
				ph = "$1"
			}
			for _, db := range dbs {
				atExec(t, db, fmt.Sprintf("CREATE TABLE t_txt (k %s NOT NULL PRIMARY KEY, user_id BIGINT NOT NULL)", c.keyType))
			}
			for i, k := range c.keys {
				atExec(t, dbs[i%2], fmt.Sprintf("INSERT INTO t_txt (k, user_id) VALUES (%s, %d)", ph, i%2), k)
			}
			for _, batch := range []string{"1000", "2", "1"} {
				code, rep, errs := atReport(t, "-key", "k", "-batch", batch, rules)
				if code != exitOK || rep.Totals.Rows != int64(len(c.keys)) {
					t.Errorf("-batch %s: exit %d, %d of %d rows read, %s", batch, code, rep.Totals.Rows, len(c.keys), errs)
				}
			}
			// The first key again, in the other data source, where its own
			// user routes: a key in two shards.
			atExec(t, dbs[1], fmt.Sprintf("INSERT INTO t_txt (k, user_id) VALUES (%s, 1)", ph), c.keys[0])
			for _, batch := range []string{"1000", "1"} {
				code, rep, errs := atReport(t, "-key", "k", "-batch", batch, rules)
				if code != exitRuntime || rep.Totals.DuplicateKeys != 1 || rep.Totals.Misplaced != 0 {
					t.Errorf("-batch %s, key in two shards: exit %d, %+v, %s", batch, code, rep.Totals, errs)
				}
			}
		})
	}
}

// TestAuditNeverPrintsAPasswordHoldingAt: the MySQL driver reads a
// password up to the last '@' before the address; redacting at the first
// '@' printed the rest of it ("app:xxxxx@ss-Secret@tcp(...)").
func TestAuditNeverPrintsAPasswordHoldingAt(t *testing.T) {
	for _, c := range []struct{ driver, dsn, secret string }{
		{"mysql", "app:p@ss-Secret@tcp(127.0.0.1:1)/x?timeout=2s", "ss-Secret"},
		{"mysql", "app:@@Secret2@tcp(127.0.0.1:1)/x?timeout=2s", "Secret2"},
		{"pgx", "postgres://app:p%40ss-Secret3@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", "Secret3"},
		{"pgx", "host=127.0.0.1 port=1 user=app password='p@ss Secret4' connect_timeout=2 sslmode=disable", "Secret4"},
	} {
		dsn := strings.ReplaceAll(c.dsn, "'", "''") // in a YAML single-quoted string
		bad := writeFile(t, "bad.yaml", fmt.Sprintf(atTextKeyRules, c.driver, dsn, dsn))
		code, out, errs := runAudit("-key", "k", bad)
		if code != exitUsage || out != "" || strings.Contains(errs, c.secret) || !strings.Contains(errs, "data source ds_0") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.dsn, code, out, errs)
		}
	}
}

// TestAuditColumnValueReadsTextAsTheColumnTypesValue: the conversions
// behind the database test above, one by one, including the text that must
// stay text (NaN, SQLite's free text in a NUMERIC column, a text column's
// digits, which HASH_MOD hashes as a String as ShardingSphere does).
func TestAuditColumnValueReadsTextAsTheColumnTypesValue(t *testing.T) {
	for _, c := range []struct {
		dialect, dbType string
		in, want        any
	}{
		{dialectMySQL, "BIGINT", []byte("-12"), int64(-12)},
		{dialectMySQL, "UNSIGNED BIGINT", []byte("18446744073709551615"), uint64(18446744073709551615)},
		{dialectMySQL, "DECIMAL", []byte("10.00"), json.Number("10.00")},
		{dialectPostgres, "NUMERIC", "123456789012345678901234", json.Number("123456789012345678901234")},
		{dialectPostgres, "NUMERIC", "NaN", "NaN"},
		{dialectSQLite, "NUMERIC(20,2)", "abc", "abc"},
		{dialectMySQL, "DOUBLE", []byte("1e+20"), float64(1e20)},
		{dialectMySQL, "FLOAT", []byte("0.1"), float32(0.1)},
		{dialectMySQL, "VARCHAR", []byte("10"), "10"},
		{dialectPostgres, "TEXT", "10", "10"},
		{dialectSQLite, "INTEGER", int64(7), int64(7)},
		{dialectPostgres, "FLOAT8", float64(2.5), float64(2.5)},
	} {
		if got := columnValue(c.dialect, c.dbType, c.in); got != c.want {
			t.Errorf("%s %s %q: %#v, want %#v", c.dialect, c.dbType, c.in, got, c.want)
		}
	}
}

const atIntervalRules = `dataSources:
  ds_0: {driver: %[1]s, dsn: '%[2]s'}
  ds_1: {driver: %[1]s, dsn: '%[3]s'}
rules:
- !SHARDING
  tables:
    t_ev:
      actualDataNodes: ds_0.t_ev_${['202401','202402']}
      tableStrategy: {standard: {shardingColumn: ts, shardingAlgorithmName: month}}
  shardingAlgorithms:
    month: {type: INTERVAL, props: {datetime-pattern: 'yyyy-MM-dd HH:mm:ss', datetime-lower: '2024-01-01 00:00:00', datetime-upper: '2024-02-29 23:59:59', sharding-suffix-pattern: 'yyyyMM', datetime-interval-unit: MONTHS}}
`

// TestAuditRoutesTimesAsTheDatabaseStoresThem: a time sharding column is
// routed by the value read back, not by the value once written. A time
// written in +08:00 is routed by its own wall clock (Feb 1, 03:30); the
// MySQL driver stores it converted to its loc, UTC (Jan 31, 19:30), so on
// MariaDB that row sits in February's table holding a January value, where
// a query for the value it holds never looks: audit reports it. PostgreSQL
// timestamp and SQLite keep the wall clock written: nothing to report.
func TestAuditRoutesTimesAsTheDatabaseStoresThem(t *testing.T) {
	for _, c := range []struct {
		which, colType string
		misplaced      int64
	}{
		{"mariadb", "DATETIME", 1},
		{"mariadb", "DATE", 1},
		{"postgres", "TIMESTAMP", 0},
		{"sqlite", "DATETIME", 0},
	} {
		t.Run(c.which+" "+c.colType, func(t *testing.T) {
			driver, dsns, dbs := atOpen(t, c.which, "audit_time")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(atIntervalRules, driver, dsns[0], dsns[1]))
			r := auditRouter(t, rules)
			ph := "?, ?"
			if c.which == "postgres" {
				ph = "$1, $2"
			}
			for _, s := range []string{"202401", "202402"} {
				atExec(t, dbs[0], fmt.Sprintf("CREATE TABLE t_ev_%s (id BIGINT PRIMARY KEY, ts %s NULL)", s, c.colType))
			}
			cst := time.FixedZone("CST", 8*3600)
			for i, tm := range []time.Time{
				time.Date(2024, 1, 31, 23, 30, 0, 0, time.UTC),
				time.Date(2024, 2, 1, 0, 30, 0, 0, time.UTC),
				time.Date(2024, 2, 1, 3, 30, 0, 0, cst), // 2024-01-31 19:30 UTC
				time.Date(2024, 1, 15, 12, 0, 0, 0, cst),
			} {
				if c.colType == "DATE" {
					tm = time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, tm.Location())
				}
				ts, err := r.Route("t_ev", shardconf.Eq("ts", tm))
				if err != nil {
					t.Fatal(err)
				}
				atExec(t, dbs[0], fmt.Sprintf("INSERT INTO %s (id, ts) VALUES (%s)", ts[0].Table, ph), i, tm)
			}
			code, rep, errs := atReport(t, "-key", "id", "-batch", "1", rules)
			if rep.Totals.Rows != 4 || rep.Totals.Misplaced != c.misplaced || rep.Totals.Unroutable != 0 || (code == exitOK) != (c.misplaced == 0) {
				t.Errorf("exit %d, %+v, %s", code, rep.Totals, errs)
			}
			if c.misplaced > 0 && (len(rep.Tables[0].Misplaced) != 1 || rep.Tables[0].Misplaced[0].Key != "2" ||
				rep.Tables[0].Misplaced[0].Table != "t_ev_202402") {
				t.Errorf("want the +08:00 row (id 2) reported in t_ev_202402: %+v", rep.Tables[0].Misplaced)
			}
		})
	}
}
