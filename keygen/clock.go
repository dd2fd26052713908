package keygen

import (
	"log/slog"
	"runtime"
	"sync"
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
// Every SystemClock of a process reads the same time: one timeline,
// anchored when the first is made, so generators on two of them share
// their ID space's state (SequenceScope) without one seeing the other's
// keys as a clock step, even when the wall clock was stepped back between
// the two NewSystemClock calls. A wall-clock step is logged once, to the
// logger of the clock whose reading noticed it.
//
// The zero value, and a nil *SystemClock, behave as NewSystemClock(nil).
type SystemClock struct {
	tl     *sysTimeline
	logger *slog.Logger
}

// sysTimeline is the time SystemClocks read.
type sysTimeline struct {
	base      time.Time // carries the monotonic reading taken at creation
	baseWall  int64     // base in Unix nanoseconds
	offset    atomic.Int64
	nextCheck atomic.Int64 // elapsed nanoseconds at which to compare with the wall clock
	behind    atomic.Bool  // the wall clock was behind at the last check (logged once)
	wall      func() time.Time
}

// processTimeline is the timeline of every SystemClock NewSystemClock makes.
var processTimeline = sync.OnceValue(func() *sysTimeline { return newSysTimeline(time.Now) })

// newSysTimeline returns a timeline anchored now, comparing itself with
// wall (time.Now but in tests).
func newSysTimeline(wall func() time.Time) *sysTimeline {
	now := time.Now()
	tl := &sysTimeline{base: now, baseWall: now.UnixNano(), wall: wall}
	tl.nextCheck.Store(int64(wallCheckInterval))
	return tl
}

// NewSystemClock returns a SystemClock on the process's timeline. Clock
// steps it notices are logged to logger at warning level; nil means
// slog.Default() at the time of the step.
func NewSystemClock(logger *slog.Logger) *SystemClock {
	return &SystemClock{tl: processTimeline(), logger: logger}
}

// Now returns the current time.
func (c *SystemClock) Now() time.Time { return time.Unix(0, c.unixNano()) }

// timeline is the clock's timeline: the process's unless a test gave it
// its own.
func (c *SystemClock) timeline() *sysTimeline {
	if c == nil || c.tl == nil {
		return processTimeline()
	}
	return c.tl
}

func (c *SystemClock) unixNano() int64 {
	tl := c.timeline()
	el := int64(time.Since(tl.base))
	if el >= tl.nextCheck.Load() {
		return c.checkedNano(el)
	}
	return tl.baseWall + el + tl.offset.Load()
}

// checkedNano is unixNano's rare path, every wallCheckInterval: compare
// with the wall clock first.
func (c *SystemClock) checkedNano(el int64) int64 {
	c.checkWall(el)
	tl := c.timeline()
	return tl.baseWall + el + tl.offset.Load()
}

// checkWall adopts a wall clock that moved ahead of the monotonic reading.
func (c *SystemClock) checkWall(el int64) {
	tl := c.timeline()
	next := tl.nextCheck.Load()
	if el < next || !tl.nextCheck.CompareAndSwap(next, el+int64(wallCheckInterval)) {
		return // another goroutine is checking
	}
	wall := tl.wall()
	mine := tl.baseWall + int64(time.Since(tl.base)) + tl.offset.Load()
	diff := wall.UnixNano() - mine
	switch {
	case diff > 0:
		tl.offset.Add(diff)
		tl.behind.Store(false)
		if diff > int64(time.Millisecond) {
			c.log().Warn("keygen: wall clock stepped forward; adopted", "step", time.Duration(diff))
		}
	case diff < -int64(time.Millisecond):
		if !tl.behind.Swap(true) {
			c.log().Warn("keygen: wall clock is behind the monotonic clock; keeping monotonic time", "behind", time.Duration(-diff))
		}
	default:
		tl.behind.Store(false)
	}
}

func (c *SystemClock) log() *slog.Logger {
	if c != nil && c.logger != nil {
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
	base := c.timeline().base
	deadline := time.Since(base) + d
	if d > 2*time.Millisecond {
		time.Sleep(d - 2*time.Millisecond)
	}
	for time.Since(base) < deadline {
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
