package keygen

import (
	"testing"
	"time"
)

// TestSystemClockAdoptsForwardStepsOnly: a wall clock stepped forward is
// followed at the next check; one stepped back is ignored.
func TestSystemClockAdoptsForwardStepsOnly(t *testing.T) {
	c := NewSystemClock(nil)
	var skew time.Duration
	c.wall = func() time.Time { return time.Now().Add(skew) }
	check := func() { c.nextCheck.Store(0) } // force a comparison on the next read

	skew = time.Hour
	check()
	if d := c.Now().Sub(time.Now()); d < time.Hour-time.Second || d > time.Hour+time.Second {
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
	if !c.behind.Load() {
		t.Fatal("a wall clock behind the monotonic one was not noticed")
	}
}
