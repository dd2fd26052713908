package coretest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
)

func TestXATwoPhaseCommitCommitsEveryBranch(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "commit")
			c := e.coordinator(xa.Config{})
			tx := e.newTx(c)
			if !strings.HasPrefix(tx.GTRID(), e.prefix) {
				t.Fatalf("GTRID %s does not carry the log's tag %s", tx.GTRID(), e.prefix)
			}
			err := tx.Commit(context.Background(), e.insertAll(tx, 1))
			e.release(err != nil)
			if err != nil {
				t.Fatalf("Commit: %v", err)
			}
			e.wantRows(1, 1)
			e.wantNothingPrepared()
			if d := e.decision(tx.GTRID()); d != "C" {
				t.Errorf("decision log: %q, want C", d)
			}
		})
	}
}

func TestXARollbackRollsBackEveryBranch(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "rollback")
			c := e.coordinator(xa.Config{})
			tx := e.newTx(c)
			err := tx.Rollback(context.Background(), e.insertAll(tx, 1))
			e.release(err != nil)
			if err != nil {
				t.Fatalf("Rollback: %v", err)
			}
			e.wantRows(1, 0)
			e.wantNothingPrepared()
			if err := tx.Commit(context.Background(), nil); !errors.Is(err, xa.ErrTxDone) {
				t.Errorf("Commit after Rollback: %v, want ErrTxDone", err)
			}
		})
	}
}

func TestXAOneBranchCommitsInOnePhaseWithoutLogging(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "onephase")
			c := e.coordinator(xa.Config{})
			for i := range e.nodes {
				tx := e.newTx(c)
				err := tx.Commit(context.Background(), []xa.Branch{e.begin(tx, i, "INSERT INTO acct (id, v) VALUES (1, 1)")})
				e.release(err != nil)
				if err != nil {
					t.Fatalf("Commit on %d: %v", i, err)
				}
				if d := e.decision(tx.GTRID()); d != "" {
					t.Errorf("one-phase commit logged %q", d)
				}
			}
			e.wantRows(1, 1)
			e.wantNothingPrepared()
		})
	}
}

// failPrepare makes b's prepare statement fail: before it runs, or after
// it ran (the reply lost: the branch is prepared but Commit cannot know).
func failPrepare(b xa.Branch, after bool) xa.Branch {
	exec := b.Exec
	b.Exec = func(ctx context.Context, q string) error {
		if strings.HasPrefix(q, "PREPARE TRANSACTION") || strings.HasPrefix(q, "XA PREPARE") {
			if after {
				if err := exec(ctx, q); err != nil {
					return err
				}
			}
			return errors.New("injected prepare failure")
		}
		return exec(ctx, q)
	}
	return b
}

func TestXATwoPhaseCommitRollsBackEveryBranchWhenOnePrepareFails(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "preparefail")
			c := e.coordinator(xa.Config{})
			for id, tc := range []struct {
				name        string
				fail, after bool
			}{{"before", true, false}, {"reply-lost", true, true}} {
				for bad := range e.nodes {
					tx := e.newTx(c)
					bs := e.insertAll(tx, 10*id+bad)
					bs[bad] = failPrepare(bs[bad], tc.after)
					err := tx.Commit(context.Background(), bs)
					e.release(err != nil)
					if err == nil || errors.Is(err, xa.ErrInDoubt) || !errors.Is(err, xa.ErrRolledBack) {
						t.Fatalf("%s, branch %d failing: Commit = %v, want ErrRolledBack and not ErrInDoubt", tc.name, bad, err)
					}
					e.wantRows(10*id+bad, 0)
					e.wantNothingPrepared()
					if d := e.decision(tx.GTRID()); d != "" {
						t.Errorf("decision logged: %q", d)
					}
				}
			}
		})
	}
}

