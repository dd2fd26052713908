package difftest

import (
	"math/rand/v2"

	"gorm.io/gorm"
)

// gormTrickyFamily is the summary's name of GORM calls whose answer needs
// rows of several shards at once (subqueries on the model, self-joins,
// derived tables): merged right or refused, left out of the refusal share
// like sql.tricky.
const gormTrickyFamily = "gorm.tricky"

// gormTricky is one such call: its text and how to run it on a DB.
type gormTricky struct {
	desc string
	run  func(db *gorm.DB) (*readResult, error)
}

func mapsOf(tx *gorm.DB) (*readResult, error) {
	var ms []map[string]any
	if err := tx.Find(&ms).Error; err != nil {
		return nil, err
	}
	cols, rows := mapRows(ms)
	return &readResult{cols: cols, rows: rows}, nil
}

var gormTrickies = []gormTricky{
	{`db.Model(&ReadRow{}).Select("id").Where("qty > (?)", db.Model(&ReadRow{}).Select("AVG(qty)")).Find(&maps)`,
		func(db *gorm.DB) (*readResult, error) {
			return mapsOf(db.Model(&ReadRow{}).Select("id").Where("qty > (?)", db.Model(&ReadRow{}).Select("AVG(qty)")))
		}},
	{`db.Model(&ReadRow{}).Select("id").Where("user_id IN (?)", db.Model(&ReadRow{}).Select("user_id").Where("qty = 3")).Find(&maps)`,
		func(db *gorm.DB) (*readResult, error) {
			sub := db.Model(&ReadRow{}).Select("user_id").Where("qty = 3")
			return mapsOf(db.Model(&ReadRow{}).Select("id").Where("user_id IN (?)", sub))
		}},
	{`db.Model(&ReadRow{}).Select("k AS kk, COUNT(*) AS cnt").Group("kk").Find(&maps)`,
		func(db *gorm.DB) (*readResult, error) {
			return mapsOf(db.Model(&ReadRow{}).Select("k AS kk, COUNT(*) AS cnt").Group("kk"))
		}},
	{`db.Table("(?) AS s", db.Model(&ReadRow{}).Distinct("qty")).Count(&n)`,
		func(db *gorm.DB) (*readResult, error) {
			var n int64
			err := db.Table("(?) AS s", db.Model(&ReadRow{}).Distinct("qty")).Count(&n).Error
			return &readResult{cols: []string{"count"}, rows: [][]any{{n}}}, err
		}},
	{`db.Model(&ReadRow{}).Select("t_read.id, b.id AS other").Joins("JOIN t_read b ON b.user_id = t_read.user_id AND b.qty = t_read.qty AND b.id > t_read.id").Find(&maps)`,
		func(db *gorm.DB) (*readResult, error) {
			return mapsOf(db.Model(&ReadRow{}).Select("t_read.id, b.id AS other").
				Joins("JOIN t_read b ON b.user_id = t_read.user_id AND b.qty = t_read.qty AND b.id > t_read.id"))
		}},
	{`db.Model(&ReadRow{}).Select("id, ROW_NUMBER() OVER (ORDER BY id) AS rn").Find(&maps)`,
		func(db *gorm.DB) (*readResult, error) {
			return mapsOf(db.Model(&ReadRow{}).Select("id, ROW_NUMBER() OVER (ORDER BY id) AS rn"))
		}},
}

// trickyCase draws one of gormTrickies.
func (g *gormReadGen) trickyCase(rng *rand.Rand) readCase {
	f := pick(rng, gormTrickies)
	return readCase{family: gormTrickyFamily, desc: f.desc,
		shard:  func() (*readResult, error) { return f.run(g.bin) },
		oracle: func() (*readResult, error) { return f.run(g.oracle) }}
}
