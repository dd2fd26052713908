package gormplugin_test

import (
	"errors"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// ds_0 on PostgreSQL, ds_1 on SQLite, which has no two-phase commit: a
// transaction may use either alone, never both.
func TestTwoPhaseTransactionReachingSQLiteAndAnotherDataSourceIsRefused(t *testing.T) {
	gormplugin.StartMergedDB()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	d0, d1 := dialectorFor(t, "postgres", "tp_mixed_ds0"), dialectorFor(t, "sqlite", "tp_mixed_ds1")
	e := &twoDS{be: "mixed", rules: rulesOf(t, dbRules)}
	e.db, e.db1 = reopen(t, d0, nil), reopen(t, d1, nil)
	e.chk = [2]*gorm.DB{reopen(t, d0, nil), reopen(t, d1, nil)}
	for i, chk := range e.chk {
		for _, table := range []string{"sharded_orders_0", "sharded_orders_1"} {
			if err := chk.Table(table).AutoMigrate(&ShardedOrder{}); err != nil {
				t.Fatalf("ds_%d %s: %v", i, table, err)
			}
		}
	}
	p0, _ := e.db.DB()
	p1, _ := e.db1.DB()
	p := gormplugin.New(nil, gormplugin.WithRules(e.rules), gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}),
		gormplugin.WithTwoPhaseCommit(), gormplugin.WithTwoPhaseRecovery(0, -1), gormplugin.WithTwoPhaseKeyGenerator(txIDs(t)))
	if err := e.db.Use(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	err := e.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&ShardedOrder{UserID: 0}).Error; err != nil {
			return err
		}
		return tx.Create(&ShardedOrder{UserID: 1}).Error // SQLite
	})
	if !errors.Is(err, gormplugin.ErrTwoPhaseUnavailable) || !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Fatalf("transaction over PostgreSQL and SQLite = %v, want ErrUnsupported and ErrTwoPhaseUnavailable", err)
	}
	rows := batch()
	if err := e.db.Create(&rows).Error; !errors.Is(err, gormplugin.ErrTwoPhaseUnavailable) {
		t.Fatalf("batch over PostgreSQL and SQLite = %v, want ErrTwoPhaseUnavailable", err)
	}
	if s := e.snapshot(t); s != "" {
		t.Fatalf("stored by refused transactions: %s", s)
	}
	// SQLite alone, and PostgreSQL alone, commit.
	for _, users := range [][]int64{{1, 3}, {0, 2}} {
		err := e.db.Transaction(func(tx *gorm.DB) error {
			for _, u := range users {
				if err := tx.Create(&ShardedOrder{UserID: u}).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("transaction on users %v: %v", users, err)
		}
	}
	if n := sources(e.placement(t)); n["ds_0"] != 2 || n["ds_1"] != 2 {
		t.Fatalf("rows per data source: %v", n)
	}
}

// Transfers between users of both data sources from several goroutines:
// every one commits whole or not at all, so the total never changes.
func TestTwoPhaseConcurrentTransfersKeepTheTotal(t *testing.T) {
	eachTwoPhase(t, "transfers", func(t *testing.T, e *tpEnv) {
		accounts := make([]ShardedOrder, 4) // user u's balance is accounts[u].Amount
		for u := range accounts {
			accounts[u] = ShardedOrder{UserID: int64(u), Amount: 1000}
		}
		if err := e.db.Create(&accounts).Error; err != nil {
			t.Fatal(err)
		}
		move := func(tx *gorm.DB, u int, delta int) error {
			return tx.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", accounts[u].UserID, accounts[u].ID).
				Update("amount", gorm.Expr("amount + ?", delta)).Error
		}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 8; i++ {
					from, to := (g+i)%4, (g+i+1)%4 // users of different data sources
					err := e.db.Transaction(func(tx *gorm.DB) error {
						// Locks in user order: no deadlock across the two databases.
						lo, hi, d := from, to, -7
						if lo > hi {
							lo, hi, d = to, from, 7
						}
						if err := move(tx, lo, d); err != nil {
							return err
						}
						return move(tx, hi, -d)
					})
					if err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("transfer: %v", err)
		}
		total := 0
		for _, r := range e.placement(t) {
			total += r.Amount
		}
		if total != 4000 {
			t.Fatalf("total %d after transfers, want 4000", total)
		}
	})
}
