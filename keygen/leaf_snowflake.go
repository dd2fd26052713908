package keygen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"
)

// LeafEpoch is LEAF_SNOWFLAKE's default epoch, Meituan Leaf's twepoch
// 1288834974657 (2010-11-04 09:42:54.657 +08:00, Twitter Snowflake's epoch).
// Unlike ShardingSphere's it is an instant, not a local date: no time zone
// needs matching to share keys with a Leaf fleet.
var LeafEpoch = time.UnixMilli(1288834974657).UTC()

const (
	// leafRandomStarts: every millisecond's sequence starts at a random
	// number below this (Leaf's RANDOM.nextInt(100)), so that keys issued at
	// low rates do not all end in the same bits.
	leafRandomStarts = 100
	// leafTolerance: Leaf waits out a backwards step of at most 5 whole
	// milliseconds, i.e. one shorter than 6 (the engine's `<`).
	leafTolerance = 6 * time.Millisecond
)

// leafLayout is Leaf's fixed layout (sign 1 | time 41 ms | worker 10 |
// sequence 12) from epoch.
func leafLayout(epoch time.Time) Layout {
	return Layout{Epoch: epoch, Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12}
}

// leafSnowflake is LEAF_SNOWFLAKE: Meituan Leaf's SnowflakeIDGenImpl on
// SNOWFLAKE's engine state (shared last ID, lease, floor, Stats), with
// Leaf's rules for starting a millisecond and for backwards clock steps.
// A SNOWFLAKE of the same layout and worker id shares its state, so the
// two never issue the same key.
type leafSnowflake struct {
	*snowflake
	random func(n int64) int64 // [0, n); safe for concurrent use
}

// newLeafSnowflakeGenerator builds LEAF_SNOWFLAKE from props, drawing its
// sequence starts from o.Random (WithRandom), math/rand/v2 when nil.
func newLeafSnowflakeGenerator(props Props, o Options) (Generator, error) {
	const typ = "LEAF_SNOWFLAKE"
	random := o.Random
	if random == nil {
		random = rand.Int64N
	}
	props, src, err := workerSource(typ, props, o)
	if err != nil {
		return nil, err
	}
	c, err := parseLeafSnowflake(props, src == nil)
	if err != nil {
		return nil, err
	}
	if src != nil {
		if c.lease, err = acquireLease(src, typ, mask(c.layout.WorkerBits), o); err != nil {
			return nil, err
		}
		c.worker = c.lease.Worker()
	}
	s, err := newSnowflake(c, o)
	if err != nil {
		return nil, err
	}
	g := &leafSnowflake{snowflake: s, random: random}
	if s.lease == nil {
		return g, nil
	}
	// As leasedSnowflake: a dropped, unclosed generator releases its id.
	h := &leasedLeafSnowflake{g}
	runtime.AddCleanup(h, func(s *snowflake) { go s.Close() }, s)
	return h, nil
}

// parseLeafSnowflake reads LEAF_SNOWFLAKE's props: worker-id and the
// epoch (Leaf's twepoch, under either name). Leaf fixes the rest.
func parseLeafSnowflake(props Props, needWorker bool) (snowflakeConfig, error) {
	const typ = "LEAF_SNOWFLAKE"
	r := readProps(typ, props, "worker-id", "epoch", "twepoch")
	epoch := r.epoch("epoch", LeafEpoch)
	if r.has("twepoch") {
		if r.has("epoch") {
			r.fail("twepoch", "given twice (also as epoch)", "one of epoch and twepoch")
		} else {
			epoch = r.epoch("twepoch", LeafEpoch)
		}
	}
	c := snowflakeConfig{typ: typ, layout: leafLayout(epoch), tolerance: leafTolerance}
	c.worker = r.int("worker-id", 0, mask(c.layout.WorkerBits), 0, needWorker)
	return c, r.err()
}

func (g *leafSnowflake) NextKey(ctx context.Context) (any, error) { return g.NextID(ctx) }

func (g *leafSnowflake) NextID(ctx context.Context) (int64, error) {
	st := g.state
	if g.lease == nil && !st.contended.Load() {
		// Within a millisecond Leaf's sequence counts up by one, as
		// SNOWFLAKE's does: the same one-CAS path.
		old := st.last.Load()
		now := g.now()
		if g.tick(now) == old>>g.timeShift && old&g.seqMask != g.seqMask && now >= g.epochNs &&
			st.last.CompareAndSwap(old, old+1) {
			return old + 1, nil
		}
	}
	id, _, err := g.reserve(ctx, 1)
	return id, err
}

func (g *leafSnowflake) NextIDs(ctx context.Context, dst []int64) error {
	return fillReserved(ctx, dst, g.reserve)
}

