package gormplugin_test

import (
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Names in the select list, ORDER BY and HAVING resolve as each database
// resolves them (an alias before a column, a column before an alias), or
// the read is refused: never merged by another column than the one each
// table sorted, grouped or filtered by.

func maps(q func(db *gorm.DB) *gorm.DB) func(db *gorm.DB) (any, error) {
	return func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := q(db).Find(&out).Error
		return out, err
	}
}

var nameResolutionCases = []readCase{
	{name: "ORDER BY a clause.Column named as another item's alias sorts by the alias", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, -amount as amount").Order(clause.OrderByColumn{Column: clause.Column{Name: "amount"}}).Order("id").Limit(1)
	})},
	{name: "ORDER BY a clause.Column when two items swap their names", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, big as amount, amount as big").Order(clause.OrderByColumn{Column: clause.Column{Name: "amount"}, Desc: true}).Order("id").Limit(3)
	})},
	{name: "ORDER BY text naming a swapped alias", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, big as amount, amount as big").Order("amount desc").Order("id").Limit(3)
	})},
	{name: "ORDER BY a clause.Column alias of an aggregate in a grouped read", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n, sum(amount) as total").Group("user_id").
			Order(clause.OrderByColumn{Column: clause.Column{Name: "total"}, Desc: true}).Limit(2)
	})},
	{name: "Group on a column GORM quotes as logic_table.column", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n").Group("read_orders.user_id").Order("read_orders.user_id desc")
	})},
	{name: "ORDER BY a clause.Column written logic_table.column", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, -amount as amount").Order(clause.OrderByColumn{Column: clause.Column{Name: "read_orders.amount"}}).Order("id").Limit(3)
	})},
	{name: "a hidden sort column named as a select alias the ORDER BY names", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, amount as qty").Order("qty").Order("read_orders.qty desc").Order("id").Limit(1)
	})},
	{name: "a hidden sort column named as a select alias, all rows", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, amount as qty").Order("qty desc").Order("read_orders.qty").Order("id")
	})},
	{name: "a hidden grouping column named as a select alias", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("count(*) as user_id, max(amount) as amount").Group("read_orders.user_id").Order("user_id, amount")
	})},
	{name: "a double-quoted name (a string on MySQL) grouped", binary: true, refused: []string{"mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select(`"user_id", count(*) as n`).Where("amount <> ?", 5).Group("user_id").Order("n, user_id")
	})},
	{name: "a double-quoted name (a string on MySQL) ordered", refused: []string{"mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id").Order(`"amount" desc`).Order("id").Limit(4)
	})},
	{name: "an alias hidden columns take", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, amount as shardkey_hidden_0").Order("qty").Order("shardkey_hidden_0").Limit(3)
	})},
	{name: "max(amount) as amount, ordered by the alias", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, max(amount) as amount").Group("user_id").Order("amount desc").Order("user_id")
	})},
	{name: "mixed-case aggregates and aliases", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, SUM(Amount) AS Total, Count(*) as N, AVG(AMOUNT) Mean").Group("User_Id").Order("Total DESC, user_id")
	})},
	{name: "Distinct(ON ...) through GORM's Distinct", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Distinct("ON (user_id) user_id", "amount").Order("user_id, amount desc")
	})},
	{name: "HAVING an alias that is also a column of the table", refused: []string{"postgres", "sqlite"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, max(amount) as amount").Group("user_id").Having("amount > ?", 11).Order("user_id")
	})},
	{name: "HAVING an aggregate expression over an alias that is also a column", refused: []string{"postgres", "sqlite"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, min(amount) as amount").Group("user_id").Having("amount * 2 < ?", 2).Order("user_id")
	})},
	{name: "HAVING an alias that is no column", refused: []string{"postgres"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n, max(amount) as hi").Group("user_id").Having("hi >= ? AND n > ?", 12, 3).Order("user_id")
	})},
	{name: "HAVING an alias of count(*) that is also a column", refused: []string{"postgres", "sqlite"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as amount").Group("user_id").Having("amount > ?", 9).Order("user_id")
	})},
	{name: "DISTINCT ON keeps one row per key (PostgreSQL)", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("DISTINCT ON (user_id) user_id, amount").Order("user_id, amount desc")
	})},
	{name: "DISTINCTROW is DISTINCT (MariaDB)", unordered: true, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("DISTINCTROW user_id")
	})},
	{name: "ALL before the select list", unordered: true, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("ALL user_id")
	})},
	{name: "SQL_CALC_FOUND_ROWS or another MySQL select modifier", unordered: true, run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("SQL_NO_CACHE user_id").Where("amount > ?", 5)
	})},
	{name: "Select(*, expression alias) ordered by a column", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("*, amount*2 as d").Order("amount desc, id").Limit(3)
	})},
	{name: "Omit a column, ordered and limited", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Omit("note", "big").Order("amount desc").Order("id").Limit(4)
	})},
	{name: "clause.OrderBy Expression text", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Clauses(clause.OrderBy{Expression: clause.Expr{SQL: "amount desc, id"}}).Limit(5)
	})},
	{name: "Reorder replaces the earlier ORDER BY", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Order("id").Order(clause.OrderByColumn{Column: clause.Column{Name: "amount"}, Desc: true, Reorder: true}).Order("id desc").Limit(5)
	})},
	{name: "ORDER BY a boolean expression", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Order("amount > 5, id desc").Limit(9)
	})},
	{name: "Select with an argument, ordered by its alias", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("id, amount + ? as a", 5).Order("a desc, id").Limit(3)
	})},
	{name: "ORDER BY positions of a grouped read", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*), sum(amount)").Group("user_id").Order("3 desc, 1").Limit(3)
	})},
	{name: "ORDER BY count(*) not selected", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("amount").Group("amount").Order("count(*) desc, amount").Limit(4)
	})},
}

