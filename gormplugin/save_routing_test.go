package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// Save of a sharded model routes by the row's own sharding values (those
// its SET writes) for columns its WHERE clause does not name. A loaded row
// whose sharding value was changed in memory is not there: the UPDATE
// matches nothing, and instead of GORM's fallback INSERT (the primary key
// would then be in two tables) Save is refused with ErrShardingKeyChange.

// TestSaveRefusesMovedRow: with the new value, with the old value in the
// WHERE clause, and with a zero value: refused, nothing changed, the key
// in one table only.
func TestSaveRefusesMovedRow(t *testing.T) {
	eachBackend(t, "save_moved", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		before := e.snapshot(t)
		for name, run := range map[string]func() error{
			"new value": func() error {
				o := orders[0]
				o.UserID = 1
				return e.db.Save(&o).Error
			},
			"old value in WHERE": func() error {
				o := orders[0]
				o.UserID = 1
				return e.db.Where("user_id = ?", 0).Save(&o).Error
			},
			"zero value": func() error { // user 3's order saved without its user
				return e.db.Save(&ShardedOrder{ID: orders[3].ID, Amount: 1}).Error
			},
			"Updates(&row)": func() error {
				o := orders[1]
				o.UserID, o.Amount = 2, 99
				return e.db.Updates(&o).Error
			},
			"in a transaction on the new value's data source": func() error {
				o := orders[0]
				o.UserID = 1
				return e.db1.Transaction(func(tx *gorm.DB) error { return tx.Save(&o).Error })
			},
			"in a transaction on the old value's data source": func() error {
				o := orders[2]
				o.UserID = 1
				return e.db.Transaction(func(tx *gorm.DB) error { return tx.Save(&o).Error })
			},
		} {
			err := run()
			if name == "in a transaction on the old value's data source" {
				if !errors.Is(err, gormplugin.ErrUnsupported) { // the transaction cannot reach ds_1
					t.Errorf("%s: err = %v; want ErrUnsupported", name, err)
				}
			} else if !errors.Is(err, shardconf.ErrShardingKeyChange) {
				t.Errorf("%s: err = %v; want ErrShardingKeyChange", name, err)
			}
			if after := e.snapshot(t); after != before {
				t.Fatalf("%s changed the tables:\n%s\nwas\n%s", name, after, before)
			}
		}
	})
}

// TestSaveUpdatesInPlaceAndCreatesNewRows: Save of an unchanged row (on
// MariaDB the UPDATE then reports no row changed and GORM upserts), of a
// changed amount, of a sharding value routing to the same table, and of
// a new row with a key the caller chose.
func TestSaveUpdatesInPlaceAndCreatesNewRows(t *testing.T) {
	eachBackend(t, "save_ok", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		o := orders[1]
		if err := e.db.Save(&o).Error; err != nil {
			t.Fatalf("save unchanged: %v", err)
		}
		o.Amount = 77
		if err := e.db.Save(&o).Error; err != nil {
			t.Fatalf("save amount: %v", err)
		}
		o.UserID = 3 // ds_1 too, and the id keeps the table
		if err := e.db.Save(&o).Error; err != nil {
			t.Fatalf("save user 1 -> 3: %v", err)
		}
		fresh := ShardedOrder{ID: 1_000_001, UserID: 1, Amount: 5}
		if err := e.db.Save(&fresh).Error; err != nil {
			t.Fatalf("save new row: %v", err)
		}
		p := e.placement(t)
		if got := p[o.ID]; got.ShardedOrder != o || got.at != e.targetOf(t, 1, o.ID) {
			t.Fatalf("saved row %+v at %s", got.ShardedOrder, got.at)
		}
		if got := p[fresh.ID]; got.ShardedOrder != fresh {
			t.Fatalf("new row %+v", got)
		}
		if len(p) != 5 {
			t.Fatalf("%d rows, want 5", len(p))
		}
	})
}

// TestDeleteOfRowRoutesByItsOwnValues: Delete(&row) routes by the row's
// non-zero sharding values; a row whose value changed in memory is not
// where they route, and the DELETE, which one table would have run, is
// refused instead of deleting nothing.
func TestDeleteOfRowRoutesByItsOwnValues(t *testing.T) {
	eachBackend(t, "del_own", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		moved := orders[1] // user 1, ds_1
		moved.UserID = 2
		before := e.snapshot(t)
		if err := e.db.Delete(&moved).Error; !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Fatalf("delete of a row moved in memory: %v", err)
		}
		if err := e.db.Delete(&ShardedOrder{ID: orders[1].ID}).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Fatalf("delete by key alone: %v", err)
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused deletes changed the tables")
		}
		o := orders[3]
		if res := e.db.Delete(&o); res.Error != nil || res.RowsAffected != 1 {
			t.Fatalf("delete of a loaded row: %d %v", res.RowsAffected, res.Error)
		}
		if res := e.db.Delete(&o); res.Error != nil || res.RowsAffected != 0 {
			t.Fatalf("delete of a row already deleted: %d %v", res.RowsAffected, res.Error)
		}
		if p := e.placement(t); len(p) != 3 {
			t.Fatalf("%d rows left, want 3", len(p))
		}
	})
}
