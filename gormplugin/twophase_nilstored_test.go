package gormplugin_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// Back-to-back writes over both data sources, before and after one whose
// commit fails at prepare: every write that returns nil has its rows on
// both data sources at once.

func TestTwoPhaseEveryNilCommitHasStoredItsRowsEverywhere(t *testing.T) {
	var fail atomic.Bool
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StagePrepared && fail.Load() {
			return errors.New("injected failure after every branch prepared")
		}
		return nil
	})
	eachTwoPhase(t, "nilstored", func(t *testing.T, e *tpEnv) {
		want := 0
		write := func(round int, inTx bool) {
			t.Helper()
			rows := []ShardedOrder{{UserID: 0, Amount: round}, {UserID: 1, Amount: round}}
			var err error
			if inTx {
				err = e.db.Transaction(func(tx *gorm.DB) error { return tx.Create(&rows).Error })
			} else {
				err = e.db.Create(&rows).Error
			}
			if err != nil {
				t.Fatalf("write %d: %v", round, err)
			}
			want += 2
			if got := len(e.placement(t)); got != want {
				t.Fatalf("write %d (in db.Transaction: %v) returned nil, yet %d rows are stored, want %d", round, inTx, got, want)
			}
		}
		for round := range 5 {
			write(round, round%2 == 1)
		}
		fail.Store(true)
		if err := e.db.Create(&[]ShardedOrder{{UserID: 0, Amount: -1}, {UserID: 1, Amount: -1}}).Error; err == nil {
			t.Fatal("the write failing at prepare succeeded")
		}
		fail.Store(false)
		for round := 5; round < 15; round++ {
			write(round, round%2 == 1)
		}
	}, hook)
}
