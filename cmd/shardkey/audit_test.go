package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// auditRules shards t_order over two data sources by user_id % 2 and two
// tables by order_id % 2; t_item has no keyGenerateStrategy.
func auditRules(driver, dsn0, dsn1 string) string {
	return fmt.Sprintf(`dataSources:
  ds_0: {driver: %[1]s, dsn: '%[2]s'}
  ds_1: {driver: %[1]s, dsn: '%[3]s'}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
    t_item:
      actualDataNodes: ds_${0..1}.t_item_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: code, shardingAlgorithmName: by_code}}
    t_ref:
      actualDataNodes: ds_0.t_ref_${0..1}
      tableStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_inline}}
  shardingAlgorithms:
    by_inline: {type: INLINE, props: {algorithm-expression: 't_ref_${user_id}'}}
    by_user: {type: MOD, props: {sharding-count: 2}}
    by_order: {type: MOD, props: {sharding-count: 2}}
    by_code: {type: HASH_MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE}
`, driver, dsn0, dsn1)
}

// auditDB is one database of the layout under audit.
type auditDB struct {
	driver string
	dsns   [2]string
	dbs    [2]*sql.DB
	ph     func(i int) string
}

func openAuditDBs(t *testing.T, which string) *auditDB {
	t.Helper()
	a := &auditDB{ph: func(int) string { return "?" }}
	switch which {
	case "postgres":
		a.driver, a.ph = "pgx", func(i int) string { return fmt.Sprintf("$%d", i) }
		a.dsns = [2]string{dbtest.Postgres(t, "aud_audit_0"), dbtest.Postgres(t, "aud_audit_1")}
	case "mariadb":
		a.driver = "mysql"
		a.dsns = [2]string{dbtest.MySQL(t, "aud_audit_0"), dbtest.MySQL(t, "aud_audit_1")}
	default:
		dir := t.TempDir()
		a.driver = "sqlite"
		a.dsns = [2]string{filepath.Join(dir, "aud_0.db"), filepath.Join(dir, "aud_1.db")}
	}
	driver := a.driver
	for i, dsn := range a.dsns {
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		a.dbs[i] = db
		for j := 0; j < 2; j++ {
			a.exec(t, i, fmt.Sprintf("CREATE TABLE t_order_%d (order_id BIGINT NOT NULL PRIMARY KEY, user_id BIGINT NULL, note VARCHAR(20))", j))
			a.exec(t, i, fmt.Sprintf("CREATE TABLE t_item_%d (id BIGINT NOT NULL PRIMARY KEY, user_id BIGINT NOT NULL, code VARCHAR(20) NOT NULL)", j))
			a.exec(t, i, fmt.Sprintf("CREATE TABLE t_ref_%d (id BIGINT NOT NULL PRIMARY KEY, user_id BIGINT NOT NULL)", j))
		}
	}
	return a
}

func (a *auditDB) exec(t *testing.T, ds int, q string, args ...any) {
	t.Helper()
	if _, err := a.dbs[ds].Exec(q, args...); err != nil {
		t.Fatalf("ds_%d: %s: %v", ds, q, err)
	}
}

// insert writes a t_order row into ds_<ds>.t_order_<tbl> directly.
func (a *auditDB) insert(t *testing.T, ds, tbl int, orderID int64, userID any) {
	t.Helper()
	a.exec(t, ds, fmt.Sprintf("INSERT INTO t_order_%d (order_id, user_id, note) VALUES (%s, %s, 'x')", tbl, a.ph(1), a.ph(2)), orderID, userID)
}

// placeWell inserts rows 1..n where the rules route them.
func (a *auditDB) placeWell(t *testing.T, r *shardconf.Router, n int64) {
	t.Helper()
	for id := int64(1); id <= n; id++ {
		user := id * 3 % 7
		ts, err := r.Route("t_order", shardconf.Eq("order_id", id), shardconf.Eq("user_id", user))
		if err != nil || len(ts) != 1 {
			t.Fatalf("route %d: %v %v", id, ts, err)
		}
		a.insert(t, int(ts[0].DataSource[3]-'0'), int(ts[0].Table[8]-'0'), id, user)
	}
}

