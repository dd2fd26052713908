package shardotel

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/shardkey/shardkey/observe"
)

// Observer reports shardkey's routed statements to OpenTelemetry: it
// implements observe.Observer, for sqlhook.WithObserver and
// gormplugin.WithObserver. It is safe for concurrent use.
type Observer struct {
	tracer   trace.Tracer
	tracing  bool // false for the no-op tracer: no span is started
	metering bool // false for the no-op meter: no measure is looked up
	dbSystem attribute.KeyValue
	hasDB    bool
	spanKind []trace.SpanStartOption
	// errorText: WithErrorText; exception messages and status
	// descriptions carry err.Error() instead of a value-free text.
	errorText bool

	statements       metric.Int64Counter
	targets          metric.Int64Histogram
	duration         metric.Float64Histogram
	refusals         metric.Int64Counter
	planCache        metric.Int64Counter
	mergedRows       metric.Int64Counter
	twoPhase         metric.Int64Counter
	twoPhaseDuration metric.Float64Histogram

	m     *measures
	names cache[[2]string, string] // span names
}

var _ observe.Observer = (*Observer)(nil)

// NewObserver returns an Observer recording through the providers of
// opts (WithMeterProvider, WithTracerProvider; the global ones by
// default), with WithDBSystem's name and, with WithErrorText, the texts
// of errors. Its error is an instrument the meter refused to create.
func NewObserver(opts ...Option) (*Observer, error) {
	c := newConfig(opts)
	o := &Observer{
		tracer:    c.tracerProvider.Tracer(ScopeName),
		spanKind:  []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)},
		errorText: c.errorText,
		m:         newMeasures(),
	}
	_, isNoop := o.tracer.(noop.Tracer)
	o.tracing = !isNoop
	if c.dbSystem != "" {
		o.dbSystem, o.hasDB = dbSystemKey.String(c.dbSystem), true
	}
	meter := c.meterProvider.Meter(ScopeName)
	_, isNoop = meter.(metricnoop.Meter)
	o.metering = !isNoop
	var err, e error
	o.statements, e = meter.Int64Counter(metricStatements, metric.WithUnit("{statement}"),
		metric.WithDescription("Routed statements, by component, operation and fan-out."))
	err = errors.Join(err, e)
	o.targets, e = meter.Int64Histogram(metricTargets, metric.WithUnit("{target}"),
		metric.WithDescription("Physical statements per routed statement."),
		metric.WithExplicitBucketBoundaries(targetBounds...))
	err = errors.Join(err, e)
	o.duration, e = meter.Float64Histogram(metricDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of routed statements, from routing to the end of their results."),
		metric.WithExplicitBucketBoundaries(durationBounds...))
	err = errors.Join(err, e)
	o.refusals, e = meter.Int64Counter(metricRefusals, metric.WithUnit("{statement}"),
		metric.WithDescription("Statements refused before anything ran, by reason."))
	err = errors.Join(err, e)
	o.planCache, e = meter.Int64Counter(metricPlanCache, metric.WithUnit("{lookup}"),
		metric.WithDescription("Route-plan cache lookups, by result (hit or miss)."))
	err = errors.Join(err, e)
	o.mergedRows, e = meter.Int64Counter(metricMergedRows, metric.WithUnit("{row}"),
		metric.WithDescription("Rows returned by merges of several targets' results."))
	err = errors.Join(err, e)
	o.twoPhase, e = meter.Int64Counter(metricTwoPhase, metric.WithUnit("{transaction}"),
		metric.WithDescription("Transactions across data sources under two-phase commit, by outcome."))
	err = errors.Join(err, e)
	o.twoPhaseDuration, e = meter.Float64Histogram(metricTwoPhaseDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of the end (commit or rollback) of two-phase transactions."),
		metric.WithExplicitBucketBoundaries(durationBounds...))
	err = errors.Join(err, e)
	if err != nil {
		return nil, fmt.Errorf("shardotel: %w", err)
	}
	return o, nil
}

// stmtSpan is a recording statement span in its context, with what its
// targets' spans need.
type stmtSpan struct {
	span trace.Span
	op   string
}

type stmtSpanKey struct{}

