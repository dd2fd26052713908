package gormplugin_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// Concurrent two-phase transactions over both data sources, each with a
// nested transaction (savepoints on both branches) that writes both data
// sources and is rolled back, a read over both inside, and a third of
// them rolled back at the end, while recovery runs in a loop: every
// transaction that returned nil has its two rows, every other none, and
// no rolled-back nested row survives.

// nestedTransfer is the body of transaction id (goroutine g, round i):
// its two rows over both data sources carry amount id, those of its
// nested transaction (rolled back) -id; a third of them give up.
func nestedTransfer(tx *gorm.DB, g, i, id int) error {
	if err := tx.Create(&[]ShardedOrder{{UserID: int64(g % 2), Amount: id}, {UserID: int64(1 - g%2), Amount: id}}).Error; err != nil {
		return err
	}
	nested := tx.Transaction(func(tx2 *gorm.DB) error {
		if err := tx2.Create(&[]ShardedOrder{{UserID: 2, Amount: -id}, {UserID: 3, Amount: -id}}).Error; err != nil {
			return err
		}
		return errors.New("undo the nested part")
	})
	if nested == nil {
		return errors.New("the nested transaction did not fail")
	}
	var n int64
	if err := tx.Model(&ShardedOrder{}).Where("amount IN ?", []int{id, -id}).Count(&n).Error; err != nil {
		return err
	}
	if n != 2 {
		return fmt.Errorf("read in the transaction: %d of its rows, want 2", n)
	}
	if i%3 == 2 {
		return errors.New("give up")
	}
	return nil
}

func TestTwoPhaseConcurrentTransactionsWithNestedRollbacksEndAsTheyReport(t *testing.T) {
	eachTwoPhase(t, "concnested", func(t *testing.T, e *tpEnv) {
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				_, _ = e.p.TwoPhaseCoordinator().Recover(context.Background())
			}
		}()
		var mu sync.Mutex
		outcome := map[int]error{}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 8 {
					id := g*100 + i + 1
					err := e.db.Transaction(func(tx *gorm.DB) error { return nestedTransfer(tx, g, i, id) })
					mu.Lock()
					outcome[id] = err
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(stop)
		<-stopped
		byAmount := map[int]int{}
		for _, r := range e.placement(t) {
			byAmount[r.Amount]++
		}
		for id, err := range outcome {
			want := 2
			if err != nil {
				want = 0
				if err.Error() != "give up" { // the transactions insert distinct rows: nothing makes one fail
					t.Errorf("transaction %d: %v", id, err)
				}
			}
			if byAmount[id] != want || byAmount[-id] != 0 {
				t.Errorf("transaction %d returned %v: %d of its rows stored (want %d), %d undone rows stored", id, err, byAmount[id], want, byAmount[-id])
			}
		}
	}, gormplugin.WithScatter())
}
