package gormplugin_test

import (
	"testing"

	"gorm.io/gorm"
)

// TestScatterReadAsksEachTableForWhatTheMergeNeeds: the SELECT each table
// runs (DryRun shows the first table's) carries the hidden sort keys, AVG's
// SUM and COUNT and distinct values, no HAVING, and LIMIT n+m only when
// the merge streams; hidden columns are aliased apart from the select
// list's names.
func TestScatterReadAsksEachTableForWhatTheMergeNeeds(t *testing.T) {
	e := newReadEnv(t, "sqlite")
	dry := func(q func(db *gorm.DB) *gorm.DB) string {
		var rows []ReadOrder
		stmt := q(e.db.Session(&gorm.Session{DryRun: true})).Find(&rows).Statement
		if stmt.Error != nil {
			t.Fatal(stmt.Error)
		}
		return stmt.SQL.String()
	}
	for _, c := range []struct {
		q    func(db *gorm.DB) *gorm.DB
		want string
	}{
		{func(db *gorm.DB) *gorm.DB { return db.Select("id", "user_id").Order("amount desc").Offset(1).Limit(2) },
			"SELECT `id`,`user_id`, amount AS `shardkey_hidden_0` FROM `read_orders_0` AS `read_orders` ORDER BY amount desc LIMIT 3"},
		{func(db *gorm.DB) *gorm.DB { return db.Order("read_orders.id desc").Limit(3) },
			"SELECT *, read_orders.id AS `shardkey_hidden_0` FROM `read_orders_0` AS `read_orders` ORDER BY read_orders.id desc LIMIT 3"},
		{func(db *gorm.DB) *gorm.DB {
			return model(db).Select("user_id, avg(amount) as mean").Group("user_id").Having("count(distinct qty) > ?", 1).Limit(1)
		}, "SELECT user_id, avg(amount) as mean, TOTAL(amount) AS `shardkey_hidden_0`, COUNT(amount) AS `shardkey_hidden_1`, count(distinct qty) AS `shardkey_hidden_2`, qty AS `shardkey_hidden_3` FROM `read_orders_0` AS `read_orders` GROUP BY `user_id`,qty"},
		{func(db *gorm.DB) *gorm.DB { return db.Distinct("user_id").Order("user_id").Limit(2) },
			"SELECT DISTINCT `user_id` FROM `read_orders_0` AS `read_orders` ORDER BY user_id"},
	} {
		if got := dry(c.q); got != c.want {
			t.Errorf("\n got  %s\n want %s", got, c.want)
		}
	}
}
