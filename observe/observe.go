// Package observe defines the hooks through which shardkey's routing
// packages (sqlhook, gormplugin) report what they do: each routed
// statement and its per-target executions, refusals, route-plan cache
// lookups, merged rows and two-phase commit outcomes. It imports nothing
// beyond the standard library, so the core stays free of telemetry
// libraries: package github.com/shardkey/shardkey/shardotel implements an
// Observer on OpenTelemetry, and any other system can be wired the same way.
//
// Key generators report through keygen.StatsReporter instead, which a
// collector polls: their hot path carries no hook at all.
//
// A nil Observer is the default and costs one nil check per statement.
// Implementations must be safe for concurrent use and must not block:
// they run on the statement's goroutine. sqlhook and gormplugin recover a
// panic in an Observer method, log it at error level through their logger
// and drop that event, so the statement's result stands and no connection
// or transaction is left held; other emitters should do the same. Embed
// Base to implement only some of the methods.
package observe

import (
	"context"
	"time"
)

// Observer receives the events of routed statements. Every method may be
// called from many goroutines at once.
type Observer interface {
	// StatementStart is called once a statement is routed, before any of
	// its targets runs. The context it returns is passed to the
	// statement's TargetStart calls and to StatementEnd (a tracer puts its
	// span there).
	StatementStart(ctx context.Context, s Statement) context.Context
	// StatementEnd is called when the statement is done: for a query when
	// its rows are closed, with the number of rows the merge returned.
	StatementEnd(ctx context.Context, s Statement, end StatementEnd)
	// TargetStart is called before one physical statement runs on a data
	// source; ctx is StatementStart's.
	TargetStart(ctx context.Context, t Target) context.Context
	// TargetEnd is called when that physical statement has returned (for
	// a query: when its rows are open, not read).
	TargetEnd(ctx context.Context, t Target, err error)
	// Refused is called for a statement refused before anything ran,
	// with a reason of low cardinality (a metric attribute).
	Refused(ctx context.Context, r Refusal)
	// PlanCache reports one lookup in a route-plan cache.
	PlanCache(ctx context.Context, hit bool)
	// TwoPhase reports how a transaction across data sources ended.
	TwoPhase(ctx context.Context, t TwoPhase)
}

// Fanout says how many of the targets a statement could reach it reaches.
type Fanout uint8

const (
	// FanoutOne: a single physical table.
	FanoutOne Fanout = iota + 1
	// FanoutSome: several physical tables, not all of them.
	FanoutSome
	// FanoutAll: every physical table of the logic tables named (a scatter
	// or broadcast).
	FanoutAll
)

// String is the fan-out's name as a metric attribute: one, some or all.
func (f Fanout) String() string {
	switch f {
	case FanoutOne:
		return "one"
	case FanoutSome:
		return "some"
	case FanoutAll:
		return "all"
	}
	return "unknown"
}

// Statement describes one routed statement.
type Statement struct {
	Component string   // the reporting package: "sqlhook" or "gormplugin"
	System    string   // the data sources' database system: "postgresql", "mysql" or "sqlite"; "" when unknown
	Operation string   // "select", "insert", "update", "delete" or "other"
	Tables    []string // the logic tables it names; read-only
	Targets   int      // the physical statements it runs as
	Sources   int      // the data sources those run on
	Fanout    Fanout
}

// StatementEnd is how a statement ended.
type StatementEnd struct {
	Err      error
	Rows     int64 // rows returned to the caller by a merge of several targets; 0 otherwise
	Merged   bool  // the rows came through the merge engine (several targets)
	Duration time.Duration
}

// Target is one physical statement of a routed statement.
type Target struct {
	DataSource string
	System     string   // the data source's database system, as in Statement
	Tables     []string // the physical tables it names; read-only
}

// Refusal is a statement refused before anything ran.
type Refusal struct {
	Component string // as in Statement
	Reason    Reason
	Err       error
}

// Reason classifies refusals.
type Reason string

// The reasons shardkey reports. Their strings are stable metric
// attribute values.
const (
	ReasonUnsupported         Reason = "unsupported"           // cannot be placed or merged exactly
	ReasonParse               Reason = "parse"                 // names a logic table, does not parse
	ReasonMissingShardingKey  Reason = "missing_sharding_key"  // a write without its sharding value
	ReasonNoRoute             Reason = "no_route"              // the algorithm placed the value nowhere
	ReasonUnknownTable        Reason = "unknown_table"         // a table the rules do not hold
	ReasonShardingKeyChange   Reason = "sharding_key_change"   // an UPDATE moving a row between shards
	ReasonHint                Reason = "hint"                  // a hint the statement cannot use
	ReasonCrossSource         Reason = "cross_source"          // a transaction reaching a second data source unallowed
	ReasonTwoPhaseUnavailable Reason = "two_phase_unavailable" // a data source that cannot prepare
	ReasonOther               Reason = "other"
)

// TwoPhase is the end of a transaction that reached several data sources.
type TwoPhase struct {
	Component string
	Outcome   Outcome
	Branches  int // data sources written
	Duration  time.Duration
}

// Outcome is how a transaction across data sources ended.
type Outcome string

// The outcomes. Their strings are stable metric attribute values.
const (
	OutcomeCommitted  Outcome = "committed"   // every branch committed
	OutcomeRolledBack Outcome = "rolled_back" // every branch rolled back (by request or on failure)
	OutcomeInDoubt    Outcome = "in_doubt"    // the end is for recovery to finish
)

// Base implements Observer doing nothing; embed it to implement only some
// methods.
type Base struct{}

var _ Observer = Base{}

func (Base) StatementStart(ctx context.Context, _ Statement) context.Context { return ctx }
func (Base) StatementEnd(context.Context, Statement, StatementEnd)           {}
func (Base) TargetStart(ctx context.Context, _ Target) context.Context       { return ctx }
func (Base) TargetEnd(context.Context, Target, error)                        {}
func (Base) Refused(context.Context, Refusal)                                {}
func (Base) PlanCache(context.Context, bool)                                 {}
func (Base) TwoPhase(context.Context, TwoPhase)                              {}
