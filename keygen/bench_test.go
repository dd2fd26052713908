package keygen_test

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

var sinkInt64 int64

// uncapped is a layout whose sequence never runs out at benchmark speed
// (4,194,304 IDs per millisecond), so NextID's cost is measured without
// waits for the next millisecond.
var uncapped = keygen.Props{"worker-id": "0", "worker-bits": "0", "sequence-bits": "22", "max-vibration-offset": "0"}

func mustID(b testing.TB, typ string, p keygen.Props) keygen.IDGenerator {
	g, err := keygen.NewID(typ, p)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkTimeNow is the baseline for NextID: one bare clock read.
func BenchmarkTimeNow(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkInt64 += time.Now().UnixNano()
	}
}

func BenchmarkNextID(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		typ   string
		props keygen.Props
	}{
		{"uncapped", "SNOWFLAKE", uncapped},
		{"snowflake-default", "SNOWFLAKE", keygen.Props{"worker-id": "1"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g := mustID(b, bc.typ, bc.props)
			b.ReportAllocs()
			for b.Loop() {
				id, err := g.NextID(ctx)
				if err != nil {
					b.Fatal(err)
				}
				sinkInt64 += id
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
		})
		b.Run(bc.name+"-parallel", func(b *testing.B) {
			g := mustID(b, bc.typ, bc.props)
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
}

// BenchmarkNextIDs reports the cost per ID of filling a 1,024-slot buffer.
func BenchmarkNextIDs(b *testing.B) {
	ctx := context.Background()
	g := mustID(b, "SNOWFLAKE", uncapped)
	buf := make([]int64, 1024)
	b.ReportAllocs()
	for b.Loop() {
		if err := g.NextIDs(ctx, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(buf)), "ns/id")
}

// benchLease is a lease like workerlease's: validity in an atomic.
type benchLease struct{ valid atomic.Int64 }

func (*benchLease) Worker() int64               { return 0 }
func (*benchLease) LastUsed() time.Time         { return time.Time{} }
func (l *benchLease) ValidUntil() int64         { return l.valid.Load() }
func (*benchLease) Track(last func() time.Time) {}
func (*benchLease) Close() error                { return nil }

type benchSource struct{ l *benchLease }

func (s benchSource) Acquire(context.Context, keygen.WorkerInfo) (keygen.Lease, error) {
	return s.l, nil
}

// BenchmarkNextIDLease: the cost of checking a worker-id lease on every
// key (impl=leased, an atomic read and a compare) against a fixed
// worker-id (impl=static), on the uncapped layout.
func BenchmarkNextIDLease(b *testing.B) {
	ctx := context.Background()
	for _, impl := range []string{"static", "leased"} {
		b.Run("impl="+impl, func(b *testing.B) {
			props := keygen.Props{"worker-bits": "0", "sequence-bits": "22", "max-vibration-offset": "0"}
			var opts []keygen.Option
			if impl == "static" {
				props["worker-id"] = "0"
			} else {
				l := &benchLease{}
				l.valid.Store(math.MaxInt64)
				opts = append(opts, keygen.WithWorkerSource(benchSource{l}))
			}
			g, err := keygen.NewID("SNOWFLAKE", props, opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				id, err := g.NextID(ctx)
				if err != nil {
					b.Fatal(err)
				}
				sinkInt64 += id
			}
		})
	}
}
