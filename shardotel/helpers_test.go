package shardotel_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/shardkey/shardkey/shardotel"
)

// telemetry is an SDK meter provider on a manual reader and a tracer
// provider on a span recorder.
type telemetry struct {
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
}

func newTelemetry(t testing.TB, sampler sdktrace.Sampler) *telemetry {
	t.Helper()
	te := &telemetry{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	te.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(te.reader))
	if sampler == nil {
		sampler = sdktrace.AlwaysSample()
	}
	te.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(te.spans), sdktrace.WithSampler(sampler))
	t.Cleanup(func() {
		te.mp.Shutdown(context.Background())
		te.tp.Shutdown(context.Background())
	})
	return te
}

// observer is an Observer on te's providers.
func (te *telemetry) observer(t testing.TB, opts ...shardotel.Option) *shardotel.Observer {
	t.Helper()
	o, err := shardotel.NewObserver(append([]shardotel.Option{
		shardotel.WithMeterProvider(te.mp), shardotel.WithTracerProvider(te.tp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// collect reads every metric of shardotel's scope, by name.
func (te *telemetry) collect(t testing.TB) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := te.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != shardotel.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, shardotel.ScopeName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// attrs renders a set as "k=v,k=v" (sorted by key), the form the tests
// name data points by.
func attrs(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return strings.Join(parts, ",")
}

// kvs renders key=value pairs as attrs does.
func kvs(kv ...attribute.KeyValue) string { return attrs(attribute.NewSet(kv...)) }

// sum is a counter's points, by attributes.
func sum(t testing.TB, ms map[string]metricdata.Metrics, name string) map[string]int64 {
	t.Helper()
	m, ok := ms[name]
	if !ok {
		t.Fatalf("no metric %s; have %v", name, slices.Sorted(mapsKeys(ms)))
	}
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, want an int64 Sum", name, m.Data)
	}
	if !s.IsMonotonic || s.Temporality != metricdata.CumulativeTemporality {
		t.Errorf("%s: monotonic %v, temporality %v; want a cumulative counter", name, s.IsMonotonic, s.Temporality)
	}
	out := map[string]int64{}
	for _, dp := range s.DataPoints {
		out[attrs(dp.Attributes)] = dp.Value
	}
	return out
}

// histPoint is a histogram point's count and sum.
type histPoint struct {
	count uint64
	sum   float64
}

func hist(t testing.TB, ms map[string]metricdata.Metrics, name string) map[string]histPoint {
	t.Helper()
	m, ok := ms[name]
	if !ok {
		t.Fatalf("no metric %s; have %v", name, slices.Sorted(mapsKeys(ms)))
	}
	out := map[string]histPoint{}
	switch h := m.Data.(type) {
	case metricdata.Histogram[int64]:
		for _, dp := range h.DataPoints {
			out[attrs(dp.Attributes)] = histPoint{dp.Count, float64(dp.Sum)}
		}
	case metricdata.Histogram[float64]:
		for _, dp := range h.DataPoints {
			out[attrs(dp.Attributes)] = histPoint{dp.Count, dp.Sum}
		}
	default:
		t.Fatalf("%s is %T, want a histogram", name, m.Data)
	}
	return out
}

func gauge(t testing.TB, ms map[string]metricdata.Metrics, name string) map[string]float64 {
	t.Helper()
	m, ok := ms[name]
	if !ok {
		return nil
	}
	g, ok := m.Data.(metricdata.Gauge[float64])
	if !ok {
		t.Fatalf("%s is %T, want a float64 Gauge", name, m.Data)
	}
	out := map[string]float64{}
	for _, dp := range g.DataPoints {
		out[attrs(dp.Attributes)] = dp.Value
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// spanAttrs is a span's attributes as strings, by key.
func spanAttrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}
