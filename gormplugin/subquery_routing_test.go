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

// GORM builds a subquery as a DryRun and ignores its error. A subquery on
// a sharded model over several tables must therefore make the statement
// embedding it fail in the database — never read one table's rows as all
// of them (a count of one table's distinct values), nor an empty IN ()
// list, which SQLite answers with no rows.
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
	if err == nil {
		t.Errorf("Count over a subquery of every table = %d, no error; want the statement to fail", n)
	}
	var notes []PlainNote
	err = db.Where("id IN (?)", db.Model(&ShardedOrder{}).Select("id")).Find(&notes).Error
	if err == nil {
		t.Errorf("IN a subquery of every table = %+v, no error; want the statement to fail", notes)
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

// A subquery routed to one table by its sharding key is that table's SQL,
// and the statement embedding it gives the one-table answer.
func TestSubqueryOnOneTableRunsOnThatTable(t *testing.T) {
	db := shardedSQLite(t)
	o := ShardedOrder{UserID: 7, Amount: 70}
	if err := db.Create(&o).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&PlainNote{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&PlainNote{ID: o.ID, Text: "mine"}).Error; err != nil {
		t.Fatal(err)
	}
	var notes []PlainNote
	if err := db.Where("id IN (?)", db.Model(&ShardedOrder{}).Select("id").Where("id = ?", o.ID)).Find(&notes).Error; err != nil || len(notes) != 1 || notes[0].Text != "mine" {
		t.Fatalf("IN a one-table subquery = %+v, %v; want the one note", notes, err)
	}
}
