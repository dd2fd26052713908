package gormplugin_test

import (
	"errors"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// TestTransactionOnItsOwnDataSourceWithPrepareStmt: db.Transaction on
// the *gorm.DB of a data source may write that data source's rows, with
// PrepareStmt on or off (GORM then wraps the pool in a
// *gorm.PreparedStmtDB), and may not reach the other data source.
func TestTransactionOnItsOwnDataSourceWithPrepareStmt(t *testing.T) {
	for _, be := range twoBackends {
		for _, prepare := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/prepare=%v", be, prepare), func(t *testing.T) {
				e := newTwoDS(t, be, fmt.Sprintf("tx_prep_%s_%v", be, prepare), func() *gorm.Config { return &gorm.Config{PrepareStmt: prepare} })
				var ids []int64
				for i, db := range []*gorm.DB{e.db, e.db1} {
					own, other := int64(i), int64(1-i) // users of this data source and of the other
					err := db.Transaction(func(tx *gorm.DB) error {
						o := ShardedOrder{UserID: own, Amount: 1}
						if err := tx.Create(&o).Error; err != nil {
							return err
						}
						ids = append(ids, o.ID)
						if err := tx.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", own, o.ID).Update("amount", 2).Error; err != nil {
							return err
						}
						var back ShardedOrder
						if err := tx.Where("user_id = ? AND id = ?", own, o.ID).Take(&back).Error; err != nil || back.Amount != 2 {
							return fmt.Errorf("read back in the transaction: %+v %w", back, err)
						}
						o.Amount = 3
						return tx.Save(&o).Error
					})
					if err != nil {
						t.Fatalf("transaction on ds_%d's *gorm.DB: %v", i, err)
					}
					err = db.Transaction(func(tx *gorm.DB) error {
						return tx.Create(&ShardedOrder{UserID: other}).Error
					})
					if !errors.Is(err, gormplugin.ErrUnsupported) {
						t.Fatalf("transaction on ds_%d reaching ds_%d: %v", i, other, err)
					}
				}
				p := e.placement(t)
				if len(p) != 2 || p[ids[0]].Amount != 3 || p[ids[1]].Amount != 3 || p[ids[0]].at.DataSource != "ds_0" || p[ids[1]].at.DataSource != "ds_1" {
					t.Fatalf("after the transactions: %v", p)
				}
			})
		}
	}
}
