package gormplugin_test

import (
	"context"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// The context a two-phase transaction began with (db.WithContext(ctx))
// cancelled during its commit, after every branch prepared, after the
// decision was logged, or after the first branch committed: the commit
// goes on and returns nil with every data source committed.

func TestTwoPhaseContextCancelledDuringCommitNeverStopsItHalfWay(t *testing.T) {
	var cancelAt atomic.Int32 // the xa.Stage+1 at which to cancel; 0: none
	var cancel atomic.Pointer[context.CancelFunc]
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if int32(s)+1 == cancelAt.Load() {
			if c := cancel.Load(); c != nil {
				(*c)()
			}
		}
		return nil
	})
	eachTwoPhase(t, "cancelcommit", func(t *testing.T, e *tpEnv) {
		for _, stage := range []xa.Stage{xa.StagePrepared, xa.StageDecided, xa.StageCommittedOne} {
			ctx, c := context.WithCancel(context.Background())
			cancel.Store(&c)
			cancelAt.Store(int32(stage) + 1)
			rows := []ShardedOrder{{UserID: 0, Amount: int(stage) + 1}, {UserID: 1, Amount: int(stage) + 1}}
			err := e.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return tx.Create(&rows).Error })
			cancelAt.Store(0)
			c()
			if ctx.Err() == nil {
				t.Fatalf("stage %v: the hook did not cancel the context", stage)
			}
			if err != nil {
				t.Fatalf("commit with its context cancelled at stage %v = %v, want nil", stage, err)
			}
			if n := tpa2Amounts(e.placement(t))[int(stage)+1]; n != 2 {
				t.Fatalf("commit with its context cancelled at stage %v stored %d of its 2 rows", stage, n)
			}
		}
	}, hook)
}
