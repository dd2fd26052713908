package shardotel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardotel"
)

var sinkID int64

// uncapped is a SNOWFLAKE layout whose sequence does not run out at
// benchmark speed, so NextID's own cost is measured (as keygen's
// BenchmarkNextID does).
func uncapped() keygen.Props {
	return keygen.Props{"worker-id": "0", "worker-bits": "0", "sequence-bits": "22", "max-vibration-offset": "0"}
}

// BenchmarkNextIDInstrumented: SNOWFLAKE's NextID without instrumentation
// and with RegisterGenerator active on the OpenTelemetry SDK, collected
// every 100 ms meanwhile (a scrape every 15 s or more in production). The
// two must cost the same: the generator carries no hook.
func BenchmarkNextIDInstrumented(b *testing.B) {
	ctx := context.Background()
	for _, inst := range []string{"off", "on"} {
		setup := func(b *testing.B) keygen.IDGenerator {
			g, err := keygen.NewID("SNOWFLAKE", uncapped(), keygen.WithSequenceScope(keygen.NewSequenceScope()))
			if err != nil {
				b.Fatal(err)
			}
			if inst == "off" {
				return g
			}
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			reg, err := shardotel.RegisterGenerator(g.(keygen.StatsReporter), shardotel.WithMeterProvider(mp))
			if err != nil {
				b.Fatal(err)
			}
			done, stopped := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(stopped)
				t := time.NewTicker(100 * time.Millisecond)
				defer t.Stop()
				var rm metricdata.ResourceMetrics
				for {
					select {
					case <-done:
						return
					case <-t.C:
						reader.Collect(ctx, &rm)
					}
				}
			}()
			b.Cleanup(func() {
				close(done)
				<-stopped
				reg.Unregister()
				mp.Shutdown(ctx)
			})
			return g
		}
		b.Run("instrumentation="+inst, func(b *testing.B) {
			g := setup(b)
			b.ReportAllocs()
			for b.Loop() {
				id, err := g.NextID(ctx)
				if err != nil {
					b.Fatal(err)
				}
				sinkID += id
			}
		})
		b.Run("instrumentation="+inst+"/parallel", func(b *testing.B) {
			g := setup(b)
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
				sinkID += s & 1
			})
		})
	}
}

// BenchmarkObserver: what an Observer adds to one routed statement of one
// target (StatementStart, TargetStart, TargetEnd, StatementEnd): with
// observe.Base (the floor: the calls alone), OpenTelemetry's no-op
// providers, the SDK with every span sampled, and the SDK sampling none.
func BenchmarkObserver(b *testing.B) {
	s := observe.Statement{Component: "sqlhook", Operation: "select", Tables: []string{"t_order"}, Targets: 1, Sources: 1, Fanout: observe.FanoutOne}
	tg := observe.Target{DataSource: "ds_0", Tables: []string{"t_order_1"}}
	end := observe.StatementEnd{Duration: time.Millisecond}
	for _, p := range []string{"base", "noop", "sdk", "sdk-unsampled"} {
		newObserver := func(b *testing.B) observe.Observer {
			var opts []shardotel.Option
			switch p {
			case "base":
				return observe.Base{}
			case "noop":
				opts = []shardotel.Option{shardotel.WithMeterProvider(metricnoop.NewMeterProvider()),
					shardotel.WithTracerProvider(tracenoop.NewTracerProvider())}
			default:
				sampler := sdktrace.AlwaysSample()
				if p == "sdk-unsampled" {
					sampler = sdktrace.NeverSample()
				}
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler))
				b.Cleanup(func() { mp.Shutdown(context.Background()); tp.Shutdown(context.Background()) })
				opts = []shardotel.Option{shardotel.WithMeterProvider(mp), shardotel.WithTracerProvider(tp)}
			}
			o, err := shardotel.NewObserver(opts...)
			if err != nil {
				b.Fatal(err)
			}
			return o
		}
		statement := func(o observe.Observer, ctx context.Context) {
			sctx := o.StatementStart(ctx, s)
			tctx := o.TargetStart(sctx, tg)
			o.TargetEnd(tctx, tg, nil)
			o.StatementEnd(sctx, s, end)
		}
		b.Run("provider="+p, func(b *testing.B) {
			o := newObserver(b)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				statement(o, ctx)
			}
		})
		b.Run("provider="+p+"/parallel", func(b *testing.B) {
			o := newObserver(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					statement(o, ctx)
				}
			})
		})
	}
}

// BenchmarkObserverFailure: a routed statement of one target whose target
// and statement fail (as BenchmarkObserver's, on the SDK with every span
// sampled), and a refusal recorded on the caller's span; with the
// default value-free texts and with WithErrorText.
func BenchmarkObserverFailure(b *testing.B) {
	s := observe.Statement{Component: "sqlhook", Operation: "insert", Tables: []string{"t_order"}, Targets: 1, Sources: 1, Fanout: observe.FanoutOne}
	tg := observe.Target{DataSource: "ds_0", Tables: []string{"t_order_1"}}
	cause := &net.OpError{Op: "write", Err: errors.New("connection reset")}
	end := observe.StatementEnd{Duration: time.Millisecond, Err: fmt.Errorf("sqlhook: ds_0: %w", cause)}
	refusal := observe.Refusal{Component: "sqlhook", Reason: observe.ReasonShardingKeyChange,
		Err: errors.New("shardconf: sharding key change: table t_order, column user_id, value 987654321")}
	for _, mode := range []string{"default", "text"} {
		newObserver := func(b *testing.B) (*shardotel.Observer, *sdktrace.TracerProvider) {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
			b.Cleanup(func() { mp.Shutdown(context.Background()); tp.Shutdown(context.Background()) })
			opts := []shardotel.Option{shardotel.WithMeterProvider(mp), shardotel.WithTracerProvider(tp)}
			if mode == "text" {
				opts = append(opts, shardotel.WithErrorText())
			}
			o, err := shardotel.NewObserver(opts...)
			if err != nil {
				b.Fatal(err)
			}
			return o, tp
		}
		b.Run("errors="+mode+"/statement", func(b *testing.B) {
			o, tp := newObserver(b)
			ctx, _ := tp.Tracer("bench").Start(context.Background(), "handler")
			b.ReportAllocs()
			for b.Loop() {
				sctx := o.StatementStart(ctx, s)
				tctx := o.TargetStart(sctx, tg)
				o.TargetEnd(tctx, tg, cause)
				o.StatementEnd(sctx, s, end)
			}
		})
		b.Run("errors="+mode+"/refusal", func(b *testing.B) {
			o, tp := newObserver(b)
			tracer := tp.Tracer("bench")
			b.ReportAllocs()
			for b.Loop() {
				// a fresh caller's span each time: a span keeps at most 128 events
				ctx, span := tracer.Start(context.Background(), "handler")
				o.Refused(ctx, refusal)
				span.End()
			}
		})
	}
}
