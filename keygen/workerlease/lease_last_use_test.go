package workerlease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// newGen builds a leased generator of typ with extra props and a clock.
func newGen(t *testing.T, typ string, props keygen.Props, src keygen.WorkerSource, clock keygen.Clock) closingGenerator {
	t.Helper()
	p := keygen.Props{"worker-id": "auto"}
	for k, v := range props {
		p[k] = v
	}
	g, err := keygen.NewID(typ, p, keygen.WithWorkerSource(src), keygen.WithClock(clock))
	if err != nil {
		t.Fatalf("NewID %s: %v", typ, err)
	}
	cg := g.(closingGenerator)
	t.Cleanup(func() { cg.Close() })
	return cg
}

// TestLastUseSurvivesAClockBackFlag: a SNOWFLAKE generator with
// clock-back bits whose clock stepped back beyond the tolerance (its flag
// bumped) still tracks its last-use time, so its clean release records
// it, and the next holder of the worker id, claiming at once, never
// re-issues the previous holder's keys.
func TestLastUseSurvivesAClockBackFlag(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		s := newSource(t, b.open(t, ""), Config{})
		props := keygen.Props{"clock-back-bits": "1"}
		ca := keygentest.NewClock(start)
		a := newGen(t, "SNOWFLAKE", props, s, ca)
		ctx := context.Background()
		k1, err := a.NextID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{k1: true}
		ca.Add(-time.Second) // NTP steps the clock back: flag bump
		k2, err := a.NextID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[k2] = true
		w := workerOf(t, a, k1)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("slot after release: %+v (keys issued at %v)", slot(t, s, w), start)

		// The next holder, its clock at the time A's first key carries.
		bg := newGen(t, "SNOWFLAKE", props, s, keygentest.NewClock(start))
		for range 3 {
			id, err := bg.NextID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if workerOf(t, bg, id) != w {
				t.Fatalf("next holder got worker %d, want %d", workerOf(t, bg, id), w)
			}
			if seen[id] {
				t.Fatalf("key %d issued twice: by the previous holder of worker %d and again by the next one", id, w)
			}
		}
	})
}

// TestNextHolderNeverReusesAPreviousHoldersClockBackFlag: A used flag 1
// at time T after a step back; B starts after A's last use and then steps
// back to T itself. B cannot know A's flags at T, so its next key is
// refused (*keygen.ClockBackwardsError) or is one A never issued.
func TestNextHolderNeverReusesAPreviousHoldersClockBackFlag(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		s := newSource(t, b.open(t, ""), Config{TTL: 300 * time.Millisecond})
		props := keygen.Props{"clock-back-bits": "1"}
		ca := keygentest.NewClock(start)
		a := newGen(t, "SNOWFLAKE", props, s, ca)
		ctx := context.Background()
		seen := map[int64]bool{}
		issue := func(g closingGenerator) int64 {
			t.Helper()
			id, err := g.NextID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		seen[issue(a)] = true
		ca.Add(200 * time.Millisecond) // within the TTL of the fake clock
		k := issue(a)
		seen[k] = true
		w := workerOf(t, a, k)
		waitFor(t, 5*time.Second, "a renewal recording the last use", func() bool {
			return !slot(t, s, w).LastUsed.Before(start.Add(200 * time.Millisecond))
		})
		ca.Set(start) // step back 200 ms: flag 1
		seen[issue(a)] = true
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}

		cb := keygentest.NewClock(start.Add(200 * time.Millisecond))
		bg := newGen(t, "SNOWFLAKE", props, s, cb)
		seen2 := issue(bg)
		if workerOf(t, bg, seen2) != w {
			t.Fatalf("worker %d, want %d", workerOf(t, bg, seen2), w)
		}
		cb.Set(start) // B's clock steps back the same way
		id, err := bg.NextID(ctx)
		var cbe *keygen.ClockBackwardsError
		if errors.As(err, &cbe) {
			return // refused: accepted (it cannot know A's flags at that time)
		}
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			p, _ := bg.(keygen.Decomposer).Decompose(id)
			t.Fatalf("key %d (%+v) issued twice: by the previous holder of worker %d and by the next", id, p, w)
		}
	})
}

