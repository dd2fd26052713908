package gormplugin_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"
)

// GORM's finishers (Count, Pluck, First, Last, Take, Find into a map,
// FindInBatches) and its LIMIT/OFFSET forms give over several tables what
// they give over one, hooks and RowsAffected included, also when a chain
// is run twice.

type finished struct {
	Rows     any
	Affected int64
	Found    int
}

var finisherFormCases = []readCase{
	{name: "Count after Order and Limit", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Order("amount").Limit(2) })},
	{name: "Count after Offset and Limit", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Order("amount").Offset(1).Limit(2) })},
	{name: "Count after Limit(0)", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Limit(0) })},
	{name: "Count with Group and Having", run: count(func(db *gorm.DB) *gorm.DB {
		return model(db).Group("user_id").Having("count(*) > ?", 9)
	})},
	{name: "Count with Group and Having on a sum", run: count(func(db *gorm.DB) *gorm.DB {
		return model(db).Group("user_id").Having("sum(amount) > ?", 60)
	})},
	{name: "Count with Group, Order and Limit", run: count(func(db *gorm.DB) *gorm.DB {
		return model(db).Group("amount").Order("amount desc").Limit(3)
	})},
	{name: "Count with Group(expression)", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Group("amount % 4") })},
	{name: "Count of Select(amount)", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Select("qty") })},
	{name: "Count of Distinct(amount, user_id)", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Distinct("amount", "user_id") })},
	{name: "Count of Select(count(distinct user_id))", run: count(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("count(distinct user_id)")
	})},
	{name: "Count of Select(id, amount as amount)", run: count(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("amount as amount")
	})},
	{name: "Limit(0)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("id").Limit(0) })},
	{name: "Limit(0).Offset(3)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("id").Limit(0).Offset(3) })},
	{name: "Limit(-1) is no limit", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("id").Limit(5).Limit(-1) })},
	{name: "negative Offset is none", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("amount desc, id").Offset(-4).Limit(3) })},
	{name: "Offset past the end", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("id").Offset(100).Limit(3) })},
	{name: "Offset without Limit on a grouped read", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("amount, count(*) as n").Group("amount").Order("amount").Offset(10)
	})},
	{name: "Distinct, Order and Limit", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Distinct("amount", "user_id").Order("amount desc, user_id").Limit(5).Offset(2)
	})},
	{name: "Find into one map", run: func(db *gorm.DB) (any, error) {
		m := map[string]any{}
		err := model(db).Order("amount desc, id").Find(&m).Error
		return m, err
	}},
	{name: "Take into one map with Offset", run: func(db *gorm.DB) (any, error) {
		m := map[string]any{}
		err := model(db).Order("amount, id desc").Offset(6).Take(&m).Error
		return m, err
	}},
	{name: "Take with Order and Offset", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Order("amount desc, id").Offset(5).Take(o).Error })},
	{name: "First with Order", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Order("amount desc").First(o).Error })},
	{name: "Last with an explicit Order", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Order("amount").Last(o).Error })},
	{name: "Last with Offset", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Offset(3).Last(o).Error })},
	{name: "Last not found", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Where("amount > ?", 99).Last(o).Error })},
	// First orders by the primary key, which is not grouped: SQLite and
	// MariaDB would take some row's id per group.
	{name: "First of a grouped read into a map", refused: []string{"*"}, run: func(db *gorm.DB) (any, error) {
		m := map[string]any{}
		err := model(db).Select("user_id, sum(amount) as total").Group("user_id").Order("total desc").First(&m).Error
		return m, err
	}},
	{name: "Pluck with Distinct and Order desc", run: func(db *gorm.DB) (any, error) {
		var xs []int
		err := model(db).Distinct().Order("amount desc").Pluck("amount", &xs).Error
		return xs, err
	}},
	{name: "Pluck of a nullable column ordered, limited", run: func(db *gorm.DB) (any, error) {
		var xs []*int64
		err := model(db).Order("qty desc").Order("id").Limit(12).Pluck("qty", &xs).Error
		return xs, err
	}},
	{name: "Scan of an aggregate into *float64, *int64 and *string", run: func(db *gorm.DB) (any, error) {
		var f float64
		var n int64
		var s string
		err := errors.Join(model(db).Select("avg(amount)").Scan(&f).Error,
			model(db).Select("sum(amount)").Scan(&n).Error,
			model(db).Select("avg(amount)").Scan(&s).Error)
		return []any{f, n, s}, err
	}},
	{name: "Scan of a column into []string", run: func(db *gorm.DB) (any, error) {
		var xs []string
		err := model(db).Select("amount").Order("amount desc, id").Limit(6).Scan(&xs).Error
		return xs, err
	}},
	{name: "Scan of avg per group into []string", run: func(db *gorm.DB) (any, error) {
		var xs []string
		err := model(db).Select("avg(amount)").Group("user_id").Order("user_id").Scan(&xs).Error
		return xs, err
	}},
	{name: "hooks and RowsAffected", run: func(db *gorm.DB) (any, error) {
		var rows []ReadOrder
		tx := db.Where("amount > ?", 4).Order("amount, id").Limit(11).Find(&rows)
		f := finished{Affected: tx.RowsAffected}
		for _, r := range rows {
			if r.Found {
				f.Found++
			}
		}
		return f, tx.Error
	}},
	{name: "a chain run twice, and Count before Find on the same chain", run: func(db *gorm.DB) (any, error) {
		q := model(db).Where("amount > ?", 2).Order("amount desc, id").Limit(5)
		var a, b []ReadOrder
		var n int64
		err := errors.Join(q.Find(&a).Error, q.Find(&b).Error, q.Count(&n).Error)
		var c []ReadOrder
		err = errors.Join(err, q.Find(&c).Error)
		return []any{a, b, n, c}, err
	}},
	{name: "a Session chain reused with different finishers", run: func(db *gorm.DB) (any, error) {
		q := model(db).Where("amount <> ?", 3).Session(&gorm.Session{})
		var a []ReadOrder
		var n int64
		var hi int
		err := errors.Join(q.Order("id desc").Limit(4).Find(&a).Error, q.Count(&n).Error, q.Select("max(amount)").Scan(&hi).Error)
		return []any{a, n, hi}, err
	}},
	{name: "the same destination slice filled twice", run: func(db *gorm.DB) (any, error) {
		var rows []ReadOrder
		err := errors.Join(db.Order("id").Limit(3).Find(&rows).Error, db.Order("id desc").Limit(2).Find(&rows).Error)
		return rows, err
	}},
	{name: "FindInBatches ordered by id desc", run: func(db *gorm.DB) (any, error) {
		var batches [][]int64
		var rows []ReadOrder
		err := db.Where("amount > ?", 1).Order("id desc").FindInBatches(&rows, 7, func(tx *gorm.DB, _ int) error {
			var ids []int64
			for _, r := range rows {
				ids = append(ids, r.ID)
			}
			batches = append(batches, ids)
			return nil
		}).Error
		return batches, err
	}},
	{name: "prepared statements: ordered, limited", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Session(&gorm.Session{PrepareStmt: true}).Where("amount > ?", 3).Order("amount desc, id").Limit(6)
	})},
	{name: "prepared statements: grouped with HAVING", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db.Session(&gorm.Session{PrepareStmt: true})).Select("user_id, sum(amount) as s").Group("user_id").Having("count(*) > ?", 2).Order("s desc")
	})},
	{name: "prepared statements: Count twice", run: func(db *gorm.DB) (any, error) {
		s := db.Session(&gorm.Session{PrepareStmt: true})
		var a, b int64
		err := errors.Join(model(s).Where("amount < ?", 6).Count(&a).Error, model(s).Where("amount < ?", 9).Count(&b).Error)
		return []int64{a, b}, err
	}},
	{name: "a subquery built by GORM in WHERE", refused: []string{"*"}, run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Where("amount > (?)", db.Session(&gorm.Session{NewDB: true}).Model(&ReadOrder{}).Select("avg(amount)")).Order("id")
	})},
	{name: "FindInBatches with Limit and Offset", run: func(db *gorm.DB) (any, error) {
		var batches [][]int64
		var rows []ReadOrder
		err := db.Where("amount <> ?", 4).Order("id").Limit(13).Offset(3).FindInBatches(&rows, 5, func(*gorm.DB, int) error {
			var ids []int64
			for _, r := range rows {
				ids = append(ids, r.ID)
			}
			batches = append(batches, ids)
			return nil
		}).Error
		return batches, err
	}},
	{name: "an aggregate with Limit(0)", run: maps(func(db *gorm.DB) *gorm.DB { return model(db).Select("count(*) as n").Limit(0) })},
	{name: "an aggregate with Offset(1)", run: maps(func(db *gorm.DB) *gorm.DB { return model(db).Select("count(*) as n").Offset(1).Limit(5) })},
	{name: "DISTINCT over per-group counts", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db).Distinct().Select("count(*) as n").Group("amount").Order("n")
	})},
	{name: "Count of a grouped Select with HAVING", run: count(func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id").Group("user_id").Having("sum(amount) > ?", 55)
	})},
	{name: "QueryFields: qualified columns, ordered and limited", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Session(&gorm.Session{QueryFields: true}).Order("amount desc").Order("read_orders.id").Limit(5)
	})},
	{name: "QueryFields: grouped into maps", run: maps(func(db *gorm.DB) *gorm.DB {
		return model(db.Session(&gorm.Session{QueryFields: true})).Select("user_id, count(*) as n").Group("user_id").Order("n desc, user_id")
	})},
	{name: "QueryFields: Distinct and Pluck", run: func(db *gorm.DB) (any, error) {
		var xs []int
		err := model(db.Session(&gorm.Session{QueryFields: true})).Distinct("amount").Order("amount desc").Pluck("amount", &xs).Error
		return xs, err
	}},
	{name: "Pluck of a qualified column, distinct and ordered", run: func(db *gorm.DB) (any, error) {
		var xs []int
		err := model(db).Distinct().Order("read_orders.amount desc").Pluck("read_orders.amount", &xs).Error
		return xs, err
	}},
	{name: "Count chained after Find", run: func(db *gorm.DB) (any, error) {
		var rows []ReadOrder
		var n int64
		err := db.Where("amount > ?", 5).Order("amount, id").Limit(4).Find(&rows).Count(&n).Error
		return []any{rows, n}, err
	}},
	{name: "Find chained after Count", run: func(db *gorm.DB) (any, error) {
		var rows []ReadOrder
		var n int64
		err := model(db).Where("amount < ?", 5).Count(&n).Order("amount desc, id").Offset(2).Find(&rows).Error
		return []any{rows, n}, err
	}},
	{name: "Find chained after Find with another Limit", run: func(db *gorm.DB) (any, error) {
		var a, b []ReadOrder
		err := db.Order("id desc").Find(&a).Limit(3).Find(&b).Error
		return []any{len(a), b}, err
	}},
	{name: "Find into a scalar slice", run: func(db *gorm.DB) (any, error) {
		var xs []int64
		err := model(db).Select("amount").Order("amount desc, id").Limit(7).Find(&xs).Error
		return xs, err
	}},
	{name: "Find into one struct, ordered", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Order("amount, id desc").Find(o).Error })},
	{name: "Where with OR over several users, ordered", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Where("user_id = ? OR user_id = ?", 1, 3).Order("amount desc, id").Limit(6)
	})},
	{name: "Scopes adding Order and Limit", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Scopes(func(d *gorm.DB) *gorm.DB { return d.Order("amount") }, func(d *gorm.DB) *gorm.DB { return d.Order("id desc").Limit(4) })
	})},
}

func TestFinishersOverSeveralTablesGiveTheSingleTableAnswer(t *testing.T) {
	eachReadBackendIn(t, "gormatk_", func(t *testing.T, e *readEnv) {
		for _, c := range finisherFormCases {
			e.check(t, c)
		}
	})
}

// A subquery written in a Where template names the logic table, which no
// database holds: the read fails, never answers from another table.
func TestRawSubqueryOverSeveralTablesFails(t *testing.T) {
	eachReadBackendIn(t, "gormatk_sub_", func(t *testing.T, e *readEnv) {
		var rows []ReadOrder
		err := e.db.Where("amount > (SELECT AVG(amount) FROM read_orders)").Order("id").Find(&rows).Error
		if err == nil || len(rows) != 0 {
			t.Errorf("a raw subquery over several tables: %d rows, %v; want an error", len(rows), err)
		}
	})
}
