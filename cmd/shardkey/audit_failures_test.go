package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

const afRules = `dataSources:
  ds_0: {driver: pgx, dsn: '%s'}
  ds_1: {driver: pgx, dsn: '%s'}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: two}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: two}}
  shardingAlgorithms:
    two: {type: MOD, props: {sharding-count: 2}}
`

// cutOnDraw takes ds_1 away the first time the progress bar draws, which
// is after every physical table's first page was read and before the
// merge reads the next pages.
type cutOnDraw struct {
	once sync.Once
	p    *dbtest.Proxy
}

func (c *cutOnDraw) Write(b []byte) (int, error) {
	c.once.Do(c.p.Cut)
	return len(b), nil
}

// TestAuditDataSourceDownMidwayIsAnErrorWithoutPassword: a data source
// that goes away after the first pages is an error (exit 2), never a
// report of the rows read so far, and the error does not print the DSN's
// password.
func TestAuditDataSourceDownMidwayIsAnErrorWithoutPassword(t *testing.T) {
	dsn0, dsn1 := dbtest.Postgres(t, "adv_audit_down_0"), dbtest.Postgres(t, "adv_audit_down_1")
	via, proxy := dbtest.ViaProxy(t, "pgx", dsn1)
	// The servers trust local users: a password is accepted and unused.
	secret := strings.Replace(via, "://postgres@", "://postgres:Mid%40Secret@", 1)
	if secret == via {
		t.Fatalf("cannot add a password to %s", via)
	}
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(afRules, dsn0, secret))
	r := auditRouter(t, rules)
	for i, dsn := range []string{dsn0, dsn1} {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for j := 0; j < 2; j++ {
			atExec(t, db, fmt.Sprintf("CREATE TABLE t_order_%d (order_id BIGINT PRIMARY KEY, user_id BIGINT)", j))
		}
		for id := int64(1); id <= 40; id++ {
			ts, err := r.Route("t_order", shardconf.Eq("order_id", id), shardconf.Eq("user_id", id))
			if err != nil {
				t.Fatal(err)
			}
			if ts[0].DataSource == fmt.Sprintf("ds_%d", i) {
				atExec(t, db, fmt.Sprintf("INSERT INTO %s (order_id, user_id) VALUES (%d, %d)", ts[0].Table, id, id))
			}
		}
	}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	a, err := newAuditor(addRulesFlags(fs), rules, []string{"t_order"}, "order_id")
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	a.batch, a.limit, a.progress = 2, 100, &progress{w: &cutOnDraw{p: proxy}}
	rep, err := a.run(context.Background())
	if err == nil {
		t.Fatalf("ds_1 cut mid-way: no error, report %+v", rep.Totals)
	}
	msg := asExit2(a.scrub(err)).Error()
	if _, usage := asExit2(a.scrub(err)).(*usageError); !usage || strings.Contains(msg, "Secret") || !strings.Contains(msg, "ds_1") {
		t.Errorf("ds_1 cut mid-way: %q (exit 2, naming ds_1, without the password)", msg)
	}
}

// TestAuditReadsATableNamedTwiceOnce: naming a logic table twice (in any
// case) audits it once; its rows were counted twice.
func TestAuditReadsATableNamedTwiceOnce(t *testing.T) {
	driver, dsns, dbs := atOpen(t, "sqlite", "adv_twice")
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(atTextKeyRules, driver, dsns[0], dsns[1]))
	for i, db := range dbs {
		atExec(t, db, "CREATE TABLE t_txt (k TEXT NOT NULL PRIMARY KEY, user_id BIGINT NOT NULL)")
		atExec(t, db, fmt.Sprintf("INSERT INTO t_txt (k, user_id) VALUES ('a%d', %d)", i, i))
	}
	code, rep, errs := atReport(t, "-key", "k", rules, "t_txt", "T_TXT", "t_txt")
	if code != exitOK || len(rep.Tables) != 1 || rep.Totals.Rows != 2 {
		t.Errorf("t_txt named three times: exit %d, %d tables, %d rows, %s", code, len(rep.Tables), rep.Totals.Rows, errs)
	}
}

