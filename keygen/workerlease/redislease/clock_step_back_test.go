package redislease

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
)

// steppedClock is the wall clock moved by an offset the test sets: an
// injected clock that an operator or a time source steps.
type steppedClock struct{ offset atomic.Int64 }

func (c *steppedClock) Now() time.Time        { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *steppedClock) Sleep(d time.Duration) { time.Sleep(d) }

// TestClockStepBackWhileCutOffStopsKeysBeforeAnotherClaims: a holder cut
// off from Redis whose clock then steps back (10 min: not so far that its generator refuses the id's LastUsed) must still stop issuing
// before its key expires and another process claims the id; its validity
// may not stretch by the step.
func TestClockStepBackWhileCutOffStopsKeysBeforeAnotherClaims(t *testing.T) {
	addr := dbtest.Redis(t)
	p := dbtest.StartProxy(t, addr)
	const ttl = time.Second
	cfg := Config{Prefix: prefix(t), TTL: ttl}
	// A namespace in service for an hour: the first claim in a new one
	// gets a LastUsed floor of about now (see TestFlushDBNeverHandsOutAHeldID),
	// which alone would make A's generator refuse the stepped clock.
	inServiceSince(t, sharedClient(t), newSource(t, sharedClient(t), cfg), time.Hour)
	srcA := &onlyWorker{s: newSource(t, client(t, p.Addr()), cfg), max: 0}
	srcB := &onlyWorker{s: newSource(t, client(t, addr), cfg), max: 0}
	clockA := &steppedClock{}
	gA := claimWhenFree(t, srcA, 10*time.Second, keygen.WithClock(clockA))
	waitFor(t, 5*time.Second, "a renewal", func() bool { return srcA.last().Renewals() > 0 })
	p.Cut()
	cut := time.Now()
	clockA.offset.Store(int64(-10 * time.Minute))
	// A issued nothing before the step, so its generator has no reason to
	// refuse the earlier clock: only the lease can stop it.
	keys := newKeyLog(t)
	stop := make(chan struct{})
	defer close(stop)
	lastA, lostA := issueUntilStopped(t, gA, "A", keys, stop)
	gB := claimWhenFree(t, srcB, 10*time.Second, keygen.WithClock(otherProcess{}))
	claimed := time.Now()
	if _, err := gB.NextID(t.Context()); err != nil {
		t.Fatalf("B: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	t.Logf("cut and step at 0: A's first refusal at %v, last key at %v; B claimed at %v",
		lostA().Sub(cut), lastA().Sub(cut), claimed.Sub(cut))
	if lostA().IsZero() || lastA().After(claimed) {
		t.Fatalf("A (clock stepped back 10 min, cut off) still issued keys %v after B claimed its id", lastA().Sub(claimed))
	}
	if _, err := gA.NextID(t.Context()); !errors.Is(err, keygen.ErrLeaseLost) {
		t.Fatalf("A after B claimed: %v, want ErrLeaseLost", err)
	}
}

// inServiceSince writes s's namespace state as a namespace in use on this
// server for d would have it: its quarantine started d ago.
func inServiceSince(t testing.TB, c *redis.Client, s *Source, d time.Duration) {
	t.Helper()
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`run_id:([0-9a-f]+)`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no run_id in INFO server")
	}
	since := strconv.FormatInt(time.Now().Add(-d).UnixMilli(), 10)
	if err := c.HSet(context.Background(), s.nsKey(), "since", since, "run", m[1]).Err(); err != nil {
		t.Fatal(err)
	}
}
