package etcdlease

import (
	"log/slog"
	"sync"
	"testing"
	"time"
)

// newValidityLease is a lease with only what its validity needs.
func newValidityLease() *lease {
	l := &lease{base: time.Now().Add(-time.Minute), clock: wallClock{}, logger: slog.New(slog.DiscardHandler), src: &Source{}}
	l.valid.Store(expiredValid)
	return l
}

func TestLateRenewalReplyDoesNotRevalidateAnEndedLease(t *testing.T) {
	l := newValidityLease()
	until := time.Now().Add(time.Hour).UnixNano()
	// The keep-alive was sent 2s ago and its validity lasted 1s.
	l.setValid(until, time.Since(l.base)-time.Second)
	if got := l.ValidUntil(); got != expiredValid {
		t.Fatalf("after a reply past the validity's end: ValidUntil = %d, want expired", got)
	}
	l.setValid(until, time.Since(l.base)+time.Hour)
	if got := l.ValidUntil(); got != until {
		t.Fatalf("after a timely reply: ValidUntil = %d, want %d", got, until)
	}
	l.invalidate()
}

// TestExpiryTimerDoesNotCancelARenewalWithTheSameUntil races the expiry
// check against renewals that set the same until with a later end: once
// the renewals stop, the last one's validity must stand.
func TestExpiryTimerDoesNotCancelARenewalWithTheSameUntil(t *testing.T) {
	l := newValidityLease()
	const until = int64(1_700_000_000_000_000_000)
	for range 200 {
		// An end that passed, as the timer sees it firing...
		l.vmu.Lock()
		l.valid.Store(until)
		l.realEnd.Store(int64(time.Since(l.base) - time.Millisecond))
		l.vmu.Unlock()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); l.expire() }()
		// ...while a renewal sets the same until, valid for an hour.
		go func() { defer wg.Done(); l.setValid(until, time.Since(l.base)+time.Hour) }()
		wg.Wait()
		// Whichever ran first, the renewal's hour-long validity must hold.
		if got := l.ValidUntil(); got != until {
			t.Fatalf("a renewal with the same until was undone by the expiry timer: ValidUntil = %d", got)
		}
	}
	l.invalidate()
}
