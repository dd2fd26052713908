package coretest

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"go.uber.org/goleak"
)

// A MySQL server (or a DSN) can make autocommit off the sessions'
// default (my.cnf autocommit=0, init_connect, ?autocommit=0): every
// statement outside an explicit transaction then opens one that only a
// COMMIT ends. The decision log must still be durable: a coordinator
// that logged its commit decision and failed after committing one branch
// leaves the others for recovery to commit, in whatever process, even
// when the coordinator's process is gone (its pools closed).
func TestXADecisionIsDurableWhenSessionsDefaultToAutocommitOff(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	var srcs, offs []xa.Source
	for _, name := range []string{"ds0", "ds1"} {
		dsn := dbtest.MySQL(t, "xa_autocommit_"+name)
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		off, err := sql.Open("mysql", dsn+"&autocommit=0")
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, xa.Source{Name: name, Dialect: dialect.MySQL, DB: db})
		offs = append(offs, xa.Source{Name: name, Dialect: dialect.MySQL, DB: off})
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	var prefix string
	t.Cleanup(func() {
		for i := range srcs {
			if prefix != "" {
				rollbackOurs(t, srcs[i], prefix)
			}
			srcs[i].DB.Close()
			offs[i].DB.Close()
		}
	})
	clock := new(xaClock)
	crashing, err := xa.New(xa.Config{Interval: -1, Timeout: xaTimeout, Logger: logger, Now: clock.Now,
		Hook: failAt(xa.StageCommittedOne)}, offs)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := crashing.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tx, err := crashing.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	prefix = gtridPrefix(tx.GTRID())
	open := newBranches(t)
	bs := []xa.Branch{
		open.open(tx, srcs[0], "INSERT INTO acct (id, v) VALUES (1, 1)"),
		open.open(tx, srcs[1], "INSERT INTO acct (id, v) VALUES (1, 1)"),
	}
	err = tx.Commit(ctx, bs)
	var ide *xa.InDoubtError
	if !errors.As(err, &ide) || !ide.Decided || len(ide.Committed) != 1 {
		t.Fatalf("Commit = %v, want a decided *InDoubtError with one branch committed", err)
	}
	// The coordinator's process ends: its pools close, its branches' sessions too.
	crashing.Close()
	for _, s := range offs {
		s.DB.Close()
	}
	open.drop()

	clock.pastTimeout(2)
	rec, err := xa.New(xa.Config{Interval: -1, Timeout: xaTimeout, Logger: logger, Now: clock.Now}, srcs)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Start(ctx); err != nil { // Start recovers
		t.Fatal(err)
	}
	for _, s := range srcs {
		var n int
		if err := s.DB.QueryRow("SELECT count(*) FROM acct WHERE id = 1").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("%s: %d rows of the decided commit (branch committed by the coordinator: %v), want 1", s.Name, n, ide.Committed)
		}
	}
}
