package coretest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"go.uber.org/goleak"
)

// The decision log may live on a data source the transaction never
// reaches (a small database kept for it). Then a commit, a failure
// before the decision, and one after it (finished by recovery, then the
// log's row collected) behave as when the log is one of the branches —
// here on a PostgreSQL and a MariaDB branch with the log on a third
// database of each kind.
func TestXATwoPhaseCommitWithTheLogOnADataSourceTheTransactionDoesNotReach(t *testing.T) {
	for _, logKind := range []string{"pg", "my"} {
		t.Run("log-"+logKind, func(t *testing.T) {
			leaks := goleak.IgnoreCurrent()
			t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
			srcs := []xa.Source{
				logElsewhereSource(t, "pg", "xa_logelse_"+logKind+"_ds0", "ds0"),
				logElsewhereSource(t, "my", "xa_logelse_"+logKind+"_ds1", "ds1"),
				logElsewhereSource(t, logKind, "xa_logelse_"+logKind+"_log", "dslog"),
			}
			clock := new(xaClock)
			logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
			open := func(hook func(xa.Stage, string) error) *xa.Coordinator {
				c, err := xa.New(xa.Config{LogSource: "dslog", Interval: -1, Timeout: xaTimeout, Now: clock.Now, Logger: logger, Hook: hook}, srcs)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				if err := c.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				return c
			}
			rec := open(nil)
			t.Cleanup(func() {
				for _, s := range srcs[:2] {
					rollbackOurs(t, s, rec.BranchPrefix())
				}
			})
			ctx := context.Background()
			for id, hook := range []func(xa.Stage, string) error{nil, failAt(xa.StagePrepared), failAt(xa.StageDecided)} {
				logElsewhereCase(t, open(hook), rec, srcs, id, clock)
			}
			if _, err := rec.GC(ctx); err != nil {
				t.Fatal(err)
			}
			var left int
			if err := srcs[2].DB.QueryRow("SELECT count(*) FROM shardkey_xa_log WHERE outcome = 'C'").Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left != 0 {
				t.Errorf("%d commit decisions left after GC, no branch being prepared", left)
			}
		})
	}
}

// logElsewhereCase commits a transaction writing row id on srcs[0] and
// srcs[1] through c: case 0 commits, case 1 fails before the decision
// (rolled back), case 2 after it (recovery through rec commits).
func logElsewhereCase(t *testing.T, c, rec *xa.Coordinator, srcs []xa.Source, id int, clock *xaClock) {
	t.Helper()
	ctx := context.Background()
	tx, err := c.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	bb := newBranches(t)
	ins := fmt.Sprintf("INSERT INTO acct (id, v) VALUES (%d, 1)", id)
	err = tx.Commit(ctx, []xa.Branch{bb.open(tx, srcs[0], ins), bb.open(tx, srcs[1], ins)})
	bb.drop()
	want := 1
	var ide *xa.InDoubtError
	switch {
	case id == 0 && err != nil:
		t.Fatalf("Commit = %v", err)
	case id == 1:
		want = 0
		if !errors.Is(err, xa.ErrRolledBack) || errors.Is(err, xa.ErrInDoubt) {
			t.Fatalf("failure before the decision: Commit = %v, want ErrRolledBack", err)
		}
	case id == 2:
		if !errors.As(err, &ide) || !ide.Decided {
			t.Fatalf("failure after the decision: Commit = %v, want a decided *InDoubtError", err)
		}
		clock.pastTimeout(1) // MySQL branches are finished only past Timeout
		if rep, err := rec.Recover(ctx); err != nil || len(rep.Committed) != 2 || len(rep.Errors) > 0 {
			t.Fatalf("Recover = %+v, %v; want both branches committed", rep, err)
		}
	}
	for _, s := range srcs[:2] {
		if n := countRows(t, s.DB, id); n != want {
			t.Errorf("case %d: row on %s: %d, want %d", id, s.Name, n, want)
		}
	}
}

// logElsewhereSource opens a fresh database of kind ("pg" or "my") as
// data source name, with table acct.
func logElsewhereSource(t *testing.T, kind, db, name string) xa.Source {
	t.Helper()
	d, drv, dsn := dialect.Postgres, "pgx", ""
	if kind == "my" {
		d, drv, dsn = dialect.MySQL, "mysql", dbtest.MySQL(t, db)
	} else {
		dsn = dbtest.Postgres(t, db)
	}
	pool, err := sql.Open(drv, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	if _, err := pool.Exec("CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return xa.Source{Name: name, Dialect: d, DB: pool}
}

func countRows(t *testing.T, db *sql.DB, id int) int {
	t.Helper()
	var n int
	if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM acct WHERE id = %d", id)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
