package keygen

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// ShardingSphereEpoch is SNOWFLAKE's default epoch, 2016-11-01 00:00 UTC.
// ShardingSphere computes the same date in the JVM's local time zone: a Go
// service sharing keys with a Java fleet running in +08:00 sets
// epoch=2016-11-01T00:00:00+08:00 (CosId's 1477929600000).
var ShardingSphereEpoch = time.Date(2016, 11, 1, 0, 0, 0, 0, time.UTC)

// BaiduEpoch is UID's default epoch, 2016-05-20 00:00 UTC, Baidu
// UidGenerator's epochStr.
var BaiduEpoch = time.Date(2016, 5, 20, 0, 0, 0, 0, time.UTC)

// snowflake is the lock-free engine behind SNOWFLAKE and UID. Its state is
// the last ID it issued: the next one is derived from it with one CAS, and
// the clock is read once per attempt.
type snowflake struct {
	state *snowflakeState // shared by generators of the same space (SequenceScope)

	typ       string
	layout    Layout
	clock     Clock
	now       func() int64 // Unix nanoseconds
	sys       *SystemClock // the clock when it is one, read inline on the hot path
	sysTL     *sysTimeline // sys's timeline
	logger    *slog.Logger
	epochNs   int64
	unitNs    int64
	timeShift uint
	fixed     int64 // datacenter and worker fields, shifted into place
	seqMask   int64
	maxTick   int64
	flagShift uint
	flagMask  int64        // clock-back flag, 0 when the layout has none
	tolNs     int64        // backwards steps shorter than this wait; from it on, error or flag bump (ShardingSphere's `<`)
	vibMod    int64        // max-vibration-offset + 1; 1 starts every tick at sequence 0
	lease     Lease        // the worker id's lease; nil for a fixed worker-id
	closed    *atomic.Bool // the lease's closed flag (closingLease), read after each reservation; nil without
	floorTick int64        // with a lease: the tick its worker id was last used in, never issued again
	closeOnce sync.Once
	closeErr  error
}

// snowflakeState is the last ID issued, on its own cache line, and the
// contention mode. Uncontended, an ID costs one clock read and one CAS;
// the first ID of a tick also takes tickMu, once per tick.
// When goroutines collide on the CAS, each failure costs a cache-line
// transfer and often a retry; then callers queue on mu instead, which lets
// one goroutine issue a run of IDs while the others wait (as a plain mutex
// does), and every contentionProbe IDs the fast path is tried again.
type snowflakeState struct {
	_    [64]byte
	last atomic.Int64
	// mu shares last's line: in contention mode its holder CASes a line it
	// already owns, so a hand-off moves one line, as in a plain mutex.
	mu        sync.Mutex
	slowIDs   int // IDs issued under mu since the last probe
	_         [40]byte
	contended atomic.Bool // read on every call, written rarely
	_         [63]byte
	// rare events
	clockWaits, clockBack, seqWaits, leaseRefusals atomic.Int64
	// peakTick is the latest tick issued before a clock-back flag bump
	// lowered last's tick: with last's, the latest tick ever issued.
	peakTick atomic.Int64
	// Every change of last to another tick is made under tickMu (startTick),
	// with what moves once per tick, off the hot path: vibOffset is
	// ShardingSphere's sequenceOffset, the first sequence of the last tick
	// started by vibration (-1 before the first); issuedBefore counts the IDs
	// of the ticks before last's, and tickStart is the first sequence of
	// last's tick (so Issued needs no counter on the hot path).
	tickMu       sync.Mutex
	vibOffset    int64
	issuedBefore int64
	tickStart    int64
}

// initSlot makes a new state one that has issued nothing: its last ID is
// in the tick before the epoch, so a first key at the epoch's tick has
// sequence 0 (the zero value would claim that tick's sequence 0).
func (s *snowflakeState) initSlot(k slotKey) {
	s.last.Store(-1 << k.layout.timeShift())
	s.vibOffset = -1
	s.tickStart = 1 // the sentinel's sequence 0 counts no ID
}

// issued is the number of IDs the state issued. Same-tick IDs move only
// last's sequence; tickMu holds every other change still.
func (s *snowflakeState) issued(seqMask int64) int64 {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	return s.issuedBefore + s.last.Load()&seqMask - s.tickStart + 1
}

// issuedUntil is the latest instant the state issued a key for, clock-back
// flag or not.
func (s *snowflakeState) issuedUntil(l Layout) time.Time {
	t := max(s.last.Load()>>l.timeShift(), s.peakTick.Load())
	at, _ := l.timeAt(t)
	return at
}

