package gormplugin_test

import (
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

func model(db *gorm.DB) *gorm.DB { return db.Model(&ReadOrder{}) }

// orderingCases: ORDER BY over several tables sorts as the database does,
// or is refused.
var orderingCases = []readCase{
	{name: "Order(id)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("id") })},
	{name: "Find without ORDER BY", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db }), unordered: true},
	// NULL placement per dialect, sql.NullInt64 compared as numbers (9 < 100),
	// ties on NULL ordered by the second key.
	{name: "Order(qty).Order(id desc)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("qty").Order("id desc") })},
	{name: "Order(qty desc, id)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("qty desc, id") })},
	{name: "Order(qty desc nulls last)", // MariaDB has no NULLS LAST: it fails on both sides
		run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("qty desc nulls last").Order("id").Limit(7) })},
	// A sort key the select list leaves out is read, not compared as a zero value.
	{name: "Select(id, user_id).Order(amount desc).Limit(2)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Select("id", "user_id").Order("amount desc").Order("id").Limit(2)
	})},
	{name: "Order(read_orders.id desc) qualified by the logic table", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Order("read_orders.id desc").Limit(3)
	})},
	{name: "ORDER BY an expression not selected", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Select("id", "amount").Order("amount % 5 desc, id").Limit(6)
	})},
	{name: "ORDER BY a selected expression by alias and by text", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, amount * 2 + 1 as lo").Order("amount * 2 + 1").Order("lo desc").Order("user_id").Limit(7)
	})},
	{name: "Order(amount).Offset(3).Limit(4)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Order("amount").Order("id").Offset(3).Limit(4)
	})},
	{name: "Offset without Limit", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("amount, id").Offset(35) })},
	// Text: refused unless the collation is known to be binary.
	{name: "Order(status).Limit(2) in the default collation", refused: []string{"*"},
		run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("status").Order("id").Limit(2) })},
	{name: "Order(code).Limit(2) with WithBinaryCollation", binary: true,
		run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("code").Order("id").Limit(2) })},
	{name: "Order(note).Order(id desc) with WithBinaryCollation", binary: true,
		run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Order("note").Order("id desc") })},
	{name: "MIN(status) in the default collation", refused: []string{"*"},
		run: func(db *gorm.DB) (any, error) {
			var s string
			err := model(db).Select("min(status)").Scan(&s).Error
			return s, err
		}},
}

// sqliteNoCaseCase: SQLite's NOCASE named in the Order merges as SQLite
// compares (PostgreSQL and MariaDB have no such collation: refused).
var sqliteNoCaseCase = readCase{name: "Order(status COLLATE NOCASE)", refused: []string{"postgres", "mariadb"}, run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
	return db.Order("status COLLATE NOCASE desc").Order("id").Limit(9)
})}

// explicitCollateCases: an explicit binary COLLATE allows one key.
func explicitCollateCase(be string) readCase {
	collate := map[string]string{"postgres": `"C"`, "mariadb": "utf8mb4_bin", "sqlite": "BINARY"}[be]
	return readCase{name: "Order(status COLLATE binary)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Order("status COLLATE " + collate).Order("id").Limit(5)
	})}
}

type userAgg struct {
	UserID int64
	N      int64
	Total  int64
	Mean   float64
	Lo     int
	Hi     sql.NullInt64
}

