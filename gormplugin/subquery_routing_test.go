package gormplugin_test

import (
	"errors"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// PlainNote is an unsharded table, for statements embedding a subquery on
// a sharded model.
type PlainNote struct {
	ID   int64 `gorm:"primaryKey"`
	Text string
}

// A subquery on a sharded model over several tables fails the statement
// embedding it with ErrUnsupported — never reads one table's rows as all
// of them (a count of one table's distinct values), nor an empty IN ()
// list, which SQLite answers with no rows. A DryRun over several tables
// (GORM builds subqueries so, and drops their errors) is refused too, and
// builds SQL that fails in any database.
func TestSubqueryOverSeveralTablesFailsTheStatementEmbeddingIt(t *testing.T) {
	db := shardedSQLite(t, gormplugin.WithScatter())
	orders := make([]ShardedOrder, 8)
	for i := range orders {
		orders[i] = ShardedOrder{UserID: int64(i), Amount: i}
	}
	if err := db.Create(&orders).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&PlainNote{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&PlainNote{ID: orders[0].ID, Text: "first"}).Error; err != nil {
		t.Fatal(err)
	}
	var n int64
	err := db.Table("(?) AS s", db.Model(&ShardedOrder{}).Distinct("user_id")).Count(&n).Error
	if !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Errorf("Count over a subquery of every table = %d, %v; want ErrUnsupported", n, err)
	}
	var notes []PlainNote
	err = db.Where("id IN (?)", db.Model(&ShardedOrder{}).Select("id")).Find(&notes).Error
	if !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Errorf("IN a subquery of every table = %+v, %v; want ErrUnsupported", notes, err)
	}
	sql := db.ToSQL(func(tx *gorm.DB) *gorm.DB { return tx.Model(&ShardedOrder{}).Find(&[]ShardedOrder{}) })
	if !strings.Contains(sql, "shardkey_refused") {
		t.Errorf("DryRun over several tables built %q; want the refusal's text", sql)
	}
	dry := db.Session(&gorm.Session{DryRun: true}).Model(&ShardedOrder{}).Find(&[]ShardedOrder{})
	if !errors.Is(dry.Error, gormplugin.ErrUnsupported) {
		t.Errorf("DryRun over several tables: %v, want ErrUnsupported", dry.Error)
	}
}

// A subquery on a sharded model is refused even when its sharding key
// names one table: GORM drops a subquery's own error, so the refusal must
// be the statement's.
func TestSubqueryOnShardedModelIsRefusedByTheStatementEmbeddingIt(t *testing.T) {
	db := shardedSQLite(t)
	o := ShardedOrder{UserID: 7, Amount: 70}
	if err := db.Create(&o).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&PlainNote{}); err != nil {
		t.Fatal(err)
	}
	var notes []PlainNote
	err := db.Where("id IN (?)", db.Model(&ShardedOrder{}).Select("id").Where("id = ?", o.ID)).Find(&notes).Error
	if !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Errorf("IN a one-table subquery: %v, want ErrUnsupported", err)
	}
	var n int64
	err = db.Table("(?) AS s", db.Table("sharded_orders_1").Select("id")).Count(&n).Error
	if !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Errorf("a subquery of a physical table: %v, want ErrUnsupported", err)
	}
	// A subquery on an unsharded model stays GORM's.
	if err := db.Create(&PlainNote{ID: 1, Text: "a"}).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Where("id IN (?)", db.Model(&PlainNote{}).Select("id")).Find(&notes).Error; err != nil || len(notes) != 1 {
		t.Errorf("IN an unsharded subquery = %+v, %v", notes, err)
	}
}
