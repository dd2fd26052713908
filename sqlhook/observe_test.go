package sqlhook_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// recorder is an observe.Observer that records every event in order.
// Each StatementStart puts the statement's number in its context and
// each TargetStart the target's; a target whose context does not carry
// a started statement's number, or a TargetEnd or StatementEnd with
// another context than the one its start returned, is an error of the
// test.
type recorder struct {
	t      testing.TB
	mu     sync.Mutex
	events []event
	next   int
	open   map[int]bool // statements started, not ended
}

// event is one call of an Observer method.
type event struct {
	kind    string // plan, refused, start, end, target_start, target_end, two_phase
	stmt    int    // the statement's number (start, end, target events)
	hit     bool
	refusal observe.Refusal
	s       observe.Statement
	end     observe.StatementEnd
	target  observe.Target
	err     error
	tp      observe.TwoPhase
}

type stmtKey struct{}
type targetKey struct{}

func newRecorder(t testing.TB) *recorder { return &recorder{t: t, open: map[int]bool{}} }

func (r *recorder) add(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// take returns the events recorded since the last take.
func (r *recorder) take() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

func (r *recorder) StatementStart(ctx context.Context, s observe.Statement) context.Context {
	r.mu.Lock()
	r.next++
	n := r.next
	r.open[n] = true
	r.mu.Unlock()
	r.add(event{kind: "start", stmt: n, s: s})
	return context.WithValue(ctx, stmtKey{}, n)
}

func (r *recorder) StatementEnd(ctx context.Context, s observe.Statement, end observe.StatementEnd) {
	n, _ := ctx.Value(stmtKey{}).(int)
	r.mu.Lock()
	if !r.open[n] || ctx.Value(targetKey{}) != nil {
		r.t.Errorf("StatementEnd with the context of statement %d, not the one its StatementStart returned", n)
	}
	delete(r.open, n)
	r.mu.Unlock()
	r.add(event{kind: "end", stmt: n, s: s, end: end})
}

func (r *recorder) TargetStart(ctx context.Context, t observe.Target) context.Context {
	n, _ := ctx.Value(stmtKey{}).(int)
	r.mu.Lock()
	if !r.open[n] {
		r.t.Errorf("TargetStart %v outside a started statement's context", t)
	}
	r.mu.Unlock()
	r.add(event{kind: "target_start", stmt: n, target: t})
	return context.WithValue(ctx, targetKey{}, t.DataSource+"."+strings.Join(t.Tables, ","))
}

func (r *recorder) TargetEnd(ctx context.Context, t observe.Target, err error) {
	n, _ := ctx.Value(stmtKey{}).(int)
	if got := ctx.Value(targetKey{}); got != t.DataSource+"."+strings.Join(t.Tables, ",") {
		r.t.Errorf("TargetEnd %v with the context of target %v", t, got)
	}
	r.add(event{kind: "target_end", stmt: n, target: t, err: err})
}

func (r *recorder) Refused(_ context.Context, f observe.Refusal) {
	r.add(event{kind: "refused", refusal: f})
}

func (r *recorder) PlanCache(_ context.Context, hit bool) { r.add(event{kind: "plan", hit: hit}) }

func (r *recorder) TwoPhase(_ context.Context, tp observe.TwoPhase) {
	r.add(event{kind: "two_phase", tp: tp})
}

func kinds(es []event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.kind
	}
	return out
}

// oneStatement checks that es is one routed statement's sequence: a plan
// cache lookup (hit as given), StatementStart, TargetStart and TargetEnd
// for each target (failed when the statement failed), StatementEnd; and
// returns its start and end events and its targets.
func oneStatement(t *testing.T, what string, es []event, hit bool) (start, end event, targets []observe.Target) {
	t.Helper()
	want := []string{"plan", "start"}
	for range max(len(es)-3, 0) / 2 {
		want = append(want, "target_start", "target_end")
	}
	want = append(want, "end")
	if got := kinds(es); !slices.Equal(got, want) {
		t.Fatalf("%s: events %v, want %v", what, got, want)
	}
	if es[0].hit != hit {
		t.Errorf("%s: plan cache hit %v, want %v", what, es[0].hit, hit)
	}
	start, end = es[1], es[len(es)-1]
	for i := 2; i < len(es)-1; i += 2 {
		if es[i].target.DataSource != es[i+1].target.DataSource || es[i].stmt != start.stmt || (es[i+1].err == nil) != (end.end.Err == nil) {
			t.Errorf("%s: target events %+v, %+v", what, es[i], es[i+1])
		}
		targets = append(targets, es[i].target)
	}
	if end.stmt != start.stmt || end.s.Fanout != start.s.Fanout {
		t.Errorf("%s: StatementEnd %+v does not end StatementStart %+v", what, end, start)
	}
	if end.end.Duration <= 0 {
		t.Errorf("%s: duration %v", what, end.end.Duration)
	}
	return start, end, targets
}

