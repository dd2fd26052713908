package gormplugin_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
)

// WithObserver on sharded_orders in two databases (dbRules: user_id picks
// the data source, id the table; four data nodes), on SQLite, PostgreSQL
// and MariaDB: every routed statement is one StatementStart and one
// StatementEnd with its fan-out, its physical statements nest under it,
// a merge reports the rows it returned, a refusal is reported once and
// alone, and a transaction over both data sources reports its outcome.

// recorder is an Observer keeping every event, in order. Statement and
// target contexts carry ids, so that nesting can be checked.
type recorder struct {
	mu     sync.Mutex
	events []obsEvent
	ids    atomic.Int64
}

type obsEvent struct {
	kind    string // start, end, target_start, target_end, refused, two_phase, plan_cache
	id      int64  // the statement's (start, end) or the target's (target_*)
	parent  int64  // target_*: the statement id in its context
	stmt    observe.Statement
	end     observe.StatementEnd
	target  observe.Target
	err     error
	refusal observe.Refusal
	tp      observe.TwoPhase
}

type (
	stmtIDKey   struct{}
	targetIDKey struct{}
)

func idIn(ctx context.Context, k any) int64 {
	id, _ := ctx.Value(k).(int64)
	return id
}

func (r *recorder) add(e obsEvent) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) StatementStart(ctx context.Context, s observe.Statement) context.Context {
	id := r.ids.Add(1)
	r.add(obsEvent{kind: "start", id: id, stmt: s})
	return context.WithValue(ctx, stmtIDKey{}, id)
}

func (r *recorder) StatementEnd(ctx context.Context, s observe.Statement, end observe.StatementEnd) {
	r.add(obsEvent{kind: "end", id: idIn(ctx, stmtIDKey{}), stmt: s, end: end})
}

func (r *recorder) TargetStart(ctx context.Context, t observe.Target) context.Context {
	id := r.ids.Add(1)
	r.add(obsEvent{kind: "target_start", id: id, parent: idIn(ctx, stmtIDKey{}), target: t})
	return context.WithValue(ctx, targetIDKey{}, id)
}

func (r *recorder) TargetEnd(ctx context.Context, t observe.Target, err error) {
	r.add(obsEvent{kind: "target_end", id: idIn(ctx, targetIDKey{}), parent: idIn(ctx, stmtIDKey{}), target: t, err: err})
}

func (r *recorder) Refused(_ context.Context, x observe.Refusal) {
	r.add(obsEvent{kind: "refused", refusal: x})
}

func (r *recorder) PlanCache(context.Context, bool) { r.add(obsEvent{kind: "plan_cache"}) }

func (r *recorder) TwoPhase(_ context.Context, x observe.TwoPhase) {
	r.add(obsEvent{kind: "two_phase", tp: x})
}

// take returns the events so far and forgets them.
func (r *recorder) take() []obsEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// peek returns the events so far.
func (r *recorder) peek() []obsEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// observed is one statement's events, checked well formed.
type observed struct {
	stmt    observe.Statement
	end     observe.StatementEnd
	targets []observe.Target
}

// statements checks that events are whole statements — one start, its
// targets (each started and ended in the statement's context, as many
// as Statement.Targets says), one end — and returns them; other events
// (refusals, two-phase outcomes) fail the test.
func statements(t *testing.T, events []obsEvent) []observed {
	t.Helper()
	var out []observed
	open := map[int64]int{}         // statement id -> index in out
	targetOpen := map[int64]int64{} // target id -> its statement's, started and not ended
	for _, e := range events {
		switch e.kind {
		case "start":
			open[e.id] = len(out)
			out = append(out, observed{stmt: e.stmt})
		case "target_start":
			i, ok := open[e.parent]
			if !ok {
				t.Fatalf("TargetStart %+v outside a started statement's context (parent %d)", e.target, e.parent)
			}
			out[i].targets = append(out[i].targets, e.target)
			targetOpen[e.id] = e.parent
		case "target_end":
			if _, ok := open[e.parent]; !ok || targetOpen[e.id] != e.parent {
				t.Fatalf("TargetEnd %+v without its TargetStart in the statement's context", e.target)
			}
			delete(targetOpen, e.id)
		case "end":
			i, ok := open[e.id]
			if !ok {
				t.Fatalf("StatementEnd %+v without its StatementStart's context", e.stmt)
			}
			for _, parent := range targetOpen {
				if parent == e.id {
					t.Fatalf("StatementEnd of %+v with a target not ended", e.stmt)
				}
			}
			if !equalStatement(e.stmt, out[i].stmt) {
				t.Fatalf("StatementEnd's statement %+v, StatementStart's %+v", e.stmt, out[i].stmt)
			}
			out[i].end = e.end
			delete(open, e.id)
			if got := len(out[i].targets); got != e.stmt.Targets {
				t.Fatalf("statement %+v reported %d targets, ran %d", e.stmt, e.stmt.Targets, got)
			}
		default:
			t.Fatalf("unexpected %s event: %+v", e.kind, e)
		}
	}
	if len(open) > 0 {
		t.Fatalf("statements started and never ended: %v", open)
	}
	return out
}

