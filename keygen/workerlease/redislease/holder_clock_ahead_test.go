package redislease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
)

// TestHolderClockAheadOfTheServerIsCoveredByTheNextLastUsed: a holder
// whose clock runs 5 s ahead of Redis's (more than SafeGuard) is cut off
// and issues keys, timed by its clock, until its validity ends; its key
// then expires on Redis's clock. The next holder, with a right clock, must
// get a LastUsed no earlier than the old holder's validity end and last
// key, and no key may repeat.
func TestHolderClockAheadOfTheServerIsCoveredByTheNextLastUsed(t *testing.T) {
	addr := dbtest.Redis(t)
	p := dbtest.StartProxy(t, addr)
	const ttl, ahead = time.Second, 5 * time.Second
	cfg := Config{Prefix: prefix(t), TTL: ttl}
	inServiceSince(t, sharedClient(t), newSource(t, sharedClient(t), cfg), time.Hour)
	srcA := &onlyWorker{s: newSource(t, client(t, p.Addr()), cfg), max: 0}
	srcB := &onlyWorker{s: newSource(t, client(t, addr), cfg), max: 0}
	clockA := &steppedClock{}
	clockA.offset.Store(int64(ahead))
	gA := claimWhenFree(t, srcA, 10*time.Second, keygen.WithClock(clockA))
	waitFor(t, 5*time.Second, "a renewal", func() bool { return srcA.last().Renewals() > 0 })
	keys := newKeyLog(t)
	var lastKeyA int64
	var validA int64
	p.Cut()
	// A issues until its validity ends; the key times are on its clock.
	for {
		if v := srcA.last().ValidUntil(); v > validA {
			validA = v
		}
		id, err := gA.NextID(context.Background())
		if err != nil {
			break
		}
		keys.add("A", id)
		lastKeyA = id
		time.Sleep(time.Millisecond)
	}
	if lastKeyA == 0 {
		t.Fatal("A issued no key while cut off")
	}
	// B, with a right clock, claims the id once A's key expired.
	var lB *Lease
	for deadline := time.Now().Add(10 * time.Second); lB == nil; {
		l, err := srcB.s.acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 0, Clock: otherProcess{}})
		switch {
		case err == nil:
			lB = l
			t.Cleanup(func() { l.Close() })
		case !errors.Is(err, ErrNoFreeWorker) || time.Now().After(deadline):
			t.Fatalf("B: %v", err)
		default:
			time.Sleep(2 * time.Millisecond)
		}
	}
	lastUsedB := lB.LastUsed()
	if lastUsedB.UnixNano() < validA {
		t.Fatalf("B's LastUsed %v is %v before A's validity end %v (A's clock %v ahead)",
			lastUsedB, time.Duration(validA-lastUsedB.UnixNano()), time.Unix(0, validA), ahead)
	}
	pA, err := gA.(keygen.Decomposer).Decompose(lastKeyA)
	if err != nil {
		t.Fatal(err)
	}
	if lastUsedB.Before(pA.Time) {
		t.Fatalf("B's LastUsed %v is before A's last key's time %v", lastUsedB, pA.Time)
	}
	// A generator on B's lease issues nothing at or before LastUsed, so
	// no key of A's repeats.
}
