package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/gormplugin"
)

// JOINs of binding tables and Preload, with Order, Limit, Group and Count,
// merge over several tables into the one-table answer.

// JoinedOrder and JoinedItem are binding tables (boundTwoSourceRules).
type JoinedOrder struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	Amount int
	Items  []JoinedItem `gorm:"foreignKey:OrderID"`
}

func (JoinedOrder) TableName() string { return "bound_orders" }

// JoinedItem belongs to a JoinedOrder.
type JoinedItem struct {
	ID      int64 `gorm:"primaryKey;autoIncrement:false"`
	OrderID int64
	Qty     int
}

func (JoinedItem) TableName() string { return "bound_items" }

func newJoinedEnv(t *testing.T, be string) *readEnv {
	t.Helper()
	d0 := dialectorFor(t, be, "gormatk_join_"+be+"_ds0")
	d1 := dialectorFor(t, be, "gormatk_join_"+be+"_ds1")
	e := &readEnv{be: be, db: reopen(t, d0, nil), oracle: reopen(t, dialectorFor(t, be, "gormatk_join_"+be+"_oracle"), nil)}
	db1 := reopen(t, d1, nil)
	p0, _ := e.db.DB()
	p1, _ := db1.DB()
	if err := e.db.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, boundTwoSourceRules)),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}), gormplugin.WithScatter())); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		if err := db.AutoMigrate(&JoinedOrder{}, &JoinedItem{}); err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < 12; i++ {
			o := JoinedOrder{ID: 10 + i, Amount: int(i % 4)}
			items := []JoinedItem{{ID: 100 + 2*i, OrderID: o.ID, Qty: int(i*7) % 5}, {ID: 101 + 2*i, OrderID: o.ID, Qty: int(i*3) % 6}}
			if err := errors.Join(db.Omit("Items").Create(&o).Error, db.Create(&items).Error); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e
}

var joinedCases = []readCase{
	{name: "JOIN ordered by the joined table's column, limited", run: maps(func(db *gorm.DB) *gorm.DB {
		return db.Table("bound_orders").Select("bound_orders.id, bound_items.qty").
			Joins("JOIN bound_items ON bound_items.order_id = bound_orders.id").Order("bound_items.qty desc, bound_items.id").Limit(5)
	})},
	{name: "JOIN grouped by the order's column", run: maps(func(db *gorm.DB) *gorm.DB {
		return db.Table("bound_orders").Select("bound_orders.amount, count(*) as n, sum(bound_items.qty) as q, max(bound_items.qty) as hi").
			Joins("JOIN bound_items ON bound_items.order_id = bound_orders.id").Group("bound_orders.amount").Order("q desc, bound_orders.amount")
	})},
	{name: "JOIN with a joined column selected unqualified by clause.Column, ordered by the logic table's", run: maps(func(db *gorm.DB) *gorm.DB {
		return db.Table("bound_orders").Clauses(clause.Select{Columns: []clause.Column{{Table: "bound_items", Name: "id"}, {Table: "bound_orders", Name: "amount"}}}).
			Joins("JOIN bound_items ON bound_items.order_id = bound_orders.id").Order("bound_orders.id desc").Order("bound_items.id").Limit(4)
	})},
	{name: "JOIN grouped by the joined table's column", run: maps(func(db *gorm.DB) *gorm.DB {
		return db.Table("bound_orders").Select("bound_items.qty, count(*) as n, max(bound_orders.amount) as m").
			Joins("JOIN bound_items ON bound_items.order_id = bound_orders.id").Group("bound_items.qty").Order("bound_items.qty desc")
	})},
	{name: "JOIN counted", run: count(func(db *gorm.DB) *gorm.DB {
		return db.Table("bound_orders").Joins("JOIN bound_items ON bound_items.order_id = bound_orders.id").Where("bound_items.qty > ?", 1)
	})},
	{name: "JOIN with DISTINCT", run: maps(func(db *gorm.DB) *gorm.DB {
		return db.Table("bound_orders").Distinct("bound_orders.amount").
			Joins("JOIN bound_items ON bound_items.order_id = bound_orders.id").Where("bound_items.qty > ?", 2).Order("bound_orders.amount")
	})},
	{name: "Preload with Order and Limit on the association", run: func(db *gorm.DB) (any, error) {
		var os []JoinedOrder
		err := db.Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("qty desc").Order("id").Limit(5) }).Order("id").Find(&os).Error
		return os, err
	}},
	{name: "Preload beside Order and Limit of the parents", run: func(db *gorm.DB) (any, error) {
		var os []JoinedOrder
		err := db.Preload("Items", func(db *gorm.DB) *gorm.DB { return db.Order("id") }).Order("amount desc").Order("id").Limit(3).Offset(2).Find(&os).Error
		return os, err
	}},
}

func TestJoinsAndPreloadOverSeveralTablesGiveTheSingleTableAnswer(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := newJoinedEnv(t, be)
			for _, c := range joinedCases {
				e.check(t, c)
			}
		})
	}
}
