package gormplugin_test

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// The calls go-gorm/sharding users write, on the model its own suite
// uses (orders sharded by user_id over four tables, a Snowflake id, a
// soft-delete column), run through gormplugin on SQLite, PostgreSQL and
// MariaDB. Every result is compared with the rows the test put in, read
// back through a connection without the plugin.

// SurfOrder is the model of go-gorm/sharding's suite.
type SurfOrder struct {
	ID      int64 `gorm:"primaryKey"`
	UserID  int64
	Product string
	Deleted gorm.DeletedAt
}

func (SurfOrder) TableName() string { return "orders" }

// SurfCategory is an unsharded table next to it.
type SurfCategory struct {
	ID   int64 `gorm:"primaryKey"`
	Name string
}

func (SurfCategory) TableName() string { return "categories" }

// SurfAccount is sharded by a text column.
type SurfAccount struct {
	ID   int64 `gorm:"primaryKey"`
	Code string
	Name string
}

func (SurfAccount) TableName() string { return "accounts" }

const surfRules = `
dataSources:
  ds: {driver: sqlite, dsn: "file:unused"}
rules:
- !SHARDING
  tables:
    orders:
      actualDataNodes: ds.orders_${0..3}
      tableStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
    accounts:
      actualDataNodes: ds.accounts_${0..1}
      tableStrategy: {standard: {shardingColumn: code, shardingAlgorithmName: by_code}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 4}}
    by_code: {type: HASH_MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}
`

// surf is one backend's database with the plugin (db) and without (raw).
type surf struct {
	be  string
	db  *gorm.DB
	raw *gorm.DB
}

// newSurf opens database gormsurf_<name> on a backend, plugs the plugin
// in and migrates the three models.
func newSurf(t *testing.T, be, name string, opts ...gormplugin.Option) *surf {
	t.Helper()
	d := dialectorFor(t, be, "gormsurf_"+name)
	db := reopen(t, d, nil)
	opts = append([]gormplugin.Option{gormplugin.WithRules(rulesOf(t, surfRules))}, opts...)
	if err := db.Use(gormplugin.New(nil, opts...)); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&SurfOrder{}, &SurfCategory{}, &SurfAccount{}); err != nil {
		t.Fatal(err)
	}
	return &surf{be: be, db: db, raw: reopen(t, d, nil)}
}

// seed creates two orders for each user, products "p<user>-a" and
// "p<user>-b".
func (s *surf) seed(t *testing.T, users ...int64) []SurfOrder {
	t.Helper()
	var rows []SurfOrder
	for _, u := range users {
		rows = append(rows, SurfOrder{UserID: u, Product: fmt.Sprintf("p%d-a", u)}, SurfOrder{UserID: u, Product: fmt.Sprintf("p%d-b", u)})
	}
	if err := s.db.Create(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

// products lists the products of rows, sorted.
func products(rows []SurfOrder) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Product)
	}
	sort.Strings(out)
	return out
}

// stored reads every physical table of orders without the plugin: the
// live (not soft-deleted) rows, by product.
func (s *surf) stored(t *testing.T) map[string]SurfOrder {
	t.Helper()
	out, err := s.storedRows()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (s *surf) storedRows() (map[string]SurfOrder, error) {
	out := map[string]SurfOrder{}
	for i := range 4 {
		var rows []SurfOrder
		if err := s.raw.Table(fmt.Sprintf("orders_%d", i)).Where("deleted IS NULL").Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.UserID%4 != int64(i) {
				return nil, fmt.Errorf("order of user %d in orders_%d", r.UserID, i)
			}
			out[r.Product] = r
		}
	}
	return out, nil
}

// quoteIdent quotes a name as the backend does.
func (s *surf) quoteIdent(n string) string {
	if s.be == "mariadb" {
		return "`" + n + "`"
	}
	return `"` + n + `"`
}

func want(users ...int64) []string {
	var out []string
	for _, u := range users {
		out = append(out, fmt.Sprintf("p%d-a", u), fmt.Sprintf("p%d-b", u))
	}
	sort.Strings(out)
	return out
}

