package difftest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// stepObserver is an observe.Observer counting what one step reported:
// it checks that every statement it saw start ended once, that targets
// run under a started statement, and keeps the refusals.
type stepObserver struct {
	mu       sync.Mutex
	next     int
	open     map[int]observe.Statement // started, not ended
	ended    map[int]bool
	targets  map[int][]string // per statement: the data sources of its TargetStart calls
	tends    map[int]int      // per statement: TargetEnd calls
	refused  []observe.Refusal
	stmtErrs []error // the errors StatementEnd calls carried
	ends     []endEvent
	problems []string
}

type obsStmtKey struct{}

// endEvent is one StatementEnd call.
type endEvent struct {
	s   observe.Statement
	end observe.StatementEnd
}

func (o *stepObserver) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open, o.ended, o.targets, o.tends = map[int]observe.Statement{}, map[int]bool{}, map[int][]string{}, map[int]int{}
	o.refused, o.stmtErrs, o.problems, o.ends = nil, nil, nil, nil
}

func (o *stepObserver) StatementStart(ctx context.Context, s observe.Statement) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	o.open[o.next] = s
	return context.WithValue(ctx, obsStmtKey{}, o.next)
}

func (o *stepObserver) StatementEnd(ctx context.Context, s observe.Statement, end observe.StatementEnd) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, _ := ctx.Value(obsStmtKey{}).(int)
	if _, ok := o.open[n]; !ok {
		o.problems = append(o.problems, fmt.Sprintf("StatementEnd of statement %d (ended before: %v) %+v", n, o.ended[n], s))
		return
	}
	delete(o.open, n)
	o.ended[n] = true
	if end.Err != nil {
		o.stmtErrs = append(o.stmtErrs, end.Err)
	}
	o.ends = append(o.ends, endEvent{s, end})
	// A statement that failed may stop before its last targets.
	if got := len(o.targets[n]); got > s.Targets || got < s.Targets && end.Err == nil || o.tends[n] != got {
		o.problems = append(o.problems, fmt.Sprintf("statement %d %+v: %d TargetStart, %d TargetEnd, Targets %d, error %v", n, s, got, o.tends[n], s.Targets, end.Err))
	}
	srcs := slices.Clone(o.targets[n])
	slices.Sort(srcs)
	if got := len(slices.Compact(srcs)); got > s.Sources || got < s.Sources && end.Err == nil {
		o.problems = append(o.problems, fmt.Sprintf("statement %d %+v: targets on %d data sources, Sources %d, error %v", n, s, got, s.Sources, end.Err))
	}
}

func (o *stepObserver) TargetStart(ctx context.Context, t observe.Target) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, _ := ctx.Value(obsStmtKey{}).(int)
	if _, ok := o.open[n]; !ok {
		o.problems = append(o.problems, fmt.Sprintf("TargetStart %+v outside an open statement", t))
	}
	o.targets[n] = append(o.targets[n], t.DataSource)
	return ctx
}

func (o *stepObserver) TargetEnd(ctx context.Context, t observe.Target, _ error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, _ := ctx.Value(obsStmtKey{}).(int)
	o.tends[n]++
}

func (o *stepObserver) Refused(_ context.Context, r observe.Refusal) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refused = append(o.refused, r)
}

func (o *stepObserver) PlanCache(context.Context, bool)            {}
func (o *stepObserver) TwoPhase(context.Context, observe.TwoPhase) {}

// observedClient is a client whose steps are checked against what its
// observer reported while they ran.
type observedClient struct {
	inner     client
	obs       *stepObserver
	t         testing.TB
	component string
	// per kind of refusal (difftest's names): the reasons reported
	reasons map[string]map[observe.Reason]int
	checked struct{ steps, refused, dbErr, stmts int }
}

func (c *observedClient) wrap(o op) op {
	shard := o.shard
	o.shard = func() ([]int64, error) {
		c.obs.reset()
		rows, err := shard()
		c.check(o, err)
		return rows, err
	}
	return o
}