const contentionProbe = 4096

func (s *snowflakeState) lastUsed(l Layout) (time.Time, bool) {
	last := s.last.Load()
	if last>>l.clockBackShift()&mask(l.ClockBackBits) != 0 {
		return time.Time{}, false
	}
	return l.timeAt(last >> l.timeShift())
}

type snowflakeConfig struct {
	typ        string
	layout     Layout
	datacenter int64
	worker     int64
	tolerance  time.Duration
	vibration  int64
	lease      Lease
}

func newSnowflake(c snowflakeConfig, o Options) (*snowflake, error) {
	if err := c.layout.validate(o.Clock.Now()); err != nil {
		return nil, err
	}
	l := c.layout
	g := &snowflake{
		typ:       c.typ,
		layout:    l,
		clock:     o.Clock,
		now:       nowNanoFunc(o.Clock),
		logger:    o.Logger,
		epochNs:   l.Epoch.UnixNano(),
		unitNs:    int64(l.Unit),
		timeShift: uint(l.timeShift()),
		fixed:     c.datacenter<<l.datacenterShift() | c.worker<<l.workerShift(),
		seqMask:   mask(l.SequenceBits),
		maxTick:   l.MaxTimestamp(),
		flagShift: uint(l.clockBackShift()),
		flagMask:  mask(l.ClockBackBits),
		tolNs:     int64(c.tolerance),
		vibMod:    c.vibration + 1,
	}
	if g.sys, _ = o.Clock.(*SystemClock); g.sys != nil {
		g.sysTL = g.sys.timeline()
	}
	// SNOWFLAKE and UID share one engine: of the same layout, they share a
	// space, and either may meet a CACHED_UID's.
	scope, key := o.scope(), spaceKey(o.Clock, "snowflake", l, g.fixed)
	var cachedNext int64 // the first second a CACHED_UID of the space left unfilled
	now := o.Clock.Now() // read before the scope is locked: a custom clock is the user's code
	guard := func() (err error) {
		cachedNext, err = cachedGuard(scope, key, now)
		return err
	}
	var (
		release func()
		err     error
	)
	if g.state, release, err = sharedState[snowflakeState](scope, key, o.Clock, g, guard); err != nil {
		if c.lease != nil {
			c.lease.Close()
		}
		return nil, err
	}
	if cachedNext > 0 {
		// Its unit is the second (the key's layout is CACHED_UID's): a clock
		// stepping back into the filled seconds is then a clock step.
		g.raiseFloor(cachedNext - 1)
	}
	if c.lease != nil {
		if err := g.adoptLease(c.lease, c.worker); err != nil {
			release() // g is dropped: it must not hold the state (ErrIDSpaceInUse)
			c.lease.Close()
			return nil, err
		}
	}
	return g, nil
}

// adoptLease makes the generator issue keys only while lease is valid and
// never at or before the time its worker id was last used: a later time
// less than the tolerance ahead is waited for at the first key, one at or
// beyond it refuses the generator (the same rule as a clock step back).
func (g *snowflake) adoptLease(lease Lease, worker int64) error {
	g.lease = lease
	if cl, ok := lease.(*closingLease); ok {
		g.closed = &cl.closed
	}
	g.floorTick = -1
	if last := lease.LastUsed(); !last.IsZero() && !last.Before(g.layout.Epoch) {
		lastT := g.tick(last.UnixNano())
		g.floorTick = lastT
		now := g.now()
		if g.tick(now) < lastT && g.stepBack(lastT, now) >= g.tolNs {
			return &ClockBackwardsError{Last: last, Now: time.Unix(0, now), Tolerance: time.Duration(g.tolNs),
				Reason: fmt.Sprintf("worker id %d was last used later than this clock reads", worker)}
		}
		g.raiseFloor(lastT)
	}
	lease.Track(func() time.Time { return g.state.issuedUntil(g.layout) })
	return nil
}

// raiseFloor makes the state's last ID at least the last of tick, so that
// the state issues nothing at or before it.
func (g *snowflake) raiseFloor(tick int64) {
	for {
		// The floor keeps the state's clock-back flag: with flag 0 again,
		// a bumped state would repeat the keys it issued before the bump.
		old := g.state.last.Load()
		floor := tick<<g.timeShift | old&(g.flagMask<<g.flagShift) | g.fixed | g.seqMask
		if old >= floor {
			return
		}
		// The floor's tick counts as used up: its sequence issues nothing.
		if _, _, ok := g.startTick(old, floor, g.seqMask+1, 1, false); ok {
			return
		}
	}
}

