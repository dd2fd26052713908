package gormplugin_test

import (
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Arguments of Select, Order and Having that are SQL themselves (gorm.Expr,
// a subquery *gorm.DB) are read as the SQL they write, never as a value
// the same in every row: an aggregate or a window passed as an argument
// would otherwise run per table.

var sqlArgumentCases = []readCase{
	{name: "Select(?, gorm.Expr(max))", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("?", gorm.Expr("max(amount)"))
	})},
	{name: "Select(user_id, ?) grouped, with gorm.Expr(sum)", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, ? as s", gorm.Expr("sum(amount)")).Group("user_id").Order("user_id")
	})},
	{name: "Select(id, ?) with a window in gorm.Expr", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, ? as n", gorm.Expr("count(*) over ()")).Order("id").Limit(3)
	})},
	{name: "Select(id, (?)) with a subquery", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, (?) as m", db.Session(&gorm.Session{NewDB: true}).Model(&ReadOrder{}).Select("max(amount)")).Order("id").Limit(3)
	})},
	{name: "Select(id, ?) with a column", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, ? as a", clause.Column{Name: "amount"}).Order("a desc, id").Limit(3)
	})},
	{name: "Select(id, ?) with a plain value", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, ? as k", 7).Order("id").Limit(3)
	})},
	{name: "Having with gorm.Expr", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n").Group("user_id").Having("count(*) > ?", gorm.Expr("max(amount)")).Order("user_id")
	})},
}

func TestSQLArgumentsAreReadAsSQL(t *testing.T) {
	eachReadBackendIn(t, "gormatk_args_", func(t *testing.T, e *readEnv) {
		for _, c := range sqlArgumentCases {
			e.check(t, c)
		}
	})
}
