package gormplugin_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// WithTwoPhaseCommit over sharded_orders in two databases (dbRules:
// user_id picks the data source), on PostgreSQL and MariaDB. Every claim
// about what was committed is read from the physical tables through
// connections without the plugin (twoDS.placement).

var twoPhaseBackends = []string{"postgres", "mariadb"}

// tpEnv is one backend's pair of databases, with one *gorm.DB (on ds_0)
// whose plugin commits in two phases.
type tpEnv struct {
	*twoDS
	p *gormplugin.Plugin
}

// newTwoPhase opens the databases tp_<name>_ds0/ds1 and plugs in the
// plugin with WithTwoPhaseCommit and opts. At cleanup it fails the test if
// a prepared branch is left (and rolls it back), closes the plugin, and
// checks that no goroutine outlives it.
func newTwoPhase(t *testing.T, be, name string, cfg func() *gorm.Config, opts ...gormplugin.Option) *tpEnv {
	t.Helper()
	return newTwoPhaseOf(t, be, name, dbRules, []any{&ShardedOrder{}}, cfg, opts...)
}

// newTwoPhaseOf is newTwoPhase with other rules and models.
func newTwoPhaseOf(t *testing.T, be, name, rules string, models []any, cfg func() *gorm.Config, opts ...gormplugin.Option) *tpEnv {
	t.Helper()
	gormplugin.StartMergedDB()
	ignore := goleak.IgnoreCurrent()
	// First registered: runs last, after the pools close. GORM's
	// PrepareStmt cache runs a goroutine nothing stops.
	t.Cleanup(func() {
		goleak.VerifyNone(t, ignore, goleak.IgnoreTopFunction("gorm.io/gorm/internal/lru.NewLRU[...].func1"))
	})
	d0, d1 := dialectorFor(t, be, "tp_"+name+"_ds0"), dialectorFor(t, be, "tp_"+name+"_ds1")
	return newTwoPhaseOn(t, be, [2]gorm.Dialector{d0, d1}, d1, rules, models, cfg, opts...)
}

// newTwoPhaseOn is newTwoPhaseOf on given databases; chk1 reaches ds_1's
// database without the plugin (the same as ds[1], or around a proxy).
func newTwoPhaseOn(t *testing.T, be string, ds [2]gorm.Dialector, chk1 gorm.Dialector, rules string, models []any, cfg func() *gorm.Config, opts ...gormplugin.Option) *tpEnv {
	t.Helper()
	if cfg == nil {
		cfg = func() *gorm.Config { return &gorm.Config{} }
	}
	e := &tpEnv{twoDS: &twoDS{be: be, rules: rulesOf(t, rules)}}
	e.db = reopen(t, ds[0], cfg())
	e.db1 = reopen(t, ds[1], nil) // ds_1's pool; it has no plugin
	e.chk = [2]*gorm.DB{reopen(t, ds[0], nil), reopen(t, chk1, nil)}
	p0, _ := e.db.DB()
	p1, _ := e.db1.DB()
	all := append([]gormplugin.Option{gormplugin.WithRules(e.rules),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}),
		gormplugin.WithTwoPhaseCommit(), gormplugin.WithTwoPhaseRecovery(0, -1)}, opts...)
	e.p = gormplugin.New(nil, all...)
	if err := e.db.Use(e.p); err != nil {
		t.Fatal(err)
	}
	if got, err := e.db.DB(); err != nil || got != p0 { // the plugin's pool wrapper gives the *sql.DB back
		t.Fatalf("db.DB() after db.Use = %p, %v; want %p", got, err, p0)
	}
	t.Cleanup(func() {
		if err := e.p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	t.Cleanup(func() { e.noBranchLeft(t) })
	if err := e.db.AutoMigrate(models...); err != nil {
		t.Fatal(err)
	}
	return e
}

// txIDs is a transaction-id generator of the test's own.
func txIDs(t *testing.T) keygen.IDGenerator {
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "9"}, keygen.WithSequenceScope(keygen.NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// noBranchLeft fails the test if a prepared branch of the plugin's log is
// left on either data source, and rolls it back so that it cannot block
// other tests.
func (e *tpEnv) noBranchLeft(t *testing.T) {
	t.Helper()
	c := e.ownCoordinator(t)
	if c == nil {
		return
	}
	defer c.Close()
	left, err := c.List(context.Background())
	if err != nil {
		t.Errorf("list prepared branches: %v", err)
		return
	}
	for _, b := range left {
		t.Errorf("prepared branch left behind: %+v", b)
		chk := e.chk[0]
		if b.Source == "ds_1" {
			chk = e.chk[1]
		}
		q := "ROLLBACK PREPARED '" + b.GTRID + ":" + b.Source + "'"
		if e.be == "mariadb" {
			q = fmt.Sprintf("XA ROLLBACK X'%s',X'%s',%d", hex.EncodeToString([]byte(b.GTRID)), hex.EncodeToString([]byte(b.Source)), xa.FormatID)
		}
		if err := chk.Exec(q).Error; err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// ownCoordinator is a coordinator of the test's own, attached to the
// plugin's decision log through the databases without the plugin (the
// plugin's may be closed already); nil after reporting a failure.
func (e *tpEnv) ownCoordinator(t *testing.T) *xa.Coordinator {
	t.Helper()
	d := dialect.Postgres
	if e.be == "mariadb" {
		d = dialect.MySQL
	}
	var sources []xa.Source
	for i, chk := range e.chk {
		pool, err := chk.DB()
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, xa.Source{Name: fmt.Sprintf("ds_%d", i), Dialect: d, DB: pool})
	}
	c, err := xa.New(xa.Config{Interval: -1}, sources)
	if err != nil {
		t.Errorf("coordinator: %v", err)
		return nil
	}
	if err := c.Attach(context.Background()); err != nil {
		_ = c.Close()
		t.Errorf("attach to the decision log: %v", err)
		return nil
	}
	return c
}

// eachTwoPhase runs f on PostgreSQL and MariaDB.
func eachTwoPhase(t *testing.T, name string, f func(t *testing.T, e *tpEnv), opts ...gormplugin.Option) {
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) { f(t, newTwoPhase(t, be, name+"_"+be, nil, opts...)) })
	}
}

