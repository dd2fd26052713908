package shardotel_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardotel"
)

// fakeGenerator reports the Stats the test sets and counts the reads.
type fakeGenerator struct {
	stats atomic.Pointer[keygen.Stats]
	reads atomic.Int64
}

func (g *fakeGenerator) Type() string { return "SNOWFLAKE" }
func (g *fakeGenerator) Stats() keygen.Stats {
	g.reads.Add(1)
	return *g.stats.Load()
}

var g0 = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

// TestRegisteredGeneratorReportsEveryStat: each keygen.Stats figure is
// reported under its name with the generator's type and the given
// attributes, the lease's time left as a gauge in seconds on the given
// clock, read once per collection and current at each.
func TestRegisteredGeneratorReportsEveryStat(t *testing.T) {
	te := newTelemetry(t, nil)
	clock := keygentest.NewClock(g0)
	gen := &fakeGenerator{}
	gen.stats.Store(&keygen.Stats{Issued: 1000, ClockWaits: 2, ClockBackSteps: 3, SequenceWaits: 4,
		LeaseRenewals: 5, LeaseFailures: 6, LeaseRefusals: 7, LeaseValidUntil: g0.Add(90 * time.Second).UnixNano()})
	reg, err := shardotel.RegisterGenerator(gen, shardotel.WithMeterProvider(te.mp), shardotel.WithClock(clock),
		shardotel.WithAttributes(attribute.String("shardkey.keygen.name", "orders")))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	at := kvs(shardotel.KeygenTypeKey.String("SNOWFLAKE"), attribute.String("shardkey.keygen.name", "orders"))

	check := func(want map[string]int64, remaining float64) {
		t.Helper()
		before := gen.reads.Load()
		ms := te.collect(t)
		if n := gen.reads.Load() - before; n != 1 {
			t.Errorf("Stats read %d times in one collection, want once", n)
		}
		for name, v := range want {
			if got := sum(t, ms, name); len(got) != 1 || got[at] != v {
				t.Errorf("%s = %v, want %d at {%s}", name, got, v, at)
			}
			if ms[name].Unit == "" || ms[name].Description == "" {
				t.Errorf("%s: unit %q, description %q", name, ms[name].Unit, ms[name].Description)
			}
		}
		if got := gauge(t, ms, "shardkey.keygen.lease.remaining"); len(got) != 1 || got[at] != remaining {
			t.Errorf("lease remaining %v, want %g s at {%s}", got, remaining, at)
		}
		if u := ms["shardkey.keygen.lease.remaining"].Unit; u != "s" {
			t.Errorf("lease remaining unit %q, want s", u)
		}
	}
	check(map[string]int64{
		"shardkey.keygen.keys.issued": 1000, "shardkey.keygen.clock.waits": 2, "shardkey.keygen.clock.back_steps": 3,
		"shardkey.keygen.sequence.waits": 4, "shardkey.keygen.lease.renewals": 5,
		"shardkey.keygen.lease.renewal_failures": 6, "shardkey.keygen.lease.refusals": 7,
	}, 90)

	clock.Add(30 * time.Second)
	gen.stats.Store(&keygen.Stats{Issued: 1500, ClockWaits: 2, ClockBackSteps: 3, SequenceWaits: 9,
		LeaseRenewals: 6, LeaseFailures: 6, LeaseRefusals: 7, LeaseValidUntil: g0.Add(90 * time.Second).UnixNano()})
	check(map[string]int64{
		"shardkey.keygen.keys.issued": 1500, "shardkey.keygen.sequence.waits": 9, "shardkey.keygen.lease.renewals": 6,
	}, 60)
}

// TestLeaseRemainingOnlyForALeaseThatCanExpire: no time left is reported
// without a lease or for one that never expires; an expired or closed
// lease reports 0, never a negative time.
func TestLeaseRemainingOnlyForALeaseThatCanExpire(t *testing.T) {
	for _, c := range []struct {
		name       string
		validUntil int64
		want       []float64
	}{
		{"no lease", 0, nil},
		{"never expires", math.MaxInt64, nil},
		{"closed", math.MinInt64, []float64{0}},
		{"expired", g0.Add(-time.Second).UnixNano(), []float64{0}},
		{"valid", g0.Add(1500 * time.Millisecond).UnixNano(), []float64{1.5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := newTelemetry(t, nil)
			gen := &fakeGenerator{}
			gen.stats.Store(&keygen.Stats{Issued: 1, LeaseValidUntil: c.validUntil})
			reg, err := shardotel.RegisterGenerator(gen, shardotel.WithMeterProvider(te.mp), shardotel.WithClock(keygentest.NewClock(g0)))
			if err != nil {
				t.Fatal(err)
			}
			defer reg.Unregister()
			var got []float64
			for _, v := range gauge(t, te.collect(t), "shardkey.keygen.lease.remaining") {
				got = append(got, v)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("remaining %v, want %v", got, c.want)
			}
		})
	}
}

