package gormplugin_test

import (
	"context"
	"database/sql"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
)

// recordingPool records the queries a statement sends to its pool.
type recordingPool struct {
	gorm.ConnPool
	queries []string
}

func (p *recordingPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	p.queries = append(p.queries, query)
	return p.ConnPool.QueryContext(ctx, query, args...)
}

// TestScatterReadAsksEachTableForWhatTheMergeNeeds: the SELECT each table
// runs (the first table's, as recorded by its pool) carries the hidden
// sort keys, AVG's SUM and COUNT and distinct values, no HAVING, and LIMIT
// n+m only when the merge streams; hidden columns are aliased apart from
// the select list's names.
func TestScatterReadAsksEachTableForWhatTheMergeNeeds(t *testing.T) {
	e := newReadEnv(t, "sqlite")
	rec := [2]*recordingPool{{ConnPool: e.pools[0]}, {ConnPool: e.pools[1]}}
	db, err := gorm.Open(e.plain[0].Dialector, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, readRules)), gormplugin.WithScatter(),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": rec[0], "ds_1": rec[1]}))); err != nil {
		t.Fatal(err)
	}
	dry := func(q func(db *gorm.DB) *gorm.DB) string {
		rec[0].queries = nil
		var rows []ReadOrder
		if err := q(db).Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rec[0].queries) == 0 {
			t.Fatal("no query reached ds_0's pool")
		}
		return rec[0].queries[0]
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
