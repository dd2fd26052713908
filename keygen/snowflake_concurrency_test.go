package keygen_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// stressCase is one SNOWFLAKE configuration the concurrency tests run.
type stressCase struct {
	name  string
	props keygen.Props
	step  time.Duration // each fake-clock reading moves time on by this
	back  bool          // a goroutine steps the clock back now and then
	lease bool          // the worker id comes from a lease with a floor
}

var stressCases = []stressCase{
	{"two sequence bits, no vibration", keygen.Props{"sequence-bits": "2", "max-vibration-offset": "0"}, 7 * time.Microsecond, false, false},
	{"two sequence bits, vibration 1", keygen.Props{"sequence-bits": "2", "max-vibration-offset": "1"}, 11 * time.Microsecond, false, false},
	{"three sequence bits, vibration at the mask", keygen.Props{"sequence-bits": "3", "max-vibration-offset": "7"}, 13 * time.Microsecond, false, false},
	{"default layout, vibration 4095", keygen.Props{"max-vibration-offset": "4095"}, 500 * time.Nanosecond, false, false},
	{"steps back within the tolerance", keygen.Props{"sequence-bits": "3", "max-vibration-offset": "5",
		"max-tolerate-time-difference-milliseconds": "3"}, 9 * time.Microsecond, true, false},
	{"steps back with clock-back flags", keygen.Props{"sequence-bits": "3", "max-vibration-offset": "2", "clock-back-bits": "3",
		"max-tolerate-time-difference-milliseconds": "2"}, 9 * time.Microsecond, true, false},
	{"10ms unit", keygen.Props{"sequence-bits": "4", "max-vibration-offset": "3", "time-unit": "10ms"}, 90 * time.Microsecond, false, false},
	{"second unit", keygen.Props{"sequence-bits": "6", "max-vibration-offset": "9", "time-unit": "s", "time-bits": "31"}, 3 * time.Millisecond, false, false},
	{"leased worker id", keygen.Props{"sequence-bits": "2", "max-vibration-offset": "3"}, 7 * time.Microsecond, true, true},
}

// TestSnowflakeIDsUniqueAndIncreasingUnderConcurrency: many goroutines
// (GOMAXPROCS above the cores), NextID and NextIDs mixed, on a fake clock
// that moves on with every reading so that ticks start and run out under
// contention (small sequences exhaust a millisecond every few IDs), some
// with steps back within, at and beyond the tolerance: no ID is issued
// twice, each goroutine sees its IDs increase (by clock-back flag, then
// value), every ID carries the worker id, and Stats.Issued is the number
// of IDs returned.
func TestSnowflakeIDsUniqueAndIncreasingUnderConcurrency(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, c := range stressCases {
		t.Run(c.name, func(t *testing.T) {
			clk := keygentest.NewClock(t0)
			props := keygen.Props{"worker-id": "5"}
			for k, v := range c.props {
				props[k] = v
			}
			var g keygen.IDGenerator
			if c.lease {
				lease := &fakeLease{worker: 5, last: t0.Add(2 * time.Millisecond)}
				lease.validUntil.Store(math.MaxInt64)
				props["worker-id"] = "auto"
				g = leased(t, "SNOWFLAKE", lease, clk, props)
			} else {
				var err error
				if g, err = keygen.NewID("SNOWFLAKE", props, keygen.WithClock(clk)); err != nil {
					t.Fatal(err)
				}
			}
			clk.SetStep(c.step)
			runStress(t, g, clk, c.back, 600)
		})
	}
}