// aggregateCases: GROUP BY, HAVING, DISTINCT and aggregates merge into the
// one-table answer.
var aggregateCases = []readCase{
	{name: "Group(user_id) aggregates into a struct", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n, sum(amount) as total, avg(amount) as mean, min(amount) as lo, max(qty) as hi").
			Group("user_id").Order("user_id")
	})},
	{name: "Group(user_id) aggregates into maps", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := model(db).Select("user_id, count(*) as n, sum(amount) as total, avg(amount), max(qty)").
			Group("user_id").Order("user_id").Find(&out).Error
		return out, err
	}},
	{name: "db.Table aggregates into maps (column scan types)", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := db.Table("read_orders").Select("user_id, count(*) as n, sum(amount) as total, avg(amount) as mean, min(qty) as lo, max(note) as hi, sum(qty)").
			Group("user_id").Order("user_id").Find(&out).Error
		return out, err
	}, binary: true},
	{name: "db.Table rows into maps", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := db.Table("read_orders").Order("qty desc").Order("id").Limit(5).Find(&out).Error
		return out, err
	}},
	{name: "Having(count(*) > ?) with AVG", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n, avg(amount) as mean").Group("user_id").
			Having("avg(amount) > ? OR NOT (count(*) >= 10)", 6).Order("mean desc")
	}), unordered: true},
	{name: "Having with IN, NOT IN, BETWEEN, NOT BETWEEN", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n, sum(amount) as total").Group("user_id").
			Having("(sum(amount) BETWEEN ? AND ? OR user_id IN ?) AND user_id NOT IN (3) AND NOT max(amount) NOT BETWEEN 10 AND 12", 50, 60, []int64{1}).
			Order("user_id")
	})},
	{name: "Having from a map with a list", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n").Group("user_id").Having(map[string]any{"user_id": []int64{2, 4}}).Order("user_id")
	})},
	{name: "Having on an aggregate not selected", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id").Group("user_id").Having("sum(qty) > 300").Order("user_id")
	})},
	{name: "Having(sum(qty)) beside avg(qty), count(distinct)", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, avg(qty) as mean").Group("user_id").
			Having("sum(qty) > ? AND count(distinct amount) >= ?", 300, 8).Order("mean").Order("user_id")
	})},
	{name: "Group(amount) ordered by count desc, amount", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("amount as lo, count(*) as n").Group("amount").Order("n desc").Order("amount").Limit(5)
	})},
	{name: "GROUP BY an expression, SUM and AVG of arithmetic", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("amount % 3 as lo, sum(amount * 2 + qty) as total, avg(qty - amount) as mean, count(*) as n").
			Group("amount % 3").Having("sum(amount * 2 + qty) > ?", 10).Order("amount % 3")
	})},
	{name: "AVG of values near the int64 limit", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := model(db).Select("user_id, avg(big) as mean, count(*) as n").Group("user_id").Order("user_id").Find(&out).Error
		return out, err
	}},
	{name: "aggregates inside expressions", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := model(db).Select("user_id, sum(amount) / count(*) as mean, count(*) * 2 + 1 as n, coalesce(max(qty), -1) as hi, -min(amount) as lo").
			Group("user_id").Order("user_id").Find(&out).Error
		return out, err
	}},
	{name: "ORDER BY and HAVING an expression over aggregates", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n").Group("user_id").
			Having("sum(amount) - min(amount) > ? AND max(qty) * ? >= 200", 40, 2).
			Order("sum(amount) - min(amount) desc").Order("user_id")
	})},
	{name: "Select with arguments in an expression over aggregates", run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := model(db).Select("user_id, count(*) * ? + ? as n, ? as tag", 3, 1, "t").Group("user_id").Order("user_id").Find(&out).Error
		return out, err
	}},
	// MariaDB computes AVG(x) / 7 from the average with more digits than
	// the AVG's scale, which no table returns: refused there.
	{name: "count(*) + 1 without GROUP BY", refused: []string{"mariadb"}, run: func(db *gorm.DB) (any, error) {
		var out []map[string]any
		err := model(db).Select("count(*) + 1 as n, sum(qty) / 3 as total, avg(qty) / 7 as mean").Find(&out).Error
		return out, err
	}},
	{name: "aggregates without GROUP BY", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("count(*) as n, sum(amount) as total, avg(amount) as mean, min(amount) as lo, max(qty) as hi")
	})},
	{name: "COUNT(DISTINCT), SUM(DISTINCT), AVG(DISTINCT)", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(distinct amount) as n, sum(distinct qty) as total, avg(distinct amount) as mean").Group("user_id").Order("user_id")
	})},
	{name: "COUNT(DISTINCT a, b) (MySQL's; an error elsewhere on both sides)", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(distinct amount, qty) as n").Group("user_id").Order("user_id")
	})},
	{name: "Distinct(user_id, amount)", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Distinct("user_id", "amount").Order("user_id").Order("amount desc")
	})},
	{name: "Distinct on text in the default collation", refused: []string{"mariadb", "sqlite"},
		run: find[ReadOrder](func(db *gorm.DB) *gorm.DB { return db.Distinct("status") }), unordered: true},
	{name: "Group(status) in the default collation", refused: []string{"mariadb", "sqlite"},
		run: find[userAgg](func(db *gorm.DB) *gorm.DB { return model(db).Select("count(*) as n").Group("status") }), unordered: true},
	{name: "Group(code) with WithBinaryCollation", binary: true,
		run: func(db *gorm.DB) (any, error) {
			var out []map[string]any
			err := model(db).Select("code, count(*) as n, min(note) as lo").Group("code").Order("code").Find(&out).Error
			return out, err
		}},
}

