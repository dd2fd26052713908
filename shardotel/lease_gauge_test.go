package shardotel_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardotel"
)

// The lease-remaining gauge of real generators follows their lease: the
// time left on the generator's clock while it is valid, 0 once it has
// expired (never negative) and once the generator is closed (even for a
// lease that never expires), absent for a fixed worker-id prop and for a
// lease that never expires; keys issued keep their count after Close.
func TestLeaseRemainingFollowsARealGeneratorsLease(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "LEAF_SNOWFLAKE"} {
		t.Run(typ, func(t *testing.T) {
			at := kvs(shardotel.KeygenTypeKey.String(typ))
			remaining := func(te *telemetry) (float64, bool) {
				v, ok := gauge(t, te.collect(t), "shardkey.keygen.lease.remaining")[at]
				return v, ok
			}
			open := func(t *testing.T, clock *keygentest.Clock, props keygen.Props, opts ...keygen.Option) (keygen.IDGenerator, *telemetry) {
				t.Helper()
				te := newTelemetry(t, nil)
				gen, err := keygen.NewID(typ, props, append(opts, keygen.WithClock(clock), keygen.WithSequenceScope(keygen.NewSequenceScope()))...)
				if err != nil {
					t.Fatal(err)
				}
				reg, err := shardotel.RegisterGenerator(gen.(keygen.StatsReporter), shardotel.WithMeterProvider(te.mp), shardotel.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { reg.Unregister() })
				return gen, te
			}

			t.Run("expiring lease", func(t *testing.T) {
				clock := keygentest.NewClock(g0)
				lease := &fixedLease{worker: 3, validUntil: g0.Add(10 * time.Second).UnixNano()}
				gen, te := open(t, clock, keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(lease))
				defer gen.(interface{ Close() error }).Close()
				if v, ok := remaining(te); !ok || v != 10 {
					t.Errorf("at the start: remaining %v (reported %v), want 10", v, ok)
				}
				clock.Add(7500 * time.Millisecond)
				if _, err := gen.NextID(context.Background()); err != nil {
					t.Fatal(err)
				}
				if v, _ := remaining(te); v != 2.5 {
					t.Errorf("7.5 s in: remaining %v, want 2.5", v)
				}
				clock.Add(time.Hour)
				if _, err := gen.NextID(context.Background()); err == nil {
					t.Error("a key issued on an expired lease")
				}
				if v, ok := remaining(te); !ok || v != 0 {
					t.Errorf("expired: remaining %v (reported %v), want 0", v, ok)
				}
			})

			t.Run("closed", func(t *testing.T) {
				for _, validUntil := range []int64{g0.Add(time.Minute).UnixNano(), math.MaxInt64} {
					clock := keygentest.NewClock(g0)
					gen, te := open(t, clock, keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(&fixedLease{worker: 4, validUntil: validUntil}))
					if _, err := gen.NextID(context.Background()); err != nil {
						t.Fatal(err)
					}
					_, before := remaining(te)
					if before != (validUntil != math.MaxInt64) {
						t.Errorf("lease valid until %d: remaining reported %v before Close", validUntil, before)
					}
					if err := gen.(interface{ Close() error }).Close(); err != nil {
						t.Fatal(err)
					}
					if v, ok := remaining(te); !ok || v != 0 {
						t.Errorf("lease valid until %d, closed: remaining %v (reported %v), want 0", validUntil, v, ok)
					}
					if got := sum(t, te.collect(t), "shardkey.keygen.keys.issued")[at]; got != 1 {
						t.Errorf("keys issued after Close: %d, want 1", got)
					}
				}
			})

			t.Run("fixed worker id", func(t *testing.T) {
				clock := keygentest.NewClock(g0)
				gen, te := open(t, clock, keygen.Props{"worker-id": "5"})
				defer func() {
					if c, ok := gen.(interface{ Close() error }); ok {
						c.Close()
					}
				}()
				if _, err := gen.NextID(context.Background()); err != nil {
					t.Fatal(err)
				}
				if v, ok := remaining(te); ok {
					t.Errorf("a fixed worker id reports %v s of lease left", v)
				}
			})
		})
	}
}
