package gormplugin_test

import (
	"errors"
	"fmt"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/internal/dbtest"
)

// NotedOrder is sharded_orders (dbRules: user_id picks the database) with an
// unsharded has-many association, OrderNote, kept in ds_0 (db0's own pool).
type NotedOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
	Notes  []OrderNote `gorm:"foreignKey:OrderID"`
}

func (NotedOrder) TableName() string { return "sharded_orders" }

type OrderNote struct {
	ID      int64 `gorm:"primaryKey"`
	OrderID int64
	Text    string
}

// OwnedOrder is sharded_orders with an unsharded belongs-to owner.
type OwnedOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
	Owner  OrderOwner `gorm:"foreignKey:UserID"`
}

func (OwnedOrder) TableName() string { return "sharded_orders" }

type OrderOwner struct {
	ID   int64 `gorm:"primaryKey"`
	Name string
}

// twoSourceOrders opens two PostgreSQL databases as ds_0 and ds_1, plugs the
// plugin (with scatter) into db0 and writes 4 users x 2 orders.
func twoSourceOrders(t *testing.T, prefix string) (*gorm.DB, []ShardedOrder) {
	t.Helper()
	open := func(name string) *gorm.DB {
		db, err := gorm.Open(postgres.Open(dbtest.Postgres(t, name)), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db0, db1 := open(prefix+"_ds0"), open(prefix+"_ds1")
	pool0, _ := db0.DB()
	pool1, _ := db1.DB()
	t.Cleanup(func() { pool0.Close(); pool1.Close() })
	pools := map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": pool1}
	if err := db0.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, dbRules)), gormplugin.WithDataSources(pools),
		gormplugin.WithScatter())); err != nil {
		t.Fatal(err)
	}
	if err := db0.AutoMigrate(&ShardedOrder{}); err != nil {
		t.Fatal(err)
	}
	var orders []ShardedOrder
	for u := int64(0); u < 4; u++ {
		for i := 0; i < 2; i++ {
			o := ShardedOrder{UserID: u, Amount: int(u)*100 + i}
			if err := db0.Create(&o).Error; err != nil {
				t.Fatal(err)
			}
			orders = append(orders, o)
		}
	}
	return db0, orders
}

// TestPreloadOfAnUnshardedAssociationAcrossDataSourcesReadsItsOwnTable:
// GORM's preloadDB copies the parent statement's Settings (shardkey:targets
// included) into the preload statement. The preload of an unsharded
// association is not routed, and it must not inherit the parent's decision
// (several targets over both data sources): the notes query reads the
// notes table on its own pool, and every order gets its note.
func TestPreloadOfAnUnshardedAssociationAcrossDataSourcesReadsItsOwnTable(t *testing.T) {
	db, orders := twoSourceOrders(t, "gormplugin_2src_preload")
	if err := db.AutoMigrate(&OrderNote{}); err != nil { // unsharded: db0's own database
		t.Fatal(err)
	}
	for _, o := range orders {
		if err := db.Create(&OrderNote{OrderID: o.ID, Text: "n"}).Error; err != nil {
			t.Fatal(err)
		}
	}
	var back []NotedOrder
	if err := db.Preload("Notes").Where("amount >= ?", 0).Find(&back).Error; err != nil {
		t.Fatalf("preload of an unsharded association after a read over both databases: %v", err)
	}
	if len(back) != len(orders) {
		t.Fatalf("%d orders, want %d", len(back), len(orders))
	}
	for _, o := range back {
		if len(o.Notes) != 1 {
			t.Fatalf("order %d (user %d) has %d notes, want 1", o.ID, o.UserID, len(o.Notes))
		}
	}
}