func wantStatement(t *testing.T, what string, s observe.Statement, system, op string, tables []string, targets, sources int, f observe.Fanout) {
	t.Helper()
	want := observe.Statement{Component: "sqlhook", System: system, Operation: op, Tables: tables, Targets: targets, Sources: sources, Fanout: f}
	if s.Component != want.Component || s.System != system || s.Operation != op || !slices.Equal(s.Tables, tables) || s.Targets != targets || s.Sources != sources || s.Fanout != f {
		t.Errorf("%s: statement %+v, want %+v", what, s, want)
	}
}

// targetNames spells targets as data_source.table, space-separated,
// checking that each names the system.
func targetNames(t *testing.T, system string, targets []observe.Target) string {
	t.Helper()
	var out []string
	for _, x := range targets {
		if x.System != system {
			t.Errorf("target %+v: system %q, want %q", x, x.System, system)
		}
		out = append(out, x.DataSource+"."+strings.Join(x.Tables, ","))
	}
	return strings.Join(out, " ")
}

// readIDs runs a query through db and returns the first column of its
// rows, as read by the caller.
func readIDs(t *testing.T, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	return out
}

// Against each database: every routed statement is one event sequence,
// whose fan-out says whether it reached one target, some or all the data
// nodes of its table; a merged query reports the rows the caller read; a
// statement's second run finds its plan in the cache; passed-through
// statements report only their plan lookup.
func TestObserverReportsEachRoutedStatementWithItsFanout(t *testing.T) {
	for _, b := range observeBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			system := map[string]string{"pgx": "postgresql", "mysql": "mysql", "sqlite": "sqlite"}[b.driver]
			rec := newRecorder(t)
			db, err := sqlhook.Open(b.config(t), sqlhook.WithScatter(), sqlhook.WithObserver(rec))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()

			ddl := `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(64), amount INT)`
			if _, err := db.ExecContext(ctx, ddl); err != nil {
				t.Fatal(err)
			}
			start, _, targets := oneStatement(t, "DDL", rec.take(), false)
			wantStatement(t, "DDL", start.s, system, "other", []string{"t_order"}, 4, 2, observe.FanoutAll)
			if got := targetNames(t, system, targets); got != "ds_0.t_order_0 ds_0.t_order_1 ds_1.t_order_0 ds_1.t_order_1" {
				t.Errorf("DDL targets %s", got)
			}

			insert := b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'new')`)
			var want []int64
			for i := range int64(12) {
				id, user := 100+i, i%3
				if _, err := db.ExecContext(ctx, insert, id, user); err != nil {
					t.Fatal(err)
				}
				if user == 1 {
					want = append(want, id)
				}
				start, end, targets := oneStatement(t, "INSERT", rec.take(), i > 0)
				wantStatement(t, "INSERT", start.s, system, "insert", []string{"t_order"}, 1, 1, observe.FanoutOne)
				phys := fmt.Sprintf("ds_%d.t_order_%d", user%2, id%2)
				if got := targetNames(t, system, targets); got != phys || end.end.Err != nil || end.end.Merged {
					t.Errorf("INSERT %d of user %d: targets %s, end %+v", id, user, got, end.end)
				}
			}

			// One data source's two tables: some of t_order's data nodes.
			got := readIDs(t, db, b.q(`SELECT order_id FROM t_order WHERE user_id = ? ORDER BY order_id`), 1)
			if !slices.Equal(got, want) {
				t.Fatalf("user 1's orders %v, want %v", got, want)
			}
			start, end, targets := oneStatement(t, "SELECT of one user", rec.take(), false)
			wantStatement(t, "SELECT of one user", start.s, system, "select", []string{"t_order"}, 2, 1, observe.FanoutSome)
			if targetNames(t, system, targets) != "ds_1.t_order_0 ds_1.t_order_1" {
				t.Errorf("SELECT of one user: targets %v", targets)
			}
			if !end.end.Merged || end.end.Rows != int64(len(got)) || end.end.Err != nil {
				t.Errorf("SELECT of one user: end %+v, want %d merged rows", end.end, len(got))
			}

			// Every data node; the caller stops reading after 5 rows.
			rows, err := db.QueryContext(ctx, `SELECT order_id FROM t_order ORDER BY order_id`)
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if !rows.Next() {
					t.Fatal("fewer than 5 rows")
				}
			}
			if es := rec.take(); slices.Contains(kinds(es), "end") {
				t.Errorf("StatementEnd before the rows were closed: %v", kinds(es))
			} else {
				rows.Close()
				start, end, _ := oneStatement(t, "scatter SELECT", append(es, rec.take()...), false)
				wantStatement(t, "scatter SELECT", start.s, system, "select", []string{"t_order"}, 4, 2, observe.FanoutAll)
				if !end.end.Merged || end.end.Rows != 5 {
					t.Errorf("scatter SELECT: end %+v, want the 5 merged rows read", end.end)
				}
			}

			// The same statement again: its plan is in the cache.
			_ = readIDs(t, db, `SELECT order_id FROM t_order ORDER BY order_id`)
			start, end, _ = oneStatement(t, "scatter SELECT again", rec.take(), true)
			if start.s.Fanout != observe.FanoutAll || end.end.Rows != 12 {
				t.Errorf("scatter SELECT again: %+v, %+v", start.s, end.end)
			}

			// A point SELECT: one target, not merged.
			got = readIDs(t, db, b.q(`SELECT order_id FROM t_order WHERE user_id = ? AND order_id = ?`), 1, want[0])
			start, end, _ = oneStatement(t, "point SELECT", rec.take(), false)
			wantStatement(t, "point SELECT", start.s, system, "select", []string{"t_order"}, 1, 1, observe.FanoutOne)
			if len(got) != 1 || end.end.Merged || end.end.Rows != 0 {
				t.Errorf("point SELECT: %v, end %+v", got, end.end)
			}

			// A prepared UPDATE of one user's two tables, run twice.
			st, err := db.PrepareContext(ctx, b.q(`UPDATE t_order SET status = 'paid' WHERE user_id = ?`))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if es := rec.take(); !slices.Equal(kinds(es), []string{"plan"}) {
				t.Errorf("Prepare: events %v, want one plan lookup", kinds(es))
			}
			for range 2 {
				if _, err := st.ExecContext(ctx, 2); err != nil {
					t.Fatal(err)
				}
				start, end, _ := oneStatement(t, "prepared UPDATE", rec.take(), true)
				wantStatement(t, "prepared UPDATE", start.s, system, "update", []string{"t_order"}, 2, 1, observe.FanoutSome)
				if end.end.Err != nil || end.end.Merged {
					t.Errorf("prepared UPDATE: end %+v", end.end)
				}
			}

			// Passed through: a plan lookup, nothing else.
			if _, err := db.ExecContext(ctx, `SELECT 1`); err != nil {
				t.Fatal(err)
			}
			if es := rec.take(); !slices.Equal(kinds(es), []string{"plan"}) {
				t.Errorf("SELECT 1: events %v, want one plan lookup", kinds(es))
			}

			// A statement the server fails is no refusal.
			_, err = db.ExecContext(ctx, insert, 100, 0)
			if err == nil {
				t.Fatal("a duplicate key was inserted")
			}
			_, end, _ = oneStatement(t, "duplicate INSERT", rec.take(), true)
			if end.end.Err == nil {
				t.Errorf("duplicate INSERT: StatementEnd without its error")
			}
		})
	}
}

// observeBackends are the e2e backends (two_sources.yaml's t_order over
// ds_0 and ds_1, two tables each) on fresh databases of their own.
func observeBackends(t *testing.T) []backend {
	bs := backends(t)
	for i := range bs {
		if bs[i].driver == "sqlite" {
			dir := t.TempDir()
			bs[i].dsn = [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}
		}
	}
	return bs
}

// Refusals, on SQLite (nothing reaches a database, whichever it is): each
// is reported once, with its reason, and no StatementStart or target.
func TestObserverReportsARefusalOnceWithItsReason(t *testing.T) {
	dir := t.TempDir()
	b := backend{name: "sqlite", driver: "sqlite", dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}}
	rec := newRecorder(t)
	db, err := sqlhook.Open(b.config(t), sqlhook.WithObserver(rec))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tp, err := sqlhook.Open(b.config(t), sqlhook.WithObserver(rec), sqlhook.WithTwoPhaseCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(64))`); err != nil {
		t.Fatal(err)
	}
	rec.take()

	// across runs a statement in a transaction that has reached ds_0
	// (user 2) through db.
	across := func(db *sql.DB) func() error {
		return func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, `INSERT INTO t_order (order_id, user_id) VALUES (1, 2)`); err != nil {
				return err
			}
			rec.take() // the first statement's events
			_, err = tx.ExecContext(ctx, `INSERT INTO t_order (order_id, user_id) VALUES (2, 1)`)
			return err
		}
	}
	hinted := shardconf.WithHint(ctx, "t_order", shardconf.Hint{Database: []any{0}})
	for _, c := range []struct {
		name   string
		run    func() error
		reason observe.Reason
	}{
		{"no sharding key", func() error {
			_, err := db.ExecContext(ctx, `UPDATE t_order SET status = 'x' WHERE status = 'y'`)
			return err
		}, observe.ReasonMissingShardingKey},
		{"parse", func() error {
			_, err := db.ExecContext(ctx, `SELEC * FROM t_order`)
			return err
		}, observe.ReasonParse},
		{"parse at Prepare", func() error {
			_, err := db.PrepareContext(ctx, `SELEC * FROM t_order WHERE user_id = 1`)
			return err
		}, observe.ReasonParse},
		{"sharding key change", func() error {
			_, err := db.ExecContext(ctx, `UPDATE t_order SET user_id = 1 WHERE user_id = 2 AND order_id = 1`)
			return err
		}, observe.ReasonShardingKeyChange},
		{"unsupported", func() error {
			_, err := db.QueryContext(ctx, `SELECT order_id FROM t_order WHERE user_id = 1 AND order_id IN (SELECT order_id FROM t_order WHERE user_id = 2)`)
			return err
		}, observe.ReasonUnsupported},
		{"hint for a table routed by columns", func() error {
			_, err := db.QueryContext(hinted, `SELECT order_id FROM t_order WHERE user_id = 1`)
			return err
		}, observe.ReasonHint},
		{"hint beside a physical table", func() error {
			_, err := db.QueryContext(hinted, `SELECT order_id FROM t_order_0`)
			return err
		}, observe.ReasonHint},
		{"transaction across data sources", across(db), observe.ReasonCrossSource},
		{"two-phase commit on SQLite", across(tp), observe.ReasonTwoPhaseUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if err == nil {
				t.Fatal("not refused")
			}
			var refusals []observe.Refusal
			for _, e := range rec.take() {
				switch e.kind {
				case "refused":
					refusals = append(refusals, e.refusal)
				case "plan":
				default:
					t.Errorf("event %s for a refused statement", e.kind)
				}
			}
			if len(refusals) != 1 {
				t.Fatalf("%d refusals reported for %v, want 1", len(refusals), err)
			}
			if f := refusals[0]; f.Reason != c.reason || f.Component != "sqlhook" || !errors.Is(err, f.Err) {
				t.Errorf("refusal %+v for %v, want reason %s", f, err, c.reason)
			}
		})
	}
}

