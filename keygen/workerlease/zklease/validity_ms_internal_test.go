package zklease

import (
	"testing"
	"time"
)

// TestStoredMillisecondsRoundUpAValidityBetweenTwoMilliseconds: a validity
// stored in milliseconds is rounded up, never down, and so is the time
// the next holder adds for a node Leaf wrote.
func TestStoredMillisecondsRoundUpAValidityBetweenTwoMilliseconds(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{
		{3*time.Second + 750*time.Microsecond, 3001},
		{3 * time.Second, 3000},
		{time.Nanosecond, 1},
	} {
		if got := durationMs(c.d); got != c.want {
			t.Errorf("durationMs(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	v := 5*time.Second + 500*time.Microsecond // above Leaf's slack
	if got, want := lastUsed(1000, record{}, false, 0, 0, v), time.UnixMilli(1000).Add(v); got.Before(want) {
		t.Errorf("last use of a Leaf node after a lease of %v: %v, want at least %v", v, got, want)
	}
	if v := validity(4001 * time.Millisecond); v%time.Millisecond != 0 || v > 4001*time.Millisecond*3/4 {
		t.Errorf("validity of a 4001ms session: %v, want whole milliseconds, at most 3/4 of it", v)
	}
}