// reserve claims up to n consecutive IDs of one millisecond, with CAS, or
// queued on the state's mutex once CASes collide (as SNOWFLAKE does).
func (g *leafSnowflake) reserve(ctx context.Context, n int64) (first, last int64, err error) {
	st := g.state
	if !st.contended.Load() {
		var ok bool
		if first, last, ok, err = g.tryReserve(ctx, n, true); ok || err != nil {
			return first, last, err
		}
		st.contended.Store(true)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	first, last, _, err = g.tryReserve(ctx, n, false)
	if st.slowIDs += int(last - first + 1); st.slowIDs >= contentionProbe {
		st.slowIDs = 0
		st.contended.Store(false)
	}
	return first, last, err
}

// tryReserve is Leaf's get: a new millisecond starts at a random sequence
// below 100; a used-up one waits for the next, which starts the same way;
// a step back of at most 5 ms is waited out for twice its length, once.
// It never returns an ID at or below the state's last: a random start
// happens only in a tick above the last ID's. With once, a lost CAS gives
// ok false.
func (g *leafSnowflake) tryReserve(ctx context.Context, n int64, once bool) (first, last int64, ok bool, err error) {
	waited := false
	for {
		// The state before the clock: for a clock that does not step back,
		// the reading is then at or past the state's tick, whoever moved it.
		old := g.state.last.Load()
		now := g.now()
		if g.lease != nil && now >= g.lease.ValidUntil() {
			return 0, 0, false, g.leaseLost()
		}
		t, oldT := g.tick(now), old>>g.timeShift
		if now < g.epochNs || t > g.maxTick {
			return 0, 0, false, &TimeOverflowError{Now: time.Unix(0, now), Epoch: g.layout.Epoch, Max: g.layout.RunsOut().Add(-g.layout.Unit)}
		}
		switch {
		case t > oldT:
			start := g.random(leafRandomStarts)
			if start < 0 || start >= leafRandomStarts {
				return 0, 0, false, fmt.Errorf("keygen: %s random source gave %d, outside 0..%d", g.typ, start, leafRandomStarts-1)
			}
			first, last, ok = g.startTick(old, t<<g.timeShift|g.fixed|start, start, n, false)
		case t == oldT && old&g.seqMask == g.seqMask:
			g.state.seqWaits.Add(1)
			if err := g.wait(ctx, time.Duration(g.epochNs+(oldT+1)*g.unitNs-now)); err != nil {
				return 0, 0, false, err
			}
			continue
		case t == oldT:
			first = old + 1
			last = first + min(n-1, g.seqMask-first&g.seqMask)
			ok = g.state.last.CompareAndSwap(old, last)
		default:
			if err := g.clockBack(ctx, oldT, now, waited); err != nil {
				return 0, 0, false, err
			}
			waited = true
			continue
		}
		if ok && g.closed != nil && g.closed.Load() { // see leaseLost
			return 0, 0, false, g.leaseLost()
		}
		if ok || once {
			return first, last, ok, nil
		}
	}
}

// clockBack handles a clock reading now behind the last ID's tick lastT:
// Leaf waits twice a step of at most 5 ms and fails if the clock is still
// behind after that wait; a longer step fails at once.
func (g *leafSnowflake) clockBack(ctx context.Context, lastT, now int64, waited bool) error {
	step := g.stepBack(lastT, now)
	if step >= g.tolNs || waited {
		g.state.clockBack.Add(1)
		e := &ClockBackwardsError{Last: time.Unix(0, g.epochNs+lastT*g.unitNs), Now: time.Unix(0, now),
			Tolerance: time.Duration(g.tolNs), Reason: "Leaf waits out steps of at most 5ms"}
		if waited {
			e.Reason = "still behind after waiting twice the step, as Leaf does"
		}
		return e
	}
	g.state.clockWaits.Add(1)
	g.logger.Warn("keygen: clock moved backwards; waiting twice the step", "type", g.typ, "step", time.Duration(step))
	return g.wait(ctx, 2*time.Duration(step))
}

// leasedLeafSnowflake is a LEAF_SNOWFLAKE with a worker-id lease, as its
// user holds it: see leasedSnowflake.
type leasedLeafSnowflake struct{ *leafSnowflake }

func (h *leasedLeafSnowflake) NextID(ctx context.Context) (int64, error) {
	defer runtime.KeepAlive(h)
	return h.leafSnowflake.NextID(ctx)
}

func (h *leasedLeafSnowflake) NextIDs(ctx context.Context, dst []int64) error {
	defer runtime.KeepAlive(h)
	return h.leafSnowflake.NextIDs(ctx, dst)
}

func (h *leasedLeafSnowflake) NextKey(ctx context.Context) (any, error) { return h.NextID(ctx) }
