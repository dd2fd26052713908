package sqlhook

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"time"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// What WithObserver reports. Every report starts from a nil check on the
// observer (or on a *statementObs, nil when there is none), so that a
// connector without one does what it did before: nothing below allocates
// or reads the clock unless an observer is set.

const component = "sqlhook"

// containPanic, deferred around each call of the observer, recovers a
// panic of the observer and logs it (WithLogger's logger): the event is
// lost, the statement's result stands. A panic out of a query would
// otherwise keep its pooled connection busy for good, and one after a
// write in a transaction would hide that the write ran.
func containPanic(l *slog.Logger, method string) {
	if v := recover(); v != nil {
		l.Error("sqlhook: the observer panicked; its event is dropped", "method", method, "panic", fmt.Sprint(v))
	}
}

// reportPlanCache reports a plan-cache lookup.
func (h *hook) reportPlanCache(ctx context.Context, hit bool) {
	defer containPanic(h.opts.logger, "PlanCache")
	h.opts.observer.PlanCache(ctx, hit)
}

// routeObs is what routing records for an observer about one routed
// statement (routed.obs, nil without an observer): its plan, and the
// physical tables of each unit, in unit order.
type routeObs struct {
	plan   *ir.Plan
	tables [][]string
}

// newRouted starts a routed statement of n units whose query results, if
// several, are concatenated.
func (h *hook) newRouted(n int) *routed {
	r := &routed{units: make([]unit, 0, n), merge: mergeSpec{limit: -1}}
	if h.opts.observer != nil {
		r.obs = &routeObs{tables: make([][]string, 0, n)}
	}
	return r
}

// notePhysical records the physical tables of the unit just added (phys
// is copied: binding reuses its buffer).
func (r *routed) notePhysical(phys []string) {
	if r.obs != nil {
		r.obs.tables = append(r.obs.tables, slices.Clone(phys))
	}
}

// refuse reports err, a refusal of a statement before anything ran, to
// the observer, and returns it.
func (cn *connector) refuse(ctx context.Context, err error) error {
	if o := cn.opts.observer; o != nil && err != nil {
		defer containPanic(cn.opts.logger, "Refused")
		o.Refused(ctx, observe.Refusal{Component: component, Reason: refusalReason(err), Err: err})
	}
	return err
}

// errHintRefusal is matched by the refusals of a hint the statement
// cannot use (hintRefusal), which may also match ErrUnsupported.
var errHintRefusal = errors.New("sqlhook: hint refused")

// hintRefusal marks err as a refusal because of a hint; its text and
// chain are err's.
type hintRefusal struct{ error }

func (e hintRefusal) Unwrap() error        { return e.error }
func (e hintRefusal) Is(target error) bool { return target == errHintRefusal }

// refusalReason classifies a refusal, most specific first: a refusal of
// two-phase commit also matches ErrCrossSourceTx, and a hint's and a
// sharding key change's match ErrUnsupported too.
func refusalReason(err error) observe.Reason {
	switch {
	case errors.Is(err, errHintRefusal), errors.Is(err, shardconf.ErrUnusedHint):
		return observe.ReasonHint
	case errors.Is(err, ErrTwoPhaseUnavailable):
		return observe.ReasonTwoPhaseUnavailable
	case errors.Is(err, ErrCrossSourceTx):
		return observe.ReasonCrossSource
	case errors.Is(err, ErrParse):
		return observe.ReasonParse
	case errors.Is(err, shardconf.ErrShardingKeyChange):
		return observe.ReasonShardingKeyChange
	case errors.Is(err, ErrUnsupported):
		return observe.ReasonUnsupported
	}
	return observe.RouteReason(err)
}

// statementObs reports one routed statement: StatementStart once it is
// admitted (start), its targets, and StatementEnd (end). It is nil when
// there is no observer or the statement is passed through; every method
// is then a nil check.
type statementObs struct {
	o      observe.Observer
	log    *slog.Logger // for containPanic
	s      observe.Statement
	units  []unit
	tables [][]string // per unit, or nil
	ctx    context.Context
	begin  time.Time
	state  uint8 // obsNew, obsStarted, obsEnded
	muted  bool  // StatementStart panicked: the targets are not reported either
}