// TestLiteralAndNamedConditionsRouteLikePlaceholders: Where with literal
// values and with named arguments reaches the tables a placeholder
// would, and answers as one table would; a template the scanner cannot
// read exactly does not narrow the tables (refused without WithScatter,
// answered over every table with it).
func TestLiteralAndNamedConditionsRouteLikePlaceholders(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			s := newSurf(t, be, "literal_"+be)
			s.seed(t, 100, 101, 102, 103, 1010)
			extra := SurfOrder{UserID: 104, Product: "user_id = 101"}
			if err := s.db.Create(&extra).Error; err != nil {
				t.Fatal(err)
			}
			type named struct{ UID int64 }
			for _, tc := range []struct {
				name  string
				query any
				args  []any
				want  []string
			}{
				{"literal", "user_id = 101", nil, want(101)},
				{"no spaces", "user_id=101", nil, want(101)},
				{"not a prefix", "user_id = 1010", nil, want(1010)},
				{"literal IN over two tables", "user_id IN (101, 102)", nil, want(101, 102)},
				{"qualified literal", "orders.user_id = 101", nil, want(101)},
				{"quoted", s.quoteIdent("orders") + "." + s.quoteIdent("user_id") + " = 101", nil, want(101)},
				{"with another literal", "user_id = 101 AND product = 'p101-b'", nil, []string{"p101-b"}},
				{"grouped", "(user_id = 101 AND product <> 'x')", nil, want(101)},
				{"sql.Named", "user_id = @uid", []any{sql.Named("uid", 101)}, want(101)},
				{"named map", "user_id = @uid", []any{map[string]any{"uid": 102}}, want(102)},
				{"named struct", "user_id = @UID", []any{named{UID: 103}}, want(103)},
				{"named list", "user_id IN @ids", []any{sql.Named("ids", []int64{100, 103})}, want(100, 103)},
			} {
				var got []SurfOrder
				if err := s.db.Where(tc.query, tc.args...).Find(&got).Error; err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if p := products(got); !slices.Equal(p, tc.want) {
					t.Errorf("%s: %v, want %v", tc.name, p, tc.want)
				}
			}
			for _, q := range []string{
				"user_id = 101 OR user_id = 102",
				"product = 'user_id = 101'",
				"user_id = '101'", // a string literal for an integer column
				"user_id = 101 -- comment",
				"user_id <> 101",
				"NOT user_id = 101",
			} {
				var got []SurfOrder
				if err := s.db.Where(q).Find(&got).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
					t.Errorf("%q: %v (%d rows), want ErrMissingShardingKey", q, err, len(got))
				}
			}
			// Writes route by literals and named arguments too.
			res := s.db.Model(&SurfOrder{}).Where("user_id = 103").Update("product", gorm.Expr("product || '!'"))
			if be == "mariadb" {
				res = s.db.Model(&SurfOrder{}).Where("user_id = 103").Update("product", gorm.Expr("CONCAT(product, '!')"))
			}
			if res.Error != nil || res.RowsAffected != 2 {
				t.Fatalf("update by literal: %d %v", res.RowsAffected, res.Error)
			}
			if res := s.db.Where("user_id = @u", sql.Named("u", 100)).Delete(&SurfOrder{}); res.Error != nil || res.RowsAffected != 2 {
				t.Fatalf("delete by named argument: %d %v", res.RowsAffected, res.Error)
			}
			st := s.stored(t)
			if _, ok := st["p103-a!"]; !ok || len(st) != 9 {
				t.Fatalf("after the writes: %v", st)
			}

			// With WithScatter, what the scanner does not read runs on every
			// table and gives the single-table answer.
			sc := newSurf(t, be, "literal_scatter_"+be, gormplugin.WithScatter())
			sc.seed(t, 100, 101, 102)
			if err := sc.db.Create(&SurfOrder{UserID: 103, Product: "user_id = 101"}).Error; err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				q    string
				want []string
			}{
				{"user_id = 101 OR user_id = 102", want(101, 102)},
				{"product = 'user_id = 101'", []string{"user_id = 101"}},
				{"user_id = 101 OR product = 'user_id = 101'", append(want(101), "user_id = 101")},
			} {
				var got []SurfOrder
				if err := sc.db.Where(tc.q).Find(&got).Error; err != nil {
					t.Errorf("scatter %q: %v", tc.q, err)
					continue
				}
				w := slices.Clone(tc.want)
				sort.Strings(w)
				if p := products(got); !slices.Equal(p, w) {
					t.Errorf("scatter %q: %v, want %v", tc.q, p, w)
				}
			}
		})
	}
}

