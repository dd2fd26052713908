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

// userOnlyRules: sharded_orders in each database, chosen by user_id; the
// id does not route.
const userOnlyRules = `
rules:
- !SHARDING
  tables:
    sharded_orders:
      actualDataNodes: ds_${0..1}.sharded_orders
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 4}}
`

// hookKey is the key KeyHookOrder's BeforeCreate sets.
var hookKey int64

// KeyHookOrder's BeforeCreate sets its primary key, after routing.
type KeyHookOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
}

func (KeyHookOrder) TableName() string { return "sharded_orders" }

func (o *KeyHookOrder) BeforeCreate(*gorm.DB) error {
	o.ID = hookKey
	return nil
}

// TestHookSettingKeyStoredElsewhereRefused: a key a BeforeCreate hook
// sets is looked for in the other tables as a caller's key is.
func TestHookSettingKeyStoredElsewhereRefused(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDS(t, be, "hookkey_"+be, userOnlyRules, nil, []any{&ShardedOrder{}})
			other := ShardedOrder{UserID: 1}
			if err := e.db.Create(&other).Error; err != nil {
				t.Fatal(err)
			}
			before := e.snapshot(t)
			hookKey = other.ID
			if err := e.db.Create(&KeyHookOrder{UserID: 0, Amount: 13}).Error; !errors.Is(err, gorm.ErrDuplicatedKey) {
				t.Fatalf("hook setting a key stored in ds_1: %v", err)
			}
			if after := e.snapshot(t); after != before {
				t.Fatalf("refused create wrote:\n%s\nwas\n%s", after, before)
			}
			hookKey = other.ID + 1_000_000
			if err := e.db.Create(&KeyHookOrder{UserID: 0, Amount: 14}).Error; err != nil {
				t.Fatalf("hook setting a new key: %v", err)
			}
		})
	}
}