// finisherCases: Count, Pluck, First/Last/Take, Scan-like Find into another type.
var finisherCases = []readCase{
	{name: "Count", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Where("amount > ?", 3) })},
	{name: "Distinct(user_id).Count", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Distinct("user_id") })},
	{name: "Distinct(qty).Count", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Distinct("qty") })},
	{name: "Group(user_id).Count", run: count(func(db *gorm.DB) *gorm.DB { return model(db).Group("user_id") })},
	{name: "Pluck(amount) ordered", run: func(db *gorm.DB) (any, error) {
		var out []int
		err := model(db).Order("amount desc").Order("id").Limit(6).Pluck("amount", &out).Error
		return out, err
	}},
	{name: "Distinct().Pluck(user_id)", run: func(db *gorm.DB) (any, error) {
		var out []int64
		err := model(db).Distinct().Order("user_id").Pluck("user_id", &out).Error
		return out, err
	}},
	{name: "First", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.First(o).Error })},
	{name: "Last", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Last(o).Error })},
	{name: "First not found", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Where("amount > ?", 100).First(o).Error })},
	{name: "Take not found", run: one(func(db *gorm.DB, o *ReadOrder) error { return db.Where("amount > ?", 100).Take(o).Error })},
	{name: "Take one row", run: func(db *gorm.DB) (any, error) {
		var o ReadOrder
		r := db.Where("amount = ?", 12).Take(&o)
		return r.RowsAffected, r.Error
	}},
	{name: "Find into another struct type", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Order("lo desc").Order("user_id").Select("user_id, amount as lo")
	})},
	{name: "Find into another struct type, all its fields", run: find[struct {
		ID     int64
		Amount int
	}](func(db *gorm.DB) *gorm.DB {
		return model(db).Order("amount").Order("id")
	})},
	{name: "Scan into another struct type", run: func(db *gorm.DB) (any, error) {
		var out []userAgg
		err := model(db).Select("user_id, amount as lo").Order("amount desc").Order("user_id").Order("id").Scan(&out).Error
		return out, err
	}},
	{name: "Scan of a grouped read", run: func(db *gorm.DB) (any, error) {
		var out []userAgg
		err := model(db).Select("user_id, count(*) as n, avg(qty) as mean").Group("user_id").Order("user_id").Scan(&out).Error
		return out, err
	}},
	{name: "Row().Scan of an aggregate", run: func(db *gorm.DB) (any, error) {
		var n, s int64
		err := model(db).Select("count(*), sum(amount)").Where("amount > ?", 2).Row().Scan(&n, &s)
		return []int64{n, s}, err
	}},
	{name: "Rows() ordered", run: func(db *gorm.DB) (any, error) {
		rows, err := model(db).Select("id, qty").Order("qty desc").Order("id").Limit(9).Rows()
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []sql.NullInt64
		for rows.Next() {
			var id int64
			var q sql.NullInt64
			if err := rows.Scan(&id, &q); err != nil {
				return nil, err
			}
			out = append(out, q)
		}
		return out, rows.Err()
	}},
	{name: "FindInBatches", run: func(db *gorm.DB) (any, error) {
		var ids []int64
		var batch []ReadOrder
		err := db.Where("amount >= ?", 2).FindInBatches(&batch, 7, func(tx *gorm.DB, n int) error {
			for _, o := range batch {
				ids = append(ids, o.ID)
			}
			ids = append(ids, int64(-n), tx.RowsAffected)
			return nil
		}).Error
		return ids, err
	}},
}

func count(q func(db *gorm.DB) *gorm.DB) func(db *gorm.DB) (any, error) {
	return func(db *gorm.DB) (any, error) {
		var n int64
		err := q(db).Count(&n).Error
		return n, err
	}
}

func one(f func(db *gorm.DB, o *ReadOrder) error) func(db *gorm.DB) (any, error) {
	return func(db *gorm.DB) (any, error) {
		var o ReadOrder
		err := f(db, &o)
		return o, err
	}
}

