package gormplugin_test

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// PtrOrder is sharded_orders with a pointer sharding field.
type PtrOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID *int64
	Amount int
}

func (PtrOrder) TableName() string { return "sharded_orders" }

// TestKeyChangeErrorNamesTheMovedColumnAndValue: the RouteError of a
// refused move names the sharding column that moved the row and its new
// value as the driver sends it: not the primary key (a Save of a slice
// and a has-many save are upserts whose key is found elsewhere), not a
// pointer's address.
func TestKeyChangeErrorNamesTheMovedColumnAndValue(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDSNamed(t, be, "gormplugin_keyerr_"+be, dbRules, nil, []any{&ShardedOrder{}})
			rows := e.seed(t)
			before := e.snapshot(t)
			check := func(what string, err error, want string) {
				t.Helper()
				var re *shardconf.RouteError
				if !errors.Is(err, shardconf.ErrShardingKeyChange) || !errors.As(err, &re) {
					t.Fatalf("%s: %v, want ErrShardingKeyChange", what, err)
				}
				if re.Column != "user_id" || re.Value != want {
					t.Fatalf("%s: RouteError names %s = %q, want user_id = %q (%v)", what, re.Column, re.Value, want, err)
				}
			}
			a, b := rows[1], rows[2] // both end up in ds_0
			a.UserID = 2             // ds_1 -> ds_0
			check("Save of a slice with a moved row", e.db.Save([]*ShardedOrder{&a, &b}).Error, "2")
			var p PtrOrder
			if err := e.db.Where("user_id = ? AND id = ?", 1, rows[1].ID).First(&p).Error; err != nil {
				t.Fatal(err)
			}
			two := int64(2)
			p.UserID = &two
			check("Save of a moved row with a pointer field", e.db.Save(&p).Error, "2")
			if after := e.snapshot(t); after != before {
				t.Fatalf("refused saves changed the tables:\n%s\n%s", before, after)
			}
		})
	}
}
