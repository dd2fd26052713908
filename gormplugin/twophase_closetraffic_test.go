package gormplugin_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// Plugin.Close while transactions over both data sources commit from
// several goroutines: each one either commits whole (nil, both rows) or
// fails and leaves nothing (a transaction begun or committed after Close
// rolls back), none in doubt, no branch left prepared.

func TestTwoPhaseCloseDuringConcurrentCommitsLeavesEveryTransactionWhole(t *testing.T) {
	eachTwoPhase(t, "closetraffic", func(t *testing.T, e *tpEnv) {
		var mu sync.Mutex
		outcome := map[int]error{}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 40 {
					id := g*1000 + i + 1 // the amount of the transaction's two rows
					err := e.db.Transaction(func(tx *gorm.DB) error {
						return tx.Create(&[]ShardedOrder{{UserID: int64(g % 2), Amount: id}, {UserID: int64(1 - g%2), Amount: id}}).Error
					})
					mu.Lock()
					outcome[id] = err
					mu.Unlock()
				}
			}()
		}
		time.Sleep(300 * time.Millisecond)
		if err := e.p.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		byAmount := map[int]int{}
		for _, r := range e.placement(t) {
			byAmount[r.Amount]++
		}
		committed := 0
		for id, err := range outcome {
			want := 0
			if err == nil {
				want = 2
				committed++
			}
			if errors.Is(err, gormplugin.ErrTxInDoubt) {
				t.Errorf("transaction %d is in doubt after Close: %v", id, err)
			}
			if byAmount[id] != want {
				t.Errorf("transaction %d returned %v and stored %d of its 2 rows", id, err, byAmount[id])
			}
		}
		if committed == 0 || committed == len(outcome) {
			t.Logf("%d of %d transactions committed: Close fell outside the traffic", committed, len(outcome))
		}
	})
}
