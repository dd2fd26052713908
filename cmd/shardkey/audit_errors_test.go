package main

// Tests of audit's failures: each is an error (exit 2), never a partial
// report, and none prints a password.

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

const downRules = `dataSources:
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
	dsn0, dsn1 := dbtest.Postgres(t, "audit_down_0"), dbtest.Postgres(t, "audit_down_1")
	via, proxy := dbtest.ViaProxy(t, "pgx", dsn1)
	// The servers trust local users: a password is accepted and unused.
	secret := strings.Replace(via, "://postgres@", "://postgres:Mid%40Secret@", 1)
	if secret == via {
		t.Fatalf("cannot add a password to %s", via)
	}
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(downRules, dsn0, secret))
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

type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, fmt.Errorf("no space left on device") }

// TestAuditReportNotWrittenExitsTwo: exit 1 means "findings, see the
// report"; a report that could not be written (a full disk) exits 2, with
// or without findings.
func TestAuditReportNotWrittenExitsTwo(t *testing.T) {
	driver, dsns, dbs := atOpen(t, "sqlite", "audit_full")
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(atTextKeyRules, driver, dsns[0], dsns[1]))
	for _, db := range dbs {
		atExec(t, db, "CREATE TABLE t_txt (k TEXT NOT NULL PRIMARY KEY, user_id BIGINT NOT NULL)")
	}
	atExec(t, dbs[0], "INSERT INTO t_txt VALUES ('a', 1)") // misplaced: user 1 routes to ds_1
	for _, format := range []string{"text", "json"} {
		var errs strings.Builder
		if code := run([]string{"audit", "-o", format, "-key", "k", rules}, fullDisk{}, &errs); code != exitUsage ||
			!strings.Contains(errs.String(), "no space left") {
			t.Errorf("-o %s to a full disk: exit %d, %s", format, code, errs.String())
		}
	}
}