const afCompositeRules = `dataSources:
  ds_0: {driver: %[1]s, dsn: '%[2]s'}
  ds_1: {driver: %[1]s, dsn: '%[3]s'}
rules:
- !SHARDING
  tables:
    t_line:
      actualDataNodes: ds_${0..1}.t_line_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: two}}
      tableStrategy: {standard: {shardingColumn: sku, shardingAlgorithmName: hash2}}
  shardingAlgorithms:
    two: {type: MOD, props: {sharding-count: 2}}
    hash2: {type: HASH_MOD, props: {sharding-count: 2}}
`

// TestAuditAuditsCompositeKeys: a table keyed by (user_id, line) — line
// repeats for every user, so neither column is unique — is audited with
// -key user_id,line on every database, page after page: clean when every
// row is in place, then the misplaced row and the key in two shards are
// found, and the key is printed as its parts.
func TestAuditAuditsCompositeKeys(t *testing.T) {
	for _, which := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(which, func(t *testing.T) {
			driver, dsns, dbs := atOpen(t, which, "adv_audit_comp")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(afCompositeRules, driver, dsns[0], dsns[1]))
			r := auditRouter(t, rules)
			for _, db := range dbs {
				for j := 0; j < 2; j++ {
					atExec(t, db, fmt.Sprintf("CREATE TABLE t_line_%d (user_id BIGINT NOT NULL, line VARCHAR(10) NOT NULL, sku VARCHAR(10), PRIMARY KEY (user_id, line))", j))
				}
			}
			put := func(ds, user int, line, sku string, table string) {
				atExec(t, dbs[ds], fmt.Sprintf("INSERT INTO %s (user_id, line, sku) VALUES (%d, '%s', '%s')", table, user, line, sku))
			}
			n := 0
			for user := 0; user < 5; user++ {
				for _, line := range []string{"a", "B", "c", "é"} {
					sku := fmt.Sprintf("s%d%s", user, line)
					ts, err := r.Route("t_line", shardconf.Eq("user_id", user), shardconf.Eq("sku", sku))
					if err != nil {
						t.Fatal(err)
					}
					put(int(ts[0].DataSource[3]-'0'), user, line, sku, ts[0].Table)
					n++
				}
			}
			for _, batch := range []string{"1000", "3", "1"} {
				code, rep, errs := atReport(t, "-key", "user_id, line", "-batch", batch, rules)
				if code != exitOK || rep.Totals.Rows != int64(n) {
					t.Fatalf("-batch %s, clean: exit %d, %+v, %s", batch, code, rep.Totals, errs)
				}
			}
			// (1, 'zz') where user 0 belongs: ds_0 instead of ds_1.
			put(0, 1, "zz", "s1zz", "t_line_0")
			// (2, 'a') again in the other data source, where its own user routes.
			ts, _ := r.Route("t_line", shardconf.Eq("user_id", 3), shardconf.Eq("sku", "x"))
			put(int(ts[0].DataSource[3]-'0'), 2, "a", "x", ts[0].Table)
			for _, batch := range []string{"1000", "1"} {
				code, rep, errs := atReport(t, "-key", "user_id,line", "-batch", batch, rules)
				if code != exitRuntime || rep.Totals.Misplaced != 2 || rep.Totals.DuplicateKeys != 1 ||
					rep.Tables[0].Duplicates[0].Key != "(2, a)" || rep.Tables[0].KeyColumn != "user_id,line" {
					t.Errorf("-batch %s: exit %d, %+v, %s\n%+v", batch, code, rep.Totals, errs, rep.Tables)
				}
			}
			if code, _, errs := runAudit("-key", "line", rules); code != exitUsage || !strings.Contains(errs, "is not unique") {
				t.Errorf("-key line alone: exit %d, %s", code, errs)
			}
		})
	}
}