func equalStatement(a, b observe.Statement) bool {
	return a.Component == b.Component && a.Operation == b.Operation && slices.Equal(a.Tables, b.Tables) &&
		a.Targets == b.Targets && a.Sources == b.Sources && a.Fanout == b.Fanout
}

// oneStatement checks that events are exactly one statement, and returns it.
func oneStatement(t *testing.T, what string, events []obsEvent) observed {
	t.Helper()
	ss := statements(t, events)
	if len(ss) != 1 {
		t.Fatalf("%s: %d statements reported, want 1: %+v", what, len(ss), ss)
	}
	return ss[0]
}

// want checks a statement's description.
func (o observed) want(t *testing.T, what, op string, targets, sources int, f observe.Fanout) {
	t.Helper()
	s := o.stmt
	if s.Component != "gormplugin" || s.Operation != op || !slices.Equal(s.Tables, []string{"sharded_orders"}) ||
		s.Targets != targets || s.Sources != sources || s.Fanout != f {
		t.Fatalf("%s: statement %+v (fan-out %s), want %s on sharded_orders, %d targets, %d sources, fan-out %s", what, s, s.Fanout, op, targets, sources, f)
	}
	if o.end.Duration <= 0 {
		t.Fatalf("%s: duration %v", what, o.end.Duration)
	}
	for _, tg := range o.targets {
		if len(tg.Tables) != 1 || !strings.HasPrefix(tg.Tables[0], "sharded_orders_") || (tg.DataSource != "ds_0" && tg.DataSource != "ds_1") {
			t.Fatalf("%s: target %+v", what, tg)
		}
	}
}

// refusedAlone checks that events are one refusal with reason, of err.
func refusedAlone(t *testing.T, what string, events []obsEvent, err error, reason observe.Reason) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: not refused", what)
	}
	if len(events) != 1 || events[0].kind != "refused" {
		t.Fatalf("%s (%v): events %+v, want one refusal and nothing else", what, err, events)
	}
	r := events[0].refusal
	if r.Component != "gormplugin" || r.Reason != reason || r.Err == nil || !errors.Is(err, r.Err) {
		t.Fatalf("%s: refusal %+v, want reason %s for the error returned (%v)", what, r, reason, err)
	}
}

func observedTwoDS(t *testing.T, be, name string, opts ...gormplugin.Option) (*twoDS, *recorder) {
	t.Helper()
	rec := &recorder{}
	e := openTwoDS(t, be, name, dbRules, nil, []any{&ShardedOrder{}}, append(opts, gormplugin.WithObserver(rec))...)
	rec.take()
	return e, rec
}

