package gormplugin_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// Values of every kind a model holds — times in several zones, decimals
// held as strings, unsigned integers above int64, soft-deleted rows,
// composite primary keys, renamed and embedded columns — merge over
// several tables into the one-table answer, or the read is refused.

const typedRules = `
rules:
- !SHARDING
  tables:
    typed_items:
      actualDataNodes: ds_${0..1}.typed_items_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_id}}
    typed_lines:
      actualDataNodes: ds_${0..1}.typed_lines_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}}
    typed_units:
      actualDataNodes: ds_${0..1}.typed_units_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_id}}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 2}}
    by_id: {type: MOD, props: {sharding-count: 2}}
    by_order: {type: MOD, props: {sharding-count: 2}}
`

// Money is embedded in TypedItem.
type Money struct {
	Price    string         `gorm:"type:decimal(12,3)"`
	Discount sql.NullString `gorm:"column:disc;type:decimal(8,2)"`
}

// TypedItem holds values of many kinds, and is soft-deleted.
type TypedItem struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	At     time.Time
	Money
	Ratio     float64
	Flag      bool
	Label     *string `gorm:"column:lbl;size:10"`
	DeletedAt gorm.DeletedAt
	Hooked    int `gorm:"-"`
}

// AfterFind counts GORM's hook calls.
func (i *TypedItem) AfterFind(*gorm.DB) error { i.Hooked++; return nil }

// TypedLine has a composite primary key.
type TypedLine struct {
	OrderID int64 `gorm:"primaryKey;autoIncrement:false"`
	Line    int   `gorm:"primaryKey;autoIncrement:false"`
	UserID  int64
	Amount  int
}

type typedEnv struct {
	be         string
	db, oracle *gorm.DB
}

func newTypedEnv(t *testing.T, be string) *typedEnv {
	t.Helper()
	d0 := dialectorFor(t, be, "gormatk_typed_"+be+"_ds0")
	d1 := dialectorFor(t, be, "gormatk_typed_"+be+"_ds1")
	e := &typedEnv{be: be, db: reopen(t, d0, nil), oracle: reopen(t, dialectorFor(t, be, "gormatk_typed_"+be+"_oracle"), nil)}
	db1 := reopen(t, d1, nil)
	p0, _ := e.db.DB()
	p1, _ := db1.DB()
	if err := e.db.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, typedRules)),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}), gormplugin.WithScatter())); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		if err := db.AutoMigrate(&TypedItem{}, &TypedLine{}); err != nil {
			t.Fatal(err)
		}
	}
	zones := []*time.Location{time.UTC, time.FixedZone("east", 2*3600), time.FixedZone("west", -5*3600)}
	// Exact in binary too: SQLite holds decimals as doubles, and a sum of
	// doubles depends on the order of adding.
	prices := []string{"10.500", "9.250", "100.000", "0.125", "10.5"}
	labels := []string{"x", "Y"}
	var items []TypedItem
	var lines []TypedLine
	for i := int64(1); i <= 24; i++ {
		it := TypedItem{ID: i, UserID: i % 4, Ratio: float64(i%5) / 4, // exact: a float sum is then the same in any order Flag: i%3 == 0,
			At:    time.Date(2024, 1, 1, 8+int(i%4), int(i%7)*5, 0, int(i%2)*500_000_000, zones[i%3]),
			Money: Money{Price: prices[i%5]}}
		if i%4 != 0 {
			it.Discount = sql.NullString{String: fmt.Sprintf("%d.%02d", i%3, (i%4)*25), Valid: true}
		}
		if i%3 != 0 {
			it.Label = &labels[i%2]
		}
		items = append(items, it)
		lines = append(lines, TypedLine{OrderID: 100 + i%6, Line: int(i), UserID: i % 4, Amount: int((i * 7) % 11)})
	}
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		for u := int64(0); u < 4; u++ { // one batch per user: one data source
			var bi []TypedItem
			var bl []TypedLine
			for k := range items {
				if items[k].UserID == u {
					bi = append(bi, items[k])
					bl = append(bl, lines[k])
				}
			}
			if err := errors.Join(db.Create(&bi).Error, db.Create(&bl).Error); err != nil {
				t.Fatal("create:", err)
			}
		}
		// Soft-delete some rows, one user at a time (a write routes to one data source).
		for _, it := range items {
			if it.ID%5 != 0 {
				continue
			}
			if err := db.Where("user_id = ? AND id = ?", it.UserID, it.ID).Delete(&TypedItem{}).Error; err != nil {
				t.Fatal("soft delete:", db == e.db, err)
			}
		}
	}
	return e
}

func (e *typedEnv) check(t *testing.T, c readCase) {
	t.Helper()
	(&readEnv{be: e.be, db: e.db, oracle: e.oracle}).check(t, c)
}

