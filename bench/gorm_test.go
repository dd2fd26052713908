package bench

// GORM benchmarks: the cost of shardkey's gormplugin on SQLite (in memory,
// github.com/libtnb/sqlite over modernc.org/sqlite), against the same
// workload without it and against gorm.io/sharding. Sub-benchmarks are
// named tx=<off|on>/impl=<x>, so benchstat can put the implementations in
// columns (-col /impl) and the transaction modes in rows; see README.md.
//
//	BenchmarkGormCreate           one db.Create of one row: IDs set by hand
//	                              (impl=manual) vs filled by
//	                              gormplugin.New(worker-id 1) (impl=shardkey)
//	BenchmarkGormCreateInBatches  CreateInBatches of 10,000 rows in batches
//	                              of 1,000: the same two sides
//	BenchmarkShardingOverhead     insert one order with a SNOWFLAKE key and
//	                              read it back by key: one unsharded table
//	                              (impl=plain) vs orders_0..3 by id % 4 routed
//	                              by gormplugin rules (impl=shardkey) or by
//	                              gorm.io/sharding (impl=gormsharding)
//
// tx=off sets gorm.Config.SkipDefaultTransaction (each write is its bare
// statement), tx=on leaves GORM's default (BEGIN ... COMMIT around each
// write); both sides of a pair always run under the same one. One finding
// shapes BenchmarkShardingOverhead: gorm.io/sharding runs no transaction
// under tx=on.
//
// Every benchmark runs on a fresh in-memory database of its own, with
// gorm's logger discarded. Every model tags its key autoIncrement:false, so
// that GORM builds the same INSERT on every side: the key is an ordinary
// column, with no RETURNING clause and no AUTOINCREMENT column (gormplugin
// makes that change itself for the models it keys; the tag makes the other
// sides match). TestGormWorkloadsAgree checks the workloads first.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/sharding"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// Event is the row of the create benchmarks (table events).
type Event struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	Amount int64
	Note   string
}

// Order is the row of the sharding benchmark (table orders, or
// orders_0..orders_3).
type Order struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID int64
	Amount int64
}

const (
	batchRows = 10_000 // rows per CreateInBatches op
	// CreateInBatches batch size. With 1,000 rows (4,000 parameters) per
	// INSERT, the SQLite driver's parameter binding, which is quadratic in
	// the parameter count, takes ~70% of the time on both sides and its
	// cache behaviour dominates the comparison; 100 rows a batch, a common
	// GORM setting, measures what the plugin adds.
	batchSize = 100
	numShards = 4
)

// pluginProps configures gormplugin's default generator in the create
// benchmarks.
var pluginProps = keygen.Props{"worker-id": "1"}

// ordersRules shards orders into orders_0..3 by id % 4 and generates id with
// a SNOWFLAKE of worker 1: the same generator plain and gormsharding set by
// hand (newOrderKeys). The DSN is not used: the plugin runs on the
// *gorm.DB's own connection when the rules have one data source.
const ordersRules = `
dataSources:
  ds: {driver: sqlite, dsn: x}
rules:
- !SHARDING
  tables:
    orders:
      actualDataNodes: ds.orders_${0..3}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: by_id}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_id: {type: MOD, props: {sharding-count: 4}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}
`

// dbSeq makes every database name unique within the process.
var dbSeq atomic.Int64

// openSQLite opens a fresh shared-cache in-memory SQLite database, with
// gorm.Config.SkipDefaultTransaction set to skipTx. The database lives while
// one of its connections is open; close() closes the pool and so frees it.
// name only labels it.
func openSQLite(tb testing.TB, name string, skipTx bool) (db *gorm.DB, close func()) {
	tb.Helper()
	label := strings.NewReplacer("/", "_", "=", "_", " ", "_", "#", "_").Replace(name)
	dsn := fmt.Sprintf("file:%s_%d?mode=memory&cache=shared", label, dbSeq.Add(1))
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: skipTx,
	})
	if err != nil {
		tb.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		tb.Fatal(err)
	}
	return db, func() {
		if err := sqlDB.Close(); err != nil {
			tb.Error(err)
		}
	}
}

