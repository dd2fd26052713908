package gormplugin_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// DDL runs on every physical table: a hint in its context could only be
// ignored, so the migrator refuses it before any table is touched.
func TestMigratorRefusesDDLUnderAHint(t *testing.T) {
	eachHintBackend(t, "mighint", func(t *testing.T, e *twoDS) {
		for name, ctx := range map[string]context.Context{
			"table hint": hintAt(context.Background(), "hint_orders", 0, 1),
			"all tables": shardconf.WithHint(context.Background(), shardconf.AllTables, shardconf.Hint{Database: []any{1}}),
		} {
			db := e.db.WithContext(ctx)
			if err := db.Migrator().DropTable(&HintOrder{}); !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s: DropTable = %v, want ErrUnsupported", name, err)
			}
			if err := db.AutoMigrate(&HintOrder{}); !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s: AutoMigrate = %v, want ErrUnsupported", name, err)
			}
		}
		// Nothing was dropped: every physical table still answers.
		for i, chk := range e.chk {
			for _, tb := range []string{"hint_orders_0", "hint_orders_1"} {
				if !chk.Migrator().HasTable(tb) {
					t.Errorf("ds_%d.%s was dropped under a hint", i, tb)
				}
			}
		}
		// Without a hint the same migration runs.
		if err := e.db.AutoMigrate(&HintOrder{}); err != nil {
			t.Errorf("AutoMigrate without a hint: %v", err)
		}
	})
}
