package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// HookedSaveOrder's BeforeSave moves the row to user 1 when its amount is
// 666, after the statement was routed.
type HookedSaveOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
}

func (HookedSaveOrder) TableName() string { return "sharded_orders" }

func (o *HookedSaveOrder) BeforeSave(*gorm.DB) error {
	if o.Amount == 666 {
		o.UserID = 1
	}
	return nil
}

// SetColumnOrder's BeforeUpdate adds user_id to the change set with
// Statement.SetColumn when the amount is 667.
type SetColumnOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
}

func (SetColumnOrder) TableName() string { return "sharded_orders" }

func (o *SetColumnOrder) BeforeUpdate(tx *gorm.DB) error {
	if m, ok := tx.Statement.Dest.(map[string]any); ok && m["amount"] == 667 {
		tx.Statement.SetColumn("user_id", 1)
	}
	return nil
}

// TenantOrder's BeforeCreate sets the user from elsewhere (a tenant in
// the context, typically) when it is zero.
type TenantOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
}

func (TenantOrder) TableName() string { return "sharded_orders" }

func (o *TenantOrder) BeforeCreate(*gorm.DB) error {
	if o.UserID == 0 {
		o.UserID = 1
	}
	return nil
}

// TestHooksChangingShardingValuesAfterRoutingRefused: a hook runs after
// the statement was routed (GORM begins the transaction on the routed data
// source first); the UPDATE is routed again from its final change set and
// WHERE clause, and a change of target or a sharding key change is
// refused, with nothing written.
func TestHooksChangingShardingValuesAfterRoutingRefused(t *testing.T) {
	eachBackend(t, "hooks", func(t *testing.T, e *twoDS) {
		o := e.seed(t)[0] // user 0
		before := e.snapshot(t)
		h := HookedSaveOrder{ID: o.ID, UserID: o.UserID, Amount: 666}
		if err := e.db.Save(&h).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Errorf("BeforeSave moving the row: %v", err)
		}
		s := SetColumnOrder{ID: o.ID, UserID: o.UserID}
		err := e.db.Model(&s).Where("user_id = ?", 0).Updates(map[string]any{"amount": 667}).Error
		if !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Errorf("BeforeUpdate SetColumn of user_id: %v", err)
		}
		if err := e.db.Create(&TenantOrder{Amount: 1}).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Errorf("BeforeCreate setting the user after routing: %v", err)
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused hooks changed the tables:\n%s\nwas\n%s", after, before)
		}
		// A hook that leaves the sharding values alone is fine.
		h.UserID, h.Amount = 0, 5 // the refused BeforeSave set user 1 in memory
		if err := e.db.Save(&h).Error; err != nil {
			t.Fatalf("save through a hook that changes nothing: %v", err)
		}
		if p := e.placement(t)[o.ID]; p.Amount != 5 || p.UserID != 0 {
			t.Fatalf("after save: %+v", p)
		}
	})
}
