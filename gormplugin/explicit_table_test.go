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

// TestWritesOnNamedPhysicalTableStayThere: UPDATE and DELETE on a named
// physical table run on it, in the database their conditions name; an
// UPDATE moving a row is refused as on the logic table.
func TestWritesOnNamedPhysicalTableStayThere(t *testing.T) {
	eachBackend(t, "phys_write", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		o := orders[1] // user 1, ds_1
		tbl := fmt.Sprintf("sharded_orders_%d", o.ID%2)
		if err := e.db.Table(tbl).Where("user_id = ? AND id = ?", 1, o.ID).Update("amount", 5).Error; err != nil {
			t.Fatal(err)
		}
		if p := e.placement(t)[o.ID]; p.Amount != 5 {
			t.Fatalf("update on the named table: %+v", p)
		}
		before := e.snapshot(t)
		err := e.db.Table(tbl).Where("user_id = ? AND id = ?", 1, o.ID).Update("user_id", 0)
		if !errors.Is(err.Error, shardconf.ErrShardingKeyChange) {
			t.Fatalf("update moving a row of a named table: %v", err.Error)
		}
		other := fmt.Sprintf("sharded_orders_%d", 1-o.ID%2)
		if err := e.db.Table(other).Where("user_id = ? AND id = ?", 1, o.ID).Update("amount", 6).Error; err != nil {
			t.Fatal(err)
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("writes on a table the row is not in changed it")
		}
		if res := e.db.Table(tbl).Where("user_id = ? AND id = ?", 1, o.ID).Delete(&ShardedOrder{}); res.Error != nil || res.RowsAffected != 1 {
			t.Fatalf("delete on the named table: %d %v", res.RowsAffected, res.Error)
		}
		if _, ok := e.placement(t)[o.ID]; ok {
			t.Fatal("row still there after delete")
		}
		var n int64
		if err := e.db.Table(tbl).Where("user_id = ?", 3).Count(&n).Error; err != nil {
			t.Fatalf("count on the named table: %v", err)
		}
	})
}
