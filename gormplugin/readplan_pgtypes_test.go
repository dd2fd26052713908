package gormplugin_test

import (
	"fmt"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// PostgreSQL values whose order is not their text's (time with time zone,
// arrays, inet, bit strings, uuid, numeric of any scale) order, group and
// aggregate as PostgreSQL does over several tables, or are refused.

// PgValue holds PostgreSQL values of types with their own order.
type PgValue struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	Tz     string `gorm:"type:timetz"`
	Arr    string `gorm:"type:int[]"`
	Net    string `gorm:"type:inet"`
	Bits   string `gorm:"type:varbit"`
	U      string `gorm:"type:uuid"`
	Num    string `gorm:"type:numeric"`
	Ch     string `gorm:"type:\"char\""`
	D      string `gorm:"type:date"`
	Ts     string `gorm:"type:timestamptz"`
}

func TestPostgreSQLTypesMergeInTheirOwnOrder(t *testing.T) {
	d0, d1 := dialectorFor(t, "postgres", "gormatk_pgtypes_ds0"), dialectorFor(t, "postgres", "gormatk_pgtypes_ds1")
	e := &readEnv{be: "postgres", db: reopen(t, d0, nil), oracle: reopen(t, dialectorFor(t, "postgres", "gormatk_pgtypes_oracle"), nil)}
	p0, _ := e.db.DB()
	p1, _ := reopen(t, d1, nil).DB()
	if err := e.db.Use(gormplugin.New(nil, gormplugin.WithRules(twoByTwoRules(t, "pg_values")),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}), gormplugin.WithScatter())); err != nil {
		t.Fatal(err)
	}
	tzs := []string{"10:00:00+02", "09:00:00+00", "08:30:00-01", "23:00:00+05", "10:00:00+00"}
	arrs := []string{"{1,2}", "{1,10}", "{2}", "{1,2,3}", "{9}", "{}"}
	nets := []string{"10.0.0.1", "9.0.0.1", "10.0.0.1/8", "::1", "192.168.0.1"}
	bits := []string{"1", "01", "10", "001", "1000"}
	nums := []string{"1.0", "1.00", "10", "9.5", "-0.0", "100.25", "2"}
	for _, db := range []*gorm.DB{e.db, e.oracle} {
		if err := db.AutoMigrate(&PgValue{}); err != nil {
			t.Fatal(err)
		}
		for u := int64(0); u < 4; u++ {
			var vs []PgValue
			for i := u; i < 30; i += 4 {
				vs = append(vs, PgValue{ID: i, UserID: u, Tz: tzs[i%5], Arr: arrs[i%6], Net: nets[i%5], Bits: bits[i%5],
					U: fmt.Sprintf("%08x-0000-4000-8000-%012x", (i*2654435761)%(1<<32), i), Num: nums[i%7], Ch: string(rune('A' + i%3*32 + i%5)),
					D: fmt.Sprintf("2024-%02d-%02d", 1+i%12, 1+i%28), Ts: fmt.Sprintf("2024-01-01 %02d:00:00%+03d", i%24, (i%5)-2)})
			}
			if err := db.Create(&vs).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	// The merge does not order timetz, arrays and inet: refused. "char"
	// compares as text in the default collation: refused without the option.
	refused := map[string][]string{"tz": {"*"}, "arr": {"*"}, "net": {"*"}, "ch": {"*"}}
	groupRefused := map[string][]string{"tz": {"*"}, "arr": {"*"}, "net": {"*"}} // equality of "char" is bytewise
	noMinMax := map[string]bool{"bits": true, "u": true}                         // PostgreSQL 15 has no min(uuid), min(varbit)
	for _, col := range []string{"tz", "arr", "net", "bits", "u", "num", "ch", "d", "ts"} {
		agg := fmt.Sprintf("user_id, min(%[1]s) as lo, max(%[1]s) as hi, count(distinct %[1]s) as d", col)
		if noMinMax[col] {
			agg = fmt.Sprintf("user_id, count(distinct %[1]s) as d", col)
		}
		for _, c := range []readCase{
			{name: "ORDER BY " + col + " desc, limited", refused: refused[col], run: func(db *gorm.DB) (any, error) {
				var ids []int64
				err := db.Model(&PgValue{}).Order(col+" desc").Order("id").Limit(7).Pluck("id", &ids).Error
				return ids, err
			}},
			{name: "MIN, MAX, COUNT(DISTINCT) of " + col, refused: refused[col], run: func(db *gorm.DB) (any, error) {
				var out []map[string]any
				err := db.Table("pg_values").Select(agg).Group("user_id").Order("user_id").Find(&out).Error
				return fmt.Sprint(out), err
			}},
			{name: "GROUP BY " + col, refused: groupRefused[col], run: func(db *gorm.DB) (any, error) {
				var out []map[string]any
				err := db.Table("pg_values").Select(col + ", count(*) as n").Group(col).Find(&out).Error
				return out, err
			}, unordered: true},
		} {
			e.check(t, c)
		}
	}
}
