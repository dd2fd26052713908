package leaseclock

import (
	"math"
	"sync/atomic"
	"time"
)

// Invalid is Until's value when no key may be issued.
const Invalid = math.MinInt64

// Validity is a lease's ValidUntil (Unix nanoseconds on the generator's
// clock) that also ends on Go's monotonic clock. A generator's clock
// stepped back would otherwise stretch the validity by the step, past the
// server's expiry, while the server cannot be reached.
//
// Set and Expire are called by one goroutine at a time (the claim, then
// the renewal goroutine, then Close once it has ended); Until from any.
// Set sets the validity whatever it was: the caller, being the only one
// to mark its lease lost, never sets a lost lease's validity again.
type Validity struct {
	until    atomic.Int64
	base     time.Time    // a monotonic reading, from Start
	realEnd  atomic.Int64 // the end as time since base
	expiry   *time.Timer  // fires at realEnd
	onExpire func(until int64)
}

// Start makes v invalid and sets base, a monotonic reading taken before
// the first claim was sent, and onExpire, which (if not nil) is called
// with the validity's end on the generator's clock each time the timer
// ended it. Call it once, before any other method.
func (v *Validity) Start(base time.Time, onExpire func(until int64)) {
	v.base = base
	v.onExpire = onExpire
	v.until.Store(Invalid)
}

// Until is the validity's end on the generator's clock, Invalid when it
// ended.
func (v *Validity) Until() int64 { return v.until.Load() }

// Set makes the lease valid until until on the generator's clock, and for
// d past sent (a monotonic reading taken before the claim or renewal was
// sent) on the monotonic clock. It is the latest request's end, not the
// larger of it and the previous one: a clock stepped back gives a lower
// until, and the server's expiry ran from this request.
func (v *Validity) Set(until int64, sent time.Time, d time.Duration) {
	realEnd := sent.Sub(v.base) + d
	v.realEnd.Store(int64(realEnd))
	v.until.Store(until)
	if left := realEnd - time.Since(v.base); v.expiry == nil {
		v.expiry = time.AfterFunc(left, v.expire)
	} else {
		v.expiry.Reset(left)
	}
}

// Expire ends the validity now (lost or closed) and stops its timer.
func (v *Validity) Expire() {
	v.until.Store(Invalid)
	if v.expiry != nil {
		v.expiry.Stop()
	}
}

// expire ends the validity once its end has passed on the monotonic clock,
// whatever the generator's clock reads; a later Set sets it again.
func (v *Validity) expire() {
	for {
		cur := v.until.Load()
		if cur == Invalid || time.Since(v.base) < time.Duration(v.realEnd.Load()) {
			return
		}
		if v.until.CompareAndSwap(cur, Invalid) {
			if v.onExpire != nil {
				v.onExpire(cur)
			}
			return
		}
	}
}
