package keygen_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// countingLease is a Lease that renews: the test moves its validity and
// its LeaseStats counters.
type countingLease struct {
	fakeLease
	renewals, failures atomic.Uint64
}

func (l *countingLease) Renewals() uint64 { return l.renewals.Load() }
func (l *countingLease) Failures() uint64 { return l.failures.Load() }

var _ keygen.LeaseStats = (*countingLease)(nil)

// TestStatsReportLeaseValidityAndRenewals: every generator holding a
// worker id reports its lease's validity end and renewal counts through
// Stats (a collector computes the time left from them), follows a renewal,
// reads as expired once closed, and reports no validity without a lease
// (0) or for a lease that never expires (math.MaxInt64).
func TestStatsReportLeaseValidityAndRenewals(t *testing.T) {
	ctx := context.Background()
	for _, typ := range []string{"SNOWFLAKE", "UID", "LEAF_SNOWFLAKE", "SNOWFLAKE_JS", "CACHED_UID"} {
		t.Run(typ, func(t *testing.T) {
			scope := keygen.NewSequenceScope()
			clock := keygentest.NewClock(w0)
			opts := func(src keygen.WorkerSource) []keygen.Option {
				// (CACHED_UID warns about a fixed worker-id; not this test's business.)
				o := []keygen.Option{keygen.WithClock(clock), keygen.WithSequenceScope(scope), keygen.WithLogger(slog.New(slog.DiscardHandler))}
				if src != nil {
					o = append(o, keygen.WithWorkerSource(src))
				}
				return o
			}
			build := func(props keygen.Props, src keygen.WorkerSource) keygen.IDGenerator {
				t.Helper()
				g, err := keygen.NewID(typ, props, opts(src)...)
				if err != nil {
					t.Fatal(err)
				}
				if c, ok := g.(io.Closer); ok {
					t.Cleanup(func() { c.Close() })
				}
				return g
			}
			stats := func(g keygen.IDGenerator) keygen.Stats {
				t.Helper()
				sr, ok := g.(keygen.StatsReporter)
				if !ok {
					t.Fatalf("%s is not a StatsReporter", typ)
				}
				return sr.Stats()
			}

			lease := &countingLease{fakeLease: fakeLease{worker: 3}}
			until := w0.Add(time.Minute).UnixNano()
			lease.validUntil.Store(until)
			g := build(keygen.Props{"worker-id": "auto"}, leaseSource{lease})
			if _, err := g.NextID(ctx); err != nil {
				t.Fatal(err)
			}
			if s := stats(g); s.LeaseValidUntil != until || s.LeaseRenewals != 0 || s.LeaseFailures != 0 {
				t.Errorf("fresh lease: LeaseValidUntil %d, renewals %d, failures %d; want %d, 0, 0",
					s.LeaseValidUntil, s.LeaseRenewals, s.LeaseFailures, until)
			}
			renewed := w0.Add(2 * time.Minute).UnixNano()
			lease.validUntil.Store(renewed)
			lease.renewals.Store(4)
			lease.failures.Store(1)
			if s := stats(g); s.LeaseValidUntil != renewed || s.LeaseRenewals != 4 || s.LeaseFailures != 1 {
				t.Errorf("renewed lease: LeaseValidUntil %d, renewals %d, failures %d; want %d, 4, 1",
					s.LeaseValidUntil, s.LeaseRenewals, s.LeaseFailures, renewed)
			}
			g.(io.Closer).Close()
			if s := stats(g); s.LeaseValidUntil > clock.Now().UnixNano() {
				t.Errorf("closed generator: LeaseValidUntil %d, want at or before now (%d): it issues no key",
					s.LeaseValidUntil, clock.Now().UnixNano())
			}

			static := build(keygen.Props{"worker-id": "auto"}, keygen.StaticWorker(5))
			if s := stats(static); s.LeaseValidUntil != math.MaxInt64 {
				t.Errorf("static worker source: LeaseValidUntil %d, want math.MaxInt64 (never expires)", s.LeaseValidUntil)
			}
			fixed := build(keygen.Props{"worker-id": "7"}, nil)
			if s := stats(fixed); s.LeaseValidUntil != 0 || s.LeaseRenewals != 0 || s.LeaseFailures != 0 {
				t.Errorf("fixed worker-id: LeaseValidUntil %d, renewals %d, failures %d; want 0, 0, 0",
					s.LeaseValidUntil, s.LeaseRenewals, s.LeaseFailures)
			}
		})
	}
}

// leaseSource hands out one lease.
type leaseSource struct{ l keygen.Lease }

func (s leaseSource) Acquire(context.Context, keygen.WorkerInfo) (keygen.Lease, error) {
	return s.l, nil
}