// TestReadPathsAcrossDataSourcesGiveEveryRowOnce: reads over both
// databases through GORM's other read paths give every row once; the
// statement's pool is the caller's again afterwards; reads in a
// transaction (also a PrepareStmt one, and after a SavePoint) and writes
// over both stay refused.
func TestReadPathsAcrossDataSourcesGiveEveryRowOnce(t *testing.T) {
	db, orders := twoSourceOrders(t, "gormplugin_2src_paths")
	n := len(orders)
	t.Run("FindInBatches", func(t *testing.T) {
		var seen []int64
		var batch []ShardedOrder
		err := db.Where("amount >= ?", 0).FindInBatches(&batch, 3, func(tx *gorm.DB, _ int) error {
			for _, o := range batch {
				seen = append(seen, o.ID)
			}
			return nil
		}).Error
		if err != nil || len(seen) != n {
			t.Fatalf("batches: %d rows, %v; want %d", len(seen), err, n)
		}
		uniq := map[int64]bool{}
		for _, id := range seen {
			uniq[id] = true
		}
		if len(uniq) != n {
			t.Fatalf("batches: %d distinct of %d", len(uniq), len(seen))
		}
	})
	t.Run("Pluck", func(t *testing.T) {
		var amounts []int
		if err := db.Model(&ShardedOrder{}).Where("amount >= ?", 0).Pluck("amount", &amounts).Error; err != nil || len(amounts) != n {
			t.Fatalf("pluck: %v %v", amounts, err)
		}
	})
	t.Run("LastTake", func(t *testing.T) {
		maxID := int64(0)
		for _, o := range orders {
			maxID = max(maxID, o.ID)
		}
		var last, take ShardedOrder
		if err := db.Where("amount >= ?", 0).Last(&last).Error; err != nil || last.ID != maxID {
			t.Fatalf("last: %+v %v; want id %d", last, err, maxID)
		}
		if err := db.Where("amount = ?", 301).Take(&take).Error; err != nil || take.UserID != 3 {
			t.Fatalf("take: %+v %v", take, err)
		}
		var none ShardedOrder
		if err := db.Where("amount = ?", -5).First(&none).Error; !errors.Is(err, gorm.ErrRecordNotFound) {
			t.Fatalf("first of nothing: %v", err)
		}
	})
	t.Run("ReusedChainKeepsPool", func(t *testing.T) {
		q := db.Model(&ShardedOrder{}).Where("amount >= ?", 0)
		before := q.Statement.ConnPool
		var c int64
		var rows []ShardedOrder
		if err := q.Count(&c).Error; err != nil || c != int64(n) {
			t.Fatalf("count: %d %v", c, err)
		}
		if q.Statement.ConnPool != before {
			t.Fatalf("the statement's pool changed after a read over both databases")
		}
		if err := q.Find(&rows).Error; err != nil || len(rows) != n {
			t.Fatalf("find after count: %d %v", len(rows), err)
		}
		s := db.Where("amount >= ?", 0).Session(&gorm.Session{})
		for i := 0; i < 2; i++ {
			rows = nil
			if err := s.Find(&rows).Error; err != nil || len(rows) != n {
				t.Fatalf("session find %d: %d %v", i, len(rows), err)
			}
		}
	})
	t.Run("PrepareStmtLockingScan", func(t *testing.T) {
		ps := db.Session(&gorm.Session{PrepareStmt: true})
		for i := 0; i < 2; i++ {
			var rows []ShardedOrder
			if err := ps.Where("amount >= ?", 0).Find(&rows).Error; err != nil || len(rows) != n {
				t.Fatalf("prepared find %d: %d %v", i, len(rows), err)
			}
		}
		var locked []ShardedOrder
		if err := db.Clauses(clause.Locking{Strength: "UPDATE"}).Where("amount >= ?", 0).Find(&locked).Error; err != nil || len(locked) != n {
			t.Fatalf("FOR UPDATE outside a transaction: %d %v", len(locked), err)
		}
		type pair struct {
			ID     int64
			Amount int
		}
		var scanned []pair
		if err := db.Model(&ShardedOrder{}).Where("amount >= ?", 0).Scan(&scanned).Error; err != nil || len(scanned) != n {
			t.Fatalf("Scan over both databases (merged into one *sql.Rows): %d rows, %v; want %d", len(scanned), err, n)
		}
		users := map[int64]bool{}
		var all []ShardedOrder
		if err := db.Where("amount >= ?", 0).Find(&all).Error; err != nil {
			t.Fatal(err)
		}
		for _, o := range all {
			users[o.UserID] = true
		}
		var c int64
		if err := db.Model(&ShardedOrder{}).Distinct("user_id").Where("amount >= ?", 0).Count(&c).Error; err != nil || c != int64(len(users)) {
			t.Fatalf("Count DISTINCT over both databases: %d %v; want %d", c, err, len(users))
		}
	})
	t.Run("TransactionRefused", func(t *testing.T) {
		for name, tx := range map[string]func(func(*gorm.DB) error) error{
			"plain": func(f func(*gorm.DB) error) error { return db.Transaction(f) },
			"prepare": func(f func(*gorm.DB) error) error {
				return db.Session(&gorm.Session{PrepareStmt: true}).Transaction(f)
			},
			"savepoint": func(f func(*gorm.DB) error) error {
				return db.Transaction(func(tx *gorm.DB) error {
					if err := tx.SavePoint("sp1").Error; err != nil {
						return err
					}
					return f(tx)
				})
			},
			"nested": func(f func(*gorm.DB) error) error {
				return db.Transaction(func(tx *gorm.DB) error { return tx.Transaction(f) })
			},
		} {
			var rows []ShardedOrder
			var c int64
			if err := tx(func(tx *gorm.DB) error { return tx.Where("amount >= ?", 0).Find(&rows).Error }); !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s: find over both databases in a transaction: %v", name, err)
			}
			if err := tx(func(tx *gorm.DB) error { return tx.Model(&ShardedOrder{}).Where("amount >= ?", 0).Count(&c).Error }); !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s: count over both databases in a transaction: %v", name, err)
			}
		}
		b := db.Begin()
		defer b.Rollback()
		var rows []ShardedOrder
		if err := b.Where("amount >= ?", 0).Find(&rows).Error; !errors.Is(err, gormplugin.ErrUnsupported) {
			t.Errorf("Begin: find over both databases: %v", err)
		}
	})
	t.Run("WritesRefused", func(t *testing.T) {
		o := orders[0]
		// Save routes by the row's own sharding values: user_id 0, where
		// orders[2] (user 1) is not; the row is refused, not moved.
		for name, err := range map[string]error{
			"delete":       db.Where("amount >= ?", 0).Delete(&ShardedOrder{}).Error,
			"updates":      db.Model(&ShardedOrder{}).Where("amount >= ?", 0).Updates(map[string]any{"amount": 7}).Error,
			"save":         db.Save(&ShardedOrder{ID: orders[2].ID, Amount: 9}).Error,
			"delete by id": db.Delete(&ShardedOrder{}, o.ID).Error,
		} {
			if !errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s over both databases: %v", name, err)
			}
		}
		var c int64
		if err := db.Model(&ShardedOrder{}).Where("amount >= ?", 0).Count(&c).Error; err != nil || c != int64(n) {
			t.Fatalf("rows after refused writes: %d %v", c, err)
		}
		var back ShardedOrder
		if err := db.Where("amount = ?", o.Amount).First(&back).Error; err != nil || back != o {
			t.Fatalf("order 0 after refused writes: %+v %v", back, err)
		}
	})
}