func runAudit(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := run(append([]string{"audit"}, args...), &out, &errs)
	return code, out.String(), errs.String()
}

const auditCleanText = `LOGIC TABLE  DATA SOURCE  TABLE      ROWS  MISPLACED  NO VALUE  UNROUTABLE  DUPLICATE KEYS  NO KEY
t_order      ds_0         t_order_0  3     0          0         0           0               0
t_order      ds_0         t_order_1  3     0          0         0           0               0
t_order      ds_1         t_order_0  3     0          0         0           0               0
t_order      ds_1         t_order_1  3     0          0         0           0               0

clean: 12 rows in 1 logic tables, every row where its sharding values route
`

const auditFoundText = `LOGIC TABLE  DATA SOURCE  TABLE      ROWS  MISPLACED  NO VALUE  UNROUTABLE  DUPLICATE KEYS  NO KEY
t_order      ds_0         t_order_0  6     2          0         0           1               0
t_order      ds_0         t_order_1  3     0          0         0           0               0
t_order      ds_1         t_order_0  3     0          0         0           1               0
t_order      ds_1         t_order_1  4     0          1         0           0               0
misplaced   t_order ds_0.t_order_0 order_id=101 (user_id=2 order_id=101) routes to ds_0.t_order_1
misplaced   t_order ds_0.t_order_0 order_id=102 (user_id=1 order_id=102) routes to ds_1.t_order_0
no value    t_order ds_1.t_order_1 order_id=103: user_id NULL
duplicate   t_order order_id=4 in ds_0.t_order_0, ds_1.t_order_0

found: 2 misplaced, 1 without a sharding value, 0 unroutable, 1 keys in several tables, 0 without a key (16 rows read)
`

const auditFoundJSON = `{
  "clean": false,
  "tables": [{
    "logicTable": "t_order", "keyColumn": "order_id", "shardingColumns": ["user_id", "order_id"],
    "physicalTables": [
      {"dataSource": "ds_0", "table": "t_order_0", "rows": 6, "misplaced": 2, "missingShardingValue": 0, "unroutable": 0, "duplicateKeys": 1, "withoutKey": 0},
      {"dataSource": "ds_0", "table": "t_order_1", "rows": 3, "misplaced": 0, "missingShardingValue": 0, "unroutable": 0, "duplicateKeys": 0, "withoutKey": 0},
      {"dataSource": "ds_1", "table": "t_order_0", "rows": 3, "misplaced": 0, "missingShardingValue": 0, "unroutable": 0, "duplicateKeys": 1, "withoutKey": 0},
      {"dataSource": "ds_1", "table": "t_order_1", "rows": 4, "misplaced": 0, "missingShardingValue": 1, "unroutable": 0, "duplicateKeys": 0, "withoutKey": 0}],
    "misplaced": [
      {"dataSource": "ds_0", "table": "t_order_0", "key": "101", "values": {"user_id": "2", "order_id": "101"}, "routesTo": ["ds_0.t_order_1"]},
      {"dataSource": "ds_0", "table": "t_order_0", "key": "102", "values": {"user_id": "1", "order_id": "102"}, "routesTo": ["ds_1.t_order_0"]}],
    "missingShardingValue": [
      {"dataSource": "ds_1", "table": "t_order_1", "key": "103", "values": {"user_id": null, "order_id": "103"}, "nullColumns": ["user_id"]}],
    "unroutable": [],
    "duplicateKeys": [{"key": "4", "tables": ["ds_0.t_order_0", "ds_1.t_order_0"]}],
    "truncated": false}],
  "totals": {"rows": 16, "misplaced": 2, "missingShardingValue": 1, "unroutable": 0, "duplicateKeys": 1, "withoutKey": 0}
}`

