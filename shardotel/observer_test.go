package shardotel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardotel"
)

var ctx = context.Background()

// run reports one statement as sqlhook does: start, each target, end.
func run(o observe.Observer, ctx context.Context, s observe.Statement, targets []observe.Target, targetErr []error, end observe.StatementEnd) {
	sctx := o.StatementStart(ctx, s)
	for i, tg := range targets {
		tctx := o.TargetStart(sctx, tg)
		var err error
		if i < len(targetErr) {
			err = targetErr[i]
		}
		o.TargetEnd(tctx, tg, err)
	}
	o.StatementEnd(sctx, s, end)
}

func targetsOf(ds string, tables ...string) []observe.Target {
	var ts []observe.Target
	for _, t := range tables {
		ts = append(ts, observe.Target{DataSource: ds, Tables: []string{t}})
	}
	return ts
}

var (
	scatter = observe.Statement{Component: "sqlhook", Operation: "select", Tables: []string{"t_order"}, Targets: 4, Sources: 1, Fanout: observe.FanoutAll}
	point   = observe.Statement{Component: "sqlhook", Operation: "insert", Tables: []string{"t_order"}, Targets: 1, Sources: 1, Fanout: observe.FanoutOne}
	join    = observe.Statement{Component: "gormplugin", Operation: "update", Tables: []string{"t_order", "t_order_item"}, Targets: 2, Sources: 2, Fanout: observe.FanoutSome}
)

func stmtAttrs(s observe.Statement, extra ...attribute.KeyValue) string {
	return kvs(append([]attribute.KeyValue{shardotel.ComponentKey.String(s.Component),
		attribute.String("db.operation.name", s.Operation), shardotel.FanoutKey.String(s.Fanout.String())}, extra...)...)
}

// TestObserverReportsEveryRoutingFigure: statements by component,
// operation and fan-out, targets per statement, durations (with
// error.type for a failure), merged rows, refusals by reason, plan-cache
// hits and misses, and two-phase outcomes with their durations.
func TestObserverReportsEveryRoutingFigure(t *testing.T) {
	te := newTelemetry(t, nil)
	o := te.observer(t)

	for range 3 {
		run(o, ctx, scatter, targetsOf("ds_0", "t_order_0", "t_order_1", "t_order_2", "t_order_3"), nil,
			observe.StatementEnd{Rows: 7, Merged: true, Duration: 20 * time.Millisecond})
	}
	run(o, ctx, point, targetsOf("ds_1", "t_order_2"), nil, observe.StatementEnd{Duration: 2 * time.Millisecond})
	failed := &net.OpError{Op: "read", Err: errors.New("connection reset")}
	run(o, ctx, join, []observe.Target{{DataSource: "ds_0", Tables: []string{"t_order_0", "t_order_item_0"}}, {DataSource: "ds_1", Tables: []string{"t_order_0", "t_order_item_0"}}},
		[]error{nil, failed}, observe.StatementEnd{Err: fmt.Errorf("sqlhook: ds_1: %w", failed), Duration: time.Second})

	o.Refused(ctx, observe.Refusal{Component: "sqlhook", Reason: observe.ReasonMissingShardingKey, Err: errors.New("missing sharding key")})
	o.Refused(ctx, observe.Refusal{Component: "sqlhook", Reason: observe.ReasonMissingShardingKey})
	o.Refused(ctx, observe.Refusal{Component: "gormplugin", Reason: observe.ReasonCrossSource})
	for _, hit := range []bool{true, true, true, false} {
		o.PlanCache(ctx, hit)
	}
	o.TwoPhase(ctx, observe.TwoPhase{Component: "sqlhook", Outcome: observe.OutcomeCommitted, Branches: 2, Duration: 30 * time.Millisecond})
	o.TwoPhase(ctx, observe.TwoPhase{Component: "sqlhook", Outcome: observe.OutcomeCommitted, Branches: 2, Duration: 10 * time.Millisecond})
	o.TwoPhase(ctx, observe.TwoPhase{Component: "gormplugin", Outcome: observe.OutcomeInDoubt, Branches: 3, Duration: 5 * time.Second})

	ms := te.collect(t)
	wantSum := func(name string, want map[string]int64) {
		t.Helper()
		got := sum(t, ms, name)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, want)
		}
	}
	wantHist := func(name string, want map[string]histPoint) {
		t.Helper()
		got := hist(t, ms, name)
		for k, w := range want {
			g := got[k]
			if g.count != w.count || g.sum < w.sum*0.999 || g.sum > w.sum*1.001 {
				t.Errorf("%s{%s}: count %d sum %g, want %d and %g", name, k, g.count, g.sum, w.count, w.sum)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: points %v, want %v", name, got, want)
		}
	}
	errType := attribute.String("error.type", "*net.OpError")
	wantSum("shardkey.route.statements", map[string]int64{stmtAttrs(scatter): 3, stmtAttrs(point): 1, stmtAttrs(join): 1})
	wantHist("shardkey.route.targets", map[string]histPoint{
		stmtAttrs(scatter): {3, 12}, stmtAttrs(point): {1, 1}, stmtAttrs(join): {1, 2}})
	wantHist("shardkey.route.duration", map[string]histPoint{
		stmtAttrs(scatter): {3, 0.060}, stmtAttrs(point): {1, 0.002}, stmtAttrs(join, errType): {1, 1}})
	wantSum("shardkey.route.merged_rows", map[string]int64{stmtAttrs(scatter): 21})
	wantSum("shardkey.route.refusals", map[string]int64{
		kvs(shardotel.ComponentKey.String("sqlhook"), shardotel.RefusalReasonKey.String("missing_sharding_key")): 2,
		kvs(shardotel.ComponentKey.String("gormplugin"), shardotel.RefusalReasonKey.String("cross_source")):      1})
	wantSum("shardkey.route.plan_cache.lookups", map[string]int64{
		kvs(shardotel.PlanCacheResultKey.String("hit")): 3, kvs(shardotel.PlanCacheResultKey.String("miss")): 1})
	committed := kvs(shardotel.ComponentKey.String("sqlhook"), shardotel.TwoPhaseOutcomeKey.String("committed"))
	inDoubt := kvs(shardotel.ComponentKey.String("gormplugin"), shardotel.TwoPhaseOutcomeKey.String("in_doubt"))
	wantSum("shardkey.two_phase.transactions", map[string]int64{committed: 2, inDoubt: 1})
	wantHist("shardkey.two_phase.duration", map[string]histPoint{committed: {2, 0.040}, inDoubt: {1, 5}})

	for name, unit := range map[string]string{
		"shardkey.route.statements": "{statement}", "shardkey.route.targets": "{target}", "shardkey.route.duration": "s",
		"shardkey.route.refusals": "{statement}", "shardkey.route.plan_cache.lookups": "{lookup}",
		"shardkey.route.merged_rows": "{row}", "shardkey.two_phase.transactions": "{transaction}", "shardkey.two_phase.duration": "s",
	} {
		if m := ms[name]; m.Unit != unit || m.Description == "" {
			t.Errorf("%s: unit %q (want %q), description %q", name, m.Unit, unit, m.Description)
		}
	}
}