// TestFirstOrCreateAcrossDataSourcesCreatesTheMissingRow: FirstOrCreate
// (and FirstOrInit) look up with Find(&one) and Limit(1), which GORM
// answers with no error when nothing matches. A merged read over several
// tables (here over both databases) answers the same, not with
// ErrRecordNotFound, so FirstOrCreate creates the row, and finds it the
// second time.
func TestFirstOrCreateAcrossDataSourcesCreatesTheMissingRow(t *testing.T) {
	db, _ := twoSourceOrders(t, "gormplugin_2src_foc")
	var o ShardedOrder
	if err := db.Where(ShardedOrder{Amount: 777}).Attrs(ShardedOrder{UserID: 3}).FirstOrCreate(&o).Error; err != nil || o.ID == 0 {
		t.Fatalf("first-or-create over both databases: %+v %v", o, err)
	}
	var again ShardedOrder
	if err := db.Where(ShardedOrder{Amount: 777}).Attrs(ShardedOrder{UserID: 3}).FirstOrCreate(&again).Error; err != nil || again.ID != o.ID {
		t.Fatalf("first-or-create again: %+v %v; want id %d", again, err, o.ID)
	}
	var one ShardedOrder
	if err := db.Where("amount = ?", -1).Limit(1).Find(&one).Error; err != nil {
		t.Fatalf("Find(&one) with Limit(1), nothing matching: %v; GORM gives no error", err)
	}
}