func (c *observedClient) build(h *harness, rng *rand.Rand, step int) op {
	return c.wrap(c.inner.build(h, rng, step))
}

func (c *observedClient) buildExtra(h *harness, rng *rand.Rand, step int) op {
	return c.wrap(c.inner.buildExtra(h, rng, step))
}

// wantReason is the reason a refusal difftest names must be reported
// with ("" when any reason will do).
var wantReason = map[string][]observe.Reason{
	"key change":      {observe.ReasonShardingKeyChange},
	"missing key":     {observe.ReasonMissingShardingKey},
	"unused hint":     {observe.ReasonHint},
	"no route":        {observe.ReasonNoRoute},
	"unknown table":   {observe.ReasonUnknownTable},
	"cross-source tx": {observe.ReasonCrossSource},
	"unsupported":     {observe.ReasonUnsupported, observe.ReasonHint, observe.ReasonCrossSource},
	"parse":           {observe.ReasonParse},
}

func (c *observedClient) check(o op, err error) {
	obs := c.obs
	obs.mu.Lock()
	defer obs.mu.Unlock()
	c.checked.steps++
	c.checked.stmts += len(obs.ended)
	fail := func(format string, args ...any) {
		c.t.Errorf("%s (%s): "+format, append([]any{o.kind, o.desc}, args...)...)
	}
	for _, p := range obs.problems {
		fail("%s", p)
	}
	if len(obs.open) > 0 {
		fail("%d statements started and never ended: %v", len(obs.open), obs.open)
	}
	r := ""
	if err != nil {
		r = refusal(err)
	}
	switch {
	case err == nil || r == "rolled back":
		switch {
		case len(obs.refused) == 0:
		case c.component == "gormplugin":
			// some GORM steps are several calls whose refusals the step
			// itself expects (a PrepareStmt session, a transaction's
			// inner call): counted, not judged
			for _, f := range obs.refused {
				c.tally("(inside an accepted step)", f.Reason)
			}
		default:
			fail("accepted, yet refusals reported: %+v", obs.refused)
		}
	case r == "" || r == "statement error" || r == "panic" || r == "other shardkey error":
		// An error no sentinel names: the database's, or a refusal of
		// sqlhook's without one (a NULL sharding value). A refusal
		// reported must be of the step's own error.
		switch {
		case len(obs.refused) == 0:
			c.checked.dbErr++
		case len(obs.refused) == 1 && errors.Is(err, obs.refused[0].Err):
			c.checked.refused++
			c.tally(r, obs.refused[0].Reason)
		default:
			fail("failed (%v), refusals reported: %+v", err, obs.refused)
		}
	default:
		c.checked.refused++
		// gormplugin reports a refusal found once the statement ran (a
		// row of another table) as its StatementEnd's error instead
		if c.component == "gormplugin" && len(obs.refused) == 0 && slices.ContainsFunc(obs.stmtErrs, func(e error) bool { return errors.Is(err, e) }) {
			c.tally(r, "(StatementEnd error)")
			return
		}
		if len(obs.refused) != 1 {
			fail("refused (%s: %v), %d refusals reported: %+v", r, err, len(obs.refused), obs.refused)
			return
		}
		f := obs.refused[0]
		if !errors.Is(err, f.Err) || f.Component != c.component {
			fail("refused with %v, reported %+v", err, f)
		}
		if want, ok := wantReason[r]; ok && !slices.Contains(want, f.Reason) {
			fail("refused (%s: %v), reported with reason %q, want one of %v", r, err, f.Reason, want)
		}
		c.tally(r, f.Reason)
	}
}

func (c *observedClient) tally(r string, reason observe.Reason) {
	if c.reasons[r] == nil {
		c.reasons[r] = map[observe.Reason]int{}
	}
	c.reasons[r][reason]++
}

