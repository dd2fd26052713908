package difftest

import (
	"database/sql"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/sqlhook"
)

// TestObservedReadsAgreeWithOracleAndReportTheRowsRead runs the seeded
// read generator through sqlhook with an Observer attached to its
// handles: results still agree with the oracle (observing changes
// nothing), every statement started ends once with the targets and data
// sources it announced, a merged read reports as many rows as the caller
// read, a read of one target is not merged, and a refused read reports
// one refusal carrying its error and no statement, or, refused by the
// merge once its targets ran, one statement ending with its error.
func TestObservedReadsAgreeWithOracleAndReportTheRowsRead(t *testing.T) {
	dbtest.SkipShort(t, "randomized read run with an observer")
	conf := readConfFromEnv(t)
	steps := min(conf.steps, 400)
	for _, db := range conf.dbs {
		t.Run(db, func(t *testing.T) {
			w := newReadWorld(t, db, conf.seed, conf.rows)
			obs := &stepObserver{}
			obs.reset()
			cfg := w.b.readConfig(t)
			open := func(opts ...sqlhook.Option) *sql.DB {
				d, err := sqlhook.Open(cfg, append(opts, sqlhook.WithScatter(), sqlhook.WithObserver(obs))...)
				if err != nil {
					t.Fatal(err)
				}
				d.SetMaxOpenConns(4)
				t.Cleanup(func() { d.Close() })
				return d
			}
			w.binHook, w.defHook = open(sqlhook.WithBinaryCollation()), open()
			w.txHook = open(sqlhook.WithBinaryCollation(), sqlhook.WithMultiSourceTx())

			g := &sqlReadGen{w: w}
			var agreed, refused, refusedAfterRunning, merged, mergedRows, diverged int
			for step := range steps {
				rng := rand.New(rand.NewPCG(conf.seed, uint64(step)*0x9e3779b97f4a7c15+7))
				rc := g.build(rng)
				shard := rc.shard
				var res *readResult
				var serr error
				rc.shard = func() (*readResult, error) {
					obs.reset()
					res, serr = shard()
					return res, serr
				}
				o := rc.judge(db)
				switch o.v {
				case divergent:
					diverged++
					t.Errorf("step %d (%s): diverged with an observer: %s", step, rc.desc, o.reason)
					continue
				case skipped:
					continue
				}
				obs.mu.Lock()
				fail := func(format string, args ...any) {
					t.Errorf("step %d (%s): "+format, append([]any{step, rc.desc}, args...)...)
				}
				for _, p := range obs.problems {
					fail("%s", p)
				}
				if len(obs.open) > 0 {
					fail("statements never ended: %v", obs.open)
				}
				if serr != nil {
					refused++
					switch {
					case len(obs.refused) == 1 && errors.Is(serr, obs.refused[0].Err) && len(obs.ended) == 0:
					case len(obs.refused) == 0 && len(obs.ends) == 1 && errors.Is(serr, obs.ends[0].end.Err):
						// refused once its targets ran (the merge cannot
						// reproduce an order): a statement that failed, by
						// WithObserver's documentation, not a refusal
						refusedAfterRunning++
					default:
						fail("refused (%v): refusals %+v, %d statements", serr, obs.refused, len(obs.ended))
					}
					obs.mu.Unlock()
					continue
				}
				agreed++
				if len(obs.refused) > 0 {
					fail("answered, yet refusals reported: %+v", obs.refused)
				}
				if len(obs.ends) == 1 {
					e := obs.ends[0]
					switch {
					case e.end.Merged && e.end.Rows != int64(len(res.rows)):
						fail("merged %d rows reported, %d read", e.end.Rows, len(res.rows))
					case !e.end.Merged && (e.s.Targets != 1 || e.end.Rows != 0):
						fail("not merged: %+v, end %+v", e.s, e.end)
					case e.end.Merged:
						merged++
						mergedRows += len(res.rows)
					}
				}
				obs.mu.Unlock()
			}
			t.Logf("%s: %d steps, %d answered, %d refused (%d of them once the targets ran: StatementEnd with the error, no Refused), %d merged reads (%d rows), %d divergent",
				db, steps, agreed, refused, refusedAfterRunning, merged, mergedRows, diverged)
			if merged == 0 || refused == 0 {
				t.Errorf("the run exercised too little")
			}
		})
	}
}