// rawDB is the database/sql pool under db: statements on it pass no GORM
// callback, so neither plugin sees them.
func rawDB(tb testing.TB, db *gorm.DB) *sql.DB {
	tb.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		tb.Fatal(err)
	}
	return sqlDB
}

// txModes are the two settings of gorm.Config.SkipDefaultTransaction the
// benchmarks run under, as a tx=<mode> level of the sub-benchmark names:
// off (SkipDefaultTransaction: true) runs each GORM write as its bare
// statement; on (GORM's default) wraps it in BEGIN ... COMMIT.
var txModes = []struct {
	name   string
	skipTx bool
}{{"off", true}, {"on", false}}

// ---------------------------------------------------------------------------
// Create benchmarks.

// newEventsDB is a fresh database with the events table; with plugin, it
// uses gormplugin.New(pluginProps) first.
func newEventsDB(tb testing.TB, skipTx, plugin bool) (*gorm.DB, func()) {
	tb.Helper()
	db, closeDB := openSQLite(tb, tb.Name(), skipTx)
	if plugin {
		if err := db.Use(gormplugin.New(pluginProps)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := db.AutoMigrate(&Event{}); err != nil {
		tb.Fatal(err)
	}
	return db, closeDB
}

// BenchmarkGormCreate: one db.Create(&row) per op. manual numbers rows from
// a counter; shardkey leaves ID zero for the plugin to fill.
func BenchmarkGormCreate(b *testing.B) {
	for _, tx := range txModes {
		b.Run("tx="+tx.name, func(b *testing.B) {
			b.Run("impl=manual", func(b *testing.B) {
				db, closeDB := newEventsDB(b, tx.skipTx, false)
				defer closeDB()
				var next atomic.Int64
				b.ReportAllocs()
				for b.Loop() {
					e := Event{ID: next.Add(1), UserID: 7, Amount: 10, Note: "n"}
					if err := db.Create(&e).Error; err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("impl=shardkey", func(b *testing.B) {
				db, closeDB := newEventsDB(b, tx.skipTx, true)
				defer closeDB()
				b.ReportAllocs()
				for b.Loop() {
					e := Event{UserID: 7, Amount: 10, Note: "n"}
					if err := db.Create(&e).Error; err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// resetEvents readies rows for another CreateInBatches: IDs from next
// (manual, next != nil) or zero (shardkey).
func resetEvents(rows []Event, next *atomic.Int64) {
	for i := range rows {
		var id int64
		if next != nil {
			id = next.Add(1)
		}
		rows[i] = Event{ID: id, UserID: int64(i), Amount: 10, Note: "n"}
	}
}

// benchInBatches runs CreateInBatches ops: with the plugin (keys left
// zero), or with keys by hand counting up from start.
func benchInBatches(b *testing.B, skipTx, plugin bool, start int64) {
	db, closeDB := newEventsDB(b, skipTx, plugin)
	defer closeDB()
	var next *atomic.Int64
	if !plugin {
		next = new(atomic.Int64)
		next.Store(start)
	}
	rows := make([]Event, batchRows)
	b.ReportAllocs()
	for b.Loop() {
		resetEvents(rows, next)
		if err := db.CreateInBatches(&rows, batchSize).Error; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGormCreateInBatches: CreateInBatches of batchRows rows, batchSize
// at a time, per op, into one growing table. Under tx=on GORM runs the
// whole CreateInBatches in one transaction.
func BenchmarkGormCreateInBatches(b *testing.B) {
	for _, tx := range txModes {
		b.Run("tx="+tx.name, func(b *testing.B) {
			b.Run("impl=manual", func(b *testing.B) { benchInBatches(b, tx.skipTx, false, 0) })
			// manual-wide: keys by hand of a Snowflake key's magnitude (19
			// digits). SQLite stores small integers in fewer bytes, so a
			// counter from 1 is cheaper for the database to store than any
			// generated key; this baseline separates that from the plugin.
			b.Run("impl=manual-wide", func(b *testing.B) { benchInBatches(b, tx.skipTx, false, 1_331_000_000_000_000_000) })
			b.Run("impl=shardkey", func(b *testing.B) { benchInBatches(b, tx.skipTx, true, 0) })
		})
	}
}

// ---------------------------------------------------------------------------
// Sharding overhead.

// orderImpl is one side of BenchmarkShardingOverhead.
type orderImpl struct {
	name string
	// open returns a fresh database with the orders table(s) and, unless
	// the plugin fills keys, a key generator (gen) to set ID by hand.
	open func(tb testing.TB, skipTx bool) (db *gorm.DB, gen keygen.IDGenerator, closeDB func())
	// table is the physical table that holds the order with key id.
	table func(id int64) string
}

// openShardkeyOrders is a fresh database with gormplugin under ordersRules
// and orders_0..3 migrated.
func openShardkeyOrders(tb testing.TB, skipTx bool) (*gorm.DB, keygen.IDGenerator, func()) {
	tb.Helper()
	db, closeDB := openSQLite(tb, tb.Name(), skipTx)
	cfg, err := shardconf.Parse([]byte(ordersRules))
	if err != nil {
		tb.Fatal(err)
	}
	router, err := shardconf.NewRouter(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(router))); err != nil {
		tb.Fatal(err)
	}
	if err := db.AutoMigrate(&Order{}); err != nil {
		tb.Fatal(err)
	}
	return db, nil, closeDB
}

// newOrderKeys is the SNOWFLAKE that plain and gormsharding set keys from by
// hand: worker 1, as in ordersRules.
func newOrderKeys(tb testing.TB) keygen.IDGenerator {
	tb.Helper()
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "1"})
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func shardTable(id int64) string { return fmt.Sprintf("orders_%d", id%numShards) }

var orderImpls = []orderImpl{
	{
		// plain: the same statements on one unsharded table.
		name: "plain",
		open: func(tb testing.TB, skipTx bool) (*gorm.DB, keygen.IDGenerator, func()) {
			db, closeDB := openSQLite(tb, tb.Name(), skipTx)
			if err := db.AutoMigrate(&Order{}); err != nil {
				tb.Fatal(err)
			}
			return db, newOrderKeys(tb), closeDB
		},
		table: func(int64) string { return "orders" },
	},
	{
		// shardkey: gormplugin with ordersRules; AutoMigrate creates
		// orders_0..3, the plugin fills id and routes both statements.
		name: "shardkey",
		open: func(tb testing.TB, skipTx bool) (*gorm.DB, keygen.IDGenerator, func()) {
			return openShardkeyOrders(tb, skipTx)
		},
		table: shardTable,
	},
	{
		// gormsharding: gorm.io/sharding, 4 shards on id. Its
		// ShardingMigrator's AutoMigrate creates orders_0..3 (the
		// suffixes of its default MOD algorithm, "_%01d" under 10
		// shards). With id as the sharding key it does not generate the
		// key: an INSERT without the id column is ErrMissingShardingKey,
		// and one with id = 0 keeps 0 (it fills id only when the sharding
		// key is another column; checkGormShardingKeys). So the key is set
		// by hand, from the same SNOWFLAKE as plain.
		name: "gormsharding",
		open: func(tb testing.TB, skipTx bool) (*gorm.DB, keygen.IDGenerator, func()) {
			db, closeDB := openSQLite(tb, tb.Name(), skipTx)
			if err := db.Use(sharding.Register(sharding.Config{
				ShardingKey:         "id",
				NumberOfShards:      numShards,
				PrimaryKeyGenerator: sharding.PKSnowflake,
			}, "orders")); err != nil {
				tb.Fatal(err)
			}
			if err := db.AutoMigrate(&Order{}); err != nil {
				tb.Fatal(err)
			}
			return db, newOrderKeys(tb), closeDB
		},
		table: shardTable,
	},
}

// orderRoundTrip is one op of BenchmarkShardingOverhead: insert o (with its
// ID set when gen is non-nil, else left for the plugin) and read it back by
// key into got. Every side issues the same two GORM calls:
//
//	INSERT INTO `orders` (`id`,`user_id`,`amount`) VALUES (?,?,?)
//	SELECT * FROM `orders` WHERE id = ? ORDER BY `orders`.`id` LIMIT 1
//
// (gorm.io/sharding requires the sharding key in the WHERE clause, which
// this form gives it; gormplugin routes db.First(&got, id) as well).
func orderRoundTrip(ctx context.Context, db *gorm.DB, gen keygen.IDGenerator, o, got *Order) error {
	if gen != nil {
		id, err := gen.NextID(ctx)
		if err != nil {
			return err
		}
		o.ID = id
	}
	if err := db.Create(o).Error; err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if err := db.Where("id = ?", o.ID).First(got).Error; err != nil {
		return fmt.Errorf("read back %d: %w", o.ID, err)
	}
	return nil
}

// BenchmarkShardingOverhead: one orderRoundTrip (two GORM statements) per
// op. The overhead of a sharding layer per statement is
// (its sec/op - plain's sec/op) / 2, plain under the same tx mode. Under
// tx=on, plain and shardkey run BEGIN; INSERT; COMMIT; SELECT, but
// gorm.io/sharding runs no transaction at all (its ConnPool.BeginTx returns
// the pool itself, as *sql.DB is not a gorm.ConnPoolBeginner), so its tx=on
// numbers are INSERT; SELECT like tx=off and compare with plain's tx=off.
func BenchmarkShardingOverhead(b *testing.B) {
	for _, tx := range txModes {
		b.Run("tx="+tx.name, func(b *testing.B) {
			for _, impl := range orderImpls {
				b.Run("impl="+impl.name, func(b *testing.B) {
					db, gen, closeDB := impl.open(b, tx.skipTx)
					defer closeDB()
					ctx := context.Background()
					var i int64
					b.ReportAllocs()
					for b.Loop() {
						i++
						o, got := Order{UserID: i, Amount: 10}, Order{}
						if err := orderRoundTrip(ctx, db, gen, &o, &got); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Correctness.

// eventsBack reads every row of events in key order, bypassing GORM.
func eventsBack(t *testing.T, db *gorm.DB) []Event {
	t.Helper()
	rows, err := rawDB(t, db).Query("SELECT id, user_id, amount, note FROM events ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.ID, &e.UserID, &e.Amount, &e.Note); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkSnowflake fails unless id decodes as a worker-1 SNOWFLAKE key.
func checkSnowflake(t *testing.T, id int64) {
	t.Helper()
	d, ok := newOrderKeys(t).(keygen.Decomposer)
	if !ok {
		t.Fatal("SNOWFLAKE is not a keygen.Decomposer")
	}
	p, err := d.Decompose(id)
	if err != nil || p.Worker != 1 {
		t.Errorf("key %d: %+v, %v; want a SNOWFLAKE of worker 1", id, p, err)
	}
}

// tableSQL is the CREATE TABLE statement SQLite keeps for table, with the
// table's name replaced by "T" (so tables of different names compare).
func tableSQL(t *testing.T, db *gorm.DB, table string) string {
	t.Helper()
	var s string
	if err := rawDB(t, db).QueryRow("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&s); err != nil {
		t.Fatalf("table %s: %v", table, err)
	}
	return strings.Replace(s, "`"+table+"`", "T", 1)
}

// TestGormWorkloadsAgree checks that every side of every benchmark, in
// both tx modes, does the work it claims: the rows it creates are in the
// table (in the expected shard) with the values written, the keys are the
// expected kind, and the sides of a pair use tables of the same definition.
func TestGormWorkloadsAgree(t *testing.T) {
	for _, tx := range txModes {
		t.Run("tx="+tx.name, func(t *testing.T) {
			t.Run("Create", func(t *testing.T) { checkCreate(t, tx.skipTx) })
			t.Run("CreateInBatches", func(t *testing.T) { checkCreateInBatches(t, tx.skipTx) })
			t.Run("ShardingOverhead", func(t *testing.T) { checkShardingOverhead(t, tx.skipTx) })
		})
	}
	t.Run("GormShardingKeys", checkGormShardingKeys)
}

// autoOrder is Order with GORM's default auto-increment key, on the same
// table.
type autoOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int64
}

func (autoOrder) TableName() string { return "orders" }

// checkGormShardingKeys checks why gormsharding sets its keys by hand:
// gorm.io/sharding generates no key that is its sharding key. A model with
// an auto-increment key leaves id out of the INSERT, which it refuses
// (ErrMissingShardingKey); with autoIncrement:false GORM sends id = 0, which
// it keeps and routes to orders_0.
func checkGormShardingKeys(t *testing.T) {
	var gs orderImpl
	for _, impl := range orderImpls {
		if impl.name == "gormsharding" {
			gs = impl
		}
	}
	db, _, closeDB := gs.open(t, true)
	defer closeDB()
	a := autoOrder{UserID: 1}
	if err := db.Create(&a).Error; !errors.Is(err, sharding.ErrMissingShardingKey) {
		t.Errorf("auto-increment key left zero: %v, want ErrMissingShardingKey", err)
	}
	o := Order{UserID: 2}
	if err := db.Create(&o).Error; err != nil || o.ID != 0 {
		t.Fatalf("autoIncrement:false key left zero: id %d, %v; want id 0 kept", o.ID, err)
	}
	var n int
	if err := rawDB(t, db).QueryRow("SELECT count(*) FROM orders_0 WHERE id = 0 AND user_id = 2").Scan(&n); err != nil || n != 1 {
		t.Errorf("orders_0 holds %d rows with id 0 (%v), want 1", n, err)
	}
}

func checkCreate(t *testing.T, skipTx bool) {
	var schemas []string
	for _, plugin := range []bool{false, true} {
		db, closeDB := newEventsDB(t, skipTx, plugin)
		var want []Event
		for i := range 100 {
			e := Event{UserID: int64(i), Amount: int64(10 * i), Note: fmt.Sprint("n", i)}
			if !plugin {
				e.ID = int64(i + 1)
			}
			if err := db.Create(&e).Error; err != nil {
				t.Fatal(err)
			}
			if plugin {
				if e.ID == 0 {
					t.Fatal("shardkey: no key filled")
				}
				checkSnowflake(t, e.ID)
			}
			want = append(want, e)
		}
		if got := eventsBack(t, db); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("plugin=%v: rows read back differ from rows created:\n got %v\nwant %v", plugin, got, want)
		}
		var got Event
		if err := db.First(&got, want[42].ID).Error; err != nil || got != want[42] {
			t.Errorf("plugin=%v: First(%d) = %+v, %v; want %+v", plugin, want[42].ID, got, err, want[42])
		}
		schemas = append(schemas, tableSQL(t, db, "events"))
		closeDB()
	}
	if schemas[0] != schemas[1] {
		t.Errorf("events tables differ:\nmanual   %s\nshardkey %s", schemas[0], schemas[1])
	}
}

func checkCreateInBatches(t *testing.T, skipTx bool) {
	for _, plugin := range []bool{false, true} {
		db, closeDB := newEventsDB(t, skipTx, plugin)
		var next *atomic.Int64
		if !plugin {
			next = new(atomic.Int64)
		}
		rows := make([]Event, batchRows)
		var want []Event
		for range 2 {
			resetEvents(rows, next)
			if err := db.CreateInBatches(&rows, batchSize).Error; err != nil {
				t.Fatal(err)
			}
			want = append(want, rows...)
		}
		for i, e := range want {
			if e.ID == 0 || (i > 0 && e.ID <= want[i-1].ID) {
				t.Fatalf("plugin=%v: key %d = %d after key %d", plugin, i, e.ID, want[max(i-1, 0)].ID)
			}
		}
		if plugin {
			checkSnowflake(t, want[0].ID)
			checkSnowflake(t, want[len(want)-1].ID)
		}
		if got := eventsBack(t, db); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("plugin=%v: %d rows read back differ from the %d created", plugin, len(got), len(want))
		}
		closeDB()
	}
}

func checkShardingOverhead(t *testing.T, skipTx bool) {
	const n = 200
	schemas := map[string]string{}
	for _, impl := range orderImpls {
		t.Run(impl.name, func(t *testing.T) {
			db, gen, closeDB := impl.open(t, skipTx)
			defer closeDB()
			// Record whether each INSERT runs in a transaction: the
			// statement's pool, seen just before gorm:create, is a *sql.Tx
			// (or gorm.io/sharding's ConnPool around one).
			var inTx []bool
			if err := db.Callback().Create().Before("gorm:create").Register("bench:probe_tx", func(db *gorm.DB) {
				pool := db.Statement.ConnPool
				if sp, ok := pool.(*sharding.ConnPool); ok {
					pool = sp.ConnPool
				}
				_, ok := pool.(*sql.Tx)
				inTx = append(inTx, ok)
			}); err != nil {
				t.Fatal(err)
			}
			sqlDB := rawDB(t, db)
			ctx := context.Background()
			perTable := map[string]int{}
			for i := range n {
				o, got := Order{UserID: int64(i), Amount: int64(i * 3)}, Order{}
				if err := orderRoundTrip(ctx, db, gen, &o, &got); err != nil {
					t.Fatal(err)
				}
				if o.ID == 0 {
					t.Fatal("no key")
				}
				checkSnowflake(t, o.ID)
				if got != o {
					t.Fatalf("read back %+v, inserted %+v", got, o)
				}
				// The row is in its table, read without GORM.
				table := impl.table(o.ID)
				perTable[table]++
				var raw Order
				if err := sqlDB.QueryRow("SELECT id, user_id, amount FROM "+table+" WHERE id = ?", o.ID).
					Scan(&raw.ID, &raw.UserID, &raw.Amount); err != nil {
					t.Fatalf("order %d in %s: %v", o.ID, table, err)
				}
				if raw != o {
					t.Fatalf("%s holds %+v, inserted %+v", table, raw, o)
				}
			}
			// Nothing else anywhere: each table holds exactly the rows
			// counted for it, and the sharded sides have no orders table.
			tables := []string{"orders"}
			if impl.name != "plain" {
				tables = []string{"orders_0", "orders_1", "orders_2", "orders_3"}
				var c int
				if err := sqlDB.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'orders'").Scan(&c); err != nil || c != 0 {
					t.Errorf("a logic table orders exists (%d, %v)", c, err)
				}
				if len(perTable) != numShards {
					t.Errorf("%d orders landed in %d tables (%v), want all %d", n, len(perTable), perTable, numShards)
				}
			}
			for _, table := range tables {
				var c int
				if err := sqlDB.QueryRow("SELECT count(*) FROM " + table).Scan(&c); err != nil {
					t.Fatal(err)
				}
				if c != perTable[table] {
					t.Errorf("%s holds %d rows, want %d", table, c, perTable[table])
				}
			}
			schemas[impl.name] = tableSQL(t, db, tables[0])

			// Transactions: under tx=on GORM wraps each INSERT in one,
			// except through gorm.io/sharding, whose ConnPool.BeginTx
			// returns the pool itself; that is what makes its tx=on
			// numbers statement-for-statement comparable with tx=off.
			wantTx := !skipTx && impl.name != "gormsharding"
			if len(inTx) != n {
				t.Fatalf("probe saw %d creates, want %d", len(inTx), n)
			}
			for _, got := range inTx {
				if got != wantTx {
					t.Fatalf("INSERT in a transaction: %v, want %v", got, wantTx)
				}
			}
			if !skipTx && !wantTx {
				t.Logf("%s ran its INSERTs outside any transaction despite SkipDefaultTransaction false", impl.name)
			}
		})
	}
	for name, schema := range schemas {
		if plain, ok := schemas["plain"]; ok && schema != plain {
			t.Errorf("order tables differ:\nplain %s\n%s %s", plain, name, schema)
		}
	}
}