// refusedCases: shapes no merge answers exactly are refused before they run.
var refusedCases = []readCase{
	{name: "SUM of an expression", refused: []string{"*"}, run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("sum(amount / 3) as total")
	})},
	{name: "an aggregate under an operator the merge does not compute", refused: []string{"*"}, run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("count(*) % 2 as n")
	})},
	{name: "a column neither grouped nor aggregated", refused: []string{"*"}, run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, amount as lo, count(*) as n").Group("user_id")
	})},
	{name: "ORDER BY an aggregate expression", refused: []string{"*"}, run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, count(*) as n").Group("user_id").Order("count(*) % 2").Limit(3)
	})},
	{name: "SUM of a function", refused: []string{"*"}, run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("sum(abs(amount)) as total")
	})},
	{name: "ORDER BY an alias beside *", refused: []string{"*"}, run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
		return db.Select("*, amount * 2 as dbl").Order("dbl").Limit(3)
	})},
	{name: "a window function", refused: []string{"*"}, run: find[userAgg](func(db *gorm.DB) *gorm.DB {
		return model(db).Select("user_id, row_number() over (order by id) as n")
	})},
}

// TestScatterReadsGiveTheSingleTableAnswer runs every case on SQLite,
// PostgreSQL and MariaDB with two data sources.
func TestScatterReadsGiveTheSingleTableAnswer(t *testing.T) {
	eachReadBackend(t, func(t *testing.T, e *readEnv) {
		groups := map[string][]readCase{
			"Ordering":   append(append([]readCase{}, orderingCases...), explicitCollateCase(e.be), sqliteNoCaseCase),
			"Aggregates": aggregateCases,
			"Finishers":  finisherCases,
			"Refusals":   refusedCases,
		}
		for name, cases := range groups {
			t.Run(name, func(t *testing.T) {
				for _, c := range cases {
					e.check(t, c)
				}
			})
		}
	})
}

// TestScatterReadsInTransactionAndLimitedPool: in a transaction (one
// connection) and on a pool with a connection limit, each table's rows are
// read before the next table's query runs, and the answer is the same; with
// prepared statements too.
func TestScatterReadsInTransactionAndLimitedPool(t *testing.T) {
	eachReadBackend(t, func(t *testing.T, e *readEnv) {
		inDS0 := func(db *gorm.DB) *gorm.DB { // users 2 and 4: both tables of ds_0
			return db.Where("user_id IN ?", []int64{2, 4})
		}
		cases := []readCase{
			{name: "ordered with limit", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
				return inDS0(db).Order("amount desc").Order("id").Limit(5)
			})},
			{name: "grouped", run: find[userAgg](func(db *gorm.DB) *gorm.DB {
				return inDS0(model(db)).Select("user_id, count(*) as n, avg(amount) as mean").Group("user_id").Order("user_id")
			})},
			{name: "count", run: count(func(db *gorm.DB) *gorm.DB { return inDS0(model(db)) })},
		}
		for _, c := range cases {
			inTx := c
			inTx.name = "in a transaction: " + c.name
			run := c.run
			inTx.run = func(db *gorm.DB) (any, error) {
				var out any
				err := db.Transaction(func(tx *gorm.DB) error {
					var err error
					out, err = run(tx)
					return err
				})
				return out, err
			}
			e.check(t, inTx)
		}
		for _, c := range cases {
			prepared := c
			prepared.name = "prepared statements: " + c.name
			run := c.run
			prepared.run = func(db *gorm.DB) (any, error) { return run(db.Session(&gorm.Session{PrepareStmt: true})) }
			e.check(t, prepared)
		}
		pool, _ := e.db.DB()
		pool.SetMaxOpenConns(1)
		defer pool.SetMaxOpenConns(0)
		for _, c := range cases {
			c.name = "one connection: " + c.name
			e.check(t, c)
		}
	})
}

// TestScatterReadRefusalsNameTheWayOut: a text ordering refusal says how to
// allow it, and an engine refusal found while merging is ErrUnsupported too.
func TestScatterReadRefusalsNameTheWayOut(t *testing.T) {
	eachReadBackend(t, func(t *testing.T, e *readEnv) {
		var rows []ReadOrder
		err := e.db.Order("status").Limit(2).Find(&rows).Error
		if err == nil || !strings.Contains(err.Error(), "WithBinaryCollation") || !strings.Contains(err.Error(), "COLLATE") {
			t.Errorf("Order(status): %v; want a refusal naming WithBinaryCollation and COLLATE", err)
		}
		e.check(t, readCase{name: "MIN of a text expression", refused: []string{"sqlite", "postgres"},
			run: func(db *gorm.DB) (any, error) {
				var out []map[string]any
				err := model(db).Select("user_id, min(status || '') as lo").Group("user_id").Order("user_id").Find(&out).Error
				return out, err
			}})
		e.check(t, readCase{name: "ORDER BY qty USING >", run: find[ReadOrder](func(db *gorm.DB) *gorm.DB {
			return db.Order("qty USING >").Order("id").Limit(9)
		})})
	})
}