// TestAuditFindsSeededMisplacements seeds, on each database, a row in the
// wrong table, one in the wrong database, one without a sharding value and
// a key in two shards (each copy where its own values route), and checks
// the exact report, text and JSON, and the exit codes; the same layout
// before the seeding is clean (exit 0). A batch of 2 rows reads each table
// in several pages and must find the same.
func TestAuditFindsSeededMisplacements(t *testing.T) {
	for _, which := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(which, func(t *testing.T) {
			a := openAuditDBs(t, which)
			rules := writeFile(t, "rules.yaml", auditRules(a.driver, a.dsns[0], a.dsns[1]))
			r := auditRouter(t, rules)
			a.placeWell(t, r, 12)

			code, out, errs := runAudit(rules, "t_order")
			if code != exitOK || out != auditCleanText || errs != "" {
				t.Fatalf("clean layout: exit %d\n%s\nstderr: %s\nwant:\n%s", code, out, errs, auditCleanText)
			}
			code, out, _ = runAudit("-o", "json", "-key", "id", rules) // t_item by id, t_order by its key generator's column
			if code != exitOK || !strings.Contains(out, `"clean": true`) {
				t.Fatalf("clean layout, every table, -o json: exit %d\n%s", code, out)
			}

			a.insert(t, 0, 0, 101, 2)   // routes to ds_0.t_order_1: the wrong table
			a.insert(t, 0, 0, 102, 1)   // routes to ds_1.t_order_0: the wrong database
			a.insert(t, 1, 1, 103, nil) // no sharding value
			a.insert(t, 0, 0, 4, 6)     // order 4 is in ds_1.t_order_0 (user 5); this copy routes here
			for _, batch := range []string{"1000", "2", "1"} {
				code, out, errs = runAudit("-batch", batch, rules, "t_order")
				if code != 1 || out != auditFoundText || errs != "" {
					t.Errorf("-batch %s: exit %d\n%s\nstderr: %s\nwant:\n%s", batch, code, out, errs, auditFoundText)
				}
				code, out, errs = runAudit("-batch", batch, "-o", "json", rules, "t_order")
				if code != 1 || !sameJSON(t, out, auditFoundJSON) {
					t.Errorf("-batch %s -o json: exit %d, stderr %q\n%s", batch, code, errs, out)
				}
			}
			// -limit lists fewer findings; the counts stay complete.
			code, out, _ = runAudit("-limit", "1", "-o", "json", rules, "t_order")
			var rep auditReport
			if err := json.Unmarshal([]byte(out), &rep); code != 1 || err != nil || len(rep.Tables) != 1 ||
				len(rep.Tables[0].Misplaced) != 1 || !rep.Tables[0].Truncated || rep.Totals.Misplaced != 2 {
				t.Errorf("-limit 1: exit %d, %v\n%s", code, err, out)
			}
		})
	}
}

