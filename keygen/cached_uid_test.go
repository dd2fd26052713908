package keygen_test

import (
	"context"
	"errors"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// cuLayout is the small deterministic layout of the CACHED_UID tests:
// 2^seqBits IDs per second.
const cuSeqBits = 8

var cuEpoch = time.Date(2016, 5, 20, 0, 0, 0, 0, time.UTC)

// cuSecond is t's second since cuEpoch.
func cuSecond(t time.Time) int64 { return int64(t.Sub(cuEpoch) / time.Second) }

func newCachedUID(t testing.TB, p keygen.Props, opts ...keygen.Option) (keygen.IDGenerator, *keygentest.Clock) {
	t.Helper()
	clk := keygentest.NewClock(t0)
	g, err := keygen.NewID("CACHED_UID", p, append([]keygen.Option{keygen.WithClock(clk)}, opts...)...)
	if err != nil {
		t.Fatalf("NewID(CACHED_UID, %v): %v", p, err)
	}
	t.Cleanup(func() { g.(io.Closer).Close() })
	return g, clk
}

// testLease is a Lease whose validity the test moves; ValidUntil blocks
// while the gate is shut (to hold the filler), except when Stats reads it
// (a test polls Stats while the filler is held).
type testLease struct {
	worker   int64
	lastUsed time.Time
	valid    atomic.Int64
	gateMu   sync.Mutex
	gate     chan struct{} // nil: open
	track    atomic.Pointer[func() time.Time]
	closes   atomic.Int32
}

func (l *testLease) Acquire(context.Context, keygen.WorkerInfo) (keygen.Lease, error) { return l, nil }
func (l *testLease) Worker() int64                                                    { return l.worker }
func (l *testLease) LastUsed() time.Time                                              { return l.lastUsed }
func (l *testLease) ValidUntil() int64 {
	l.gateMu.Lock()
	g := l.gate
	l.gateMu.Unlock()
	if g != nil && !calledFromStats() {
		<-g
	}
	return l.valid.Load()
}

// calledFromStats reports whether a generator's Stats is among the
// callers: the lease's validity is what Stats reports, the filler's
// check is what the gate holds.
func calledFromStats() bool {
	pc := make([]uintptr, 16)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, ").Stats") {
			return true
		}
		if !more {
			return false
		}
	}
}
func (l *testLease) Track(f func() time.Time) { l.track.Store(&f) }
func (l *testLease) Close() error             { l.closes.Add(1); return nil }
func (l *testLease) shut() {
	l.gateMu.Lock()
	l.gate = make(chan struct{})
	l.gateMu.Unlock()
}
func (l *testLease) open() {
	l.gateMu.Lock()
	if l.gate != nil {
		close(l.gate)
		l.gate = nil
	}
	l.gateMu.Unlock()
}

// tracked is the last filled second the generator reported to the lease.
func (l *testLease) tracked() int64 {
	f := l.track.Load()
	if f == nil || (*f)().IsZero() {
		return -1
	}
	return cuSecond((*f)())
}

func newTestLease(worker int64) *testLease {
	l := &testLease{worker: worker}
	l.valid.Store(math.MaxInt64)
	return l
}

