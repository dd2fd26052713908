package difftest_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
)

// GOrder is the sharded model of the GORM reads.
type GOrder struct {
	ID      int64 `gorm:"primaryKey"`
	UserID  int64
	Status  *string
	K       *int64
	Amount  *float64
	Created *time.Time
}

// GORM reads through gormplugin over two SQLite data sources equal the
// one table's, or are refused: HAVING on a group column against a text
// argument (SQLite's affinity), times (refused), text orders, First/Last,
// Distinct Count, Pluck with Limit/Offset.
// gormSQLiteWorld is a sharded GORM over two SQLite data sources of two
// tables each and an unsharded oracle, both holding the same GOrders.
func gormSQLiteWorld(t *testing.T) (sharded, oracle *gorm.DB) {
	dir := t.TempDir()
	return gormWorld(t, func(n string) gorm.Dialector { return sqlite.Open(filepath.Join(dir, n+".db")) }, true)
}

// gormWorld is gormSQLiteWorld over the databases dial opens; binary
// declares their text binary (SQLite's BINARY, PostgreSQL's C; not
// MariaDB's default utf8mb4_general_ci, whose text orders are refused).
func gormWorld(t *testing.T, dial func(name string) gorm.Dialector, binary bool) (sharded, oracle *gorm.DB) {
	open := func(n string) *gorm.DB {
		db, err := gorm.Open(dial(n), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db0, db1, orc := open("mergeatk_gorm0"), open("mergeatk_gorm1"), open("mergeatk_gormo")
	p0, _ := db0.DB()
	p1, _ := db1.DB()
	cfg, err := shardconf.Parse([]byte(`
rules:
- !SHARDING
  tables:
    g_orders:
      actualDataNodes: ds_${0..1}.g_orders_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_id}}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
    by_id: {type: MOD, props: {sharding-count: 2}}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := []gormplugin.Option{gormplugin.WithRules(r), gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}),
		gormplugin.WithScatter()}
	if binary {
		opts = append(opts, gormplugin.WithBinaryCollation())
	}
	if err := db0.Use(gormplugin.New(nil, opts...)); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*gorm.DB{db0, orc} {
		if err := db.AutoMigrate(&GOrder{}); err != nil {
			t.Fatal(err)
		}
	}
	fillGOrders(t, db0, orc)
	return db0, orc
}

// fillGOrders writes the same 60 orders, with NULLs, into each database.
func fillGOrders(t *testing.T, dbs ...*gorm.DB) {
	sts := []string{"a", "B", "10", "9", "", "a "}
	base := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 60; i++ {
		o := GOrder{ID: int64(i + 1), UserID: int64(i % 4)}
		if i%5 != 0 {
			s := sts[i%len(sts)]
			o.Status = &s
		}
		if i%7 != 0 {
			k := int64(i % 5)
			o.K = &k
		}
		if i%11 != 0 {
			a := float64(i%9) / 4
			o.Amount = &a
		}
		if i%3 != 0 {
			c := base.Add(time.Duration(i%6) * time.Hour)
			o.Created = &c
		}
		for _, db := range dbs {
			if err := db.Create(&o).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// gres is a grouped GORM read's row.
type gres struct {
	K   *int64
	N   int64
	S   *float64
	A   *float64
	Mx  *string
	Cnt int64
}

// gormCases are the GORM reads compared; ordered: the result is a sequence.
var gormCases = []struct {
	name    string
	ordered bool
	q       func(db *gorm.DB) (any, error)
}{
	{"order created", true, func(db *gorm.DB) (any, error) {
		var out []GOrder
		return out, db.Order("created desc").Order("id").Find(&out).Error
	}},
	{"distinct created", false, func(db *gorm.DB) (any, error) {
		var out []*time.Time
		return out, db.Model(&GOrder{}).Distinct("created").Pluck("created", &out).Error
	}},
	{"group k", true, func(db *gorm.DB) (any, error) {
		var out []gres
		return out, db.Model(&GOrder{}).Select("k, COUNT(*) AS n, SUM(amount) AS s, AVG(amount) AS a, MAX(status) AS mx, COUNT(DISTINCT status) AS cnt").
			Group("k").Having("k > ?", "1").Order("k").Find(&out).Error
	}},
	{"group k having text", true, func(db *gorm.DB) (any, error) {
		var out []gres
		return out, db.Model(&GOrder{}).Select("k, COUNT(*) AS n").Group("k").Having("MAX(status) > ?", 5).Order("k").Find(&out).Error
	}},
	{"group cast", true, func(db *gorm.DB) (any, error) {
		var out []gres
		return out, db.Model(&GOrder{}).Select("CAST(k AS INTEGER) AS k, COUNT(*) AS n").Group("CAST(k AS INTEGER)").Having("CAST(k AS INTEGER) > ?", "2").Order("k").Find(&out).Error
	}},
	{"group cast text", true, func(db *gorm.DB) (any, error) {
		var out []gres
		return out, db.Model(&GOrder{}).Select("k, COUNT(*) AS n").Group("k").Having("CAST(MAX(status) AS TEXT) > ?", 5).Order("k").Find(&out).Error
	}},
	{"having avg", true, func(db *gorm.DB) (any, error) {
		var out []gres
		return out, db.Model(&GOrder{}).Select("k, COUNT(*) AS n, AVG(amount) AS a").Group("k").Having("AVG(amount) > ?", 0.9).Order("k").Find(&out).Error
	}},
	{"avg times two", true, func(db *gorm.DB) (any, error) {
		var out []gres
		return out, db.Model(&GOrder{}).Select("k, AVG(amount) * 2 AS a, SUM(amount) / COUNT(*) AS s").Group("k").Order("k").Find(&out).Error
	}},
	{"count groups", true, func(db *gorm.DB) (any, error) {
		var n int64
		return n, db.Model(&GOrder{}).Group("k").Count(&n).Error
	}},
	{"limit zero", true, func(db *gorm.DB) (any, error) {
		var out []GOrder
		return out, db.Order("id").Limit(0).Find(&out).Error
	}},
	{"offset beyond", true, func(db *gorm.DB) (any, error) {
		var out []GOrder
		return out, db.Order("id").Offset(1000).Limit(3).Find(&out).Error
	}},
	{"k desc then amount", true, func(db *gorm.DB) (any, error) {
		var out []GOrder
		return out, db.Order("k desc").Order("amount").Order("id").Find(&out).Error
	}},
	{"sum and max per user", true, func(db *gorm.DB) (any, error) {
		var out []gres
		return out, db.Model(&GOrder{}).Select("user_id AS k, SUM(k) AS n, MAX(amount) - MIN(amount) AS s").Group("user_id").Order("user_id").Find(&out).Error
	}},
	{"first by amount", true, func(db *gorm.DB) (any, error) {
		var out GOrder
		return out, db.Order("amount").First(&out).Error
	}},
	{"last", true, func(db *gorm.DB) (any, error) {
		var out GOrder
		return out, db.Where("amount > ?", 1).Last(&out).Error
	}},
	{"count distinct", true, func(db *gorm.DB) (any, error) {
		var n int64
		return n, db.Model(&GOrder{}).Distinct("k").Count(&n).Error
	}},
	{"pluck ordered", true, func(db *gorm.DB) (any, error) {
		var out []*float64
		return out, db.Model(&GOrder{}).Order("amount desc").Order("id").Limit(7).Offset(3).Pluck("amount", &out).Error
	}},
	{"status order", true, func(db *gorm.DB) (any, error) {
		var out []GOrder
		return out, db.Order("status").Order("id desc").Limit(15).Find(&out).Error
	}},
}

func TestGORMReadsOnSQLiteEqualOneTableOrAreRefused(t *testing.T) {
	db0, orc := gormSQLiteWorld(t)
	compareGORMReads(t, db0, orc)
}

// The same GORM reads on PostgreSQL and MariaDB.
func TestGORMReadsOnPostgreSQLAndMariaDBEqualOneTableOrAreRefused(t *testing.T) {
	db0, orc := gormWorld(t, func(n string) gorm.Dialector { return postgres.Open(dbtest.Postgres(t, n)) }, true)
	compareGORMReads(t, db0, orc)
	db0, orc = gormWorld(t, func(n string) gorm.Dialector { return mysql.Open(dbtest.MySQL(t, n)) }, false)
	compareGORMReads(t, db0, orc)
}

// compareGORMReads runs gormCases on db0 (sharded) and orc (one table).
func compareGORMReads(t *testing.T, db0, orc *gorm.DB) {
	for _, c := range gormCases {
		got, err := c.q(db0)
		want, werr := c.q(orc)
		if err != nil {
			if !errors.Is(err, gormplugin.ErrUnsupported) && werr == nil {
				t.Errorf("%s: %v, neither a refusal nor the database's error", c.name, err)
			}
			continue
		}
		g, w := fmt.Sprintf("%+v", deref(got)), fmt.Sprintf("%+v", deref(want))
		if !c.ordered {
			g, w = sortedText(got), sortedText(want)
		}
		if g != w || werr != nil {
			t.Errorf("DIFF %s:\n got  %s\n want %s %v", c.name, g, w, werr)
		}
	}
}

func deref(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return fmt.Sprintf("%+v", show1(rv))
	}
	var out []string
	for i := 0; i < rv.Len(); i++ {
		out = append(out, show1(rv.Index(i)))
	}
	return out
}

func show1(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return show1(v.Elem())
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			return t.String()
		}
		s := "{"
		for i := 0; i < v.NumField(); i++ {
			s += show1(v.Field(i)) + " "
		}
		return s + "}"
	}
	return fmt.Sprint(v.Interface())
}

func sortedText(v any) string {
	d := deref(v)
	if s, ok := d.([]string); ok {
		sort.Strings(s)
		return fmt.Sprint(s)
	}
	return fmt.Sprint(d)
}