func auditRouter(t *testing.T, rules string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Load(rules)
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg, shardconf.WithKeyGenProps(map[string]string{"worker-id": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

// TestAuditExitsTwoOnUsageConfigAndConnectionErrors: a table without a key
// column (audit refuses to guess), a key that is not unique, an unknown
// table, and an unreachable data source exit 2, never 0 or 1, and a DSN's
// password is never printed.
func TestAuditExitsTwoOnUsageConfigAndConnectionErrors(t *testing.T) {
	a := openAuditDBs(t, "sqlite")
	rules := writeFile(t, "rules.yaml", auditRules(a.driver, a.dsns[0], a.dsns[1]))
	a.exec(t, 0, "INSERT INTO t_item_1 (id, user_id, code) VALUES (1, 2, 'a'), (2, 2, 'a')") // "a".hashCode() % 2 = 1

	if code, _, errs := runAudit(rules, "t_item"); code != 2 || !strings.Contains(errs, "t_item has no keyGenerateStrategy: give its unique key column with -key") {
		t.Errorf("no key column: exit %d, %s", code, errs)
	}
	if code, out, errs := runAudit("-key", "id", rules, "t_item"); code != 0 || !strings.Contains(out, "clean: 2 rows") {
		t.Errorf("-key id: exit %d, %s %s", code, out, errs)
	}
	for _, batch := range []string{"1000", "1"} {
		if code, _, errs := runAudit("-key", "user_id", "-batch", batch, rules, "t_item"); code != 2 || !strings.Contains(errs, "key column user_id is not unique") {
			t.Errorf("-key user_id -batch %s: exit %d, %s", batch, code, errs)
		}
	}
	if code, _, errs := runAudit(rules, "t_nope"); code != 2 || !strings.Contains(errs, "t_nope is not a sharded logic table") {
		t.Errorf("unknown table: exit %d, %s", code, errs)
	}
	if code, _, _ := runAudit("-batch", "0", rules); code != 2 {
		t.Errorf("-batch 0: exit %d", code)
	}
	if code, _, _ := runAudit(); code != 2 {
		t.Errorf("no rule file: exit %d", code)
	}

	for _, c := range []struct{ driver, dsn, secret string }{
		{"pgx", "postgres://app:s3cretPG@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", "s3cretPG"},
		{"mysql", "app:s3cretMY@tcp(127.0.0.1:1)/x?timeout=2s", "s3cretMY"},
	} {
		bad := writeFile(t, "bad.yaml", auditRules(c.driver, c.dsn, c.dsn))
		code, out, errs := runAudit(bad, "t_order")
		if code != 2 || out != "" || strings.Contains(errs, c.secret) || !strings.Contains(errs, "data source ds_0") {
			t.Errorf("%s unreachable: exit %d, stdout %q, stderr %q", c.driver, code, out, errs)
		}
	}
}

// TestAuditOrdersTextKeysAsBytes: a text key column is merged in byte
// order on every database, whatever its collation, so a key in two
// tables is found however its case sorts.
func TestAuditOrdersTextKeysAsBytes(t *testing.T) {
	for _, which := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(which, func(t *testing.T) {
			a := openAuditDBs(t, which)
			rules := writeFile(t, "rules.yaml", auditRules(a.driver, a.dsns[0], a.dsns[1]))
			r := auditRouter(t, rules)
			// code is the key; user_id and code route each row.
			for i, code := range []string{"a", "B", "c", "D", "e", "F", "Zz", "aa", "b"} {
				user := int64(i)
				ts, err := r.Route("t_item", shardconf.Eq("user_id", user), shardconf.Eq("code", code))
				if err != nil {
					t.Fatal(err)
				}
				a.exec(t, int(ts[0].DataSource[3]-'0'), fmt.Sprintf("INSERT INTO %s (id, user_id, code) VALUES (%s, %s, %s)", ts[0].Table, a.ph(1), a.ph(2), a.ph(3)), i, user, code)
			}
			if code, out, errs := runAudit("-key", "code", "-batch", "2", rules, "t_item"); code != 0 {
				t.Fatalf("clean text keys: exit %d\n%s%s", code, out, errs)
			}
			// "B" again (the first is user 1's, in ds_1), in the other data
			// source, where this copy's own values route (user 2 -> ds_0).
			ts, _ := r.Route("t_item", shardconf.Eq("user_id", 2), shardconf.Eq("code", "B"))
			if ts[0].DataSource != "ds_0" {
				t.Fatalf("user 2 routes to %v", ts)
			}
			a.exec(t, 0, fmt.Sprintf("INSERT INTO %s (id, user_id, code) VALUES (100, 2, 'B')", ts[0].Table))
			code, out, errs := runAudit("-key", "code", "-batch", "2", "-o", "json", rules, "t_item")
			var rep auditReport
			if err := json.Unmarshal([]byte(out), &rep); code != 1 || err != nil || rep.Totals.DuplicateKeys != 1 ||
				rep.Totals.Misplaced != 0 || rep.Tables[0].Duplicates[0].Key != "B" {
				t.Errorf("text key in two tables: exit %d, %v, %s\n%s", code, err, errs, out)
			}
		})
	}
}

// TestAuditReportsUnroutableRows: a row whose sharding value routes to no
// table of the rules (t_ref_5) is reported with the router's error.
func TestAuditReportsUnroutableRows(t *testing.T) {
	a := openAuditDBs(t, "sqlite")
	rules := writeFile(t, "rules.yaml", auditRules(a.driver, a.dsns[0], a.dsns[1]))
	a.exec(t, 0, "INSERT INTO t_ref_0 (id, user_id) VALUES (1, 0), (2, 5)")
	a.exec(t, 0, "INSERT INTO t_ref_1 (id, user_id) VALUES (3, 1)")
	code, out, errs := runAudit("-key", "id", rules, "t_ref")
	want := `LOGIC TABLE  DATA SOURCE  TABLE    ROWS  MISPLACED  NO VALUE  UNROUTABLE  DUPLICATE KEYS  NO KEY
t_ref        ds_0         t_ref_0  2     0          0         1           0               0
t_ref        ds_0         t_ref_1  1     0          0         0           0               0
unroutable  t_ref ds_0.t_ref_0 id=2 (user_id=5): shardconf: no route: table t_ref, column user_id, value 5
`
	if code != 1 || !strings.HasPrefix(out, want) || errs != "" {
		t.Errorf("exit %d\n%s\nstderr %q\nwant prefix:\n%s", code, out, errs, want)
	}
}

// TestAuditProgressOnlyOnATerminal: no bar on a pipe or file; on a
// terminal a bar of rows read, cleared at the end.
func TestAuditProgressOnlyOnATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := newProgress(f); p != nil {
		t.Error("a progress bar on a regular file")
	}
	var b bytes.Buffer
	p := &progress{w: &b}
	p.start("t_order", 4)
	p.last = time.Time{}
	p.add(2)
	p.done()
	if got := b.String(); !strings.Contains(got, "audit t_order [...") || !strings.Contains(got, "2/4 rows") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("bar: %q", got)
	}
	var none *progress // nil draws nothing and does not panic
	none.start("t", 1)
	none.add(1)
	none.done()
}