// verifyNoLeak checks, after the test's other cleanups (which close the
// generators), that no goroutine was left behind.
func verifyNoLeak(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCachedUIDConcurrent: 16 goroutines take IDs (singly and in runs)
// while the filler refills; the IDs are unique, each goroutine's increase,
// and together they are exactly a prefix of the worker's (second,
// sequence) space from the start second: no ID lost, none repeated.
func TestCachedUIDConcurrent(t *testing.T) {
	verifyNoLeak(t)
	const goroutines, perG = 16, 100_000
	for _, policy := range []string{"wait", "error"} {
		t.Run("policy="+policy, func(t *testing.T) {
			g, _ := newCachedUID(t, keygen.Props{"worker-id": "5", "sequence-bits": "8", "boost-power": "3", "rejection-policy": policy})
			res := make([][]int64, goroutines)
			var wg sync.WaitGroup
			for w := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids := make([]int64, 0, perG)
					batch := make([]int64, 1+w*7%50)
					for len(ids) < perG {
						if w%2 == 0 {
							id, err := g.NextID(ctx)
							if errors.Is(err, keygen.ErrUIDBufferEmpty) && policy == "error" {
								continue
							}
							if err != nil {
								t.Error(err)
								return
							}
							ids = append(ids, id)
							continue
						}
						b := batch[:min(len(batch), perG-len(ids))]
						err := g.NextIDs(ctx, b)
						if errors.Is(err, keygen.ErrUIDBufferEmpty) && policy == "error" {
							continue // the IDs written are valid but dropped: the check below needs every taken ID
						}
						if err != nil {
							t.Error(err)
							return
						}
						ids = append(ids, b...)
					}
					res[w] = ids
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			var all []int64
			for w, ids := range res {
				if !slices.IsSorted(ids) {
					t.Fatalf("goroutine %d: IDs not increasing", w)
				}
				all = append(all, ids...)
			}
			l := g.(keygen.Decomposer)
			slices.Sort(all)
			s0 := cuSecond(t0)
			perSec := int64(1) << cuSeqBits
			issued := g.(keygen.StatsReporter).Stats().Issued
			if policy == "wait" && issued != uint64(len(all)) {
				t.Errorf("Stats().Issued = %d, want %d", issued, len(all))
			}
			if policy == "error" && issued < uint64(len(all)) {
				t.Errorf("Stats().Issued = %d, want at least %d", issued, len(all))
			}
			for i, id := range all {
				p, err := l.Decompose(id)
				if err != nil {
					t.Fatal(err)
				}
				if p.Worker != 5 {
					t.Fatalf("ID %d has worker %d", id, p.Worker)
				}
				pos := (p.Timestamp-s0)*perSec + p.Sequence
				if policy == "wait" && pos != int64(i) {
					t.Fatalf("sorted ID #%d is position %d (second %d, sequence %d): duplicate or hole", i, pos, p.Timestamp-s0, p.Sequence)
				}
				if i > 0 && all[i-1] == id {
					t.Fatalf("duplicate ID %d", id)
				}
			}
		})
	}
}

// TestCachedUIDLayout: the IDs decompose into UID's layout, starting at
// the clock's second with sequence 0, and borrow the following seconds.
func TestCachedUIDLayout(t *testing.T) {
	g, _ := newCachedUID(t, keygen.Props{"workerId": "9", "sequenceBits": "4", "boostPower": "1"})
	dst := make([]int64, 40)
	if err := g.NextIDs(ctx, dst); err != nil {
		t.Fatal(err)
	}
	l := g.(keygen.Decomposer)
	for i, id := range dst {
		p, _ := l.Decompose(id)
		if want := cuSecond(t0) + int64(i/16); p.Timestamp != want || p.Sequence != int64(i%16) || p.Worker != 9 {
			t.Fatalf("ID #%d = %+v, want second %d sequence %d worker 9", i, p, want, i%16)
		}
	}
	if typ := g.Type(); typ != "CACHED_UID" {
		t.Errorf("Type() = %q", typ)
	}
	if k, err := g.NextKey(ctx); err != nil || k.(int64) <= dst[39] {
		t.Errorf("NextKey = %v, %v", k, err)
	}
}

// TestCachedUIDRejection: with the filler held, an empty ring gives
// ErrUIDBufferEmpty at once (error) or when the context ends (wait).
func TestCachedUIDRejection(t *testing.T) {
	verifyNoLeak(t)
	for _, policy := range []string{"wait", "error"} {
		t.Run(policy, func(t *testing.T) {
			lease := newTestLease(2)
			g, _ := newCachedUID(t, keygen.Props{"sequence-bits": "4", "boost-power": "1", "rejection-policy": policy},
				keygen.WithWorkerSource(lease))
			lease.shut() // the filler blocks in ValidUntil
			dst := make([]int64, 32)
			if err := g.NextIDs(ctx, dst); err != nil {
				t.Fatal(err)
			}
			c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := g.NextID(c)
			took := time.Since(start)
			if !errors.Is(err, keygen.ErrUIDBufferEmpty) {
				t.Fatalf("NextID on an empty ring = %v, want ErrUIDBufferEmpty", err)
			}
			waits := g.(keygen.StatsReporter).Stats().SequenceWaits
			switch policy {
			case "wait":
				if !errors.Is(err, context.DeadlineExceeded) || took < 40*time.Millisecond || waits != 1 {
					t.Errorf("wait: err %v after %v, SequenceWaits %d; want the deadline, one wait", err, took, waits)
				}
			case "error":
				if took > 40*time.Millisecond || waits != 0 {
					t.Errorf("error: returned after %v, SequenceWaits %d; want at once, no wait", took, waits)
				}
			}
			lease.open()
			id, err := g.NextID(ctx)
			for policy == "error" && errors.Is(err, keygen.ErrUIDBufferEmpty) {
				time.Sleep(time.Millisecond)
				id, err = g.NextID(ctx)
			}
			if err != nil || id <= dst[31] {
				t.Fatalf("after the refill: %d, %v (last %d)", id, err, dst[31])
			}
			if err := g.(io.Closer).Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCachedUIDLease: no second at or after the lease's validity is
// filled; the buffered IDs are handed out, then ErrLeaseLost; a renewed
// lease resumes. The last filled second goes to Track, and a lease's
// LastUsed makes the filling start after it.
func TestCachedUIDLease(t *testing.T) {
	verifyNoLeak(t)
	s0 := cuSecond(t0)
	secStart := func(s int64) int64 { return cuEpoch.Add(time.Duration(s) * time.Second).UnixNano() }
	lease := newTestLease(3)
	lease.valid.Store(secStart(s0+1) + 1) // second s0+1 starts before it: s0 and s0+1 only
	g, _ := newCachedUID(t, keygen.Props{"sequence-bits": "4", "boost-power": "2", "worker-id": "auto"}, keygen.WithWorkerSource(lease))
	if got := lease.tracked(); got != s0+1 {
		t.Errorf("tracked second %d, want %d", got, s0+1)
	}
	dst := make([]int64, 32)
	if err := g.NextIDs(ctx, dst); err != nil {
		t.Fatal(err)
	}
	if _, err := g.NextID(ctx); !errors.Is(err, keygen.ErrLeaseLost) {
		t.Fatalf("NextID past the lease = %v, want ErrLeaseLost", err)
	}
	if r := g.(keygen.StatsReporter).Stats().LeaseRefusals; r == 0 {
		t.Error("LeaseRefusals = 0")
	}
	lease.valid.Store(secStart(s0 + 3)) // s0+2 now fits, s0+3 does not
	id, err := g.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := g.(keygen.Decomposer).Decompose(id); p.Timestamp != s0+2 || p.Sequence != 0 || p.Worker != 3 {
		t.Errorf("after renewal: %+v, want second %d sequence 0 worker 3", p, s0+2)
	}
	eventually(t, "track s0+2", func() bool { return lease.tracked() == s0+2 })
	if err := g.(io.Closer).Close(); err != nil || lease.closes.Load() != 1 {
		t.Fatalf("Close: %v, lease closed %d times", err, lease.closes.Load())
	}
	g.(io.Closer).Close()
	if lease.closes.Load() != 1 {
		t.Errorf("lease closed %d times", lease.closes.Load())
	}

	// LastUsed ahead of the clock: start after it.
	l2 := newTestLease(4)
	l2.lastUsed = t0.Add(5 * time.Second)
	g2, _ := newCachedUID(t, keygen.Props{"sequence-bits": "4"}, keygen.WithWorkerSource(l2))
	id, err = g2.NextID(ctx)
	if p, _ := g2.(keygen.Decomposer).Decompose(id); err != nil || p.Timestamp != s0+6 {
		t.Errorf("after LastUsed +5s: %+v, %v; want second %d", p, err, s0+6)
	}

	// A lease that is already invalid: the generator is refused.
	l3 := newTestLease(4)
	l3.valid.Store(secStart(s0))
	if _, err := keygen.NewID("CACHED_UID", keygen.Props{"sequence-bits": "4"}, keygen.WithClock(keygentest.NewClock(t0)),
		keygen.WithWorkerSource(l3)); !errors.Is(err, keygen.ErrLeaseLost) || l3.closes.Load() != 1 {
		t.Errorf("expired lease: %v (closed %d times), want ErrLeaseLost and the lease released", err, l3.closes.Load())
	}
}

// TestCachedUIDPadding: taking IDs wakes the filler only once fewer than
// padding-factor percent of the slots are filled; schedule-interval
// refills without it.
func TestCachedUIDPadding(t *testing.T) {
	verifyNoLeak(t)
	s0 := cuSecond(t0)
	lease := newTestLease(1)
	// ring: 4 seconds of 16; threshold 50%: 32 slots.
	g, _ := newCachedUID(t, keygen.Props{"sequence-bits": "4", "boost-power": "2", "padding-factor": "50"}, keygen.WithWorkerSource(lease))
	if got := lease.tracked(); got != s0+3 {
		t.Fatalf("initial fill up to second %d, want %d", got, s0+3)
	}
	dst := make([]int64, 32)
	if err := g.NextIDs(ctx, dst); err != nil { // 32 left: not under 50%
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if got := lease.tracked(); got != s0+3 {
		t.Fatalf("refilled (to second %d) above the padding threshold", got)
	}
	if _, err := g.NextID(ctx); err != nil { // 31 left: under 50%
		t.Fatal(err)
	}
	eventually(t, "the padding refill", func() bool { return lease.tracked() == s0+5 }) // room for 2 whole seconds
	if w := g.(keygen.StatsReporter).Stats().SequenceWaits; w != 0 {
		t.Errorf("SequenceWaits = %d, want 0", w)
	}

	lease2 := newTestLease(1)
	g2, _ := newCachedUID(t, keygen.Props{"sequence-bits": "4", "boost-power": "2", "schedule-interval": "5ms"}, keygen.WithWorkerSource(lease2))
	if err := g2.NextIDs(ctx, make([]int64, 16)); err != nil { // 48 left: no padding refill
		t.Fatal(err)
	}
	eventually(t, "the scheduled refill", func() bool { return lease2.tracked() == s0+4 })
}

// TestCachedUIDClose: Close stops the filler (no goroutine left), wakes
// waiting callers, and NextID fails afterwards.
func TestCachedUIDClose(t *testing.T) {
	verifyNoLeak(t)
	lease := newTestLease(1)
	clk := keygentest.NewClock(t0)
	g, err := keygen.NewID("CACHED_UID", keygen.Props{"sequence-bits": "4", "boost-power": "1"}, keygen.WithClock(clk), keygen.WithWorkerSource(lease))
	if err != nil {
		t.Fatal(err)
	}
	lease.shut()
	if err := g.NextIDs(ctx, make([]int64, 32)); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, err := g.NextID(ctx); errc <- err }()
	eventually(t, "a waiting caller", func() bool { return g.(keygen.StatsReporter).Stats().SequenceWaits == 1 })
	closed := make(chan error, 1)
	go func() { closed <- g.(io.Closer).Close() }()
	if err := <-errc; err == nil {
		t.Error("a caller waiting at Close got an ID")
	}
	lease.open()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := g.NextID(ctx); err == nil {
		t.Error("NextID after Close succeeded")
	}
	if err := g.NextIDs(ctx, make([]int64, 3)); err == nil {
		t.Error("NextIDs after Close succeeded")
	}
	if lease.closes.Load() != 1 {
		t.Errorf("lease closed %d times", lease.closes.Load())
	}
}

func TestCachedUIDProps(t *testing.T) {
	for _, p := range []keygen.Props{
		{"worker-id": "1", "boost-power": "0"},
		{"worker-id": "1", "boost-power": "17"},
		{"worker-id": "1", "padding-factor": "0"},
		{"worker-id": "1", "padding-factor": "100"},
		{"worker-id": "1", "rejection-policy": "discard"},
		{"worker-id": "1", "schedule-interval": "-1"},
		{"worker-id": "1", "schedule-interval": "soon"},
		{"worker-id": "1", "sequence-bits": "20", "boost-power": "3"}, // 2^23 slots
		{"worker-id": "1", "max-vibration-offset": "1"},
		{"worker-id": "9", "worker-bits": "3"},
		{},
		{"worker-id": "auto"},
	} {
		_, err := keygen.NewID("CACHED_UID", p, keygen.WithClock(keygentest.NewClock(t0)))
		var pe *keygen.PropError
		if err == nil {
			t.Errorf("%v: no error", p)
		} else if !errors.As(err, &pe) && !errors.Is(err, keygen.ErrTimeOverflow) {
			var le *keygen.LayoutError
			if !errors.As(err, &le) {
				t.Errorf("%v: %v is neither a PropError nor a LayoutError", p, err)
			}
		}
	}
	for _, p := range []keygen.Props{
		{"worker-id": "1", "schedule-interval": "30"},
		{"worker-id": "1", "schedule-interval": "1m", "rejection-policy": "ERROR", "padding-factor": "99", "boost-power": "1"},
		{"workerId": "1", "timeBits": "30", "workerBits": "20", "seqBits": "13", "epochStr": "2016-05-20"},
	} {
		g, err := keygen.NewID("CACHED_UID", p, keygen.WithClock(keygentest.NewClock(t0)))
		if err != nil {
			t.Errorf("%v: %v", p, err)
			continue
		}
		g.(io.Closer).Close()
	}
}

// BenchmarkCachedUID compares NextID with a bare atomic add, the floor of
// any shared counter.
func BenchmarkCachedUID(b *testing.B) {
	b.Run("impl=atomic-add", func(b *testing.B) {
		var n atomic.Int64
		b.Run("mode=serial", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				n.Add(1)
			}
		})
		b.Run("mode=parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n.Add(1)
				}
			})
		})
	})
	b.Run("impl=cached-uid", func(b *testing.B) {
		g, err := keygen.NewID("CACHED_UID", keygen.Props{"worker-id": "1"})
		if err != nil {
			b.Fatal(err)
		}
		defer g.(io.Closer).Close()
		b.Run("mode=serial", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := g.NextID(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("mode=parallel", func(b *testing.B) {
			b.ReportAllocs()
			before := g.(keygen.StatsReporter).Stats().SequenceWaits
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.NextID(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
			// Calls that found the ring empty, per million IDs.
			waits := g.(keygen.StatsReporter).Stats().SequenceWaits - before
			b.ReportMetric(float64(waits)*1e6/float64(b.N), "empty/1M")
		})
	})
}
