package coretest

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/shardkey/shardkey/internal/xa"
	"go.uber.org/goleak"
)

// Processes sharing a decision log may know different sets of data
// sources (a rolling deploy adding ds2; `shardkey xa` given an older
// rules file). One that does not know ds2 cannot tell whether a
// transaction's branch there is still prepared: its GC must keep that
// transaction's commit decision, or a later recovery would find the
// ds2 branch undecided and roll it back while ds0's half is committed.
func TestXAGCKeepsTheDecisionOfATransactionOnADataSourceItDoesNotKnow(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	all := []xa.Source{
		logElsewhereSource(t, "pg", "xa_gcsubset_ds0", "ds0"),
		logElsewhereSource(t, "my", "xa_gcsubset_ds1", "ds1"),
		logElsewhereSource(t, "my", "xa_gcsubset_ds2", "ds2"),
	}
	clock := new(xaClock)
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	open := func(srcs []xa.Source, hook func(xa.Stage, string) error) *xa.Coordinator {
		c, err := xa.New(xa.Config{Interval: -1, Timeout: xaTimeout, Now: clock.Now, Logger: logger, Hook: hook}, srcs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	full := open(all, nil)
	t.Cleanup(func() {
		for _, s := range all {
			rollbackOurs(t, s, full.BranchPrefix())
		}
	})
	crashing := open(all, failAt(xa.StageCommittedOne))
	older := open(all[:2], nil) // knows ds0 and ds1 only
	tx, err := crashing.NewTx()
	if err != nil {
		t.Fatal(err)
	}
	bb := newBranches(t)
	ins := "INSERT INTO acct (id, v) VALUES (1, 1)"
	err = tx.Commit(ctx, []xa.Branch{bb.open(tx, all[0], ins), bb.open(tx, all[2], ins)})
	bb.drop()
	var ide *xa.InDoubtError
	if !errors.As(err, &ide) || !ide.Decided || len(ide.Committed) != 1 {
		t.Fatalf("Commit = %v, want decided in doubt with ds0 committed", err)
	}
	clock.pastTimeout(2)
	for range 2 {
		if _, err := older.GC(ctx); err != nil {
			t.Fatal(err)
		}
		if rep, err := older.Recover(ctx); err != nil || len(rep.RolledBack) > 0 {
			t.Fatalf("the older process's Recover = %+v, %v", rep, err)
		}
	}
	if rep, err := full.Recover(ctx); err != nil || len(rep.Committed) != 1 || len(rep.Errors) > 0 {
		t.Fatalf("Recover = %+v, %v; want ds2's branch committed", rep, err)
	}
	for _, s := range []xa.Source{all[0], all[2]} {
		if n := countRows(t, s.DB, 1); n != 1 {
			t.Errorf("%s: %d rows of the decided commit, want 1", s.Name, n)
		}
	}
}
