package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// TestUpsertRefusesShardingKeyChange: an upsert whose update part could
// leave a row where its values do not route, or whose row is already in
// another table (the insert would put the key in two tables), is refused
// with nothing written.
func TestUpsertRefusesShardingKeyChange(t *testing.T) {
	eachBackend(t, "ups_key", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		o := orders[0] // user 0, ds_0
		before := e.snapshot(t)
		onID := []clause.Column{{Name: "id"}}
		for name, run := range map[string]func() error{
			"DoUpdates constant": func() error {
				row := o
				return e.db.Clauses(clause.OnConflict{Columns: onID, DoUpdates: clause.Assignments(map[string]any{"user_id": 1})}).Create(&row).Error
			},
			"DoUpdates expression": func() error {
				row := o
				return e.db.Clauses(clause.OnConflict{Columns: onID, DoUpdates: clause.Assignments(map[string]any{"user_id": gorm.Expr("1")})}).Create(&row).Error
			},
			"DoUpdates other column": func() error {
				row := o
				return e.db.Clauses(clause.OnConflict{Columns: onID, DoUpdates: []clause.Assignment{{Column: clause.Column{Name: "user_id"}, Value: clause.Column{Table: "excluded", Name: "amount"}}}}).Create(&row).Error
			},
			"AssignmentColumns, row in another database": func() error {
				row := o
				row.UserID = 1
				return e.db.Clauses(clause.OnConflict{Columns: onID, DoUpdates: clause.AssignmentColumns([]string{"user_id", "amount"})}).Create(&row).Error
			},
			"UpdateAll, row in another database": func() error {
				row := o
				row.UserID = 3
				return e.db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error
			},
			"DoNothing, row in another database": func() error {
				row := o
				row.UserID = 1
				return e.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error
			},
		} {
			if err := run(); !errors.Is(err, shardconf.ErrShardingKeyChange) {
				t.Errorf("%s: err = %v; want ErrShardingKeyChange", name, err)
			}
			if after := e.snapshot(t); after != before {
				t.Fatalf("%s changed the tables:\n%s\nwas\n%s", name, after, before)
			}
		}
		// A plain INSERT of a key stored in the other database: refused as
		// the database refuses a duplicate key.
		row := o
		row.UserID = 1
		if err := e.db.Create(&row).Error; !errors.Is(err, gorm.ErrDuplicatedKey) {
			t.Errorf("create of a key stored elsewhere: %v; want gorm.ErrDuplicatedKey", err)
		}
		for name, err := range map[string]error{
			"map with model": e.db.Model(&ShardedOrder{}).Create(map[string]any{"id": o.ID, "user_id": 1, "amount": 5}).Error,
			"map on table":   e.db.Table("sharded_orders").Create(map[string]any{"id": o.ID, "user_id": 1, "amount": 5}).Error,
		} {
			if !errors.Is(err, gorm.ErrDuplicatedKey) {
				t.Errorf("create of a key stored elsewhere, %s: %v; want gorm.ErrDuplicatedKey", name, err)
			}
		}
		if after := e.snapshot(t); after != before {
			t.Fatalf("refused create changed the tables")
		}
	})
}

// TestUpsertUpdatesInPlace: upserts of a row of the same user, whose
// update part assigns user_id from the inserted row (the conflicting row
// has the same id, so the same sharding values), and upserts of new rows
// over several tables (each keeps its ON CONFLICT).
func TestUpsertUpdatesInPlace(t *testing.T) {
	eachBackend(t, "ups_ok", func(t *testing.T, e *twoDS) {
		orders := e.seed(t)
		o := orders[0]
		o.Amount = 42
		if err := e.db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&o).Error; err != nil {
			t.Fatalf("UpdateAll of the same user: %v", err)
		}
		o.Amount = 43
		if err := e.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoUpdates: clause.AssignmentColumns([]string{"user_id", "amount"})}).Create(&o).Error; err != nil {
			t.Fatalf("DoUpdates user_id=excluded.user_id: %v", err)
		}
		if p := e.placement(t)[o.ID]; p.ShardedOrder != o {
			t.Fatalf("after upserts: %+v", p.ShardedOrder)
		}
		// A batch over both tables of ds_0, one row conflicting: DO NOTHING
		// holds in each table.
		n1, n2 := o.ID+1_000_000, o.ID+1_000_001 // new keys, one per table
		batch := []ShardedOrder{{ID: o.ID, UserID: 0, Amount: -1}, {ID: n1, UserID: 0, Amount: 1}, {ID: n2, UserID: 2, Amount: 2}}
		if err := e.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&batch).Error; err != nil {
			t.Fatalf("DO NOTHING batch over two tables: %v", err)
		}
		p := e.placement(t)
		if p[o.ID].Amount != 43 || p[n1].Amount != 1 || p[n2].Amount != 2 || len(p) != 6 {
			t.Fatalf("after DO NOTHING batch: %v", p)
		}
	})
}
