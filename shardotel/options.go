package shardotel

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/shardkey/shardkey/keygen"
)

// ScopeName is the instrumentation scope of every meter and tracer this
// package asks its providers for.
const ScopeName = "github.com/shardkey/shardkey/shardotel"

// An Option configures NewObserver or RegisterGenerator. Each option says
// which of the two it applies to; the other ignores it.
type Option func(*config)

type config struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	dbSystem       string
	errorText      bool
	attrs          []attribute.KeyValue
	clock          keygen.Clock
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.clock == nil {
		c.clock = keygen.NewSystemClock(nil)
	}
	return c
}

// WithMeterProvider records metrics through mp instead of the global
// MeterProvider (otel.GetMeterProvider at the time of the call). Both
// NewObserver and RegisterGenerator.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meterProvider = mp }
}

// WithTracerProvider starts spans from tp instead of the global
// TracerProvider (otel.GetTracerProvider at the time of the call).
// NewObserver only.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// WithDBSystem names the database system the observed statements run on,
// as OpenTelemetry's db.system.name ("postgresql", "mysql", "mariadb",
// "sqlite"), on spans whose event does not carry it (observe.Statement
// and observe.Target name it from sqlhook's dialect and GORM's dialector;
// an observer of another source may leave it empty). NewObserver only.
func WithDBSystem(name string) Option {
	return func(c *config) { c.dbSystem = name }
}

// WithErrorText puts the full text of errors (err.Error()) in the
// exception events' exception.message and the span status descriptions,
// in place of the value-free text they carry by default (error.type; for
// a refusal, "refused: {reason}"). NewObserver only.
//
// Warning: error texts may contain the statement's SQL with its literals,
// sharding values and bound arguments (a refusal quotes the value that
// could not be routed), and the database's messages quoting row data
// (MySQL's "Duplicate entry '…' for key …"). They go wherever the spans
// are exported. Use it only where the trace backend may hold what the
// database holds.
func WithErrorText() Option {
	return func(c *config) { c.errorText = true }
}

// WithAttributes adds attrs to every figure of a registered generator,
// e.g. attribute.String("shardkey.keygen.name", "orders") to tell two
// generators of one type apart. RegisterGenerator only.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(c *config) { c.attrs = append(c.attrs, attrs...) }
}

// WithClock is the clock a registered generator's lease validity is
// measured on: the generator's own (keygen.WithClock), when it is not the
// system clock. RegisterGenerator only; the default is a
// keygen.SystemClock.
func WithClock(c keygen.Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}
