package coretest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
)

// orphan leaves tx's branches (each inserting row id) prepared with no
// decision, as a coordinator that crashed after phase 1 would.
func (e *xaEnv) orphan(tx *xa.Tx, id int) {
	e.t.Helper()
	for i, b := range e.insertAll(tx, id) {
		src := e.nodes[i].src
		if src.Dialect == dialect.Postgres {
			e.run(b, []string{"PREPARE TRANSACTION '" + tx.GTRID() + ":" + src.Name + "'"})
			_ = b.Local(false)
			continue
		}
		xid := strings.TrimPrefix(tx.XAStart(src.Name), "XA START ")
		e.run(b, []string{"XA END " + xid, "XA PREPARE " + xid})
	}
	e.release(true)
}

// failAt is a hook failing at stage s.
func failAt(s xa.Stage) func(xa.Stage, string) error {
	return func(got xa.Stage, _ string) error {
		if got == s {
			return errors.New("injected crash at " + s.String())
		}
		return nil
	}
}

func branchIDs(ids []xa.BranchID) []string {
	out := make([]string, len(ids))
	for i, b := range ids {
		out[i] = b.Source + "/" + b.GTRID
	}
	slices.Sort(out)
	return out
}

func TestXARecoverCommitsTheBranchesOfADecidedCommit(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "decided")
			rec := e.coordinator(xa.Config{})
			for id, stage := range []xa.Stage{xa.StageDecided, xa.StageCommittedOne} {
				c := e.coordinator(xa.Config{Hook: failAt(stage)})
				tx := e.newTx(c)
				err := tx.Commit(context.Background(), e.insertAll(tx, id))
				e.release(err != nil)
				var ide *xa.InDoubtError
				if !errors.As(err, &ide) || !errors.Is(err, xa.ErrInDoubt) || !ide.Decided || ide.GTRID != tx.GTRID() {
					t.Fatalf("%s: Commit = %v, want a decided *InDoubtError", stage, err)
				}
				wantCommitted := map[xa.Stage]int{xa.StageDecided: 0, xa.StageCommittedOne: 1}[stage]
				if len(ide.Committed) != wantCommitted || len(ide.Committed)+len(ide.Pending) != 2 {
					t.Fatalf("%s: committed %q, pending %q", stage, ide.Committed, ide.Pending)
				}
				e.clock.pastTimeout(1) // MySQL branches are finished only past Timeout
				rep, err := rec.Recover(context.Background())
				if err != nil || len(rep.Errors) > 0 {
					t.Fatalf("Recover: %v %v", err, rep.Errors)
				}
				if len(rep.Committed) != len(ide.Pending) || len(rep.RolledBack) != 0 || len(rep.Left) != 0 {
					t.Fatalf("%s: Recover report %+v, want the %d pending branches committed", stage, rep, len(ide.Pending))
				}
				e.wantRows(id, 1)
				e.wantNothingPrepared()
			}
		})
	}
}

func TestXARecoverRollsBackUndecidedBranchesOlderThanTimeoutAndLeavesYoungerOnes(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "undecided")
			c := e.coordinator(xa.Config{})
			tx := e.newTx(c)
			e.orphan(tx, 1)
			e.clock.Advance(xaTimeout - 5e9)
			rep, err := c.Recover(context.Background())
			if err != nil || len(rep.Errors) > 0 || len(rep.Committed)+len(rep.RolledBack) > 0 || len(rep.Left) != 2 {
				t.Fatalf("young: Recover = %+v, %v; want both branches left", rep, err)
			}
			if d := e.decision(tx.GTRID()); d != "" {
				t.Fatalf("young undecided transaction got decision %q", d)
			}
			for i := range e.nodes {
				if got := e.prepared(i, e.listed(i, tx.GTRID())); len(got) != 1 {
					t.Fatalf("young branch on %s: prepared %q, want it alone", e.nodes[i].src.Name, got)
				}
			}
			e.clock.Advance(10e9)
			rep, err = c.Recover(context.Background())
			if err != nil || len(rep.Errors) > 0 || len(rep.RolledBack) != 2 || len(rep.Committed)+len(rep.Left) > 0 {
				t.Fatalf("old: Recover = %+v, %v; want both branches rolled back", rep, err)
			}
			if d := e.decision(tx.GTRID()); d != "A" {
				t.Errorf("decision %q, want A", d)
			}
			e.wantRows(1, 0)
			e.wantNothingPrepared()
		})
	}
}

