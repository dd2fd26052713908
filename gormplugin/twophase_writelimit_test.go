package gormplugin_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// MySQL's UPDATE ... LIMIT n and DELETE ... LIMIT n change at most n rows
// (GORM builds them with Limit on MySQL). A write the plugin spreads over
// several physical tables (two tables of one data source, or, with
// WithTwoPhaseCommit, tables of both data sources) must keep that bound,
// or be refused: LIMIT sent to every table changes up to n rows per table.

func TestWriteWithLimitOverSeveralTablesChangesAtMostLimitRows(t *testing.T) {
	e := newTwoPhase(t, "mariadb", "writelimit", nil, gormplugin.WithScatter())
	var rows []ShardedOrder
	for u := int64(0); u < 4; u++ {
		for k := int64(0); k < 4; k++ { // keys of both parities: both tables of the user's data source
			rows = append(rows, ShardedOrder{ID: 1000*(u+1) + k, UserID: u, Amount: 1})
		}
	}
	if err := e.db.Create(&rows).Error; err != nil {
		t.Fatal(err)
	}
	changed := func() int {
		n := 0
		for _, r := range e.placement(t) {
			if r.Amount != 1 {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		what  string
		write func() *gorm.DB
		count func() int
	}{
		{"Update with Limit(1) over one data source's two tables", func() *gorm.DB {
			return e.db.Model(&ShardedOrder{}).Where("user_id = ?", 2).Limit(1).Update("amount", 7)
		}, changed},
		{"Update with Limit(1) over both data sources", func() *gorm.DB {
			return e.db.Model(&ShardedOrder{}).Where("user_id IN ?", []int64{0, 1}).Limit(1).Update("amount", 8)
		}, changed},
		{"Delete with Limit(1) over one data source's two tables", func() *gorm.DB {
			return e.db.Where("user_id = ?", 3).Limit(1).Delete(&ShardedOrder{})
		}, func() int { return len(rows) - len(e.placement(t)) }},
		{"Delete with Limit(1) over both data sources", func() *gorm.DB {
			return e.db.Where("user_id IN ?", []int64{0, 1}).Limit(1).Delete(&ShardedOrder{})
		}, func() int { return len(rows) - len(e.placement(t)) }},
	} {
		before := c.count()
		res := c.write()
		switch diff := c.count() - before; {
		case res.Error == nil && (res.RowsAffected > 1 || diff > 1):
			t.Errorf("%s changed %d rows (RowsAffected %d), at most 1 asked", c.what, diff, res.RowsAffected)
		case res.Error != nil && diff != 0:
			t.Errorf("%s refused (%v), yet changed %d rows", c.what, res.Error, diff)
		}
	}
}
