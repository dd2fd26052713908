package coretest_test

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
)

// BenchmarkSegmentLatency: NextID under RunParallel with a small step, so
// ranges keep refilling from the real PostgreSQL while keys are drawn.
// Every call's latency (including one clock read on each side, equal for
// all calls) goes into a log2 histogram; the benchmark reports the median,
// p99 and p99.9 and logs the histogram. The target: p99.9 under 20× the
// median.
func BenchmarkSegmentLatency(b *testing.B) {
	db := openSegDB(b, segDBs[0], dbtest.Postgres(b, "segment_latency"))
	defer db.Close()
	g := newSegment(b, db, keygen.Props{"biz-tag": "latency", "step": "10000", "min-step": "10000", "max-step": "10000"})
	defer g.(io.Closer).Close()
	ctx := context.Background()
	var mu sync.Mutex
	var all []int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		lat := make([]int64, 0, 1<<16)
		for pb.Next() {
			start := time.Now()
			if _, err := g.NextID(ctx); err != nil {
				b.Error(err)
				return
			}
			lat = append(lat, int64(time.Since(start)))
		}
		mu.Lock()
		all = append(all, lat...)
		mu.Unlock()
	})
	if len(all) < 1000 {
		return // the calibration rounds
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) }
	p50, p99, p999 := q(0.5), q(0.99), q(0.999)
	b.ReportMetric(p50, "p50-ns")
	b.ReportMetric(p99, "p99-ns")
	b.ReportMetric(p999, "p99.9-ns")
	b.ReportMetric(p999/p50, "p99.9/p50")
	st := g.(keygen.StatsReporter).Stats()
	b.ReportMetric(float64(st.LeaseRenewals), "ranges")
	var hist [64]int
	for _, v := range all {
		hist[bits.Len64(uint64(v))]++
	}
	var out strings.Builder
	for i, n := range hist {
		if n > 0 {
			fmt.Fprintf(&out, "  < %-10v %d\n", time.Duration(1)<<i, n)
		}
	}
	b.Logf("%d calls, %d ranges fetched; latency histogram:\n%s", len(all), st.LeaseRenewals, out.String())
}
