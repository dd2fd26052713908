package leaseclock

import (
	"sync/atomic"
	"time"
)

// Tracker holds the function a lease reads the generator's latest issued
// time from (keygen.Lease.Track). The zero value tracks nothing.
type Tracker struct {
	last atomic.Pointer[func() time.Time]
}

// Track sets the function Ms reads; nil forgets it. It may be called from
// any goroutine; last must be safe to call concurrently with key
// generation.
func (t *Tracker) Track(last func() time.Time) {
	if last == nil {
		t.last.Store(nil)
		return
	}
	t.last.Store(&last)
}

// Ms is the tracked last-issued time in Unix milliseconds, rounded up so
// that a key issued within a millisecond is covered; 0 when unknown (no
// function, the zero time, or a time not after the Unix epoch).
func (t *Tracker) Ms() int64 {
	f := t.last.Load()
	if f == nil {
		return 0
	}
	at := (*f)()
	if at.IsZero() {
		return 0
	}
	ns := at.UnixNano()
	if ns <= 0 {
		return 0
	}
	ms := ns / int64(time.Millisecond)
	if ns%int64(time.Millisecond) != 0 {
		ms++
	}
	return ms
}
