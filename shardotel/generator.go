package shardotel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/shardkey/shardkey/keygen"
)

// ErrNilGenerator is RegisterGenerator's error for a nil generator.
var ErrNilGenerator = errors.New("shardotel: nil generator")

// Registration is a generator's registration with a meter; Unregister
// ends it.
type Registration struct {
	reg  metric.Registration
	once sync.Once
	err  error
}

// Unregister stops reporting the generator; its series stop at the next
// collection. It is idempotent and returns the first call's error.
func (r *Registration) Unregister() error {
	r.once.Do(func() { r.err = r.reg.Unregister() })
	return r.err
}

// generatorInstruments are the observable instruments of keygen.Stats.
type generatorInstruments struct {
	issued, clockWaits, clockBack, seqWaits, renewals, failures, refusals metric.Int64ObservableCounter
	remaining                                                             metric.Float64ObservableGauge
}

// RegisterGenerator reports gen's keygen.Stats at every collection of the
// meter provider (WithMeterProvider, the global one by default), reading
// Stats once per collection: the generator's NextID is not touched.
// Every figure carries shardkey.keygen.type (when gen has a Type method,
// as every keygen generator has) and WithAttributes' attributes; give two
// generators of one type attributes that tell them apart, or their
// figures collide. Generators sharing a sequence state (same layout and
// worker id in one process) report the same key and clock counters.
//
// The figures, all cumulative counters but the last:
// shardkey.keygen.keys.issued, .clock.waits, .clock.back_steps,
// .sequence.waits, .lease.renewals, .lease.renewal_failures,
// .lease.refusals, and the gauge shardkey.keygen.lease.remaining: the
// seconds left on the worker-id lease (measured on WithClock's clock; 0
// once expired), reported only for a lease that can expire.
//
// Unregister the returned Registration when the generator is closed.
func RegisterGenerator(gen keygen.StatsReporter, opts ...Option) (*Registration, error) {
	if gen == nil {
		return nil, ErrNilGenerator
	}
	c := newConfig(opts)
	kv := slices.Clone(c.attrs)
	if t, ok := gen.(interface{ Type() string }); ok {
		kv = append(kv, KeygenTypeKey.String(t.Type()))
	}
	set := attribute.NewSet(kv...)
	obs := []metric.ObserveOption{metric.WithAttributeSet(set)}

	meter := c.meterProvider.Meter(ScopeName)
	var in generatorInstruments
	var err, e error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		var ctr metric.Int64ObservableCounter
		ctr, e = meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		err = errors.Join(err, e)
		return ctr
	}
	in.issued = counter(metricKeysIssued, "{key}", "Keys issued by the generator.")
	in.clockWaits = counter(metricClockWaits, "{wait}", "Waits for a clock that stepped back within tolerance (SNOWFLAKE_JS: backup-worker take-overs).")
	in.clockBack = counter(metricClockBackSteps, "{step}", "Backward clock steps beyond tolerance (clock-back flag bumps and refusals).")
	in.seqWaits = counter(metricSequenceWaits, "{wait}", "Waits for the next tick after a tick's sequence ran out (CACHED_UID, SEGMENT: waits for an empty buffer).")
	in.renewals = counter(metricLeaseRenewals, "{renewal}", "Successful worker-id lease renewals (SEGMENT: ranges reserved).")
	in.failures = counter(metricLeaseFailures, "{renewal}", "Failed worker-id lease renewals (SEGMENT: failed reservations).")
	in.refusals = counter(metricLeaseRefusals, "{key}", "Keys refused with keygen.ErrLeaseLost (SEGMENT: keygen.ErrSegmentUnavailable).")
	in.remaining, e = meter.Float64ObservableGauge(metricLeaseRemaining, metric.WithUnit("s"),
		metric.WithDescription("Time left on the worker-id lease; absent for a lease that never expires."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, fmt.Errorf("shardotel: %w", err)
	}

	clock := c.clock
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := gen.Stats()
		o.ObserveInt64(in.issued, clampInt64(s.Issued), obs...)
		o.ObserveInt64(in.clockWaits, clampInt64(s.ClockWaits), obs...)
		o.ObserveInt64(in.clockBack, clampInt64(s.ClockBackSteps), obs...)
		o.ObserveInt64(in.seqWaits, clampInt64(s.SequenceWaits), obs...)
		o.ObserveInt64(in.renewals, clampInt64(s.LeaseRenewals), obs...)
		o.ObserveInt64(in.failures, clampInt64(s.LeaseFailures), obs...)
		o.ObserveInt64(in.refusals, clampInt64(s.LeaseRefusals), obs...)
		if s.LeaseValidUntil != 0 && s.LeaseValidUntil != math.MaxInt64 {
			o.ObserveFloat64(in.remaining, remainingSeconds(s.LeaseValidUntil, clock.Now().UnixNano()), obs...)
		}
		return nil
	}, in.issued, in.clockWaits, in.clockBack, in.seqWaits, in.renewals, in.failures, in.refusals, in.remaining)
	if err != nil {
		return nil, fmt.Errorf("shardotel: %w", err)
	}
	return &Registration{reg: reg}, nil
}

// remainingSeconds is the time from now to validUntil (Unix ns), 0 once
// past it (a closed generator's lease reads math.MinInt64).
func remainingSeconds(validUntil, now int64) float64 {
	if validUntil <= now {
		return 0
	}
	return float64(validUntil-now) / 1e9
}

// clampInt64 is n as an OpenTelemetry int64 (a uint64 counter would need
// 2^63 keys to overflow it).
func clampInt64(n uint64) int64 {
	return int64(min(n, math.MaxInt64))
}
