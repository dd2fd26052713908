package coretest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/xa"
)

// cutAt is a hook cutting e's proxy at stage s and going on.
func cutAt(e *xaEnv, s xa.Stage) func(xa.Stage, string) error {
	return func(got xa.Stage, _ string) error {
		if got == s {
			e.proxy.Cut()
		}
		return nil
	}
}

// The log's data source lost before the decision is written: the insert
// never reached its COMMIT, so the decision is certainly not logged and
// Commit rolls back (not in doubt). What it cannot roll back on the lost
// source stays prepared, undecided, until recovery rolls it back after
// Timeout.
func TestXACommitRollsBackWhenTheLogIsLostBeforeTheDecision(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnvProxied(t, pair, "loglost", true)
			c := e.coordinator(xa.Config{Hook: cutAt(e, xa.StagePrepared)})
			tx := e.newTx(c)
			err := tx.Commit(context.Background(), e.insertAll(tx, 1))
			e.release(err != nil)
			if !errors.Is(err, xa.ErrRolledBack) || errors.Is(err, xa.ErrInDoubt) {
				t.Fatalf("Commit = %v, want ErrRolledBack, not in doubt", err)
			}
			e.proxy.Resume()
			rep, err := c.Recover(context.Background())
			if err != nil || len(rep.Errors) > 0 || len(rep.Left) != 1 || rep.Left[0].Source != "ds0" {
				t.Fatalf("young: Recover = %+v, %v; want ds0's branch (unreachable at rollback) left", rep, err)
			}
			e.clock.pastTimeout(1)
			rep, err = c.Recover(context.Background())
			if err != nil || len(rep.Errors) > 0 || len(rep.RolledBack) != 1 {
				t.Fatalf("old: Recover = %+v, %v; want ds0's branch rolled back", rep, err)
			}
			e.wantRows(1, 0)
			e.wantNothingPrepared()
		})
	}
}

// A data source lost after the decision: its branch cannot be committed
// now, Commit says the outcome is decided, and recovery commits the
// branch once the source is back.
func TestXACommitIsInDoubtDecidedWhenABranchIsLostInPhaseTwoAndRecoveryCommitsIt(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnvProxied(t, pair, "branchlost", true)
			e.coordinator(xa.Config{}) // creates the log before the cut
			c := e.coordinator(xa.Config{LogSource: "ds1", Hook: cutAt(e, xa.StageDecided)})
			tx := e.newTx(c)
			bs := e.insertAll(tx, 1)
			// With a hook the first branch commits alone first: ds1 here.
			err := tx.Commit(context.Background(), []xa.Branch{bs[1], bs[0]})
			e.release(err != nil)
			var ide *xa.InDoubtError
			if !errors.As(err, &ide) || !ide.Decided || len(ide.Pending) != 1 || ide.Pending[0] != "ds0" {
				t.Fatalf("Commit = %v, want a decided *InDoubtError with ds0 pending", err)
			}
			if e.rows(1, 1) != 1 {
				t.Error("ds1's branch not committed")
			}
			e.proxy.Resume()
			e.clock.pastTimeout(1) // MySQL branches are finished only past Timeout
			rep, err := c.Recover(context.Background())
			if err != nil || len(rep.Errors) > 0 || len(rep.Committed) != 1 || rep.Committed[0].Source != "ds0" {
				t.Fatalf("Recover = %+v, %v; want ds0's branch committed", rep, err)
			}
			e.wantRows(1, 1)
			e.wantNothingPrepared()
		})
	}
}

// A Commit that comes after Close (database/sql's Close does not wait for
// open transactions) rolls back: no recovery is left in this process to
// finish what it would prepare.
func TestXACommitAfterCloseRollsBackEveryBranch(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "afterclose")
			c := e.coordinator(xa.Config{})
			tx := e.newTx(c)
			bs := e.insertAll(tx, 1)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			err := tx.Commit(context.Background(), bs)
			e.release(err != nil)
			if !errors.Is(err, xa.ErrRolledBack) || !errors.Is(err, xa.ErrClosed) || errors.Is(err, xa.ErrInDoubt) {
				t.Fatalf("Commit = %v, want ErrRolledBack and ErrClosed", err)
			}
			e.wantRows(1, 0)
			e.wantNothingPrepared()
		})
	}
}