// batch is eight orders of users 0..3, two each: rows of both data
// sources, in an order that interleaves them.
func batch() []ShardedOrder {
	var out []ShardedOrder
	for i := 0; i < 8; i++ {
		out = append(out, ShardedOrder{UserID: int64(i % 4), Amount: 100 + i})
	}
	return out
}

// sources counts the rows placed per data source.
func sources(p map[int64]placedRow) map[string]int {
	out := map[string]int{}
	for _, r := range p {
		out[r.at.DataSource]++
	}
	return out
}

func TestTwoPhaseCommitCreatesABatchSpanningDataSourcesInOneTransaction(t *testing.T) {
	eachTwoPhase(t, "batch", func(t *testing.T, e *tpEnv) {
		rows := batch()
		if err := e.db.Create(&rows).Error; err != nil {
			t.Fatalf("Create of a batch over ds_0 and ds_1: %v", err)
		}
		p := e.placement(t) // every row where its values route
		if len(p) != len(rows) {
			t.Fatalf("%d rows stored, want %d: %v", len(p), len(rows), p)
		}
		for _, r := range rows {
			got, ok := p[r.ID]
			if !ok || got.Amount != r.Amount || got.UserID != r.UserID {
				t.Fatalf("row %+v stored as %+v (%v)", r, got, ok)
			}
		}
		if n := sources(p); n["ds_0"] != 4 || n["ds_1"] != 4 {
			t.Fatalf("rows per data source %v, want 4 and 4", n)
		}
	})
}

func TestTwoPhaseCommitRollsBackEveryBranchWhenOnePrepareFails(t *testing.T) {
	failPrepared := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StagePrepared {
			return errors.New("injected failure after every branch prepared")
		}
		return nil
	})
	eachTwoPhase(t, "prepfail", func(t *testing.T, e *tpEnv) {
		rows := batch()
		err := e.db.Create(&rows).Error
		if err == nil || errors.Is(err, gormplugin.ErrTxInDoubt) || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("Create with a failing prepare = %v, want the failure, not in doubt", err)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("rows committed by a rolled-back batch: %s", s)
		}
		// The same batch without the failure commits: the branches were ended.
		err = e.db.Transaction(func(tx *gorm.DB) error {
			return tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 2}}).Error
		})
		if !strings.Contains(fmt.Sprint(err), "injected failure") {
			t.Fatalf("a transaction over both data sources = %v, want the injected failure", err)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("rows committed by a rolled-back transaction: %s", s)
		}
	}, failPrepared)
}

func TestTwoPhaseCommitOfABatchFailingOnTheSecondDataSourceWritesNothing(t *testing.T) {
	eachTwoPhase(t, "uniqfail", func(t *testing.T, e *tpEnv) {
		// A row already in ds_1 under the key a row of the batch takes.
		taken := ShardedOrder{ID: 1001, UserID: 1, Amount: 1}
		tg := e.targetOf(t, taken.UserID, taken.ID)
		if err := e.chk[1].Table(tg.Table).Create(&taken).Error; err != nil {
			t.Fatal(err)
		}
		before := e.snapshot(t)
		rows := []ShardedOrder{{ID: 1000, UserID: 0, Amount: 5}, {ID: 1002, UserID: 2, Amount: 6}, {ID: 1001, UserID: 1, Amount: 7}}
		if err := e.db.Create(&rows).Error; err == nil {
			t.Fatal("Create of a batch with a duplicate key in ds_1 succeeded")
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("a failed batch changed the tables:\nbefore %s\nafter  %s", before, after)
		}
	})
}