// Close releases the generator's worker-id lease, if it has one; the
// generator issues no key afterwards.
func (g *snowflake) Close() error {
	if g.lease == nil {
		return nil
	}
	g.closeOnce.Do(func() { g.closeErr = g.lease.Close() })
	return g.closeErr
}

// Stats reports what the generator (and those sharing its state) did.
func (g *snowflake) Stats() Stats {
	st := g.state
	s := Stats{
		Issued:         uint64(st.issued(g.seqMask)),
		ClockWaits:     uint64(st.clockWaits.Load()),
		ClockBackSteps: uint64(st.clockBack.Load()),
		SequenceWaits:  uint64(st.seqWaits.Load()),
		LeaseRefusals:  uint64(st.leaseRefusals.Load()),
	}
	leaseStats(g.lease, &s)
	return s
}

// newSnowflakeGenerator builds SNOWFLAKE from props.
func newSnowflakeGenerator(props Props, o Options) (Generator, error) {
	return newLeasedSnowflake("SNOWFLAKE", props, o, parseSnowflake)
}

// newUIDGenerator builds UID, Baidu UidGenerator's DefaultUidGenerator.
// Its tolerance is 0: Baidu refuses any backwards clock step.
func newUIDGenerator(props Props, o Options) (Generator, error) {
	return newLeasedSnowflake("UID", props, o, parseUID)
}

// newLeasedSnowflake builds a generator of typ whose props parse reads,
// its worker id from the worker-id prop or a WorkerSource.
func newLeasedSnowflake(typ string, props Props, o Options, parse func(Props, bool) (snowflakeConfig, error)) (Generator, error) {
	props, src, err := workerSource(typ, props, o)
	if err != nil {
		return nil, err
	}
	c, err := parse(props, src == nil)
	if err != nil {
		return nil, err
	}
	if src != nil {
		if c.lease, err = acquireLease(src, c.typ, mask(min(c.layout.WorkerBits, 62)), o); err != nil {
			return nil, err
		}
		c.worker = c.lease.Worker()
	}
	g, err := newSnowflake(c, o)
	if err != nil {
		return nil, err
	}
	if g.lease == nil {
		return g, nil
	}
	h := &leasedSnowflake{g}
	runtime.AddCleanup(h, func(g *snowflake) { go g.Close() }, g)
	return h, nil
}

// leasedSnowflake is a SNOWFLAKE or UID with a worker-id lease, as its user
// holds it. The lease holds the generator (Track), and a renewing lease
// lives until closed: dropped unclosed, the handle is collected and
// closes the lease, instead of the lease renewing the worker id for a
// generator nobody can reach. The key methods keep the handle alive to
// their end, so the lease is not closed under a key being issued.
type leasedSnowflake struct{ *snowflake }

func (h *leasedSnowflake) NextID(ctx context.Context) (int64, error) {
	defer runtime.KeepAlive(h)
	return h.snowflake.NextID(ctx)
}

func (h *leasedSnowflake) NextIDs(ctx context.Context, dst []int64) error {
	defer runtime.KeepAlive(h)
	return h.snowflake.NextIDs(ctx, dst)
}

func (h *leasedSnowflake) NextKey(ctx context.Context) (any, error) { return h.NextID(ctx) }

