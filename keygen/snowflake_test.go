package keygen_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

var (
	ctx = context.Background()
	// t0 is the fake clock's start: a Wednesday in 2026, 123 ms past noon.
	t0 = time.Date(2026, 3, 4, 12, 0, 0, 123_000_000, time.UTC)
)

func newFake(t testing.TB, typ string, p keygen.Props) (keygen.IDGenerator, *keygentest.Clock) {
	t.Helper()
	clk := keygentest.NewClock(t0)
	g, err := keygen.NewID(typ, p, keygen.WithClock(clk))
	if err != nil {
		t.Fatalf("NewID(%s, %v): %v", typ, p, err)
	}
	return g, clk
}

func next(t testing.TB, g keygen.IDGenerator) int64 {
	t.Helper()
	id, err := g.NextID(ctx)
	if err != nil {
		t.Fatalf("NextID: %v", err)
	}
	return id
}

func decompose(t testing.TB, g keygen.IDGenerator, id int64) keygen.Parts {
	t.Helper()
	p, err := g.(keygen.Decomposer).Decompose(id)
	if err != nil {
		t.Fatalf("Decompose(%d): %v", id, err)
	}
	return p
}

// TestSnowflakeMatchesShardingSphere checks the bit layout against
// ShardingSphere's formula: (ms - epoch) << 22 | worker << 12 | sequence.
func TestSnowflakeMatchesShardingSphere(t *testing.T) {
	g, _ := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "7", "max-vibration-offset": "0"})
	ms := t0.UnixMilli() - keygen.ShardingSphereEpoch.UnixMilli()
	for seq := int64(0); seq < 3; seq++ {
		want := ms<<22 | 7<<12 | seq
		if got := next(t, g); got != want {
			t.Fatalf("id %d = %d, want %d", seq, got, want)
		}
	}
	p := decompose(t, g, ms<<22|7<<12|2)
	if !p.Time.Equal(t0) || p.Worker != 7 || p.Sequence != 2 {
		t.Fatalf("Decompose = %+v", p)
	}
}

func TestSnowflakeEpochForms(t *testing.T) {
	for _, tc := range []struct {
		epoch  string
		wantMs int64
	}{
		{"2016-11-01T00:00:00+08:00", 1477929600000}, // CosId's COSID_SNOWFLAKE default
		{"1477929600000", 1477929600000},
		{"2016-11-01", 1477958400000},
	} {
		g, _ := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "epoch": tc.epoch})
		if got := g.(interface{ Layout() keygen.Layout }).Layout().Epoch.UnixMilli(); got != tc.wantMs {
			t.Errorf("epoch %q = %d ms, want %d", tc.epoch, got, tc.wantMs)
		}
	}
}

func TestSnowflakeSequenceExhaustionWaits(t *testing.T) {
	g, clk := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "max-vibration-offset": "0"})
	ids := make([]int64, 4096+10)
	if err := g.NextIDs(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Fatal("IDs not strictly increasing")
	}
	first, after := decompose(t, g, ids[4095]), decompose(t, g, ids[4096])
	if first.Sequence != 4095 || !first.Time.Equal(t0) {
		t.Fatalf("4096th id = %+v, want sequence 4095 at t0", first)
	}
	if after.Sequence != 0 || !after.Time.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("4097th id = %+v, want sequence 0 one ms later", after)
	}
	if s := clk.Sleeps(); len(s) != 1 || s[0] != time.Millisecond {
		t.Fatalf("sleeps = %v, want one of 1ms", s)
	}
}

