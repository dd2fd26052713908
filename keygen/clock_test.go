package keygen

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// skewedClock is a SystemClock on a timeline of its own (the process's
// must not be faked) whose wall clock reads *skew off time.Now.
func skewedClock(skew *time.Duration) *SystemClock {
	return &SystemClock{tl: newSysTimeline(func() time.Time { return time.Now().Add(*skew) })}
}

// TestSystemClocksReadOneTimeline: every SystemClock of a process — made
// at any time, with any logger, the zero value, nil — reads the same time,
// so generators of one worker on any of them share one state and never
// see each other's keys as a clock step (made apart, two SystemClocks
// disagreed by any wall-clock step back between the two NewSystemClock
// calls: the second was refused with ClockBackwardsError while the first
// was in use, and once the state was pruned it repeated the first's IDs).
func TestSystemClocksReadOneTimeline(t *testing.T) {
	var zero SystemClock
	clocks := []*SystemClock{NewSystemClock(nil), NewSystemClock(slog.New(slog.DiscardHandler)), &zero, nil, defaultClock()}
	for i, c := range clocks {
		if c.timeline() != clocks[0].timeline() {
			t.Fatalf("clock %d reads a timeline of its own", i)
		}
	}
	var last time.Time
	for i := range 1000 {
		now := clocks[i%len(clocks)].Now()
		if now.Before(last) {
			t.Fatalf("clock %d read %v after another read %v", i%len(clocks), now, last)
		}
		last = now
	}
	scope := NewSequenceScope()
	seen := map[int64]bool{}
	for i, c := range clocks {
		g, err := NewID("SNOWFLAKE", Props{"worker-id": "2", "max-tolerate-time-difference-milliseconds": "0"},
			WithClock(c), WithSequenceScope(scope))
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			id, err := g.NextID(context.Background())
			if err != nil || seen[id] {
				t.Fatalf("generator on clock %d: %d (%v), seen before: %v", i, id, err, seen[id])
			}
			seen[id] = true
		}
	}
	if n := scope.Spaces(); n != 1 {
		t.Fatalf("%d spaces, want the one all SystemClocks share", n)
	}
}

// TestSystemClockAdoptsForwardStepsOnly: a wall clock stepped forward is
// followed at the next check; one stepped back is ignored.
func TestSystemClockAdoptsForwardStepsOnly(t *testing.T) {
	var skew time.Duration
	c := skewedClock(&skew)
	check := func() { c.tl.nextCheck.Store(0) } // force a comparison on the next read

	skew = time.Hour
	check()
	if d := time.Until(c.Now()); d < time.Hour-time.Second || d > time.Hour+time.Second {
		t.Fatalf("after a forward step of 1h the clock is %v ahead", d)
	}
	before := c.Now()
	skew = -time.Hour
	check()
	for i := 0; i < 1000; i++ {
		if now := c.Now(); now.Before(before) {
			t.Fatalf("clock followed a backwards step: %v < %v", now, before)
		}
	}
	if !c.tl.behind.Load() {
		t.Fatal("a wall clock behind the monotonic one was not noticed")
	}
}

// TestSnowflakeHotPathAdoptsAForwardWallStep: SNOWFLAKE reads a
// SystemClock inline on its hot path; a forward wall step due at that read
// is adopted there too, so the key carries the corrected time.
func TestSnowflakeHotPathAdoptsAForwardWallStep(t *testing.T) {
	var skew time.Duration
	c := skewedClock(&skew)
	// A scope of its own, as the timeline: this one's wall is faked an hour
	// ahead.
	g, err := NewID("SNOWFLAKE", Props{"worker-id": "1", "max-vibration-offset": "0"}, WithClock(c),
		WithSequenceScope(NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := g.NextID(ctx); err != nil { // the hot path needs a last ID in the same tick
		t.Fatal(err)
	}
	skew = time.Hour
	c.tl.nextCheck.Store(0)
	id, err := g.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.(Decomposer).Decompose(id)
	if d := time.Until(p.Time); err != nil || d < time.Hour-time.Second || d > time.Hour+time.Second {
		t.Fatalf("key time %v is %v from now (%v), want about 1h ahead", p.Time, d, err)
	}
}

// TestSnowflakeHotPathIgnoresABackwardWallStep: a wall clock stepped back,
// seen at the check SNOWFLAKE's inline SystemClock read makes, is noticed
// (logged once) and not followed, as on the clock's own read: keys keep
// increasing, no clock-back wait or error, and the key time stays on the
// monotonic clock.
func TestSnowflakeHotPathIgnoresABackwardWallStep(t *testing.T) {
	var skew time.Duration
	c := skewedClock(&skew)
	g, err := NewID("SNOWFLAKE", Props{"worker-id": "1", "max-vibration-offset": "0",
		"max-tolerate-time-difference-milliseconds": "0"}, WithClock(c), WithSequenceScope(NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	last, err := g.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	skew = -time.Hour
	c.tl.nextCheck.Store(0)
	for i := range 10_000 {
		id, err := g.NextID(ctx)
		if err != nil || id <= last {
			t.Fatalf("key %d after the wall stepped back: %d, %v; last %d", i, id, err, last)
		}
		last = id
	}
	if !c.tl.behind.Load() {
		t.Fatal("the wall clock behind the monotonic one was not noticed")
	}
	p, err := g.(Decomposer).Decompose(last)
	if d := time.Since(p.Time); err != nil || d < -time.Second || d > time.Second {
		t.Fatalf("key time %v is %v from now (%v)", p.Time, d, err)
	}
	if s := g.(StatsReporter).Stats(); s.ClockWaits != 0 || s.ClockBackSteps != 0 {
		t.Fatalf("stats %+v: the wall's step reached the generator", s)
	}
}
