package keygen_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// fakeLease is a Lease whose validity and history the test sets.
type fakeLease struct {
	worker     int64
	last       time.Time
	validUntil atomic.Int64
	tracked    func() time.Time
	closed     atomic.Int32
}

func (f *fakeLease) Worker() int64               { return f.worker }
func (f *fakeLease) LastUsed() time.Time         { return f.last }
func (f *fakeLease) ValidUntil() int64           { return f.validUntil.Load() }
func (f *fakeLease) Track(last func() time.Time) { f.tracked = last }
func (f *fakeLease) Close() error                { f.closed.Add(1); return nil }

type fakeSource struct {
	lease *fakeLease
	info  keygen.WorkerInfo
}

func (s *fakeSource) Acquire(_ context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	s.info = info
	return s.lease, nil
}

var w0 = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)

func leased(t *testing.T, typ string, lease *fakeLease, clock keygen.Clock, props keygen.Props) keygen.IDGenerator {
	t.Helper()
	if props == nil {
		props = keygen.Props{"worker-id": "auto"}
	}
	g, err := keygen.NewID(typ, props, keygen.WithClock(clock), keygen.WithWorkerSource(&fakeSource{lease: lease}))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestWorkerSourceFencing(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "UID", "SNOWFLAKE_JS"} {
		t.Run(typ, func(t *testing.T) {
			clock := keygentest.NewClock(w0)
			lease := &fakeLease{worker: 5}
			lease.validUntil.Store(w0.Add(time.Minute).UnixNano())
			g := leased(t, typ, lease, clock, nil)
			ctx := context.Background()
			id, err := g.NextID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := g.(keygen.Decomposer).Decompose(id); p.Worker != 5 {
				t.Errorf("worker %d, want the lease's 5", p.Worker)
			}
			if lease.tracked == nil || lease.tracked().IsZero() {
				t.Error("the lease is not told the last issued time")
			}
			// Past the lease: refused, whatever the sequence has left.
			clock.Set(w0.Add(time.Minute))
			if _, err := g.NextID(ctx); !errors.Is(err, keygen.ErrLeaseLost) {
				t.Fatalf("past the lease: %v, want ErrLeaseLost", err)
			}
			if err := g.NextIDs(ctx, make([]int64, 3)); !errors.Is(err, keygen.ErrLeaseLost) {
				t.Fatalf("NextIDs past the lease: %v", err)
			}
			// Renewed: it resumes, after the keys it issued.
			lease.validUntil.Store(w0.Add(2 * time.Minute).UnixNano())
			next, err := g.NextID(ctx)
			if err != nil || next <= id {
				t.Fatalf("after renewal: %d, %v (before %d)", next, err, id)
			}
			if sr, ok := g.(keygen.StatsReporter); ok {
				if s := sr.Stats(); s.Issued < 2 || s.LeaseRefusals < 1 {
					t.Errorf("stats %+v", s)
				}
			} else {
				t.Error("no Stats")
			}
			c, ok := g.(interface{ Close() error })
			if !ok {
				t.Fatal("a leased generator is not an io.Closer")
			}
			c.Close()
			c.Close()
			if lease.closed.Load() != 1 {
				t.Errorf("lease closed %d times, want once", lease.closed.Load())
			}
		})
	}
}

// TestWorkerSourceRestartSafety: a worker id last used later than the
// clock reads is waited for within the tolerance, refused beyond it.
func TestWorkerSourceRestartSafety(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "SNOWFLAKE_JS"} {
		t.Run(typ, func(t *testing.T) {
			tol := 10 * time.Millisecond
			if typ == "SNOWFLAKE_JS" {
				tol = time.Second
			}
			clock := keygentest.NewClock(w0)
			lease := &fakeLease{worker: 3, last: w0.Add(tol / 2)}
			lease.validUntil.Store(math.MaxInt64)
			g := leased(t, typ, lease, clock, nil)
			id, err := g.NextID(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			p, _ := g.(keygen.Decomposer).Decompose(id)
			if !p.Time.After(lease.last.Truncate(g.(interface{ Layout() keygen.Layout }).Layout().Unit)) {
				t.Errorf("first key at %s, not after the worker's last use %s", p.Time, lease.last)
			}
			if typ == "SNOWFLAKE" && len(clock.Sleeps()) == 0 {
				// (SNOWFLAKE_JS may instead borrow the next second, its design.)
				t.Error("the generator did not wait for its clock to pass the last use")
			}

			far := &fakeLease{worker: 3, last: w0.Add(tol + 5*time.Second)}
			far.validUntil.Store(math.MaxInt64)
			_, err = keygen.NewID(typ, keygen.Props{"worker-id": "auto"}, keygen.WithClock(keygentest.NewClock(w0)),
				keygen.WithWorkerSource(&fakeSource{lease: far}))
			var cb *keygen.ClockBackwardsError
			if !errors.As(err, &cb) {
				t.Fatalf("last use beyond the tolerance: %v, want *ClockBackwardsError", err)
			}
			if far.closed.Load() != 1 {
				t.Error("a refused generator did not release its lease")
			}
		})
	}
}