func TestObserverSeesOneStartAndEndPerRoutedStatementWithItsFanout(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e, rec := observedTwoDS(t, be, "obs_fanout_"+be)
			db := e.db

			o := ShardedOrder{UserID: 0, Amount: 1}
			if err := db.Create(&o).Error; err != nil {
				t.Fatal(err)
			}
			s := oneStatement(t, "Create of one row", rec.take())
			s.want(t, "Create of one row", "insert", 1, 1, observe.FanoutOne)
			// The system as OpenTelemetry names it (MariaDB speaks through GORM's mysql dialector).
			system := map[string]string{"sqlite": "sqlite", "postgres": "postgresql", "mariadb": "mysql"}[be]
			if s.stmt.System != system || s.targets[0].System != system {
				t.Fatalf("Create reported system %q, target system %q; want %q", s.stmt.System, s.targets[0].System, system)
			}
			if at := e.targetOf(t, 0, o.ID); s.targets[0].DataSource != at.DataSource || s.targets[0].Tables[0] != at.Table {
				t.Fatalf("Create reported target %+v, the row is in %s", s.targets[0], at)
			}

			batch := make([]ShardedOrder, 8) // users 0 and 2: ds_0, both tables (ids alternate by chance)
			for i := range batch {
				batch[i] = ShardedOrder{UserID: int64(i%2) * 2, Amount: 2}
			}
			if err := db.Create(&batch).Error; err != nil {
				t.Fatal(err)
			}
			tables := map[shardconf.Target]bool{}
			for _, r := range batch {
				tables[e.targetOf(t, r.UserID, r.ID)] = true
			}
			fan := observe.FanoutSome
			if len(tables) == 1 {
				fan = observe.FanoutOne
			}
			oneStatement(t, "Create of a batch", rec.take()).want(t, "Create of a batch", "insert", len(tables), 1, fan)

			var got ShardedOrder
			if err := db.Where("user_id = ? AND id = ?", 0, o.ID).First(&got).Error; err != nil {
				t.Fatal(err)
			}
			s = oneStatement(t, "First by key", rec.take())
			s.want(t, "First by key", "select", 1, 1, observe.FanoutOne)
			if s.end.Merged || s.end.Rows != 0 || s.end.Err != nil {
				t.Fatalf("First of one table: end %+v, want not merged", s.end)
			}

			// Keys of both parities: both tables of a data source.
			ids := []int64{o.ID, o.ID + 1}
			for _, r := range batch {
				ids = append(ids, r.ID)
			}
			var ds0 []ShardedOrder
			if err := db.Where("user_id = ? AND id IN ?", 0, ids).Order("id").Find(&ds0).Error; err != nil {
				t.Fatal(err)
			}
			s = oneStatement(t, "Find in one data source", rec.take())
			s.want(t, "Find in one data source", "select", 2, 1, observe.FanoutSome)
			if !s.end.Merged || s.end.Rows != int64(len(ds0)) || len(ds0) != 5 {
				t.Fatalf("Find over ds_0's tables: end %+v, %d rows returned (want 5)", s.end, len(ds0))
			}

			if err := db.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 0, o.ID).Update("amount", 3).Error; err != nil {
				t.Fatal(err)
			}
			oneStatement(t, "Update by key", rec.take()).want(t, "Update by key", "update", 1, 1, observe.FanoutOne)

			if err := db.Model(&ShardedOrder{}).Where("user_id = ? AND id IN ?", 2, ids).Update("amount", 4).Error; err != nil {
				t.Fatal(err)
			}
			oneStatement(t, "Update of a user", rec.take()).want(t, "Update of a user", "update", 2, 1, observe.FanoutSome)

			if err := db.Where("user_id = ? AND id = ?", 0, o.ID).Delete(&ShardedOrder{}).Error; err != nil {
				t.Fatal(err)
			}
			oneStatement(t, "Delete by key", rec.take()).want(t, "Delete by key", "delete", 1, 1, observe.FanoutOne)

			o1 := ShardedOrder{UserID: 1, Amount: 5}
			if err := db.Create(&o1).Error; err != nil {
				t.Fatal(err)
			}
			rec.take()
			var all []ShardedOrder
			if err := db.Where("user_id IN ? AND id IN ?", []int64{0, 1}, append(ids, o1.ID)).Find(&all).Error; err != nil {
				t.Fatal(err)
			}
			s = oneStatement(t, "Find over both data sources", rec.take())
			s.want(t, "Find over both data sources", "select", 4, 2, observe.FanoutAll)
			if !s.end.Merged || s.end.Rows != int64(len(all)) || len(all) != 5 {
				t.Fatalf("Find over every table: end %+v, %d rows returned (want 5)", s.end, len(all))
			}
		})
	}
}

