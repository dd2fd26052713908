package coretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/xa"
)

// GC keeps every decision a branch may still need: C rows while a branch
// is prepared (and when a data source cannot be listed), A rows for a day.
func TestXAGCDeletesOnlyDecisionsNoBranchNeeds(t *testing.T) {
	for _, pair := range xaPairs {
		t.Run(pair.name, func(t *testing.T) {
			e := newXAEnvProxied(t, pair, "gc", true)
			c := e.coordinator(xa.Config{LogSource: "ds1"})
			crash := e.coordinator(xa.Config{LogSource: "ds1", Hook: failAt(xa.StageDecided)})
			gc := func(want int64) {
				t.Helper()
				if n, err := c.GC(context.Background()); err != nil || n != want {
					t.Fatalf("GC = %d, %v; want %d deleted", n, err, want)
				}
			}
			done, doubt, aborted := e.newTx(c), e.newTx(crash), e.newTx(c)
			if err := done.Commit(context.Background(), e.insertAll(done, 1)); err != nil {
				t.Fatal(err)
			}
			e.release(false)
			err := doubt.Commit(context.Background(), e.insertAll(doubt, 2))
			e.release(true)
			if !errors.Is(err, xa.ErrInDoubt) {
				t.Fatalf("Commit = %v, want ErrInDoubt", err)
			}
			e.orphan(aborted, 3)
			e.proxy.Cut()
			if n, err := c.GC(context.Background()); err == nil || n != 0 {
				t.Fatalf("GC with ds0 unreachable = %d, %v; want an error and nothing deleted", n, err)
			}
			e.proxy.Resume()
			gc(1) // done's C row; doubt's has prepared branches
			if e.decisionIn(1, done.GTRID()) != "" || e.decisionIn(1, doubt.GTRID()) != "C" {
				t.Fatal("GC deleted the wrong C row")
			}
			e.clock.pastTimeout(1)
			if rep, err := c.Recover(context.Background()); err != nil || len(rep.Committed) != 2 || len(rep.RolledBack) != 2 {
				t.Fatalf("Recover = %+v, %v", rep, err)
			}
			gc(1) // doubt's C row; aborted's A row is young
			if e.decisionIn(1, aborted.GTRID()) != "A" {
				t.Fatal("GC deleted a young A row")
			}
			e.clock.Advance(24 * time.Hour)
			gc(1)
			e.wantRows(1, 1)
			e.wantRows(2, 1)
			e.wantRows(3, 0)
			e.wantNothingPrepared()
		})
	}
}

// The timer recovers without anyone calling Recover.
func TestXARecoveryTimerFinishesAnOrphanedTransaction(t *testing.T) {
	e := newXAEnv(t, xaPairs[2], "timer")
	c := e.coordinator(xa.Config{Interval: 20 * time.Millisecond})
	tx := e.newTx(c)
	e.orphan(tx, 1)
	e.clock.pastTimeout(1) // from now on the timer's recovery rolls it back
	for deadline := time.Now().Add(20 * time.Second); e.decision(tx.GTRID()) != "A" || len(e.prepared(0, e.prefix))+len(e.prepared(1, e.prefix)) > 0; {
		if time.Now().After(deadline) {
			t.Fatal("the timer did not roll the orphaned transaction back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.wantRows(1, 0)
}