// The context a target's TargetStart returns is the one its physical
// statement runs under: a tracer's driver-level spans nest under the
// target's, which nests under the statement's.
func TestObserverTargetContextReachesTheDriver(t *testing.T) {
	cfg, err := shardconf.Parse([]byte(benchRules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := &ctxSeen{}
	rec := newRecorder(t)
	db, err := sqlhook.OpenWith(r, map[string]driver.Connector{"ds_0": seen.connector(), "ds_1": seen.connector()},
		sqlhook.WithDialect(sqlhook.MySQL), sqlhook.WithScatter(), sqlhook.WithObserver(rec))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT order_id, user_id FROM t_order`)
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if _, err := db.Exec(`UPDATE t_order SET status = 'x' WHERE user_id = 1`); err != nil {
		t.Fatal(err)
	}
	want := []string{"ds_0.t_order_0", "ds_0.t_order_1", "ds_1.t_order_0", "ds_1.t_order_1", "ds_1.t_order_0", "ds_1.t_order_1"}
	if got := seen.all(); !slices.Equal(got, want) {
		t.Errorf("the driver saw target contexts %v, want %v", got, want)
	}
}

// Under WithTwoPhaseCommit on PostgreSQL and MariaDB: the end of each
// read-write transaction across both data sources is reported with its
// outcome, and so is a write across them outside a transaction; a
// transaction on one data source reports none.
func TestObserverReportsTwoPhaseOutcomes(t *testing.T) {
	for _, b := range tpBackends(t, "observe") {
		t.Run(b.name, func(t *testing.T) {
			rec := newRecorder(t)
			st := &stages{}
			db := tpOpen(t, b, sqlhook.WithObserver(rec), sqlhook.WithTwoPhaseHook(st.hook),
				sqlhook.WithTwoPhaseRecovery(time.Second, 100*time.Millisecond))
			twoPhases := func(es []event) []observe.TwoPhase {
				var out []observe.TwoPhase
				for _, e := range es {
					if e.kind == "two_phase" {
						out = append(out, e.tp)
					}
				}
				return out
			}
			wantIn := func(what string, es []event, outcome observe.Outcome) {
				t.Helper()
				got := twoPhases(es)
				if len(got) != 1 || got[0].Outcome != outcome || got[0].Branches != 2 || got[0].Component != "sqlhook" || got[0].Duration <= 0 {
					t.Errorf("%s: TwoPhase reports %+v, want one %s of 2 branches", what, got, outcome)
				}
			}
			want := func(what string, outcome observe.Outcome) { t.Helper(); wantIn(what, rec.take(), outcome) }
			failAt := func(s xa.Stage) { st.mu.Lock(); st.failAt = s; st.mu.Unlock() }
			both := func(ids [2]int64) *sql.Tx {
				tx, err := db.Begin()
				if err != nil {
					t.Fatal(err)
				}
				b.insertOrder(t, tx, ids[0], 2) // ds_0
				b.insertOrder(t, tx, ids[1], 1) // ds_1
				return tx
			}

			if err := both([2]int64{1, 2}).Commit(); err != nil {
				t.Fatal(err)
			}
			want("commit", observe.OutcomeCommitted)
			if err := both([2]int64{3, 4}).Rollback(); err != nil {
				t.Fatal(err)
			}
			want("rollback", observe.OutcomeRolledBack)

			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 5, 2)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := twoPhases(rec.take()); len(got) != 0 {
				t.Errorf("a transaction on one data source reported %+v", got)
			}

			insert := b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'new'), (?, ?, 'new')`)
			if _, err := db.Exec(insert, 6, 1, 7, 2); err != nil {
				t.Fatal(err)
			}
			es := rec.take()
			if got := kinds(es); !slices.Contains(got, "two_phase") || got[len(got)-1] != "end" {
				t.Errorf("a write across data sources outside a transaction: events %v, want a TwoPhase before its StatementEnd", got)
			}
			wantIn("write outside a transaction", es, observe.OutcomeCommitted)

			failAt(xa.StagePrepared)
			if err := both([2]int64{8, 9}).Commit(); err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Fatalf("commit failing before the decision: %v", err)
			}
			want("commit failing before the decision", observe.OutcomeRolledBack)

			failAt(xa.StageDecided)
			if err := both([2]int64{10, 11}).Commit(); !errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Fatalf("commit failing after the decision: %v, want ErrTxInDoubt", err)
			}
			want("commit failing after the decision", observe.OutcomeInDoubt)
			// Recovery commits it (tpOpen's cleanup wants no branch left).
			deadline := time.Now().Add(20 * time.Second)
			for !(slices.Contains(b.orders(t, 0), 10) && slices.Contains(b.orders(t, 1), 11)) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// ctxSeen makes conns that answer at once, as benchConnector's, and
// record the target each physical statement's context carries.
type ctxSeen struct {
	mu      sync.Mutex
	targets []string
}

func (c *ctxSeen) connector() driver.Connector { return ctxSeenConnector{c} }

func (c *ctxSeen) see(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, _ := ctx.Value(targetKey{}).(string)
	c.targets = append(c.targets, v)
}

func (c *ctxSeen) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.targets)
}

type ctxSeenConnector struct{ c *ctxSeen }

func (s ctxSeenConnector) Connect(context.Context) (driver.Conn, error) { return ctxSeenConn(s), nil }
func (ctxSeenConnector) Driver() driver.Driver                          { return benchDriver{} }

type ctxSeenConn struct{ c *ctxSeen }

func (ctxSeenConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("ctxSeen: no Prepare")
}
func (ctxSeenConn) Close() error              { return nil }
func (ctxSeenConn) Begin() (driver.Tx, error) { return nil, errors.New("ctxSeen: no transactions") }
func (s ctxSeenConn) ExecContext(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Result, error) {
	s.c.see(ctx)
	return driver.RowsAffected(1), nil
}
func (s ctxSeenConn) QueryContext(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Rows, error) {
	s.c.see(ctx)
	return &benchRowsOf{}, nil
}