// newObservedSQLClient is newSQLClient's client with obs attached to each
// of its handles.
func newObservedSQLClient(t testing.TB, w *world, obs observe.Observer) *sqlClient {
	t.Helper()
	open := func(opts ...sqlhook.Option) *sql.DB {
		db, err := sqlhook.Open(w.b.config(t), append(opts, sqlhook.WithObserver(obs))...)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(4)
		t.Cleanup(func() { db.Close() })
		return db
	}
	return &sqlClient{w: w, strict: open(), scatter: open(sqlhook.WithScatter()), multi: open(sqlhook.WithMultiSourceTx())}
}

// newObservedGormClient is newGormClient's client with obs attached to
// each of its plugins.
func newObservedGormClient(t testing.TB, w *world, obs observe.Observer) *gormClient {
	t.Helper()
	open := func(dsn string) *gorm.DB {
		db, err := gorm.Open(w.b.dialector(dsn), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		pool, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		pool.SetMaxOpenConns(4)
		t.Cleanup(func() { pool.Close() })
		return db
	}
	ds1, err := open(w.b.dsn[1]).DB()
	if err != nil {
		t.Fatal(err)
	}
	plugged := func(opts ...gormplugin.Option) *gorm.DB {
		db := open(w.b.dsn[0])
		pool0, _ := db.DB()
		r, err := shardconf.NewRouter(w.b.config(t))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, gormplugin.WithRules(r), gormplugin.WithObserver(obs),
			gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": ds1}))
		if err := db.Use(gormplugin.New(nil, opts...)); err != nil {
			t.Fatal(err)
		}
		return db
	}
	return &gormClient{w: w, strict: plugged(), scatter: plugged(gormplugin.WithScatter()), oracle: open(w.b.oracle)}
}

// TestObservedWritesAgreeWithOracleAndTheirEvents runs the seeded write
// sequence through sqlhook and through GORM with gormplugin, with an
// Observer attached to every handle or plugin: the
// shards still agree with the oracle after every step (observing changes
// nothing), and what the observer heard agrees with what happened: every
// statement started ended once with as many targets as it announced on
// as many data sources; an accepted step or one the database failed
// reports no refusal; a refused step reports exactly one, carrying the
// step's error, with the reason its sentinel names (gormplugin may
// instead end the statement with it, for a row found in another table).
func TestObservedWritesAgreeWithOracleAndTheirEvents(t *testing.T) {
	dbtest.SkipShort(t, "randomized write run with an observer")
	steps := min(*flagSteps, 300)
	for _, db := range list(*flagDB) {
		for _, cl := range list(*flagClient) {
			t.Run(db+"/"+cl, func(t *testing.T) {
				b := openBackendNamed(t, db, "dw_obs"+*flagName+cl)
				w := newWorld(t, b)
				obs := &stepObserver{}
				obs.reset()
				oc := &observedClient{obs: obs, t: t, component: cl + "plugin", reasons: map[string]map[observe.Reason]int{}}
				switch cl {
				case "sqlhook":
					oc.inner, oc.component = newObservedSQLClient(t, w, obs), "sqlhook"
				case "gorm":
					w.withItems = true
					oc.inner = newObservedGormClient(t, w, obs)
				default:
					t.Fatalf("unknown client %q", cl)
				}
				h := &harness{t: t, w: w, seed: *flagSeed, stats: map[string]*kindStats{}, shown: map[string]int{}, c: oc}
				h.run(steps)
				t.Logf("seed %d, %d steps: %d statements observed, %d refused steps, %d failed by the database; reasons %v",
					h.seed, oc.checked.steps, oc.checked.stmts, oc.checked.refused, oc.checked.dbErr, oc.reasons)
				if oc.checked.refused == 0 || oc.checked.stmts == 0 {
					t.Errorf("the run exercised too little: %+v", oc.checked)
				}
			})
		}
	}
}
