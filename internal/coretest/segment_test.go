package coretest_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/goleak"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// segRange is a range reported by a generator's debug log.
type segRange struct {
	gen         int
	first, last int64
	step        int64
}

// rangeLog is a slog.Handler collecting "range reserved" records.
type rangeLog struct {
	mu     *sync.Mutex
	gen    int
	ranges *[]segRange
}

func newRangeLog() *rangeLog { return &rangeLog{mu: &sync.Mutex{}, ranges: &[]segRange{}} }

func (h *rangeLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *rangeLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *rangeLog) WithGroup(string) slog.Handler            { return h }
func (h *rangeLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level != slog.LevelDebug {
		return nil
	}
	s := segRange{gen: h.gen}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "first":
			s.first = a.Value.Int64()
		case "last":
			s.last = a.Value.Int64()
		case "step":
			s.step = a.Value.Int64()
		}
		return true
	})
	h.mu.Lock()
	*h.ranges = append(*h.ranges, s)
	h.mu.Unlock()
	return nil
}

func (h *rangeLog) forGen(gen int) *slog.Logger {
	return slog.New(&rangeLog{mu: h.mu, gen: gen, ranges: h.ranges})
}

func (h *rangeLog) all() []segRange {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.ranges)
}

type segDB struct {
	name   string
	driver string
	dsn    func(t testing.TB, name string) string
}

var segDBs = []segDB{
	{"postgres", "pgx", dbtest.Postgres},
	{"mysql", "mysql", dbtest.MySQL},
}

func openSegDB(t testing.TB, d segDB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(d.driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newSegment(t testing.TB, db *sql.DB, props keygen.Props, opts ...keygen.Option) keygen.IDGenerator {
	t.Helper()
	g, err := keygen.NewID("SEGMENT", props, append([]keygen.Option{keygen.WithDB(db)}, opts...)...)
	if err != nil {
		t.Fatalf("New SEGMENT: %v", err)
	}
	if _, ok := g.(io.Closer); !ok {
		t.Fatal("SEGMENT generator is not an io.Closer")
	}
	if _, ok := g.(keygen.StatsReporter); !ok {
		t.Fatal("SEGMENT generator is not a StatsReporter")
	}
	return g
}

func maxID(t testing.TB, db *sql.DB, d segDB, tag string) int64 {
	t.Helper()
	q := "SELECT max_id FROM leaf_alloc WHERE biz_tag = $1"
	if d.driver == "mysql" {
		q = "SELECT max_id FROM leaf_alloc WHERE biz_tag = ?"
	}
	var n int64
	if err := db.QueryRow(q, tag).Scan(&n); err != nil {
		t.Fatalf("read max_id: %v", err)
	}
	return n
}

func TestSegmentProps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props keygen.Props
	}{
		{"missing biz-tag", keygen.Props{}},
		{"long biz-tag", keygen.Props{"biz-tag": string(make([]byte, 129))}},
		{"bad step", keygen.Props{"biz-tag": "x", "step": "0"}},
		{"bad threshold", keygen.Props{"biz-tag": "x", "prefetch-threshold": "1.5"}},
		{"bad table", keygen.Props{"biz-tag": "x", "table": "t; DROP TABLE x"}},
		{"unknown", keygen.Props{"biz-tag": "x", "stepp": "3"}},
		{"min above step", keygen.Props{"biz-tag": "x", "step": "10", "min-step": "20"}},
	} {
		if _, err := keygen.New("SEGMENT", tc.props); !errors.Is(err, keygen.ErrInvalidProps) {
			t.Errorf("%s: err = %v, want ErrInvalidProps", tc.name, err)
		}
	}
	// No database: a PropError, not a panic.
	_, err := keygen.New("SEGMENT", keygen.Props{"biz-tag": "orders"})
	var pe *keygen.PropError
	if !errors.As(err, &pe) {
		t.Fatalf("no DB: err = %v, want *PropError", err)
	}
}

