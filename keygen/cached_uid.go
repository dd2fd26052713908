package keygen

// CACHED_UID is Baidu UidGenerator's CachedUidGenerator: UID's layout
// (seconds, worker id, sequence; Baidu's defaults 31/19/13 bits from
// 2016-05-20), with IDs generated ahead of time into a ring buffer by a
// background filler and handed out by the callers with one CAS on a
// word holding both the cursor and the count of filled slots. (Baidu keeps
// the cursor and the tail on separate cache lines and a flag per slot;
// one word and no flags measured twice as fast under contention here.)
//
// The ring holds (max sequence + 1) << boost-power IDs. The filler fills
// it a whole second at a time: all (max sequence + 1) IDs of second s for
// the generator's worker, then s+1, s+2 ... It starts at the current clock
// second and never waits for the clock: like Baidu, it borrows future
// seconds (lastSecond + 1) as fast as the IDs are taken. A second is put
// into the ring only when there is room for all of it, so no ID of a
// filled second is ever dropped: the IDs issued are exactly a prefix of
// the (second, sequence) space of the worker, in order.
//
// Props: the UID layout props (time-bits, worker-bits, sequence-bits,
// epoch) and worker-id (a number, env:NAME, hostname, or auto with
// keygen.WithWorkerSource), plus
//
//   - boost-power (default 3, 1..16): the ring holds 2^boost-power seconds.
//   - padding-factor (default 50, 1..99): when a caller leaves fewer than
//     this percentage of the ring's slots filled, it wakes the filler.
//   - schedule-interval (default 0, off): also refill periodically, every
//     interval (a Go duration such as 30s, or a number of seconds).
//   - rejection-policy: what NextID does when the ring is empty: "wait"
//     (default) wakes the filler and waits for it within the caller's
//     context; "error" wakes the filler and returns ErrUIDBufferEmpty at
//     once (Baidu's RejectedUidBufferHandler throwing).
//
// Worker ids and restart safety: the worker id must be unique per run of
// the process, not only per running process. Because the filler borrows
// future seconds, the generator may have issued IDs of seconds the clock
// has not reached yet; a process restarted with the same static worker id
// starts again at the clock's current second and can repeat those IDs.
// Baidu avoids this by assigning a fresh worker id at every start (its
// WORKER_NODE table); here use a database lease (workerlease.Source: the
// last filled second is reported to the lease with Track, so the next
// holder starts after it) or workerlease.NewDisposable (a never-reused id
// per run). A static worker-id is accepted but logged as a warning; it is
// safe only if the process never restarts within the borrowed lead
// (at most the time the IDs taken ran ahead of the clock).
//
// With a lease, no second whose start is at or after the lease's
// ValidUntil is filled; IDs already in the ring are still handed out, and
// callers get ErrLeaseLost once the ring is empty. A lease's LastUsed
// time makes the filler start after that second. The generator must be
// closed (io.Closer): Close stops the filler and releases the lease (one
// dropped unclosed is closed when garbage collected, which may be late).
//
// In one SequenceScope (by default, the process), CACHED_UIDs of the same
// clock, layout and worker share the seconds they fill (a rebuilt
// generator continues after its predecessor). UID issues from the same
// (second, sequence) space at the clock's second, so New refuses a
// CACHED_UID while a UID of the same layout and worker is referenced, and
// a UID while such a CACHED_UID is open or has filled seconds the clock
// has not reached (ErrIDSpaceInUse).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ErrUIDBufferEmpty: a CACHED_UID generator's ring buffer was empty, with
// rejection-policy=error, or until the caller's context was done (which
// the error then also wraps) with rejection-policy=wait.
var ErrUIDBufferEmpty = errors.New("keygen: CACHED_UID ring buffer empty")

// errCachedUIDClosed is returned after Close.
var errCachedUIDClosed = errors.New("keygen: CACHED_UID generator closed")

