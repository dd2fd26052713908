package keygen

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"
)

// JSEpoch is SNOWFLAKE_JS's epoch, 2019-01-01 00:00 UTC.
var JSEpoch = time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)

// JSLayout is SNOWFLAKE_JS's 53-bit layout: 32-bit seconds, a backup flag
// and a 4-bit worker (together a 5-bit worker field, where 16..31
// are the backups of 0..15), and a 16-bit sequence. Every ID is at most
// 2^53-1, so JavaScript's Number holds it exactly.
var JSLayout = Layout{Epoch: JSEpoch, Unit: time.Second, TimeBits: 32, BackupBits: 1, WorkerBits: 4, SequenceBits: 16}

// jsGenerator is SNOWFLAKE_JS. When the clock steps back, or the primary
// worker's sequence for the second is used up, the backup worker id
// (primary + 16) takes over; when the backup's second is used up too it
// borrows the next second. Because backup IDs of a second sort above the
// primary's, and the generator only ever moves forward from its last ID,
// IDs strictly increase: once the backup has issued keys for a second the
// primary never returns to it.
type jsGenerator struct {
	*jsState // shared by generators of the same space (SequenceScope)

	layout Layout
	clock  Clock
	now    func() int64
	logger *slog.Logger
	worker int64
	tolNs  int64
	lease  Lease // nil for a fixed worker-id
	once   sync.Once
	cerr   error
}

type jsState struct {
	mu      sync.Mutex
	last    int64 // last issued ID
	maxSeen int64 // latest clock second seen
	// counters, under mu
	issued, takeovers, borrowWaits, leaseRefusals uint64
}

func (s *jsState) lastUsed(l Layout) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return l.timeAt(s.last >> jsTimeShift)
}

const (
	jsSeqMask   = 1<<16 - 1
	jsBackupBit = 1 << 20
	jsTimeShift = 21
	jsMaxLead   = 1 // seconds the backup may run ahead of the clock
)

func newJSGenerator(props Props, o Options) (Generator, error) {
	props, src, err := workerSource("SNOWFLAKE_JS", props, o)
	if err != nil {
		return nil, err
	}
	worker, tolNs, err := parseJS(props, src == nil)
	if err != nil {
		return nil, err
	}
	g := &jsGenerator{layout: JSLayout, clock: o.Clock, now: nowNanoFunc(o.Clock), logger: o.Logger, worker: worker, tolNs: tolNs}
	if err := g.layout.validate(o.Clock.Now()); err != nil {
		return nil, err
	}
	if src != nil {
		// Leases hand out 0..15; the backup id w+16 belongs to w's holder.
		if g.lease, err = acquireLease(src, "SNOWFLAKE_JS", 15, o); err != nil {
			return nil, err
		}
		g.worker = g.lease.Worker()
	}
	g.jsState, _, _ = sharedState[jsState, jsGenerator](o.scope(), spaceKey(o.Clock, "js", g.layout, g.worker<<16), o.Clock, g, nil)
	if g.lease == nil {
		return g, nil
	}
	if err := g.adoptLease(); err != nil {
		g.lease.Close()
		return nil, err
	}
	h := &leasedJS{g}
	runtime.AddCleanup(h, func(g *jsGenerator) { go g.Close() }, g)
	return h, nil
}

// leasedJS is a SNOWFLAKE_JS with a worker-id lease, as its user holds it:
// dropped unclosed, it closes the lease when collected (see
// leasedSnowflake).
type leasedJS struct{ *jsGenerator }

func (h *leasedJS) NextID(ctx context.Context) (int64, error) {
	defer runtime.KeepAlive(h)
	return h.jsGenerator.NextID(ctx)
}

func (h *leasedJS) NextIDs(ctx context.Context, dst []int64) error {
	defer runtime.KeepAlive(h)
	return h.jsGenerator.NextIDs(ctx, dst)
}

func (h *leasedJS) NextKey(ctx context.Context) (any, error) { return h.NextID(ctx) }

// adoptLease starts after the worker id's last use (waiting within the
// tolerance, refusing beyond it) and reports issued times to the lease.
func (g *jsGenerator) adoptLease() error {
	if last := g.lease.LastUsed(); !last.IsZero() && !last.Before(g.layout.Epoch) {
		lastT := int64(last.Sub(g.layout.Epoch) / time.Second)
		now := g.now()
		n := (now - g.layout.Epoch.UnixNano()) / int64(time.Second)
		if (lastT-n)*int64(time.Second) > g.tolNs {
			return &ClockBackwardsError{Last: last, Now: time.Unix(0, now), Tolerance: time.Duration(g.tolNs),
				Reason: fmt.Sprintf("worker id %d was last used later than this clock reads", g.worker)}
		}
		g.mu.Lock()
		// The backup range of lastT included: the next key starts after it.
		if floor := lastT<<jsTimeShift | jsBackupBit | g.worker<<16 | jsSeqMask; g.last < floor {
			g.last, g.maxSeen = floor, max(g.maxSeen, lastT)
		}
		g.mu.Unlock()
	}
	g.lease.Track(func() time.Time {
		t, _ := g.lastUsed(g.layout)
		return t
	})
	return nil
}

// Stats reports what the generator did: backup-worker take-overs count
// as clock waits (where SNOWFLAKE waits out a clock step or a full tick,
// SNOWFLAKE_JS switches to the backup worker id), borrowing waits as
// sequence waits.
func (g *jsGenerator) Stats() Stats {
	g.mu.Lock()
	s := Stats{Issued: g.issued, ClockWaits: g.takeovers, SequenceWaits: g.borrowWaits, LeaseRefusals: g.leaseRefusals}
	g.mu.Unlock()
	leaseStats(g.lease, &s)
	return s
}

