package gormplugin_test

import (
	"path/filepath"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
)

// Statements routed to one physical table, the plugin's most frequent
// path: sharded_orders (dbRules) in two SQLite files, synchronous off so
// that the plugin's share of the time is large. The observer benchmarks
// (observer_bench_test.go) run the same statements with an observer.

// routedBenchDB opens the two data sources and plugs in the plugin with
// opts, holding 64 rows of users 0 and 1.
func routedBenchDB(b *testing.B, opts ...gormplugin.Option) (*gorm.DB, []ShardedOrder) {
	b.Helper()
	open := func(name string) *gorm.DB {
		db, err := gorm.Open(sqlite.Open(filepath.Join(b.TempDir(), name+".db")+"?_pragma=synchronous(off)&_pragma=journal_mode(wal)"),
			&gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true})
		if err != nil {
			b.Fatal(err)
		}
		return db
	}
	db, db1 := open("ds0"), open("ds1")
	p0, _ := db.DB()
	p1, _ := db1.DB()
	b.Cleanup(func() { _, _ = p0.Close(), p1.Close() })
	all := append([]gormplugin.Option{gormplugin.WithRules(rulesOf(b, dbRules)),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1})}, opts...)
	if err := db.Use(gormplugin.New(nil, all...)); err != nil {
		b.Fatal(err)
	}
	if err := db.AutoMigrate(&ShardedOrder{}); err != nil {
		b.Fatal(err)
	}
	rows := make([]ShardedOrder, 64)
	for i := range rows {
		rows[i] = ShardedOrder{UserID: int64(i % 2), Amount: i}
		if err := db.Create(&rows[i]).Error; err != nil {
			b.Fatal(err)
		}
	}
	return db, rows
}

// benchPointRead: First by the whole sharding key, one physical table.
func benchPointRead(b *testing.B, opts ...gormplugin.Option) {
	db, rows := routedBenchDB(b, opts...)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := rows[i%len(rows)]
		i++
		var o ShardedOrder
		if err := db.Where("user_id = ? AND id = ?", r.UserID, r.ID).First(&o).Error; err != nil || o.ID != r.ID {
			b.Fatal(o, err)
		}
	}
}

// benchCreate: Create of one row, keyed by the plugin, one physical table.
func benchCreate(b *testing.B, opts ...gormplugin.Option) {
	db, _ := routedBenchDB(b, opts...)
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		o := ShardedOrder{UserID: i % 2, Amount: 1}
		i++
		if err := db.Create(&o).Error; err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoutedPointRead(b *testing.B) { benchPointRead(b) }
func BenchmarkRoutedCreate(b *testing.B)    { benchCreate(b) }
