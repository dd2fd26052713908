package sqlhook_test

import (
	"context"
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/shardconf"
)

// GORM opened on sqlhook hands db.WithContext's context to every
// statement, so hints route GORM's statements too, savepoints of a
// nested transaction included (under an AllTables hint, which refuses
// other statements naming no sharded table).
func TestHintGormOverSqlhookRoutesByWithContext(t *testing.T) {
	eachHintBackend(t, "sqlhook_hint_gorm", func(t *testing.T, e *hintEnv) {
		g := gormOver(t, txBackend(e.b), e.db)
		bg := context.Background()
		at := hintCtx(bg, "t_order", 1, 0)
		if err := g.WithContext(at).Create(&gormOrder{OrderID: 1, UserID: 1, Status: "g"}).Error; err != nil {
			t.Fatal(err)
		}
		var found []gormOrder
		if err := g.WithContext(at).Where("user_id = ?", 1).Find(&found).Error; err != nil || len(found) != 1 || found[0].OrderID != 1 {
			t.Errorf("Find under the row's hint: %+v, %v; want order 1", found, err)
		}
		if err := g.WithContext(bg).Create(&gormOrder{OrderID: 2, UserID: 1}).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("Create without a hint: %v, want ErrMissingShardingKey", err)
		}
		all := shardconf.WithHint(bg, shardconf.AllTables, shardconf.Hint{Database: []any{1}})
		allOrd := shardconf.WithHint(all, "t_order", shardconf.Hint{Table: []any{1}})
		err := g.WithContext(allOrd).Transaction(func(tx *gorm.DB) error {
			err := tx.Transaction(func(tx2 *gorm.DB) error {
				if err := tx2.Create(&gormOrder{OrderID: 3, UserID: 1, Status: "undone"}).Error; err != nil {
					return err
				}
				return errUndo
			})
			if !errors.Is(err, errUndo) {
				t.Errorf("nested transaction: %v, want errUndo", err)
			}
			return tx.Create(&gormOrder{OrderID: 4, UserID: 1, Status: "kept"}).Error
		})
		if err != nil {
			t.Fatal(err)
		}
		got := e.placed(t, "t_order", "order_id")
		wantAt(t, got, 1, "ds_1.t_order_0")
		wantAt(t, got, 4, "ds_1.t_order_1")
		if len(got) != 2 {
			t.Errorf("rows %v, want orders 1 and 4", got)
		}
	})
}