// parseSnowflake reads SNOWFLAKE's props; needWorker is false when only
// the layout is wanted.
func parseSnowflake(props Props, needWorker bool) (snowflakeConfig, error) {
	const typ = "SNOWFLAKE"
	r := readProps(typ, props, "worker-id", "max-tolerate-time-difference-milliseconds", "max-vibration-offset",
		"epoch", "time-bits", "worker-bits", "sequence-bits", "time-unit", "clock-back-bits", "datacenter-bits", "datacenter-id")
	l := Layout{
		Epoch:        r.epoch("epoch", ShardingSphereEpoch),
		Unit:         r.unit("time-unit", time.Millisecond),
		TimeBits:     int(r.int("time-bits", 1, 62, 41, false)),
		SequenceBits: int(r.int("sequence-bits", 1, 62, 12, false)),
	}
	machine := int(r.int("worker-bits", 0, 62, 10, false))
	l.ClockBackBits = int(r.int("clock-back-bits", 0, 3, 0, false))
	l.DatacenterBits = int(r.int("datacenter-bits", 0, 62, 0, false))
	l.WorkerBits = machine - l.ClockBackBits - l.DatacenterBits
	if l.WorkerBits < 0 {
		r.fail("worker-bits", "smaller than clock-back-bits + datacenter-bits, which are taken from it",
			fmt.Sprintf("at least %d", l.ClockBackBits+l.DatacenterBits))
		l.WorkerBits = 0
	}
	c := snowflakeConfig{typ: typ, layout: l}
	c.worker = r.int("worker-id", 0, mask(min(l.WorkerBits, 62)), 0, needWorker)
	c.datacenter = r.int("datacenter-id", 0, mask(min(l.DatacenterBits, 62)), 0, needWorker && l.DatacenterBits > 0)
	c.tolerance = time.Duration(r.int("max-tolerate-time-difference-milliseconds", 0, 3_600_000, 10, false)) * time.Millisecond
	c.vibration = r.int("max-vibration-offset", 0, mask(min(l.SequenceBits, 62)), 1, false)
	return c, r.err()
}

// parseUID reads UID's props, in their kebab or Baidu camelCase form.
func parseUID(props Props, needWorker bool) (snowflakeConfig, error) {
	const typ = "UID"
	r := readProps(typ, props, "worker-id", "time-bits", "worker-bits", "sequence-bits", "epoch")
	l := Layout{
		Epoch:        r.epoch("epoch", BaiduEpoch),
		Unit:         time.Second,
		TimeBits:     int(r.int("time-bits", 1, 62, 31, false)),
		WorkerBits:   int(r.int("worker-bits", 0, 62, 19, false)),
		SequenceBits: int(r.int("sequence-bits", 1, 62, 13, false)),
	}
	c := snowflakeConfig{typ: typ, layout: l}
	c.worker = r.int("worker-id", 0, mask(min(l.WorkerBits, 62)), 0, needWorker)
	return c, r.err()
}

func (g *snowflake) Type() string { return g.typ }

// Layout returns the generator's bit layout.
func (g *snowflake) Layout() Layout { return g.layout }

// Decompose splits id into its fields.
func (g *snowflake) Decompose(id int64) (Parts, error) { return g.layout.Decompose(id) }

// Compose builds an ID from its fields.
func (g *snowflake) Compose(p Parts) (int64, error) { return g.layout.Compose(p) }

func (g *snowflake) NextKey(ctx context.Context) (any, error) { return g.NextID(ctx) }

func (g *snowflake) NextID(ctx context.Context) (int64, error) {
	// The common case, inlined: uncontended, no lease, the clock in the last
	// ID's tick with sequence left. now >= epochNs keeps the fresh state's
	// tick -1 out. Anything else, or a lost CAS, takes reserve.
	st := g.state
	if g.lease == nil && !st.contended.Load() {
		old := st.last.Load()
		var now int64
		if c := g.sysTL; c != nil {
			// SystemClock.unixNano, written out: the compiler will not
			// inline it, and the call costs a few percent of an ID.
			el := int64(time.Since(c.base))
			if now = c.baseWall + el + c.offset.Load(); el >= c.nextCheck.Load() {
				now = g.sys.checkedNano(el)
			}
		} else {
			now = g.now()
		}
		if g.tick(now) == old>>g.timeShift && old&g.seqMask != g.seqMask && now >= g.epochNs &&
			st.last.CompareAndSwap(old, old+1) {
			return old + 1, nil
		}
		return g.nextIDFrom(ctx, old, now)
	}
	id, _, err := g.reserve(ctx, 1)
	return id, err
}

// nextIDFrom is NextID past its common case, from the state and clock
// reading it took (so a call reads the clock as often as before); apart,
// it keeps NextID's frame small.
func (g *snowflake) nextIDFrom(ctx context.Context, old, now int64) (int64, error) {
	if id, _, ok, err := g.tryReserveAt(ctx, 1, true, old, now); ok || err != nil {
		return id, err
	}
	g.state.contended.Store(true)
	id, _, err := g.reserve(ctx, 1)
	return id, err
}

func (g *snowflake) NextIDs(ctx context.Context, dst []int64) error {
	return fillReserved(ctx, dst, g.reserve)
}