// TestSnowflakeClockStepEqualToToleranceIsRefused: a step back shorter
// than max-tolerate-time-difference-milliseconds is waited out, one equal
// to it is a *ClockBackwardsError, as in ShardingSphere, whose
// SnowflakeKeyGenerateAlgorithm waits only while timeDifferenceMillis <
// maxTolerateTimeDifferenceMillis (infra/algorithm/type/key-generator/type/
// snowflake/src/test/java/org/apache/shardingsphere/infra/algorithm/keygen/
// snowflake/SnowflakeKeyGenerateAlgorithmTest.java,
// assertGenerateKeyWithClockCallBackBeyondTolerateTime: tolerance 0 throws).
func TestSnowflakeClockStepEqualToToleranceIsRefused(t *testing.T) {
	g, clk := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "max-tolerate-time-difference-milliseconds": "10"})
	a := next(t, g)
	clk.Add(-9 * time.Millisecond) // one below the tolerance: wait
	if b := next(t, g); b <= a {
		t.Fatalf("after a 9ms step back: %d <= %d", b, a)
	}
	if s := clk.Sleeps(); len(s) != 1 || s[0] != 9*time.Millisecond {
		t.Fatalf("sleeps = %v, want one of 9ms", s)
	}
	clk.Add(-10 * time.Millisecond) // exactly the tolerance: refuse
	_, err := g.NextID(ctx)
	var cb *keygen.ClockBackwardsError
	if !errors.As(err, &cb) || cb.Last.Sub(cb.Now) != 10*time.Millisecond || cb.Tolerance != 10*time.Millisecond {
		t.Fatalf("step of exactly 10ms: err = %v, want *ClockBackwardsError of 10ms", err)
	}
	if s := clk.Sleeps(); len(s) != 1 {
		t.Fatalf("sleeps = %v: the refused step was waited for", s)
	}

	// Tolerance 0 (the Java test's setting): any step back is refused.
	g0, clk0 := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "max-tolerate-time-difference-milliseconds": "0"})
	next(t, g0)
	clk0.Add(-time.Millisecond)
	if _, err := g0.NextID(ctx); !errors.As(err, &cb) {
		t.Fatalf("tolerance 0, step 1ms: err = %v, want *ClockBackwardsError", err)
	}
}

func TestSnowflakeClockBackwards(t *testing.T) {
	g, clk := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "max-tolerate-time-difference-milliseconds": "10"})
	a := next(t, g)

	// Within tolerance: wait it out through the clock, then continue.
	clk.Add(-5 * time.Millisecond)
	b := next(t, g)
	if b <= a {
		t.Fatalf("after a tolerated step back: %d <= %d", b, a)
	}
	if s := clk.Sleeps(); len(s) != 1 || s[0] != 5*time.Millisecond {
		t.Fatalf("sleeps = %v, want one of 5ms", s)
	}

	// Beyond tolerance: a typed error, and no key.
	clk.Add(-50 * time.Millisecond)
	_, err := g.NextID(ctx)
	var cb *keygen.ClockBackwardsError
	if !errors.Is(err, keygen.ErrClockBackwards) || !errors.As(err, &cb) {
		t.Fatalf("err = %v, want ClockBackwardsError", err)
	}
	if cb.Tolerance != 10*time.Millisecond || cb.Last.Sub(cb.Now) != 50*time.Millisecond {
		t.Fatalf("error fields = %+v", cb)
	}

	// The clock catches up: keys resume above the last one.
	clk.Add(60 * time.Millisecond)
	if c := next(t, g); c <= b {
		t.Fatalf("after recovery: %d <= %d", c, b)
	}
}

func TestSnowflakeClockBackBits(t *testing.T) {
	g, clk := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "5", "clock-back-bits": "2",
		"max-tolerate-time-difference-milliseconds": "0"})
	seen := map[int64]bool{}
	issue := func() int64 {
		id := next(t, g)
		if seen[id] {
			t.Fatalf("duplicate id %d", id)
		}
		seen[id] = true
		return id
	}
	for i := 0; i < 5; i++ {
		issue()
	}
	for flag := int64(1); flag <= 3; flag++ {
		clk.Add(-time.Second) // back beyond tolerance: bump the flag
		p := decompose(t, g, issue())
		if p.ClockBack != flag || p.Worker != 5 {
			t.Fatalf("after step %d: %+v", flag, p)
		}
		clk.Add(2 * time.Millisecond)
		for i := 0; i < 5; i++ {
			issue()
		}
	}
	clk.Add(-time.Second) // the flag would wrap to 0: refuse
	if _, err := g.NextID(ctx); !errors.Is(err, keygen.ErrClockBackwards) {
		t.Fatalf("err = %v, want ErrClockBackwards", err)
	}
	if l := g.(interface{ Layout() keygen.Layout }).Layout(); l.WorkerBits != 8 || l.ClockBackBits != 2 {
		t.Fatalf("clock-back bits must come from the worker field: %v", l)
	}
}

