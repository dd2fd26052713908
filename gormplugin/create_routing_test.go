package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// DefaultUserOrder's user_id has a default: GORM inserts 1 for a zero
// value, so the row must route as user 1's.
type DefaultUserOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64 `gorm:"default:1"`
	Amount int
}

func (DefaultUserOrder) TableName() string { return "sharded_orders" }

// ReadOnlyUserOrder's user_id is never written by GORM.
type ReadOnlyUserOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64 `gorm:"<-:false"`
	Amount int
}

func (ReadOnlyUserOrder) TableName() string { return "sharded_orders" }

// TestCreateRoutesByTheValuesTheInsertCarries: the row is routed by the
// sharding values GORM's INSERT will write: a default: tag applies before
// routing; a sharding column the INSERT leaves out (Omit, Select, a
// field GORM may not write) is refused, as are two different values for
// one column in a map.
func TestCreateRoutesByTheValuesTheInsertCarries(t *testing.T) {
	eachBackend(t, "create_vals", func(t *testing.T, e *twoDS) {
		d := DefaultUserOrder{Amount: 1}
		if err := e.db.Create(&d).Error; err != nil {
			t.Fatal(err)
		}
		if p := e.placement(t)[d.ID]; p.UserID != 1 || p.at.DataSource != "ds_1" || d.UserID != 1 {
			t.Fatalf("default user row: %+v at %s (struct %+v)", p.ShardedOrder, p.at, d)
		}
		before := e.snapshot(t)
		for name, err := range map[string]error{
			"Omit(user_id)":   e.db.Omit("user_id").Create(&ShardedOrder{UserID: 1, Amount: 2}).Error,
			"Omit(UserID)":    e.db.Omit("UserID").Create(&ShardedOrder{UserID: 1, Amount: 2}).Error,
			"Select(id)":      e.db.Select("id", "amount").Create(&ShardedOrder{UserID: 1, Amount: 2}).Error,
			"read-only field": e.db.Create(&ReadOnlyUserOrder{UserID: 1, Amount: 2}).Error,
			"map twice":       e.db.Model(&ShardedOrder{}).Create(map[string]any{"UserID": 1, "user_id": 0, "amount": 3}).Error,
		} {
			if !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s: %v; want ErrUnsupported", name, err)
			}
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused creates wrote:\n%s\nwas\n%s", after, before)
		}
	})
}

// TestCreateInBatchesWithKeyElsewhereWritesNothing: CreateInBatches runs
// its batches in one transaction; a later batch whose caller-set key is
// in another table is refused and the earlier batches roll back.
func TestCreateInBatchesWithKeyElsewhereWritesNothing(t *testing.T) {
	eachBackend(t, "batches", func(t *testing.T, e *twoDS) {
		other := e.seed(t)[1] // user 1, in ds_1
		before := e.snapshot(t)
		// Every row routes to ds_0 (users 0 and 2); the third reuses the
		// key of user 1's order, stored in ds_1.
		rows := []ShardedOrder{{ID: 5_000_000, UserID: 0}, {ID: 5_000_003, UserID: 2}, {ID: other.ID, UserID: 0}, {ID: 5_000_004, UserID: 0}}
		err := e.db.CreateInBatches(&rows, 2).Error
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			t.Fatalf("batch with a key stored elsewhere: %v", err)
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused batches wrote:\n%s\nwas\n%s", after, before)
		}
	})
}

// TestFirstOrCreatePlacesTheRow: FirstOrCreate's INSERT is routed by the
// values its conditions give the row.
func TestFirstOrCreatePlacesTheRow(t *testing.T) {
	eachBackend(t, "foc", func(t *testing.T, e *twoDS) {
		var o ShardedOrder
		if err := e.db.Where(ShardedOrder{ID: 7_000_001, UserID: 3}).Attrs(ShardedOrder{Amount: 9}).FirstOrCreate(&o).Error; err != nil {
			t.Fatal(err)
		}
		p := e.placement(t)[7_000_001]
		if p.UserID != 3 || p.Amount != 9 || p.at != e.targetOf(t, 3, 7_000_001) {
			t.Fatalf("first-or-create: %+v at %s", p.ShardedOrder, p.at)
		}
	})
}