const (
	obsNew uint8 = iota
	obsStarted
	obsEnded
)

// observeStatement describes r for the observer, or is nil.
func (cn *connector) observeStatement(r *routed) *statementObs {
	if cn.opts.observer == nil || r.passthrough {
		return nil
	}
	return cn.describe(r)
}

func (cn *connector) describe(r *routed) *statementObs {
	so := &statementObs{o: cn.opts.observer, log: cn.opts.logger, units: r.units}
	s := observe.Statement{Component: component, Operation: "other", Targets: len(r.units)}
	if cn.h != nil {
		s.System = cn.h.Dialect.String() // every data source speaks it
	}
	for i, u := range r.units {
		if !slices.ContainsFunc(r.units[:i], func(v unit) bool { return v.ds == u.ds }) {
			s.Sources++
		}
	}
	var nodes int
	if r.obs != nil {
		if len(r.obs.tables) == len(r.units) {
			so.tables = r.obs.tables
		}
		if p := r.obs.plan; p != nil && len(p.Tables) > 0 {
			s.Operation = p.StatementKind()
			s.Tables = p.LogicTables()
			if cn.h != nil {
				if ts, err := cn.h.Router.Targets(p.Tables[p.RoutedTable()].Logic); err == nil {
					nodes = len(ts)
				}
			}
		}
	}
	// Each unit is one target of the routed table (binding partners
	// follow it): the units cover its data nodes when they are as many.
	switch {
	case len(r.units) == 1:
		s.Fanout = observe.FanoutOne
	case nodes > 0 && len(r.units) >= nodes:
		s.Fanout = observe.FanoutAll
	default:
		s.Fanout = observe.FanoutSome
	}
	so.s = s
	return so
}

// start reports StatementStart and returns the context its targets run
// under.
func (so *statementObs) start(ctx context.Context) context.Context {
	if so == nil {
		return ctx
	}
	return so.reportStart(ctx)
}

// The report... methods are the parts of the methods above them that run
// with an observer; kept apart so that the nil checks inline.

func (so *statementObs) reportStart(ctx context.Context) (out context.Context) {
	if so.state != obsNew {
		return ctx
	}
	// Ended until StatementStart returns: after a panic in it, recovered,
	// the statement reports nothing more (no targets, no StatementEnd
	// without its start) and runs under the caller's context.
	so.state, so.muted, so.begin, so.ctx, out = obsEnded, true, time.Now(), ctx, ctx
	defer containPanic(so.log, "StatementStart")
	so.ctx = so.o.StatementStart(ctx, so.s)
	so.state, so.muted = obsStarted, false
	return so.ctx
}

func (so *statementObs) target(i int) observe.Target {
	t := observe.Target{DataSource: so.units[i].ds, System: so.s.System}
	if so.tables != nil {
		t.Tables = so.tables[i]
	}
	return t
}

// targetStart reports TargetStart for unit i under ctx, the statement's
// context, and returns the target's.
func (so *statementObs) targetStart(ctx context.Context, i int) context.Context {
	if so == nil || so.muted {
		return ctx
	}
	return so.reportTargetStart(ctx, i)
}

func (so *statementObs) reportTargetStart(ctx context.Context, i int) (out context.Context) {
	out = ctx // kept if TargetStart panics
	defer containPanic(so.log, "TargetStart")
	return so.o.TargetStart(ctx, so.target(i))
}

// targetEnd reports TargetEnd for unit i; ctx is targetStart's.
func (so *statementObs) targetEnd(ctx context.Context, i int, err error) {
	if so == nil || so.muted {
		return
	}
	so.reportTargetEnd(ctx, i, err)
}

func (so *statementObs) reportTargetEnd(ctx context.Context, i int, err error) {
	defer containPanic(so.log, "TargetEnd")
	so.o.TargetEnd(ctx, so.target(i), err)
}

// end reports StatementEnd, once, if StatementStart was reported.
func (so *statementObs) end(err error, rows int64, merged bool) {
	if so == nil {
		return
	}
	so.reportEnd(err, rows, merged)
}