// inDoubtSet leaves decided transactions (crashed after logging C) and
// undecided ones (crashed after preparing), rows 0.. in that order, and
// returns their branches as branchIDs spells them.
func (e *xaEnv) inDoubtSet(decided, undecided int) (wantC, wantA []string) {
	e.t.Helper()
	crash := e.coordinator(xa.Config{Hook: failAt(xa.StageDecided)})
	for id := range decided + undecided {
		tx := e.newTx(crash)
		if id < decided {
			err := tx.Commit(context.Background(), e.insertAll(tx, id))
			e.release(true)
			if !errors.Is(err, xa.ErrInDoubt) {
				e.t.Fatalf("Commit = %v, want ErrInDoubt", err)
			}
		} else {
			e.orphan(tx, id)
		}
		for _, n := range e.nodes {
			if id < decided {
				wantC = append(wantC, n.src.Name+"/"+tx.GTRID())
			} else {
				wantA = append(wantA, n.src.Name+"/"+tx.GTRID())
			}
		}
	}
	slices.Sort(wantC)
	slices.Sort(wantA)
	return wantC, wantA
}

// recoverAtOnce runs Recover on every coordinator at the same moment and
// returns what all of them committed and rolled back.
func recoverAtOnce(t *testing.T, cs []*xa.Coordinator) (committed, rolledBack []xa.BranchID) {
	reps := make([]xa.Report, len(cs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range cs {
		wg.Go(func() {
			<-start
			var err error
			if reps[i], err = c.Recover(context.Background()); err != nil {
				t.Errorf("Recover %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for i, r := range reps {
		for _, err := range r.Errors {
			t.Errorf("recoverer %d: %v", i, err)
		}
		committed, rolledBack = append(committed, r.Committed...), append(rolledBack, r.RolledBack...)
	}
	return committed, rolledBack
}

func TestXAConcurrentRecoverersResolveEachBranchExactlyOnce(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "concurrent")
			const decided, undecided, recoverers = 3, 3, 8
			// Started first: Start runs a recovery of its own.
			cs := make([]*xa.Coordinator, recoverers)
			for i := range cs {
				cs[i] = e.coordinator(xa.Config{})
			}
			wantC, wantA := e.inDoubtSet(decided, undecided)
			e.clock.pastTimeout(1)
			gotC, gotA := recoverAtOnce(t, cs)
			if g := branchIDs(gotC); !slices.Equal(g, wantC) {
				t.Errorf("committed, over all reports:\n%q\nwant each decided branch once:\n%q", g, wantC)
			}
			if g := branchIDs(gotA); !slices.Equal(g, wantA) {
				t.Errorf("rolled back, over all reports:\n%q\nwant each undecided branch once:\n%q", g, wantA)
			}
			for id := range decided + undecided {
				e.wantRows(id, map[bool]int{true: 1, false: 0}[id < decided])
			}
			e.wantNothingPrepared()
		})
	}
}

// foreign prepares, on node i, a branch inserting row id under a branch id
// that is not this deployment's (spelled as listPrepared lists it), and
// rolls it back at cleanup.
func (e *xaEnv) foreign(i, id int, pgGID string, myGTRID, myBqual string, myFormat int) string {
	e.t.Helper()
	src, direct := e.nodes[i].src, e.nodes[i].direct
	ins := fmt.Sprintf("INSERT INTO acct (id, v) VALUES (%d, 1)", id)
	listed := pgGID
	stmts := []string{"BEGIN", ins, "PREPARE TRANSACTION '" + pgGID + "'"}
	if src.Dialect == dialect.MySQL {
		xid := fmt.Sprintf("X'%x',X'%x',%d", myGTRID, myBqual, myFormat)
		stmts, listed = []string{"XA START " + xid, ins, "XA END " + xid, "XA PREPARE " + xid}, myGTRID+myBqual
	}
	e.runOnce(src, direct, stmts)
	e.t.Cleanup(func() {
		if _, err := rollbackPrepared(src, func(s string) bool { return s == listed }); err != nil {
			e.t.Errorf("rolling back foreign branch %s: %v", listed, err)
		}
	})
	return listed
}

// runOnce runs stmts on a connection of their own, which is then closed
// (a prepared XA branch stays attached to its session: the connection
// must not go back to the pool) and, on MySQL, waited out.
func (e *xaEnv) runOnce(src xa.Source, direct *sql.DB, stmts []string) {
	e.t.Helper()
	ctx := context.Background()
	conn, err := src.DB.Conn(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	bc := branchConn{conn: conn, db: direct}
	if src.Dialect == dialect.MySQL {
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&bc.id); err != nil {
			e.t.Fatal(err)
		}
	}
	defer func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
		if src.Dialect == dialect.MySQL {
			e.waitGone(bc)
		}
	}()
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			e.t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestXARecoverNeverTouchesBranchesThatAreNotOurs(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "foreign")
			c := e.coordinator(xa.Config{})
			ours := e.newTx(c).GTRID()
			otherTag := "sk1:0badc0de0badc0de:" + ours[len(e.prefix):]
			if otherTag[:len(e.prefix)] == e.prefix {
				otherTag = "sk1:0badc0df0badc0df:" + ours[len(e.prefix):]
			}
			uniq := ours[len(e.prefix):]
			var listed [][]string
			for i, n := range e.nodes {
				name := n.src.Name
				listed = append(listed, []string{
					e.foreign(i, 1, "other-format-"+uniq+"-"+name, "other-format-"+uniq, name, 1),
					e.foreign(i, 2, otherTag+":"+name, otherTag, name, xa.FormatID),
					e.foreign(i, 3, ours+":ds9"+name, ours, "ds9"+name, xa.FormatID),
					e.foreign(i, 4, ours+":"+name+"x", ours, name+"x", xa.FormatID),
				})
			}
			e.clock.pastTimeout(1000)
			for range 2 {
				rep, err := c.Recover(context.Background())
				if err != nil || len(rep.Errors)+len(rep.Committed)+len(rep.RolledBack)+len(rep.Left) > 0 {
					t.Fatalf("Recover acted on branches that are not ours: %+v, %v", rep, err)
				}
				if _, err := c.GC(context.Background()); err != nil {
					t.Fatalf("GC: %v", err)
				}
			}
			for i := range e.nodes {
				got := e.prepared(i, "")
				for _, id := range listed[i] {
					if !slices.Contains(got, id) {
						t.Errorf("%s: foreign branch %q no longer prepared", e.nodes[i].src.Name, id)
					}
				}
			}
			if d := e.decision(ours); d != "" {
				t.Errorf("decision %q logged for a branch on another data source", d)
			}
		})
	}
}