// PREPARE TRANSACTION in a failed PostgreSQL transaction rolls it back and
// reports success; Commit must see that no branch was prepared.
func TestXATwoPhaseCommitRollsBackWhenAPostgreSQLBranchHadFailed(t *testing.T) {
	pair := xaPairs[2] // mixed: ds0 PostgreSQL
	e := newXAEnv(t, pair, "pgfailed")
	c := e.coordinator(xa.Config{})
	tx := e.newTx(c)
	bs := e.insertAll(tx, 1)
	if err := bs[0].Exec(context.Background(), "INSERT INTO acct (id, v) VALUES (1, 1)"); err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	err := tx.Commit(context.Background(), bs)
	e.release(err != nil)
	if !errors.Is(err, xa.ErrRolledBack) || errors.Is(err, xa.ErrInDoubt) {
		t.Fatalf("Commit = %v, want ErrRolledBack", err)
	}
	e.wantRows(1, 0)
	e.wantNothingPrepared()
}

// failCommit makes b's phase-2 commit fail on its own connection without
// running, the connection staying alive.
func failCommit(b xa.Branch) xa.Branch {
	exec := b.Exec
	b.Exec = func(ctx context.Context, q string) error {
		if strings.HasPrefix(q, "COMMIT PREPARED") || strings.HasPrefix(q, "XA COMMIT") {
			return errors.New("injected commit failure")
		}
		return exec(ctx, q)
	}
	return b
}

// A branch whose commit fails on its own connection is committed through
// the pool (PostgreSQL); a MySQL branch still attached to that live
// session cannot be, and Commit must say the outcome is in doubt rather
// than count XAER_NOTA as committed.
func TestXACommitSucceedsOnlyWhenEveryBranchIsCommitted(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "phase2fail")
			c := e.coordinator(xa.Config{})
			tx := e.newTx(c)
			bs := e.insertAll(tx, 1)
			for i := range bs {
				bs[i] = failCommit(bs[i])
			}
			err := tx.Commit(context.Background(), bs)
			var ide *xa.InDoubtError
			switch {
			case err == nil:
				e.release(false)
				e.wantRows(1, 1)
			case errors.As(err, &ide) && ide.Decided:
				t.Logf("in doubt: %v", err)
				for _, p := range ide.Pending {
					if e.nodes[p[2]-'0'].src.Dialect == dialect.Postgres {
						t.Errorf("PostgreSQL branch %s pending: the pool should have committed it", p)
					}
				}
				e.release(true)
				e.clock.pastTimeout(1) // MySQL branches are finished only past Timeout
				rep, rerr := c.Recover(context.Background())
				if rerr != nil || len(rep.Errors) > 0 || len(rep.Committed) != len(ide.Pending) {
					t.Fatalf("Recover = %+v, %v; want the pending branches %q committed", rep, rerr, ide.Pending)
				}
				e.wantRows(1, 1)
			default:
				t.Fatalf("Commit = %v", err)
			}
			if pair.name == "postgres" && err != nil {
				t.Errorf("PostgreSQL pair: Commit = %v, want nil (the pool finishes the branches)", err)
			}
			e.wantNothingPrepared()
		})
	}
}

// A branch that only read is begun like the others (its reads are not
// known to be all it does until the end) and must not turn the commit
// into an error: MariaDB ends a prepared XA branch that wrote nothing at
// XA PREPARE.
func TestXATwoPhaseCommitWithABranchThatOnlyRead(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "readonly")
			c := e.coordinator(xa.Config{})
			for reader := range e.nodes {
				tx := e.newTx(c)
				bs := make([]xa.Branch, len(e.nodes))
				for i := range e.nodes {
					stmt := fmt.Sprintf("INSERT INTO acct (id, v) VALUES (%d, 1)", reader)
					if i == reader {
						stmt = "SELECT count(*) FROM acct"
					}
					bs[i] = e.begin(tx, i, stmt)
				}
				err := tx.Commit(context.Background(), bs)
				e.release(err != nil)
				if err != nil {
					t.Fatalf("reader %d: Commit = %v", reader, err)
				}
				if got := e.rows(1-reader, reader); got != 1 {
					t.Errorf("reader %d: the writing branch's row: %d", reader, got)
				}
			}
			e.wantNothingPrepared()
		})
	}
}
