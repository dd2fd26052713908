package gormplugin_test

import (
	"database/sql"
	"errors"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// OrderPatch is a change set of another type than the model.
type OrderPatch struct {
	UserID int64
	Amount int
}

// OrderPtrPatch is a change set with pointer fields.
type OrderPtrPatch struct {
	UserID *int64
	Amount *int
}

// wantKeyChange asserts a refusal with shardconf.ErrShardingKeyChange
// naming sharded_orders.user_id.
func wantKeyChange(t *testing.T, what string, err error) {
	t.Helper()
	var re *shardconf.RouteError
	if !errors.Is(err, shardconf.ErrShardingKeyChange) || !errors.As(err, &re) || re.Table != "sharded_orders" || re.Column != "user_id" {
		t.Errorf("%s: err = %v; want ErrShardingKeyChange on sharded_orders.user_id", what, err)
	}
}

// TestUpdateRefusesShardingKeyChange: whatever API and Go type carry
// the change set, an UPDATE assigning user_id a value that routes to
// another database is refused and changes nothing.
func TestUpdateRefusesShardingKeyChange(t *testing.T) {
	eachBackend(t, "upd_key", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		o := orders[0] // user 0, in ds_0
		before := e.snapshot(t)
		db := e.db
		where := func() *gorm.DB { return db.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", o.UserID, o.ID) }
		loaded := o
		one := int64(1)
		for name, run := range map[string]func() error{
			"Updates(other struct)":  func() error { return where().Updates(OrderPatch{UserID: 1}).Error },
			"Updates(&other struct)": func() error { return where().Updates(&OrderPatch{UserID: 1, Amount: 5}).Error },
			"Table.Updates(patch)": func() error {
				return db.Table("sharded_orders").Where("user_id = ? AND id = ?", 0, o.ID).Updates(OrderPatch{UserID: 1}).Error
			},
			"Updates(map column)":     func() error { return where().Updates(map[string]any{"user_id": 1}).Error },
			"Updates(map field)":      func() error { return where().Updates(map[string]any{"UserID": 1}).Error },
			"Updates(map qualified)":  func() error { return where().Updates(map[string]any{"sharded_orders.user_id": 1}).Error },
			"Updates(map upper case)": func() error { return where().Updates(map[string]any{"USER_ID": 1}).Error },
			"Update(column)":          func() error { return where().Update("user_id", 1).Error },
			"Update(field)":           func() error { return where().Update("UserID", int32(1)).Error },
			"Update(quoted)":          func() error { return where().Update(`"user_id"`, 1).Error },
			"Update(backquoted)":      func() error { return where().Update("`user_id`", 1).Error },
			"Update(sql.NullInt64)":   func() error { return where().Update("user_id", sql.NullInt64{Int64: 1, Valid: true}).Error },
			"Update(NULL)":            func() error { return where().Update("user_id", nil).Error },
			"UpdateColumn":            func() error { return where().UpdateColumn("user_id", 1).Error },
			"UpdateColumns(map)":      func() error { return where().UpdateColumns(map[string]any{"user_id": 1}).Error },
			"UpdateColumns(patch)":    func() error { return where().UpdateColumns(OrderPatch{UserID: 1}).Error },
			"Updates(pointer patch)":  func() error { return where().Updates(OrderPtrPatch{UserID: &one}).Error },
			"Updates(map pointer)":    func() error { return where().Updates(map[string]any{"user_id": &one}).Error },
			"Update(gorm.Expr)":       func() error { return where().Update("user_id", gorm.Expr("user_id + 1")).Error },
			"Update(same-value Expr)": func() error { return where().Update("user_id", gorm.Expr("user_id")).Error },
			"Clauses(Set)": func() error {
				return where().Clauses(clause.Set{{Column: clause.Column{Name: "user_id"}, Value: 1}}).Updates(map[string]any{"amount": 1}).Error
			},
			"Model(&row).Updates(row)":  func() error { return db.Model(&loaded).Updates(ShardedOrder{UserID: 1}).Error },
			"Model(&row).Update":        func() error { return db.Model(&loaded).Where("user_id = ?", 0).Update("user_id", 3).Error },
			"Select(*).Updates(struct)": func() error { return where().Select("*").Updates(ShardedOrder{ID: o.ID, UserID: 1}).Error },
		} {
			err := run()
			switch name {
			case "Model(&row).Updates(row)": // the WHERE has the id only: which database holds the row?
				if !errors.Is(err, shardconf.ErrMissingShardingKey) && !errors.Is(err, shardconf.ErrShardingKeyChange) {
					t.Errorf("%s: %v; want a refusal", name, err)
				}
			case "Update(same-value Expr)", "Update(NULL)":
				if !errors.Is(err, shardconf.ErrShardingKeyChange) {
					t.Errorf("%s: %v; want ErrShardingKeyChange", name, err)
				}
			default:
				wantKeyChange(t, name, err)
			}
			if after := e.snapshot(t); after != before {
				t.Fatalf("%s changed the tables:\n%s\nwas\n%s", name, after, before)
			}
		}
	})
}

// TestUpdateMayAssignValueRoutingToSameTarget: user 2 is in user 0's
// database and the id keeps the table, so the row stays where it
// belongs; ShardingSphere allows this too.
func TestUpdateMayAssignValueRoutingToSameTarget(t *testing.T) {
	eachBackend(t, "upd_same", func(t *testing.T, e *twoDS) {
		o := e.seed(t)[0]
		if err := e.db.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 0, o.ID).Updates(OrderPatch{UserID: 2, Amount: 7}).Error; err != nil {
			t.Fatal(err)
		}
		p := e.placement(t)[o.ID]
		if p.UserID != 2 || p.Amount != 7 || p.at != e.targetOf(t, 0, o.ID) {
			t.Fatalf("row after update: %+v", p)
		}
		// A change set without sharding columns still routes by the WHERE.
		if err := e.db.Model(&ShardedOrder{}).Where("user_id = ? AND id = ?", 2, o.ID).Updates(OrderPatch{Amount: 8}).Error; err != nil {
			t.Fatal(err)
		}
		if p := e.placement(t)[o.ID]; p.Amount != 8 {
			t.Fatalf("row after second update: %+v", p)
		}
	})
}