// The log's pool closed under a running coordinator: the decision's
// insert never leaves the process, so it is certainly not logged, and
// the transaction rolls back instead of being in doubt.
func TestXACommitRollsBackWhenTheLogPoolIsClosed(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "logclosed")
			logDB, err := sql.Open(e.nodes[0].driver, e.nodes[0].dsn)
			if err != nil {
				t.Fatal(err)
			}
			srcs := e.sources()
			srcs[0].DB = logDB
			c, err := xa.New(xa.Config{Interval: -1, Now: e.clock.Now}, srcs)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			e.track(c)
			tx := e.newTx(c)
			bs := e.insertAll(tx, 1)
			logDB.Close()
			err = tx.Commit(context.Background(), bs)
			e.release(err != nil)
			if !errors.Is(err, xa.ErrRolledBack) || errors.Is(err, xa.ErrInDoubt) {
				t.Fatalf("Commit = %v, want ErrRolledBack, not in doubt", err)
			}
			e.wantRows(1, 0)
			e.wantNothingPrepared()
		})
	}
}

// A MariaDB XA branch chosen as a deadlock victim is rolled back by the
// server; rolling the transaction back then succeeds (XA_RBDEADLOCK means
// done), and the survivor commits.
func TestXARollbackOfADeadlockVictimSucceeds(t *testing.T) {
	e := newXAEnv(t, xaPairs[1], "deadlock")
	c := e.coordinator(xa.Config{})
	if _, err := e.nodes[1].src.DB.Exec("INSERT INTO acct (id, v) VALUES (1, 0), (2, 0)"); err != nil {
		t.Fatal(err)
	}
	ta, tb := e.newTx(c), e.newTx(c)
	a := e.begin(ta, 1, "UPDATE acct SET v = 1 WHERE id = 1")
	b := e.begin(tb, 1, "UPDATE acct SET v = 2 WHERE id = 2")
	ctx := context.Background()
	errA := make(chan error, 1)
	go func() { errA <- a.Exec(ctx, "UPDATE acct SET v = 1 WHERE id = 2") }()
	time.Sleep(100 * time.Millisecond) // let A wait for B's lock first (not a timing assertion)
	errB := b.Exec(ctx, "UPDATE acct SET v = 2 WHERE id = 1")
	ea := <-errA
	if (ea == nil) == (errB == nil) {
		t.Fatalf("want exactly one deadlock victim: A %v, B %v", ea, errB)
	}
	victim, victimTx, survivor, survivorTx := a, ta, b, tb
	if errB != nil {
		victim, victimTx, survivor, survivorTx = b, tb, a, ta
	}
	if err := victimTx.Rollback(ctx, []xa.Branch{victim}); err != nil {
		t.Errorf("Rollback of the deadlock victim: %v", err)
	}
	if err := survivorTx.Commit(ctx, []xa.Branch{survivor}); err != nil {
		t.Errorf("Commit of the survivor: %v", err)
	}
	e.release(false)
	e.wantNothingPrepared()
}

// A transaction that reaches Commit just before its Timeout ends one way
// or the other, and leaves nothing prepared, even a moment later (a
// PREPARE cut by a deadline could complete on the server after Commit had
// reported the rollback).
func TestXACommitAtTheTimeoutLeavesNothingPrepared(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "attimeout")
			c := e.coordinator(xa.Config{})
			for id, left := range []time.Duration{1, 3, 5, 8, 13} {
				tx := e.newTx(c)
				bs := e.insertAll(tx, id)
				e.clock.Advance(xaTimeout - left*time.Millisecond)
				err := tx.Commit(context.Background(), bs)
				e.release(err != nil)
				want := 1
				if err != nil {
					if !errors.Is(err, xa.ErrRolledBack) || errors.Is(err, xa.ErrInDoubt) {
						t.Fatalf("Commit %v before the timeout = %v, want nil or ErrRolledBack", left*time.Millisecond, err)
					}
					want = 0
				}
				e.wantRows(id, want)
				time.Sleep(500 * time.Millisecond) // a late PREPARE would show by now
				e.wantNothingPrepared()
			}
		})
	}
}
