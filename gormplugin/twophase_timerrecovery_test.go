package gormplugin_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/xa"
)

// Concurrent transactions over both data sources, a third of them left in
// doubt after their first branch committed, with the plugin's own
// recovery timer running (1s timeout, 200ms interval) and nobody calling
// Recover: once the timer has had time, every transaction that returned
// nil or ErrTxInDoubt has both rows, every other none, no branch left.

func TestTwoPhaseRecoveryTimerCompletesEveryInDoubtTransaction(t *testing.T) {
	var commits atomic.Int64
	hook := gormplugin.WithTwoPhaseHook(func(s xa.Stage, _ string) error {
		if s == xa.StageCommittedOne && commits.Add(1)%3 == 0 {
			return errors.New("injected failure after the first branch committed")
		}
		return nil
	})
	eachTwoPhase(t, "timerrecovery", func(t *testing.T, e *tpEnv) {
		var mu sync.Mutex
		outcome := map[int]error{}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 6 {
					id := g*100 + i + 1 // the amount of the transaction's two rows
					err := e.db.Transaction(func(tx *gorm.DB) error {
						return tx.Create(&[]ShardedOrder{{UserID: int64(g % 2), Amount: id}, {UserID: int64(1 - g%2), Amount: id}}).Error
					})
					mu.Lock()
					outcome[id] = err
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			left, err := e.p.TwoPhaseCoordinator().List(context.Background())
			if err == nil && len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("branches still prepared 15s after the last commit (timeout 1s, interval 200ms): %v %v", left, err)
			}
		}
		byAmount := map[int]int{}
		for _, r := range e.placement(t) {
			byAmount[r.Amount]++
		}
		doubts := 0
		for id, err := range outcome {
			want := 2
			switch {
			case errors.Is(err, gormplugin.ErrTxInDoubt):
				doubts++
			case err != nil:
				want = 0
			}
			if byAmount[id] != want {
				t.Errorf("transaction %d returned %v and has %d of its 2 rows", id, err, byAmount[id])
			}
		}
		if doubts == 0 {
			t.Fatal("no transaction was left in doubt: the test tested nothing")
		}
	}, hook, gormplugin.WithTwoPhaseRecovery(time.Second, 200*time.Millisecond))
}