const afQuotedRules = `dataSources:
  ds_0: {driver: %[1]s, dsn: '%[2]s'}
  ds_1: {driver: %[1]s, dsn: '%[3]s'}
rules:
- !SHARDING
  tables:
    t_q:
      actualDataNodes: ds_0.t_q_${0..1}
      tableStrategy: {standard: {shardingColumn: 'u"s` + "`" + `er; DROP TABLE t_q_1 --', shardingAlgorithmName: two}}
  shardingAlgorithms:
    two: {type: MOD, props: {sharding-count: 2}}
`

// TestAuditQuotesNamesFromTheRuleFile: a column name holding both quote
// characters and SQL is one identifier on every database: the audit reads
// it and drops nothing.
func TestAuditQuotesNamesFromTheRuleFile(t *testing.T) {
	const col = "u\"s`er; DROP TABLE t_q_1 --"
	for _, which := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(which, func(t *testing.T) {
			driver, dsns, dbs := atOpen(t, which, "adv_audit_quote")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(afQuotedRules, driver, dsns[0], dsns[1]))
			dialect := dialectFor(driver)
			for j := 0; j < 2; j++ {
				atExec(t, dbs[0], fmt.Sprintf("CREATE TABLE t_q_%d (%s BIGINT NOT NULL PRIMARY KEY, %s BIGINT)", j,
					quoteIdent("i\"d`", dialect), quoteIdent(strings.ToLower(col), dialect)))
				atExec(t, dbs[0], fmt.Sprintf("INSERT INTO t_q_%d VALUES (%d, %d)", j, j+1, j))
			}
			code, rep, errs := atReport(t, "-key", "i\"d`", rules)
			if code != exitOK || rep.Totals.Rows != 2 {
				t.Errorf("exit %d, %+v, %s", code, rep.Totals, errs)
			}
			var n int
			if err := dbs[0].QueryRow("SELECT COUNT(*) FROM t_q_1").Scan(&n); err != nil || n != 1 {
				t.Errorf("t_q_1 after the audit: %d rows, %v", n, err)
			}
		})
	}
}

const afCaseRules = `dataSources:
  ds_0: {driver: %[1]s, dsn: '%[2]s'}
  ds_1: {driver: %[1]s, dsn: '%[3]s'}
rules:
- !SHARDING
  tables:
    t_c:
      actualDataNodes: ds_0.t_c_${0..1}
      tableStrategy: {standard: {shardingColumn: userId, shardingAlgorithmName: two}}
      keyGenerateStrategy: {column: ORDER_ID, keyGeneratorName: snow}
  shardingAlgorithms:
    two: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snow: {type: SNOWFLAKE}
`

// TestAuditFindsColumnsWhateverTheirCase: rule files name columns
// ignoring case (ShardingSphere does; the router lower-cases sharding
// columns), but PostgreSQL matches a quoted name exactly: a column created
// as "userId" and a key column order_id named ORDER_ID were not found
// (exit 2). Two columns equal ignoring case are refused as ambiguous.
func TestAuditFindsColumnsWhateverTheirCase(t *testing.T) {
	for _, which := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(which, func(t *testing.T) {
			driver, dsns, dbs := atOpen(t, which, "adv_audit_case")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(afCaseRules, driver, dsns[0], dsns[1]))
			d := dialectFor(driver)
			for j := 0; j < 2; j++ {
				atExec(t, dbs[0], fmt.Sprintf("CREATE TABLE t_c_%d (order_id BIGINT NOT NULL PRIMARY KEY, %s BIGINT)", j, quoteIdent("userId", d)))
				atExec(t, dbs[0], fmt.Sprintf("INSERT INTO t_c_%d VALUES (%d, %d), (%d, %d)", j, 10+j, j, 20+j, 2+j))
			}
			code, rep, errs := atReport(t, "-keygen-props", "worker-id=1", "-batch", "1", rules)
			if code != exitOK || rep.Totals.Rows != 4 {
				t.Errorf("exit %d, %+v, %s", code, rep.Totals, errs)
			}
			if which != "postgres" {
				return
			}
			atExec(t, dbs[0], `ALTER TABLE t_c_1 ADD COLUMN userid BIGINT`)
			if code, _, errs := runAudit("-keygen-props", "worker-id=1", rules); code != exitUsage || !strings.Contains(errs, "ambiguous") {
				t.Errorf("userId and userid: exit %d, %s", code, errs)
			}
		})
	}
}

