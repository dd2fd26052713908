package leaseclock

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTrackerMsIsZeroWhenNothingIsKnown(t *testing.T) {
	var tr Tracker
	if got := tr.Ms(); got != 0 {
		t.Fatalf("untracked: Ms = %d, want 0", got)
	}
	for name, at := range map[string]time.Time{
		"zero time":  {},
		"epoch":      time.Unix(0, 0),
		"before1970": time.Unix(-5, 0),
	} {
		tr.Track(func() time.Time { return at })
		if got := tr.Ms(); got != 0 {
			t.Errorf("%s: Ms = %d, want 0", name, got)
		}
	}
	tr.Track(func() time.Time { return time.UnixMilli(7) })
	tr.Track(nil)
	if got := tr.Ms(); got != 0 {
		t.Fatalf("after Track(nil): Ms = %d, want 0", got)
	}
}

func TestTrackerMsRoundsUpSoAKeyWithinTheMillisecondIsCovered(t *testing.T) {
	var tr Tracker
	for _, c := range []struct {
		ns, want int64
	}{
		{1, 1},
		{int64(time.Millisecond), 1},
		{int64(time.Millisecond) + 1, 2},
		{1_700_000_000_123_000_000, 1_700_000_000_123},
		{1_700_000_000_123_000_001, 1_700_000_000_124},
	} {
		at := time.Unix(0, c.ns)
		tr.Track(func() time.Time { return at })
		if got := tr.Ms(); got != c.want {
			t.Errorf("Ms of %d ns = %d, want %d", c.ns, got, c.want)
		}
	}
}

func TestTrackerMayBeSetWhileRead(t *testing.T) {
	var tr Tracker
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 1000 {
			ms := int64(i + 1)
			tr.Track(func() time.Time { return time.UnixMilli(ms) })
		}
	}()
	go func() {
		defer wg.Done()
		for range 1000 {
			if got := tr.Ms(); got < 0 || got > 1000 {
				t.Errorf("Ms = %d, outside what was tracked", got)
				return
			}
		}
	}()
	wg.Wait()
}

func TestCountersCountRenewalsAndFailuresApart(t *testing.T) {
	var c Counters
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Renewed()
				c.Failed()
				c.Renewed()
			}
		}()
	}
	wg.Wait()
	if c.Renewals() != 800 || c.Failures() != 400 {
		t.Fatalf("Renewals, Failures = %d, %d; want 800, 400", c.Renewals(), c.Failures())
	}
}

func TestValidityIsInvalidUntilSet(t *testing.T) {
	var v Validity
	v.Start(time.Now(), nil)
	if got := v.Until(); got != Invalid {
		t.Fatalf("Until after Start = %d, want Invalid", got)
	}
	t.Cleanup(v.Expire)
	v.Set(42, time.Now(), time.Hour)
	if got := v.Until(); got != 42 {
		t.Fatalf("Until after Set = %d, want 42", got)
	}
}

func TestValiditySetTakesTheLatestEndEvenWhenLower(t *testing.T) {
	var v Validity
	v.Start(time.Now(), nil)
	t.Cleanup(v.Expire)
	v.Set(100, time.Now(), time.Hour)
	v.Set(50, time.Now(), time.Hour) // the clock stepped back
	if got := v.Until(); got != 50 {
		t.Fatalf("Until = %d, want 50 (the latest request's end)", got)
	}
}

// waitFor polls cond for up to a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestValidityEndsOnTheMonotonicClockWhateverTheGeneratorClockReads(t *testing.T) {
	var v Validity
	var ended atomic.Int64
	v.Start(time.Now(), func(until int64) { ended.Store(until) })
	t.Cleanup(v.Expire)
	// A generator clock far in the future: only the monotonic end counts.
	far := time.Now().Add(1000 * time.Hour).UnixNano()
	v.Set(far, time.Now(), 2*time.Millisecond)
	waitFor(t, "the validity to end", func() bool { return v.Until() == Invalid })
	waitFor(t, "onExpire", func() bool { return ended.Load() == far })
}

func TestValidityEndIsCountedFromTheSendNotFromSet(t *testing.T) {
	var v Validity
	base := time.Now()
	v.Start(base, nil)
	t.Cleanup(v.Expire)
	// Sent an hour "before" Set, valid for an hour: already over.
	v.Set(1, base.Add(-time.Hour), time.Hour)
	waitFor(t, "the validity to end", func() bool { return v.Until() == Invalid })
}

