package gormplugin_test

import (
	"fmt"
	"testing"

	"gorm.io/gorm"
)

// A statement the plugin does not route (an unsharded table) inside a
// two-phase transaction runs on the branch of the data source the
// *gorm.DB was opened on (doc.go, "Two-phase commit"), also when a hook of
// a routed write issues it: the unsharded table's rows belong to that
// data source, whichever data source the row that fired the hook went to.

// TPA2Audit is an unsharded table, present in both databases (as when
// every database got the same migrations): only ds_0's copy is the
// table's.
type TPA2Audit struct {
	ID   int64
	Note string
}

// TPA2AuditedOrder is sharded_orders whose AfterCreate hook writes an
// audit row in the create's transaction.
type TPA2AuditedOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
}

func (TPA2AuditedOrder) TableName() string { return "sharded_orders" }

func (o *TPA2AuditedOrder) AfterCreate(tx *gorm.DB) error {
	return tx.Create(&TPA2Audit{Note: fmt.Sprint("order of user ", o.UserID)}).Error
}

func TestTwoPhaseUnroutedStatementsFromHooksRunOnTheGormDBsOwnDataSource(t *testing.T) {
	eachTwoPhase(t, "unroutedhome", func(t *testing.T, e *tpEnv) {
		for _, chk := range e.chk {
			if err := chk.AutoMigrate(&TPA2Audit{}); err != nil {
				t.Fatal(err)
			}
		}
		writes := []struct {
			what   string
			audits int64 // rows the write audits
			run    func() error
		}{
			{"Create of a ds_1 row (GORM's default transaction)", 1, func() error {
				return e.db.Create(&TPA2AuditedOrder{UserID: 1}).Error
			}},
			{"Create of a ds_1 row in db.Transaction", 1, func() error {
				return e.db.Transaction(func(tx *gorm.DB) error { return tx.Create(&TPA2AuditedOrder{UserID: 1}).Error })
			}},
			{"Create of a ds_0 row after a ds_1 row in db.Transaction", 2, func() error {
				return e.db.Transaction(func(tx *gorm.DB) error {
					if err := tx.Create(&TPA2AuditedOrder{UserID: 3}).Error; err != nil {
						return err
					}
					return tx.Create(&TPA2AuditedOrder{UserID: 0}).Error
				})
			}},
			{"Create of a batch over both data sources", 2, func() error {
				return e.db.Create(&[]TPA2AuditedOrder{{UserID: 1}, {UserID: 0}}).Error
			}},
		}
		want := int64(0)
		for _, w := range writes {
			if err := w.run(); err != nil {
				t.Fatalf("%s: %v", w.what, err)
			}
			want += w.audits
			got := e.counts(t, "tpa2_audits")
			if got[1] != 0 || got[0] != want {
				t.Fatalf("after %s: audit rows per data source %v, want [%d 0]: an unsharded table's row went to ds_1's copy of it", w.what, got, want)
			}
		}
	})
}