func TestObserverMergedRowCountIsTheRowsReturned(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e, rec := observedTwoDS(t, be, "obs_rows_"+be, gormplugin.WithScatter())
			db := e.db
			rows := make([]ShardedOrder, 20)
			for i := range rows {
				rows[i] = ShardedOrder{UserID: int64(i % 4), Amount: i}
			}
			for u := range 4 { // one data source per Create: no two-phase commit here
				var part []ShardedOrder
				for _, r := range rows {
					if r.UserID%2 == int64(u%2) && r.UserID/2 == int64(u/2) {
						part = append(part, r)
					}
				}
				if err := db.Create(&part).Error; err != nil {
					t.Fatal(err)
				}
			}
			rec.take()

			for _, c := range []struct {
				what string
				read func() (int, error)
			}{
				{"Find", func() (int, error) {
					var out []ShardedOrder
					err := db.Find(&out).Error
					return len(out), err
				}},
				{"Find with Limit", func() (int, error) {
					var out []ShardedOrder
					err := db.Order("amount desc").Limit(7).Find(&out).Error
					return len(out), err
				}},
				{"Find matching nothing", func() (int, error) {
					var out []ShardedOrder
					err := db.Where("amount > ?", 1000).Find(&out).Error
					return len(out), err
				}},
				{"Count", func() (int, error) {
					var n int64
					err := db.Model(&ShardedOrder{}).Count(&n).Error
					if n != 20 {
						return 0, fmt.Errorf("count %d", n)
					}
					return 1, err
				}},
				{"Group", func() (int, error) {
					var out []struct {
						UserID int64
						N      int64
					}
					err := db.Model(&ShardedOrder{}).Select("user_id, count(*) as n").Group("user_id").Find(&out).Error
					return len(out), err
				}},
				{"Rows", func() (int, error) {
					rs, err := db.Model(&ShardedOrder{}).Where("amount < ?", 9).Rows()
					if err != nil {
						return 0, err
					}
					n := 0
					for rs.Next() {
						n++
					}
					if err := rs.Err(); err != nil {
						return n, err
					}
					return n, rs.Close()
				}},
				{"Row", func() (int, error) {
					var id int64
					err := db.Model(&ShardedOrder{}).Select("id").Order("id").Row().Scan(&id)
					return 1, err
				}},
			} {
				n, err := c.read()
				if err != nil {
					t.Fatalf("%s: %v", c.what, err)
				}
				s := oneStatement(t, c.what, rec.take())
				s.want(t, c.what, "select", 4, 2, observe.FanoutAll)
				if !s.end.Merged || s.end.Rows != int64(n) || s.end.Err != nil {
					t.Fatalf("%s returned %d rows; end reported %+v", c.what, n, s.end)
				}
			}
		})
	}
}

func TestObserverRowsEndWhenTheCallerClosesThem(t *testing.T) {
	e, rec := observedTwoDS(t, "sqlite", "obs_rowsclose", gormplugin.WithScatter())
	for u := range int64(2) {
		if err := e.db.Create(&[]ShardedOrder{{UserID: u}, {UserID: u}, {UserID: u}}).Error; err != nil {
			t.Fatal(err)
		}
	}
	rec.take()
	rs, err := e.db.Model(&ShardedOrder{}).Rows()
	if err != nil {
		t.Fatal(err)
	}
	rs.Next()
	rs.Next()
	if ev := rec.peek(); len(ev) == 0 || ev[len(ev)-1].kind == "end" {
		t.Fatalf("statement ended while its rows were open: %+v", ev)
	}
	if err := rs.Close(); err != nil {
		t.Fatal(err)
	}
	s := oneStatement(t, "Rows read in part", rec.take())
	if s.end.Rows != 2 || !s.end.Merged {
		t.Fatalf("two rows read of six, then closed: end %+v, want Rows 2", s.end)
	}
}

