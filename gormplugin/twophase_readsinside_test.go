package gormplugin_test

import (
	"fmt"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// Reads inside a two-phase transaction run on its branches: every read
// path over both data sources (a scatter Count, SUM, MAX, ORDER BY with
// LIMIT, First, Pluck, Find, a Preload of children in the other data
// source) sees the transaction's own uncommitted writes on every data
// source, and nothing of them is visible outside before commit.

func TestTwoPhaseReadsOverBothDataSourcesInsideATransactionSeeItsWrites(t *testing.T) {
	eachTwoPhase(t, "readsinside", func(t *testing.T, e *tpEnv) {
		e.seed(t) // users 0..3, amounts 0, 10, 20, 30
		err := e.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&[]ShardedOrder{{UserID: 0, Amount: 100}, {UserID: 1, Amount: 200}}).Error; err != nil {
				return err
			}
			if err := tx.Model(&ShardedOrder{}).Where("user_id = ?", 3).Update("amount", 300).Error; err != nil {
				return err
			}
			if err := tx.Where("user_id = ?", 2).Delete(&ShardedOrder{}).Error; err != nil {
				return err
			}
			var n int64
			var sum, max int
			var top []ShardedOrder
			var first ShardedOrder
			var amounts []int
			var all []ShardedOrder
			for what, err := range map[string]error{
				"count": tx.Model(&ShardedOrder{}).Count(&n).Error,
				"sum":   tx.Model(&ShardedOrder{}).Select("COALESCE(SUM(amount), 0)").Scan(&sum).Error,
				"max":   tx.Model(&ShardedOrder{}).Select("MAX(amount)").Scan(&max).Error,
				"top":   tx.Order("amount DESC").Limit(2).Find(&top).Error,
				"first": tx.Order("amount DESC").First(&first).Error,
				"pluck": tx.Model(&ShardedOrder{}).Order("amount").Pluck("amount", &amounts).Error,
				"all":   tx.Find(&all).Error,
			} {
				if err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
			}
			got := fmt.Sprint(n, sum, max, len(top) == 2 && top[0].Amount == 300 && top[1].Amount == 200, first.Amount, amounts, len(all))
			if want := fmt.Sprint(5, 0+10+300+100+200, 300, true, 300, []int{0, 10, 100, 200, 300}, 5); got != want {
				return fmt.Errorf("reads in the transaction: count sum max top first pluck all = %s, want %s", got, want)
			}
			if s := e.snapshot(t); len(e.placement(t)) != 4 {
				return fmt.Errorf("the transaction's writes are visible outside before commit: %s", s)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if p := e.placement(t); len(p) != 5 {
			t.Fatalf("after commit: %v", p)
		}
	}, gormplugin.WithScatter())
}

func TestTwoPhasePreloadInsideATransactionSeesChildrenItWroteInTheOtherDataSource(t *testing.T) {
	for _, be := range twoPhaseBackends {
		t.Run(be, func(t *testing.T) {
			e := newTwoPhaseOf(t, be, "preloadinside_"+be, tpAssocRules, []any{&TPParent{}, &TPItem{}}, nil, gormplugin.WithScatter())
			err := e.db.Transaction(func(tx *gorm.DB) error {
				parent := TPParent{UserID: 0, Items: []TPItem{{UserID: 0, Name: "near"}, {UserID: 1, Name: "far"}}}
				if err := tx.Create(&parent).Error; err != nil {
					return err
				}
				var back []TPParent
				if err := tx.Preload("Items").Where("user_id = ?", 0).Find(&back).Error; err != nil {
					return fmt.Errorf("preload: %w", err)
				}
				if len(back) != 1 || len(back[0].Items) != 2 {
					return fmt.Errorf("preload in the transaction gave %+v, want the parent with both children", back)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if p, i := e.counts(t, "tp_parents"), e.counts(t, "tp_items"); p != [2]int64{1, 0} || i != [2]int64{1, 1} {
				t.Fatalf("after commit: parents %v, items %v per data source", p, i)
			}
		})
	}
}