func TestSnowflakeForwardJump(t *testing.T) {
	g, clk := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1"})
	a := next(t, g)
	clk.Add(time.Hour)
	b := next(t, g)
	if p := decompose(t, g, b); b <= a || !p.Time.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after a forward jump: %+v", p)
	}
}

// TestSnowflakeVibrationCyclesFromZero: the first key of each new
// millisecond has sequence 0, 1, …, max-vibration-offset, 0, starting at 0
// in a new generator, as ShardingSphere's sequenceOffset (from -1, moved on
// at each new millisecond) gives.
func TestSnowflakeVibrationCyclesFromZero(t *testing.T) {
	for _, tc := range []struct {
		offset string
		want   []int64 // sequence of consecutive single-key milliseconds
	}{
		{"0", []int64{0, 0, 0, 0}},
		{"1", []int64{0, 1, 0, 1, 0}},
		{"3", []int64{0, 1, 2, 3, 0, 1}},
	} {
		g, clk := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "max-vibration-offset": tc.offset})
		var got []int64
		for range tc.want {
			got = append(got, decompose(t, g, next(t, g)).Sequence)
			clk.Add(time.Millisecond)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("max-vibration-offset %s: sequences %v, want %v", tc.offset, got, tc.want)
		}
	}
}

func TestSnowflakeTimeOverflow(t *testing.T) {
	// 30-bit seconds from 2016-11-01 run out in 2050: accepted in 2026.
	g, clk := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "time-unit": "s", "time-bits": "30"})
	runsOut := g.(interface{ Layout() keygen.Layout }).Layout().RunsOut()
	if runsOut.Format(time.DateOnly) != "2050-11-10" {
		t.Fatalf("RunsOut = %v", runsOut)
	}
	clk.Set(runsOut.Add(-time.Second))
	last := next(t, g)
	if last < 0 {
		t.Fatalf("negative id %d", last)
	}
	clk.Set(runsOut)
	_, err := g.NextID(ctx)
	var oe *keygen.TimeOverflowError
	if !errors.Is(err, keygen.ErrTimeOverflow) || !errors.As(err, &oe) || !oe.Max.Equal(runsOut.Add(-time.Second)) {
		t.Fatalf("err = %v, want TimeOverflowError with Max one second before %v", err, runsOut)
	}
	clk.Set(keygen.ShardingSphereEpoch.Add(-time.Hour))
	if _, err := g.NextID(ctx); !errors.Is(err, keygen.ErrTimeOverflow) {
		t.Fatalf("before the epoch: err = %v", err)
	}
}

func TestLayoutValidation(t *testing.T) {
	for _, tc := range []struct {
		typ   string
		props keygen.Props
		want  string
	}{
		// Baidu's own default ran out on 2024-11-20.
		{"UID", keygen.Props{"worker-id": "1", "time-bits": "28", "worker-bits": "22", "seq-bits": "13", "epoch": "2016-05-20"}, "runs out on 2024-11-20"},
		{"SNOWFLAKE", keygen.Props{"worker-id": "1", "time-bits": "38"}, "runs out on 2025-07-18"}, // 2^38 ms = 8.7 years
		{"SNOWFLAKE", keygen.Props{"worker-id": "1", "time-bits": "39"}, "runs out on 2034-04-03"}, // 17.4 years, but under 10 from t0
		{"SNOWFLAKE", keygen.Props{"worker-id": "1", "time-bits": "42"}, "uses 64 bits"},
		{"SNOWFLAKE", keygen.Props{"worker-id": "1", "epoch": "2030-01-01T00:00:00Z"}, "in the future"},
	} {
		_, err := keygen.NewID(tc.typ, tc.props, keygen.WithClock(keygentest.NewClock(t0)))
		if !errors.Is(err, keygen.ErrInvalidLayout) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: err = %v, want ErrInvalidLayout containing %q", tc.typ, tc.props, err, tc.want)
		}
	}
}

