package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// boundItems reads every bound_items table of both databases, failing
// on an item not in the table its order_id routes to, or an id in two
// tables.
func (e *twoDS) boundItems(t *testing.T) map[int64]BoundItem {
	t.Helper()
	out := map[int64]BoundItem{}
	targets, _ := e.rules.Targets("bound_items")
	for _, tg := range targets {
		chk := e.chk[0]
		if tg.DataSource == "ds_1" {
			chk = e.chk[1]
		}
		var rows []BoundItem
		if err := chk.Table(tg.Table).Find(&rows).Error; err != nil {
			t.Fatalf("read %s: %v", tg, err)
		}
		for _, it := range rows {
			ts, err := e.rules.Route("bound_items", shardconf.Eq("order_id", it.OrderID))
			if err != nil || len(ts) != 1 || ts[0] != tg {
				t.Fatalf("MISPLACED: item %+v is in %s; order_id routes to %v (%v)", it, tg, ts, err)
			}
			if _, dup := out[it.ID]; dup {
				t.Fatalf("item id %d is in two tables", it.ID)
			}
			out[it.ID] = it
		}
	}
	return out
}

// TestAssociationWritesRefusedBeforeAnyWrite: Append and Replace of a
// sharded has-many association write in several statements; outside a
// transaction they are refused before the first, inside one a refusal
// rolls every statement back. Items always sit beside their order, and
// an item is never in two tables.
func TestAssociationWritesRefusedBeforeAnyWrite(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDS(t, be, "assoc_"+be, boundTwoSourceRules, nil, []any{&BoundOrder{}, &BoundItem{}})
			even := BoundOrder{ID: 10, Note: "even", Items: []BoundItem{{ID: 100, SKU: "a"}}} // ds_0
			odd := BoundOrder{ID: 11, Note: "odd", Items: []BoundItem{{ID: 110, SKU: "b"}}}   // ds_1
			for _, o := range []*BoundOrder{&even, &odd} {
				if err := e.db.Create(o).Error; err != nil {
					t.Fatalf("create order %d with its item: %v", o.ID, err)
				}
			}
			if items := e.boundItems(t); len(items) != 2 {
				t.Fatalf("items after creates: %v", items)
			}
			// Outside a transaction: refused before anything is written.
			for name, err := range map[string]error{
				"Replace": e.db.Model(&even).Association("Items").Replace(&BoundItem{ID: 101, SKU: "new"}),
				"Append":  e.db.Model(&even).Association("Items").Append(&BoundItem{ID: 102, SKU: "new"}),
			} {
				if !errors.Is(err, gormplugin.ErrUnsupported) {
					t.Errorf("%s outside a transaction: %v", name, err)
				}
				if items := e.boundItems(t); len(items) != 2 {
					t.Fatalf("%s outside a transaction wrote: %v", name, items)
				}
			}
			// Replace in a transaction: the old item's order_id would become
			// NULL (a sharding key change); everything rolls back.
			err := e.db.Transaction(func(tx *gorm.DB) error {
				return tx.Model(&even).Association("Items").Replace(&BoundItem{ID: 103, SKU: "new"})
			})
			if !errors.Is(err, shardconf.ErrShardingKeyChange) {
				t.Fatalf("Replace in a transaction: %v", err)
			}
			if items := e.boundItems(t); len(items) != 2 || items[100].OrderID != 10 {
				t.Fatalf("refused Replace left: %v", items)
			}
			// Append in a transaction: the new item lands beside its order.
			if err := e.db.Transaction(func(tx *gorm.DB) error {
				return tx.Model(&even).Association("Items").Append(&BoundItem{ID: 104, SKU: "c"})
			}); err != nil {
				t.Fatalf("Append in a transaction: %v", err)
			}
			// Unscoped().Replace deletes the old items instead.
			if err := e.db.Transaction(func(tx *gorm.DB) error {
				return tx.Model(&even).Association("Items").Unscoped().Replace(&BoundItem{ID: 105, SKU: "d"})
			}); err != nil {
				t.Fatalf("Unscoped Replace in a transaction: %v", err)
			}
			items := e.boundItems(t)
			if len(items) != 2 || items[105].OrderID != 10 || items[110].OrderID != 11 {
				t.Fatalf("after Append and Unscoped Replace: %v", items)
			}
			// Moving item 110 (order 11, ds_1) to order 10 (ds_0) would
			// insert its id in ds_0 while it stays in ds_1: refused.
			moved := items[110]
			err = e.db.Transaction(func(tx *gorm.DB) error {
				return tx.Model(&even).Association("Items").Append(&moved)
			})
			if !errors.Is(err, shardconf.ErrShardingKeyChange) {
				t.Fatalf("Append of an item of an order in the other database: %v", err)
			}
			if items := e.boundItems(t); len(items) != 2 || items[110].OrderID != 11 {
				t.Fatalf("refused move left: %v", items)
			}
			// Save of an order with its (loaded) items keeps them in place.
			var back BoundOrder
			if err := e.db.Preload("Items").Where("id = ?", 11).Take(&back).Error; err != nil || len(back.Items) != 1 {
				t.Fatalf("load order 11: %+v %v", back, err)
			}
			back.Note = "saved"
			if err := e.db.Save(&back).Error; err != nil {
				t.Fatalf("save order with items: %v", err)
			}
			if items := e.boundItems(t); len(items) != 2 {
				t.Fatalf("after save with items: %v", items)
			}
		})
	}
}

// TestSkipDefaultTransactionAssociationRefusalWritesNothing: with
// SkipDefaultTransaction GORM saves a belongs-to owner before the row
// without a transaction; the owner's id then sets the row's user_id,
// which routes elsewhere than the row was routed, and the row is
// refused. The plugin runs such a create in a transaction of its own,
// so the owner is rolled back too.
func TestSkipDefaultTransactionAssociationRefusalWritesNothing(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := newTwoDS(t, be, "skiptx_"+be, func() *gorm.Config { return &gorm.Config{SkipDefaultTransaction: true} })
			if err := e.db.AutoMigrate(&OrderOwner{}); err != nil { // unsharded: ds_0
				t.Fatal(err)
			}
			users := func() int64 {
				var n int64
				if err := e.chk[0].Model(&OrderOwner{}).Count(&n).Error; err != nil {
					t.Fatal(err)
				}
				return n
			}
			err := e.db.Create(&OwnedOrder{Amount: 1, Owner: OrderOwner{ID: 1, Name: "odd"}}).Error
			if !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Fatalf("owner moving the row to ds_1: %v", err)
			}
			if n := users(); n != 0 || len(e.placement(t)) != 0 {
				t.Fatalf("refused create left %d users, %d orders", n, len(e.placement(t)))
			}
			o := OwnedOrder{Amount: 2, Owner: OrderOwner{ID: 2, Name: "even"}}
			if err := e.db.Create(&o).Error; err != nil {
				t.Fatalf("owner in the row's data source: %v", err)
			}
			if p := e.placement(t)[o.ID]; users() != 1 || p.UserID != 2 || p.at.DataSource != "ds_0" {
				t.Fatalf("after create with owner: %d users, order %+v at %s", users(), p.ShardedOrder, p.at)
			}
			// Without associations nothing changes: no transaction is begun.
			if err := e.db.Create(&ShardedOrder{UserID: 3}).Error; err != nil {
				t.Fatal(err)
			}
		})
	}
}