// TestObserverReportsValuesBeyondTheKnownOnesAsGiven: a component,
// operation, reason or outcome the Observer did not prepare for is
// reported with its own value, not dropped or merged into another.
func TestObserverReportsValuesBeyondTheKnownOnesAsGiven(t *testing.T) {
	te := newTelemetry(t, nil)
	o := te.observer(t)
	odd := observe.Statement{Component: "mine", Operation: "merge", Tables: []string{"t"}, Targets: 1, Fanout: observe.Fanout(9)}
	for range 2 {
		run(o, ctx, odd, targetsOf("ds", "t_0"), nil, observe.StatementEnd{Duration: time.Millisecond})
	}
	o.Refused(ctx, observe.Refusal{Component: "mine", Reason: "too_late"})
	o.TwoPhase(ctx, observe.TwoPhase{Component: "mine", Outcome: "abandoned"})
	ms := te.collect(t)
	if got := sum(t, ms, "shardkey.route.statements"); got[stmtAttrs(odd)] != 2 || len(got) != 1 {
		t.Errorf("statements %v, want 2 at %s", got, stmtAttrs(odd))
	}
	if got := sum(t, ms, "shardkey.route.refusals"); got[kvs(shardotel.ComponentKey.String("mine"), shardotel.RefusalReasonKey.String("too_late"))] != 1 {
		t.Errorf("refusals %v", got)
	}
	if got := sum(t, ms, "shardkey.two_phase.transactions"); got[kvs(shardotel.ComponentKey.String("mine"), shardotel.TwoPhaseOutcomeKey.String("abandoned"))] != 1 {
		t.Errorf("two-phase %v", got)
	}
}