func TestDecomposeCompose(t *testing.T) {
	g, _ := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "3", "datacenter-bits": "3", "datacenter-id": "2",
		"clock-back-bits": "2"})
	id := next(t, g)
	p := decompose(t, g, id)
	if p.Datacenter != 2 || p.Worker != 3 || !p.Time.Equal(t0) {
		t.Fatalf("Decompose = %+v", p)
	}
	back, err := g.(interface {
		Compose(keygen.Parts) (int64, error)
	}).Compose(keygen.Parts{Time: p.Time, Datacenter: 2, Worker: 3, Sequence: p.Sequence})
	if err != nil || back != id {
		t.Fatalf("Compose = %d, %v; want %d", back, err, id)
	}
	if _, err := g.(keygen.Decomposer).Decompose(-1); !errors.Is(err, keygen.ErrInvalidID) {
		t.Fatalf("Decompose(-1) err = %v", err)
	}
	if _, err := (keygen.Layout{Epoch: t0, Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12}).
		Compose(keygen.Parts{Timestamp: 1, Worker: 1024}); !errors.Is(err, keygen.ErrInvalidID) {
		t.Fatalf("Compose of an oversized worker: err = %v", err)
	}
}

// TestNoDuplicatesConcurrent: many goroutines on one generator, and several
// generators with distinct worker ids, 2.4 million IDs in all; IDs increase
// as each goroutine sees them and none repeats.
func TestNoDuplicatesConcurrent(t *testing.T) {
	perG := 150_000
	if testing.Short() {
		perG = 20_000
	}
	shared := mustNew(t, "SNOWFLAKE", keygen.Props{"worker-id": "1"})
	gens := []keygen.IDGenerator{shared, shared, shared, shared, shared, shared, shared, shared}
	for w := 2; w <= 9; w++ {
		gens = append(gens, mustNew(t, "SNOWFLAKE", keygen.Props{"worker-id": string(rune('0' + w))}))
	}
	out := make([][]int64, len(gens))
	var wg sync.WaitGroup
	for i, g := range gens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]int64, perG)
			for j := 0; j < len(ids); j++ {
				if j%2 == 0 || j+8 > len(ids) {
					id, err := g.NextID(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					ids[j] = id
					continue
				}
				if err := g.NextIDs(ctx, ids[j:j+7]); err != nil { // mix in batches
					t.Error(err)
					return
				}
				j += 6 // with the loop's j++, past the batch of 7
			}
			out[i] = ids
		}()
	}
	wg.Wait()
	var all []int64
	for i, ids := range out {
		for j := 1; j < len(ids); j++ {
			if ids[j] <= ids[j-1] {
				t.Fatalf("goroutine %d: id %d = %d not above %d", i, j, ids[j], ids[j-1])
			}
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("duplicate id %d", all[i])
		}
	}
	if len(all) != len(gens)*perG {
		t.Fatalf("%d ids, want %d", len(all), len(gens)*perG)
	}
}

