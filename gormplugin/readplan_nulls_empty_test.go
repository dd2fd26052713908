package gormplugin_test

import (
	"testing"

	"gorm.io/gorm"
)

// Aggregates over NULLs and over no rows, HAVING without GROUP BY, and
// aliases that differ only in case, merge into the one-table answer.

var nullAndEmptyCases = []readCase{
	{name: "SUM of a group whose values are all NULL is NULL", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("big % 5 as k, sum(qty) as s, count(qty) as c, min(qty) as lo, avg(qty) as a").Where("big < ?", 100).Group("big % 5").Order("big % 5")
	})},
	{name: "COUNT(DISTINCT) and DISTINCT leave NULL out, or keep it as one row", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(distinct qty) as n, count(distinct note) as m").Group("user_id").Order("user_id")
	}), binary: true},
	{name: "Distinct(qty) ordered desc keeps one NULL where the database puts it", run: func(db *gorm.DB) (any, error) {
		var xs []*int64
		err := model(db).Distinct("qty").Order("qty desc").Pluck("qty", &xs).Error
		return xs, err
	}},
	{name: "aggregates over no rows give one row", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("count(*) as n, sum(amount) as s, max(qty) as hi, avg(amount) as a, count(distinct amount) as d").Where("amount > ?", 100)
	})},
	{name: "GROUP BY over no rows gives none", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n").Where("amount > ?", 100).Group("user_id")
	})},
	{name: "HAVING without GROUP BY, false", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("count(*) as n").Having("count(*) > ?", 100)
	})},
	{name: "HAVING without GROUP BY, true", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("count(*) as n, sum(amount) as s").Having("count(*) > ?", 10)
	})},
	{name: "Scan of SUM over no rows into *int64", run: func(db *gorm.DB) (any, error) {
		var n *int64
		err := model(db).Select("sum(amount)").Where("amount > ?", 100).Scan(&n).Error
		return n, err
	}},
	{name: "grouped, Order by an aggregate, Limit and Offset", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("amount, count(*) as c, max(id) as m").Group("amount").Having("count(*) > ?", 1).Order("c desc, amount").Limit(4).Offset(1)
	})},
}

func TestAggregatesOverNullsAndNoRowsAgreeWithOneTable(t *testing.T) {
	eachReadBackendIn(t, "gormatk_null_", func(t *testing.T, e *readEnv) {
		for _, c := range nullAndEmptyCases {
			e.check(t, c)
		}
		if e.be == "postgres" { // quoted aliases keep their case there
			e.check(t, readCase{name: `aliases "N" and n are two columns`, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select(`user_id, sum(amount) as "N", count(*) as n`).Where("amount <> ?", 3).Group("user_id").Order("n desc, user_id")
			})})
			e.check(t, readCase{name: `ORDER BY "N" quoted`, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select(`user_id, count(*) as n, sum(amount) as "N"`).Group("user_id").Order(`"N" desc, user_id`)
			})})
		}
	})
}

// MariaDB returns GROUP BY groups in the order of their keys when no
// ORDER BY is given; a merged grouped read on MariaDB does the same.
func TestGroupsComeInKeyOrderOnMariaDBWithoutOrderBy(t *testing.T) {
	e := newReadEnvIn(t, "mariadb", "gormatk_grouporder_")
	for _, c := range []readCase{
		{name: "Group(amount) without ORDER BY", run: maps(func(db *gorm.DB) *gorm.DB {
			return model(db).Select("amount, count(*) as n").Group("amount")
		})},
		{name: "Group(user_id, amount % 3) without ORDER BY", run: maps(func(db *gorm.DB) *gorm.DB {
			return model(db).Select("amount % 3 as k, user_id, sum(amount) as s").Group("user_id, amount % 3")
		})},
		{name: "Group(qty) with NULLs without ORDER BY", run: maps(func(db *gorm.DB) *gorm.DB {
			return model(db).Select("qty, count(*) as n").Group("qty")
		})},
		{name: "DISTINCT without ORDER BY", unordered: true, run: maps(func(db *gorm.DB) *gorm.DB {
			return model(db).Distinct("amount")
		})},
	} {
		e.check(t, c)
	}
}

// Values the database takes as equal whatever their storage (2 and 2.0)
// form one group, one DISTINCT row and ties in ORDER BY.
func TestEqualNumbersOfDifferentStorageGroupTogether(t *testing.T) {
	eachReadBackendIn(t, "gormatk_numeq_", func(t *testing.T, e *readEnv) {
		k := "case when amount % 2 = 0 then 2 else 2.0 end"
		for _, c := range []readCase{
			{name: "GROUP BY 2 and 2.0", run: func(db *gorm.DB) (any, error) {
				var out []struct{ N int64 }
				err := model(db).Select("count(*) as n").Group(k).Find(&out).Error
				return out, err
			}},
			{name: "COUNT(DISTINCT) of an expression (refused)", refused: []string{"*"}, run: func(db *gorm.DB) (any, error) {
				var n int64
				err := model(db).Select("count(distinct " + k + ")").Scan(&n).Error
				return n, err
			}},
			{name: "ORDER BY 2 and 2.0, then id", run: func(db *gorm.DB) (any, error) {
				var ids []int64
				err := model(db).Order(k+" desc").Order("id desc").Limit(6).Pluck("id", &ids).Error
				return ids, err
			}},
			{name: "DISTINCT 2 and 2.0", run: func(db *gorm.DB) (any, error) {
				var out []map[string]any
				err := model(db).Distinct(k + " as k").Find(&out).Error
				return len(out), err
			}},
		} {
			e.check(t, c)
		}
	})
}

// MySQL's and SQLite's IFNULL over aggregates merges as COALESCE.
func TestIfNullOverAggregatesMergesAsCoalesce(t *testing.T) {
	eachReadBackendIn(t, "gormatk_ifnull_", func(t *testing.T, e *readEnv) {
		for _, c := range []readCase{
			{name: "IFNULL(SUM(x), 0) per group", refused: []string{"postgres"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("big % 5 as k, IFNULL(SUM(qty), 0) as s, ifnull(max(qty), -1) + 1 as m").Where("big < ?", 100).Group("big % 5").Order("k")
			})},
			{name: "IFNULL(SUM(x), 0) over no rows", refused: []string{"postgres"}, run: func(db *gorm.DB) (any, error) {
				var n int64
				err := model(db).Select("IFNULL(SUM(amount), 0)").Where("amount > ?", 100).Scan(&n).Error
				return n, err
			}},
			{name: "IFNULL of three arguments", refused: []string{"*"}, run: maps(func(db *gorm.DB) *gorm.DB {
				return model(db).Select("IFNULL(SUM(qty), 0, 1) as s")
			})},
		} {
			e.check(t, c)
		}
	})
}
