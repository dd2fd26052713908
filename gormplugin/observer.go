package gormplugin

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
)

// Observation (WithObserver). Every hook is behind one nil check of
// p.obs, so a plugin without an observer builds nothing for it: no
// context, no statement description, no clock reading.

const component = "gormplugin"

// WithObserver reports the plugin's routed statements to o (package
// observe; shardotel implements it on OpenTelemetry). nil, the default,
// reports nothing and costs one nil check per hook.
//
// What is reported, and when:
//
//   - StatementStart and StatementEnd around every statement routed to
//     the physical tables of a sharded (or broadcast) table: a Create,
//     Find/First/Take/Last/Count/Pluck/Scan, Row/Rows, Update or Delete,
//     once per SQL statement GORM runs (Save, FirstOrCreate and
//     association saves run several). StatementStart comes once the
//     statement is routed and checked, just before its first physical
//     statement; StatementEnd when it is done, with its error (an error
//     found after it ran, such as shardconf.ErrShardingKeyChange for a row
//     found in another table, included). Statement gives the operation
//     (insert, select, update, delete), the logic table (and the binding
//     tables it joins), the number of physical statements and of data
//     sources, and the fan-out: one physical table, all of the logic
//     table's data nodes, or some. A read over several tables ends when
//     its merged rows are closed (by GORM, or by the caller of Rows), with
//     Rows the number of rows the merge returned and Merged true; a read
//     of one table through Row or Rows ends when its rows are open.
//   - TargetStart and TargetEnd around each physical statement, with its
//     data source and physical tables, in the context StatementStart
//     returned; the physical statement runs in the context TargetStart
//     returns, so spans a driver makes nest under it. For a read, TargetEnd
//     comes when its rows are open, not read.
//   - Refused for every statement the plugin stops before anything of it
//     runs, once, with nothing else reported for it: ReasonTwoPhaseUnavailable
//     (a data source that cannot take part in a two-phase commit),
//     ReasonCrossSource (a write, or a transaction, reaching a data source
//     it may not), the shardconf reasons (observe.RouteReason:
//     missing sharding key, key change, unused hint, unknown table, no
//     route), ReasonUnsupported (ErrUnsupported otherwise), and
//     ReasonOther for the rest: ErrTimeLocation, a primary key found in
//     another table (gorm.ErrDuplicatedKey), a two-phase branch or
//     transaction of the plugin's own that could not begin.
//   - TwoPhase when a transaction of WithTwoPhaseCommit that reached
//     several data sources ends: committed, rolled_back (by Rollback, or
//     by a commit that failed before its decision was logged) or in_doubt
//     (ErrTxInDoubt: recovery finishes it), with the data sources it
//     reached and how long its Commit or Rollback took. A transaction on
//     one data source commits in one phase and is not reported, nor is a
//     read-only one.
//
// The plugin keeps no route-plan cache (each statement is routed from its
// clause tree), so PlanCache is never called. Statements the plugin does
// not route (unsharded tables, raw SQL that names no sharded table),
// DryRun statements and the lookups that check a write (a key searched
// for in other tables) are not reported.
//
// The observer runs on the statement's goroutine: it must be safe for
// concurrent use and must not block. A panic in one of its methods is
// recovered, logged at error level (WithLogger) and the event dropped;
// the statement goes on.
func WithObserver(o observe.Observer) Option { return func(p *Plugin) { p.obs = o } }

// stmtObs is one observed statement, from StatementStart to StatementEnd.
// nil (no observer) makes every method a no-op.
type stmtObs struct {
	o     observe.Observer
	p     *Plugin
	ctx   context.Context // StatementStart's
	s     observe.Statement
	first shardconf.Target // the first target (runOne)
	logic string           // the logic table and its JOINs, which name
	joins []joinPlan       // each target's physical tables (targetTables)
	begun time.Time
	done  atomic.Bool
}

// startStatement reports a routed statement about to run; nil when there
// is no observer, nothing to run, or the statement is not routed.
func (p *Plugin) startStatement(db *gorm.DB, op string) *stmtObs {
	if p.obs == nil || db.Error != nil || db.DryRun {
		return nil
	}
	r, ok := routedOf(db)
	if !ok || len(r.targets) == 0 {
		return nil
	}
	return p.startRouted(db, r, op)
}

func (p *Plugin) startRouted(db *gorm.DB, r routed, op string) *stmtObs {
	logic := r.logic
	if logic == "" { // a broadcast table's statement: its copies are named as it is
		if logic = p.logicTable(db); logic == "" {
			logic = r.targets[0].Table
		}
	}
	tables := p.oneName(logic)
	if len(r.joins) > 0 {
		tables = make([]string, 0, 1+len(r.joins))
		tables = append(tables, logic)
		for _, j := range r.joins {
			tables = append(tables, j.partner)
		}
	}
	so := &stmtObs{o: p.obs, p: p, first: r.targets[0], logic: r.logic, joins: r.joins, begun: time.Now()}
	so.s = observe.Statement{Component: component, System: dbSystem(db), Operation: op, Tables: tables,
		Targets: len(r.targets), Sources: countSources(r.targets), Fanout: p.fanout(logic, r.targets)}
	so.ctx = p.obs.StatementStart(ctxOf(db), so.s)
	return so
}