func TestObserverReportsARefusalOnceWithItsReasonAndNothingElse(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e, rec := observedTwoDS(t, be, "obs_refused_"+be)
			db := e.db
			o := ShardedOrder{UserID: 0, Amount: 1}
			if err := db.Create(&o).Error; err != nil {
				t.Fatal(err)
			}
			rec.take()

			var out []ShardedOrder
			err := db.Where("amount = ?", 1).Find(&out).Error
			refusedAlone(t, "Find without the sharding key", rec.take(), err, observe.ReasonMissingShardingKey)
			if !errors.Is(err, shardconf.ErrMissingShardingKey) {
				t.Fatal(err)
			}

			err = db.Exec("UPDATE sharded_orders SET amount = 2").Error
			refusedAlone(t, "raw SQL on a sharded table", rec.take(), err, observe.ReasonUnsupported)

			err = db.Create(&[]ShardedOrder{{UserID: 0}, {UserID: 1}}).Error
			refusedAlone(t, "a batch over two data sources", rec.take(), err, observe.ReasonCrossSource)

			err = db.Where("user_id IN ? AND id = ?", []int64{0, 1}, o.ID).Delete(&ShardedOrder{}).Error
			refusedAlone(t, "a Delete over two data sources", rec.take(), err, observe.ReasonCrossSource)

			err = db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&ShardedOrder{UserID: 0}).Error; err != nil {
					return err
				}
				rec.take()
				err := tx.Create(&ShardedOrder{UserID: 1}).Error
				refusedAlone(t, "a transaction reaching a second data source", rec.take(), err, observe.ReasonCrossSource)
				return err
			})
			if err == nil {
				t.Fatal("transaction committed")
			}
			rec.take()

			err = db.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 0, o.ID).Update("user_id", 1).Error
			refusedAlone(t, "an Update moving a row", rec.take(), err, observe.ReasonShardingKeyChange)

			// A loaded row whose sharding value changed in memory: the UPDATE
			// runs where the new value routes, matches nothing, and the row
			// is found elsewhere. Not a refusal: the statement ran, and ends
			// with the error.
			err = db.Model(&ShardedOrder{ID: o.ID, UserID: 1}).Update("amount", 6).Error
			s := oneStatement(t, "an Update of a row changed in memory", rec.take())
			if !errors.Is(err, shardconf.ErrShardingKeyChange) || !errors.Is(s.end.Err, shardconf.ErrShardingKeyChange) {
				t.Fatalf("Update of a row changed in memory = %v; its end reported %v", err, s.end.Err)
			}

			both := []int64{o.ID, o.ID + 1} // both tables of ds_0
			err = db.Model(&ShardedOrder{}).Where("user_id = ? AND id IN ?", 0, both).Limit(1).Update("amount", 3).Error
			refusedAlone(t, "an Update with Limit over two tables", rec.take(), err, observe.ReasonUnsupported)

			var n int64
			err = db.Model(&ShardedOrder{}).Where("user_id = ? AND id IN ?", 0, both).Select("count(*) % 2").Scan(&n).Error
			refusedAlone(t, "a read no merge answers", rec.take(), err, observe.ReasonUnsupported)
		})
	}
}

