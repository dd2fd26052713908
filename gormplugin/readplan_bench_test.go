package gormplugin_test

import (
	"path/filepath"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// benchDBs opens the sharded read_orders (two SQLite files, four tables)
// and one oracle table, each holding the same n rows.
func benchDBs(b *testing.B, n int) (sharded, one *gorm.DB) {
	b.Helper()
	open := func(name string) *gorm.DB {
		db, err := gorm.Open(sqlite.Open(filepath.Join(b.TempDir(), name+".db")), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			b.Fatal(err)
		}
		return db
	}
	sharded, ds1, one := open("ds0"), open("ds1"), open("one")
	p0, _ := sharded.DB()
	p1, _ := ds1.DB()
	parsed, err := shardconf.Parse([]byte(readRules))
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := shardconf.NewRouter(parsed)
	if err != nil {
		b.Fatal(err)
	}
	if err := sharded.Use(gormplugin.New(nil, gormplugin.WithRules(cfg), gormplugin.WithScatter(),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}))); err != nil {
		b.Fatal(err)
	}
	if err := sharded.AutoMigrate(&ReadOrder{}); err != nil {
		b.Fatal(err)
	}
	if err := one.AutoMigrate(&ReadOrder{}); err != nil {
		b.Fatal(err)
	}
	var all []ReadOrder
	for u := int64(0); u < 2; u++ {
		batch := make([]ReadOrder, n/2)
		for i := range batch {
			batch[i] = ReadOrder{UserID: u, Amount: (i * 7919) % 100000, Status: "s"}
		}
		for i := 0; i < len(batch); i += 500 { // Create: CreateInBatches opens its transaction on ds_0
			part := batch[i:min(i+500, len(batch))]
			if err := sharded.Create(&part).Error; err != nil {
				b.Fatal(err)
			}
		}
		all = append(all, batch...)
	}
	if err := one.CreateInBatches(&all, 500).Error; err != nil {
		b.Fatal(err)
	}
	return sharded, one
}

// BenchmarkScatterReadOrderLimit: ORDER BY ... LIMIT 10 over four tables
// of 2,500 rows (each returns 10 rows into a heap merge), against the same
// query on one table of 10,000 rows.
func BenchmarkScatterReadOrderLimit(b *testing.B) {
	sharded, one := benchDBs(b, 10000)
	for _, c := range []struct {
		name string
		db   *gorm.DB
	}{{"4-tables", sharded}, {"one-table", one}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var rows []ReadOrder
				if err := c.db.Order("amount desc").Order("id").Limit(10).Find(&rows).Error; err != nil || len(rows) != 10 {
					b.Fatal(len(rows), err)
				}
			}
		})
	}
}

// BenchmarkScatterReadGroupBy: GROUP BY with COUNT and AVG over four
// tables (AVG read as SUM and COUNT per table), against one table.
func BenchmarkScatterReadGroupBy(b *testing.B) {
	sharded, one := benchDBs(b, 10000)
	type agg struct {
		UserID int64
		N      int64
		Mean   float64
	}
	for _, c := range []struct {
		name string
		db   *gorm.DB
	}{{"4-tables", sharded}, {"one-table", one}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var out []agg
				err := c.db.Model(&ReadOrder{}).Select("user_id, count(*) as n, avg(amount) as mean").Group("user_id").Find(&out).Error
				if err != nil || len(out) != 2 {
					b.Fatal(len(out), err)
				}
			}
		})
	}
}