func mustNew(t testing.TB, typ string, p keygen.Props) keygen.IDGenerator {
	t.Helper()
	g, err := keygen.NewID(typ, p)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestContextCancelledWhileWaiting(t *testing.T) {
	g, _ := newFake(t, "SNOWFLAKE", keygen.Props{"worker-id": "1", "max-vibration-offset": "0"})
	buf := make([]int64, 4096)
	if err := g.NextIDs(ctx, buf); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.NextID(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled (the sequence is used up)", err)
	}
}

func TestSystemClockMonotonic(t *testing.T) {
	c := keygen.NewSystemClock(nil)
	prev := c.Now()
	if d := time.Since(prev); d < -time.Second || d > time.Second {
		t.Fatalf("system clock is %v off the wall clock", d)
	}
	for i := 0; i < 100_000; i++ {
		now := c.Now()
		if now.Before(prev) {
			t.Fatalf("clock went back from %v to %v", prev, now)
		}
		prev = now
	}
	start := time.Now()
	c.Sleep(1500 * time.Microsecond)
	if d := time.Since(start); d < 1500*time.Microsecond {
		t.Fatalf("Sleep(1.5ms) returned after %v", d)
	}
}

// TestRecreatedGeneratorContinues: a generator rebuilt with the same worker
// id in the same process (or built per request by mistake) continues after
// the IDs of its predecessor instead of repeating them.
func TestRecreatedGeneratorContinues(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "SNOWFLAKE_JS", "UID"} {
		p := keygen.Props{"worker-id": "11"}
		clk := keygentest.NewClock(t0)
		seen := map[int64]bool{}
		for i := 0; i < 50; i++ {
			g, err := keygen.NewID(typ, p, keygen.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			for j := 0; j < 3; j++ {
				id := next(t, g)
				if seen[id] {
					t.Fatalf("%s: generator %d repeated id %d", typ, i, id)
				}
				seen[id] = true
			}
		}
		// The default clock is shared too: one generator per call still gives
		// unique IDs.
		perCall := 20_000
		if testing.Short() {
			perCall = 2_000
		}
		for i := 0; i < perCall; i++ {
			id := next(t, mustNew(t, typ, p))
			if seen[id] {
				t.Fatalf("%s: per-call generator %d repeated id %d", typ, i, id)
			}
			seen[id] = true
		}
	}
}

func TestLayoutFor(t *testing.T) {
	// Decoding needs no worker id, and an expired layout still decodes.
	l, err := keygen.LayoutFor("uid", keygen.Props{"timeBits": "28", "workerBits": "22", "seqBits": "13"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Decompose(4<<35 | 5<<13 | 3)
	if err != nil || p.Worker != 5 || p.Sequence != 3 || !p.Time.Equal(keygen.BaiduEpoch.Add(4*time.Second)) {
		t.Fatalf("Decompose = %+v, %v", p, err)
	}
	if l, err := keygen.LayoutFor("SNOWFLAKE_JS", nil); err != nil || l != keygen.JSLayout {
		t.Fatalf("LayoutFor(SNOWFLAKE_JS) = %v, %v", l, err)
	}
	if _, err := keygen.LayoutFor("SNOWFLAKE", keygen.Props{"time-bits": "50"}); !errors.Is(err, keygen.ErrInvalidLayout) {
		t.Fatalf("oversized layout err = %v", err)
	}
	if _, err := keygen.LayoutFor("SNOWFLAKE", keygen.Props{"worker-id": "x"}); !errors.Is(err, keygen.ErrInvalidProps) {
		t.Fatalf("bad worker id err = %v", err)
	}
	if _, err := keygen.LayoutFor("UUID", nil); !errors.Is(err, keygen.ErrNoLayout) {
		t.Fatalf("UUID err = %v", err)
	}
}

// TestSnowflakeWorkerLastUsedAtToleranceAheadIsRefused: a worker id last
// used exactly the tolerance later than the clock reads is refused at
// start, the same rule as a step back; one millisecond less is waited for.
func TestSnowflakeWorkerLastUsedAtToleranceAheadIsRefused(t *testing.T) {
	props := keygen.Props{"worker-id": "auto", "max-tolerate-time-difference-milliseconds": "10"}
	for _, c := range []struct {
		ahead   time.Duration
		refused bool
	}{{9 * time.Millisecond, false}, {10 * time.Millisecond, true}} {
		lease := &fakeLease{worker: 3, last: w0.Add(c.ahead)}
		lease.validUntil.Store(math.MaxInt64)
		_, err := keygen.NewID("SNOWFLAKE", props, keygen.WithClock(keygentest.NewClock(w0)),
			keygen.WithWorkerSource(&fakeSource{lease: lease}))
		var cb *keygen.ClockBackwardsError
		if got := errors.As(err, &cb); got != c.refused || (!c.refused && err != nil) {
			t.Errorf("last use %v ahead: err = %v, want refused=%v", c.ahead, err, c.refused)
		}
	}
}

// TestSnowflakeCoarseUnitToleratesAStepBackShorterThanTheTolerance: with a
// time unit above a millisecond, a clock step back is as long as the time
// to the last key's tick, not a whole unit per tick: 2 ms back across a
// second (or 10 ms) boundary is waited out under the default 10 ms
// tolerance, and 10 ms back is refused, as with the ms unit. A lease last
// used 5 ms ahead, across a boundary, is accepted likewise.
func TestSnowflakeCoarseUnitToleratesAStepBackShorterThanTheTolerance(t *testing.T) {
	for _, unit := range []string{"s", "10ms", "ms"} {
		at := time.Date(2026, 3, 4, 12, 0, 1, 1_000_000, time.UTC) // 1 ms into a second
		clk := keygentest.NewClock(at)
		g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "1", "time-unit": unit}, keygen.WithClock(clk))
		if err != nil {
			t.Fatal(err)
		}
		a := next(t, g)
		clk.Add(-2 * time.Millisecond)
		b, err := g.NextID(ctx)
		if err != nil || b <= a {
			t.Fatalf("unit %s, 2ms back: %d, %v; want a key above %d", unit, b, err, a)
		}
		want := time.Millisecond // to the start of the second (10 ms)
		if unit == "ms" {
			want = 2 * time.Millisecond // to the key's millisecond
		}
		if s := clk.Sleeps(); len(s) != 1 || s[0] != want {
			t.Fatalf("unit %s: sleeps %v, want one of %v", unit, s, want)
		}
		clk.Set(at.Add(-11 * time.Millisecond)) // 10 ms or more before the key's tick
		var cb *keygen.ClockBackwardsError
		if _, err := g.NextID(ctx); !errors.As(err, &cb) {
			t.Fatalf("unit %s, 10ms before the last tick: err = %v, want *ClockBackwardsError", unit, err)
		}

		lease := &fakeLease{worker: 3, last: at.Add(-time.Millisecond)}
		lease.validUntil.Store(math.MaxInt64)
		lc := keygentest.NewClock(at.Add(-6 * time.Millisecond))
		lg, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto", "time-unit": unit}, keygen.WithClock(lc),
			keygen.WithWorkerSource(&fakeSource{lease: lease}))
		if err != nil {
			t.Fatalf("unit %s, lease last used 5ms ahead: %v", unit, err)
		}
		// lease.last starts a tick in every unit: the key's tick is a later one.
		if p := decompose(t, lg, next(t, lg)); !p.Time.After(lease.last) {
			t.Fatalf("unit %s: key at %v, not after the lease's last use %v", unit, p.Time, lease.last)
		}
	}
}

