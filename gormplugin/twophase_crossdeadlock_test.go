package gormplugin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// Two transfers in opposite directions between users of two data
// sources lock one row in each database in opposite orders: a deadlock no
// database can see (each sees one plain lock wait). On one database the
// server would break it (PostgreSQL after deadlock_timeout, InnoDB at
// once); across two, nothing does, and a transaction older than the
// two-phase timeout can never commit anyway (it is rolled back at
// commit). So the wait must end, and one transaction fail, within about
// the timeout, not hang with its locks held.

func TestTwoPhaseDeadlockAcrossDataSourcesEndsWithinTheTimeout(t *testing.T) {
	const timeout = 2 * time.Second
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			e := newTwoPhase(t, be, "xdeadlock_"+be, nil, gormplugin.WithTwoPhaseRecovery(timeout, -1))
			accounts := []ShardedOrder{{UserID: 0, Amount: 100}, {UserID: 1, Amount: 100}}
			if err := e.db.Create(&accounts).Error; err != nil {
				t.Fatal(err)
			}
			move := func(tx *gorm.DB, a ShardedOrder, d int) error {
				return tx.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", a.UserID, a.ID).
					Update("amount", gorm.Expr("amount + ?", d)).Error
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var locked, wg sync.WaitGroup
			locked.Add(2)
			errs := make([]error, 2)
			start := time.Now()
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					first, second := accounts[i], accounts[1-i]
					errs[i] = e.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
						err := move(tx, first, -10)
						locked.Done() // both hold their first row before either asks for the second
						if err != nil {
							return err
						}
						locked.Wait()
						return move(tx, second, 10)
					})
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(6 * timeout):
				cancel() // let the test end
				<-done
				t.Fatalf("a deadlock across the data sources still waited after %v (two-phase timeout %v); errors once cancelled: %v",
					time.Since(start).Round(time.Second), timeout, errs)
			}
			if errs[0] == nil && errs[1] == nil {
				t.Fatal("both transfers of a deadlock committed")
			}
			total := 0
			for _, r := range e.placement(t) {
				total += r.Amount
			}
			if total != 200 {
				t.Fatalf("total %d after the deadlock, want 200 (errors %v)", total, errs)
			}
		})
	}
}