func TestWorkerProps(t *testing.T) {
	t.Setenv("SK_WORKER", "12")
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "env:SK_WORKER"})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := g.NextID(context.Background())
	if p, _ := g.(keygen.Decomposer).Decompose(id); p.Worker != 12 {
		t.Errorf("env worker %d", p.Worker)
	}
	for _, c := range []struct {
		props keygen.Props
		opts  []keygen.Option
	}{
		{keygen.Props{"worker-id": "env:SK_UNSET_VARIABLE"}, nil},
		{keygen.Props{"worker-id": "auto"}, nil},
		{keygen.Props{"worker-id": "7"}, []keygen.Option{keygen.WithWorkerSource(keygen.StaticWorker(1))}},
		{keygen.Props{"worker-id": "hostname"}, nil}, // this host's name has no -N ordinal
	} {
		if _, err := keygen.NewID("SNOWFLAKE", c.props, c.opts...); err == nil {
			t.Errorf("%v: no error", c.props)
		}
	}
	t.Setenv("SK_WORKER", "1024")
	if _, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "env:SK_WORKER"}); err == nil {
		t.Error("worker 1024 accepted for a 10-bit field")
	}
	// The option alone, with no worker-id prop.
	g, err = keygen.NewID("SNOWFLAKE", nil, keygen.WithWorkerSource(keygen.StaticWorker(4)))
	if err != nil {
		t.Fatal(err)
	}
	id, _ = g.NextID(context.Background())
	if p, _ := g.(keygen.Decomposer).Decompose(id); p.Worker != 4 {
		t.Errorf("source worker %d", p.Worker)
	}
}

func TestHostnameOrdinal(t *testing.T) {
	info := keygen.WorkerInfo{MaxWorker: 1023}
	for name, want := range map[string]int64{"web-0": 0, "orders-db-17": 17} {
		l, err := keygen.HostnameOrdinal{Hostname: func() (string, error) { return name, nil }}.Acquire(context.Background(), info)
		if err != nil || l.Worker() != want {
			t.Errorf("%s: %v, %v", name, l, err)
		}
	}
	l, err := keygen.HostnameOrdinal{Offset: 100, Hostname: func() (string, error) { return "web-3", nil }}.Acquire(context.Background(), info)
	if err != nil || l.Worker() != 103 {
		t.Errorf("offset: %v, %v", l, err)
	}
	for _, bad := range []string{"web", "web-x", "web-", "web-2000"} {
		if _, err := (keygen.HostnameOrdinal{Hostname: func() (string, error) { return bad, nil }}).Acquire(context.Background(), info); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLeasedSnowflakeOnAFlagBumpedStateNeverRepeatsItsKeys: a generator
// whose lease floor lies after the tick of a state it shares (same clock and
// worker id) whose clock-back flag was bumped keeps that flag: moving the
// state to the floor with flag 0 again repeated the keys issued before the
// bump, at the ticks between the floor and the bump.
func TestLeasedSnowflakeOnAFlagBumpedStateNeverRepeatsItsKeys(t *testing.T) {
	clk := keygentest.NewClock(w0)
	fixed, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "5", "clock-back-bits": "1", "max-vibration-offset": "0"},
		keygen.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for range 60 { // one key a millisecond, each with sequence 0
		seen[next(t, fixed)] = true
		clk.Add(time.Millisecond)
	}
	clk.Add(-50 * time.Millisecond) // beyond the tolerance: the flag goes to 1
	id := next(t, fixed)
	if p := decompose(t, fixed, id); p.ClockBack != 1 {
		t.Fatalf("after the step back: flag %d, want 1", p.ClockBack)
	}
	seen[id] = true
	lease := &fakeLease{worker: 5, last: clk.Now().Add(3 * time.Millisecond)}
	lease.validUntil.Store(math.MaxInt64)
	g := leased(t, "SNOWFLAKE", lease, clk, keygen.Props{"worker-id": "auto", "clock-back-bits": "1", "max-vibration-offset": "0"})
	for range 60 {
		id := next(t, g)
		if seen[id] {
			t.Fatalf("key %d (%+v) issued twice", id, decompose(t, g, id))
		}
		if p := decompose(t, g, id); !p.Time.After(lease.last) {
			t.Fatalf("key at %v, not after the lease's last use %v", p.Time, lease.last)
		}
		seen[id] = true
		clk.Add(time.Millisecond)
	}
}

// TestLeasedSnowflakeIssuesNoKeyAfterClose: Close releases the worker id,
// so the generator refuses keys afterwards (ErrLeaseLost) even when the
// lease itself never expires (a state file's or a disposable id): another
// process may hold the id by then, and a state file has recorded the last
// use Close saw.
func TestLeasedSnowflakeIssuesNoKeyAfterClose(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "UID", "SNOWFLAKE_JS"} {
		lease := &fakeLease{worker: 2}
		lease.validUntil.Store(math.MaxInt64)
		g := leased(t, typ, lease, keygentest.NewClock(w0), nil)
		next(t, g)
		if err := g.(interface{ Close() error }).Close(); err != nil {
			t.Fatal(err)
		}
		if id, err := g.NextID(ctx); !errors.Is(err, keygen.ErrLeaseLost) {
			t.Errorf("%s: NextID after Close = %d, %v; want ErrLeaseLost", typ, id, err)
		}
		if err := g.NextIDs(ctx, make([]int64, 2)); !errors.Is(err, keygen.ErrLeaseLost) {
			t.Errorf("%s: NextIDs after Close: %v; want ErrLeaseLost", typ, err)
		}
	}
}