func TestTwoPhaseTransactionTouchingBothDataSourcesCommitsBoth(t *testing.T) {
	eachTwoPhase(t, "txboth", func(t *testing.T, e *tpEnv) {
		var a, b ShardedOrder
		err := e.db.Transaction(func(tx *gorm.DB) error {
			a, b = ShardedOrder{UserID: 0, Amount: 1}, ShardedOrder{UserID: 1, Amount: 2}
			if err := tx.Create(&a).Error; err != nil {
				return err
			}
			if err := tx.Create(&b).Error; err != nil {
				return err
			}
			if err := tx.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 1, b.ID).Update("amount", 3).Error; err != nil {
				return err
			}
			var both []ShardedOrder // a read over both data sources sees the transaction's rows
			if err := tx.Where("user_id IN ?", []int64{0, 1}).Order("id").Find(&both).Error; err != nil {
				return err
			}
			if len(both) != 2 || both[0].ID != a.ID || both[1].Amount != 3 {
				return fmt.Errorf("read in the transaction: %+v", both)
			}
			if s := e.snapshot(t); s != "" {
				return fmt.Errorf("visible before commit: %s", s)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		p := e.placement(t)
		if len(p) != 2 || p[a.ID].at.DataSource != "ds_0" || p[b.ID].at.DataSource != "ds_1" || p[b.ID].Amount != 3 {
			t.Fatalf("after commit: %v", p)
		}
	}, gormplugin.WithScatter())
}

func TestTwoPhaseTransactionRefusedMidwayCommitsNothing(t *testing.T) {
	eachTwoPhase(t, "refused", func(t *testing.T, e *tpEnv) {
		err := e.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 1}, {UserID: 1, Amount: 2}}).Error; err != nil {
				return err
			}
			// No sharding key: refused by the router, after both data
			// sources were written.
			return tx.Model(&ShardedOrder{}).Where("amount = ?", 1).Update("amount", 9).Error
		})
		if !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Fatalf("transaction = %v, want ErrMissingShardingKey", err)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("committed by a refused transaction: %s", s)
		}
	})
}

func TestTwoPhaseRollbackUndoesEveryDataSource(t *testing.T) {
	eachTwoPhase(t, "rollback", func(t *testing.T, e *tpEnv) {
		tx := e.db.Begin()
		if tx.Error != nil {
			t.Fatal(tx.Error)
		}
		rows := batch()
		if err := tx.Create(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback().Error; err != nil {
			t.Fatal(err)
		}
		if s := e.snapshot(t); s != "" {
			t.Fatalf("rolled back, yet stored: %s", s)
		}
		if err := tx.Commit().Error; err == nil {
			t.Fatal("Commit after Rollback succeeded")
		}
	})
}

func TestTwoPhaseSavepointsUndoEveryDataSourceIncludingOnesReachedAfter(t *testing.T) {
	eachTwoPhase(t, "savepoint", func(t *testing.T, e *tpEnv) {
		var kept0, kept1 ShardedOrder
		err := e.db.Transaction(func(tx *gorm.DB) error {
			kept0 = ShardedOrder{UserID: 0, Amount: 1}
			if err := tx.Create(&kept0).Error; err != nil {
				return err
			}
			// A nested transaction (a savepoint) that reaches ds_1 first
			// and fails: both data sources go back to the savepoint.
			nested := tx.Transaction(func(tx2 *gorm.DB) error {
				if err := tx2.Create(&ShardedOrder{UserID: 1, Amount: 2}).Error; err != nil {
					return err
				}
				if err := tx2.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 0, kept0.ID).Update("amount", 5).Error; err != nil {
					return err
				}
				return errors.New("undo the nested part")
			})
			if nested == nil {
				return errors.New("the nested transaction did not fail")
			}
			kept1 = ShardedOrder{UserID: 3, Amount: 4}
			if err := tx.Create(&kept1).Error; err != nil {
				return err
			}
			// Explicit savepoints, by name.
			if err := tx.SavePoint("sp_named").Error; err != nil {
				return err
			}
			if err := tx.Create(&ShardedOrder{UserID: 2, Amount: 6}).Error; err != nil {
				return err
			}
			return tx.RollbackTo("sp_named").Error
		})
		if err != nil {
			t.Fatal(err)
		}
		p := e.placement(t)
		if len(p) != 2 || p[kept0.ID].Amount != 1 || p[kept1.ID].Amount != 4 || p[kept1.ID].at.DataSource != "ds_1" {
			t.Fatalf("after savepoints: %v", p)
		}
	})
}

