package gormplugin_test

import (
	"fmt"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// MariaDB values whose order is not their text's (TIME beyond a day and
// negative, YEAR, BIT, FLOAT, DATETIME(6), DECIMAL(30,10), BINARY) order,
// group and aggregate as MariaDB does over several tables, or are refused.

// MyValue holds MariaDB values of types with their own order.
type MyValue struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	Tm     string  `gorm:"type:time(1)"`
	Yr     int     `gorm:"type:year"`
	Bt     []byte  `gorm:"type:bit(8)"`
	Fl     float32 `gorm:"type:float"`
	Dt     string  `gorm:"type:datetime(6)"`
	Dec    string  `gorm:"type:decimal(30,10)"`
	Bin    []byte  `gorm:"type:binary(3)"`
	Sm     int8    `gorm:"type:tinyint"`
}

func TestMariaDBTypesMergeInTheirOwnOrder(t *testing.T) {
	d0, d1 := dialectorFor(t, "mariadb", "gormatk_mytypes_ds0"), dialectorFor(t, "mariadb", "gormatk_mytypes_ds1")
	e := &readEnv{be: "mariadb", db: reopen(t, d0, nil), oracle: reopen(t, dialectorFor(t, "mariadb", "gormatk_mytypes_oracle"), nil)}
	p0, _ := e.db.DB()
	p1, _ := reopen(t, d1, nil).DB()
	if err := e.db.Use(gormplugin.New(nil, gormplugin.WithRules(twoByTwoRules(t, "my_values")),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}), gormplugin.WithScatter())); err != nil {
		t.Fatal(err)
	}
	tms := []string{"10:00:00", "-01:00:00", "100:00:00", "9:30:00", "-100:00:00", "00:00:00.5"}
	decs := []string{"1.5", "-0.0000000001", "12345678901234567890.1234567890", "10", "9.9999999999", "-12345678901234567890"}
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		if err := db.AutoMigrate(&MyValue{}); err != nil {
			t.Fatal(err)
		}
		for u := int64(0); u < 4; u++ {
			var vs []MyValue
			for i := u; i < 30; i += 4 {
				vs = append(vs, MyValue{ID: i, UserID: u, Tm: tms[i%6], Yr: 1990 + int(i*7%40), Bt: []byte{byte(i * 37)},
					Fl: float32(i%7) / 3, Dt: fmt.Sprintf("2024-01-01 10:00:%02d.%06d", i%3, i*99991%1000000), Dec: decs[i%6],
					Bin: []byte{byte(i % 3), byte(200 - i), 0}, Sm: int8(int(i*53%256) - 128)})
			}
			if err := db.Create(&vs).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	// MariaDB gives MIN/MAX of a BIT as bytes or as decimal digits.
	minMaxRefused := map[string][]string{"bt": {"*"}}
	for _, col := range []string{"tm", "yr", "bt", "fl", "dt", "`dec`", "bin", "sm"} {
		for _, c := range []readCase{
			{name: "ORDER BY " + col + " desc, limited", run: func(db *gorm.DB) (any, error) {
				var ids []int64
				err := db.Model(&MyValue{}).Order(col+" desc").Order("id").Limit(7).Pluck("id", &ids).Error
				return ids, err
			}},
			{name: "MIN, MAX, COUNT(DISTINCT) of " + col, refused: minMaxRefused[col], run: func(db *gorm.DB) (any, error) {
				var out []map[string]any
				err := db.Table("my_values").Select(fmt.Sprintf("user_id, min(%[1]s) as lo, max(%[1]s) as hi, count(distinct %[1]s) as d", col)).
					Group("user_id").Order("user_id").Find(&out).Error
				return fmt.Sprint(out), err
			}},
			{name: "GROUP BY " + col, run: func(db *gorm.DB) (any, error) {
				var out []map[string]any
				err := db.Table("my_values").Select(col + ", count(*) as n").Group(col).Find(&out).Error
				return fmt.Sprint(out), err
			}},
		} {
			e.check(t, c)
		}
	}
}