// CACHED_UID defaults and bounds.
const (
	cachedUIDDefaultBoost   = 3
	cachedUIDDefaultPadding = 50
	cachedUIDMaxSlots       = 1 << 22 // 4M slots, 32 MiB
	// takeRun bounds the IDs NextIDs copies per CAS: a lost CAS copies
	// them again.
	takeRun = 256
)

// The ring holds size = (max sequence + 1) << boost-power IDs, as
// Baidu's does, but stores them one second per word: position p holds
// blocks[p / perSec mod 2^boost] | p mod perSec, since the filler always
// fills a whole second of consecutive positions. (Storing every ID, the
// filler wrote each one and callers read a 512 KiB array; parallel takes
// measured several times slower.)
//
// The ring's state is one word: the cursor (the next position to take,
// modulo 2^40) in the high 40 bits and the number of filled positions
// from it (at most 2^22) in the low 24. A caller loads the state, reads
// the block of the cursor position c, and only then claims c by a CAS of
// the state (cursor+1, filled−1). The filler overwrites that block (with
// the second of position c+size) only after it has seen a cursor past the
// block's last position, which is after the CAS; so a caller whose CAS
// succeeds read position c's second, and a caller whose CAS fails discards
// what it read. No per-slot flag is needed, and a caller touches one
// shared word. Blocks are atomic so that a discarded read, which may
// overlap the filler's write, is not a data race.
const (
	stateAvailBits = 24
	stateAvailMask = 1<<stateAvailBits - 1
	stateCursorOne = 1 << stateAvailBits
)

// cachedUID is the CACHED_UID generator.
type cachedUID struct {
	_     [64]byte
	state atomic.Uint64 // cursor<<24 | filled (see above)
	_     [56]byte
	// filledIDs counts the IDs the filler put into the ring (Stats: the
	// IDs issued are filledIDs less those still in the ring).
	filledIDs atomic.Uint64
	_         [56]byte
	kicked    atomic.Bool // the filler has been asked to run
	_         [63]byte

	// read-only after construction
	closed    atomic.Bool
	blocks    []atomic.Int64 // the ring: one second's base (time and worker fields) per block
	blockMask int64
	seqBits   uint
	seqMask   int64
	size      int64 // the ring's IDs: perSec * len(blocks)
	perSec    int64 // max sequence + 1
	threshold int64 // padding: wake the filler when fewer slots are filled
	policyErr bool
	layout    Layout
	clock     Clock
	logger    *slog.Logger
	epochNs   int64
	timeShift uint
	fixed     int64 // worker field, shifted into place
	worker    int64
	maxTick   int64
	lease     Lease
	interval  time.Duration

	// space is shared by the CACHED_UIDs of the same clock, layout and
	// worker in the generator's SequenceScope: its next second is claimed by
	// one filler at a time (cachedSpaceFor).
	space *cachedSpace
	// filler state: nextSecond is the filler's own; lastSecond is read by
	// the lease's Track.
	nextSecond int64
	lastSecond atomic.Int64 // the last second filled; -1 before any

	mu      sync.Mutex
	ready   chan struct{} // closed (and replaced) after each fill round
	fillErr error         // why the last round could not fill the ring, nil when it could
	want    chan struct{} // wakes the filler (buffer 1)
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	cerr    error

	waits, refusals, rounds atomic.Uint64
}