// fillReserved fills dst with the IDs of ranges reserve claims, each of
// at most the n asked.
func fillReserved(ctx context.Context, dst []int64, reserve func(ctx context.Context, n int64) (first, last int64, err error)) error {
	for i := 0; i < len(dst); {
		first, last, err := reserve(ctx, int64(len(dst)-i))
		if err != nil {
			return err
		}
		// Counted, not id <= last: the last ID of a 63-bit layout is
		// MaxInt64, and id++ past it wraps negative.
		for k := range last - first + 1 {
			dst[i] = first + k
			i++
		}
	}
	return nil
}

// tick converts Unix nanoseconds to the time field, with constant divisors
// for the common units.
func (g *snowflake) tick(now int64) int64 {
	d := now - g.epochNs
	switch g.unitNs {
	case int64(time.Millisecond):
		return d / int64(time.Millisecond)
	case int64(time.Second):
		return d / int64(time.Second)
	}
	return d / g.unitNs
}

// stepBack is how far the clock reading now lies behind the start of tick
// last, rounded up to whole milliseconds: with the ms unit, the difference
// of milliseconds ShardingSphere compares with its tolerance; with a
// coarser unit, the time the clock must make up, not a unit per tick (1 ms
// back across a second's boundary is 1 ms, not 1 s).
func (g *snowflake) stepBack(last, now int64) int64 {
	const ms = int64(time.Millisecond)
	return (g.epochNs + last*g.unitNs - now + ms - 1) / ms * ms
}

// reserve claims up to n consecutive IDs within one tick and returns the
// first and last. It never returns an ID at or below one it returned
// before, except after a clock-back flag bump, which changes the flag field.
func (g *snowflake) reserve(ctx context.Context, n int64) (first, last int64, err error) {
	st := g.state
	if !st.contended.Load() {
		var ok bool
		if first, last, ok, err = g.tryReserve(ctx, n, true); ok || err != nil {
			return first, last, err
		}
		st.contended.Store(true)
	}
	st.mu.Lock()
	first, last, _, err = g.tryReserve(ctx, n, false)
	if st.slowIDs += int(last - first + 1); st.slowIDs >= contentionProbe {
		st.slowIDs = 0
		st.contended.Store(false)
	}
	st.mu.Unlock()
	return first, last, err
}

// tryReserve claims IDs with CAS. With once, it gives up (ok false) on the
// first failed CAS; otherwise it retries until it succeeds.
func (g *snowflake) tryReserve(ctx context.Context, n int64, once bool) (first, last int64, ok bool, err error) {
	// The clock is read after the state: for a clock that does not run
	// backwards, t is then at or past the state's tick.
	old := g.state.last.Load()
	return g.tryReserveAt(ctx, n, once, old, g.now())
}

