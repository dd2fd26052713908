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

// HAVING compares an aggregate with an argument of another type as the
// database does (a string compared with a number converts as the
// database converts it), or is refused.
func TestHavingArgumentsOfAnotherTypeCompareAsTheDatabase(t *testing.T) {
	eachReadBackendIn(t, "gormatk_hargs_", func(t *testing.T, e *readEnv) {
		for _, c := range []readCase{
			{name: "sum > a string", run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("user_id, sum(amount) as s").Group("user_id").Having("sum(amount) > ?", "60").Order("user_id")
			})},
			{name: "max = a string with spaces", refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("user_id, max(amount) as m").Group("user_id").Having("max(amount) = ?", " 12").Order("user_id")
			})},
			{name: "count between floats", run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("amount, count(*) as n").Group("amount").Having("count(*) BETWEEN ? AND ?", 2.5, 4.0).Order("amount")
			})},
			{name: "avg = a decimal literal", run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("user_id").Group("user_id").Having("avg(amount) >= 6.1").Order("user_id")
			})},
			{name: "sum > a string that is no number", refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("user_id, sum(amount) as s").Group("user_id").Having("sum(amount) > ?", "6x").Order("user_id")
			})},
			{name: "grouped column = a string", run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("user_id, count(*) as n").Group("user_id").Having("user_id = ?", "2").Order("user_id")
			})},
			{name: "a text group compared with a number", binary: true, refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("code, count(*) as n").Group("code").Having("code = ?", 0).Order("n")
			})},
			{name: "a text group compared with a number by <", binary: true, refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("code, count(*) as n").Group("code").Having("code < ?", 1).Order("n")
			})},
			{name: "MAX of text compared with a number", binary: true, refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("user_id, max(code) as m").Group("user_id").Having("max(code) >= ?", 0).Order("user_id")
			})},
			{name: "grouped column IN strings", run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("user_id, count(*) as n").Group("user_id").Having("user_id IN ?", []string{"1", "3"}).Order("user_id")
			})},
		} {
			e.check(t, c)
		}
	})
}