// TestUpdateShardingKeyChangeOverSeveralTablesRefused: even a value of
// the same database is refused when the statement reaches several
// tables (which rows stay where cannot be proven).
func TestUpdateShardingKeyChangeOverSeveralTablesRefused(t *testing.T) {
	eachBackend(t, "upd_multi", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		before := e.snapshot(t)
		ids := []int64{orders[0].ID, orders[0].ID + 1} // both tables of ds_0
		err := e.db.Model(&ShardedOrder{}).Where("user_id = ? AND id IN ?", 0, ids).Update("user_id", 2).Error
		wantKeyChange(t, "update over two tables", err)
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused update changed the tables")
		}
	})
}

// TestUpdateOfModelWithZeroShardingValueRefused: db.Model(&row) whose
// user_id is zero (not loaded) gives the UPDATE only the row's id; the
// database holding it is unknown, so the statement is refused rather
// than run on user 0's database.
func TestUpdateOfModelWithZeroShardingValueRefused(t *testing.T) {
	eachBackend(t, "upd_zero", func(t *testing.T, e *twoDS) {
		o := e.seed(t)[1] // user 1
		before := e.snapshot(t)
		for name, err := range map[string]error{
			"Update":       e.db.Model(&ShardedOrder{ID: o.ID}).Update("amount", 5).Error,
			"Updates(map)": e.db.Model(&ShardedOrder{ID: o.ID}).Updates(map[string]any{"amount": 5}).Error,
			"UpdateColumn": e.db.Model(&ShardedOrder{ID: o.ID}).UpdateColumn("amount", 5).Error,
		} {
			if !errors.Is(err, shardconf.ErrMissingShardingKey) {
				t.Errorf("%s: %v; want ErrMissingShardingKey", name, err)
			}
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused updates changed the tables")
		}
	})
}

// TestModelKeyNarrowsOnlyTheLastOrBranch: GORM appends the model's key to
// the WHERE clause without parentheses, "id = a OR id = b AND id = b", so
// the row a matches too and must be reached (one table would update both).
func TestModelKeyNarrowsOnlyTheLastOrBranch(t *testing.T) {
	db := shardedSQLite(t)
	var a, b ShardedOrder
	for a.ID%4 == b.ID%4 {
		a, b = ShardedOrder{Amount: 1}, ShardedOrder{Amount: 2}
		if err := db.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Create(&b).Error; err != nil {
			t.Fatal(err)
		}
	}
	res := db.Model(&b).Where("id = ?", a.ID).Or("id = ?", b.ID).Update("amount", 7)
	if res.Error != nil || res.RowsAffected != 2 {
		t.Fatalf("update of a OR (b AND model b): %d rows, %v; want 2", res.RowsAffected, res.Error)
	}
	var got []ShardedOrder
	if err := db.Where("id IN ?", []int64{a.ID, b.ID}).Find(&got).Error; err != nil || len(got) != 2 || got[0].Amount != 7 || got[1].Amount != 7 {
		t.Fatalf("after update: %+v %v", got, err)
	}
	del := db.Where("id = ?", a.ID).Or("id = ?", b.ID).Delete(&b)
	if del.Error != nil || del.RowsAffected != 2 {
		t.Fatalf("delete of a OR (b AND model b): %d rows, %v; want 2", del.RowsAffected, del.Error)
	}
}

// TestUpdateOfLoadedModelRoutesByItsValues: db.Model(&row) with its key
// set routes by the row's sharding values; a row changed in memory is
// looked for and the UPDATE refused; a change set without a key (a
// global update) never routes by the values it writes.
func TestUpdateOfLoadedModelRoutesByItsValues(t *testing.T) {
	eachBackend(t, "upd_loaded", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		o := orders[1] // user 1, ds_1
		if err := e.db.Model(&o).Update("amount", 9).Error; err != nil {
			t.Fatalf("update of a loaded row: %v", err)
		}
		if p := e.placement(t)[o.ID]; p.Amount != 9 {
			t.Fatalf("after update: %+v", p)
		}
		before := e.snapshot(t)
		stale := o
		stale.UserID = 2 // ds_0
		if err := e.db.Model(&stale).Update("amount", 10).Error; !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Errorf("update of a row changed in memory: %v", err)
		}
		global := e.db.Session(&gorm.Session{AllowGlobalUpdate: true})
		if err := global.Updates(&ShardedOrder{UserID: 1, Amount: 11}).Error; err == nil {
			t.Errorf("global update writing user_id: no error")
		}
		if err := global.Model(&ShardedOrder{UserID: 1}).Update("amount", 12).Error; err == nil {
			t.Errorf("global update of a model without key: no error")
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused updates changed the tables:\n%s\nwas\n%s", after, before)
		}
	})
}