// StatementStart counts the statement and its targets and starts its
// span (kind client), named "{operation} {logic table}" (the operation
// alone for several tables), as a child of ctx's span.
func (o *Observer) StatementStart(ctx context.Context, s observe.Statement) context.Context {
	if o.tracing {
		ctx = o.startStatementSpan(ctx, s)
	}
	if o.metering {
		m := o.m.statement(s.Component, s.Operation, s.Fanout, "")
		o.statements.Add(ctx, 1, m.add...)
		o.targets.Record(ctx, int64(s.Targets), m.rec...)
	}
	return ctx
}

func (o *Observer) startStatementSpan(ctx context.Context, s observe.Statement) context.Context {
	table := ""
	if len(s.Tables) == 1 {
		table = s.Tables[0]
	}
	ctx, span := o.tracer.Start(ctx, o.spanName(s.Operation, table), o.spanKind...)
	if !span.IsRecording() {
		if ctx.Value(stmtSpanKey{}) != nil {
			// A statement nested in another's target: its end must not
			// end the outer statement's span.
			ctx = context.WithValue(ctx, stmtSpanKey{}, (*stmtSpan)(nil))
		}
		return ctx
	}
	kv := make([]attribute.KeyValue, 0, 9)
	kv = append(kv,
		dbOperationKey.String(s.Operation),
		LogicTablesKey.StringSlice(s.Tables),
		TargetsKey.Int(s.Targets),
		DataSourcesKey.Int(s.Sources),
		FanoutKey.String(s.Fanout.String()),
		ComponentKey.String(s.Component))
	if table != "" {
		kv = append(kv, dbCollectionKey.String(table))
	}
	if kv1, ok := o.system(s.System); ok {
		kv = append(kv, kv1)
	}
	span.SetAttributes(kv...)
	return context.WithValue(ctx, stmtSpanKey{}, &stmtSpan{span: span, op: s.Operation})
}

// spanName is "{op} {table}", or op alone without a table; cached, the
// tables being the rules' (low cardinality).
func (o *Observer) spanName(op, table string) string {
	if table == "" {
		return op
	}
	return o.names.get([2]string{op, table}, func(k [2]string) string { return k[0] + " " + k[1] })
}

// StatementEnd records the statement's duration (with error.type when it
// failed) and merged rows, and ends its span, recording the error there.
func (o *Observer) StatementEnd(ctx context.Context, s observe.Statement, end observe.StatementEnd) {
	errType := ""
	if end.Err != nil {
		errType = errorType(end.Err)
	}
	if o.metering {
		m := o.m.statement(s.Component, s.Operation, s.Fanout, "")
		dm := m
		if errType != "" {
			dm = o.m.statement(s.Component, s.Operation, s.Fanout, errType)
		}
		o.duration.Record(ctx, end.Duration.Seconds(), dm.rec...)
		if end.Merged {
			o.mergedRows.Add(ctx, end.Rows, m.add...)
		}
	}
	st, _ := ctx.Value(stmtSpanKey{}).(*stmtSpan)
	if st == nil {
		return
	}
	if end.Merged {
		st.span.SetAttributes(MergedRowsKey.Int64(end.Rows))
	}
	if end.Err != nil {
		o.recordError(st.span, end.Err, errType)
	}
	st.span.End()
}

// TargetStart starts the target's span (kind client) as a child of the
// statement's, named "{operation} {physical table}" (or "{operation}
// {data source}" for several tables). Without a recording statement span
// it does nothing.
func (o *Observer) TargetStart(ctx context.Context, t observe.Target) context.Context {
	st, _ := ctx.Value(stmtSpanKey{}).(*stmtSpan)
	if st == nil {
		return ctx
	}
	where := t.DataSource
	if len(t.Tables) == 1 {
		where = t.Tables[0]
	}
	ctx, span := o.tracer.Start(ctx, o.spanName(st.op, where), o.spanKind...)
	if span.IsRecording() {
		kv := make([]attribute.KeyValue, 0, 5)
		kv = append(kv, dbOperationKey.String(st.op), DataSourceKey.String(t.DataSource),
			PhysicalTablesKey.StringSlice(t.Tables))
		if len(t.Tables) == 1 {
			kv = append(kv, dbCollectionKey.String(t.Tables[0]))
		}
		if kv1, ok := o.system(t.System); ok {
			kv = append(kv, kv1)
		}
		span.SetAttributes(kv...)
	}
	return ctx
}

