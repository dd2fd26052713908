package gormplugin_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// Three data sources: a write over all three commits on all three, a
// failure after every branch prepared leaves none, and a commit in doubt
// after the first branch committed is completed on the other two by
// recovery (on MySQL once past the timeout).

const tpa2ThreeRules = `
rules:
- !SHARDING
  tables:
    sharded_orders:
      actualDataNodes: ds_${0..2}.sharded_orders
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 3}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 7}}
`

// openThree opens three databases as ds_0..ds_2 and plugs the plugin
// (two-phase commit, hook) into ds_0's *gorm.DB; counts reads the rows of
// each database without the plugin.
func openThree(t *testing.T, be string, hook gormplugin.Option) (db *gorm.DB, p *gormplugin.Plugin, counts func() [3]int64) {
	t.Helper()
	gormplugin.StartMergedDB()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	var chk [3]*gorm.DB // each database without the plugin
	pools := map[string]gorm.ConnPool{}
	for i := range chk {
		d := dialectorFor(t, be, fmt.Sprintf("tp_three_%s_ds%d", be, i))
		own := reopen(t, d, nil)
		if i == 0 {
			db = own
		}
		chk[i] = reopen(t, d, nil)
		pool, err := own.DB()
		if err != nil {
			t.Fatal(err)
		}
		pools[fmt.Sprintf("ds_%d", i)] = pool
	}
	p = gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, tpa2ThreeRules)), gormplugin.WithDataSources(pools),
		gormplugin.WithTwoPhaseCommit(), gormplugin.WithTwoPhaseRecovery(time.Second, -1), hook)
	if err := db.Use(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		left, err := p.TwoPhaseCoordinator().List(context.Background())
		if err != nil {
			t.Errorf("list prepared branches: %v", err)
		}
		for _, b := range left { // fail, and roll back: a prepared branch blocks other tests
			t.Errorf("prepared branch left behind: %+v", b)
			q := "ROLLBACK PREPARED '" + b.GTRID + ":" + b.Source + "'"
			if be == "mariadb" {
				q = fmt.Sprintf("XA ROLLBACK X'%x',X'%x',%d", b.GTRID, b.Source, xa.FormatID)
			}
			if err := chk[b.Source[len(b.Source)-1]-'0'].Exec(q).Error; err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
		_ = p.Close()
	})
	if err := db.AutoMigrate(&ShardedOrder{}); err != nil {
		t.Fatal(err)
	}
	return db, p, func() (out [3]int64) {
		for i := range chk {
			if err := chk[i].Table("sharded_orders").Count(&out[i]).Error; err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
}

func TestTwoPhaseCommitOverThreeDataSources(t *testing.T) {
	var failAt atomic.Int32 // xa.Stage+1 at which the hook fails; 0: none
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if int32(s)+1 == failAt.Load() {
			return fmt.Errorf("injected failure at stage %v", s)
		}
		return nil
	})
	batch := func() *[]ShardedOrder {
		return &[]ShardedOrder{{UserID: 0}, {UserID: 1}, {UserID: 2}, {UserID: 3}, {UserID: 4}, {UserID: 5}}
	}
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			db, p, counts := openThree(t, be, hook)
			if err := db.Create(batch()).Error; err != nil {
				t.Fatal(err)
			}
			if got := counts(); got != [3]int64{2, 2, 2} {
				t.Fatalf("rows per data source after a batch over three: %v", got)
			}
			failAt.Store(int32(xa.StagePrepared) + 1)
			err := db.Create(batch()).Error
			failAt.Store(0)
			if err == nil || errors.Is(err, gormplugin.ErrTxInDoubt) {
				t.Fatalf("failure after every branch prepared: %v, want a plain error", err)
			}
			if got := counts(); got != [3]int64{2, 2, 2} {
				t.Fatalf("rows per data source after a rolled-back batch: %v", got)
			}
			failAt.Store(int32(xa.StageCommittedOne) + 1)
			err = db.Transaction(func(tx *gorm.DB) error { return tx.Create(batch()).Error })
			failAt.Store(0)
			var doubt *gormplugin.TxInDoubtError
			if !errors.As(err, &doubt) || !doubt.Decided || len(doubt.Committed)+len(doubt.Pending) != 3 {
				t.Fatalf("failure after the first branch committed: %v, want in doubt over three branches", err)
			}
			if be == "mariadb" {
				time.Sleep(1100 * time.Millisecond) // recovery leaves a younger MySQL branch to its coordinator
			}
			if _, err := p.TwoPhaseCoordinator().Recover(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := counts(); got != [3]int64{4, 4, 4} {
				t.Fatalf("rows per data source after recovery: %v", got)
			}
		})
	}
}