// Binding tables over two databases: id (order_id) picks both the
// database and the table.
const boundTwoSourceRules = `
rules:
- !SHARDING
  tables:
    bound_orders:
      actualDataNodes: ds_${0..1}.bound_orders_${0..1}
      databaseStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by2}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by2}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
    bound_items:
      actualDataNodes: ds_${0..1}.bound_items_${0..1}
      databaseStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: by2}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: by2}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  bindingTables:
    - bound_orders,bound_items
  shardingAlgorithms:
    by2: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 9}}
`

// boundTwoSources opens two PostgreSQL databases for boundTwoSourceRules and
// writes orders 10..15 (even ids in ds_0, odd in ds_1), one item each.
func boundTwoSources(t *testing.T, prefix string) (*gorm.DB, []int64) {
	t.Helper()
	open := func(name string) *gorm.DB {
		db, err := gorm.Open(postgres.Open(dbtest.Postgres(t, name)), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db, db1 := open(prefix+"_ds0"), open(prefix+"_ds1")
	pool0, _ := db.DB()
	pool1, _ := db1.DB()
	t.Cleanup(func() { pool0.Close(); pool1.Close() })
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, boundTwoSourceRules)),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": pool1}), gormplugin.WithScatter())); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&BoundOrder{}, &BoundItem{}); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := 0; i < 6; i++ {
		o := BoundOrder{ID: int64(10 + i), Note: fmt.Sprint("n", i)}
		if err := db.Create(&o).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Create(&BoundItem{ID: int64(100 + i), OrderID: o.ID, SKU: fmt.Sprint("s", i)}).Error; err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.ID)
	}
	return db, ids
}

// TestJoinOfBindingTablesOverSeveralTargetsGivesEveryRow: GORM's
// BuildQuerySQL starts from Clauses["FROM"] and stores the FROM clause it
// built (with the JOINs) back into it; the second target's query still
// carries only its own JOIN (not the first target's as well: "table name
// bound_items specified more than once"), so the join over both databases
// gives every row. (TestRouteJoinBindingTables mostly reads one
// table: its snowflake ids mostly share one parity.)
func TestJoinOfBindingTablesOverSeveralTargetsGivesEveryRow(t *testing.T) {
	db, ids := boundTwoSources(t, "gormplugin_bound2_join")
	type row struct {
		Note string
		SKU  string
	}
	var all []row
	err := db.Table("bound_orders").Select("bound_orders.note, bound_items.sku").
		Joins("JOIN bound_items ON bound_items.order_id = bound_orders.id").
		Where("bound_orders.id IN ?", ids).Order(`note COLLATE "C"`).Find(&all).Error
	if err != nil || len(all) != len(ids) {
		t.Fatalf("join over both databases: %+v %v", all, err)
	}
	for i, r := range all {
		if r != (row{fmt.Sprint("n", i), fmt.Sprint("s", i)}) {
			t.Fatalf("join row %d: %+v", i, r)
		}
	}
}