var typedCases = []readCase{
	// SQLite compares the stored text of a time, which the driver parses.
	{name: "times in several zones ordered", refused: []string{"sqlite"}, run: find[TypedItem](func(db *gorm.DB) *gorm.DB { return db.Order("at").Order("id").Limit(10) })},
	{name: "times in several zones ordered desc, all", refused: []string{"sqlite"}, run: func(db *gorm.DB) (any, error) {
		var ids []int64
		err := db.Model(&TypedItem{}).Order("at desc").Order("id").Pluck("id", &ids).Error
		return ids, err
	}},
	{name: "MIN and MAX of times in several zones", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := db.Model(&TypedItem{}).Select("user_id, min(at) as lo, max(at) as hi").Group("user_id").Order("user_id").Find(&out).Error
		return out, err
	}},
	{name: "decimals held as strings ordered", run: find[TypedItem](func(db *gorm.DB) *gorm.DB { return db.Order("price desc").Order("id").Limit(7) })},
	{name: "SUM, AVG, MIN, MAX of decimals into strings", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := db.Model(&TypedItem{}).Select("user_id, sum(price) as s, avg(price) as a, min(disc) as lo, max(disc) as hi, avg(disc) as ad, sum(disc) as sd").
			Group("user_id").Order("user_id").Find(&out).Error
		return out, err
	}},
	{name: "SUM and AVG of decimals without GROUP BY, scanned as strings", run: func(db *gorm.DB) (any, error) {
		var out struct{ S, A, D string }
		err := db.Model(&TypedItem{}).Select("sum(price) as s, avg(price) as a, avg(disc) as d").Scan(&out).Error
		return out, err
	}},
	{name: "AVG of a float and of a bool", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := db.Model(&TypedItem{}).Select("flag, avg(ratio) as r, sum(ratio) as s, count(*) as n").Group("flag").Order("flag").Find(&out).Error
		return out, err
	}},
	{name: "soft-deleted rows stay hidden", run: find[TypedItem](func(db *gorm.DB) *gorm.DB { return db.Order("id") })},
	{name: "soft-deleted rows counted out", run: count(func(db *gorm.DB) *gorm.DB { return db.Model(&TypedItem{}) })},
	{name: "soft-deleted rows out of aggregates", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := db.Model(&TypedItem{}).Select("user_id, count(*) as n, max(id) as hi").Group("user_id").Order("user_id").Find(&out).Error
		return out, err
	}},
	{name: "Unscoped shows soft-deleted rows", run: func(db *gorm.DB) (any, error) {
		var ids []int64
		err := db.Unscoped().Model(&TypedItem{}).Order("id desc").Limit(8).Pluck("id", &ids).Error
		return ids, err
	}},
	{name: "Unscoped Count", run: count(func(db *gorm.DB) *gorm.DB { return db.Unscoped().Model(&TypedItem{}) })},
	{name: "renamed and embedded columns ordered", run: find[TypedItem](func(db *gorm.DB) *gorm.DB { return db.Order("disc desc").Order("id").Limit(9) })},
	{name: "First on a composite primary key", run: func(db *gorm.DB) (any, error) {
		var l TypedLine
		err := db.First(&l).Error
		return l, err
	}},
	{name: "Last on a composite primary key", run: func(db *gorm.DB) (any, error) {
		var l TypedLine
		err := db.Last(&l).Error
		return l, err
	}},
	{name: "First on a composite primary key with a Select expression", run: func(db *gorm.DB) (any, error) {
		var m map[string]any
		err := db.Model(&TypedLine{}).Select("amount * 2 as d, order_id, line").First(&m).Error
		return m, err
	}},
	{name: "Last on a composite primary key with a Select expression", run: func(db *gorm.DB) (any, error) {
		m := map[string]any{}
		err := db.Model(&TypedLine{}).Select("-amount as d, line, order_id").Last(&m).Error
		return m, err
	}},
	{name: "FindInBatches on a composite primary key", run: func(db *gorm.DB) (any, error) {
		var got [][2]int64
		var ls []TypedLine
		err := db.FindInBatches(&ls, 5, func(*gorm.DB, int) error {
			for _, l := range ls {
				got = append(got, [2]int64{l.OrderID, int64(l.Line)})
			}
			return nil
		}).Error
		return got, err
	}},
	{name: "hooks run once per merged row", run: func(db *gorm.DB) (any, error) {
		var items []TypedItem
		err := db.Order("id").Find(&items).Error
		n := 0
		for _, it := range items {
			n += it.Hooked
		}
		return n, err
	}},
}

func TestTypedValuesMergeAsOneTableHoldsThem(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := newTypedEnv(t, be)
			for _, c := range typedCases {
				e.check(t, c)
			}
		})
	}
}