// TestUnregisterStopsReporting: after Unregister the generator is no
// longer read nor reported; a second Unregister is harmless.
func TestUnregisterStopsReporting(t *testing.T) {
	te := newTelemetry(t, nil)
	gen := &fakeGenerator{}
	gen.stats.Store(&keygen.Stats{Issued: 3})
	reg, err := shardotel.RegisterGenerator(gen, shardotel.WithMeterProvider(te.mp))
	if err != nil {
		t.Fatal(err)
	}
	if got := sum(t, te.collect(t), "shardkey.keygen.keys.issued"); len(got) != 1 {
		t.Fatalf("issued %v", got)
	}
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	if err := reg.Unregister(); err != nil {
		t.Fatalf("second Unregister: %v", err)
	}
	reads := gen.reads.Load()
	if ms := te.collect(t); len(ms) > 0 {
		if got := sum(t, ms, "shardkey.keygen.keys.issued"); len(got) != 0 {
			t.Errorf("still reported after Unregister: %v", got)
		}
	}
	if gen.reads.Load() != reads {
		t.Error("Stats read after Unregister")
	}
	if _, err := shardotel.RegisterGenerator(nil); !errors.Is(err, shardotel.ErrNilGenerator) {
		t.Errorf("nil generator: %v, want ErrNilGenerator", err)
	}
}

// TestRegisteredSnowflakeReportsItsKeysAndLease: a real SNOWFLAKE with a
// worker-id lease valid for two minutes reports the keys it issued, its
// type and the lease's time left on its own clock; NextID is untouched.
func TestRegisteredSnowflakeReportsItsKeysAndLease(t *testing.T) {
	te := newTelemetry(t, nil)
	clock := keygentest.NewClock(g0)
	lease := &fixedLease{worker: 9, validUntil: g0.Add(2 * time.Minute).UnixNano()}
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, keygen.WithClock(clock),
		keygen.WithWorkerSource(lease), keygen.WithSequenceScope(keygen.NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	defer gen.(interface{ Close() error }).Close()
	reg, err := shardotel.RegisterGenerator(gen.(keygen.StatsReporter), shardotel.WithMeterProvider(te.mp), shardotel.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	for range 5 {
		if _, err := gen.NextID(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(20 * time.Second)
	ms := te.collect(t)
	at := kvs(shardotel.KeygenTypeKey.String("SNOWFLAKE"))
	if got := sum(t, ms, "shardkey.keygen.keys.issued"); got[at] != 5 {
		t.Errorf("issued %v, want 5 at {%s}", got, at)
	}
	if got := gauge(t, ms, "shardkey.keygen.lease.remaining"); got[at] != 100 {
		t.Errorf("remaining %v, want 100 s", got)
	}
}

// fixedLease is a worker-id lease valid up to a fixed time; it is its own
// WorkerSource.
type fixedLease struct {
	worker, validUntil int64
}

func (l *fixedLease) Acquire(context.Context, keygen.WorkerInfo) (keygen.Lease, error) { return l, nil }
func (l *fixedLease) Worker() int64                                                    { return l.worker }
func (l *fixedLease) LastUsed() time.Time                                              { return time.Time{} }
func (l *fixedLease) ValidUntil() int64                                                { return l.validUntil }
func (l *fixedLease) Track(func() time.Time)                                           {}
func (l *fixedLease) Close() error                                                     { return nil }

// TestTwoGeneratorsAreReportedApart: generators registered on one meter
// provider with attributes that tell them apart each have their own
// series; unregistering one leaves the other.
func TestTwoGeneratorsAreReportedApart(t *testing.T) {
	te := newTelemetry(t, nil)
	orders, users := &fakeGenerator{}, &fakeGenerator{}
	orders.stats.Store(&keygen.Stats{Issued: 10})
	users.stats.Store(&keygen.Stats{Issued: 20})
	name := attribute.Key("shardkey.keygen.name")
	ro, err := shardotel.RegisterGenerator(orders, shardotel.WithMeterProvider(te.mp), shardotel.WithAttributes(name.String("orders")))
	if err != nil {
		t.Fatal(err)
	}
	ru, err := shardotel.RegisterGenerator(users, shardotel.WithMeterProvider(te.mp), shardotel.WithAttributes(name.String("users")))
	if err != nil {
		t.Fatal(err)
	}
	defer ru.Unregister()
	at := func(n string) string { return kvs(shardotel.KeygenTypeKey.String("SNOWFLAKE"), name.String(n)) }
	if got := sum(t, te.collect(t), "shardkey.keygen.keys.issued"); got[at("orders")] != 10 || got[at("users")] != 20 || len(got) != 2 {
		t.Errorf("issued %v, want 10 for orders and 20 for users", got)
	}
	ro.Unregister()
	if got := sum(t, te.collect(t), "shardkey.keygen.keys.issued"); got[at("users")] != 20 || len(got) != 1 {
		t.Errorf("after unregistering orders: issued %v, want users' 20 alone", got)
	}
}