// newCachedUIDGenerator builds CACHED_UID from props.
func newCachedUIDGenerator(props Props, o Options) (Generator, error) {
	const typ = "CACHED_UID"
	props, src, err := workerSource(typ, props, o)
	if err != nil {
		return nil, err
	}
	r := readProps(typ, props, "worker-id", "time-bits", "worker-bits", "sequence-bits", "epoch",
		"boost-power", "padding-factor", "schedule-interval", "rejection-policy")
	l := Layout{
		Epoch:        r.epoch("epoch", BaiduEpoch),
		Unit:         time.Second,
		TimeBits:     int(r.int("time-bits", 1, 62, 31, false)),
		WorkerBits:   int(r.int("worker-bits", 0, 62, 19, false)),
		SequenceBits: int(r.int("sequence-bits", 1, 62, 13, false)),
	}
	worker := r.int("worker-id", 0, mask(min(l.WorkerBits, 62)), 0, src == nil)
	boost := int(r.int("boost-power", 1, 16, cachedUIDDefaultBoost, false))
	padding := r.int("padding-factor", 1, 99, cachedUIDDefaultPadding, false)
	policy := r.oneOf("rejection-policy", "wait", "wait", "error")
	var interval time.Duration
	if v, ok := r.vals["schedule-interval"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n <= 1<<32 {
			interval = time.Duration(n) * time.Second
		} else if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			interval = d
		} else {
			r.fail("schedule-interval", "not a duration", "a Go duration (30s, 1m) or a number of seconds; 0 turns it off")
		}
	}
	if l.SequenceBits+boost > 22 {
		r.fail("boost-power", fmt.Sprintf("with sequence-bits %d the ring would hold 2^%d slots", l.SequenceBits, l.SequenceBits+boost),
			fmt.Sprintf("sequence-bits + boost-power at most 22 (%d slots)", cachedUIDMaxSlots))
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	if err := l.validate(o.Clock.Now()); err != nil {
		return nil, err
	}
	var lease Lease
	if src != nil {
		if lease, err = acquireLease(src, typ, mask(min(l.WorkerBits, 62)), o); err != nil {
			return nil, err
		}
		worker = lease.Worker()
	} else {
		o.Logger.Warn("keygen: CACHED_UID with a static worker id borrows future seconds: a restart with the same worker id "+
			"before the clock catches up can repeat IDs; prefer a lease (workerlease) or workerlease.NewDisposable",
			"worker", worker)
	}
	perSec := int64(1) << l.SequenceBits
	size := perSec << boost
	g := &cachedUID{
		blocks:    make([]atomic.Int64, 1<<boost),
		blockMask: 1<<boost - 1,
		seqBits:   uint(l.SequenceBits),
		seqMask:   perSec - 1,
		size:      size,
		perSec:    perSec,
		threshold: size * padding / 100,
		policyErr: policy == "error",
		layout:    l,
		clock:     o.Clock,
		logger:    o.Logger,
		epochNs:   l.Epoch.UnixNano(),
		timeShift: uint(l.timeShift()),
		fixed:     worker << l.workerShift(),
		worker:    worker,
		maxTick:   l.MaxTimestamp(),
		lease:     lease,
		interval:  interval,
		ready:     make(chan struct{}),
		want:      make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	g.nextSecond = max((o.Clock.Now().UnixNano()-g.epochNs)/int64(time.Second), 0)
	if g.space, err = cachedSpaceFor(o.scope(), spaceKey(o.Clock, "cached", l, g.fixed), &g.nextSecond); err != nil {
		if lease != nil {
			lease.Close()
		}
		return nil, err
	}
	g.lastSecond.Store(-1)
	if lease != nil {
		if last := lease.LastUsed(); !last.IsZero() && !last.Before(l.Epoch) {
			g.nextSecond = max(g.nextSecond, int64(last.Sub(l.Epoch)/time.Second)+1)
		}
		lease.Track(g.lastFilled)
	}
	// The initial fill, in the caller: the ring starts full.
	n, err := g.fill()
	if n == 0 && err != nil {
		g.space.live.Add(-1)
		if lease != nil {
			lease.Close()
		}
		return nil, err
	}
	g.fillErr = err
	g.wg.Add(1)
	go g.filler()
	// The filler and the lease hold g; its user holds h. Dropped unclosed,
	// h is collected, and g is closed then: its filler would otherwise run
	// for ever, and its claim would keep a UID of its space refused.
	h := &cachedUIDHandle{g}
	runtime.AddCleanup(h, func(g *cachedUID) { go g.Close() }, g)
	return h, nil
}

// cachedUIDHandle is the CACHED_UID New returns: the generator, as its user
// holds it.
type cachedUIDHandle struct{ *cachedUID }

// lastFilled is the start of the last second filled (zero before any),
// which the lease stores as the worker id's last use.
func (g *cachedUID) lastFilled() time.Time {
	s := g.lastSecond.Load()
	if s < 0 {
		return time.Time{}
	}
	return g.layout.Epoch.Add(time.Duration(s) * time.Second)
}

// fill puts whole seconds into the ring while there is room for one. It
// returns the number of seconds filled and, when it stopped before the
// ring was full, why (a TimeOverflowError or ErrLeaseLost). Only the
// filler (or the constructor, before the filler starts) calls it.
func (g *cachedUID) fill() (int, error) {
	filled := 0
	for {
		st := g.state.Load()
		avail := int64(st & stateAvailMask)
		if g.size-avail < g.perSec {
			return filled, nil
		}
		t := int64(st>>stateAvailBits) + avail // the next position to fill (modulo 2^40)
		// Claim the second from the space's counter (SequenceScope): a
		// generator built again with the same worker id (or two at once)
		// never refills a second another one filled ahead of the clock.
		claimed := g.space.next.Load()
		s := max(claimed, g.nextSecond)
		if s > g.maxTick {
			return filled, &TimeOverflowError{Now: g.layout.Epoch.Add(time.Duration(s) * time.Second), Epoch: g.layout.Epoch,
				Max: g.layout.RunsOut().Add(-time.Second)}
		}
		if g.lease != nil && g.epochNs+s*int64(time.Second) >= g.lease.ValidUntil() {
			return filled, fmt.Errorf("%w: CACHED_UID worker %d would fill a second past its lease", ErrLeaseLost, g.worker)
		}
		if !g.space.next.CompareAndSwap(claimed, s+1) {
			continue
		}
		// Positions t..t+perSec-1 are at least size above every position
		// the block held, all below the cursor read above: claimed (see the
		// state's comment). t is a multiple of perSec, and positions wrap
		// at 2^40, a multiple of the ring's size.
		g.blocks[(t>>g.seqBits)&g.blockMask].Store(s<<g.timeShift | g.fixed)
		g.lastSecond.Store(s)
		g.filledIDs.Add(uint64(g.perSec))
		g.state.Add(uint64(g.perSec))
		g.nextSecond = s + 1
		filled++
	}
}

// filler refills the ring when woken by a caller, on the schedule, until
// Close.
func (g *cachedUID) filler() {
	defer g.wg.Done()
	var tick <-chan time.Time
	if g.interval > 0 {
		t := time.NewTicker(g.interval)
		defer t.Stop()
		tick = t.C
	}
	var prevErr error
	for {
		select {
		case <-g.done:
			return
		case <-g.want:
		case <-tick:
		}
		g.kicked.Store(false)
		_, err := g.fill()
		g.rounds.Add(1)
		if err != nil && (prevErr == nil || err.Error() != prevErr.Error()) {
			g.logger.Warn("keygen: CACHED_UID filler stopped", "worker", g.worker, "error", err)
		}
		prevErr = err
		g.mu.Lock()
		g.fillErr = err
		close(g.ready)
		g.ready = make(chan struct{})
		g.mu.Unlock()
	}
}

// kick wakes the filler; it never blocks, and after the first caller the
// others see kicked and skip the channel.
func (g *cachedUID) kick() {
	if g.kicked.Load() || !g.kicked.CompareAndSwap(false, true) {
		return
	}
	select {
	case g.want <- struct{}{}:
		// The woken filler waits in this P's run queue; when every P is
		// busy taking IDs it would not run before the ring is empty (the
		// scheduler preempts after 10 ms). Yield once so that it fills
		// while the other half of the ring is being taken.
		runtime.Gosched()
	default:
	}
}

// take copies up to len(dst) filled IDs into dst and claims them with one
// CAS of the state; it returns how many (0 when the ring is empty).
func (g *cachedUID) take(dst []int64) int {
	for {
		st := g.state.Load()
		avail := int64(st & stateAvailMask)
		if avail == 0 {
			return 0
		}
		c := int64(st >> stateAvailBits)
		n := min(int64(len(dst)), avail, takeRun)
		for k := int64(0); k < n; k++ {
			dst[k] = g.at(c + k)
		}
		if !g.state.CompareAndSwap(st, st+uint64(n)*stateCursorOne-uint64(n)) {
			continue
		}
		if avail-n < g.threshold {
			g.kick()
		}
		return int(n)
	}
}

// at is the ID at position p of the ring (p filled and not yet claimed).
func (g *cachedUID) at(p int64) int64 {
	return g.blocks[(p>>g.seqBits)&g.blockMask].Load() | p&g.seqMask
}

// Type returns "CACHED_UID".
func (g *cachedUID) Type() string { return "CACHED_UID" }

// Layout returns the generator's bit layout.
func (g *cachedUID) Layout() Layout { return g.layout }

// Decompose splits id into its fields.
func (g *cachedUID) Decompose(id int64) (Parts, error) { return g.layout.Decompose(id) }

// Compose builds an ID from its fields.
func (g *cachedUID) Compose(p Parts) (int64, error) { return g.layout.Compose(p) }

// NextKey returns NextID's key as an int64.
func (g *cachedUID) NextKey(ctx context.Context) (any, error) {
	id, err := g.NextID(ctx)
	if err != nil {
		return nil, err
	}
	return id, nil
}

// NextID takes the next ID from the ring: one CAS of the state when the
// ring is not empty.
func (g *cachedUID) NextID(ctx context.Context) (int64, error) {
	for !g.closed.Load() {
		st := g.state.Load()
		avail := int64(st & stateAvailMask)
		if avail == 0 {
			break
		}
		id := g.at(int64(st >> stateAvailBits)) // before the claim: see the state's comment
		if !g.state.CompareAndSwap(st, st+stateCursorOne-1) {
			continue
		}
		if avail <= g.threshold {
			g.kick()
		}
		return id, nil
	}
	var id [1]int64
	err := g.slow(ctx, id[:])
	return id[0], err
}

// NextIDs fills dst with increasing IDs, taking runs of the ring with one
// CAS each.
func (g *cachedUID) NextIDs(ctx context.Context, dst []int64) error {
	for i := 0; i < len(dst); {
		if !g.closed.Load() {
			if n := g.take(dst[i:]); n > 0 {
				i += n
				continue
			}
		}
		if err := g.slow(ctx, dst[i:i+1]); err != nil {
			return err
		}
		i++
	}
	return nil
}

// slow takes one ID into dst[0] when the ring was empty (or the generator
// closed): it wakes the filler and, with rejection-policy=wait, waits for
// its rounds within ctx. The filler's error (ErrLeaseLost, a
// TimeOverflowError) is returned once a round that started after the
// wake-up could not fill the ring.
func (g *cachedUID) slow(ctx context.Context, dst []int64) error {
	waited, rounds := false, 0
	for {
		if g.closed.Load() {
			return errCachedUIDClosed
		}
		g.mu.Lock()
		ready, fillErr := g.ready, g.fillErr
		g.mu.Unlock()
		if g.take(dst) == 1 {
			return nil
		}
		// A round in progress at the wake-up may have started before it;
		// the second one to finish started after.
		if fillErr != nil && (g.policyErr || rounds >= 2) {
			if errors.Is(fillErr, ErrLeaseLost) {
				g.refusals.Add(1)
			}
			return fillErr
		}
		g.kicked.Store(false) // force the wake-up: this caller waits for it
		g.kick()
		if g.policyErr {
			return fmt.Errorf("%w: CACHED_UID worker %d (rejection-policy=error)", ErrUIDBufferEmpty, g.worker)
		}
		if !waited {
			waited = true
			g.waits.Add(1)
		}
		select {
		case <-ready:
			rounds++
		case <-g.done:
			return errCachedUIDClosed
		case <-ctx.Done():
			return fmt.Errorf("%w: CACHED_UID worker %d: %w", ErrUIDBufferEmpty, g.worker, ctx.Err())
		}
	}
}

// Stats reports what the generator did: Issued is the number of IDs taken
// from the ring; SequenceWaits counts calls that found the
// ring empty and waited for the filler (rejection-policy=wait);
// LeaseRefusals counts calls refused with ErrLeaseLost; LeaseRenewals and
// LeaseFailures come from a renewing lease, LeaseValidUntil from the lease
// (0 with a fixed worker-id). ClockWaits and ClockBackSteps
// stay 0: the filler never reads the clock after the start.
func (g *cachedUID) Stats() Stats {
	s := Stats{
		Issued:        g.issued(),
		SequenceWaits: g.waits.Load(),
		LeaseRefusals: g.refusals.Load(),
	}
	leaseStats(g.lease, &s)
	return s
}

// issued is the number of IDs taken: filled less still in the ring. The
// state is read first: a fill between the two reads then counts its IDs
// as taken for a moment, instead of making the difference negative.
func (g *cachedUID) issued() uint64 {
	avail := g.state.Load() & stateAvailMask
	return g.filledIDs.Load() - avail
}

// Close stops the filler and waits for it, then releases the worker-id
// lease, if any. IDs still in the ring are abandoned; NextID fails
// afterwards. Close is idempotent.
func (g *cachedUID) Close() error {
	g.once.Do(func() {
		g.closed.Store(true)
		close(g.done)
		g.wg.Wait()
		g.space.live.Add(-1)
		if g.lease != nil {
			g.cerr = g.lease.Close()
		}
	})
	return g.cerr
}

// cachedSpace is the shared state of one CACHED_UID ID space in a
// SequenceScope.
type cachedSpace struct {
	next atomic.Int64 // the next second no CACHED_UID of the space has claimed
	live atomic.Int64 // CACHED_UIDs of the space not closed
}

// cachedSpaceFor returns k's space in scope s, counting one more live
// generator. It refuses a space whose worker a SNOWFLAKE or UID generator
// of the scope still uses, and moves *next (the clock's second) past the
// seconds a released one issued and past the clock's second: a generator
// is released when collected, which can be in its last call, after it
// last needs itself and before its key of that second is stored.
func cachedSpaceFor(s *SequenceScope, k slotKey, next *int64) (*cachedSpace, error) {
	s.lock()
	defer s.mu.Unlock()
	sf := k
	sf.engine = "snowflake"
	if e := s.slots[sf]; e != nil {
		if e.refs.Load() > 0 {
			return nil, fmt.Errorf("%w: a SNOWFLAKE or UID generator with worker %d and the same layout is still referenced in this process",
				ErrIDSpaceInUse, k.fixed>>k.layout.workerShift())
		}
		if st, ok := e.state.(*snowflakeState); ok {
			*next = max(*next+1, int64(st.issuedUntil(k.layout).Sub(k.layout.Epoch)/time.Second)+1)
		}
	}
	sp := s.cached[k]
	if sp == nil {
		sp = new(cachedSpace)
		s.cached[k] = sp
	}
	sp.live.Add(1)
	return sp, nil
}

// cachedGuard refuses a SNOWFLAKE or UID generator while a CACHED_UID of
// the same space is open, or has filled seconds the clock (now) has not
// reached. Otherwise it returns the first second no CACHED_UID of the
// space filled (0 when none did), before which the generator must not
// issue. s is locked.
func cachedGuard(s *SequenceScope, k slotKey, now time.Time) (next int64, err error) {
	k.engine = "cached"
	sp := s.cached[k]
	if sp == nil {
		return 0, nil
	}
	worker := k.fixed >> k.layout.workerShift()
	if sp.live.Load() > 0 {
		return 0, fmt.Errorf("%w: a CACHED_UID generator with worker %d and the same layout is open in this process", ErrIDSpaceInUse, worker)
	}
	next = sp.next.Load()
	if until := k.layout.Epoch.Add(time.Duration(next) * time.Second); now.Before(until) {
		return 0, fmt.Errorf("%w: a CACHED_UID generator with worker %d filled seconds until %s, ahead of the clock",
			ErrIDSpaceInUse, worker, until.UTC().Format(time.RFC3339))
	}
	return next, nil
}
