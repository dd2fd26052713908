package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/gormplugin"
)

// TestTableExpressionNamingPhysicalTableIsRefused: db.Table with an alias
// or a subquery over a physical table ("sharded_orders_1 AS o") left
// GORM's statement table as the alias, which is no sharded table: the
// statement ran unrouted on the default data source, and an UPDATE of
// user_id there left the row in a table its values do not route to. Such
// statements, and joins naming a physical table, are refused, writes and
// reads alike (a read would answer from the default data source's table
// only).
func TestTableExpressionNamingPhysicalTableIsRefused(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDSNamed(t, be, "gormplugin_tblexpr_"+be, dbRules, nil, []any{&ShardedOrder{}})
			var o ShardedOrder
			for placed := false; !placed; { // a row of user 0 in ds_0.sharded_orders_1
				o = ShardedOrder{UserID: 0}
				if err := e.db.Create(&o).Error; err != nil {
					t.Fatal(err)
				}
				placed = o.ID%2 == 1
			}
			before := e.snapshot(t)
			for _, tbl := range []string{"sharded_orders_1 AS o", "sharded_orders_1 o", "(SELECT * FROM sharded_orders_1) AS o"} {
				if err := e.db.Table(tbl).Where("id = ?", o.ID).Update("user_id", 1).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
					t.Errorf("update of %s: %v, want ErrUnsupported", tbl, err)
				}
				if err := e.db.Table(tbl).Where("id = ?", o.ID).Delete(&ShardedOrder{}).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
					t.Errorf("delete from %s: %v, want ErrUnsupported", tbl, err)
				}
				if err := e.db.Table(tbl).Create(map[string]any{"id": o.ID + 2, "user_id": 1, "amount": 0}).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
					t.Errorf("create in %s: %v, want ErrUnsupported", tbl, err)
				}
				var n int64
				if err := e.db.Table(tbl).Where("id = ?", o.ID).Count(&n).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
					t.Errorf("count of %s: %v, want ErrUnsupported", tbl, err)
				}
			}
			var n int64
			err := e.db.Table("plain_table").Joins("JOIN sharded_orders_1 ON sharded_orders_1.id = plain_table.id").Count(&n).Error
			if !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("join of a physical table: %v, want ErrUnsupported", err)
			}
			err = e.db.Table("plain_table").Clauses(clause.Expr{SQL: "1 = 1"}).Count(&n).Error
			if errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("a statement on an unsharded table was refused: %v", err)
			}
			if after := e.snapshot(t); after != before {
				t.Fatalf("refused statements changed the tables:\n%s\n%s", before, after)
			}
		})
	}
}