func TestTwoPhaseCommitInDoubtIsErrTxInDoubtThroughGORM(t *testing.T) {
	committedOne := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StageCommittedOne {
			return errors.New("injected failure after the first branch committed")
		}
		return nil
	})
	eachTwoPhase(t, "indoubt", func(t *testing.T, e *tpEnv) {
		var a, b ShardedOrder
		err := e.db.Transaction(func(tx *gorm.DB) error {
			a, b = ShardedOrder{UserID: 0, Amount: 1}, ShardedOrder{UserID: 1, Amount: 2}
			return tx.Create(&[]*ShardedOrder{&a, &b}).Error
		})
		if !errors.Is(err, gormplugin.ErrTxInDoubt) {
			t.Fatalf("transaction = %v, want ErrTxInDoubt", err)
		}
		var doubt *gormplugin.TxInDoubtError
		if !errors.As(err, &doubt) || !doubt.Decided || len(doubt.Pending) != 1 || len(doubt.Committed) != 1 {
			t.Fatalf("in-doubt error %+v, want decided with one branch committed and one pending", doubt)
		}
		// Recovery commits the pending branch: the decision was logged. A
		// MySQL branch is finished only once its transaction is older than
		// the timeout (MariaDB keeps it attached to its closing session
		// for a while): run rounds until it is done, as the timer would.
		var rep xa.Report
		for range 50 {
			if rep, err = e.p.TwoPhaseCoordinator().Recover(context.Background()); err != nil || len(rep.Errors) > 0 || len(rep.Committed) == 1 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil || len(rep.Committed) != 1 || len(rep.Errors) > 0 {
			t.Fatalf("Recover = %+v, %v", rep, err)
		}
		if p := e.placement(t); len(p) != 2 || p[a.ID].at.DataSource != "ds_0" || p[b.ID].at.DataSource != "ds_1" {
			t.Fatalf("after recovery: %v", p)
		}
	}, committedOne, gormplugin.WithTwoPhaseRecovery(time.Second, -1)) // xa finishes a MySQL branch once older than the timeout
}

func TestTwoPhaseUpdateAndDeleteSpanningDataSources(t *testing.T) {
	eachTwoPhase(t, "upddel", func(t *testing.T, e *tpEnv) {
		seeded := e.seed(t) // users 0..3
		res := e.db.Model(&ShardedOrder{}).Where("user_id IN ?", []int64{0, 1, 2}).Update("amount", 77)
		if res.Error != nil || res.RowsAffected != 3 {
			t.Fatalf("Update over both data sources: %d rows, %v", res.RowsAffected, res.Error)
		}
		p := e.placement(t)
		for _, o := range seeded {
			want := 77
			if o.UserID == 3 {
				want = o.Amount
			}
			if p[o.ID].Amount != want {
				t.Fatalf("after the update: %v", p)
			}
		}
		res = e.db.Where("user_id IN ?", []int64{1, 2}).Delete(&ShardedOrder{})
		if res.Error != nil || res.RowsAffected != 2 {
			t.Fatalf("Delete over both data sources: %d rows, %v", res.RowsAffected, res.Error)
		}
		if n := sources(e.placement(t)); n["ds_0"] != 1 || n["ds_1"] != 1 {
			t.Fatalf("after the delete: %v", n)
		}
	}, gormplugin.WithScatter())
}

func TestTwoPhaseWithoutDefaultTransactionStillCommitsASpanningWriteAtomically(t *testing.T) {
	failPrepared := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StagePrepared {
			return errors.New("injected failure after every branch prepared")
		}
		return nil
	})
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			e := newTwoPhase(t, be, "skipdef_"+be, func() *gorm.Config { return &gorm.Config{SkipDefaultTransaction: true} }, failPrepared, gormplugin.WithScatter())
			rows := batch()
			if err := e.db.Create(&rows).Error; err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Create = %v, want the injected failure", err)
			}
			if s := e.snapshot(t); s != "" {
				t.Fatalf("committed without a transaction: %s", s)
			}
			e.seed(t) // one data source per row: committed in one phase, no hook
			before := e.snapshot(t)
			if err := e.db.Model(&ShardedOrder{}).Where("user_id IN ?", []int64{0, 1}).Update("amount", 5).Error; err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Update = %v, want the injected failure", err)
			}
			if err := e.db.Where("user_id IN ?", []int64{0, 1}).Delete(&ShardedOrder{}).Error; err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("Delete = %v, want the injected failure", err)
			}
			if after := e.snapshot(t); after != before {
				t.Fatalf("changed without a transaction:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
