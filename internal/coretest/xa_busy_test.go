package coretest

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"go.uber.org/goleak"
)

// Recovery commits a decided transaction's branches as soon as it sees the
// decision, so it may be committing a branch at the very moment the live
// coordinator does; PostgreSQL then tells the second one the prepared
// transaction is "busy". Commit returning nil means every branch is
// committed, so a row it wrote is visible on every data source right
// after. (Found with four committers and a recoverer in a loop: 5 of 1866
// nil Commits had a row not yet visible. Here the recoverer's sessions
// delay their WAL flush (commit_delay, 0.1 s), holding the branch busy.)
func TestXACommitReturnsOnlyOnceEveryBranchIsCommittedWhileRecoveryCommitsIt(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	var srcs, slow []xa.Source
	var dbs []*sql.DB
	for i := range 2 {
		dsn := dbtest.Postgres(t, fmt.Sprintf("xa_busy_%d", i))
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		// commit_delay is applied when the flush happens with at least
		// commit_siblings other transactions open: 0 means always.
		sdb, err := sql.Open("pgx", dsn+"&commit_delay=100000&commit_siblings=0")
		if err != nil {
			t.Fatal(err)
		}
		dbs = append(dbs, db, sdb)
		if _, err := db.Exec("CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("ds%d", i)
		srcs = append(srcs, xa.Source{Name: name, Dialect: dialect.Postgres, DB: db})
		slow = append(slow, xa.Source{Name: name, Dialect: dialect.Postgres, DB: sdb})
	}
	t.Cleanup(func() {
		for _, s := range srcs {
			rollbackOurs(t, s, "sk1:")
		}
		for _, db := range dbs {
			db.Close()
		}
	})
	ctx := context.Background()
	rec, err := xa.New(xa.Config{Interval: -1, Logger: logger}, slow)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	recovered := make(chan xa.Report, 1)
	hook := func(s xa.Stage, gtrid string) error {
		if s != xa.StageDecided {
			return nil
		}
		go func() { rep, _ := rec.Recover(ctx); recovered <- rep }()
		return waitCommitPrepared(srcs[0].DB, gtrid)
	}
	c, err := xa.New(xa.Config{Interval: -1, Logger: logger, Hook: hook}, srcs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The busy window is there only when the recoverer's flush is not
	// done for it by another session's (the server is shared): try a few
	// times; one nil Commit with a row missing is the failure.
	for id := 1; id <= 10; id++ {
		if commitWhileRecovering(t, c, srcs, id, recovered) {
			break
		}
	}
}

// commitWhileRecovering commits a transaction writing row id on both
// sources, recovery committing its branches at the same time; it reports
// whether a row was missing right after a nil Commit (then the test has
// failed and need not go on).
func commitWhileRecovering(t *testing.T, c *xa.Coordinator, srcs []xa.Source, id int, recovered chan xa.Report) bool {
	t.Helper()
	ctx := context.Background()
	tx, err := c.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	open := newBranches(t)
	ins := fmt.Sprintf("INSERT INTO acct (id, v) VALUES (%d, 1)", id)
	err = tx.Commit(ctx, []xa.Branch{open.open(tx, srcs[0], ins), open.open(tx, srcs[1], ins)})
	var seen [2]int
	for i, s := range srcs {
		if qerr := s.DB.QueryRow(fmt.Sprintf("SELECT count(*) FROM acct WHERE id = %d", id)).Scan(&seen[i]); qerr != nil {
			t.Fatal(qerr)
		}
	}
	rep := <-recovered
	t.Logf("Commit = %v; rows seen right after: %v; recovery: %+v", err, seen, rep)
	if err != nil {
		t.Fatalf("Commit = %v", err)
	}
	if seen != [2]int{1, 1} {
		t.Errorf("Commit = nil, but right after it the row is on %v of the data sources (want [1 1])", seen)
		return true
	}
	return false
}

// waitCommitPrepared waits until a session of db's server is running
// COMMIT PREPARED for a branch of gtrid.
func waitCommitPrepared(db *sql.DB, gtrid string) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		var n int
		err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'COMMIT PREPARED ''' || $1 || '%'`, gtrid).Scan(&n)
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
	return fmt.Errorf("no COMMIT PREPARED of %s seen running", gtrid)
}