type afFullWriter struct{}

func (afFullWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("no space left on device") }

// TestAuditReportNotWrittenExitsTwo: exit 1 means "findings, see the
// report"; a report that could not be written (a full disk) exits 2, with
// or without findings.
func TestAuditReportNotWrittenExitsTwo(t *testing.T) {
	driver, dsns, dbs := atOpen(t, "sqlite", "adv_full")
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(atTextKeyRules, driver, dsns[0], dsns[1]))
	for _, db := range dbs {
		atExec(t, db, "CREATE TABLE t_txt (k TEXT NOT NULL PRIMARY KEY, user_id BIGINT NOT NULL)")
	}
	atExec(t, dbs[0], "INSERT INTO t_txt VALUES ('a', 1)") // misplaced: user 1 routes to ds_1
	for _, format := range []string{"text", "json"} {
		var errs strings.Builder
		if code := run([]string{"audit", "-o", format, "-key", "k", rules}, afFullWriter{}, &errs); code != exitUsage ||
			!strings.Contains(errs.String(), "no space left") {
			t.Errorf("-o %s to a full disk: exit %d, %s", format, code, errs.String())
		}
	}
}

const afSingleRules = `dataSources:
  ds_0: {driver: sqlite, dsn: '%s'}
  ds_1: {driver: sqlite, dsn: '%s'}
rules:
- !SHARDING
  tables:
    t_txt:
      actualDataNodes: ds_${0..1}.t_txt
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: k, keyGeneratorName: snow}
    t_single:
      actualDataNodes: ds_1.t_single
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snow: {type: SNOWFLAKE}
- !BROADCAST
  tables: [t_dict]
`

// TestAuditOfEveryTableSkipsTablesWithOneNode: with no table named, audit
// reads every table whose rows could be misplaced. A table with one data
// node (and a broadcast table) has none, and asking for its key column
// made the whole run exit 2.
func TestAuditOfEveryTableSkipsTablesWithOneNode(t *testing.T) {
	_, dsns, dbs := atOpen(t, "sqlite", "adv_single")
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(afSingleRules, dsns[0], dsns[1]))
	for i, db := range dbs {
		atExec(t, db, "CREATE TABLE t_txt (k BIGINT NOT NULL PRIMARY KEY, user_id BIGINT NOT NULL)")
		atExec(t, db, fmt.Sprintf("INSERT INTO t_txt VALUES (%d, %d)", i+1, i))
	}
	atExec(t, dbs[1], "CREATE TABLE t_single (id BIGINT PRIMARY KEY)")
	code, rep, errs := atReport(t, "-keygen-props", "worker-id=1", rules)
	if code != exitOK || len(rep.Tables) != 1 || rep.Tables[0].Logic != "t_txt" || rep.Totals.Rows != 2 {
		t.Errorf("exit %d, %+v, %s", code, rep.Tables, errs)
	}
	// Named, a one-node table is audited (its key still required).
	if code, _, errs := runAudit("-keygen-props", "worker-id=1", rules, "t_single"); code != exitUsage || !strings.Contains(errs, "t_single has no keyGenerateStrategy") {
		t.Errorf("t_single named: exit %d, %s", code, errs)
	}
}