// TestSegmentConcurrent: 64 goroutines draw 200,000 keys from one biz_tag
// through 4 generators, each with its own *sql.DB (4 "processes").
func TestSegmentConcurrent(t *testing.T) {
	for _, d := range segDBs {
		t.Run(d.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			dsn := d.dsn(t, "segment_concurrent")
			const gens, workers, total = 4, 64, 200_000
			log := newRangeLog()
			var dbs []*sql.DB
			var gs []keygen.IDGenerator
			for i := 0; i < gens; i++ {
				db := openSegDB(t, d, dsn)
				dbs = append(dbs, db)
				gs = append(gs, newSegment(t, db, keygen.Props{"biz-tag": "orders", "step": "100", "max-step": "3000",
					"prefetch-threshold": "0.1"}, keygen.WithLogger(log.forGen(i))))
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			keys := make([][]int64, workers)
			var wg sync.WaitGroup
			var failed atomic.Value
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					g := gs[w%gens]
					out := make([]int64, 0, total/workers)
					buf := make([]int64, 37)
					for len(out) < total/workers {
						if w%2 == 0 {
							id, err := g.NextID(ctx)
							if err != nil {
								failed.Store(err)
								return
							}
							out = append(out, id)
							continue
						}
						n := min(1+len(out)%len(buf), total/workers-len(out))
						if err := g.NextIDs(ctx, buf[:n]); err != nil {
							failed.Store(err)
							return
						}
						out = append(out, buf[:n]...)
					}
					keys[w] = out
				}(w)
			}
			wg.Wait()
			if err := failed.Load(); err != nil {
				t.Fatalf("draw: %v", err)
			}
			var issued uint64
			for _, g := range gs {
				issued += g.(keygen.StatsReporter).Stats().Issued
				if err := g.(io.Closer).Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := g.NextID(ctx); err == nil {
					t.Fatal("NextID after Close succeeded")
				}
			}
			if issued != total {
				t.Errorf("Stats.Issued sums to %d, want %d", issued, total)
			}
			final := maxID(t, dbs[0], d, "orders")
			for _, db := range dbs {
				db.Close()
			}

			// Ranges: disjoint, within [1, max_id-1]. A reservation in
			// flight when its generator is closed is committed but
			// cancelled client-side, so it leaves a gap: at most one per
			// generator, of at most max-step keys.
			ranges := log.all()
			sort.Slice(ranges, func(i, j int) bool { return ranges[i].first < ranges[j].first })
			want, gaps := int64(1), int64(0)
			for _, r := range ranges {
				if r.first < want || r.last-r.first+1 != r.step {
					t.Fatalf("range %+v overlaps the previous one (ending at %d) or has the wrong size", r, want-1)
				}
				gaps += r.first - want
				want = r.last + 1
			}
			gaps += final - want
			if want > final || gaps > gens*3000 {
				t.Fatalf("ranges end at %d with %d keys of gaps; table max_id is %d", want-1, gaps, final)
			}
			if len(ranges) < 10 {
				t.Errorf("only %d ranges reserved; want the test to cross many ranges", len(ranges))
			}

			// Keys: no zero, no duplicate, each within a range of the
			// generator that drew it, increasing per goroutine, and each
			// range consumed as a gap-free prefix.
			owner := func(k int64) int {
				i := sort.Search(len(ranges), func(i int) bool { return ranges[i].last >= k })
				if i == len(ranges) || k < ranges[i].first {
					return -1
				}
				return i
			}
			count := make([]int64, len(ranges))
			top := make([]int64, len(ranges))
			seen := make(map[int64]bool, total)
			for w, ks := range keys {
				for j, k := range ks {
					if k <= 0 {
						t.Fatalf("worker %d drew %d", w, k)
					}
					if seen[k] {
						t.Fatalf("duplicate key %d", k)
					}
					seen[k] = true
					if j > 0 && k <= ks[j-1] {
						t.Fatalf("worker %d: %d after %d", w, k, ks[j-1])
					}
					i := owner(k)
					if i < 0 || ranges[i].gen != w%gens {
						t.Fatalf("key %d of generator %d is not in one of its ranges", k, w%gens)
					}
					count[i]++
					top[i] = max(top[i], k)
				}
			}
			if len(seen) != total {
				t.Fatalf("%d keys, want %d", len(seen), total)
			}
			for i, r := range ranges {
				if count[i] > 0 && top[i] != r.first+count[i]-1 {
					t.Errorf("range %+v: %d keys up to %d, not contiguous from its start", r, count[i], top[i])
				}
			}
		})
	}
}