func TestXACommitRollsBackATransactionThatOutlivedTimeoutBeforeLogging(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "outlived")
			c := e.coordinator(xa.Config{Hook: func(s xa.Stage, _ string) error {
				if s == xa.StagePrepared {
					e.clock.pastTimeout(1)
				}
				return nil
			}})
			tx := e.newTx(c)
			err := tx.Commit(context.Background(), e.insertAll(tx, 1))
			e.release(err != nil)
			if !errors.Is(err, xa.ErrRolledBack) || errors.Is(err, xa.ErrInDoubt) {
				t.Fatalf("Commit = %v, want ErrRolledBack", err)
			}
			if d := e.decision(tx.GTRID()); d != "" {
				t.Errorf("decision %q logged", d)
			}
			e.wantRows(1, 0)
			e.wantNothingPrepared()
		})
	}
}

func TestXALateCoordinatorRollsBackWhenRecoveryLoggedRollbackFirst(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnv(t, pair, "late")
			later := new(xaClock)
			later.pastTimeout(2)
			rec := e.coordinator(xa.Config{Now: later.Now})
			var rep xa.Report
			c := e.coordinator(xa.Config{Hook: func(s xa.Stage, _ string) error {
				if s == xa.StagePrepared {
					var err error
					rep, err = rec.Recover(context.Background())
					return err
				}
				return nil
			}})
			tx := e.newTx(c)
			err := tx.Commit(context.Background(), e.insertAll(tx, 1))
			e.release(err != nil)
			if !errors.Is(err, xa.ErrRolledBack) || errors.Is(err, xa.ErrInDoubt) {
				t.Fatalf("Commit = %v, want ErrRolledBack", err)
			}
			t.Logf("recovery while the coordinator stalled: %+v", rep)
			if len(rep.Committed) > 0 || len(rep.Errors) > 0 {
				t.Errorf("recovery report %+v", rep)
			}
			if d := e.decision(tx.GTRID()); d != "A" {
				t.Errorf("decision %q, want A", d)
			}
			e.wantRows(1, 0)
			e.wantNothingPrepared()
		})
	}
}