// TestScatterReadRefusesOrderingMariaDBBinaryForms: a UUID column, which
// the driver reports as CHAR, is not ordered across tables on MariaDB even
// under WithBinaryCollation (MariaDB orders its binary form).
func TestScatterReadRefusesOrderingMariaDBBinaryForms(t *testing.T) {
	e := newReadEnv(t, "mariadb")
	type uuidOrder struct {
		ID     int64 `gorm:"primaryKey"`
		UserID int64
		Token  string `gorm:"type:uuid"`
	}
	q := e.bin.Table("read_orders").Model(&uuidOrder{})
	var out []uuidOrder
	if err := q.Select("id, user_id").Order("token").Find(&out).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Errorf("ORDER BY a uuid column: %v; want ErrUnsupported", err)
	}
	var n []int64
	if err := e.bin.Table("read_orders").Model(&uuidOrder{}).Group("token").Pluck("count(*)", &n).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
		t.Errorf("GROUP BY a uuid column: %v; want ErrUnsupported", err)
	}
}

// TestScatterReadsConcurrently: merged reads from many goroutines at once
// each get their own rows (the merged rows reach GORM through one shared
// in-process database/sql driver).
func TestScatterReadsConcurrently(t *testing.T) {
	e := newReadEnv(t, "sqlite")
	q := func(db *gorm.DB, limit int) ([]ReadOrder, error) {
		var rows []ReadOrder
		err := db.Order("amount desc").Order("id").Limit(limit).Find(&rows).Error
		return rows, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				limit := 1 + (g+i)%20
				got, err := q(e.db, limit)
				want, werr := q(e.oracle, limit)
				if err != nil || werr != nil || len(got) != limit || !reflect.DeepEqual(ids(got), ids(want)) {
					errs <- fmt.Errorf("limit %d: %v %v; %v %v", limit, ids(got), err, ids(want), werr)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func ids(rows []ReadOrder) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// Models declaring their columns' collations in the type tag.
type pgTagged struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Code   string `gorm:"type:varchar(20) COLLATE \"C\""`
	Status string `gorm:"type:varchar(20) COLLATE \"en-x-icu\""`
}

func (pgTagged) TableName() string { return "read_orders" }

type mariaTagged struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Code   string `gorm:"type:varchar(20) COLLATE utf8mb4_bin"`
	Status string `gorm:"type:varchar(20) COLLATE utf8mb4_general_ci"`
}

func (mariaTagged) TableName() string { return "read_orders" }

// TestScatterReadFollowsTheCollationTheModelDeclares: a binary collation
// in a field's type tag allows ordering that column without
// WithBinaryCollation; a collation the merge does not reproduce is refused
// even with it.
func TestScatterReadFollowsTheCollationTheModelDeclares(t *testing.T) {
	for _, be := range []string{"postgres", "mariadb"} {
		t.Run(be, func(t *testing.T) {
			e := newReadEnv(t, be)
			var want []ReadOrder
			if err := e.oracle.Order("code").Order("id").Limit(7).Find(&want).Error; err != nil {
				t.Fatal(err)
			}
			var codes, statuses error
			var got []int64
			if be == "postgres" {
				var rows []pgTagged
				codes = e.db.Order("code").Order("id").Limit(7).Find(&rows).Error
				for _, r := range rows {
					got = append(got, r.ID)
				}
				statuses = e.bin.Order("status").Limit(3).Find(&[]pgTagged{}).Error
			} else {
				var rows []mariaTagged
				codes = e.db.Order("code").Order("id").Limit(7).Find(&rows).Error
				for _, r := range rows {
					got = append(got, r.ID)
				}
				statuses = e.bin.Order("status").Limit(3).Find(&[]mariaTagged{}).Error
			}
			if codes != nil || !reflect.DeepEqual(got, ids(want)) {
				t.Errorf("Order(code) declared binary: %v %v; want %v", got, codes, ids(want))
			}
			if !errors.Is(statuses, gormplugin.ErrUnsupported) {
				t.Errorf("Order(status) declared %s under WithBinaryCollation: %v; want ErrUnsupported", "non-binary", statuses)
			}
		})
	}
}
