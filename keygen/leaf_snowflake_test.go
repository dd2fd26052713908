package keygen

// LEAF_SNOWFLAKE's tests are internal so that they can build it with the
// options New would fill in (newLeafWith) and share the package's helpers;
// the deterministic random source goes in through the public WithRandom.

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen/keygentest"
)

// leafT0 is the fake clock's start: 2026-03-04 12:00:00.123 UTC.
var leafT0 = time.Date(2026, 3, 4, 12, 0, 0, 123_000_000, time.UTC)

// leafRandom is a deterministic random source: it returns vals in turn
// (the last one again once they run out) and records each n it was asked for.
type leafRandom struct {
	mu   sync.Mutex
	vals []int64
	ns   []int64
}

func (r *leafRandom) next(n int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ns = append(r.ns, n)
	v := r.vals[0]
	if len(r.vals) > 1 {
		r.vals = r.vals[1:]
	}
	return v
}

func (r *leafRandom) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ns)
}

// seededRandom is a seeded math/rand/v2 source, safe for concurrent use.
func seededRandom(seed uint64) func(n int64) int64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed))
	return func(n int64) int64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Int64N(n)
	}
}

// newLeaf builds LEAF_SNOWFLAKE with random as New would build it with opts.
func newLeaf(t testing.TB, props Props, random func(int64) int64, opts ...Option) IDGenerator {
	t.Helper()
	g, err := newLeafWith(props, random, opts...)
	if err != nil {
		t.Fatalf("LEAF_SNOWFLAKE %v: %v", props, err)
	}
	return g
}

func newLeafWith(props Props, random func(int64) int64, opts ...Option) (IDGenerator, error) {
	o := Options{Logger: slog.New(slog.DiscardHandler), Clock: defaultClock()}
	for _, opt := range append([]Option{WithRandom(random)}, opts...) {
		opt(&o)
	}
	o.SequenceScope = o.scope()
	g, err := newLeafSnowflakeGenerator(props, o)
	if err != nil {
		return nil, err
	}
	return g.(IDGenerator), nil
}