// TestPreloadOfAShardedAssociationAcrossDataSourcesReadsEachFromItsOwnDatabase:
// a Preload of a sharded (binding) association over both databases reads
// every order's item from its own database.
func TestPreloadOfAShardedAssociationAcrossDataSourcesReadsEachFromItsOwnDatabase(t *testing.T) {
	db, ids := boundTwoSources(t, "gormplugin_bound2_preload_bound")
	var back []BoundOrder
	if err := db.Preload("Items").Where("note >= ?", "").Order("id").Find(&back).Error; err != nil || len(back) != len(ids) {
		t.Fatalf("preload over both databases: %d %v", len(back), err)
	}
	for i, o := range back {
		if o.ID != ids[i] || len(o.Items) != 1 || o.Items[0].SKU != fmt.Sprint("s", i) {
			t.Fatalf("order %d: %+v", i, o)
		}
	}
}

// TestCreateWithAssociationsOnAnotherDataSourceWritesBoth: a Create
// routes before GORM begins its transaction, so the transaction begins on
// the target's pool (ds_1), not the *gorm.DB's own (ds_0). The
// association's nested Create runs in that transaction, on the same data
// source, and is accepted: creating an order with its item succeeds
// whichever data source they route to.
func TestCreateWithAssociationsOnAnotherDataSourceSucceeds(t *testing.T) {
	open := func(name string) *gorm.DB {
		db, err := gorm.Open(postgres.Open(dbtest.Postgres(t, name)), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db, db1 := open("gormplugin_bound2_assoc_ds0"), open("gormplugin_bound2_assoc_ds1")
	pool0, _ := db.DB()
	pool1, _ := db1.DB()
	defer pool1.Close()
	defer pool0.Close()
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, boundTwoSourceRules)),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": pool1}))); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&BoundOrder{}, &BoundItem{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // ids 21 (ds_1) and 22 (ds_0)
		o := BoundOrder{ID: int64(21 + i), Note: fmt.Sprint("n", i), Items: []BoundItem{{ID: int64(200 + i), SKU: fmt.Sprint("s", i)}}}
		if err := db.Create(&o).Error; err != nil {
			t.Fatalf("create order %d (id %d, data source ds_%d) with its item: %v", i, o.ID, o.ID%2, err)
		}
	}
}

// TestPreloadOfABelongsToOwnerAcrossDataSourcesFindsEveryOwner: the
// preload of an unsharded belongs-to owner after a read over both
// databases reads the owners' table, not the parent's physical tables
// ("SELECT * FROM sharded_orders_N WHERE sharded_orders_N.id IN (user
// ids)" would match nothing, or order rows read as users, and give no
// error): every order comes back with its owner.
func TestPreloadOfABelongsToOwnerAcrossDataSourcesFindsEveryOwner(t *testing.T) {
	db, orders := twoSourceOrders(t, "gormplugin_2src_owner")
	if err := db.AutoMigrate(&OrderOwner{}); err != nil {
		t.Fatal(err)
	}
	for u := int64(1); u < 4; u++ {
		if err := db.Create(&OrderOwner{ID: u, Name: fmt.Sprint("u", u)}).Error; err != nil {
			t.Fatal(err)
		}
	}
	var back []OwnedOrder
	if err := db.Preload("Owner").Where("amount >= ?", 0).Find(&back).Error; err != nil || len(back) != len(orders) {
		t.Fatalf("preload owners after a read over both databases: %d %v", len(back), err)
	}
	for _, o := range back {
		if o.UserID > 0 && o.Owner.Name != fmt.Sprint("u", o.UserID) {
			t.Fatalf("order %d of user %d has owner %+v, want u%d", o.ID, o.UserID, o.Owner, o.UserID)
		}
	}
}
