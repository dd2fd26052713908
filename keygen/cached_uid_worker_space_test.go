package keygen_test

import (
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// TestCachedUIDTinyRingStress: the one-word claim on the smallest ring (2 IDs a second, 4 slots), so that the filler
// overwrites slots while callers hold stale reads of them all the time.
// Every ID is issued once, none is lost (the IDs are exactly a prefix of
// the worker's (second, sequence) space), and each goroutine's IDs
// increase.
func TestCachedUIDTinyRingStress(t *testing.T) {
	for _, padding := range []string{"1", "50", "99"} {
		t.Run("padding="+padding, func(t *testing.T) {
			const goroutines, perG = 8, 20_000
			props := keygen.Props{"worker-id": "3", "sequence-bits": "1", "boost-power": "1", "padding-factor": padding}
			g, _ := newCachedUID(t, props)
			l, err := keygen.LayoutFor("CACHED_UID", props)
			if err != nil {
				t.Fatal(err)
			}
			out := make([][]int64, goroutines)
			var wg sync.WaitGroup
			for w := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids := make([]int64, 0, perG)
					buf := make([]int64, 3)
					for len(ids) < perG {
						if w%2 == 0 {
							id, err := g.NextID(ctx)
							if err != nil {
								t.Error(err)
								return
							}
							ids = append(ids, id)
						} else {
							if err := g.NextIDs(ctx, buf); err != nil {
								t.Error(err)
								return
							}
							ids = append(ids, buf...)
						}
					}
					out[w] = ids
				}()
			}
			wg.Wait()
			var all []int64
			for w, ids := range out {
				for i := 1; i < len(ids); i++ {
					if ids[i] <= ids[i-1] {
						t.Fatalf("goroutine %d: ID %d = %d after %d", w, i, ids[i], ids[i-1])
					}
				}
				all = append(all, ids...)
			}
			slices.Sort(all)
			first, err := l.Decompose(all[0])
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range all {
				want, _ := l.Compose(keygen.Parts{Timestamp: first.Timestamp + int64(i/2), Worker: 3, Sequence: int64(i % 2)})
				if id != want {
					t.Fatalf("sorted ID %d = %d, want %d (duplicate or lost)", i, id, want)
				}
			}
		})
	}
}

// TestFailedUIDLeavesItsWorkerToCachedUID: a UID whose construction
// failed (its lease's worker id was last used later than the clock:
// ClockBackwardsError) was never returned to anyone, so it holds no claim
// on its worker's ID space: a CACHED_UID of the same worker builds, not
// refused with ErrIDSpaceInUse. GC is off, so the claim must be dropped by
// the failed construction itself, not by a garbage collector's cleanup
// that may or may not have run.
func TestFailedUIDLeavesItsWorkerToCachedUID(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	clock := keygentest.NewClock(time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC))
	props := keygen.Props{"worker-bits": "21", "sequence-bits": "10"}
	lease := newTestLease(17)
	lease.lastUsed = clock.Now().Add(time.Hour) // beyond UID's tolerance of 0
	_, err := keygen.NewID("UID", keygen.Props{"worker-id": "auto", "worker-bits": "21", "sequence-bits": "10"},
		keygen.WithClock(clock), keygen.WithWorkerSource(lease))
	var cbe *keygen.ClockBackwardsError
	if !errors.As(err, &cbe) {
		t.Fatalf("UID with a lease used an hour ahead: %v, want ClockBackwardsError", err)
	}
	props["worker-id"] = "17"
	g, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clock))
	if err != nil {
		t.Fatalf("CACHED_UID after a UID of its worker failed to build (no UID exists): %v", err)
	}
	g.(io.Closer).Close()
}

// TestCachedUIDAfterACollectedUIDStartsAfterItsLastSecond: a CACHED_UID
// built after a UID of its worker was collected starts after the last
// second the UID issued, although the clock still reads that second.
func TestCachedUIDAfterACollectedUIDStartsAfterItsLastSecond(t *testing.T) {
	clock := keygentest.NewClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC))
	props := keygen.Props{"worker-id": "19", "worker-bits": "21", "sequence-bits": "10"}
	seen := map[int64]bool{}
	func() {
		uid, err := keygen.NewID("UID", props, keygen.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		for range 1500 { // into the clock's next second
			id, err := uid.NextID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen[id] = true
		}
	}()
	var g keygen.IDGenerator
	eventually(t, "the UID's collection", func() bool {
		runtime.GC()
		var err error
		g, err = keygen.NewID("CACHED_UID", props, keygen.WithClock(clock))
		return err == nil
	})
	defer g.(io.Closer).Close()
	for range 5000 {
		id, err := g.NextID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("CACHED_UID repeated the dead UID's key %d", id)
		}
	}
}

// TestCachedUIDStatsIssuedUnderflow: Issued is filled IDs minus filled
// slots, and the filler adds to both while Stats may read them. A Stats
// call between the filler's two adds must never see the new slots without
// their IDs: Issued would be issued − perSec, wrapping to about 2^64 when
// fewer than perSec IDs were issued since the ring was last full (here:
// the initial fill is cut short by the lease, then the lease extended).
func TestCachedUIDStatsIssuedUnderflow(t *testing.T) {
	props := keygen.Props{"worker-id": "auto", "sequence-bits": "8", "boost-power": "3"}
	attempts := 2000 // the window is narrow
	if testing.Short() {
		attempts = 100
	}
	for attempt := range attempts {
		clk := keygentest.NewClock(t0)
		lease := newTestLease(int64(attempt % 1000))
		sec := t0.Truncate(time.Second)
		lease.valid.Store(sec.Add(time.Second).UnixNano()) // the initial fill gets one second
		g, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clk), keygen.WithWorkerSource(lease))
		if err != nil {
			t.Fatal(err)
		}
		st := g.(interface{ Stats() keygen.Stats })
		lease.valid.Store(sec.Add(time.Hour).UnixNano())
		stop := make(chan struct{})
		var bad uint64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if n := st.Stats().Issued; n > 1<<40 {
					bad = n
					return
				}
			}
		}()
		if _, err := g.NextID(ctx); err != nil { // wakes the filler
			t.Fatal(err)
		}
		time.Sleep(200 * time.Microsecond)
		close(stop)
		wg.Wait()
		g.(io.Closer).Close()
		if bad != 0 {
			t.Fatalf("attempt %d: Stats().Issued = %d after 1 ID", attempt, bad)
		}
	}
}
