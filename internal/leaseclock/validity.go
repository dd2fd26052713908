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
	// state is replaced, never changed, by each Set and Expire: a new
	// pointer is the generation the expiry timer compares, so a Set that
	// stores the same until as before is never undone by a timer that
	// read the state before it.
	state    atomic.Pointer[validityState]
	base     time.Time   // a monotonic reading, from Start
	expiry   *time.Timer // fires at the state's realEnd
	onExpire func(until int64)
	// beforeSwap, nil but in tests, runs in expire between reading the
	// state and swapping it.
	beforeSwap func()
}

// validityState is one Set's validity: until on the generator's clock,
// realEnd as time since base on the monotonic clock.
type validityState struct {
	until   int64
	realEnd time.Duration
}

// invalidState is the state of a validity that ended.
var invalidState = &validityState{until: Invalid}

// Start makes v invalid and sets base, a monotonic reading taken before
// the first claim was sent, and onExpire, which (if not nil) is called
// with the validity's end on the generator's clock each time the timer
// ended it. Call it once, before any other method.
func (v *Validity) Start(base time.Time, onExpire func(until int64)) {
	v.base = base
	v.onExpire = onExpire
	v.state.Store(invalidState)
}

// Until is the validity's end on the generator's clock, Invalid when it
// ended.
func (v *Validity) Until() int64 {
	if st := v.state.Load(); st != nil {
		return st.until
	}
	return Invalid
}

// Set makes the lease valid until until on the generator's clock, and for
// d past sent (a monotonic reading taken before the claim or renewal was
// sent) on the monotonic clock. It is the latest request's end, not the
// larger of it and the previous one: a clock stepped back gives a lower
// until, and the server's expiry ran from this request. A reply arriving
// after that end (a late one) leaves the validity ended: storing until
// would let a generator whose clock stepped back issue until the timer
// ran.
func (v *Validity) Set(until int64, sent time.Time, d time.Duration) {
	realEnd := sent.Sub(v.base) + d
	left := realEnd - time.Since(v.base)
	if left <= 0 {
		v.state.Store(invalidState)
		if v.expiry != nil {
			v.expiry.Stop()
		}
		return
	}
	v.state.Store(&validityState{until: until, realEnd: realEnd})
	if v.expiry == nil {
		v.expiry = time.AfterFunc(left, v.expire)
	} else {
		v.expiry.Reset(left)
	}
}

// Expire ends the validity now (lost or closed) and stops its timer.
func (v *Validity) Expire() {
	v.state.Store(invalidState)
	if v.expiry != nil {
		v.expiry.Stop()
	}
}

// expire ends the validity once its end has passed on the monotonic clock,
// whatever the generator's clock reads; a later Set sets it again. The
// swap succeeds only if no Set replaced the state it read.
func (v *Validity) expire() {
	st := v.state.Load()
	if st == nil || st.until == Invalid || time.Since(v.base) < st.realEnd {
		return
	}
	if v.beforeSwap != nil {
		v.beforeSwap()
	}
	if v.state.CompareAndSwap(st, invalidState) && v.onExpire != nil {
		v.onExpire(st.until)
	}
}