// TestTextLiteralRoutesOnlyATextShardingColumn: 'a1' routes a text
// sharding column as the placeholder "a1" does; a number literal for it
// does not narrow the tables (MySQL compares text and numbers as
// numbers: '01' = 1).
func TestTextLiteralRoutesOnlyATextShardingColumn(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			s := newSurf(t, be, "text_"+be)
			accts := []SurfAccount{{Code: "a1", Name: "one"}, {Code: "b2", Name: "two"}, {Code: "101", Name: "num"}}
			if err := s.db.Create(&accts).Error; err != nil {
				t.Fatal(err)
			}
			for q, name := range map[string]string{"code = 'a1'": "one", "code = 'b2'": "two", "code = '101'": "num", "accounts.code = 'a1'": "one"} {
				var got []SurfAccount
				if err := s.db.Where(q).Find(&got).Error; err != nil || len(got) != 1 || got[0].Name != name {
					t.Errorf("%q: %+v %v", q, got, err)
				}
			}
			var got []SurfAccount
			if err := s.db.Where("code = 101").Find(&got).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
				t.Errorf("a number literal for a text column: %v %+v", err, got)
			}
		})
	}
}

// TestLogicQualifiedColumnsWorkOnSingleTableStatements: columns
// qualified with the logic table's name, in Where, Order, Select, Pluck,
// Count, Update and Delete (soft and hard), reach the physical table.
func TestLogicQualifiedColumnsWorkOnSingleTableStatements(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			s := newSurf(t, be, "qualified_"+be)
			rows := s.seed(t, 101, 102, 103, 104, 105, 106)
			var got []SurfOrder
			err := s.db.Select("orders.id", "orders.user_id", "orders.product").Where("orders.user_id = ?", 101).
				Order("orders.id desc").Find(&got).Error
			if err != nil || len(got) != 2 || got[0].ID < got[1].ID || got[0].UserID != 101 || got[0].Product == "" {
				t.Fatalf("Select/Where/Order: %+v %v", got, err)
			}
			var n int64
			if err := s.db.Model(&SurfOrder{}).Where("orders.user_id = ?", 101).Count(&n).Error; err != nil || n != 2 {
				t.Fatalf("Count: %d %v", n, err)
			}
			var ps []string
			if err := s.db.Model(&SurfOrder{}).Where("orders.user_id = 101").Order("orders.product").Pluck("orders.product", &ps).Error; err != nil || !slices.Equal(ps, want(101)) {
				t.Fatalf("Pluck: %v %v", ps, err)
			}
			var first SurfOrder
			if err := s.db.Where("orders.user_id = ?", 102).First(&first).Error; err != nil || first.UserID != 102 {
				t.Fatalf("First: %+v %v", first, err)
			}
			// A chain reused for Count and then Find (pagination).
			q := s.db.Model(&SurfOrder{}).Where("orders.user_id = ?", 106)
			var total int64
			var page []SurfOrder
			if err := q.Count(&total).Error; err != nil || total != 2 {
				t.Fatalf("reused chain Count: %d %v", total, err)
			}
			if err := q.Order("orders.product").Limit(1).Find(&page).Error; err != nil || len(page) != 1 || page[0].Product != "p106-a" {
				t.Fatalf("reused chain Find: %+v %v", page, err)
			}
			if res := s.db.Model(&SurfOrder{}).Where("orders.user_id = ?", 102).Update("product", "upd"); res.Error != nil || res.RowsAffected != 2 {
				t.Fatalf("Update: %d %v", res.RowsAffected, res.Error)
			}
			if res := s.db.Where("orders.user_id = ?", 103).Delete(&SurfOrder{}); res.Error != nil || res.RowsAffected != 2 {
				t.Fatalf("soft Delete: %d %v", res.RowsAffected, res.Error)
			}
			if res := s.db.Unscoped().Where("orders.user_id = ?", 104).Delete(&SurfOrder{}); res.Error != nil || res.RowsAffected != 2 {
				t.Fatalf("Delete: %d %v", res.RowsAffected, res.Error)
			}
			var one SurfOrder
			for _, r := range rows {
				if r.UserID == 105 {
					one = r
				}
			}
			if res := s.db.Unscoped().Where("orders.user_id = ?", 105).Delete(&one); res.Error != nil || res.RowsAffected != 1 {
				t.Fatalf("Delete of a row: %d %v", res.RowsAffected, res.Error)
			}
			st := s.stored(t)
			var left []string
			for p, r := range st {
				left = append(left, p)
				if r.UserID == 102 && r.Product != "upd" {
					t.Fatalf("update missed %+v", r)
				}
			}
			sort.Strings(left)
			// 101 a/b, one of 105, 106 a/b and user 102's two rows, now both
			// "upd" (one key in the map).
			if len(st) != 6 || slices.Contains(left, one.Product) {
				t.Fatalf("left after the writes: %v (deleted %s)", left, one.Product)
			}
			var soft int64
			s.raw.Table("orders_3").Where("user_id = 103 AND deleted IS NOT NULL").Count(&soft)
			if soft != 2 {
				t.Fatalf("%d soft-deleted rows of user 103", soft)
			}
			if be == "mariadb" {
				// DELETE ... LIMIT: MariaDB's multi-table DELETE takes no LIMIT;
				// the physical table is named without alias.
				if res := s.db.Unscoped().Where("user_id = ?", 106).Limit(1).Delete(&SurfOrder{}); res.Error != nil || res.RowsAffected != 1 {
					t.Fatalf("Delete with Limit: %d %v", res.RowsAffected, res.Error)
				}
			}
		})
	}
}

