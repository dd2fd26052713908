package main

// Tests of which tables, rows and columns audit reads: a table named
// twice, composite keys, names quoted or spelled in another case, tables
// with one data node.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// TestAuditReadsATableNamedTwiceOnce: naming a logic table twice (in any
// case) audits it once: its rows are counted once.
func TestAuditReadsATableNamedTwiceOnce(t *testing.T) {
	driver, dsns, dbs := atOpen(t, "sqlite", "audit_twice")
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

const compositeKeyRules = `dataSources:
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
			driver, dsns, dbs := atOpen(t, which, "audit_comp")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(compositeKeyRules, driver, dsns[0], dsns[1]))
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

const quotedNameRules = `dataSources:
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
			driver, dsns, dbs := atOpen(t, which, "audit_quote")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(quotedNameRules, driver, dsns[0], dsns[1]))
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

const columnCaseRules = `dataSources:
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
// as "userId" and a key column order_id named ORDER_ID are found as the
// database spells them. Two columns equal ignoring case are refused as
// ambiguous.
func TestAuditFindsColumnsWhateverTheirCase(t *testing.T) {
	for _, which := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(which, func(t *testing.T) {
			driver, dsns, dbs := atOpen(t, which, "audit_case")
			rules := writeFile(t, "rules.yaml", fmt.Sprintf(columnCaseRules, driver, dsns[0], dsns[1]))
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

const oneNodeRules = `dataSources:
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
// node (and a broadcast table) has none and is skipped: asking for its
// key column would fail the whole run.
func TestAuditOfEveryTableSkipsTablesWithOneNode(t *testing.T) {
	_, dsns, dbs := atOpen(t, "sqlite", "audit_single")
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(oneNodeRules, dsns[0], dsns[1]))
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
