package gormplugin_test

import (
	"context"
	"errors"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// A SQL template written into a builder statement (Where, Select, Order,
// Having, Update's expression, ON CONFLICT's, a created map's gorm.Expr) reaches the database as written: a sharded
// table it names is not routed. A stale unsharded copy of the logic table
// (left from before sharding) would answer the subquery, so a read or a
// write would act on rows that are not the sharded table's: refused
// before anything runs, on unsharded and sharded models alike.
func TestGormTemplateNamingAShardedTableIsRefusedBeforeAnythingRuns(t *testing.T) {
	eachHintBackend(t, "tmpl_sharded", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		// The stale copy, in the default data source, and rows the
		// subqueries would match there.
		if err := e.chk[0].Exec("CREATE TABLE hint_orders (id BIGINT PRIMARY KEY, user_id BIGINT)").Error; err != nil {
			t.Fatal(err)
		}
		if err := e.chk[0].Exec("INSERT INTO hint_orders (id, user_id) VALUES (1, 2)").Error; err != nil {
			t.Fatal(err)
		}
		if err := e.db.Create(&HintNote{ID: 1, Text: "kept"}).Error; err != nil {
			t.Fatal(err)
		}
		if err := e.db.Create(&HintUser{ID: 2, Name: "kept"}).Error; err != nil {
			t.Fatal(err)
		}
		for name, run := range map[string]func(db *gorm.DB) error{
			"Find of an unsharded model": func(db *gorm.DB) error {
				var ns []HintNote
				return db.Where("id IN (SELECT id FROM hint_orders)").Find(&ns).Error
			},
			"Update of an unsharded model": func(db *gorm.DB) error {
				return db.Model(&HintNote{}).Where("id IN (SELECT id FROM Hint_Orders)").Update("text", "changed").Error
			},
			"Find of a sharded model, Select": func(db *gorm.DB) error {
				var us []map[string]any
				return db.Model(&HintUser{}).Select("id, (SELECT count(*) FROM hint_orders) AS n").Where("id = ?", 2).Find(&us).Error
			},
			"Update of a sharded model": func(db *gorm.DB) error {
				return db.Model(&HintUser{}).Where("id = ? AND id IN (SELECT user_id FROM hint_orders)", 2).Update("name", "changed").Error
			},
			"Delete of a sharded model, Expr": func(db *gorm.DB) error {
				return db.Where("id = ?", 2).Where(gorm.Expr("id IN (SELECT user_id FROM \"hint_orders\")")).Delete(&HintUser{}).Error
			},
			"Create of an unsharded model from a map": func(db *gorm.DB) error {
				return db.Model(&HintNote{}).Create(map[string]any{"id": 2, "text": gorm.Expr("(SELECT max(id) FROM hint_orders)")}).Error
			},
			"Create of a sharded model, ON CONFLICT": func(db *gorm.DB) error {
				return db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}},
					DoUpdates: clause.Set{{Column: clause.Column{Name: "name"}, Value: gorm.Expr("(SELECT max(user_id) FROM hint_orders)")}}}).
					Create(&HintUser{ID: 2, Name: "dup"}).Error
			},
			"Order of a sharded model": func(db *gorm.DB) error {
				var us []HintUser
				return db.Where("id = ?", 2).Order("(SELECT max(id) FROM hint_orders)").Find(&us).Error
			},
		} {
			if err := run(e.db.WithContext(bg)); !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s with a template naming hint_orders: %v, want ErrUnsupported", name, err)
			}
		}
		var note HintNote
		if err := e.chk[0].First(&note, 1).Error; err != nil || note.Text != "kept" {
			t.Errorf("note 1 after refused statements: %+v, %v; want it unchanged", note, err)
		}
		var n int64
		if err := e.chk[0].Model(&HintUser{}).Table("hint_users").Where("id = 2 AND name = 'kept'").Count(&n).Error; err != nil || n != 1 {
			t.Errorf("user 2 after refused statements: %d rows kept, %v; want 1", n, err)
		}
		// A name used as a qualifier, or inside a string, is no table.
		var us []HintUser
		if err := e.db.Where("hint_users.id = ? AND name <> 'hint_orders'", 2).Find(&us).Error; err != nil || len(us) != 1 {
			t.Errorf("a template qualifying its own table: %v, %v; want user 2", us, err)
		}
	})
}

// Under a hint, a template naming a physical table of the hinted logic
// table would read it where the statement runs, not where the hint places
// the logic table; one naming an unsharded table the context hints would
// ignore that hint. Both are refused; without the hint the physical name
// is the caller's choice.
func TestHintGormTemplateNamingAnUnroutedTableOfTheHintIsRefused(t *testing.T) {
	eachHintBackend(t, "tmpl_hint", func(t *testing.T, e *twoDS) {
		bg := context.Background()
		ord := hintAt(bg, "hint_orders", 1, 1)
		if err := e.db.WithContext(ord).Create(&HintOrder{ID: 5, UserID: 2}).Error; err != nil {
			t.Fatal(err)
		}
		if err := e.db.Create(&HintUser{ID: 2, Name: "kept"}).Error; err != nil {
			t.Fatal(err)
		}
		// hint_users 2 is on ds_0; the hint places hint_orders on ds_1.
		physical := func(db *gorm.DB) error {
			return db.Model(&HintUser{}).Where("id = ? AND id IN (SELECT user_id FROM hint_orders_1)", 2).Update("name", "changed").Error
		}
		if err := physical(e.db.WithContext(ord)); !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Errorf("UPDATE with a template on hint_orders_1 under a hint for hint_orders: %v, want ErrUnsupported", err)
		}
		var us []HintUser
		err := e.db.WithContext(ord).Where("id IN (SELECT user_id FROM hint_orders_1)").Order("id").Find(&[]HintNote{}).Error
		if !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Errorf("unsharded Find with a template on hint_orders_1 under a hint for hint_orders: %v, want ErrUnsupported", err)
		}
		note := shardconf.WithHint(ord, "hint_notes", shardconf.Hint{Database: []any{1}})
		err = e.db.WithContext(note).Model(&HintOrder{}).Where("id IN (SELECT id FROM hint_notes)").Find(&[]HintOrder{}).Error
		if !errors.Is(err, shardconf.ErrUnusedHint) {
			t.Errorf("Find with a template on hint_notes under a hint for hint_notes: %v, want ErrUnusedHint", err)
		}
		if err := e.chk[0].Table("hint_users").Where("id = 2").Find(&us).Error; err != nil || len(us) != 1 || us[0].Name != "kept" {
			t.Errorf("user 2 after the refused UPDATE: %+v, %v; want name kept", us, err)
		}
		if err := physical(e.db.WithContext(bg)); err != nil {
			t.Errorf("the UPDATE without a hint: %v", err)
		}
	})
}
