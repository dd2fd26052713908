package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/sqlhook"
)

// report is what every run prints after its data source lines: the same
// balances before and after, each transfer's outcome.
const report = `two-phase commit on; decision log: table shardkey_xa_log in ds_0
balances before: alice 100 (ds_1), bob 100 (ds_0), carol 100 (ds_1), dave 100 (ds_0); total 400
transfer 30 alice (ds_1) -> bob (ds_0): committed
transfer 50 bob (ds_0) -> carol (ds_1): committed
transfer 10 bob (ds_0) -> dave (ds_0): committed
transfer 500 carol (ds_1) -> dave (ds_0): refused (overdraft: carol would have -350), rolled back
GORM transfer 20 dave (ds_0) -> alice (ds_1): committed
balances after: alice 90 (ds_1), bob 70 (ds_0), carol 150 (ds_1), dave 90 (ds_0); total 400
total unchanged: 400
`

// want is every account's balance after a run, by data source, as read
// from the physical tables: the refused transfer left no trace on either.
var want = map[string]string{"ds_0": "2:70 4:90", "ds_1": "1:90 3:150"}

func TestTwoPhaseExampleKeepsTheTotalOnPostgreSQL(t *testing.T) {
	tmpl := strings.Replace(dbtest.Postgres(t, "twophase_pg_ds_0"), "twophase_pg_ds_0", "twophase_pg_{ds}", 1)
	dbtest.Postgres(t, "twophase_pg_ds_1")
	runTwice(t, "pgx", tmpl)
	noBranchLeft(t, dialect.Postgres, "pgx", tmpl)
	for _, ds := range []string{"ds_0", "ds_1"} { // the same, without xa: these databases are the test's own
		db := openSQL(t, "pgx", strings.ReplaceAll(tmpl, "{ds}", ds))
		var n int
		if err := db.QueryRow("SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d prepared transactions left", ds, n)
		}
	}
}

func TestTwoPhaseExampleKeepsTheTotalOnMariaDB(t *testing.T) {
	tmpl := strings.Replace(dbtest.MySQL(t, "twophase_my_ds_0"), "twophase_my_ds_0", "twophase_my_{ds}", 1)
	dbtest.MySQL(t, "twophase_my_ds_1")
	runTwice(t, "mysql", tmpl)
	noBranchLeft(t, dialect.MySQL, "mysql", tmpl)
}

// noBranchLeft fails the test if a branch of the example's decision log
// is still prepared on either data source. XA RECOVER lists the whole
// server's branches; a coordinator attached to the log (it reads the
// log's id, changes nothing) knows which are the example's.
func noBranchLeft(t *testing.T, d dialect.Name, driver, tmpl string) {
	t.Helper()
	var srcs []xa.Source
	for _, ds := range []string{"ds_0", "ds_1"} {
		srcs = append(srcs, xa.Source{Name: ds, Dialect: d, DB: openSQL(t, driver, strings.ReplaceAll(tmpl, "{ds}", ds))})
	}
	c, err := xa.New(xa.Config{LogSource: "ds_0"}, srcs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Attach(ctx); err != nil {
		t.Fatal(err)
	}
	left, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range left {
		t.Errorf("branch left prepared: %+v", b)
	}
}

// runTwice runs the example twice on the same databases (every run
// resets the accounts), checks its report and the rows each database
// holds, and that the second run leaves no goroutine behind (the first
// starts what lives as long as the process).
func runTwice(t *testing.T, driver, tmpl string) {
	t.Helper()
	for round := 1; round <= 2; round++ {
		var ignore goleak.Option
		if round == 2 {
			ignore = goleak.IgnoreCurrent()
		}
		var out bytes.Buffer
		if err := run(context.Background(), tmpl, &out); err != nil {
			t.Fatalf("run %d: %v\n%s", round, err, out.String())
		}
		lines := strings.SplitAfterN(out.String(), "\n", 3)
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "data source ds_0: ") || !strings.HasPrefix(lines[1], "data source ds_1: ") {
			t.Fatalf("run %d: no data source lines:\n%s", round, out.String())
		}
		if lines[2] != report {
			t.Errorf("run %d: report\n%s\nwant\n%s", round, lines[2], report)
		}
		for ds, w := range want {
			if got := accounts(t, driver, strings.ReplaceAll(tmpl, "{ds}", ds)); got != w {
				t.Errorf("run %d: %s holds %s, want %s", round, ds, got, w)
			}
		}
		if round == 2 {
			goleak.VerifyNone(t, ignore)
		}
	}
}