func TestObserverTargetEventsNestUnderTheirStatement(t *testing.T) {
	e, rec := observedTwoDS(t, "sqlite", "obs_nest", gormplugin.WithScatter())
	for i := range 5 {
		for u := range int64(2) {
			if err := e.db.Create(&[]ShardedOrder{{UserID: u, Amount: i}, {UserID: u + 2, Amount: i}}).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 4 { // concurrent statements: each target's context is its own statement's
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				var o ShardedOrder
				if err := e.db.Where("user_id = ?", g%2).Where("amount = ?", i).Order("id").First(&o).Error; err != nil {
					t.Error(err)
					return
				}
				var out []ShardedOrder
				if err := e.db.Where("amount = ?", i).Find(&out).Error; err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Interleaved, but each statement's events are whole: statements
	// checks every target against the statement whose context it got.
	ss := statements(t, rec.take())
	if len(ss) != 10+40 {
		t.Fatalf("%d statements reported, want 50", len(ss))
	}
	for _, s := range ss {
		seen := map[string]bool{}
		for _, tg := range s.targets {
			k := tg.DataSource + "." + tg.Tables[0]
			if seen[k] {
				t.Fatalf("statement %+v ran on %s twice", s.stmt, k)
			}
			seen[k] = true
		}
	}
}

func TestObserverOfTwoPhaseCommitReportsEachOutcome(t *testing.T) {
	var fail atomic.Value // xa.Stage at which the hook fails, 0 for none
	fail.Store(xa.Stage(0))
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == fail.Load().(xa.Stage) {
			return fmt.Errorf("injected failure at %s", s)
		}
		return nil
	})
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			rec := &recorder{}
			e := newTwoPhase(t, be, "observer_"+be, nil, hook, gormplugin.WithObserver(rec), gormplugin.WithTwoPhaseRecovery(time.Second, -1))
			rec.take()
			outcome := func(what string, events []obsEvent, want observe.Outcome) {
				t.Helper()
				var tps []observe.TwoPhase
				var rest []obsEvent
				for _, ev := range events {
					if ev.kind == "two_phase" {
						tps = append(tps, ev.tp)
					} else {
						rest = append(rest, ev)
					}
				}
				if len(tps) != 1 || tps[0].Component != "gormplugin" || tps[0].Outcome != want || tps[0].Branches != 2 || tps[0].Duration <= 0 {
					t.Fatalf("%s: two-phase events %+v, want one %s over 2 data sources", what, tps, want)
				}
				statements(t, rest)
			}

			err := e.db.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 1}}).Error
			if err != nil {
				t.Fatal(err)
			}
			ev := rec.take()
			outcome("a batch over both data sources", ev, observe.OutcomeCommitted)
			var insert observed
			for _, s := range statements(t, slices.DeleteFunc(ev, func(e obsEvent) bool { return e.kind == "two_phase" })) {
				insert = s
			}
			insert.want(t, "the batch", "insert", 2, 2, observe.FanoutSome)

			err = e.db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&ShardedOrder{UserID: 0, Amount: 2}).Error; err != nil {
					return err
				}
				if err := tx.Create(&ShardedOrder{UserID: 1, Amount: 2}).Error; err != nil {
					return err
				}
				return errors.New("roll back")
			})
			if err == nil {
				t.Fatal("rolled-back transaction returned nil")
			}
			outcome("a transaction rolled back", rec.take(), observe.OutcomeRolledBack)

			fail.Store(xa.StagePrepared)
			err = e.db.Create(&[]ShardedOrder{{UserID: 0, Amount: 3}, {UserID: 1, Amount: 3}}).Error
			fail.Store(xa.Stage(0))
			if err == nil || errors.Is(err, gormplugin.ErrTxInDoubt) {
				t.Fatalf("commit failing before its decision = %v, want an ordinary error", err)
			}
			outcome("a commit failing before its decision", rec.take(), observe.OutcomeRolledBack)

			fail.Store(xa.StageCommittedOne)
			err = e.db.Create(&[]ShardedOrder{{UserID: 0, Amount: 4}, {UserID: 1, Amount: 4}}).Error
			fail.Store(xa.Stage(0))
			if !errors.Is(err, gormplugin.ErrTxInDoubt) {
				t.Fatalf("commit failing after one branch committed = %v, want ErrTxInDoubt", err)
			}
			outcome("a commit left in doubt", rec.take(), observe.OutcomeInDoubt)
			if be == "mariadb" {
				time.Sleep(1100 * time.Millisecond) // recovery finishes a MySQL branch past the timeout
			}
			if _, err := e.p.TwoPhaseCoordinator().Recover(context.Background()); err != nil {
				t.Fatal(err)
			}

			// One data source: a one-phase commit, no two-phase event.
			if err := e.db.Create(&[]ShardedOrder{{UserID: 0, Amount: 5}, {UserID: 2, Amount: 5}}).Error; err != nil {
				t.Fatal(err)
			}
			statements(t, rec.take())
			if n := len(e.placement(t)); n != 6 {
				t.Fatalf("%d rows stored, want 6 (2 + 2 recovered + 2)", n)
			}
		})
	}
}