// TestSegmentAdaptiveStep: with a clock that stands still every range
// lasts "no time", so the step doubles up to max-step; with a clock that
// jumps an hour per reading it halves down to min-step.
func TestSegmentAdaptiveStep(t *testing.T) {
	for _, d := range segDBs {
		t.Run(d.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			db := openSegDB(t, d, d.dsn(t, "segment_adaptive"))
			defer db.Close()
			clock := keygentest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			log := newRangeLog()
			g := newSegment(t, db, keygen.Props{"biz-tag": "adaptive", "step": "10", "min-step": "5", "max-step": "80"},
				keygen.WithClock(clock), keygen.WithLogger(log.forGen(0)))
			defer g.(io.Closer).Close()
			ctx := context.Background()
			dst := make([]int64, 400)
			if err := g.NextIDs(ctx, dst); err != nil {
				t.Fatal(err)
			}
			for i, id := range dst {
				if id != int64(i+1) {
					t.Fatalf("key %d is %d, want %d", i, id, i+1)
				}
			}
			var steps []int64
			for _, r := range log.all() {
				steps = append(steps, r.step)
			}
			if len(steps) < 6 || !slices.Equal(steps[:6], []int64{10, 20, 40, 80, 80, 80}) {
				t.Fatalf("steps %v, want 10 20 40 80 80 80 ...", steps)
			}
			clock.SetStep(time.Hour)
			if err := g.NextIDs(ctx, dst); err != nil {
				t.Fatal(err)
			}
			steps = steps[:0]
			for _, r := range log.all() {
				steps = append(steps, r.step)
			}
			if !slices.Contains(steps, 40) || steps[len(steps)-1] != 5 {
				t.Fatalf("steps %v, want halving down to 5 after slow ranges", steps)
			}
			g.(io.Closer).Close()
			if got, want := maxID(t, db, d, "adaptive"), func() int64 {
				s := int64(1)
				for _, r := range log.all() {
					s += r.step
				}
				return s
			}(); got < want || got > want+80 {
				// A prefetch in flight when Close cancels it may still commit
				// one range (at most max-step) that no key came from: a gap,
				// never an overlap.
				t.Fatalf("max_id %d, want %d (+ at most one unlogged range of ≤ 80)", got, want)
			}
		})
	}
}

// TestSegmentDatabaseCutOff: with the database gone, buffered keys keep
// coming, then NextID fails with ErrSegmentUnavailable by the deadline.
func TestSegmentDatabaseCutOff(t *testing.T) {
	for _, d := range segDBs {
		t.Run(d.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			db := openSegDB(t, d, d.dsn(t, "segment_cutoff"))
			g := newSegment(t, db, keygen.Props{"biz-tag": "cut", "step": "1000", "prefetch-threshold": "0.5"})
			defer g.(io.Closer).Close()
			sr := g.(keygen.StatsReporter)
			ctx := context.Background()
			dst := make([]int64, 600) // past the threshold: the prefetch starts
			if err := g.NextIDs(ctx, dst); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); sr.Stats().LeaseRenewals < 2; {
				if time.Now().After(deadline) {
					t.Fatal("prefetch did not complete")
				}
				time.Sleep(5 * time.Millisecond)
			}
			db.Close()
			// 400 left in the current range, 2000 (doubled step) prefetched.
			prev := dst[len(dst)-1]
			for i := 0; i < 2400; i++ {
				id, err := g.NextID(ctx)
				if err != nil {
					t.Fatalf("buffered key %d: %v", i, err)
				}
				if id <= prev {
					t.Fatalf("key %d after %d", id, prev)
				}
				prev = id
			}
			tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			id, err := g.NextID(tctx)
			if !errors.Is(err, keygen.ErrSegmentUnavailable) || !errors.Is(err, context.DeadlineExceeded) || id != 0 {
				t.Fatalf("NextID with the database gone = %d, %v; want ErrSegmentUnavailable", id, err)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Fatalf("returned after %v, deadline was 300ms", el)
			}
			if err := g.NextIDs(tctx, dst[:1]); !errors.Is(err, keygen.ErrSegmentUnavailable) {
				t.Fatalf("NextIDs: %v", err)
			}
			s := sr.Stats()
			if s.LeaseFailures == 0 || s.LeaseRefusals < 2 || s.Issued != 3000 {
				t.Fatalf("stats %+v", s)
			}
			if err := g.(io.Closer).Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := g.NextID(ctx); err == nil {
				t.Fatal("NextID after Close succeeded")
			}
		})
	}
}

func BenchmarkSegment(b *testing.B) {
	b.Run("impl=atomic-add", func(b *testing.B) {
		var n atomic.Int64
		b.Run("serial", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				n.Add(1)
			}
		})
		b.Run("parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n.Add(1)
				}
			})
		})
	})
	b.Run("impl=segment", func(b *testing.B) {
		db := openSegDB(b, segDBs[0], dbtest.Postgres(b, "segment_bench"))
		defer db.Close()
		g := newSegment(b, db, keygen.Props{"biz-tag": "bench", "step": "1000000000", "prefetch-threshold": "1"})
		defer g.(io.Closer).Close()
		ctx := context.Background()
		b.Run("serial", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := g.NextID(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.NextID(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	})
}
