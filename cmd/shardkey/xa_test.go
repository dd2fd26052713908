package main

// Tests of `shardkey xa list|recover` against real PostgreSQL (ds_0, the
// decision log's default home) and MariaDB (ds_1): branches are left
// prepared the way internal/xa leaves them, the command is run in-process,
// and its output and the rows and branches afterwards are checked.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/keygen"
)

const xaRules = `dataSources:
  ds_0: {driver: pgx, dsn: '%s'}
  ds_1: {driver: mysql, dsn: '%s'}
rules:
- !SHARDING
  tables:
    t_acct:
      actualDataNodes: ds_${0..1}.t_acct
      databaseStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: two}}
  shardingAlgorithms:
    two: {type: MOD, props: {sharding-count: 2}}
`

// xaEnv is one test's pair of databases, their rule file, and a
// coordinator of the test's own over them (it creates the decision log and
// issues GTRIDs; its recovery never runs on a timer).
type xaEnv struct {
	dsn   [2]string
	db    [2]*sql.DB
	rules string
	coord *xa.Coordinator // GTRIDs of now
	old   *xa.Coordinator // GTRIDs two hours old
}

func newXAEnv(t *testing.T, name string) *xaEnv {
	t.Helper()
	e := &xaEnv{dsn: [2]string{dbtest.Postgres(t, name+"_0"), dbtest.MySQL(t, name+"_1")}}
	for i, drv := range []string{"pgx", "mysql"} {
		db, err := sql.Open(drv, e.dsn[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e.db[i] = db
		e.exec(t, i, "CREATE TABLE t_acct (id BIGINT PRIMARY KEY, note VARCHAR(40))")
	}
	e.rules = writeFile(t, "rules.yaml", fmt.Sprintf(xaRules, e.dsn[0], e.dsn[1]))
	e.coord = e.coordinator(t, "", time.Now, nil)
	e.old = e.coordinator(t, "", func() time.Time { return time.Now().Add(-2 * time.Hour) }, nil)
	return e
}

// fakeClock reads now(); it never sleeps (a generator's short waits pass).
type fakeClock struct{ now func() time.Time }

func (c fakeClock) Now() time.Time      { return c.now() }
func (fakeClock) Sleep(d time.Duration) {}

// coordinator is a started coordinator over the env's pools, with its log
// in table (default: xa's), whose GTRIDs carry the times now returns; hook
// is its Config.Hook.
func (e *xaEnv) coordinator(t *testing.T, table string, now func() time.Time, hook func(xa.Stage, string) error) *xa.Coordinator {
	t.Helper()
	ids, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "7"},
		keygen.WithClock(fakeClock{now}), keygen.WithSequenceScope(keygen.NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := xa.New(xa.Config{LogTable: table, IDs: ids, Now: now, Interval: -1, Logger: slog.New(slog.DiscardHandler), Hook: hook}, []xa.Source{
		{Name: "ds_0", Dialect: dialect.Postgres, DB: e.db[0]},
		{Name: "ds_1", Dialect: dialect.MySQL, DB: e.db[1]},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (e *xaEnv) exec(t *testing.T, ds int, q string, args ...any) {
	t.Helper()
	if _, err := e.db[ds].Exec(q, args...); err != nil {
		t.Fatalf("ds_%d: %s: %v", ds, q, err)
	}
}

func (e *xaEnv) count(t *testing.T, ds int, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.db[ds].QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("ds_%d: %s: %v", ds, q, err)
	}
	return n
}

// gtrid issues a GTRID from c.
func gtrid(t *testing.T, c *xa.Coordinator) string {
	t.Helper()
	tx, err := c.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	return tx.GTRID()
}

// The branch ids internal/xa uses (see its package documentation).
func pgGID(gtrid, source string) string { return gtrid + ":" + source }

func myXID(gtrid, source string, formatID int) string {
	return "X'" + hex.EncodeToString([]byte(gtrid)) + "',X'" + hex.EncodeToString([]byte(source)) + "'," + strconv.Itoa(formatID)
}

// preparePG leaves a transaction inserting row id prepared on ds_0 under
// gid, on a pool of its own that is then closed (a prepared transaction
// belongs to no session). Cleanup rolls it back if it is still there.
func (e *xaEnv) preparePG(t *testing.T, gid string, id int64) {
	t.Helper()
	db, err := sql.Open("pgx", e.dsn[0])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	q := "'" + strings.ReplaceAll(gid, "'", "''") + "'"
	for _, s := range []string{"BEGIN", fmt.Sprintf("INSERT INTO t_acct VALUES (%d, 'pg')", id), "PREPARE TRANSACTION " + q} {
		if _, err := conn.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("ds_0: %s: %v", s, err)
		}
	}
	t.Cleanup(func() { e.db[0].Exec("ROLLBACK PREPARED " + q) })
}

// prepareMySQL does the same on ds_1 with XA statements. The branch stays
// attached to its session while that lives (other sessions get XAER_NOTA),
// so the session is ended, and waited out, as a crashed process's would be.
func (e *xaEnv) prepareMySQL(t *testing.T, xid string, id int64) {
	t.Helper()
	db, err := sql.Open("mysql", e.dsn[1])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	session := e.session(t, conn)
	for _, s := range []string{"XA START " + xid, fmt.Sprintf("INSERT INTO t_acct VALUES (%d, 'my')", id), "XA END " + xid, "XA PREPARE " + xid} {
		if _, err := conn.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("ds_1: %s: %v", s, err)
		}
	}
	t.Cleanup(func() { e.db[1].Exec("XA ROLLBACK " + xid) })
	conn.Close()
	db.Close()
	e.waitSessionEnd(t, session)
}

// session is the MariaDB connection id of conn.
func (e *xaEnv) session(t *testing.T, conn *sql.Conn) int64 {
	t.Helper()
	var id int64
	if err := conn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// waitSessionEnd waits until MariaDB no longer lists session: its XA branch
// is then detached and any session can end it.
func (e *xaEnv) waitSessionEnd(t *testing.T, session int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if e.count(t, 1, "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = ?", session) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("MariaDB session %d still open 10s after its client closed it", session)
		}
	}
}

// prepareBoth leaves gtrid's branches prepared on both data sources, each
// inserting id.
func (e *xaEnv) prepareBoth(t *testing.T, gtrid string, id int64) {
	t.Helper()
	e.preparePG(t, pgGID(gtrid, "ds_0"), id)
	e.prepareMySQL(t, myXID(gtrid, "ds_1", xa.FormatID), id)
}

// decide writes the decision row a coordinator writes.
func (e *xaEnv) decide(t *testing.T, gtrid string, outcome byte) {
	t.Helper()
	e.exec(t, 0, "INSERT INTO "+xa.DefaultLogTable+" (gtrid, outcome, branches, created_at) VALUES ($1, $2, 'ds_0,ds_1', now())",
		gtrid, string(outcome))
}

// prepared tells which of gtrid's branches are still prepared.
func (e *xaEnv) prepared(t *testing.T, gtrid string) (pg, my bool) {
	t.Helper()
	pg = e.count(t, 0, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = $1", pgGID(gtrid, "ds_0")) == 1
	rows, err := e.db[1].Query("XA RECOVER")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var f, gl, bl int
		var data []byte
		if err := rows.Scan(&f, &gl, &bl, &data); err != nil {
			t.Fatal(err)
		}
		if f == xa.FormatID && string(data) == gtrid+"ds_1" {
			my = true
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return pg, my
}

// rowCount is how many of ids are committed on each data source.
func (e *xaEnv) rowCount(t *testing.T, id int64) (pg, my int) {
	t.Helper()
	return e.count(t, 0, "SELECT count(*) FROM t_acct WHERE id = $1", id), e.count(t, 1, "SELECT count(*) FROM t_acct WHERE id = ?", id)
}

func runXA(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := run(append([]string{"xa"}, args...), &out, &errs)
	return code, out.String(), errs.String()
}

// listed runs `xa list -o json` and returns its branches.
func listed(t *testing.T, e *xaEnv, extra ...string) []xaBranch {
	t.Helper()
	code, out, errs := runXA(append([]string{"list", "-o", "json", e.rules}, extra...)...)
	if code != 0 || errs != "" {
		t.Fatalf("xa list: exit %d, stderr %q", code, errs)
	}
	var bs []xaBranch
	if err := json.Unmarshal([]byte(out), &bs); err != nil {
		t.Fatalf("xa list -o json: %v\n%s", err, out)
	}
	return bs
}

func find(bs []xaBranch, source, gtrid string) (xaBranch, bool) {
	for _, b := range bs {
		if b.Source == source && b.GTRID == gtrid {
			return b, true
		}
	}
	return xaBranch{}, false
}

// TestXAListShowsEachPreparedBranchWithItsDecisionAndChangesNothing: list
// prints every branch of ours on both dialects with the logged decision
// (commit, rollback, none) and an age, and every branch is still prepared
// and every row uncommitted afterwards.
func TestXAListShowsEachPreparedBranchWithItsDecisionAndChangesNothing(t *testing.T) {
	e := newXAEnv(t, "xa_cli_list")
	committed, aborted, undecided := gtrid(t, e.coord), gtrid(t, e.coord), gtrid(t, e.old)
	e.prepareBoth(t, committed, 1)
	e.prepareBoth(t, aborted, 2)
	e.prepareBoth(t, undecided, 3)
	e.decide(t, committed, 'C')
	e.decide(t, aborted, 'A')
	logRows := e.count(t, 0, "SELECT count(*) FROM "+xa.DefaultLogTable)

	bs := listed(t, e)
	if len(bs) != 6 {
		t.Errorf("listed %d branches, want 6: %+v", len(bs), bs)
	}
	for _, want := range []struct {
		gtrid, decision string
	}{{committed, "commit"}, {aborted, "rollback"}, {undecided, "none"}} {
		for _, src := range []string{"ds_0", "ds_1"} {
			b, ok := find(bs, src, want.gtrid)
			if !ok {
				t.Errorf("%s on %s not listed", want.gtrid, src)
				continue
			}
			if b.Decision != want.decision {
				t.Errorf("%s on %s: decision %q, want %q", want.gtrid, src, b.Decision, want.decision)
			}
			age, err := time.ParseDuration(b.Age)
			if want.gtrid == undecided && (err != nil || age < 119*time.Minute || age > 121*time.Minute) {
				t.Errorf("%s on %s: age %q, want about 2h (its id's time)", want.gtrid, src, b.Age)
			}
		}
	}
	for i, g := range []string{committed, aborted, undecided} {
		if pg, my := e.prepared(t, g); !pg || !my {
			t.Errorf("after list, %s prepared on ds_0 %v, ds_1 %v; want both", g, pg, my)
		}
		if pg, my := e.rowCount(t, int64(i+1)); pg != 0 || my != 0 {
			t.Errorf("after list, row %d committed on ds_0 %d, ds_1 %d times; want 0", i+1, pg, my)
		}
	}
	if n := e.count(t, 0, "SELECT count(*) FROM "+xa.DefaultLogTable); n != logRows {
		t.Errorf("after list, %d rows in the decision log, want the %d before", n, logRows)
	}

	code, out, errs := runXA("list", e.rules)
	if code != 0 || errs != "" || !strings.HasPrefix(out, "DATA SOURCE  GTRID") {
		t.Fatalf("xa list: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	for _, line := range []string{"ds_0         " + committed, "ds_1         " + aborted} {
		if !strings.Contains(out, line) {
			t.Errorf("xa list: no line with %q in\n%s", line, out)
		}
	}
}

// TestXARecoverEndsEachBranchAsTheLogSaysAndLeavesYoungOnes: recover
// commits the branches of a transaction logged C (its rows appear on both
// data sources), rolls back those logged A, decides an undecided
// transaction older than -timeout rolled back (its A row is written) and
// rolls it back, and leaves an undecided young one prepared, saying why.
// Of a young transaction logged C it commits the PostgreSQL branch and
// leaves the MariaDB one until the transaction is older than -timeout.
func TestXARecoverEndsEachBranchAsTheLogSaysAndLeavesYoungOnes(t *testing.T) {
	e := newXAEnv(t, "xa_cli_recover")
	committed, aborted, stale, young, youngC := gtrid(t, e.old), gtrid(t, e.old), gtrid(t, e.old), gtrid(t, e.coord), gtrid(t, e.coord)
	all := []string{committed, aborted, stale, young, youngC}
	for i, g := range all {
		e.prepareBoth(t, g, int64(i+1))
	}
	e.decide(t, committed, 'C')
	e.decide(t, aborted, 'A')
	e.decide(t, youngC, 'C')

	rep := recovered(t, e)
	want := func(what string, got []xaBranch, n int, bs ...branchSpec) {
		t.Helper()
		if len(got) != n {
			t.Errorf("%s: %d branches %+v, want %d", what, len(got), got, n)
		}
		for _, b := range bs {
			if r, ok := find(got, b.source, b.gtrid); !ok || !strings.Contains(r.Reason, b.reason) {
				t.Errorf("%s: %s on %s missing or not %q: %+v", what, b.gtrid, b.source, b.reason, got)
			}
		}
	}
	want("committed", rep.Committed, 3, branchSpec{"ds_0", committed, ""}, branchSpec{"ds_1", committed, ""}, branchSpec{"ds_0", youngC, ""})
	want("rolled back", rep.RolledBack, 4, branchSpec{"ds_0", aborted, ""}, branchSpec{"ds_1", aborted, ""},
		branchSpec{"ds_0", stale, ""}, branchSpec{"ds_1", stale, ""})
	want("left", rep.Left, 3, branchSpec{"ds_0", young, "younger than -timeout"}, branchSpec{"ds_1", young, "younger than -timeout"},
		branchSpec{"ds_1", youngC, "MySQL branch is finished only once its transaction is older than -timeout"})
	if len(rep.Errors) != 0 {
		t.Errorf("errors %q", rep.Errors)
	}
	for i, g := range all {
		pg, my := e.prepared(t, g)
		n0, n1 := e.rowCount(t, int64(i+1))
		if wantPG, wantMy := g == young, g == young || g == youngC; pg != wantPG || my != wantMy {
			t.Errorf("after recover, %s prepared on ds_0 %v, ds_1 %v; want %v, %v", g, pg, my, wantPG, wantMy)
		}
		if want0, want1 := b2i(g == committed || g == youngC), b2i(g == committed); n0 != want0 || n1 != want1 {
			t.Errorf("after recover, row %d on ds_0 %d, ds_1 %d; want %d, %d", i+1, n0, n1, want0, want1)
		}
	}
	if n := e.count(t, 0, "SELECT count(*) FROM "+xa.DefaultLogTable+" WHERE gtrid = $1 AND outcome = 'A'", stale); n != 1 {
		t.Errorf("the stale transaction's decision rows (outcome A): %d, want 1 (written before its rollback)", n)
	}
	code, out, errs := runXA("recover", e.rules)
	if sum := "recovery: 0 committed, 0 rolled back, 3 left, 0 errors\n"; code != 0 || errs != "" || !strings.HasSuffix(out, sum) || !strings.HasPrefix(out, "left ") {
		t.Errorf("second xa recover: exit %d, stderr %q, stdout\n%s\nwant three left lines and %q", code, errs, out, sum)
	}
}

// branchSpec is a branch a report should hold, with text its reason holds.
type branchSpec struct{ source, gtrid, reason string }

func b2i(b bool) int { return map[bool]int{true: 1}[b] }

// recovered runs `xa recover -o json`, which must succeed, and returns its report.
func recovered(t *testing.T, e *xaEnv) xaRecovery {
	t.Helper()
	code, out, errs := runXA("recover", "-o", "json", e.rules)
	if code != 0 || errs != "" {
		t.Fatalf("xa recover: exit %d, stderr %q, stdout\n%s", code, errs, out)
	}
	var rep xaRecovery
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("xa recover -o json: %v\n%s", err, out)
	}
	return rep
}

// TestXAForeignPreparedTransactionsAreNeitherListedNorTouched: prepared
// transactions that are not ours — another gid on PostgreSQL, another
// formatID on MariaDB, and shardkey branches of another decision log —
// are not listed, and recover (even with -timeout at its minimum, which
// rolls back every undecided branch of ours past a second) leaves them
// prepared.
func TestXAForeignPreparedTransactionsAreNeitherListedNorTouched(t *testing.T) {
	e := newXAEnv(t, "xa_cli_foreign")
	// Another deployment on the same databases, with its own decision log.
	elsewhere := e.coordinator(t, "other_xa_log", func() time.Time { return time.Now().Add(-2 * time.Hour) }, nil)
	otherLog := gtrid(t, elsewhere)
	if p := e.old.BranchPrefix(); p == "" || strings.HasPrefix(otherLog, p) {
		t.Fatalf("another log's GTRID %s has this log's prefix %q", otherLog, p)
	}
	e.preparePG(t, "app:tx-42", 11)
	e.preparePG(t, pgGID(otherLog, "ds_0"), 12)
	e.prepareMySQL(t, myXID("app:tx-42", "ds_1", 1), 11)
	e.prepareMySQL(t, myXID(gtrid(t, e.old), "ds_1", 1), 13) // our gtrid form, another formatID
	e.prepareMySQL(t, myXID(otherLog, "ds_1", xa.FormatID), 12)
	ours := gtrid(t, e.old)
	e.prepareBoth(t, ours, 14)

	bs := listed(t, e)
	if len(bs) != 2 || bs[0].GTRID != ours || bs[1].GTRID != ours {
		t.Errorf("listed %+v, want only the 2 branches of %s", bs, ours)
	}
	code, out, errs := runXA("recover", "-timeout", "1s", e.rules)
	if code != 0 || errs != "" || !strings.HasSuffix(out, "recovery: 0 committed, 2 rolled back, 0 left, 0 errors\n") {
		t.Errorf("xa recover: exit %d, stderr %q, stdout\n%s", code, errs, out)
	}
	if n := e.count(t, 0, "SELECT count(*) FROM pg_prepared_xacts WHERE gid IN ('app:tx-42', $1)", pgGID(otherLog, "ds_0")); n != 2 {
		t.Errorf("foreign PostgreSQL prepared transactions left: %d, want 2", n)
	}
	rows, err := e.db[1].Query("XA RECOVER")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var mine []string
	for rows.Next() {
		var f, gl, bl int
		var data []byte
		if err := rows.Scan(&f, &gl, &bl, &data); err != nil {
			t.Fatal(err)
		}
		mine = append(mine, fmt.Sprintf("%d:%s", f, data))
	}
	for _, want := range []string{"1:app:tx-42ds_1", fmt.Sprintf("%d:%sds_1", xa.FormatID, otherLog)} {
		found := false
		for _, m := range mine {
			found = found || m == want
		}
		if !found {
			t.Errorf("XA RECOVER after recover: %q gone (have %q)", want, mine)
		}
	}
}

// TestXAWithoutTheDecisionLogTouchesNothingAndExitsOne: with the decision
// log gone (or -log-table naming another table), no branch can be told to
// be ours: list and recover exit 1 naming the table and the flags, print
// nothing on stdout, and every branch stays prepared.
func TestXAWithoutTheDecisionLogTouchesNothingAndExitsOne(t *testing.T) {
	e := newXAEnv(t, "xa_cli_nolog")
	g := gtrid(t, e.old)
	e.prepareBoth(t, g, 1)
	for _, args := range [][]string{{"-log-table", "no_such_log"}, {}} {
		if len(args) == 0 {
			e.exec(t, 0, "DROP TABLE "+xa.DefaultLogTable)
		}
		for _, sub := range []string{"list", "recover"} {
			code, out, errs := runXA(append([]string{sub, e.rules}, args...)...)
			if code != 1 || out != "" || !strings.Contains(errs, e.rules) || !strings.Contains(errs, "-log-table") {
				t.Errorf("xa %s %q without its log: exit %d, stdout %q, stderr %q; want exit 1 naming the file and -log-table", sub, args, code, out, errs)
			}
		}
	}
	if pg, my := e.prepared(t, g); !pg || !my {
		t.Errorf("after xa without a log, prepared on ds_0 %v, ds_1 %v; want both", pg, my)
	}
}

// TestXARecoverReportsWhatItDidAndExitsOneWhenABranchCannotBeEnded: a
// transaction logged C whose PostgreSQL branch the command's user may not
// finish (PostgreSQL lets only the preparing user or a superuser end it):
// recover still commits the MariaDB branch, prints it, prints the error
// naming the data source, and exits 1; a later recover by a user who may
// finish it commits the rest.
func TestXARecoverReportsWhatItDidAndExitsOneWhenABranchCannotBeEnded(t *testing.T) {
	e := newXAEnv(t, "xa_cli_partial")
	role := "shardkey_xa_cli_other"
	e.exec(t, 0, "DROP ROLE IF EXISTS "+role)
	e.exec(t, 0, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() {
		e.db[0].Exec("DROP OWNED BY " + role)
		e.db[0].Exec("DROP ROLE " + role)
	})
	e.exec(t, 0, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+role)
	g := gtrid(t, e.old)
	e.prepareBoth(t, g, 1)
	e.decide(t, g, 'C')

	other := strings.Replace(e.dsn[0], "://postgres@", "://"+role+"@", 1)
	if other == e.dsn[0] {
		t.Fatalf("cannot change the user of %s", e.dsn[0])
	}
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(xaRules, other, e.dsn[1]))
	code, out, errs := runXA("recover", rules)
	if code != 1 || errs != "" || !strings.Contains(out, "committed  ds_1  "+g) ||
		!strings.Contains(out, "error: ") || !strings.Contains(out, `"ds_0"`) ||
		!strings.HasSuffix(out, "recovery: 1 committed, 0 rolled back, 0 left, 1 errors\n") {
		t.Errorf("xa recover as %s: exit %d, stderr %q, stdout\n%s", role, code, errs, out)
	}
	if pg, my := e.prepared(t, g); !pg || my {
		t.Errorf("after the partial recover, prepared on ds_0 %v, ds_1 %v; want ds_0 only", pg, my)
	}
	if code, out, _ := runXA("recover", e.rules); code != 0 || !strings.HasSuffix(out, "recovery: 1 committed, 0 rolled back, 0 left, 0 errors\n") {
		t.Errorf("xa recover as postgres: exit %d, stdout\n%s", code, out)
	}
	if n0, n1 := e.rowCount(t, 1); n0 != 1 || n1 != 1 {
		t.Errorf("after both recovers, row 1 on ds_0 %d, ds_1 %d; want 1 each", n0, n1)
	}
}

// TestXAErrorsNameTheFileAndNeverAPassword: a data source that cannot be
// reached fails the command (exit 1) naming the rule file and the data
// source, without its password; usage mistakes exit 2.
func TestXAErrorsNameTheFileAndNeverAPassword(t *testing.T) {
	dbtest.SkipShort(t, "PostgreSQL")
	rules := writeFile(t, "rules.yaml", fmt.Sprintf(xaRules,
		"postgres://postgres:Very%40Secret@127.0.0.1:1/none?connect_timeout=2", "root:Other@Secret@tcp(127.0.0.1:1)/none?timeout=2s"))
	for _, sub := range []string{"list", "recover"} {
		code, out, errs := runXA(sub, rules)
		if code != 1 || out != "" || !strings.Contains(errs, rules) || !strings.Contains(errs, "ds_0") ||
			strings.Contains(errs, "Secret") {
			t.Errorf("xa %s, ds_0 unreachable: exit %d, stdout %q, stderr %q", sub, code, out, errs)
		}
	}
	noDSN := writeFile(t, "rules.yaml", fmt.Sprintf(strings.Replace(xaRules, "ds_1: {driver: mysql, dsn: '%s'}",
		"ds_1: {dataSourceClassName: com.zaxxer.hikari.HikariDataSource, jdbcUrl: 'jdbc:mysql://h/db'}", 1),
		"postgres://postgres@127.0.0.1:1/none"))
	if code, _, errs := runXA("list", noDSN); code != 1 || !strings.Contains(errs, noDSN+": data source ds_1") {
		t.Errorf("xa list, no dsn: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{{}, {"purge", rules}, {"list"}, {"list", rules, "extra"}, {"recover", "-timeout", "10ms", rules}} {
		if code, out, errs := runXA(args...); code != 2 || out != "" || !strings.Contains(errs, "usage: shardkey xa") {
			t.Errorf("xa %q: exit %d, stdout %q, stderr %q; want a usage error", args, code, out, errs)
		}
	}
}

// crashAfterDecision is a Config.Hook that fails the commit once its
// decision is logged, as a process dying there would leave it.
func crashAfterDecision(stage xa.Stage, _ string) error {
	if stage == xa.StageDecided {
		return errors.New("test: crashed after logging the decision")
	}
	return nil
}

// TestXARecoverCommitsWhatACommitStoppedAfterItsDecisionLeft: a real
// two-phase Commit through internal/xa that stops once its commit decision
// is logged leaves both branches prepared; list shows them decided commit
// and recover commits them, so both rows appear.
func TestXARecoverCommitsWhatACommitStoppedAfterItsDecisionLeft(t *testing.T) {
	e := newXAEnv(t, "xa_cli_crash")
	// Its transaction started 2h ago: recovery finishes MySQL branches only
	// past -timeout.
	c := e.coordinator(t, "", func() time.Time { return time.Now().Add(-2 * time.Hour) }, crashAfterDecision)
	tx, err := c.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	g := tx.GTRID()
	t.Cleanup(func() {
		e.db[0].Exec("ROLLBACK PREPARED '" + pgGID(g, "ds_0") + "'")
		e.db[1].Exec("XA ROLLBACK " + myXID(g, "ds_1", xa.FormatID))
	})
	branches, end := e.branches(t, tx, "INSERT INTO t_acct VALUES (21, 'both')")
	var ide *xa.InDoubtError
	if err := tx.Commit(context.Background(), branches); !errors.As(err, &ide) || !ide.Decided {
		t.Fatalf("Commit stopped after its decision: %v, want a decided *xa.InDoubtError", err)
	}
	end()
	c.Close()

	bs := listed(t, e)
	for _, src := range []string{"ds_0", "ds_1"} {
		if b, ok := find(bs, src, g); !ok || b.Decision != "commit" {
			t.Errorf("xa list: %s on %s: %+v (listed %v), want decision commit", g, src, b, ok)
		}
	}
	code, out, errs := runXA("recover", e.rules)
	if code != 0 || errs != "" || !strings.HasSuffix(out, "recovery: 2 committed, 0 rolled back, 0 left, 0 errors\n") {
		t.Errorf("xa recover: exit %d, stderr %q, stdout\n%s", code, errs, out)
	}
	if n0, n1 := e.rowCount(t, 21); n0 != 1 || n1 != 1 {
		t.Errorf("after recover, row 21 on ds_0 %d, ds_1 %d; want 1 each", n0, n1)
	}
}

// branches begins tx's branch on both data sources, as sqlhook does (BEGIN
// on PostgreSQL, tx.XAStart on MariaDB), each on a pool of its own, and
// runs stmt on each. end closes the branch sessions and their pools, as a
// crashed process's would end, and waits until MariaDB has ended its one.
func (e *xaEnv) branches(t *testing.T, tx *xa.Tx, stmt string) (bs []xa.Branch, end func()) {
	t.Helper()
	ctx := context.Background()
	var ends []func() error
	for i, drv := range []string{"pgx", "mysql"} {
		db, err := sql.Open(drv, e.dsn[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, conn.Close, db.Close)
		exec := func(ctx context.Context, q string) error { _, err := conn.ExecContext(ctx, q); return err }
		b := xa.Branch{Source: fmt.Sprintf("ds_%d", i), Exec: exec}
		if drv == "pgx" {
			b.Local = func(commit bool) error { return exec(ctx, map[bool]string{true: "COMMIT", false: "ROLLBACK"}[commit]) }
			err = exec(ctx, "BEGIN")
		} else {
			session := e.session(t, conn)
			ends = append(ends, func() error { e.waitSessionEnd(t, session); return nil })
			err = exec(ctx, tx.XAStart(b.Source))
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	return bs, func() {
		for _, f := range ends {
			f()
		}
	}
}