func leafNext(t testing.TB, g IDGenerator) int64 {
	t.Helper()
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// leafLayoutForTest is LayoutFor's answer, read once: decoding is on
// every key of the model test.
var leafLayoutForTest = sync.OnceValues(func() (Layout, error) { return LayoutFor("LEAF_SNOWFLAKE", nil) })

func leafParts(t testing.TB, id int64) Parts {
	t.Helper()
	l, err := leafLayoutForTest()
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Decompose(id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLeafSnowflakeKeysAreLeafsFormula: a key is Leaf's
// (timestamp - twepoch) << 22 | workerId << 12 | sequence, with twepoch
// 1288834974657, and decodes back through LayoutFor's layout.
func TestLeafSnowflakeKeysAreLeafsFormula(t *testing.T) {
	if want := time.Date(2010, 11, 4, 9, 42, 54, 657_000_000, time.FixedZone("+08:00", 8*3600)); !LeafEpoch.Equal(want) {
		t.Fatalf("LeafEpoch = %v, want %v", LeafEpoch, want)
	}
	clk := keygentest.NewClock(leafT0)
	g := newLeaf(t, Props{"worker-id": "7"}, (&leafRandom{vals: []int64{42}}).next, WithClock(clk), WithSequenceScope(NewSequenceScope()))
	// leafT0 is Unix ms 1772625600123: 1772625600123 - 1288834974657 =
	// 483790625466; 483790625466<<22 | 7<<12 | 42 = 2029164955554574378.
	const want = int64(2029164955554574378)
	if got := leafNext(t, g); got != want {
		t.Fatalf("first key = %d, want %d", got, want)
	}
	if got := leafNext(t, g); got != want+1 {
		t.Fatalf("second key in the same ms = %d, want %d", got, want+1)
	}
	p := leafParts(t, want)
	if !p.Time.Equal(leafT0) || p.Timestamp != 483790625466 || p.Worker != 7 || p.Sequence != 42 {
		t.Fatalf("decoded %+v, want time %v, timestamp 483790625466, worker 7, sequence 42", p, leafT0)
	}
	if l := g.(Decomposer); l == nil {
		t.Fatal("no Decomposer")
	} else if q, err := l.Decompose(want); err != nil || q != p {
		t.Fatalf("generator's Decompose = %+v, %v; want %+v", q, err, p)
	}
	if s := g.(StatsReporter).Stats(); s.Issued != 2 {
		t.Fatalf("Stats().Issued = %d, want 2", s.Issued)
	}
	if typ := g.Type(); typ != "LEAF_SNOWFLAKE" {
		t.Fatalf("Type() = %q", typ)
	}
}

// TestLeafSnowflakeLayoutFor: LayoutFor gives Leaf's 41/10/12 ms layout
// from its epoch (or the twepoch prop), with any worker-id form.
func TestLeafSnowflakeLayoutFor(t *testing.T) {
	want := Layout{Epoch: LeafEpoch, Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12}
	for _, p := range []Props{nil, {"worker-id": "3"}, {"worker-id": "auto"}, {"workerId": "env:X"}, {"twepoch": "1288834974657"}} {
		l, err := LayoutFor("leaf_snowflake", p)
		if err != nil || l != want {
			t.Errorf("LayoutFor(%v) = %v, %v; want %v", p, l, err, want)
		}
	}
	l, err := LayoutFor("LEAF_SNOWFLAKE", Props{"epoch": "2016-11-01T00:00:00+08:00"})
	if err != nil || !l.Epoch.Equal(time.Date(2016, 10, 31, 16, 0, 0, 0, time.UTC)) {
		t.Errorf("LayoutFor with an epoch = %v, %v", l, err)
	}
	if _, err := LayoutFor("LEAF_SNOWFLAKE", Props{"sequence-bits": "10"}); !errors.Is(err, ErrInvalidProps) {
		t.Errorf("LayoutFor with sequence-bits: %v, want ErrInvalidProps (Leaf's layout is fixed)", err)
	}
}

// TestLeafSnowflakeSequenceStartsBelow100AtEveryNewMillisecond: each new
// millisecond's first key has the sequence the random source gave for 100,
// and keys within the millisecond count up from it without asking again.
func TestLeafSnowflakeSequenceStartsBelow100AtEveryNewMillisecond(t *testing.T) {
	clk := keygentest.NewClock(leafT0)
	rnd := &leafRandom{vals: []int64{99, 0, 57}}
	g := newLeaf(t, Props{"worker-id": "1"}, rnd.next, WithClock(clk), WithSequenceScope(NewSequenceScope()))
	for ms, start := range []int64{99, 0, 57} {
		for k := range int64(3) {
			p := leafParts(t, leafNext(t, g))
			if p.Sequence != start+k || !p.Time.Equal(leafT0.Add(time.Duration(ms)*time.Millisecond)) {
				t.Fatalf("ms %d key %d: %+v, want sequence %d", ms, k, p, start+k)
			}
		}
		clk.Add(time.Millisecond)
	}
	if !slices.Equal(rnd.ns, []int64{100, 100, 100}) {
		t.Fatalf("random asked for %v, want one draw below 100 per millisecond", rnd.ns)
	}

	// With the default source, built through New: every millisecond's first
	// key is below 100.
	clk2 := keygentest.NewClock(leafT0)
	g2, err := NewID("LEAF_SNOWFLAKE", Props{"worker-id": "2"}, WithClock(clk2), WithSequenceScope(NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for range 2000 {
		if p := leafParts(t, leafNext(t, g2)); p.Sequence >= 100 {
			t.Fatalf("first key of a millisecond has sequence %d", p.Sequence)
		} else {
			seen[p.Sequence] = true
		}
		clk2.Add(time.Millisecond)
	}
	if len(seen) < 50 {
		t.Fatalf("2000 milliseconds started at only %d distinct sequences: not random", len(seen))
	}
}

// TestLeafSnowflakeOverflowWaitsAndRestartsBelow100: a millisecond whose
// sequence is used up waits for the next one, which starts at a random
// sequence below 100 again (Leaf's tilNextMillis), not at 0.
func TestLeafSnowflakeOverflowWaitsAndRestartsBelow100(t *testing.T) {
	clk := keygentest.NewClock(leafT0)
	rnd := &leafRandom{vals: []int64{1, 73}}
	g := newLeaf(t, Props{"worker-id": "9"}, rnd.next, WithClock(clk), WithSequenceScope(NewSequenceScope()))
	ids := make([]int64, 4095+5) // 4095 keys fill sequences 1..4095
	if err := g.NextIDs(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("key %d = %d not above %d", i, ids[i], ids[i-1])
		}
	}
	last, after := leafParts(t, ids[4094]), leafParts(t, ids[4095])
	if last.Sequence != 4095 || !last.Time.Equal(leafT0) {
		t.Fatalf("last key of the full ms = %+v, want sequence 4095", last)
	}
	if after.Sequence != 73 || !after.Time.Equal(leafT0.Add(time.Millisecond)) {
		t.Fatalf("first key after the overflow = %+v, want sequence 73 one ms later", after)
	}
	if s := clk.Sleeps(); len(s) != 1 || s[0] != time.Millisecond {
		t.Fatalf("sleeps = %v, want one wait of 1ms", s)
	}
	if s := g.(StatsReporter).Stats(); s.SequenceWaits != 1 || s.Issued != uint64(len(ids)) {
		t.Fatalf("stats %+v, want 1 sequence wait and %d issued", s, len(ids))
	}
	// The same one key at a time (NextID's path).
	clk2 := keygentest.NewClock(leafT0)
	g2 := newLeaf(t, Props{"worker-id": "9"}, (&leafRandom{vals: []int64{0, 99}}).next, WithClock(clk2), WithSequenceScope(NewSequenceScope()))
	var prev int64
	for i := range 4097 {
		id := leafNext(t, g2)
		if id <= prev {
			t.Fatalf("key %d = %d not above %d", i, id, prev)
		}
		prev = id
	}
	if p := leafParts(t, prev); p.Sequence != 99 || !p.Time.Equal(leafT0.Add(time.Millisecond)) {
		t.Fatalf("4097th key = %+v, want sequence 99 one ms later", p)
	}
}

// TestLeafSnowflakeRandomStartNeverRepeatsOrGoesBack: the random start is
// drawn only for a millisecond above the last key's, so whatever it draws
// (99 in one millisecond, 0 in the next), every key is above the last. A
// clock that stays, steps forward, overflows a millisecond or steps back
// within Leaf's 5 ms never makes it redraw within a used millisecond.
func TestLeafSnowflakeRandomStartNeverRepeatsOrGoesBack(t *testing.T) {
	clk := keygentest.NewClock(leafT0)
	rnd := &leafRandom{vals: []int64{99, 0}}
	g := newLeaf(t, Props{"worker-id": "4"}, rnd.next, WithClock(clk), WithSequenceScope(NewSequenceScope()))
	a := leafNext(t, g) // ms 0, sequence 99
	if rnd.calls() != 1 {
		t.Fatal("no draw for the first millisecond")
	}
	clk.Add(-3 * time.Millisecond) // waited out (6 ms) past ms 0
	b := leafNext(t, g)
	if b <= a || rnd.calls() != 2 || leafParts(t, b).Sequence != 0 {
		t.Fatalf("after a waited step: %d (parts %+v) after %d, %d draws", b, leafParts(t, b), a, rnd.calls())
	}

	// A model over many runs: a seeded clock walk and random source, against
	// the rule that keys strictly increase and a draw happens exactly when
	// the key's millisecond is above the last key's.
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		clk := keygentest.NewClock(leafT0)
		draws := 0
		random := func(n int64) int64 {
			draws++
			return r.Int64N(n)
		}
		g := newLeaf(t, Props{"worker-id": "4"}, random, WithClock(clk), WithSequenceScope(NewSequenceScope()))
		var prev Parts
		issued := false
		for i := range 2000 {
			switch x := r.IntN(100); {
			case x < 10:
				clk.Add(time.Duration(r.IntN(3)) * time.Millisecond)
			case x < 12:
				clk.Add(-time.Duration(1+r.IntN(5)) * time.Millisecond)
			case x < 14:
				clk.Add(time.Duration(r.IntN(1000)) * time.Microsecond)
			}
			before := draws
			var ids []int64
			if x := r.IntN(200); x < 25 {
				ids = make([]int64, 1+r.IntN(300))
				if x == 0 {
					ids = make([]int64, 4097) // overflows a millisecond
				}
				if err := g.NextIDs(context.Background(), ids); err != nil {
					t.Fatal(err)
				}
			} else {
				ids = []int64{leafNext(t, g)}
			}
			for _, id := range ids {
				p := leafParts(t, id)
				if issued && id <= prev.ID {
					t.Fatalf("seed %d step %d: %d not above %d", seed, i, id, prev.ID)
				}
				newMs := !issued || p.Timestamp > prev.Timestamp
				if newMs && p.Sequence >= 100 {
					t.Fatalf("seed %d step %d: a new millisecond started at sequence %d", seed, i, p.Sequence)
				}
				if !newMs && p.Sequence != prev.Sequence+1 {
					t.Fatalf("seed %d step %d: sequence %d after %d in one millisecond", seed, i, p.Sequence, prev.Sequence)
				}
				if newMs {
					before++
				}
				prev, issued = p, true
			}
			if draws != before {
				t.Fatalf("seed %d step %d: %d draws, want one per new millisecond (%d)", seed, i, draws, before)
			}
		}
		if s := g.(StatsReporter).Stats(); s.SequenceWaits == 0 || s.ClockWaits == 0 {
			t.Fatalf("seed %d: stats %+v; the walk should overflow a millisecond and step back", seed, s)
		}
	}
}

// TestLeafSnowflakeClockBackWaitsUpTo5msAndRefusesMore: a step back of at
// most 5 ms is waited out for twice its length, as Leaf's wait(offset << 1);
// 6 ms is a *ClockBackwardsError, and no key.
func TestLeafSnowflakeClockBackWaitsUpTo5msAndRefusesMore(t *testing.T) {
	clk := keygentest.NewClock(leafT0)
	g := newLeaf(t, Props{"worker-id": "1"}, seededRandom(1), WithClock(clk), WithSequenceScope(NewSequenceScope()))
	a := leafNext(t, g)
	clk.Add(-5 * time.Millisecond)
	b := leafNext(t, g)
	if b <= a {
		t.Fatalf("after a 5ms step: %d <= %d", b, a)
	}
	if s := clk.Sleeps(); !slices.Equal(s, []time.Duration{10 * time.Millisecond}) {
		t.Fatalf("sleeps = %v, want one of 10ms (twice the step)", s)
	}
	if p := leafParts(t, b); !p.Time.Equal(leafT0.Add(5 * time.Millisecond)) {
		t.Fatalf("key after the wait at %v, want %v", p.Time, leafT0.Add(5*time.Millisecond))
	}

	clk.Add(-6 * time.Millisecond)
	id, err := g.NextID(context.Background())
	var cb *ClockBackwardsError
	if !errors.Is(err, ErrClockBackwards) || !errors.As(err, &cb) || id != 0 {
		t.Fatalf("6ms back: %d, %v; want a *ClockBackwardsError", id, err)
	}
	if cb.Last.Sub(cb.Now) != 6*time.Millisecond || cb.Tolerance != 6*time.Millisecond {
		t.Fatalf("error fields %+v", cb)
	}
	if err := g.NextIDs(context.Background(), make([]int64, 2)); !errors.Is(err, ErrClockBackwards) {
		t.Fatalf("NextIDs 6ms back: %v", err)
	}
	if s := g.(StatsReporter).Stats(); s.ClockWaits != 1 || s.ClockBackSteps != 2 {
		t.Fatalf("stats %+v, want 1 clock wait and 2 refused steps", s)
	}
	clk.Add(6 * time.Millisecond)
	if c := leafNext(t, g); c <= b {
		t.Fatalf("after the clock caught up: %d <= %d", c, b)
	}
}

// stuckSleepClock is a fake clock whose Sleep returns without the time
// moving: a clock still behind after Leaf's wait.
type stuckSleepClock struct{ *keygentest.Clock }

func (stuckSleepClock) Sleep(time.Duration) {}

// TestLeafSnowflakeClockStillBehindAfterTheWaitIsAnError: Leaf waits once;
// a clock still behind the last key after that wait is an error, not a
// second wait or a key.
func TestLeafSnowflakeClockStillBehindAfterTheWaitIsAnError(t *testing.T) {
	clk := stuckSleepClock{keygentest.NewClock(leafT0)}
	g := newLeaf(t, Props{"worker-id": "1"}, seededRandom(2), WithClock(clk), WithSequenceScope(NewSequenceScope()))
	leafNext(t, g)
	clk.Add(-2 * time.Millisecond)
	_, err := g.NextID(context.Background())
	var cb *ClockBackwardsError
	if !errors.As(err, &cb) || !strings.Contains(cb.Reason, "still behind") {
		t.Fatalf("clock still behind after the wait: %v; want a *ClockBackwardsError saying so", err)
	}
}

// leafLease is a Lease whose validity and history the test sets.
type leafLease struct {
	worker     int64
	last       time.Time
	validUntil atomic.Int64
	tracked    func() time.Time
	closed     atomic.Int32
}

func (f *leafLease) Worker() int64               { return f.worker }
func (f *leafLease) LastUsed() time.Time         { return f.last }
func (f *leafLease) ValidUntil() int64           { return f.validUntil.Load() }
func (f *leafLease) Track(last func() time.Time) { f.tracked = last }
func (f *leafLease) Close() error                { f.closed.Add(1); return nil }

type leafSource struct {
	lease *leafLease
	info  WorkerInfo
}

func (s *leafSource) Acquire(_ context.Context, info WorkerInfo) (Lease, error) {
	s.info = info
	return s.lease, nil
}

// TestLeafSnowflakeWorkerSourceLeaseFencing: worker-id auto takes the
// source's id (asked for 0..1023); keys stop with ErrLeaseLost past the
// lease and after Close, and resume after a renewal above the last key.
func TestLeafSnowflakeWorkerSourceLeaseFencing(t *testing.T) {
	ctx := context.Background()
	clk := keygentest.NewClock(leafT0)
	lease := &leafLease{worker: 1023}
	lease.validUntil.Store(leafT0.Add(time.Minute).UnixNano())
	src := &leafSource{lease: lease}
	g := newLeaf(t, Props{"worker-id": "auto"}, seededRandom(3), WithClock(clk), WithWorkerSource(src), WithSequenceScope(NewSequenceScope()))
	if src.info.Type != "LEAF_SNOWFLAKE" || src.info.MaxWorker != 1023 {
		t.Fatalf("source asked with %+v, want type LEAF_SNOWFLAKE and max worker 1023", src.info)
	}
	id := leafNext(t, g)
	if p := leafParts(t, id); p.Worker != 1023 {
		t.Fatalf("worker %d, want the lease's 1023", p.Worker)
	}
	if lease.tracked == nil || !lease.tracked().Equal(leafT0) {
		t.Fatal("the lease is not told the last issued time")
	}
	clk.Set(leafT0.Add(time.Minute))
	if _, err := g.NextID(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("past the lease: %v, want ErrLeaseLost", err)
	}
	if err := g.NextIDs(ctx, make([]int64, 3)); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("NextIDs past the lease: %v, want ErrLeaseLost", err)
	}
	lease.validUntil.Store(leafT0.Add(2 * time.Minute).UnixNano())
	if next := leafNext(t, g); next <= id {
		t.Fatalf("after renewal: %d <= %d", next, id)
	}
	if s := g.(StatsReporter).Stats(); s.Issued != 2 || s.LeaseRefusals != 2 {
		t.Fatalf("stats %+v, want 2 issued and 2 lease refusals", s)
	}
	c := g.(interface{ Close() error })
	c.Close()
	c.Close()
	if lease.closed.Load() != 1 {
		t.Fatalf("lease closed %d times, want once", lease.closed.Load())
	}
	if _, err := g.NextID(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("after Close: %v, want ErrLeaseLost", err)
	}

	// Through New, the same: auto needs the source, and gets it.
	if _, err := NewID("LEAF_SNOWFLAKE", Props{"worker-id": "auto"}); !errors.Is(err, ErrInvalidProps) {
		t.Fatalf("auto without a source: %v, want ErrInvalidProps", err)
	}
	lease2 := &leafLease{worker: 8}
	lease2.validUntil.Store(math.MaxInt64)
	g2, err := NewID("LEAF_SNOWFLAKE", nil, WithClock(keygentest.NewClock(leafT0)), WithWorkerSource(&leafSource{lease: lease2}),
		WithSequenceScope(NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	if p := leafParts(t, leafNext(t, g2)); p.Worker != 8 || p.Sequence >= 100 {
		t.Fatalf("New with a source: %+v", p)
	}
	g2.(interface{ Close() error }).Close()
}

// TestLeafSnowflakeWorkerLastUsedAhead: a worker id last used up to 5 ms
// later than the clock reads is waited for (the first key after that
// millisecond); 6 ms refuses the generator, as a step back would.
func TestLeafSnowflakeWorkerLastUsedAhead(t *testing.T) {
	for _, c := range []struct {
		ahead time.Duration
		ok    bool
	}{{5 * time.Millisecond, true}, {6 * time.Millisecond, false}} {
		clk := keygentest.NewClock(leafT0)
		lease := &leafLease{worker: 2, last: leafT0.Add(c.ahead)}
		lease.validUntil.Store(math.MaxInt64)
		g, err := newLeafWith(Props{"worker-id": "auto"}, seededRandom(4), WithClock(clk),
			WithWorkerSource(&leafSource{lease: lease}), WithSequenceScope(NewSequenceScope()))
		if !c.ok {
			if !errors.Is(err, ErrClockBackwards) || lease.closed.Load() != 1 {
				t.Fatalf("last used %v ahead: %v (lease closed %d); want ErrClockBackwards and the lease released",
					c.ahead, err, lease.closed.Load())
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if p := leafParts(t, leafNext(t, g)); !p.Time.After(lease.last) {
			t.Fatalf("first key at %v, not after the worker id's last use %v", p.Time, lease.last)
		}
		g.(interface{ Close() error }).Close()
	}
}

// TestLeafSnowflakeUniqueAndIncreasingUnderConcurrency: goroutines on
// one generator, on a rebuilt one of the same worker id, and on a SNOWFLAKE
// with Leaf's layout and worker id (the same ID space, so the same state)
// issue unique keys, each goroutine's strictly increasing; on the system
// clock and on a fake clock that moves 50µs per reading.
func TestLeafSnowflakeUniqueAndIncreasingUnderConcurrency(t *testing.T) {
	for _, fake := range []bool{false, true} {
		scope := NewSequenceScope()
		opts := []Option{WithSequenceScope(scope)}
		if fake {
			clk := keygentest.NewClock(leafT0)
			clk.SetStep(50 * time.Microsecond)
			opts = append(opts, WithClock(clk))
		}
		gens := []IDGenerator{
			newLeaf(t, Props{"worker-id": "5"}, seededRandom(5), opts...),
			newLeaf(t, Props{"worker-id": "5"}, seededRandom(6), opts...),
		}
		sf, err := NewID("SNOWFLAKE", Props{"worker-id": "5", "epoch": "1288834974657"}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, sf)
		const perG, batch = 20000, 37
		var wg sync.WaitGroup
		out := make([][]int64, 6)
		for i := range out {
			wg.Go(func() {
				g := gens[i%len(gens)]
				ids := make([]int64, 0, perG)
				buf := make([]int64, batch)
				for len(ids) < perG {
					if i%2 == 0 {
						id, err := g.NextID(context.Background())
						if err != nil {
							t.Error(err)
							return
						}
						ids = append(ids, id)
					} else {
						if err := g.NextIDs(context.Background(), buf); err != nil {
							t.Error(err)
							return
						}
						ids = append(ids, buf...)
					}
				}
				out[i] = ids
			})
		}
		wg.Wait()
		seen := make(map[int64]bool, 6*perG)
		for i, ids := range out {
			for k, id := range ids {
				if k > 0 && id <= ids[k-1] {
					t.Fatalf("fake=%v goroutine %d: %d not above %d", fake, i, id, ids[k-1])
				}
				if seen[id] {
					t.Fatalf("fake=%v: key %d issued twice", fake, id)
				}
				seen[id] = true
				if p := leafParts(t, id); p.Worker != 5 {
					t.Fatalf("worker %d", p.Worker)
				}
			}
		}
	}
}

// TestLeafSnowflakePropErrorsNameTheProp: every bad prop is a *PropError
// naming it; Leaf fixes the layout, so SNOWFLAKE's layout props are unknown
// here, as are Leaf's ZooKeeper settings (a WorkerSource's business).
func TestLeafSnowflakePropErrorsNameTheProp(t *testing.T) {
	for _, c := range []struct {
		props   Props
		key     string
		unknown bool
	}{
		{Props{}, "worker-id", false},
		{Props{"worker-id": "1024"}, "worker-id", false},
		{Props{"worker-id": "-1"}, "worker-id", false},
		{Props{"workerId": "x"}, "workerId", false},
		{Props{"worker-id": "1", "epoch": "yesterday"}, "epoch", false},
		{Props{"worker-id": "1", "twepoch": "-5"}, "twepoch", false},
		{Props{"worker-id": "1", "epoch": "1288834974657", "twepoch": "1288834974657"}, "twepoch", false},
		{Props{"worker-id": "1", "sequence-bits": "12"}, "sequence-bits", true},
		{Props{"worker-id": "1", "max-vibration-offset": "3"}, "max-vibration-offset", true},
		{Props{"worker-id": "1", "leaf.snowflake.zk.address": "zk:2181"}, "leaf.snowflake.zk.address", true},
		{Props{"worker-id": "1", "worker.id": "2"}, "worker.id", false},
	} {
		_, err := New("LEAF_SNOWFLAKE", c.props)
		var pe *PropError
		if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidProps) || pe.Key != c.key || pe.Unknown() != c.unknown || pe.Type != "LEAF_SNOWFLAKE" {
			t.Errorf("%v: %v; want a LEAF_SNOWFLAKE *PropError for %q (unknown %v)", c.props, err, c.key, c.unknown)
		}
	}
	// An epoch in the future is the layout's error, as for SNOWFLAKE.
	if _, err := New("LEAF_SNOWFLAKE", Props{"worker-id": "1", "epoch": "2099-01-01"}); !errors.Is(err, ErrInvalidLayout) {
		t.Errorf("future epoch: %v, want ErrInvalidLayout", err)
	}
	for _, p := range []Props{{"worker-id": "0"}, {"worker-id": "1023", "twepoch": "1288834974657"}, {"workerId": "7", "epoch": "2010-11-04T09:42:54.657+08:00"}} {
		if _, err := New("LEAF_SNOWFLAKE", p); err != nil {
			t.Errorf("%v: %v", p, err)
		}
	}
}

// TestLeafSnowflakeWorkerIDFromEnvAndHostname: worker-id takes SNOWFLAKE's
// env:NAME and hostname forms; an unset variable is an error, never 0.
func TestLeafSnowflakeWorkerIDFromEnvAndHostname(t *testing.T) {
	t.Setenv("SHARDKEY_LEAF_TEST_WORKER", "1000")
	g, err := NewID("LEAF_SNOWFLAKE", Props{"worker-id": "env:SHARDKEY_LEAF_TEST_WORKER"}, WithClock(keygentest.NewClock(leafT0)),
		WithSequenceScope(NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	if p := leafParts(t, leafNext(t, g)); p.Worker != 1000 {
		t.Fatalf("worker %d, want the variable's 1000", p.Worker)
	}
	if _, err := NewID("LEAF_SNOWFLAKE", Props{"worker-id": "env:SHARDKEY_LEAF_TEST_UNSET"}); err == nil {
		t.Fatal("an unset worker id variable built a generator")
	}
	t.Setenv("SHARDKEY_LEAF_TEST_WORKER", "1024")
	if _, err := NewID("LEAF_SNOWFLAKE", Props{"worker-id": "env:SHARDKEY_LEAF_TEST_WORKER"}); err == nil {
		t.Fatal("worker id 1024 from the environment built a generator (Leaf's ids are 0..1023)")
	}
	_, err = newLeafWith(Props{"worker-id": "hostname"}, seededRandom(7), WithSequenceScope(NewSequenceScope()),
		WithWorkerSource(nil))
	if name, herr := os.Hostname(); herr == nil && !hasOrdinal(name) && err == nil {
		t.Fatalf("host name %q has no ordinal, yet hostname built a generator", name)
	}
}

// hasOrdinal reports whether a host name ends in -N.
func hasOrdinal(name string) bool {
	i := strings.LastIndexByte(name, '-')
	_, err := strconv.ParseUint(name[i+1:], 10, 64)
	return i >= 0 && err == nil
}

// BenchmarkLeafSnowflake: LEAF_SNOWFLAKE's NextID on the system clock,
// serial and under RunParallel (capped at 4,096 keys per millisecond less
// the random start, as Leaf's).
func BenchmarkLeafSnowflake(b *testing.B) {
	ctx := context.Background()
	mk := func(b *testing.B) IDGenerator {
		g, err := NewID("LEAF_SNOWFLAKE", Props{"worker-id": "1"}, WithSequenceScope(NewSequenceScope()))
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	b.Run("serial", func(b *testing.B) {
		g := mk(b)
		b.ReportAllocs()
		var s int64
		for b.Loop() {
			id, err := g.NextID(ctx)
			if err != nil {
				b.Fatal(err)
			}
			s += id
		}
		_ = s
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	})
	b.Run("parallel", func(b *testing.B) {
		g := mk(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var s int64
			for pb.Next() {
				id, err := g.NextID(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				s += id
			}
			_ = s
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	})
}

// TestLeafSnowflakeWithRandomGivesDeterministicSequenceStarts: through the
// public New and WithRandom, two generators with the same seeded source and
// the same fake clock issue the same keys, whose millisecond starts are the
// source's draws; a source giving a number outside [0, 100) fails the key.
func TestLeafSnowflakeWithRandomGivesDeterministicSequenceStarts(t *testing.T) {
	run := func() []int64 {
		clk := keygentest.NewClock(leafT0)
		g, err := NewID("LEAF_SNOWFLAKE", Props{"worker-id": "3"}, WithClock(clk),
			WithRandom(seededRandom(42)), WithSequenceScope(NewSequenceScope()))
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for range 50 {
			ids = append(ids, leafNext(t, g))
			clk.Add(time.Millisecond)
		}
		return ids
	}
	a, b := run(), run()
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, same clock, different keys:\n%v\n%v", a, b)
	}
	want := seededRandom(42)
	for i, id := range a {
		if p := leafParts(t, id); p.Sequence != want(100) {
			t.Fatalf("key %d starts its millisecond at sequence %d, not the source's draw", i, p.Sequence)
		}
	}

	bad, err := NewID("LEAF_SNOWFLAKE", Props{"worker-id": "3"}, WithClock(keygentest.NewClock(leafT0)),
		WithRandom(func(int64) int64 { return 100 }), WithSequenceScope(NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := bad.NextID(context.Background()); err == nil {
		t.Fatalf("a random source giving 100 issued %d, want an error", id)
	}
}