// oneName is []string{name}, made once per name: Statement.Tables and
// Target.Tables are read-only, so statements share them.
func (p *Plugin) oneName(name string) []string {
	if v, ok := p.names.Load(name); ok {
		return v.([]string)
	}
	v, _ := p.names.LoadOrStore(name, []string{name})
	return v.([]string)
}

func ctxOf(db *gorm.DB) context.Context {
	if ctx := db.Statement.Context; ctx != nil {
		return ctx
	}
	return context.Background()
}

func countSources(ts []shardconf.Target) int {
	n := 0
	for i, t := range ts {
		first := true
		for _, u := range ts[:i] {
			if u.DataSource == t.DataSource {
				first = false
				break
			}
		}
		if first {
			n++
		}
	}
	return n
}

// fanout: one physical table, every data node of the logic table, or some.
func (p *Plugin) fanout(logic string, ts []shardconf.Target) observe.Fanout {
	if len(ts) <= 1 {
		return observe.FanoutOne
	}
	if all, err := p.rules.Targets(logic); err == nil && len(ts) >= len(all) {
		return observe.FanoutAll
	}
	return observe.FanoutSome
}

// end reports the statement's end, once.
func (so *stmtObs) end(err error, rows int64, merged bool) {
	if so == nil || so.done.Swap(true) {
		return
	}
	so.o.StatementEnd(so.ctx, so.s, observe.StatementEnd{Err: err, Rows: rows, Merged: merged, Duration: time.Since(so.begun)})
}

// target reports one physical statement on t and runs it (run) in the
// context TargetStart returned; run's error is TargetEnd's.
func (so *stmtObs) target(db *gorm.DB, t shardconf.Target, run func() error) error {
	if so == nil {
		return run()
	}
	tg := observe.Target{DataSource: t.DataSource, System: so.s.System, Tables: so.targetTables(t)}
	ctx := so.o.TargetStart(so.ctx, tg)
	stmt := db.Statement
	saved := stmt.Context
	stmt.Context = ctx
	err := run()
	stmt.Context = saved
	so.o.TargetEnd(ctx, tg, err)
	return err
}

// runOne runs f, GORM's own callback, as the statement's one physical
// statement.
func (so *stmtObs) runOne(db *gorm.DB, f func(*gorm.DB)) {
	if so == nil {
		f(db)
		return
	}
	_ = so.target(db, so.first, func() error {
		f(db)
		return db.Error
	})
}

// targetTables are the physical tables a target's statement names: the
// logic table's, and its JOIN partners' of the same index.
func (so *stmtObs) targetTables(t shardconf.Target) []string {
	if len(so.joins) == 0 {
		return so.p.oneName(t.Table)
	}
	out := make([]string, 1, 1+len(so.joins))
	out[0] = t.Table
	for _, j := range so.joins {
		if pt, err := so.p.rules.BoundTarget(so.logic, t, j.partner); err == nil {
			out = append(out, pt.Table)
		}
	}
	return out
}

// refused reports a statement the plugin refuses before anything of it
// runs (see fail).
func (p *Plugin) refused(db *gorm.DB, err error) {
	p.obs.Refused(ctxOf(db), observe.Refusal{Component: component, Reason: refusalReason(err), Err: err})
}

// refusalReason classifies a refusal, the most specific reason first: a
// key change or a missing key also matches ErrUnsupported.
func refusalReason(err error) observe.Reason {
	var cs *crossSourceError
	switch {
	case errors.Is(err, ErrTimeLocation):
		return observe.ReasonOther
	case errors.Is(err, ErrTwoPhaseUnavailable):
		return observe.ReasonTwoPhaseUnavailable
	case errors.As(err, &cs):
		return observe.ReasonCrossSource
	}
	if r := observe.RouteReason(err); r != observe.ReasonOther {
		return r
	}
	if errors.Is(err, ErrUnsupported) {
		return observe.ReasonUnsupported
	}
	return observe.ReasonOther
}

// crossSourceError marks a refusal of a statement that would take a
// transaction (GORM's, or one a write needs) to a second data source. It
// reads and matches (errors.Is) as the error it wraps.
type crossSourceError struct{ err error }

func crossSource(err error) error         { return &crossSourceError{err} }
func (e *crossSourceError) Error() string { return e.err.Error() }
func (e *crossSourceError) Unwrap() error { return e.err }

// observedRows is the merged rows of a read over several tables, counted
// for StatementEnd. endOnClose: the caller of Rows or Row closes them
// (mergeQuery ends the statement itself, after GORM scanned them).
type observedRows struct {
	refusing
	so         *stmtObs
	n          int64
	err        error
	endOnClose bool
}

func (r *observedRows) Next(dest []driver.Value) error {
	err := r.refusing.Next(dest)
	switch {
	case err == nil:
		r.n++
	case !errors.Is(err, io.EOF):
		r.err = err
	}
	return err
}

func (r *observedRows) Close() error {
	err := r.refusing.Close()
	if r.endOnClose {
		r.so.end(errors.Join(r.err, err), r.n, true)
	}
	return err
}

// dbSystem names the database system of db's dialector as OpenTelemetry's
// db.system.name does: GORM's "postgres" is "postgresql"; other names as
// the dialector gives them ("mysql", "sqlite").
func dbSystem(db *gorm.DB) string {
	if db == nil || db.Dialector == nil {
		return ""
	}
	if name := db.Dialector.Name(); name != "postgres" {
		return name
	}
	return "postgresql"
}