// Close releases the worker-id lease, if any.
func (g *jsGenerator) Close() error {
	if g.lease == nil {
		return nil
	}
	g.once.Do(func() { g.cerr = g.lease.Close() })
	return g.cerr
}

// parseJS reads SNOWFLAKE_JS's props: the worker id and the tolerance for
// backwards clock steps (default one second: a step within it is answered
// by the backup worker id, one beyond it is a *ClockBackwardsError).
func parseJS(props Props, needWorker bool) (worker, tolNs int64, err error) {
	r := readProps("SNOWFLAKE_JS", props, "worker-id", "max-tolerate-time-difference-milliseconds")
	worker = r.int("worker-id", 0, 15, 0, needWorker)
	tolNs = r.int("max-tolerate-time-difference-milliseconds", 0, 3_600_000, 1000, false) * int64(time.Millisecond)
	return worker, tolNs, r.err()
}

func (g *jsGenerator) Type() string                             { return "SNOWFLAKE_JS" }
func (g *jsGenerator) Layout() Layout                           { return g.layout }
func (g *jsGenerator) Decompose(id int64) (Parts, error)        { return g.layout.Decompose(id) }
func (g *jsGenerator) Compose(p Parts) (int64, error)           { return g.layout.Compose(p) }
func (g *jsGenerator) NextKey(ctx context.Context) (any, error) { return g.NextID(ctx) }

func (g *jsGenerator) NextID(ctx context.Context) (int64, error) {
	var id [1]int64
	err := g.NextIDs(ctx, id[:])
	return id[0], err
}

func (g *jsGenerator) NextIDs(ctx context.Context, dst []int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; i < len(dst); {
		id, err := g.next(ctx)
		if err != nil {
			return err
		}
		// The rest of this second's range for the same worker needs no
		// further clock reading.
		n := min(int64(len(dst)-i), jsSeqMask-id&jsSeqMask+1)
		for k := int64(0); k < n; k++ {
			dst[i] = id + k
			i++
		}
		g.last = id + n - 1
		g.issued += uint64(n)
	}
	return nil
}

// next returns the ID after g.last without recording it. g.mu is held.
func (g *jsGenerator) next(ctx context.Context) (int64, error) {
	for {
		now := g.now()
		if g.lease != nil && now >= g.lease.ValidUntil() {
			g.leaseRefusals++
			return 0, fmt.Errorf("%w: SNOWFLAKE_JS worker %d", ErrLeaseLost, g.worker)
		}
		n := (now - g.layout.Epoch.UnixNano()) / int64(time.Second)
		if now < g.layout.Epoch.UnixNano() || n > g.layout.MaxTimestamp() {
			return 0, &TimeOverflowError{Now: time.Unix(0, now), Epoch: g.layout.Epoch, Max: g.layout.RunsOut().Add(-time.Second)}
		}
		if n > g.maxSeen {
			g.maxSeen = n
		} else if back := (g.maxSeen - n) * int64(time.Second); back > g.tolNs {
			return 0, &ClockBackwardsError{Last: g.secondTime(g.maxSeen), Now: time.Unix(0, now), Tolerance: time.Duration(g.tolNs)}
		}
		last := g.last
		t, backup, seq := last>>jsTimeShift, last&jsBackupBit != 0, last&jsSeqMask
		primary := g.worker << 16
		var id int64
		switch {
		case n > t:
			id = n<<jsTimeShift | primary
		case !backup && n == t && seq < jsSeqMask:
			id = last + 1
		case !backup:
			// The clock stepped back, or the primary's second is used up.
			g.takeovers++
			g.logger.Warn("keygen: SNOWFLAKE_JS backup worker takes over", "worker", g.worker, "second", g.secondTime(t),
				"clock_back", n < t)
			id = t<<jsTimeShift | jsBackupBit | primary
		case seq < jsSeqMask:
			id = last + 1
		default:
			// The backup's second is used up too: borrow the next second.
			id = (t+1)<<jsTimeShift | jsBackupBit | primary
		}
		if idT := id >> jsTimeShift; g.lease != nil && g.layout.Epoch.UnixNano()+idT*int64(time.Second) >= g.lease.ValidUntil() {
			// A borrowed second must lie within the lease: the next holder of
			// the worker id starts after the lease's expiry, not after the
			// seconds borrowed past it.
			g.leaseRefusals++
			return 0, fmt.Errorf("%w: SNOWFLAKE_JS worker %d would borrow a second past its lease", ErrLeaseLost, g.worker)
		} else if idT > g.layout.MaxTimestamp() {
			return 0, &TimeOverflowError{Now: time.Unix(0, now), Epoch: g.layout.Epoch, Max: g.layout.RunsOut().Add(-time.Second)}
		} else if idT-n > jsMaxLead {
			// Borrowing is bounded: wait until the clock is within a second.
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			g.borrowWaits++
			g.clock.Sleep(time.Duration(g.layout.Epoch.UnixNano() + (idT-jsMaxLead)*int64(time.Second) - now))
			continue
		}
		return id, nil
	}
}

func (g *jsGenerator) secondTime(t int64) time.Time {
	return g.layout.Epoch.Add(time.Duration(t) * time.Second)
}