func (so *statementObs) reportEnd(err error, rows int64, merged bool) {
	if so.state != obsStarted {
		return
	}
	so.state = obsEnded
	defer containPanic(so.log, "StatementEnd")
	so.o.StatementEnd(so.ctx, so.s, observe.StatementEnd{Err: err, Rows: rows, Merged: merged, Duration: time.Since(so.begin)})
}

// rows returns a query's rows reporting StatementEnd when closed.
func (so *statementObs) rows(r driver.Rows) driver.Rows {
	if so == nil || so.state != obsStarted {
		return r
	}
	_, merged := r.(*mergedRows)
	return &observedRows{Rows: r, so: so, merged: merged}
}

// observedRows are a routed query's rows under an observer: they count
// the rows a merge returns, and report StatementEnd at Close with the
// first error Next returned. Each optional method answers as the rows
// would, or with database/sql's default when they lack it (as stmtRows).
type observedRows struct {
	driver.Rows
	so     *statementObs
	merged bool
	eof    bool // Next returned io.EOF
	n      int64
	err    error
}

var (
	_ driver.RowsNextResultSet              = (*observedRows)(nil)
	_ driver.RowsColumnTypeScanType         = (*observedRows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*observedRows)(nil)
	_ driver.RowsColumnTypeLength           = (*observedRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*observedRows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*observedRows)(nil)
)

func (r *observedRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	switch {
	case err == nil:
		if r.merged {
			r.n++
		}
	case errors.Is(err, io.EOF):
		r.eof = true
	case r.err == nil:
		r.err = err
	}
	return err
}

// Close reports StatementEnd with the first error Next returned, else
// Close's, else, for rows closed before their end once the statement's
// context was done, the context's error: database/sql closes the rows
// itself when the context is cancelled, and the caller's Err then says
// so.
func (r *observedRows) Close() error {
	err := r.Rows.Close()
	end := cmpErr(r.err, err)
	if end == nil && !r.eof && r.so.ctx != nil {
		end = r.so.ctx.Err()
	}
	r.so.end(end, r.n, r.merged)
	return err
}

// cmpErr is the first non-nil of a and b.
func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (r *observedRows) HasNextResultSet() bool {
	n, ok := r.Rows.(driver.RowsNextResultSet)
	return ok && n.HasNextResultSet()
}

func (r *observedRows) NextResultSet() error {
	if n, ok := r.Rows.(driver.RowsNextResultSet); ok {
		return n.NextResultSet()
	}
	return io.EOF
}

func (r *observedRows) ColumnTypeScanType(i int) reflect.Type { return colScanType(r.Rows, i) }
func (r *observedRows) ColumnTypeDatabaseTypeName(i int) string {
	return colDatabaseTypeName(r.Rows, i)
}
func (r *observedRows) ColumnTypeLength(i int) (int64, bool)  { return colLength(r.Rows, i) }
func (r *observedRows) ColumnTypeNullable(i int) (bool, bool) { return colNullable(r.Rows, i) }
func (r *observedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	return colPrecisionScale(r.Rows, i)
}

// twoPhaseStart is when the end of a transaction began, for its
// TwoPhase report; zero without an observer.
func (t *tx) twoPhaseStart() time.Time {
	if t.c.cn.opts.observer == nil {
		return time.Time{}
	}
	return time.Now()
}

// reportTwoPhase reports the end of a read-write transaction that reached
// several data sources under two-phase commit: committed when a commit
// succeeded, in doubt on ErrTxInDoubt, else rolled back (any other
// failure of Commit rolled every branch back).
func (t *tx) reportTwoPhase(op string, began time.Time, err error) {
	o := t.c.cn.opts.observer
	if o == nil || t.opts.ReadOnly {
		return
	}
	branches := 0
	for ds := range t.begun {
		if t.reached[ds] {
			branches++
		}
	}
	if branches < 2 {
		return
	}
	outcome := observe.OutcomeRolledBack
	switch {
	case errors.Is(err, ErrTxInDoubt):
		outcome = observe.OutcomeInDoubt
	case err == nil && op == "commit":
		outcome = observe.OutcomeCommitted
	}
	defer containPanic(t.c.cn.opts.logger, "TwoPhase")
	o.TwoPhase(t.ctx, observe.TwoPhase{Component: component, Outcome: outcome, Branches: branches, Duration: time.Since(began)})
}