// tryReserveAt is tryReserve from the state old and the clock reading now,
// taken in that order; after a wait it reads both again.
func (g *snowflake) tryReserveAt(ctx context.Context, n int64, once bool, old, now int64) (first, last int64, ok bool, err error) {
	// full is the state this call found with its tick's sequence used up:
	// the tick started from it begins at sequence 0, unvibrated, as
	// ShardingSphere's does after waiting for the next millisecond. IDs are
	// never negative, so -1 is no state.
	full := int64(-1)
	for ; ; now = g.now() {
		if g.lease != nil && now >= g.lease.ValidUntil() {
			return 0, 0, false, g.leaseLost()
		}
		t := g.tick(now)
		if now < g.epochNs || t > g.maxTick {
			return 0, 0, false, &TimeOverflowError{Now: time.Unix(0, now), Epoch: g.layout.Epoch, Max: g.layout.RunsOut().Add(-g.layout.Unit)}
		}
		for retry := false; ; retry = true {
			oldT := old >> g.timeShift
			if retry && t < oldT {
				// Another goroutine won the CAS with a later clock reading:
				// its tick has begun, so join it instead of reading the clock
				// again (under contention that read is most of the cost).
				t = oldT
			}
			newTick, vibrate := true, false
			switch {
			case t > oldT:
				first = t<<g.timeShift | old&(g.flagMask<<g.flagShift) | g.fixed
				vibrate = g.vibMod > 1 && old != full
			case t == oldT:
				if old&g.seqMask == g.seqMask {
					g.state.seqWaits.Add(1)
					if err := g.wait(ctx, time.Duration(g.epochNs+(oldT+1)*g.unitNs-now)); err != nil {
						return 0, 0, false, err
					}
					full = old
					old = g.state.last.Load()
					goto readClock
				}
				first, newTick = old+1, false
			default:
				// A step equal to the tolerance is refused, as ShardingSphere's
				// SnowflakeKeyGenerateAlgorithm checks timeDifference < tolerance.
				if step := g.stepBack(oldT, now); step < g.tolNs {
					g.state.clockWaits.Add(1)
					g.logger.Warn("keygen: clock moved backwards; waiting", "type", g.typ, "step", time.Duration(step))
					if err := g.wait(ctx, time.Duration(g.epochNs+oldT*g.unitNs-now)); err != nil {
						return 0, 0, false, err
					}
					old = g.state.last.Load()
					goto readClock
				}
				g.state.clockBack.Add(1)
				flag := (old >> g.flagShift & g.flagMask) + 1
				if g.lease != nil && t <= g.floorTick {
					// A previous holder of the worker id issued keys at this
					// tick, with flags this generator cannot know.
					return 0, 0, false, &ClockBackwardsError{Last: time.Unix(0, g.epochNs+oldT*g.unitNs), Now: time.Unix(0, now),
						Tolerance: time.Duration(g.tolNs), Reason: "back to a time the worker id's previous holder used"}
				}
				if flag > g.flagMask {
					e := &ClockBackwardsError{Last: time.Unix(0, g.epochNs+oldT*g.unitNs), Now: time.Unix(0, now), Tolerance: time.Duration(g.tolNs)}
					if g.flagMask > 0 {
						e.Reason = "clock-back flag exhausted"
					}
					return 0, 0, false, e
				}
				g.logger.Warn("keygen: clock moved backwards beyond tolerance; bumping clock-back flag", "type", g.typ,
					"step", time.Duration(g.stepBack(oldT, now)), "flag", flag)
				first = t<<g.timeShift | flag<<g.flagShift | g.fixed
				for peak := g.state.peakTick.Load(); peak < oldT && !g.state.peakTick.CompareAndSwap(peak, oldT); peak = g.state.peakTick.Load() {
				}
			}
			if newTick {
				first, last, ok = g.startTick(old, first, first&g.seqMask, n, vibrate)
			} else {
				last = first + min(n-1, g.seqMask-first&g.seqMask)
				ok = g.state.last.CompareAndSwap(old, last)
			}
			if ok {
				if g.closed != nil && g.closed.Load() { // see leaseLost
					return 0, 0, false, g.leaseLost()
				}
				return first, last, true, nil
			}
			if once {
				return 0, 0, false, nil
			}
			old = g.state.last.Load()
		}
	readClock:
	}
}

// leaseLost counts a key refused for a lease not valid at the clock
// reading, and is its error. The lease is checked before a reservation,
// and whether it was closed after it: a Close ordered before the
// reservation is seen by the second check, and one ordered after it reads
// the reservation in the state it records as the worker id's last use
// (Track), so no key escapes that record. (A lease that expires in between
// needs no second look: the key's time is the reading it was valid at.)
// The checks are inline: NextID's cost is in them.
func (g *snowflake) leaseLost() error {
	g.state.leaseRefusals.Add(1)
	return fmt.Errorf("%w: %s worker %d", ErrLeaseLost, g.typ, g.fixed>>g.layout.workerShift()&mask(g.layout.WorkerBits))
}

// startTick moves the state from old to a new tick (or, for a lease's
// floor, to the end of old's): it claims up to n IDs from base, whose
// sequence is start unless vibrate gives it the next vibration offset
// (ShardingSphere's sequenceOffset, moved on by one at each new tick and
// wrapping after max-vibration-offset, so that at low traffic id % 2^k
// spreads over shards). The CAS from old and the per-tick accounting
// happen together under tickMu; ok is false when the CAS fails.
func (g *snowflake) startTick(old, base, start, n int64, vibrate bool) (first, last int64, ok bool) {
	st := g.state
	st.tickMu.Lock()
	defer st.tickMu.Unlock()
	if vibrate {
		start = st.vibOffset + 1
		if st.vibOffset >= g.vibMod-1 {
			start = 0
		}
		base |= start
	}
	first, last = base, base+max(0, min(n-1, g.seqMask-start))
	if !st.last.CompareAndSwap(old, last) {
		return 0, 0, false
	}
	st.issuedBefore += old&g.seqMask - st.tickStart + 1
	st.tickStart = start
	if vibrate {
		st.vibOffset = start
	}
	return first, last, true
}

// wait sleeps through the clock, unless ctx is done.
func (g *snowflake) wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.clock.Sleep(d)
	return nil
}
