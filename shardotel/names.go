package shardotel

import "go.opentelemetry.io/otel/attribute"

// The attribute keys this package sets, besides OpenTelemetry's
// semantic-convention keys db.operation.name, db.collection.name,
// db.system.name, error.type, and exception.type and exception.message
// on exception events. Their values are of low cardinality
// except where a key's comment says otherwise (span attributes only).
const (
	// ComponentKey: the reporting package, "sqlhook" or "gormplugin".
	ComponentKey = attribute.Key("shardkey.component")
	// FanoutKey: how many of the physical tables a statement could reach
	// it reaches, "one", "some" or "all".
	FanoutKey = attribute.Key("shardkey.fanout")
	// RefusalReasonKey: why a statement was refused (observe.Reason).
	RefusalReasonKey = attribute.Key("shardkey.refusal.reason")
	// PlanCacheResultKey: "hit" or "miss".
	PlanCacheResultKey = attribute.Key("shardkey.plan_cache.result")
	// TwoPhaseOutcomeKey: "committed", "rolled_back" or "in_doubt".
	TwoPhaseOutcomeKey = attribute.Key("shardkey.two_phase.outcome")
	// KeygenTypeKey: a registered generator's type, e.g. "SNOWFLAKE".
	KeygenTypeKey = attribute.Key("shardkey.keygen.type")

	// LogicTablesKey: the logic tables a statement names (span only).
	LogicTablesKey = attribute.Key("shardkey.logic_tables")
	// TargetsKey: the physical statements a statement runs as (span only).
	TargetsKey = attribute.Key("shardkey.targets")
	// DataSourcesKey: the data sources those run on (span only).
	DataSourcesKey = attribute.Key("shardkey.data_sources")
	// DataSourceKey: the data source of one target (span only).
	DataSourceKey = attribute.Key("shardkey.data_source")
	// PhysicalTablesKey: the physical tables of one target (span only).
	PhysicalTablesKey = attribute.Key("shardkey.physical_tables")
	// MergedRowsKey: the rows a merge returned (span only).
	MergedRowsKey = attribute.Key("shardkey.merged_rows")
	// TwoPhaseBranchesKey: the data sources a two-phase transaction wrote
	// (span event only).
	TwoPhaseBranchesKey = attribute.Key("shardkey.two_phase.branches")
)

// OpenTelemetry semantic-convention keys, and the name of the event
// that records an exception on a span.
const (
	dbOperationKey      = attribute.Key("db.operation.name")
	dbCollectionKey     = attribute.Key("db.collection.name")
	dbSystemKey         = attribute.Key("db.system.name")
	errorTypeKey        = attribute.Key("error.type")
	exceptionTypeKey    = attribute.Key("exception.type")
	exceptionMessageKey = attribute.Key("exception.message")

	exceptionEvent = "exception"
)

// The metric names, as the package documentation's table lists them;
// Prometheus shows them with underscores, counters ending in _total and
// seconds in _seconds.
const (
	metricStatements       = "shardkey.route.statements"
	metricTargets          = "shardkey.route.targets"
	metricDuration         = "shardkey.route.duration"
	metricRefusals         = "shardkey.route.refusals"
	metricPlanCache        = "shardkey.route.plan_cache.lookups"
	metricMergedRows       = "shardkey.route.merged_rows"
	metricTwoPhase         = "shardkey.two_phase.transactions"
	metricTwoPhaseDuration = "shardkey.two_phase.duration"

	metricKeysIssued     = "shardkey.keygen.keys.issued"
	metricClockWaits     = "shardkey.keygen.clock.waits"
	metricClockBackSteps = "shardkey.keygen.clock.back_steps"
	metricSequenceWaits  = "shardkey.keygen.sequence.waits"
	metricLeaseRenewals  = "shardkey.keygen.lease.renewals"
	metricLeaseFailures  = "shardkey.keygen.lease.renewal_failures"
	metricLeaseRefusals  = "shardkey.keygen.lease.refusals"
	metricLeaseRemaining = "shardkey.keygen.lease.remaining"
)

// Histogram boundaries: durations as OpenTelemetry's database client
// metrics advise (seconds), targets in powers of two.
var (
	durationBounds = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	targetBounds   = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
)