func TestObserverReportsAJoinWithItsBindingTables(t *testing.T) {
	rec := &recorder{}
	e := openTwoDS(t, "sqlite", "obs_join", boundTwoSourceRules, nil, []any{&JoinedOrder{}, &JoinedItem{}},
		gormplugin.WithScatter(), gormplugin.WithObserver(rec))
	for i := int64(0); i < 4; i++ {
		if err := e.db.Create(&JoinedOrder{ID: 10 + i, Amount: int(i)}).Error; err != nil {
			t.Fatal(err)
		}
		if err := e.db.Create(&JoinedItem{ID: 100 + i, OrderID: 10 + i, Qty: 1}).Error; err != nil {
			t.Fatal(err)
		}
	}
	rec.take()
	join := func() *gorm.DB {
		return e.db.Table("bound_orders").Select("bound_orders.id, bound_items.qty").
			Joins("JOIN bound_items ON bound_items.order_id = bound_orders.id")
	}
	for _, c := range []struct {
		what    string
		q       *gorm.DB
		targets int
		fan     observe.Fanout
	}{
		{"a JOIN over every table", join(), 4, observe.FanoutAll},
		{"a JOIN of one order", join().Where("bound_orders.id = ?", 11), 1, observe.FanoutOne},
	} {
		var out []map[string]any
		if err := c.q.Find(&out).Error; err != nil {
			t.Fatal(err)
		}
		s := oneStatement(t, c.what, rec.take())
		if !slices.Equal(s.stmt.Tables, []string{"bound_orders", "bound_items"}) || s.stmt.Targets != c.targets || s.stmt.Fanout != c.fan {
			t.Fatalf("%s: statement %+v, want bound_orders JOIN bound_items, %d targets, fan-out %s", c.what, s.stmt, c.targets, c.fan)
		}
		if s.end.Merged != (c.targets > 1) || (c.targets > 1 && s.end.Rows != int64(len(out))) {
			t.Fatalf("%s: %d rows returned, end %+v", c.what, len(out), s.end)
		}
		for _, tg := range s.targets {
			if len(tg.Tables) != 2 || strings.TrimPrefix(tg.Tables[0], "bound_orders_") != strings.TrimPrefix(tg.Tables[1], "bound_items_") {
				t.Fatalf("%s: target %+v, want a bound_orders table and its bound_items table", c.what, tg)
			}
		}
	}
}

func TestObserverReportsABroadcastTableByItsName(t *testing.T) {
	rec := &recorder{}
	db := reopen(t, dialectorFor(t, "sqlite", "obs_broadcast"), nil)
	r := rulesOf(t, `
dataSources:
  ds: {driver: sqlite, dsn: "file:unused"}
rules:
- !BROADCAST
  tables: [countries]
`)
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(r), gormplugin.WithObserver(rec))); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&Country{}); err != nil {
		t.Fatal(err)
	}
	rec.take()
	if err := db.Create(&Country{Code: "FR", Name: "France"}).Error; err != nil {
		t.Fatal(err)
	}
	var cs []Country
	if err := db.Find(&cs).Error; err != nil || len(cs) != 1 {
		t.Fatal(cs, err)
	}
	ss := statements(t, rec.take())
	if len(ss) != 2 {
		t.Fatalf("%d statements, want 2", len(ss))
	}
	for i, op := range []string{"insert", "select"} {
		s := ss[i].stmt
		if s.Operation != op || !slices.Equal(s.Tables, []string{"countries"}) || s.Targets != 1 || s.Fanout != observe.FanoutOne {
			t.Fatalf("statement %+v, want %s of countries on its one copy", s, op)
		}
	}
}

func TestObserverSeesNothingOfUnroutedStatements(t *testing.T) {
	e, rec := observedTwoDS(t, "sqlite", "obs_unrouted")
	db := e.db
	if err := db.Exec("CREATE TABLE plain (id integer primary key, v integer)").Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("INSERT INTO plain (id, v) VALUES (1, 2)").Error; err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.Table("plain").Count(&n).Error; err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if err := db.Session(&gorm.Session{DryRun: true}).Where("user_id = ? AND id = ?", 0, 1).Find(&[]ShardedOrder{}).Error; err != nil {
		t.Fatal(err)
	}
	if ev := rec.take(); len(ev) != 0 {
		t.Fatalf("events of statements on no sharded table, and of a DryRun: %+v", ev)
	}
}