// PostgreSQL's NaN is larger than every number (and equal to itself) in
// ORDER BY, MIN, MAX and GROUP BY, for double precision and numeric alike.
func TestNaNAndInfinityMergeAsPostgreSQLOrdersThem(t *testing.T) {
	e := newTypedEnv(t, "postgres")
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		for _, u := range []struct {
			id, user int64
			col      string
			v        any
		}{{3, 3, "ratio", math.NaN()}, {6, 2, "ratio", math.NaN()}, {7, 3, "ratio", math.Inf(1)}, {9, 1, "ratio", math.Inf(-1)},
			{11, 3, "price", gorm.Expr("'NaN'::numeric")}, {13, 1, "price", gorm.Expr("'NaN'::numeric")}} {
			if err := db.Model(&TypedItem{}).Where("user_id = ? AND id = ?", u.user, u.id).Update(u.col, u.v).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []readCase{
		{name: "ORDER BY a double with NaN and infinities, limited", run: func(db *gorm.DB) (any, error) {
			var ids []int64
			err := db.Model(&TypedItem{}).Order("ratio desc").Order("id").Limit(6).Pluck("id", &ids).Error
			return ids, err
		}},
		{name: "ORDER BY a double with NaN ascending, all", run: func(db *gorm.DB) (any, error) {
			var ids []int64
			err := db.Model(&TypedItem{}).Order("ratio").Order("id").Pluck("id", &ids).Error
			return ids, err
		}},
		{name: "ORDER BY a numeric with NaN", run: func(db *gorm.DB) (any, error) {
			var ids []int64
			err := db.Model(&TypedItem{}).Order("price desc").Order("id").Limit(5).Pluck("id", &ids).Error
			return ids, err
		}},
		{name: "MIN, MAX, SUM, AVG, COUNT(DISTINCT) with NaN", run: func(db *gorm.DB) (any, error) {
			var out []map[string]any
			err := db.Model(&TypedItem{}).Select("user_id, min(ratio) as lo, max(ratio) as hi, max(price) as mp, min(price) as lp, sum(price) as sp, count(distinct ratio) as d").
				Group("user_id").Order("user_id").Find(&out).Error
			return fmt.Sprint(out), err
		}},
		{name: "GROUP BY a double with NaN", run: func(db *gorm.DB) (any, error) {
			var out []map[string]any
			err := db.Model(&TypedItem{}).Select("ratio, count(*) as n").Group("ratio").Order("ratio").Find(&out).Error
			return fmt.Sprint(out), err
		}},
		{name: "DISTINCT numeric with NaN", run: func(db *gorm.DB) (any, error) {
			var out []string
			err := db.Model(&TypedItem{}).Distinct("price").Order("price").Pluck("price", &out).Error
			return out, err
		}},
	} {
		e.check(t, c)
	}
}

// TypedUnit holds unsigned integers above int64 (MariaDB's BIGINT UNSIGNED).
type TypedUnit struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	U      uint64
	Small  uint8
}

// Unsigned values above int64 order, add up and compare as numbers.
func TestUnsignedAboveInt64MergeAsMariaDBHoldsThem(t *testing.T) {
	e := newTypedEnv(t, "mariadb")
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		if err := db.AutoMigrate(&TypedUnit{}); err != nil {
			t.Fatal(err)
		}
		for i := int64(1); i <= 16; i++ {
			u := TypedUnit{ID: i, UserID: i % 4, U: math.MaxUint64 - uint64(i*i*1000), Small: uint8(i * 15)}
			if i%3 == 0 {
				u.U = uint64(i)
			}
			if err := db.Create(&u).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []readCase{
		{name: "ORDER BY an unsigned above int64", run: find[TypedUnit](func(db *gorm.DB) *gorm.DB { return db.Order("u desc").Order("id").Limit(7) })},
		{name: "SUM, AVG, MIN, MAX of unsigned above int64", run: func(db *gorm.DB) (any, error) {
			var out []map[string]any
			err := db.Model(&TypedUnit{}).Select("user_id, sum(u) as s, avg(u) as a, min(u) as lo, max(u) as hi, sum(small) as ss, max(small) - min(small) as d").
				Group("user_id").Order("s desc").Find(&out).Error
			return out, err
		}},
		{name: "HAVING on an unsigned sum (an argument above int64 is refused)", refused: []string{"mariadb"}, run: func(db *gorm.DB) (any, error) {
			var out []map[string]any
			err := db.Model(&TypedUnit{}).Select("user_id, count(*) as n").Group("user_id").Having("sum(u) > ?", uint64(math.MaxUint64)).Order("user_id").Find(&out).Error
			return out, err
		}},
		{name: "DISTINCT unsigned into uint64", run: func(db *gorm.DB) (any, error) {
			var us []uint64
			err := db.Model(&TypedUnit{}).Distinct("u").Order("u").Pluck("u", &us).Error
			return us, err
		}},
	} {
		e.check(t, c)
	}
}