func runStress(t *testing.T, g keygen.IDGenerator, clk *keygentest.Clock, back bool, calls int) {
	t.Helper()
	l := g.(interface{ Layout() keygen.Layout }).Layout()
	const goroutines = 32
	var (
		wg      sync.WaitGroup
		stop    atomic.Bool
		mu      sync.Mutex
		all     = map[int64]bool{}
		clockBk atomic.Int64
	)
	if back {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(1, 2))
			for !stop.Load() {
				time.Sleep(time.Duration(100+rng.IntN(400)) * time.Microsecond)
				clk.Add(-time.Duration(rng.IntN(4)) * time.Millisecond)
			}
		}()
	}
	var workers sync.WaitGroup
	for i := range goroutines {
		workers.Add(1)
		go func() {
			defer workers.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 3))
			var mine []int64
			for range calls {
				n := 1
				if rng.IntN(3) == 0 {
					n = 1 + rng.IntN(9)
				}
				buf := make([]int64, n)
				var err error
				if n == 1 && rng.IntN(2) == 0 {
					buf[0], err = g.NextID(ctx)
					if err != nil {
						buf[0] = 0
					}
				} else {
					err = g.NextIDs(ctx, buf)
				}
				for _, id := range buf {
					if id != 0 { // written before an error, or all of them
						mine = append(mine, id)
					}
				}
				if err != nil {
					var cb *keygen.ClockBackwardsError
					if !errors.As(err, &cb) {
						t.Errorf("NextIDs: %v", err)
						return
					}
					clockBk.Add(1)
				}
			}
			for j := 1; j < len(mine); j++ {
				if !idBefore(l, mine[j-1], mine[j]) {
					t.Errorf("goroutine %d: ID %s after %s", i, show(l, mine[j]), show(l, mine[j-1]))
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range mine {
				if all[id] {
					t.Errorf("ID %s issued twice", show(l, id))
				}
				all[id] = true
				if p, err := l.Decompose(id); err != nil || p.Worker != 5 {
					t.Errorf("ID %s: %v, worker %d", show(l, id), err, p.Worker)
				}
			}
		}()
	}
	workers.Wait()
	stop.Store(true)
	wg.Wait()
	if n := g.(keygen.StatsReporter).Stats().Issued; n != uint64(len(all)) {
		t.Errorf("Stats.Issued %d, %d IDs returned", n, len(all))
	}
	t.Logf("%d IDs, %d clock-back errors, stats %+v", len(all), clockBk.Load(), g.(keygen.StatsReporter).Stats())
}

// idBefore orders IDs as a generator issues them: by clock-back flag, then
// by value.
func idBefore(l keygen.Layout, a, b int64) bool {
	pa, _ := l.Decompose(a)
	pb, _ := l.Decompose(b)
	if pa.ClockBack != pb.ClockBack {
		return pa.ClockBack < pb.ClockBack
	}
	return a < b
}

func show(l keygen.Layout, id int64) string {
	p, _ := l.Decompose(id)
	return fmt.Sprintf("%d (tick %d flag %d seq %d)", id, p.Timestamp, p.ClockBack, p.Sequence)
}

// TestSnowflakeIDsUniqueOnTheSystemClockWithTinySequences: the real clock
// (its inline read on NextID's fast path), four IDs a millisecond, and
// goroutines beyond the cores mixing NextID and NextIDs: every millisecond
// runs out under contention, and still no ID repeats and Issued is exact.
func TestSnowflakeIDsUniqueOnTheSystemClockWithTinySequences(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, vib := range []string{"0", "3"} {
		t.Run("max-vibration-offset "+vib, func(t *testing.T) {
			g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "5", "sequence-bits": "2", "max-vibration-offset": vib},
				keygen.WithClock(keygen.NewSystemClock(nil)), keygen.WithSequenceScope(keygen.NewSequenceScope())) // Issued counts this generator's keys only
			if err != nil {
				t.Fatal(err)
			}
			calls := 40 // each waits out the system clock's milliseconds
			if testing.Short() {
				calls = 10
			}
			runStress(t, g, nil, false, calls)
		})
	}
}

// gateClock is a keygentest.Clock whose next reading, once armed, is taken
// and then held until release is closed, so a test can run another
// goroutine between a generator's clock read and its CAS.
type gateClock struct {
	*keygentest.Clock
	armed            atomic.Bool
	entered, release chan struct{}
}

func (c *gateClock) Now() time.Time {
	t := c.Clock.Now()
	if c.armed.CompareAndSwap(true, false) {
		close(c.entered)
		<-c.release
	}
	return t
}