// TestGoGormShardingSuiteCalls runs, in its own words, each case of
// go-gorm/sharding's sharding_test.go whose calls a user writes, on the
// three databases: those that give the answer one table would, and
// those refused by design (the package documentation says which and
// why).
func TestGoGormShardingSuiteCalls(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			s := newSurf(t, be, "suite_"+be)
			db := s.db
			run := func(name string, f func() error) {
				if err := f(); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			refused := func(name string, target error, err error) {
				if !errors.Is(err, target) {
					t.Errorf("%s: %v, want %v", name, err, target)
				}
			}
			run("Migrate: the physical tables exist, the logic table does not", func() error {
				tables, err := s.raw.Migrator().GetTables()
				if err != nil {
					return err
				}
				for i := range 4 {
					if !slices.Contains(tables, fmt.Sprintf("orders_%d", i)) {
						return fmt.Errorf("tables %v", tables)
					}
				}
				if slices.Contains(tables, "orders") || !slices.Contains(tables, "categories") {
					return fmt.Errorf("tables %v", tables)
				}
				return db.AutoMigrate(&SurfOrder{}, &SurfCategory{}) // again: no change, no error
			})
			run("Insert with an explicit id", func() error {
				if err := db.Create(&SurfOrder{ID: 100, UserID: 100, Product: "iPhone"}).Error; err != nil {
					return err
				}
				return onlyIn(s, "orders_0", "iPhone")
			})
			run("FillID", func() error {
				o := SurfOrder{UserID: 100, Product: "iPad"}
				if err := db.Create(&o).Error; err != nil || o.ID == 0 {
					return fmt.Errorf("id %d: %v", o.ID, err)
				}
				return onlyIn(s, "orders_0", "iPad")
			})
			run("InsertManyWithFillID", func() error {
				batch := []SurfOrder{{UserID: 100, Product: "Mac"}, {UserID: 100, Product: "Mac Pro"}}
				if err := db.Create(&batch).Error; err != nil || batch[0].ID == 0 || batch[1].ID == batch[0].ID {
					return fmt.Errorf("%+v: %v", batch, err)
				}
				return onlyIn(s, "orders_0", "Mac Pro")
			})
			// go-gorm/sharding refuses a batch over two tables
			// (ErrInsertDiffSuffix); here it is one INSERT per table in one
			// transaction.
			run("InsertDiffSuffix", func() error {
				batch := []SurfOrder{{UserID: 100, Product: "Mac mini"}, {UserID: 101, Product: "Mac Studio"}}
				if err := db.Create(&batch).Error; err != nil {
					return err
				}
				if err := onlyIn(s, "orders_0", "Mac mini"); err != nil {
					return err
				}
				return onlyIn(s, "orders_1", "Mac Studio")
			})
			// Select1..9: the sharding key given as a column and value, as a
			// literal template, with the id, a range or First.
			for _, tc := range []struct {
				name string
				q    func(*gorm.DB) *gorm.DB
				want []string
			}{
				{"Select1", func(d *gorm.DB) *gorm.DB { return d.Where("user_id", 101).Where("id", idOf(s, "Mac Studio")) }, []string{"Mac Studio"}},
				{"Select2", func(d *gorm.DB) *gorm.DB { return d.Where("id", idOf(s, "Mac Studio")).Where("user_id", 101) }, []string{"Mac Studio"}},
				{"Select3", func(d *gorm.DB) *gorm.DB { return d.Where("id", idOf(s, "Mac Studio")).Where("user_id = 101") }, []string{"Mac Studio"}},
				{"Select4", func(d *gorm.DB) *gorm.DB { return d.Where("product", "iPad").Where("user_id", 100) }, []string{"iPad"}},
				{"Select5", func(d *gorm.DB) *gorm.DB { return d.Where("user_id = 101") }, []string{"Mac Studio"}},
				{"Select7", func(d *gorm.DB) *gorm.DB { return d.Where("user_id", 100).Where("id > ?", idOf(s, "iPad")) }, []string{"Mac", "Mac Pro", "Mac mini"}},
				{"Select8", func(d *gorm.DB) *gorm.DB { return d.Where("id > ?", idOf(s, "iPad")).Where("user_id", 100) }, []string{"Mac", "Mac Pro", "Mac mini"}},
				{"ShardingKeyOK", func(d *gorm.DB) *gorm.DB { return d.Where("user_id = ? and id > ?", 101, int64(100)) }, []string{"Mac Studio"}},
			} {
				run(tc.name, func() error {
					var got []SurfOrder
					if err := tc.q(db.Model(&SurfOrder{})).Find(&got).Error; err != nil {
						return err
					}
					if p := products(got); !slices.Equal(p, tc.want) {
						return fmt.Errorf("%v, want %v", p, tc.want)
					}
					return nil
				})
			}
			run("Select9: First with a literal key", func() error {
				var o SurfOrder
				if err := db.Model(&SurfOrder{}).Where("user_id = 100").First(&o).Error; err != nil {
					return err
				}
				if o.ID != 100 {
					return fmt.Errorf("first %+v, want the smallest id, 100", o)
				}
				return nil
			})
			run("Select13: raw SQL naming no sharded table", func() error {
				var n int
				if err := db.Raw("SELECT 1").Scan(&n).Error; err != nil || n != 1 {
					return fmt.Errorf("%d %v", n, err)
				}
				return nil
			})
			run("Update", func() error {
				res := db.Model(&SurfOrder{}).Where("user_id = ?", 100).Update("product", "new title")
				if res.Error != nil || res.RowsAffected != 5 {
					return fmt.Errorf("%d %v", res.RowsAffected, res.Error)
				}
				return onlyIn(s, "orders_0", "new title")
			})
			run("Delete", func() error {
				res := db.Unscoped().Where("user_id = ?", 100).Delete(&SurfOrder{ID: 100})
				if res.Error != nil || res.RowsAffected != 1 {
					return fmt.Errorf("%d %v", res.RowsAffected, res.Error)
				}
				var n int64
				return s.raw.Table("orders_0").Where("id = 100").Count(&n).Error
			})
			run("NoSharding: an unsharded table", func() error {
				if err := db.Create(&SurfCategory{Name: "c"}).Error; err != nil {
					return err
				}
				var cs []SurfCategory
				if err := db.Where("id = ?", 1).Find(&cs).Error; err != nil || len(cs) != 1 {
					return fmt.Errorf("%+v %v", cs, err)
				}
				return nil
			})
			run("DataRace: concurrent reads", func() error {
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var got []SurfOrder
						if err := db.Model(&SurfOrder{}).Where("user_id", 101).Find(&got).Error; err != nil || len(got) != 1 {
							errs <- fmt.Errorf("%d rows, %v", len(got), err)
						}
					}()
				}
				wg.Wait()
				close(errs)
				return <-errs
			})
			// ReplaceTableNameInCondition: conditions qualified with the
			// logic table, on one table.
			if err := db.Create(&[]SurfOrder{{UserID: 5, Product: "foo"}, {UserID: 5, Product: "bar"}}).Error; err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				cond string
				want []string
			}{
				{"orders.user_id = 5", []string{"bar", "foo"}},
				{"orders.user_id = 5 AND orders.product LIKE '%fo%'", []string{"foo"}},
				{"orders.user_id = 5 AND orders.id IN (" + fmt.Sprint(idOf(s, "foo")) + ", 2, 3)", []string{"foo"}},
				{"orders.user_id = 5 AND orders.id NOT IN (4, 5)", []string{"bar", "foo"}},
				{"orders.user_id = 5 AND orders.id BETWEEN 18 AND " + fmt.Sprint(idOf(s, "foo")), []string{"foo"}},
				{"orders.user_id = 5 AND ((orders.id > 18 AND orders.id < 30) OR orders.product = 'bar')", []string{"bar"}},
				{"orders.user_id = 5 AND UPPER(orders.product) = 'FOO'", []string{"foo"}},
			} {
				run("ReplaceTableNameInCondition "+tc.cond, func() error {
					var got []SurfOrder
					if err := db.Where(tc.cond).Find(&got).Error; err != nil {
						return err
					}
					if p := products(got); !slices.Equal(p, tc.want) {
						return fmt.Errorf("%v, want %v", p, tc.want)
					}
					return nil
				})
			}

			// Refused by design.
			refused("Select6: the id alone (go-gorm/sharding reads the shard from its Snowflake id)",
				shardconf.ErrMissingShardingKey, db.Model(&SurfOrder{}).Where("id", idOf(s, "Mac Studio")).Find(&[]SurfOrder{}).Error)
			refused("Select10: the nosharding hint reads the logic table, which does not exist",
				shardconf.ErrMissingShardingKey, db.Clauses(clause.Expr{SQL: "/* nosharding */"}).Model(&SurfOrder{}).Find(&[]SurfOrder{}).Error)
			refused("Select12: raw SQL on the logic table (sqlhook parses SQL)",
				gormplugin.ErrUnsupported, db.Raw("SELECT * FROM orders WHERE user_id = 101").Scan(&[]SurfOrder{}).Error)
			refused("InsertMissingShardingKey: raw INSERT",
				gormplugin.ErrUnsupported, db.Exec(`INSERT INTO orders (id, product) VALUES (1, 'iPad')`).Error)
			refused("SelectMissingShardingKey: raw SELECT",
				gormplugin.ErrUnsupported, db.Exec(`SELECT * FROM orders WHERE product = 'iPad'`).Error)
			refused("NoEq", shardconf.ErrMissingShardingKey, db.Model(&SurfOrder{}).Where("user_id <> ?", 101).Find(&[]SurfOrder{}).Error)
			// go-gorm/sharding refuses a range on the sharding key; a MOD
			// range reaches every table here, and the reads merge.
			run("ShardingKeyNotOK: a range on the sharding key", func() error {
				var got []SurfOrder
				if err := db.Model(&SurfOrder{}).Where("user_id > ? and id > ?", 100, int64(100)).Find(&got).Error; err != nil {
					return err
				}
				if p := products(got); !slices.Equal(p, []string{"Mac Studio"}) {
					return fmt.Errorf("%v", p)
				}
				return nil
			})
			run("ShardingIdOK: the id with a range on the sharding key", func() error {
				var got []SurfOrder
				if err := db.Model(&SurfOrder{}).Where("id = ? and user_id > ?", idOf(s, "bar"), 4).Find(&got).Error; err != nil {
					return err
				}
				if p := products(got); !slices.Equal(p, []string{"bar"}) {
					return fmt.Errorf("%v", p)
				}
				return nil
			})
		})
	}
}

