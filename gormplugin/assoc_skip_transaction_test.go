package gormplugin_test

import (
	"context"
	"testing"

	"gorm.io/gorm"
)

// With SkipDefaultTransaction, a create or update of a has-many child
// (whose schema GORM gives a back-reference "_HintOrder_Items" holding the
// parent's field) runs without a panic, and a parent created with its
// children under hints lands with them in the hinted tables.
func TestSkipDefaultTransactionWritesOfAHasManyChildDoNotPanic(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDS(t, be, "skiptx_child_"+be, hintGormRules, func() *gorm.Config { return &gorm.Config{SkipDefaultTransaction: true} },
				[]any{&HintOrder{}, &HintItem{}, &HintMix{}, &HintUser{}, &HintDict{}, &HintNote{}})
			bg := context.Background()
			items := hintAt(bg, "hint_items", 1, 0)
			if err := e.db.WithContext(items).Create(&HintItem{ID: 50, HintOrderID: 1}).Error; err != nil {
				t.Fatal(err)
			}
			if err := e.db.WithContext(items).Model(&HintItem{ID: 50}).Update("sku", "u").Error; err != nil {
				t.Fatal(err)
			}
			both := hintAt(hintAt(bg, "hint_orders", 1, 1), "hint_items", 1, 0)
			o := HintOrder{ID: 3, UserID: 1, Items: []HintItem{{ID: 13}, {ID: 14}}}
			if err := e.db.WithContext(both).Create(&o).Error; err != nil {
				t.Fatal(err)
			}
			wantIn(t, e.where(t, "hint_orders"), 3, "ds_1.hint_orders_1")
			got := e.where(t, "hint_items")
			for _, id := range []int64{13, 14, 50} {
				wantIn(t, got, id, "ds_1.hint_items_0")
			}
		})
	}
}
