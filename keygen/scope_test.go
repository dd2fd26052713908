package keygen

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen/keygentest"
)

// TestSequenceScopePrunesOnlyUnusedIdleStates: a scope drops the states
// of collected generators on a SystemClock whose last ID is long past; a
// live generator's state stays.
func TestSequenceScopePrunesOnlyUnusedIdleStates(t *testing.T) {
	scope := NewSequenceScope()
	var skew time.Duration
	clk := skewedClock(&skew)
	keep, err := NewID("SNOWFLAKE", Props{"worker-id": "1000"}, WithClock(clk), WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keep.NextID(context.Background()); err != nil {
		t.Fatal(err)
	}
	const released = 300
	for w := range released {
		g, err := NewID("SNOWFLAKE", Props{"worker-id": strconv.Itoa(w)}, WithClock(clk), WithSequenceScope(scope))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.NextID(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	skew = time.Minute // the timeline adopts it at its next wall check
	clk.tl.nextCheck.Store(0)
	clk.Now()
	// The scope is this test's own: every unused state is one of its
	// collected generators'.
	waitReleased(t, scope, released)
	scope.lock()
	scope.prune()
	_, kept := scope.slots[spaceKey(clk, "snowflake", keep.(*snowflake).layout, keep.(*snowflake).fixed)]
	n := len(scope.slots)
	scope.mu.Unlock()
	if !kept {
		t.Fatal("the live generator's state was dropped")
	}
	if n != 1 {
		t.Fatalf("%d states kept, want only the live generator's", n)
	}
	runtime.KeepAlive(keep)
}

// TestSequenceScopeKeepsStatesOfClocksThatMayStepBack: the state of a
// clock other than SystemClock is kept when released and idle, so a
// generator rebuilt after that clock stepped back continues after its
// predecessor's IDs, or meets the step as its predecessor would have (a
// *ClockBackwardsError), instead of repeating them.
func TestSequenceScopeKeepsStatesOfClocksThatMayStepBack(t *testing.T) {
	scope := NewSequenceScope()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := keygentest.NewClock(start)
	props := Props{"worker-id": "3", "max-vibration-offset": "0"}
	ctx := context.Background()
	ids := func() []int64 {
		g, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(scope))
		if err != nil {
			t.Fatal(err)
		}
		ids, err := issue(g, 10)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}()
	waitReleased(t, scope, 1)
	clk.Add(time.Minute)
	scope.lock()
	scope.prune()
	scope.mu.Unlock()
	clk.Set(start) // back to the tick the released generator used
	g, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := g.NextID(ctx); err != nil || id <= slices.Max(ids) {
		t.Fatalf("the rebuilt generator issued %d (%v) after the clock stepped back, want after its predecessor's %d", id, err, slices.Max(ids))
	}
	clk.Set(start.Add(-time.Second))
	var back *ClockBackwardsError
	if id, err := g.NextID(ctx); !errors.As(err, &back) {
		t.Fatalf("a second before its predecessor's IDs the generator issued %d (%v), want a *ClockBackwardsError", id, err)
	}
}

// waitReleased collects garbage until at least n of scope's states have no
// generator, or fails after 30 s.
func waitReleased(t *testing.T, scope *SequenceScope, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		scope.lock()
		unused := 0
		for _, e := range scope.slots {
			if e.refs.Load() == 0 {
				unused++
			}
		}
		scope.mu.Unlock()
		if unused >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d states released after 30 s", unused, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSequenceScopeSameWorkerNeverCollidesUnderConcurrency: generators of
// one worker built and used at once in one scope — each on a SystemClock
// of its own, SNOWFLAKE beside a UID of the same layout, SNOWFLAKE_JS —
// never issue the same ID.
func TestSequenceScopeSameWorkerNeverCollidesUnderConcurrency(t *testing.T) {
	uidLayout := Props{"worker-id": "9", "time-unit": "1s", "epoch": "2016-05-20T00:00:00Z",
		"time-bits": "31", "worker-bits": "19", "sequence-bits": "13", "max-vibration-offset": "0"}
	for _, tc := range []struct {
		name  string
		build func(i int, opts ...Option) (IDGenerator, error)
	}{
		{"SNOWFLAKE", func(_ int, opts ...Option) (IDGenerator, error) {
			return NewID("SNOWFLAKE", Props{"worker-id": "9", "sequence-bits": "3"}, opts...)
		}},
		{"SNOWFLAKE and UID of one layout", func(i int, opts ...Option) (IDGenerator, error) {
			if i%2 == 0 {
				return NewID("UID", Props{"worker-id": "9"}, opts...)
			}
			return NewID("SNOWFLAKE", uidLayout, opts...)
		}},
		{"SNOWFLAKE_JS", func(_ int, opts ...Option) (IDGenerator, error) {
			return NewID("SNOWFLAKE_JS", Props{"worker-id": "9"}, opts...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scope := NewSequenceScope()
			const builders, perBuilder, rounds = 4, 3, 300
			var (
				mu   sync.Mutex
				seen = map[int64]bool{}
				wg   sync.WaitGroup
			)
			for b := range builders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range perBuilder {
						g, err := tc.build(b*perBuilder+k, WithSequenceScope(scope), WithClock(NewSystemClock(nil)))
						if err != nil {
							t.Error(err)
							return
						}
						ids, err := issue(g, rounds)
						mu.Lock()
						for _, id := range ids {
							if seen[id] {
								t.Errorf("ID %d issued twice", id)
							}
							seen[id] = true
						}
						mu.Unlock()
						if err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if n := scope.Spaces(); n != 1 {
				t.Fatalf("the scope holds %d spaces, want the one all its generators share", n)
			}
		})
	}
}

// issue takes IDs from g in rounds, NextID and NextIDs of two alternating.
func issue(g IDGenerator, rounds int) ([]int64, error) {
	ids := make([]int64, 0, rounds*2)
	buf := make([]int64, 2)
	for r := range rounds {
		if r%2 == 0 {
			id, err := g.NextID(context.Background())
			if err != nil {
				return ids, err
			}
			ids = append(ids, id)
			continue
		}
		if err := g.NextIDs(context.Background(), buf); err != nil {
			return ids, err
		}
		ids = append(ids, buf...)
	}
	return ids, nil
}

// TestSequenceScopesAreIndependent: generators of one worker and clock in
// two scopes share nothing — each starts at the same first ID and counts
// only its own — while a third generator in the first scope continues
// after the first.
func TestSequenceScopesAreIndependent(t *testing.T) {
	clk := keygentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	props := Props{"worker-id": "4", "max-vibration-offset": "0"}
	a, b := NewSequenceScope(), NewSequenceScope()
	ga, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(a))
	if err != nil {
		t.Fatal(err)
	}
	gb, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(b))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	idA, err := ga.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idB, err := gb.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if idA != idB {
		t.Fatalf("first IDs %d and %d: the scopes share state", idA, idB)
	}
	if sa, sb := ga.(StatsReporter).Stats().Issued, gb.(StatsReporter).Stats().Issued; sa != 1 || sb != 1 {
		t.Fatalf("Issued %d and %d, want 1 each", sa, sb)
	}
	ga2, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(a))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ga2.NextID(ctx); err != nil || id <= idA {
		t.Fatalf("a second generator in the first scope issued %d (%v), want after %d", id, err, idA)
	}
}

// TestSequenceScopeDefaultWhenUnset: a generator built without
// WithSequenceScope, or with nil, shares DefaultSequenceScope's state, and
// a custom factory receives that scope in its Options.
func TestSequenceScopeDefaultWhenUnset(t *testing.T) {
	clk := keygentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	props := Props{"worker-id": "5", "max-vibration-offset": "0"}
	g1, err := NewID("SNOWFLAKE", props, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	g2, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(nil))
	if err != nil {
		t.Fatal(err)
	}
	g3, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(DefaultSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var last int64
	for i, g := range []IDGenerator{g1, g2, g3} {
		id, err := g.NextID(ctx)
		if err != nil || id <= last {
			t.Fatalf("generator %d issued %d (%v) after %d: not one shared state", i+1, id, err, last)
		}
		last = id
	}
	// Registered once per process (-count reruns the test); the factory
	// reports through a package variable.
	f := func(_ Props, o Options) (Generator, error) {
		factoryScope = o.SequenceScope
		return constGenerator{}, nil
	}
	if err := Register("TEST_SCOPE_OPTIONS", f); err != nil && !errors.Is(err, ErrDuplicateType) {
		t.Fatal(err)
	}
	factoryScope = nil
	if _, err := New("TEST_SCOPE_OPTIONS", nil); err != nil || factoryScope != DefaultSequenceScope() {
		t.Fatalf("a factory received scope %p (%v), want the default %p", factoryScope, err, DefaultSequenceScope())
	}
}

// factoryScope is the SequenceScope TEST_SCOPE_OPTIONS's factory last received.
var factoryScope *SequenceScope

type constGenerator struct{}

func (constGenerator) Type() string                         { return "TEST_SCOPE_OPTIONS" }
func (constGenerator) NextKey(context.Context) (any, error) { return int64(1), nil }

// TestSequenceScopeKeepsAReleasedStateUntilIdle: a generator rebuilt after
// its predecessor was garbage collected continues after the predecessor's
// IDs (the state outlives it while recent); once the state is idle on its
// SystemClock and pruned, the scope no longer holds it.
func TestSequenceScopeKeepsAReleasedStateUntilIdle(t *testing.T) {
	scope := NewSequenceScope()
	var skew time.Duration
	clk := skewedClock(&skew)
	props := Props{"worker-id": "6", "max-vibration-offset": "0"}
	ctx := context.Background()
	last := func() int64 {
		g, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(scope))
		if err != nil {
			t.Fatal(err)
		}
		ids, err := issue(g, 10)
		if err != nil {
			t.Fatal(err)
		}
		return ids[len(ids)-1]
	}()
	waitReleased(t, scope, 1)
	g, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := g.NextID(ctx); err != nil || id <= last {
		t.Fatalf("the rebuilt generator issued %d (%v), want after its predecessor's %d", id, err, last)
	}
	g = nil
	waitReleased(t, scope, 1)
	skew = slotIdle + time.Second
	clk.tl.nextCheck.Store(0)
	clk.Now()
	scope.lock()
	scope.prune()
	n := len(scope.slots)
	scope.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d states kept after their generators were collected and the clock passed %v", n, slotIdle)
	}
}

// TestSequenceScopeKeepsACachedUIDSpaceAfterClose: a CACHED_UID closed and
// rebuilt in its scope continues after the seconds it filled ahead of the
// clock, and a UID of its space is refused while it is open there; in
// another scope the UID is built.
func TestSequenceScopeKeepsACachedUIDSpaceAfterClose(t *testing.T) {
	scope := NewSequenceScope()
	clk := keygentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	props := Props{"worker-id": "7", "sequence-bits": "2", "boost-power": "1"}
	build := func() IDGenerator {
		g, err := NewID("CACHED_UID", props, WithClock(clk), WithSequenceScope(scope))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	first := build()
	ids, err := issue(first, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewID("UID", Props{"worker-id": "7", "sequence-bits": "2"}, WithClock(clk), WithSequenceScope(scope)); !errors.Is(err, ErrIDSpaceInUse) {
		t.Fatalf("a UID beside an open CACHED_UID of its space: %v, want ErrIDSpaceInUse", err)
	}
	if _, err := NewID("UID", Props{"worker-id": "7", "sequence-bits": "2"}, WithClock(clk), WithSequenceScope(NewSequenceScope())); err != nil {
		t.Fatalf("a UID in another scope: %v", err)
	}
	if err := first.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	second := build()
	defer second.(interface{ Close() error }).Close()
	id, err := second.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if max := ids[len(ids)-1]; id <= max {
		t.Fatalf("the rebuilt CACHED_UID issued %d, want after %d (the seconds its predecessor filled)", id, max)
	}
}

// funcClock is a Clock whose type cannot be compared with ==.
type funcClock func() time.Time

func (f funcClock) Now() time.Time      { return f() }
func (f funcClock) Sleep(time.Duration) {}

// boxClock is a Clock of a comparable type that may hold a value that is
// not: comparing two of them can panic.
type boxClock struct{ inner any }

func (b boxClock) Now() time.Time      { return b.inner.(funcClock)() }
func (b boxClock) Sleep(time.Duration) {}

// TestSequenceScopeSharesAcrossNonComparableClocks: two values of a clock
// type that cannot be compared cannot be told apart, so their generators
// share (fail closed) instead of each starting afresh; a comparable clock
// type holding a non-comparable value is no panic.
func TestSequenceScopeSharesAcrossNonComparableClocks(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	props := Props{"worker-id": "8", "max-vibration-offset": "0"}
	for name, clock := range map[string]func() Clock{
		"func type":             func() Clock { return funcClock(func() time.Time { return at }) },
		"struct holding a func": func() Clock { return boxClock{funcClock(func() time.Time { return at })} },
	} {
		t.Run(name, func(t *testing.T) {
			scope := NewSequenceScope()
			var last int64
			for i := range 2 {
				g, err := NewID("SNOWFLAKE", props, WithClock(clock()), WithSequenceScope(scope))
				if err != nil {
					t.Fatal(err)
				}
				id, err := g.NextID(context.Background())
				if err != nil || id <= last {
					t.Fatalf("generator %d issued %d (%v) after %d", i+1, id, err, last)
				}
				last = id
			}
		})
	}
}

// TestSequenceScopeSharesLayoutsThatIssueTheSameIDs: layouts that differ
// only where the IDs do not — the time field's width (it only bounds the
// top field), how the machine bits split between datacenter and worker —
// are one ID space, so their generators share a state instead of issuing
// the same IDs; a CACHED_UID meets the guard of a UID so written.
func TestSequenceScopeSharesLayoutsThatIssueTheSameIDs(t *testing.T) {
	base := Props{"worker-id": "33", "max-vibration-offset": "0"}
	with := func(kv ...string) Props {
		p := Props{}
		for k, v := range base {
			p[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	for name, other := range map[string]Props{
		"time-bits":            with("time-bits", "40"),
		"datacenter split":     with("worker-id", "1", "datacenter-bits", "5", "datacenter-id", "1"),
		"both, other epoch tz": with("time-bits", "40", "worker-id", "1", "datacenter-bits", "5", "datacenter-id", "1", "epoch", "2016-11-01T08:00:00+08:00"),
	} {
		t.Run(name, func(t *testing.T) {
			scope := NewSequenceScope()
			clk := keygentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			seen := map[int64]bool{}
			for i, props := range []Props{base, other, base, other} {
				g, err := NewID("SNOWFLAKE", props, WithClock(clk), WithSequenceScope(scope))
				if err != nil {
					t.Fatal(err)
				}
				ids, err := issue(g, 3)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range ids {
					if seen[id] {
						t.Fatalf("generator %d (%v) issued %d again", i+1, props, id)
					}
					seen[id] = true
				}
			}
			if n := scope.Spaces(); n != 1 {
				t.Fatalf("the scope holds %d spaces, want 1", n)
			}
		})
	}
	t.Run("UID time-bits beside CACHED_UID", func(t *testing.T) {
		scope := NewSequenceScope()
		clk := keygentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		c, err := NewID("CACHED_UID", Props{"worker-id": "3"}, WithClock(clk), WithSequenceScope(scope))
		if err != nil {
			t.Fatal(err)
		}
		defer c.(interface{ Close() error }).Close()
		if _, err := NewID("UID", Props{"worker-id": "3", "time-bits": "30"}, WithClock(clk), WithSequenceScope(scope)); !errors.Is(err, ErrIDSpaceInUse) {
			t.Fatalf("a UID differing only in time-bits beside an open CACHED_UID: %v, want ErrIDSpaceInUse", err)
		}
	})
}

// TestSequenceScopeNilIsTheDefault: a nil *SequenceScope is the default
// scope to its methods as to WithSequenceScope, never a panic.
func TestSequenceScopeNilIsTheDefault(t *testing.T) {
	var s *SequenceScope
	if got, want := s.Spaces(), DefaultSequenceScope().Spaces(); got != want {
		t.Fatalf("nil scope holds %d spaces, the default %d", got, want)
	}
	var zero SequenceScope
	if n := zero.Spaces(); n != 0 {
		t.Fatalf("a zero scope holds %d spaces", n)
	}
	if _, err := NewID("SNOWFLAKE", Props{"worker-id": "1"}, WithSequenceScope(&zero)); err != nil {
		t.Fatal(err)
	}
	if n := zero.Spaces(); n != 1 {
		t.Fatalf("a zero scope holds %d spaces after one generator, want 1", n)
	}
}

// TestSequenceScopeUIDAfterCachedUIDNeverReissuesItsSeconds: a UID built
// in a space a closed CACHED_UID filled seconds of starts after those
// seconds, so a clock that then steps back into them meets the step (UID
// refuses any) instead of reissuing the CACHED_UID's IDs.
func TestSequenceScopeUIDAfterCachedUIDNeverReissuesItsSeconds(t *testing.T) {
	scope := NewSequenceScope()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := keygentest.NewClock(start)
	cached, err := NewID("CACHED_UID", Props{"worker-id": "7", "sequence-bits": "2", "boost-power": "1"},
		WithClock(clk), WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := issue(cached, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := cached.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	issued := map[int64]bool{}
	for _, id := range ids {
		issued[id] = true
	}
	clk.Add(time.Hour) // past every second the CACHED_UID filled: a UID may be built
	uid, err := NewID("UID", Props{"worker-id": "7", "sequence-bits": "2"}, WithClock(clk), WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(start)
	for range 8 {
		id, err := uid.NextID(context.Background())
		if issued[id] {
			t.Fatalf("the UID reissued the CACHED_UID's %d after the clock stepped back", id)
		}
		var back *ClockBackwardsError
		if !errors.As(err, &back) {
			t.Fatalf("the UID issued %d (%v) in seconds the CACHED_UID filled, want a *ClockBackwardsError", id, err)
		}
	}
}

// meteredClock is a Clock that wraps a SystemClock, as one adding metrics
// or logging would.
type meteredClock struct {
	*SystemClock
	reads *atomic.Int64
}

func (m meteredClock) Now() time.Time { m.reads.Add(1); return m.SystemClock.Now() }

// TestSequenceScopeCountsAClockEmbeddingSystemClockAsIt: a clock type that
// embeds *SystemClock reads the process's time, so its generators share
// the state of generators on a bare SystemClock instead of issuing the
// same IDs beside them.
func TestSequenceScopeCountsAClockEmbeddingSystemClockAsIt(t *testing.T) {
	scope := NewSequenceScope()
	props := Props{"worker-id": "11", "sequence-bits": "2", "max-tolerate-time-difference-milliseconds": "0"}
	plain, err := NewID("SNOWFLAKE", props, WithClock(NewSystemClock(nil)), WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	metered, err := NewID("SNOWFLAKE", props, WithClock(meteredClock{NewSystemClock(nil), new(atomic.Int64)}), WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for i := range 200 {
		g := plain
		if i%2 == 1 {
			g = metered
		}
		id, err := g.NextID(context.Background())
		if err != nil || seen[id] {
			t.Fatalf("key %d: %d (%v), seen before: %v", i, id, err, seen[id])
		}
		seen[id] = true
	}
	if n := scope.Spaces(); n != 1 {
		t.Fatalf("%d spaces, want 1", n)
	}
}

// reentrantClock builds a generator in scope at every Now: a custom clock
// is the user's code, which may use keygen itself.
type reentrantClock struct {
	scope *SequenceScope
	mu    sync.Mutex
	err   error
}

func (c *reentrantClock) Now() time.Time {
	_, err := NewID("SNOWFLAKE", Props{"worker-id": "2"}, WithSequenceScope(c.scope))
	c.mu.Lock()
	c.err = errors.Join(c.err, err)
	c.mu.Unlock()
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
}

func (c *reentrantClock) Sleep(time.Duration) {}

// TestSequenceScopeNeverReadsAClockLocked: building a generator reads its
// clock with the scope unlocked, so a clock that itself builds a generator
// in the scope is no deadlock.
func TestSequenceScopeNeverReadsAClockLocked(t *testing.T) {
	scope := NewSequenceScope()
	for _, typ := range []string{"SNOWFLAKE", "UID", "SNOWFLAKE_JS", "CACHED_UID"} {
		clk := &reentrantClock{scope: scope}
		done := make(chan error, 1)
		go func() {
			g, err := NewID(typ, Props{"worker-id": "1"}, WithClock(clk), WithSequenceScope(scope))
			if c, ok := g.(interface{ Close() error }); ok {
				c.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			clk.mu.Lock()
			inner := clk.err
			clk.mu.Unlock()
			if err != nil || inner != nil {
				t.Fatalf("%s: %v; the clock's own generators: %v", typ, err, inner)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: New still blocked after 10 s: the scope was locked while the clock was read", typ)
		}
	}
}

// TestSequenceScopeUIDAndCachedUIDNeverCollideUnderConcurrency: UIDs and
// CACHED_UIDs of one worker, built and used by several goroutines at once
// in one scope, in turns of one type, closed or dropped unclosed, never
// issue the same ID; a build either succeeds or is refused with
// ErrIDSpaceInUse.
func TestSequenceScopeUIDAndCachedUIDNeverCollideUnderConcurrency(t *testing.T) {
	scope := NewSequenceScope()
	clk := keygentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	clk.SetStep(10 * time.Millisecond) // time passes as the generators read the clock
	turns := 30
	if testing.Short() {
		turns = 8
	}
	var (
		mu    sync.Mutex
		seen  = map[int64]bool{}
		built = map[string]int{}
	)
	for turn := range turns {
		typ, props := "UID", Props{"worker-id": "21", "sequence-bits": "3"}
		if turn%2 == 1 {
			typ, props = "CACHED_UID", Props{"worker-id": "21", "sequence-bits": "3", "boost-power": "1"}
		}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g, err := NewID(typ, props, WithClock(clk), WithSequenceScope(scope))
				if errors.Is(err, ErrIDSpaceInUse) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				ids, err := issue(g, 6)
				if c, ok := g.(interface{ Close() error }); ok && w != 0 { // one of four dropped unclosed
					c.Close()
				}
				var back *ClockBackwardsError
				if err != nil && !errors.As(err, &back) {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				built[typ]++
				for _, id := range ids {
					if seen[id] {
						t.Errorf("ID %d issued twice", id)
					}
					seen[id] = true
				}
			}()
		}
		wg.Wait()
		runtime.GC()
		clk.Add(3 * time.Second) // past the seconds a CACHED_UID filled ahead
	}
	t.Logf("built %v, %d IDs", built, len(seen))
	if built["UID"] == 0 || built["CACHED_UID"] == 0 {
		t.Fatalf("built %v: the test needs both types", built)
	}
}

// TestCachedUIDAfterAReleasedUIDSkipsItsClockSecond: a UID released by
// the garbage collector may still be in its last call (a generator can be
// collected once that call no longer needs it, before its key is stored),
// with a key of the clock's current second on its way; a CACHED_UID built
// in its space then starts at the next second.
func TestCachedUIDAfterAReleasedUIDSkipsItsClockSecond(t *testing.T) {
	scope := NewSequenceScope()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := keygentest.NewClock(start)
	func() {
		g, err := NewID("UID", Props{"worker-id": "23"}, WithClock(clk), WithSequenceScope(scope))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.NextID(context.Background()); err != nil {
			t.Fatal(err)
		}
	}()
	waitReleased(t, scope, 1)
	clk.Add(5*time.Second + 500*time.Millisecond)
	g, err := NewID("CACHED_UID", Props{"worker-id": "23"}, WithClock(clk), WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	defer g.(interface{ Close() error }).Close()
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.(Decomposer).Decompose(id)
	if want := clk.Now().Truncate(time.Second).Add(time.Second); err != nil || p.Time.Before(want) {
		t.Fatalf("the CACHED_UID's first key is of %v (%v), want %v or later", p.Time, err, want)
	}
}