// onlyIn checks that product is stored in table and in no other.
func onlyIn(s *surf, table, product string) error {
	st, err := s.storedRows()
	if err != nil {
		return err
	}
	for p, r := range st {
		if p == product && fmt.Sprintf("orders_%d", r.UserID%4) != table {
			return fmt.Errorf("%s stored for user %d, not in %s", p, r.UserID, table)
		}
	}
	var n int64
	if err := s.raw.Table(table).Where("product = ?", product).Count(&n).Error; err != nil || n == 0 {
		return fmt.Errorf("%s not in %s (%v)", product, table, err)
	}
	return nil
}

// idOf is the id of the live order with a product, read without the
// plugin.
func idOf(s *surf, product string) int64 {
	for i := range 4 {
		var id int64
		s.raw.Table(fmt.Sprintf("orders_%d", i)).Where("product = ?", product).Select("id").Scan(&id)
		if id != 0 {
			return id
		}
	}
	return -1
}

// TestLogicQualifiedColumnsOverSeveralTables: the alias also serves reads
// over several tables (WithScatter), whose merge orders and counts as one
// table would.
func TestLogicQualifiedColumnsOverSeveralTables(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			s := newSurf(t, be, "qualified_scatter_"+be, gormplugin.WithScatter())
			rows := s.seed(t, 100, 101, 102, 103)
			ids := make([]int64, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			slices.Sort(ids)
			slices.Reverse(ids)
			var got []SurfOrder
			err := s.db.Select("orders.id", "orders.user_id").Where("orders.product <> ''").Order("orders.id desc").Limit(3).Find(&got).Error
			if err != nil || len(got) != 3 {
				t.Fatalf("top 3: %+v %v", got, err)
			}
			for i, g := range got {
				if g.ID != ids[i] {
					t.Fatalf("top 3 ids %v, want %v", got, ids[:3])
				}
			}
			var n int64
			if err := s.db.Model(&SurfOrder{}).Where("orders.user_id > 0").Count(&n).Error; err != nil || n != 8 {
				t.Fatalf("Count: %d %v", n, err)
			}
			var us []int64
			if err := s.db.Model(&SurfOrder{}).Where("user_id IN (100, 101)").Order("orders.user_id").Pluck("orders.user_id", &us).Error; err != nil || !slices.Equal(us, []int64{100, 100, 101, 101}) {
				t.Fatalf("Pluck: %v %v", us, err)
			}
		})
	}
}