// TestSnowflakeLastTickRunningOutIsAnErrorNotAWrap: in the last tick of
// the time field, on a 63-bit layout (the default 41/10/12) and a short
// one, a batch that runs out the tick's sequence gets the tick's keys
// (all positive, in the last tick) and then ErrTimeOverflow, never a key
// of a wrapped time or a negative one; so does every later call.
func TestSnowflakeLastTickRunningOutIsAnErrorNotAWrap(t *testing.T) {
	for _, props := range []keygen.Props{
		{"worker-id": "1023", "max-vibration-offset": "4095"},
		{"worker-id": "3", "time-bits": "39", "sequence-bits": "2", "max-vibration-offset": "0", "epoch": "2026-01-01T00:00:00Z"},
	} {
		g, clk := newFake(t, "SNOWFLAKE", props)
		l := g.(interface{ Layout() keygen.Layout }).Layout()
		clk.Set(l.RunsOut().Add(-time.Millisecond))
		dst := make([]int64, 1<<l.SequenceBits+1)
		err := g.NextIDs(ctx, dst)
		if !errors.Is(err, keygen.ErrTimeOverflow) {
			t.Fatalf("%v: NextIDs over the last tick: %v, want ErrTimeOverflow", props, err)
		}
		n := 0
		for _, id := range dst {
			if id == 0 {
				break
			}
			if p := decompose(t, g, id); id < 0 || p.Timestamp != l.MaxTimestamp() {
				t.Fatalf("%v: key %d at tick %d, want the last tick %d", props, id, p.Timestamp, l.MaxTimestamp())
			}
			n++
		}
		if n == 0 {
			t.Fatalf("%v: no key in the last tick", props)
		}
		if id, err := g.NextID(ctx); !errors.Is(err, keygen.ErrTimeOverflow) || id != 0 {
			t.Fatalf("%v: NextID after: %d, %v", props, id, err)
		}
	}
}