// TestAuditLeavesOutHintRoutedTables: a hint strategy's rows are where the
// statement's hint put them; routed without it every row would be called
// unroutable. Named, such a table is a usage error; by default it is left out.
func TestAuditLeavesOutHintRoutedTables(t *testing.T) {
	a := openAuditDBs(t, "sqlite")
	rules := strings.Replace(auditRules(a.driver, a.dsns[0], a.dsns[1]), "  shardingAlgorithms:\n", `    t_hinted:
      actualDataNodes: ds_0.t_ref_${0..1}
      tableStrategy: {hint: {shardingAlgorithmName: by_hint}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_hint: {type: HINT_INLINE, props: {algorithm-expression: 't_ref_${value % 2}'}}
`, 1)
	file := writeFile(t, "rules.yaml", rules)
	a.exec(t, 0, "INSERT INTO t_ref_1 (id, user_id) VALUES (1, 0)")
	code, out, errs := runAudit("-keygen-props", "worker-id=1", file, "t_hinted")
	if code != 2 || !strings.Contains(errs, "t_hinted is routed by a hint strategy") {
		t.Errorf("audit t_hinted: exit %d\n%s\nstderr %s\nwant exit 2 saying it is routed by a hint strategy", code, out, errs)
	}
	a.placeWell(t, auditRouter(t, file), 4)
	code, out, errs = runAudit("-keygen-props", "worker-id=1", "-key", "id", file)
	if code != 1 || strings.Contains(out, "t_hinted") || errs != "" {
		t.Errorf("audit of every table: exit %d\n%s\nstderr %s\nwant t_hinted left out", code, out, errs)
	}
}