// TargetEnd ends the target's span, recording err there. Given the
// statement's context rather than TargetStart's, it leaves the statement
// span alone.
func (o *Observer) TargetEnd(ctx context.Context, _ observe.Target, err error) {
	st, _ := ctx.Value(stmtSpanKey{}).(*stmtSpan)
	if st == nil {
		return
	}
	span := trace.SpanFromContext(ctx)
	if span.SpanContext().SpanID() == st.span.SpanContext().SpanID() {
		return
	}
	if err != nil {
		o.recordError(span, err, errorType(err))
	}
	span.End()
}

// Refused counts the refusal by reason and records it as an exception
// event on ctx's span, when that records and r carries an error: the
// caller's statement failed. The event's exception.message is
// "refused: {reason}" (r.Err's text with WithErrorText).
func (o *Observer) Refused(ctx context.Context, r observe.Refusal) {
	if o.metering {
		o.refusals.Add(ctx, 1, o.m.refusal(r.Component, r.Reason).add...)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() && r.Err != nil {
		var msg string
		if o.errorText {
			msg = r.Err.Error()
		} else {
			msg = "refused: " + string(r.Reason)
		}
		span.AddEvent(exceptionEvent, trace.WithAttributes(
			exceptionTypeKey.String(errorType(r.Err)), exceptionMessageKey.String(msg),
			ComponentKey.String(r.Component), RefusalReasonKey.String(string(r.Reason))))
	}
}

// PlanCache counts one route-plan cache lookup.
func (o *Observer) PlanCache(ctx context.Context, hit bool) {
	if !o.metering {
		return
	}
	m := o.m.miss
	if hit {
		m = o.m.hit
	}
	o.planCache.Add(ctx, 1, m.add...)
}

// TwoPhase counts the transaction by outcome, records how long its end
// took, and adds a "shardkey.two_phase" event to ctx's span when that
// records.
func (o *Observer) TwoPhase(ctx context.Context, t observe.TwoPhase) {
	if o.metering {
		m := o.m.twoPhase(t.Component, t.Outcome)
		o.twoPhase.Add(ctx, 1, m.add...)
		o.twoPhaseDuration.Record(ctx, t.Duration.Seconds(), m.rec...)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("shardkey.two_phase", trace.WithAttributes(ComponentKey.String(t.Component),
			TwoPhaseOutcomeKey.String(string(t.Outcome)), TwoPhaseBranchesKey.Int(t.Branches)))
	}
}

// recordError marks span failed by err: status Error, error.type, and an
// exception event. Not span.RecordError, which puts err.Error() in the
// event: an error's text may quote the statement's SQL with its literals,
// a sharding value or a row's (a duplicate key), and telemetry leaves for
// third-party backends. The event's exception.message and the status
// description are errType, unless WithErrorText asked for the text.
func (o *Observer) recordError(span trace.Span, err error, errType string) {
	msg := errType
	if o.errorText {
		msg = err.Error()
	}
	span.AddEvent(exceptionEvent, trace.WithAttributes(
		exceptionTypeKey.String(errType), exceptionMessageKey.String(msg)))
	span.SetStatus(codes.Error, msg)
	span.SetAttributes(errorTypeKey.String(errType))
}

// errorType is error.type for err, of low cardinality: "canceled" and
// "timeout" for the context's errors, else the Go type of the innermost
// error of its chain that has a type of its own (a driver's
// *pgconn.PgError, *mysql.MySQLError, a *net.OpError), or "_OTHER"
// (OpenTelemetry's fallback) for a chain of errors.New and fmt.Errorf
// values alone.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	typ := "_OTHER"
	for err != nil {
		switch t := reflect.TypeOf(err).String(); t {
		case "*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		default:
			typ = t
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			err = nil
			if errs := u.Unwrap(); len(errs) > 0 {
				err = errs[0]
			}
		default:
			err = nil
		}
	}
	return typ
}

// system is db.system.name for a span: the system the event names, else
// WithDBSystem's.
func (o *Observer) system(name string) (attribute.KeyValue, bool) {
	if name != "" {
		return dbSystemKey.String(name), true
	}
	return o.dbSystem, o.hasDB
}