// TestTargetSpansAreChildrenOfTheirStatementSpan: the statement span is
// a client span under the caller's, named for its operation and table,
// with operation, tables, targets and fan-out; each target's span is its
// child, with data source and physical tables; spans nest statement,
// target, and whatever the driver starts under the target's context.
func TestTargetSpansAreChildrenOfTheirStatementSpan(t *testing.T) {
	te := newTelemetry(t, nil)
	o := te.observer(t, shardotel.WithDBSystem("sqlite"))
	parentCtx, parent := te.tp.Tracer("test").Start(ctx, "handler")
	sctx := o.StatementStart(parentCtx, scatter)
	for _, tg := range targetsOf("ds_0", "t_order_0", "t_order_1", "t_order_2", "t_order_3") {
		tctx := o.TargetStart(sctx, tg)
		_, driver := te.tp.Tracer("test").Start(tctx, "driver query")
		driver.End()
		o.TargetEnd(tctx, tg, nil)
	}
	o.StatementEnd(sctx, scatter, observe.StatementEnd{Rows: 5, Merged: true, Duration: time.Millisecond})
	parent.End()

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range te.spans.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	stmts := byName["select t_order"]
	if len(stmts) != 1 {
		t.Fatalf("statement spans %d, want 1 named %q; have %v", len(stmts), "select t_order", keys(byName))
	}
	st := stmts[0]
	if st.Parent().SpanID() != parent.SpanContext().SpanID() || st.SpanKind() != trace.SpanKindClient {
		t.Errorf("statement span: parent %v (want the handler's %v), kind %v (want client)", st.Parent().SpanID(), parent.SpanContext().SpanID(), st.SpanKind())
	}
	wantAttrs := map[string]string{
		"db.operation.name": "select", "shardkey.logic_tables": `["t_order"]`, "shardkey.targets": "4",
		"shardkey.data_sources": "1", "shardkey.fanout": "all", "shardkey.component": "sqlhook",
		"db.collection.name": "t_order", "db.system.name": "sqlite", "shardkey.merged_rows": "5",
	}
	if got := spanAttrs(st); fmt.Sprint(got) != fmt.Sprint(wantAttrs) {
		t.Errorf("statement span attributes:\n got %v\nwant %v", got, wantAttrs)
	}
	if st.Status().Code == codes.Error {
		t.Errorf("statement span status %v", st.Status())
	}
	drivers := byName["driver query"]
	for i := range 4 {
		name := fmt.Sprintf("select t_order_%d", i)
		ts := byName[name]
		if len(ts) != 1 {
			t.Fatalf("target spans named %q: %d, want 1", name, len(ts))
		}
		tg := ts[0]
		if tg.Parent().SpanID() != st.SpanContext().SpanID() || tg.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("%s: parent %v, want the statement span %v", name, tg.Parent().SpanID(), st.SpanContext().SpanID())
		}
		want := map[string]string{"db.operation.name": "select", "shardkey.data_source": "ds_0",
			"shardkey.physical_tables": fmt.Sprintf(`["t_order_%d"]`, i), "db.collection.name": fmt.Sprintf("t_order_%d", i), "db.system.name": "sqlite"}
		if got := spanAttrs(tg); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s attributes:\n got %v\nwant %v", name, got, want)
		}
		if tg.SpanKind() != trace.SpanKindClient {
			t.Errorf("%s: kind %v", name, tg.SpanKind())
		}
		if tg.EndTime().After(st.EndTime()) || tg.StartTime().Before(st.StartTime()) {
			t.Errorf("%s does not lie within its statement span", name)
		}
		if drivers[i].Parent().SpanID() != tg.SpanContext().SpanID() {
			t.Errorf("the driver's span %d is not the target's child", i)
		}
	}
	// A target of several physical tables is named for its data source.
	run(o, ctx, join, []observe.Target{{DataSource: "ds_1", Tables: []string{"t_order_1", "t_order_item_1"}}}, nil, observe.StatementEnd{})
	var names []string
	for _, s := range te.spans.Ended() {
		names = append(names, s.Name())
	}
	if fmt.Sprint(names[len(names)-2:]) != "[update ds_1 update]" {
		t.Errorf("spans of a two-table statement %q, want [update ds_1 update]", names[len(names)-2:])
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestAnErrorMarksItsSpan: a failed target and a failed statement end
// with status Error, an exception event and error.type set; the other
// target's span stays unmarked. The exception's type is error.type, and
// its message and the status description are error.type too (the error's
// text with WithErrorText).
func TestAnErrorMarksItsSpan(t *testing.T) {
	for _, withText := range []bool{false, true} {
		t.Run(fmt.Sprintf("WithErrorText=%v", withText), func(t *testing.T) {
			te := newTelemetry(t, nil)
			var opts []shardotel.Option
			if withText {
				opts = append(opts, shardotel.WithErrorText())
			}
			o := te.observer(t, opts...)
			cause := &net.OpError{Op: "read", Err: errors.New("connection reset")}
			stmtErr := fmt.Errorf("sqlhook: ds_1: %w", cause)
			run(o, ctx, join, []observe.Target{{DataSource: "ds_0", Tables: []string{"t_order_0"}}, {DataSource: "ds_1", Tables: []string{"t_order_1"}}},
				[]error{nil, cause}, observe.StatementEnd{Err: stmtErr})
			spans := map[string]sdktrace.ReadOnlySpan{}
			for _, s := range te.spans.Ended() {
				spans[s.Name()] = s
			}
			check := func(name string, err error, failed bool) {
				t.Helper()
				s, ok := spans[name]
				if !ok {
					t.Fatalf("no span %q; have %v", name, keys(spans))
				}
				if !failed {
					if s.Status().Code != codes.Unset || len(s.Events()) != 0 {
						t.Errorf("%s: status %v, events %d; want unset and none", name, s.Status(), len(s.Events()))
					}
					return
				}
				want := "*net.OpError"
				if withText {
					want = err.Error()
				}
				if s.Status().Code != codes.Error || s.Status().Description != want {
					t.Errorf("%s: status %v, want Error %q", name, s.Status(), want)
				}
				if a := spanAttrs(s); a["error.type"] != "*net.OpError" {
					t.Errorf("%s: error.type %q, want *net.OpError", name, a["error.type"])
				}
				ev := s.Events()
				if len(ev) != 1 || ev[0].Name != "exception" {
					t.Fatalf("%s: events %v, want one exception", name, ev)
				}
				got := map[string]string{}
				for _, kv := range ev[0].Attributes {
					got[string(kv.Key)] = kv.Value.String()
				}
				wantEv := map[string]string{"exception.type": "*net.OpError", "exception.message": want}
				if fmt.Sprint(got) != fmt.Sprint(wantEv) {
					t.Errorf("%s: exception attributes %v, want %v", name, got, wantEv)
				}
			}
			check("update t_order_0", nil, false)
			check("update t_order_1", cause, true)
			check("update", stmtErr, true)
		})
	}
}

// TestRefusalsAndTwoPhaseOutcomesAreEventsOnTheCallersSpan: a refused
// statement has no span of its own; the caller's span records the refusal
// as an exception (its message the reason, not the error's text), and a
// two-phase end as an event.
func TestRefusalsAndTwoPhaseOutcomesAreEventsOnTheCallersSpan(t *testing.T) {
	te := newTelemetry(t, nil)
	o := te.observer(t)
	cctx, caller := te.tp.Tracer("test").Start(ctx, "handler")
	refusal := errors.New("shardconf: missing sharding key: table t_order, column user_id")
	o.Refused(cctx, observe.Refusal{Component: "sqlhook", Reason: observe.ReasonMissingShardingKey, Err: refusal})
	o.TwoPhase(cctx, observe.TwoPhase{Component: "sqlhook", Outcome: observe.OutcomeRolledBack, Branches: 2})
	caller.End()
	ended := te.spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans, want the caller's alone", len(ended))
	}
	ev := ended[0].Events()
	if len(ev) != 2 || ev[0].Name != "exception" || ev[1].Name != "shardkey.two_phase" {
		t.Fatalf("events %v, want exception and shardkey.two_phase", ev)
	}
	got := map[string]string{}
	for _, e := range ev {
		for _, kv := range e.Attributes {
			got[e.Name+" "+string(kv.Key)] = kv.Value.String()
		}
	}
	for k, v := range map[string]string{
		"exception exception.message": "refused: missing_sharding_key", "exception exception.type": "_OTHER",
		"exception shardkey.refusal.reason": "missing_sharding_key", "exception shardkey.component": "sqlhook",
		"shardkey.two_phase shardkey.two_phase.outcome": "rolled_back", "shardkey.two_phase shardkey.two_phase.branches": "2",
	} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestTargetEndWithTheStatementContextLeavesTheStatementSpanOpen: a
// reporter that hands TargetEnd the statement's context instead of the
// target's ends nothing early; the statement span ends at StatementEnd.
func TestTargetEndWithTheStatementContextLeavesTheStatementSpanOpen(t *testing.T) {
	te := newTelemetry(t, nil)
	o := te.observer(t)
	sctx := o.StatementStart(ctx, point)
	tg := observe.Target{DataSource: "ds_0", Tables: []string{"t_order_0"}}
	o.TargetStart(sctx, tg)
	o.TargetEnd(sctx, tg, errors.New("boom"))
	if n := len(te.spans.Ended()); n != 0 {
		t.Fatalf("%d spans ended by TargetEnd on the statement's context", n)
	}
	o.StatementEnd(sctx, point, observe.StatementEnd{})
	if ended := te.spans.Ended(); len(ended) != 1 || ended[0].Name() != "insert t_order" || ended[0].Status().Code != codes.Unset {
		t.Fatalf("ended %v", ended)
	}
}

// TestUnsampledStatementsRecordNoSpanButEveryMetric: under a sampler that
// drops everything no span is recorded, and the metrics are all there.
func TestUnsampledStatementsRecordNoSpanButEveryMetric(t *testing.T) {
	te := newTelemetry(t, sdktrace.NeverSample())
	o := te.observer(t)
	run(o, ctx, scatter, targetsOf("ds_0", "t_order_0", "t_order_1"), nil, observe.StatementEnd{Rows: 2, Merged: true})
	if n := len(te.spans.Started()); n != 0 {
		t.Errorf("%d spans recorded, want none", n)
	}
	ms := te.collect(t)
	if got := sum(t, ms, "shardkey.route.statements"); got[stmtAttrs(scatter)] != 1 {
		t.Errorf("statements %v", got)
	}
	if got := sum(t, ms, "shardkey.route.merged_rows"); got[stmtAttrs(scatter)] != 2 {
		t.Errorf("merged rows %v", got)
	}
}

// TestNoopProvidersCostNoSpanNorContext: on OpenTelemetry's no-op
// providers the Observer hands back the caller's context untouched.
func TestNoopProvidersCostNoSpanNorContext(t *testing.T) {
	o, err := shardotel.NewObserver(shardotel.WithMeterProvider(metricnoop.NewMeterProvider()),
		shardotel.WithTracerProvider(tracenoop.NewTracerProvider()))
	if err != nil {
		t.Fatal(err)
	}
	type key struct{}
	c := context.WithValue(ctx, key{}, 1)
	if got := o.StatementStart(c, scatter); got != c {
		t.Error("StatementStart on no-op providers made a new context")
	}
	if got := o.TargetStart(c, observe.Target{DataSource: "ds_0"}); got != c {
		t.Error("TargetStart on no-op providers made a new context")
	}
	o.TargetEnd(c, observe.Target{DataSource: "ds_0"}, errors.New("x"))
	o.StatementEnd(c, scatter, observe.StatementEnd{Err: errors.New("x")})
	o.Refused(c, observe.Refusal{Component: "sqlhook", Reason: observe.ReasonOther})
	o.PlanCache(c, true)
	o.TwoPhase(c, observe.TwoPhase{Component: "sqlhook", Outcome: observe.OutcomeCommitted})
}

// dropNamed samples every span but those named name.
type dropNamed struct{ name string }

func (d dropNamed) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if p.Name == d.name {
		return sdktrace.SamplingResult{Decision: sdktrace.Drop}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}
func (d dropNamed) Description() string { return "dropNamed" }

// TestAnUnsampledNestedStatementLeavesItsOuterStatementSpanOpen: a
// statement run inside another's target (a plugin over a wrapped driver)
// whose own span is not sampled ends nothing of the outer statement's:
// the outer statement and target spans end at their own ends.
func TestAnUnsampledNestedStatementLeavesItsOuterStatementSpanOpen(t *testing.T) {
	te := newTelemetry(t, dropNamed{"insert t_order"})
	o := te.observer(t)
	sctx := o.StatementStart(ctx, scatter)
	tg := observe.Target{DataSource: "ds_0", Tables: []string{"t_order_0"}}
	tctx := o.TargetStart(sctx, tg)

	ictx := o.StatementStart(tctx, point) // not sampled
	itg := observe.Target{DataSource: "ds_0", Tables: []string{"t_order_0"}}
	o.TargetEnd(o.TargetStart(ictx, itg), itg, nil)
	o.StatementEnd(ictx, point, observe.StatementEnd{})
	if ended := te.spans.Ended(); len(ended) != 0 {
		t.Fatalf("the nested statement ended %d spans (first %q), want none", len(ended), ended[0].Name())
	}

	o.TargetEnd(tctx, tg, nil)
	o.StatementEnd(sctx, scatter, observe.StatementEnd{})
	var names []string
	for _, s := range te.spans.Ended() {
		names = append(names, s.Name())
	}
	if fmt.Sprint(names) != "[select t_order_0 select t_order]" {
		t.Errorf("ended %q, want the outer target then the outer statement", names)
	}
}
