package gormplugin_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// A commit left in doubt (one branch committed, the decision logged) is
// reported as ErrTxInDoubt (a *TxInDoubtError) by every GORM write path
// over both data sources: GORM's default transaction, the plugin's own
// under SkipDefaultTransaction, db.Transaction, with TranslateError on
// (GORM then runs errors through the dialector), and recovery completes
// each write whole (on MySQL once the transaction is older than the
// timeout: before, recovery leaves a MySQL branch to its coordinator).

func TestTwoPhaseInDoubtIsErrTxInDoubtThroughEveryWritePath(t *testing.T) {
	var fail atomic.Bool
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StageCommittedOne && fail.Load() {
			return errors.New("injected failure after the first branch committed")
		}
		return nil
	})
	for _, mode := range []string{"default", "skip", "translate", "skip_translate"} {
		for _, be := range twoPhaseBackends {
			t.Run(mode+"/"+be, func(t *testing.T) {
				cfg := func() *gorm.Config {
					return &gorm.Config{SkipDefaultTransaction: strings.HasPrefix(mode, "skip"), TranslateError: strings.HasSuffix(mode, "translate")}
				}
				e := newTwoPhase(t, be, "indoubtpaths_"+be+"_"+mode, cfg, hook, gormplugin.WithScatter(), gormplugin.WithTwoPhaseRecovery(time.Second, -1))
				seeded := e.seed(t) // users 0..3, one row each
				writes := []struct {
					what  string
					write func() error
					whole func(p map[int64]placedRow) bool
				}{
					{"Create of a batch", func() error {
						return e.db.Create(&[]ShardedOrder{{UserID: 0, Amount: 501}, {UserID: 1, Amount: 501}}).Error
					}, func(p map[int64]placedRow) bool { return tpa2Amounts(p)[501] == 2 }},
					{"Update", func() error {
						return e.db.Model(&ShardedOrder{}).Where("user_id IN ?", []int64{0, 1}).Update("amount", 502).Error
					}, func(p map[int64]placedRow) bool {
						return p[seeded[0].ID].Amount == 502 && p[seeded[1].ID].Amount == 502
					}},
					{"Delete", func() error {
						return e.db.Where("user_id IN ?", []int64{2, 3}).Delete(&ShardedOrder{}).Error
					}, func(p map[int64]placedRow) bool {
						_, a := p[seeded[2].ID]
						_, b := p[seeded[3].ID]
						return !a && !b
					}},
					{"Save of a slice", func() error {
						return e.db.Save(&[]ShardedOrder{{ID: 91, UserID: 0, Amount: 503}, {ID: 93, UserID: 1, Amount: 503}}).Error
					}, func(p map[int64]placedRow) bool { return p[91].Amount == 503 && p[93].Amount == 503 }},
					{"db.Transaction", func() error {
						return e.db.Transaction(func(tx *gorm.DB) error {
							return tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 504}, {UserID: 1, Amount: 504}}).Error
						})
					}, func(p map[int64]placedRow) bool { return tpa2Amounts(p)[504] == 2 }},
				}
				for _, w := range writes {
					fail.Store(true)
					err := w.write()
					fail.Store(false)
					var doubt *gormplugin.TxInDoubtError
					if !errors.Is(err, gormplugin.ErrTxInDoubt) || !errors.As(err, &doubt) || !doubt.Decided {
						t.Fatalf("%s with a failure after the first branch committed = %v, want ErrTxInDoubt (decided)", w.what, err)
					}
					if be == "mariadb" {
						time.Sleep(1100 * time.Millisecond) // past the timeout
					}
					if _, err := e.p.TwoPhaseCoordinator().Recover(context.Background()); err != nil {
						t.Fatal(err)
					}
					if p := e.placement(t); !w.whole(p) {
						t.Fatalf("%s after recovery is not whole: %s", w.what, e.snapshot(t))
					}
				}
			})
		}
	}
}

// tpa2Amounts counts the stored rows per amount.
func tpa2Amounts(p map[int64]placedRow) map[int]int {
	out := map[int]int{}
	for _, r := range p {
		out[r.Amount]++
	}
	return out
}
