package gormplugin_test

import (
	"errors"
	"sort"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
)

// TestRouteScatterReadAcrossDataSources: with WithScatter, a read whose
// conditions leave the data source open runs on every table of both
// databases, each on its own pool, and merges (rows, counts, ORDER BY
// with LIMIT/OFFSET); the same read inside a transaction, and any write
// spanning both, is refused before anything runs.
func TestRouteScatterReadAcrossDataSources(t *testing.T) {
	open := func(name string) *gorm.DB {
		db, err := gorm.Open(postgres.Open(dbtest.Postgres(t, name)), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db0, db1 := open("gormplugin_scatter_ds0"), open("gormplugin_scatter_ds1")
	pool0, _ := db0.DB()
	pool1, _ := db1.DB()
	defer pool1.Close()
	defer pool0.Close()
	pools := map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": pool1}
	if err := db0.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, dbRules)), gormplugin.WithDataSources(pools),
		gormplugin.WithScatter())); err != nil {
		t.Fatal(err)
	}
	if err := db0.AutoMigrate(&ShardedOrder{}); err != nil {
		t.Fatal(err)
	}
	var amounts []int
	for u := int64(0); u < 4; u++ {
		for i := 0; i < 5; i++ {
			o := ShardedOrder{UserID: u, Amount: int(u)*100 + i}
			if err := db0.Create(&o).Error; err != nil {
				t.Fatal(err)
			}
			amounts = append(amounts, o.Amount)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(amounts)))

	var n int64
	if err := db0.Model(&ShardedOrder{}).Where("amount >= ?", 0).Count(&n).Error; err != nil || n != 20 {
		t.Fatalf("count over both databases: %d, %v; want 20", n, err)
	}
	var all []ShardedOrder
	if err := db0.Where("amount >= ?", 0).Find(&all).Error; err != nil || len(all) != 20 {
		t.Fatalf("find over both databases: %d rows, %v", len(all), err)
	}
	users := map[int64]int{}
	for _, o := range all {
		users[o.UserID]++
	}
	if len(users) != 4 {
		t.Errorf("rows of users %v, want all four", users)
	}
	var top []ShardedOrder
	if err := db0.Order("amount desc").Offset(2).Limit(5).Find(&top).Error; err != nil || len(top) != 5 {
		t.Fatalf("ordered page over both databases: %d rows, %v", len(top), err)
	}
	for i, o := range top {
		if o.Amount != amounts[2+i] {
			t.Fatalf("row %d of the page: amount %d, want %d (%+v)", i, o.Amount, amounts[2+i], top)
		}
	}
	var first ShardedOrder
	if err := db0.Where("amount = ?", 301).First(&first).Error; err != nil || first.UserID != 3 {
		t.Fatalf("First over both databases: %+v, %v", first, err)
	}

	// Inside a transaction: refused, the transaction stays in one database.
	err := db0.Transaction(func(tx *gorm.DB) error {
		var rows []ShardedOrder
		return tx.Where("amount >= ?", 0).Find(&rows).Error
	})
	if !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Fatalf("read across databases in a transaction: %v, want ErrUnsupported", err)
	}
	// A write spanning both: refused, nothing changed.
	err = db0.Model(&ShardedOrder{}).Where("amount >= ?", 0).Update("amount", 0).Error
	if !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Fatalf("update across databases: %v, want ErrUnsupported", err)
	}
	if err := db0.Model(&ShardedOrder{}).Where("amount = ?", 0).Count(&n).Error; err != nil || n != 1 { // user 0's first order
		t.Fatalf("after the refused update: %d rows with amount 0, %v; want 1", n, err)
	}
}