// TestJSBorrowedSecondAfterExpiry: SNOWFLAKE_JS borrows the second
// after the current one (backup worker) when a second is used up, so its
// keys may carry a time up to a second past its clock. When a holder dies
// (no release, no renewal after the borrow), the next holder, claiming
// once the slot expired and its safe-guard passed, never issues the dead
// holder's backup keys (the dead holder may refuse to borrow past its
// lease instead).
func TestJSBorrowedSecondAfterExpiry(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		// Start early in a second so that expiry stays in it.
		for time.Now().Nanosecond() > 300e6 {
			time.Sleep(5 * time.Millisecond)
		}
		ns := namespace(t)
		dbA := b.open(t, "")
		sa := newSource(t, dbA, Config{Namespace: ns, TTL: 150 * time.Millisecond, SafeGuard: 150 * time.Millisecond})
		ca := keygentest.NewClock(time.Now())
		a := newGen(t, "SNOWFLAKE_JS", nil, sa, ca)
		dbA.Close() // the holder's process loses its database (dies)
		keysA := make([]int64, 2*65536+1)
		if err := a.NextIDs(context.Background(), keysA); errors.Is(err, keygen.ErrLeaseLost) {
			// Refusing to borrow a second past the lease: accepted; the keys
			// issued before the refusal are checked below.
			n := 0
			for n < len(keysA) && keysA[n] != 0 {
				n++
			}
			keysA = keysA[:n]
		} else if err != nil {
			t.Fatalf("holder A: %v", err)
		}
		seen := make(map[int64]bool, len(keysA))
		for _, k := range keysA {
			seen[k] = true
		}
		w := workerOf(t, a, keysA[0])
		_ = a.Close() // release fails: the slot expires instead

		sb := newSource(t, b.open(t, ""), Config{Namespace: ns, TTL: 10 * time.Second, SafeGuard: 150 * time.Millisecond})
		var sl Slot
		waitFor(t, 5*time.Second, "expiry + safe-guard", func() bool {
			sl = slot(t, sb, w)
			return dbNowMs(t, sb) > sl.ExpiresAt.UnixMilli()+150+20
		})
		bg := newGen(t, "SNOWFLAKE_JS", nil, sb, keygentest.NewClock(time.Now()))
		for range 65536 + 2 {
			k, err := bg.NextID(context.Background())
			if err != nil {
				t.Fatalf("holder B: %v", err)
			}
			if workerOf(t, bg, k) != w {
				t.Fatalf("B got worker %d, want %d", workerOf(t, bg, k), w)
			}
			if seen[k] {
				p, _ := bg.(keygen.Decomposer).Decompose(k)
				t.Fatalf("key %d (%+v) issued by the dead holder and again by the next one (slot expired %v, last A key second %v)",
					k, p, sl.ExpiresAt, mustTime(t, a, keysA[len(keysA)-1]))
			}
		}
	})
}

func mustTime(t *testing.T, g keygen.IDGenerator, id int64) time.Time {
	p, err := g.(keygen.Decomposer).Decompose(id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Time
}

// TestExpiryNotBeforeValidity: the database records an expiry no earlier
// than the lease's validity, as the package promises, also where the two
// are counted differently: the statements work in whole milliseconds (the
// database's now floored to one) while ValidUntil adds the full TTL in
// nanoseconds. With a TTL that is not whole milliseconds and a
// sub-millisecond SafeGuard, no slot becomes claimable while its holder's
// lease is still valid, on one and the same clock.
func TestExpiryNotBeforeValidity(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		s := newSource(t, b.open(t, ""), Config{TTL: 100*time.Millisecond + 999*time.Microsecond, SafeGuard: time.Microsecond})
		bad := 0
		for range 5 {
			l := acquire(t, s, info(realClock{}, 1023))
			sl := slot(t, s, l.Worker())
			// candidate: expires_at + 0 < now_ms, i.e. from expires_at + 1 ms on.
			claimable := sl.ExpiresAt.Add(time.Millisecond).UnixNano()
			if claimable < l.ValidUntil() {
				bad++
				t.Logf("worker %d: claimable by others from %v, lease valid until %v (%v overlap)", l.Worker(),
					time.Unix(0, claimable).UTC(), time.Unix(0, l.ValidUntil()).UTC(), time.Duration(l.ValidUntil()-claimable))
			}
		}
		if bad > 0 {
			t.Fatalf("%d of 5 leases stay valid after their slot becomes claimable", bad)
		}
	})
}
