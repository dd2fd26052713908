package keygen_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

func issued(t *testing.T, g keygen.IDGenerator) uint64 {
	t.Helper()
	return g.(keygen.StatsReporter).Stats().Issued
}

// TestSnowflakeStatsIssuedCountsEveryID: Issued is exact however IDs were
// issued: one per millisecond with vibration, a batch over an exhausted
// millisecond, after clock-back flag bumps, and after a lease's floor,
// which issues nothing.
func TestSnowflakeStatsIssuedCountsEveryID(t *testing.T) {
	g, clk := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "max-vibration-offset": "3",
		"clock-back-bits": "2", "max-tolerate-time-difference-milliseconds": "0"})
	if n := issued(t, g); n != 0 {
		t.Fatalf("new generator: Issued %d", n)
	}
	want := uint64(0)
	for range 6 {
		next(t, g)
		clk.Add(time.Millisecond)
		want++
	}
	next(t, g)
	next(t, g)
	want += 2
	if err := g.NextIDs(ctx, make([]int64, 5000)); err != nil { // runs past 4096 in a millisecond
		t.Fatal(err)
	}
	want += 5000
	if n := issued(t, g); n != want {
		t.Fatalf("Issued %d, want %d", n, want)
	}
	clk.Add(-time.Second) // beyond the tolerance: a flag bump
	next(t, g)
	next(t, g)
	want += 2
	if n := issued(t, g); n != want {
		t.Fatalf("after a flag bump: Issued %d, want %d", n, want)
	}

	lease := &fakeLease{worker: 4, last: w0}
	lease.validUntil.Store(math.MaxInt64)
	lg := leased(t, "SNOWFLAKE", lease, keygentest.NewClock(w0.Add(time.Millisecond)), nil)
	if n := issued(t, lg); n != 0 {
		t.Fatalf("after a lease's floor: Issued %d, want 0", n)
	}
	next(t, lg)
	if n := issued(t, lg); n != 1 {
		t.Fatalf("after a lease's floor and one key: Issued %d, want 1", n)
	}
}

// TestSnowflakeStatsIssuedExactUnderConcurrency: goroutines on two
// generators of one worker (one shared state), NextID and NextIDs mixed on
// the real clock across many milliseconds: Issued is the total.
func TestSnowflakeStatsIssuedExactUnderConcurrency(t *testing.T) {
	clk := keygen.NewSystemClock(nil)
	props := keygen.Props{"worker-id": "3", "max-vibration-offset": "7"}
	// A scope of their own: the state a and b share, and no one else's.
	scope := keygen.NewSequenceScope()
	a, err := keygen.NewID("SNOWFLAKE", props, keygen.WithClock(clk), keygen.WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	b, err := keygen.NewID("SNOWFLAKE", props, keygen.WithClock(clk), keygen.WithSequenceScope(scope))
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, rounds = 6, 20_000
	var wg sync.WaitGroup
	for i := range goroutines {
		g := a
		if i%2 == 1 {
			g = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]int64, 3)
			for r := range rounds {
				var err error
				if r%5 == 0 {
					err = g.NextIDs(ctx, buf)
				} else {
					_, err = g.NextID(ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	want := uint64(goroutines * (rounds/5*3 + rounds*4/5))
	if na, nb := issued(t, a), issued(t, b); na != want || nb != want {
		t.Fatalf("Issued %d and %d, want %d", na, nb, want)
	}
}
