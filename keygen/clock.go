package keygen

import (
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"
)

// Clock is the time source of a generator. Every wait a generator makes
// (a tolerated backwards step, an exhausted sequence) goes through Sleep,
// so a fake clock in tests never blocks.
type Clock interface {
	Now() time.Time
	Sleep(d time.Duration)
}

// unixNanoClock is implemented by clocks that can report Unix nanoseconds
// without building a time.Time; generators use it on the hot path.
type unixNanoClock interface {
	unixNano() int64
}

// wallCheckInterval is how often the system clock compares itself with the
// wall clock to adopt forward corrections.
const wallCheckInterval = 250 * time.Millisecond

// SystemClock is the default Clock. It never runs backwards while the
// process lives: readings are anchored on Go's monotonic clock, so a wall
// clock stepped back (NTP, an operator) is invisible. Forward corrections of
// the wall clock are adopted: about four times a second it compares itself
// with the wall clock and, when the wall clock is ahead, jumps forward to it.
// Its Sleep is precise to a few microseconds (it spins for the last
// millisecond), because a generator waiting for the next millisecond cannot
// afford the runtime timer's ~1 ms granularity.
//
// The zero value is not usable; create one with NewSystemClock.
type SystemClock struct {
	base      time.Time // carries the monotonic reading taken at creation
	baseWall  int64     // base in Unix nanoseconds
	offset    atomic.Int64
	nextCheck atomic.Int64 // elapsed nanoseconds at which to compare with the wall clock
	behind    atomic.Bool  // the wall clock was behind at the last check (logged once)
	logger    *slog.Logger
	wall      func() time.Time // time.Now; replaced in tests
}

// NewSystemClock returns a SystemClock anchored now. Clock steps are logged
// to logger at warning level; nil means slog.Default() at the time of the
// step.
func NewSystemClock(logger *slog.Logger) *SystemClock {
	now := time.Now()
	c := &SystemClock{base: now, baseWall: now.UnixNano(), logger: logger, wall: time.Now}
	c.nextCheck.Store(int64(wallCheckInterval))
	return c
}

// Now returns the current time.
func (c *SystemClock) Now() time.Time { return time.Unix(0, c.unixNano()) }

func (c *SystemClock) unixNano() int64 {
	el := int64(time.Since(c.base))
	if el >= c.nextCheck.Load() {
		return c.checkedNano(el)
	}
	return c.baseWall + el + c.offset.Load()
}

// checkedNano is unixNano's rare path, every wallCheckInterval: compare
// with the wall clock first.
func (c *SystemClock) checkedNano(el int64) int64 {
	c.checkWall(el)
	return c.baseWall + el + c.offset.Load()
}

// checkWall adopts a wall clock that moved ahead of the monotonic reading.
func (c *SystemClock) checkWall(el int64) {
	next := c.nextCheck.Load()
	if el < next || !c.nextCheck.CompareAndSwap(next, el+int64(wallCheckInterval)) {
		return // another goroutine is checking
	}
	wall := c.wall()
	mine := c.baseWall + int64(time.Since(c.base)) + c.offset.Load()
	diff := wall.UnixNano() - mine
	switch {
	case diff > 0:
		c.offset.Add(diff)
		c.behind.Store(false)
		if diff > int64(time.Millisecond) {
			c.log().Warn("keygen: wall clock stepped forward; adopted", "step", time.Duration(diff))
		}
	case diff < -int64(time.Millisecond):
		if !c.behind.Swap(true) {
			c.log().Warn("keygen: wall clock is behind the monotonic clock; keeping monotonic time", "behind", time.Duration(-diff))
		}
	default:
		c.behind.Store(false)
	}
}

func (c *SystemClock) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}

// Sleep waits for d. Waits shorter than two milliseconds spin (yielding
// the processor) on the monotonic clock; longer ones sleep and spin the rest.
func (c *SystemClock) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	deadline := time.Since(c.base) + d
	if d > 2*time.Millisecond {
		time.Sleep(d - 2*time.Millisecond)
	}
	for time.Since(c.base) < deadline {
		runtime.Gosched()
	}
}

// nowNanoFunc returns the fastest way to read c in Unix nanoseconds.
func nowNanoFunc(c Clock) func() int64 {
	if f, ok := c.(unixNanoClock); ok {
		return f.unixNano
	}
	return func() int64 { return c.Now().UnixNano() }
}