// accounts reads a database's account table directly: "id:balance ...".
func accounts(t *testing.T, driver, dsn string) string {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close() // now: runTwice checks for goroutines left
	rows, err := db.Query("SELECT id, balance FROM account ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var id, balance int64
		if err := rows.Scan(&id, &balance); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, fmt.Sprintf("%d:%d", id, balance))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(parts, " ")
}

func openSQL(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestTwoPhaseExampleRefusesSQLite: SQLite cannot prepare, so the first
// transfer across the two files is refused before it writes the second
// one, and run says that two-phase commit needs another database.
func TestTwoPhaseExampleRefusesSQLite(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "twophase_{ds}.db")
	var out bytes.Buffer
	err := run(context.Background(), tmpl, &out)
	if !errors.Is(err, sqlhook.ErrTwoPhaseUnavailable) || !errors.Is(err, sqlhook.ErrCrossSourceTx) {
		t.Fatalf("run = %v, want ErrTwoPhaseUnavailable and ErrCrossSourceTx\n%s", err, out.String())
	}
	if !strings.HasPrefix(err.Error(), "two-phase commit needs PostgreSQL") {
		t.Errorf("the error does not say what 2PC needs: %v", err)
	}
	if strings.Contains(out.String(), "committed") || strings.Contains(out.String(), "two-phase commit on") {
		t.Errorf("a transfer committed on SQLite, or 2PC claimed on:\n%s", out.String())
	}
	for ds, w := range map[string]string{"ds_0": "2:100 4:100", "ds_1": "1:100 3:100"} {
		if got := accounts(t, "sqlite", strings.ReplaceAll(tmpl, "{ds}", ds)); got != w {
			t.Errorf("%s holds %s after the refusal, want %s", ds, got, w)
		}
	}
}

// TestTwoPhaseExampleCreatesMissingDatabases: a -dsn naming databases that
// do not exist yet gets them created.
func TestTwoPhaseExampleCreatesMissingDatabases(t *testing.T) {
	dsn := dbtest.Postgres(t, "twophase_admin") // only to learn the server's address
	admin := openSQL(t, "pgx", dsn)
	drop := func() {
		for _, ds := range []string{"ds_0", "ds_1"} {
			if _, err := admin.Exec("DROP DATABASE IF EXISTS shardkey_twophase_new_" + ds + " WITH (FORCE)"); err != nil {
				t.Fatal(err)
			}
		}
	}
	drop()
	t.Cleanup(drop)
	var out bytes.Buffer
	if err := run(context.Background(), strings.Replace(dsn, "twophase_admin", "twophase_new_{ds}", 1), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.HasSuffix(out.String(), report) {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestSettleStopsAtATransferInDoubt: the example never meets a commit in
// doubt by itself (it injects no fault), so its branch is checked here:
// reported, not counted as committed nor as rolled back, and it stops the
// run with an error still matching ErrTxInDoubt.
func TestSettleStopsAtATransferInDoubt(t *testing.T) {
	var out bytes.Buffer
	doubt := &sqlhook.TxInDoubtError{GTRID: "sk1:0badc0de:x", Decided: true, Committed: []string{"ds_0"}, Pending: []string{"ds_1"}, Err: errors.New("connection lost")}
	err := settle(&out, "transfer 1 a -> b", fmt.Errorf("commit: %w", doubt))
	if !errors.Is(err, sqlhook.ErrTxInDoubt) {
		t.Fatalf("settle = %v, want ErrTxInDoubt", err)
	}
	w := "transfer 1 a -> b: IN DOUBT (transaction sk1:0badc0de:x, decision logged: true, committed on [ds_0], pending on [ds_1]); recovery will settle it, not retried\n"
	if out.String() != w {
		t.Errorf("printed %q, want %q", out.String(), w)
	}
	out.Reset()
	if err := settle(&out, "t", &overdraftError{Owner: "a", Balance: -1}); err != nil || out.String() != "t: refused (overdraft: a would have -1), rolled back\n" {
		t.Errorf("overdraft: settle = %v, printed %q", err, out.String())
	}
	out.Reset()
	cause := errors.New("deadlock")
	if err := settle(&out, "t", cause); !errors.Is(err, cause) || out.Len() != 0 {
		t.Errorf("other error: settle = %v, printed %q", err, out.String())
	}
}