func TestReadNamesResolveAsTheDatabaseDoes(t *testing.T) {
	eachReadBackendIn(t, "gormatk_", func(t *testing.T, e *readEnv) {
		for _, c := range nameResolutionCases {
			e.check(t, c)
		}
	})
}

// A COLLATE inside a select or ORDER BY expression decides how its text
// compares, whatever WithBinaryCollation declares for columns.
func TestCollateInsideAnExpressionDecidesItsComparison(t *testing.T) {
	eachReadBackendIn(t, "gormatk_coll_", func(t *testing.T, e *readEnv) {
		other := map[string]string{"postgres": `"und-x-icu"`, "mariadb": "utf8mb4_general_ci", "sqlite": "NOCASE"}[e.be]
		binary := map[string]string{"postgres": `"C"`, "mariadb": "utf8mb4_bin", "sqlite": "BINARY"}[e.be]
		for _, c := range []readCase{
			{name: "a select alias over a non-binary COLLATE, ordered", binary: true, refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("id, code COLLATE " + other + " as s").Order("s").Order("id").Limit(5)
			})},
			{name: "an ORDER BY expression holding a non-binary COLLATE", binary: true, refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("id, code").Order("(code COLLATE " + other + ")").Order("id").Limit(5)
			})},
			{name: "MIN of an expression holding a non-binary COLLATE", binary: true, refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("user_id, min(code COLLATE " + other + ") as m").Group("user_id").Order("user_id")
			})},
			{name: "a select item ending in a non-binary COLLATE, ordered by position", binary: true, refused: []string{"postgres", "mariadb"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("id, code COLLATE " + other).Order("2 desc").Order("id").Limit(5)
			})},
			{name: "a select alias over a binary COLLATE, ordered without the option", run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("id, status COLLATE " + binary + " as s").Order("s").Order("id").Limit(5)
			})},
		} {
			e.check(t, c)
		}
	})
}