// TestSnowflakeStaleReadingLosesToANewTickAndJoinsIt: a goroutine that read
// the last ID and the clock in tick T, then stalls while another starts
// tick T+1 (moving the vibration counter), loses its CAS in T and takes
// the next key of T+1: no key of T is issued after T+1 began, no key
// repeats, the counter moved once (the tick after starts at the next
// offset), and Issued counts each key once.
func TestSnowflakeStaleReadingLosesToANewTickAndJoinsIt(t *testing.T) {
	clk := &gateClock{Clock: keygentest.NewClock(t0), entered: make(chan struct{}), release: make(chan struct{})}
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "1", "max-vibration-offset": "3"}, keygen.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	l := g.(interface{ Layout() keygen.Layout }).Layout()
	first := next(t, g) // tick T, sequence 0
	clk.armed.Store(true)
	stale := make(chan int64)
	go func() {
		id, err := g.NextID(ctx)
		if err != nil {
			t.Error(err)
		}
		stale <- id
	}()
	<-clk.entered
	clk.Add(time.Millisecond)
	fresh := next(t, g) // tick T+1, sequence 1 (the counter's second value)
	close(clk.release)
	late := <-stale
	pf, _ := l.Decompose(first)
	pn, _ := l.Decompose(fresh)
	if pn.Timestamp != pf.Timestamp+1 || pn.Sequence != 1 {
		t.Fatalf("new tick's key %s, want tick %d sequence 1", show(l, fresh), pf.Timestamp+1)
	}
	if late != fresh+1 {
		t.Fatalf("stalled goroutine's key %s, want %s, the next of the new tick", show(l, late), show(l, fresh+1))
	}
	clk.Add(time.Millisecond)
	if p, _ := l.Decompose(next(t, g)); p.Sequence != 2 {
		t.Fatalf("the tick after starts at sequence %d, want 2 (the counter moved once per tick)", p.Sequence)
	}
	if n := g.(keygen.StatsReporter).Stats().Issued; n != 4 {
		t.Fatalf("Issued %d, want 4", n)
	}
}

// TestSnowflakeNewTickStartLosingToTheOldTickStartsItOnce: a goroutine that
// read the last ID in tick T and the clock in T+1 stalls before starting
// T+1, while another issues the next key of T; its start of T+1 from the
// old state fails and is made again from the new one: T+1 begins once, at
// the vibration counter's next offset, and no key repeats.
func TestSnowflakeNewTickStartLosingToTheOldTickStartsItOnce(t *testing.T) {
	clk := &gateClock{Clock: keygentest.NewClock(t0), entered: make(chan struct{}), release: make(chan struct{})}
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "1", "max-vibration-offset": "3"}, keygen.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	l := g.(interface{ Layout() keygen.Layout }).Layout()
	first := next(t, g) // tick T, sequence 0
	clk.Add(time.Millisecond)
	clk.armed.Store(true)
	stale := make(chan int64)
	go func() {
		id, err := g.NextID(ctx)
		if err != nil {
			t.Error(err)
		}
		stale <- id
	}()
	<-clk.entered
	clk.Add(-time.Millisecond) // main reads tick T: no step back for it, the state is in T
	inT := next(t, g)
	clk.Add(time.Millisecond)
	close(clk.release)
	late := <-stale
	if inT != first+1 {
		t.Fatalf("key in T %s, want %s", show(l, inT), show(l, first+1))
	}
	pf, _ := l.Decompose(first)
	if p, _ := l.Decompose(late); p.Timestamp != pf.Timestamp+1 || p.Sequence != 1 {
		t.Fatalf("stalled goroutine's key %s, want tick %d sequence 1", show(l, late), pf.Timestamp+1)
	}
	if id := next(t, g); id != late+1 {
		t.Fatalf("next key %s, want %s", show(l, id), show(l, late+1))
	}
	if n := g.(keygen.StatsReporter).Stats().Issued; n != 4 {
		t.Fatalf("Issued %d, want 4", n)
	}
}