// TestWhereReshapedByATemplateIsNotNarrowed: Where("product = 'x'\tOR
// product = 'y'").Where("user_id = 101") is "x OR (y AND user_id = 101)"
// (GORM wraps a template only when it reads " OR " or " AND "), and a
// comment swallows the conditions after it: such statements reach every
// table (WithScatter) and give the database's answer, or are refused —
// never sent to user 101's table alone.
func TestWhereReshapedByATemplateIsNotNarrowed(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			sc := newSurf(t, be, "reshape_"+be, gormplugin.WithScatter())
			sc.seed(t, 100, 101, 102)
			plain := newSurf(t, be, "reshape_plain_"+be)
			or := "product = 'p100-a'\tOR product = 'p102-b'"
			var got []SurfOrder
			if err := sc.db.Where(or).Where("user_id = 101").Find(&got).Error; err != nil {
				t.Fatal(err)
			}
			if p := products(got); !slices.Equal(p, []string{"p100-a"}) {
				t.Fatalf("tab-separated OR: %v, want [p100-a] (p100-a OR (p102-b AND user 101))", p)
			}
			if err := plain.db.Where(or).Where("user_id = 101").Find(&got).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
				t.Fatalf("without WithScatter: %v", err)
			}
			var n int64
			if err := sc.db.Model(&SurfOrder{}).Where("product = 'p102-a' -- all that follows is a comment").Where("user_id = 101").Count(&n).Error; err != nil || n != 1 {
				t.Fatalf("comment: %d %v, want 1 (the comment swallows user_id = 101)", n, err)
			}
		})
	}
}
