package workerlease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// TestHolderClockAheadOfTheDatabaseIsCoveredByTheNextLastUsed: a holder
// whose clock runs 5 s ahead of the database's (more than SafeGuard) is
// cut off and issues keys, timed by its clock, until its validity ends;
// its row then expires on the database's clock. The next holder, with a
// right clock, must get a LastUsed no earlier than the old holder's
// validity end and last key.
func TestHolderClockAheadOfTheDatabaseIsCoveredByTheNextLastUsed(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		const ttl, safeGuard, ahead = time.Second, 100 * time.Millisecond, 5 * time.Second
		dsn, p := b.viaProxy(t)
		ns := namespace(t)
		srcA := newSource(t, b.open(t, dsn), Config{Namespace: ns, TTL: ttl, SafeGuard: safeGuard})
		srcB := newSource(t, b.open(t, ""), Config{Namespace: ns, TTL: ttl, SafeGuard: safeGuard})
		clockA := &steppedClock{}
		clockA.offset.Store(int64(ahead))
		gA := leasedGenerator(t, srcA, keygen.WithClock(clockA))
		waitFor(t, 5*time.Second, "a renewal", func() bool {
			return gA.(keygen.StatsReporter).Stats().LeaseRenewals > 0
		})
		p.Cut()
		var lastKeyA int64
		for {
			id, err := gA.NextID(context.Background())
			if err != nil {
				if !errors.Is(err, keygen.ErrLeaseLost) {
					t.Fatalf("A: %v", err)
				}
				break
			}
			lastKeyA = id
			time.Sleep(time.Millisecond)
		}
		if lastKeyA == 0 {
			t.Fatal("A issued no key while cut off")
		}
		pA, err := gA.(keygen.Decomposer).Decompose(lastKeyA)
		if err != nil {
			t.Fatal(err)
		}
		var lB keygen.Lease
		waitFor(t, 10*time.Second, "B's claim", func() bool {
			l, err := onlyWorkerZero{srcB}.Acquire(context.Background(), info(realClock{}, 0))
			if errors.Is(err, ErrNoFreeWorker) {
				return false
			}
			if err != nil {
				t.Fatalf("B: %v", err)
			}
			lB = l
			return true
		})
		t.Cleanup(func() { lB.Close() })
		if lB.LastUsed().Before(pA.Time) {
			t.Fatalf("B's LastUsed %v is %v before A's last key's time %v (A's clock %v ahead)",
				lB.LastUsed(), pA.Time.Sub(lB.LastUsed()), pA.Time, ahead)
		}
	})
}
