package workerlease

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// steppedClock is the wall clock moved by an offset the test sets: an
// injected clock that an operator or a time source steps.
type steppedClock struct{ offset atomic.Int64 }

func (c *steppedClock) Now() time.Time        { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *steppedClock) Sleep(d time.Duration) { time.Sleep(d) }

// TestClockStepBackWhileCutOffStopsKeysBeforeAnotherTakesTheSlot: a holder
// cut off from the database whose clock then steps back (10 min) must
// still stop issuing before its slot expires and another process claims
// it: its validity may not stretch by the step.
func TestClockStepBackWhileCutOffStopsKeysBeforeAnotherTakesTheSlot(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		const ttl, safeGuard = time.Second, 100 * time.Millisecond
		dsn, p := b.viaProxy(t)
		ns := namespace(t)
		srcA := newSource(t, b.open(t, dsn), Config{Namespace: ns, TTL: ttl, SafeGuard: safeGuard})
		srcB := newSource(t, b.open(t, ""), Config{Namespace: ns, TTL: ttl, SafeGuard: safeGuard})
		clockA := &steppedClock{}
		gA := leasedGenerator(t, srcA, keygen.WithClock(clockA))
		waitFor(t, 5*time.Second, "a renewal", func() bool {
			return gA.(keygen.StatsReporter).Stats().LeaseRenewals > 0
		})
		p.Cut()
		cut := time.Now()
		// A issued nothing before the step, so its generator has no
		// reason to refuse the earlier clock: only the lease can stop it.
		clockA.offset.Store(int64(-10 * time.Minute))

		var (
			mu            sync.Mutex
			lastA, lostA  time.Time
			stop, stopped = make(chan struct{}), make(chan struct{})
		)
		go func() {
			defer close(stopped)
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := gA.NextID(context.Background())
				now := time.Now()
				mu.Lock()
				switch {
				case err == nil:
					lastA = now
				case errors.Is(err, keygen.ErrLeaseLost):
					if lostA.IsZero() {
						lostA = now
					}
				default:
					mu.Unlock()
					t.Errorf("A: NextID: %v", err)
					return
				}
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
			}
		}()

		// B, another process (its own clock), claims as soon as the slot
		// is free: SafeGuard after A's row expired.
		var (
			gB      closingGenerator
			claimed time.Time
		)
		waitFor(t, 10*time.Second, "B's claim", func() bool {
			g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"},
				keygen.WithWorkerSource(onlyWorkerZero{srcB}), keygen.WithClock(realClock{}))
			if errors.Is(err, ErrNoFreeWorker) {
				return false
			}
			if err != nil {
				t.Fatalf("B: %v", err)
			}
			claimed = time.Now()
			gB = g.(closingGenerator)
			return true
		})
		t.Cleanup(func() { gB.Close() })
		if _, err := gB.NextID(context.Background()); err != nil {
			t.Fatalf("B: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
		close(stop)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		t.Logf("cut and step at 0: A's first refusal at %v, last key at %v; B claimed at %v",
			since(lostA, cut), since(lastA, cut), claimed.Sub(cut))
		if lostA.IsZero() || lastA.After(claimed) {
			t.Fatalf("A (clock stepped back 10 min, cut off) still issued keys %v after B claimed its worker id",
				lastA.Sub(claimed))
		}
		if _, err := gA.NextID(context.Background()); !errors.Is(err, keygen.ErrLeaseLost) {
			t.Fatalf("A after B claimed: %v, want ErrLeaseLost", err)
		}
	})
}

// since is t - from, or -1 when t is zero (never happened).
func since(t, from time.Time) time.Duration {
	if t.IsZero() {
		return -1
	}
	return t.Sub(from)
}

// onlyWorkerZero offers only worker id 0, the one A holds.
type onlyWorkerZero struct{ s *Source }

func (o onlyWorkerZero) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	info.MaxWorker = 0
	return o.s.Acquire(ctx, info)
}
