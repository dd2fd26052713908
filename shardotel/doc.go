// Package shardotel reports what shardkey does to OpenTelemetry: metrics
// and traces of routed statements through the hooks of package observe,
// and key generators' figures by polling keygen.StatsReporter.
//
// It is a module of its own (github.com/shardkey/shardkey/shardotel), so
// only programs that import it have OpenTelemetry in their module graph;
// it needs the OpenTelemetry API alone (otel, otel/metric, otel/trace),
// the SDK and exporters being the program's choice.
//
// # Routed statements
//
//	obs, err := shardotel.NewObserver(
//		shardotel.WithMeterProvider(mp), shardotel.WithTracerProvider(tp), // default: the globals
//		shardotel.WithDBSystem("postgresql"))
//	db, err := sqlhook.Open(cfg, sqlhook.WithObserver(obs))
//
// Each routed statement gets a span of kind client, named
// "{operation} {logic table}" ("select t_order"; the operation alone when
// it names several tables), a child of the context's span, with
// db.operation.name, shardkey.logic_tables, shardkey.targets,
// shardkey.data_sources, shardkey.fanout, shardkey.component,
// db.collection.name (one table) and db.system.name (the event's System, else WithDBSystem). Each
// physical statement it runs gets a child span of its own, "{operation}
// {physical table}" with shardkey.data_source, shardkey.physical_tables and
// db.collection.name. An error ends a span with status Error, an
// exception event and error.type set. A refusal is recorded as an
// exception event on the caller's span, a two-phase outcome as a
// "shardkey.two_phase" event. Span attributes are set after
// the span starts, and only on spans that record: a sampler sees the name
// and kind alone, and a statement not sampled costs one span start and no
// attribute.
//
// # What telemetry carries
//
// Telemetry goes to third-party backends, so by default it carries no SQL
// text, no argument or row value and no secret: names of operations,
// logic and physical tables and data sources, counts, reasons, outcomes
// and types. No error text leaves the package: an error's text may quote
// the statement's SQL with its literals (sqlhook's statement errors), a
// sharding value (a refusal: "sharding key change: ... value 987654321")
// or the database's message quoting row data (MySQL's "Duplicate entry
// '...' for key"). An exception event carries exception.type (the
// error.type the span and shardkey.route.duration carry, in either mode)
// and an exception.message of fixed, value-free text:
// "refused: {reason}" for a refusal ("refused: missing_sharding_key"),
// the error.type otherwise; a failed span's status description is that
// same text. WithErrorText puts err.Error() in both instead, for
// backends allowed to hold what the database holds. error.type is
// "canceled" or "timeout" for the context's errors, else the Go type of
// the innermost error of its chain that has a type of its own (a
// driver's *pgconn.PgError, *mysql.MySQLError), or "_OTHER".
//
// # Key generators
//
//	reg, err := shardotel.RegisterGenerator(gen.(keygen.StatsReporter),
//		shardotel.WithAttributes(attribute.String("shardkey.keygen.name", "orders")))
//	defer reg.Unregister()
//
// A registered generator's Stats is read once per collection, in the
// meter's callback; NextID carries no hook and costs what it cost without
// instrumentation.
//
// # Metrics
//
// Names follow OpenTelemetry's conventions: dot-separated, units in UCUM
// ("s", "{statement}"). A Prometheus exporter shows them with underscores,
// counters suffixed _total and seconds _seconds
// (shardkey_route_statements_total, shardkey_route_duration_seconds).
//
//	name                                    instrument  unit           attributes
//	shardkey.route.statements               counter     {statement}    shardkey.component, db.operation.name, shardkey.fanout
//	shardkey.route.targets                  histogram   {target}       as above
//	shardkey.route.duration                 histogram   s              as above, error.type when it failed
//	shardkey.route.refusals                 counter     {statement}    shardkey.component, shardkey.refusal.reason
//	shardkey.route.plan_cache.lookups       counter     {lookup}       shardkey.plan_cache.result (hit, miss)
//	shardkey.route.merged_rows              counter     {row}          as shardkey.route.statements
//	shardkey.two_phase.transactions         counter     {transaction}  shardkey.component, shardkey.two_phase.outcome
//	shardkey.two_phase.duration             histogram   s              as above
//	shardkey.keygen.keys.issued             counter     {key}          shardkey.keygen.type, WithAttributes'
//	shardkey.keygen.clock.waits             counter     {wait}         as above
//	shardkey.keygen.clock.back_steps        counter     {step}         as above
//	shardkey.keygen.sequence.waits          counter     {wait}         as above
//	shardkey.keygen.lease.renewals          counter     {renewal}      as above
//	shardkey.keygen.lease.renewal_failures  counter     {renewal}      as above
//	shardkey.keygen.lease.refusals          counter     {key}          as above
//	shardkey.keygen.lease.remaining         gauge       s              as above; only for a lease that can expire
//
// The fan-out is one (a single physical table), some, or all (every
// physical table of the logic tables named: a scatter or a broadcast).
// The statement counter and the targets histogram are recorded when a
// statement is routed, the duration when it ends (for a query, when its
// rows are closed). For SEGMENT, keygen.Stats reuses the lease fields:
// renewals are ranges reserved, renewal failures failed reservations,
// refusals keys refused with keygen.ErrSegmentUnavailable.
//
// # Cost
//
// Metric attribute sets are built once, when the Observer is made (for
// the values the hooks report) or on the first use of a new combination;
// recording allocates nothing of this package's. With OpenTelemetry's
// no-op providers (go.opentelemetry.io/otel/metric/noop, trace/noop) an
// Observer starts no span and records nothing; the global providers
// before the program sets its own delegate to no-ops, at the cost of
// their calls.
package shardotel