func TestValiditySetAfterExpiryMakesItValidAgain(t *testing.T) {
	var v Validity
	v.Start(time.Now(), nil)
	t.Cleanup(v.Expire)
	v.Set(1, time.Now(), time.Millisecond)
	waitFor(t, "the validity to end", func() bool { return v.Until() == Invalid })
	v.Set(2, time.Now(), time.Hour)
	time.Sleep(3 * time.Millisecond)
	if got := v.Until(); got != 2 {
		t.Fatalf("Until = %d, want 2 (renewed)", got)
	}
}

func TestValidityRenewalPostponesTheMonotonicEnd(t *testing.T) {
	var v Validity
	var calls atomic.Int32
	v.Start(time.Now(), func(int64) { calls.Add(1) })
	t.Cleanup(v.Expire)
	v.Set(1, time.Now(), 2*time.Millisecond)
	v.Set(2, time.Now(), time.Hour)
	time.Sleep(5 * time.Millisecond)
	if got := v.Until(); got != 2 || calls.Load() != 0 {
		t.Fatalf("Until = %d, onExpire calls = %d; want 2, 0", got, calls.Load())
	}
}

func TestValidityExpireEndsItAtOnceWithoutOnExpire(t *testing.T) {
	var v Validity
	var calls atomic.Int32
	v.Start(time.Now(), func(int64) { calls.Add(1) })
	v.Set(1, time.Now(), 2*time.Millisecond)
	v.Expire()
	if got := v.Until(); got != Invalid {
		t.Fatalf("Until after Expire = %d, want Invalid", got)
	}
	time.Sleep(5 * time.Millisecond)
	if calls.Load() != 0 {
		t.Fatalf("onExpire called %d times after Expire, want 0", calls.Load())
	}
	v.Expire() // idempotent
}

func TestValidityUntilMayBeReadWhileSet(t *testing.T) {
	var v Validity
	v.Start(time.Now(), nil)
	t.Cleanup(v.Expire)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 1000 {
			v.Set(int64(i+1), time.Now(), time.Hour)
		}
	}()
	for {
		select {
		case <-done:
			if got := v.Until(); got != 1000 {
				t.Fatalf("Until = %d, want 1000", got)
			}
			return
		default:
			if got := v.Until(); got != Invalid && (got < 1 || got > 1000) {
				t.Fatalf("Until = %d, never set", got)
			}
		}
	}
}

func TestLateReplyDoesNotRevalidateAnEndedValidity(t *testing.T) {
	var v Validity
	v.Start(time.Now().Add(-time.Minute), nil)
	until := time.Now().Add(time.Hour).UnixNano() // a generator clock that reads ahead
	// The request was sent 2s ago and lasts 1s: its reply came after its end.
	v.Set(until, time.Now().Add(-2*time.Second), time.Second)
	if got := v.Until(); got != Invalid {
		t.Fatalf("after a reply past the validity's end: Until = %d, want Invalid", got)
	}
	v.Set(until, time.Now(), time.Hour)
	if got := v.Until(); got != until {
		t.Fatalf("after a timely reply: Until = %d, want %d", got, until)
	}
	v.Set(until, time.Now().Add(-2*time.Second), time.Second)
	if got := v.Until(); got != Invalid {
		t.Fatalf("a late reply after a valid one: Until = %d, want Invalid", got)
	}
	v.Expire()
}

func TestExpiryTimerDoesNotCancelARenewalWithTheSameUntil(t *testing.T) {
	var v Validity
	expired := 0
	v.Start(time.Now().Add(-time.Minute), func(int64) { expired++ })
	const until = int64(1_700_000_000_000_000_000)
	v.Set(until, time.Now(), time.Hour)
	// The timer read a state whose monotonic end passed...
	v.state.Store(&validityState{until: until, realEnd: time.Second})
	// ...and a renewal sets the identical until before the timer swaps.
	v.beforeSwap = func() { v.Set(until, time.Now(), time.Hour) }
	v.expire()
	if got := v.Until(); got != until {
		t.Fatalf("the timer undid a renewal with the same until: Until = %d, want %d", got, until)
	}
	if expired != 0 {
		t.Fatalf("onExpire called %d times for a renewed validity", expired)
	}
	v.Expire()
}

// TestInstancesDifferWithinOneProcess: two default instance names drawn
// by one process differ (their random suffix), and the host part is cut
// to the bound.
func TestInstancesDifferWithinOneProcess(t *testing.T) {
	a, b := Instance(3), Instance(3)
	if a == b {
		t.Fatalf("Instance gave %q twice", a)
	}
	if host, _ := os.Hostname(); len(host) > 3 && a[:4] != host[:3]+"-" {
		t.Fatalf("Instance(3) = %q, want the host cut to 3 bytes", a)
	}
	if h := RandomHex(8); len(h) != 16 {
		t.Fatalf("RandomHex(8) = %q, want 16 digits", h)
	}
}
