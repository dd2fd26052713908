package gormplugin_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// TestCreateInNamedPhysicalTableMustRouteThere: db.Table("sharded_orders_1")
// names a physical table; a row goes into it only if its sharding values
// route there (in their own database), never into a table they do not
// route to.
func TestCreateInNamedPhysicalTableMustRouteThere(t *testing.T) {
	eachBackend(t, "phys_create", func(t *testing.T, e *twoDS) {
		before := e.snapshot(t)
		const id = 1_000_001 // table 1
		for _, row := range []ShardedOrder{
			{ID: id, UserID: 1, Amount: 1},     // ds_1.sharded_orders_1: the right table, another database
			{ID: id + 1, UserID: 0, Amount: 2}, // ds_0.sharded_orders_0
		} {
			if err := e.db.Table("sharded_orders_1").Create(&row).Error; row.UserID == 1 && err != nil {
				t.Fatalf("create of a row routing to ds_1.sharded_orders_1: %v", err)
			} else if row.UserID == 0 && !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Fatalf("create in sharded_orders_1 of a row routing to sharded_orders_0: %v", err)
			}
		}
		p := e.placement(t)
		if len(p) != 1 || p[id].at != (shardconf.Target{DataSource: "ds_1", Table: "sharded_orders_1"}) {
			t.Fatalf("after creates in a named table: %v (before: %s)", p, before)
		}
		// The name in another case is the same table (SQLite and MySQL
		// may read it so): checked alike.
		upper := ShardedOrder{ID: id + 5, UserID: 0} // ds_0.sharded_orders_0
		if err := e.db.Table("SHARDED_ORDERS_1").Create(&upper).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Fatalf("create in SHARDED_ORDERS_1 of a row routing to sharded_orders_0: %v", err)
		}
		upper = ShardedOrder{ID: id + 7, UserID: 1} // ds_1.sharded_orders_0
		if err := e.db.Table("Sharded_Orders_0").Create(&upper).Error; err != nil {
			t.Fatalf("create in Sharded_Orders_0 of a row routing there: %v", err)
		}
		if p := e.placement(t); len(p) != 2 || p[id+7].at != (shardconf.Target{DataSource: "ds_1", Table: "sharded_orders_0"}) {
			t.Fatalf("after creates in a differently spelled table: %v", p)
		}
		del := e.db.Table("SHARDED_ORDERS_0").Where("user_id = ? AND id = ?", 1, id+7).Delete(&ShardedOrder{})
		if del.Error != nil || del.RowsAffected != 1 {
			t.Fatalf("delete: %d %v", del.RowsAffected, del.Error)
		}
		// A batch with one row of another table: refused whole.
		batch := []ShardedOrder{{ID: id + 2, UserID: 1}, {ID: id + 3, UserID: 1}}
		if err := e.db.Table("sharded_orders_1").Create(&batch).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Fatalf("batch with a row of another table: %v", err)
		}
		if len(e.placement(t)) != 1 {
			t.Fatal("refused batch wrote rows")
		}
	})
}

// TestStatementsOnNamedPhysicalTableRunOnlyWhereTheyRoute: UPDATE,
// DELETE and SELECT on a named physical table run as on the logic table
// when their conditions route to that table alone, and are refused
// otherwise (on the named table they would miss the row and answer
// differently from the logic table); an UPDATE moving a row is refused as
// on the logic table.
func TestStatementsOnNamedPhysicalTableRunOnlyWhereTheyRoute(t *testing.T) {
	eachBackend(t, "phys_write", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		o := orders[1] // user 1, ds_1
		tbl := fmt.Sprintf("sharded_orders_%d", o.ID%2)
		other := fmt.Sprintf("sharded_orders_%d", 1-o.ID%2)
		if err := e.db.Table(tbl).Where("user_id = ? AND id = ?", 1, o.ID).Update("amount", 5).Error; err != nil {
			t.Fatal(err)
		}
		if p := e.placement(t)[o.ID]; p.Amount != 5 {
			t.Fatalf("update on the named table: %+v", p)
		}
		var back ShardedOrder
		if err := e.db.Table(tbl).Where("user_id = ? AND id = ?", 1, o.ID).Take(&back).Error; err != nil || back.Amount != 5 {
			t.Fatalf("read on the named table: %+v %v", back, err)
		}
		before := e.snapshot(t)
		err := e.db.Table(tbl).Where("user_id = ? AND id = ?", 1, o.ID).Update("user_id", 0).Error
		if !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Fatalf("update moving a row of a named table: %v", err)
		}
		for name, err := range map[string]error{
			"update": e.db.Table(other).Where("user_id = ? AND id = ?", 1, o.ID).Update("amount", 6).Error,
			"delete": e.db.Table(other).Where("user_id = ? AND id = ?", 1, o.ID).Delete(&ShardedOrder{}).Error,
			"read":   e.db.Table(other).Where("user_id = ? AND id = ?", 1, o.ID).Take(&back).Error,
		} {
			if !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s on a table the conditions do not route to: %v", name, err)
			}
		}
		var n int64
		if err := e.db.Table(tbl).Where("user_id = ?", 1).Count(&n).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("count on the named table without its key: %d %v", n, err)
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused statements changed the tables")
		}
		if res := e.db.Table(tbl).Where("user_id = ? AND id = ?", 1, o.ID).Delete(&ShardedOrder{}); res.Error != nil || res.RowsAffected != 1 {
			t.Fatalf("delete on the named table: %d %v", res.RowsAffected, res.Error)
		}
		if _, ok := e.placement(t)[o.ID]; ok {
			t.Fatal("row still there after delete")
		}
	})
}
