package gormplugin_test

import (
	"context"
	"fmt"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
)

// printer is an observer printing what the plugin reports; it embeds
// observe.Base for the events it leaves out.
type printer struct{ observe.Base }

func (printer) StatementStart(ctx context.Context, s observe.Statement) context.Context {
	fmt.Printf("%s %v: %d tables (fan-out %s)\n", s.Operation, s.Tables, s.Targets, s.Fanout)
	return ctx
}

func (printer) TargetStart(ctx context.Context, t observe.Target) context.Context {
	fmt.Println("  on", t.DataSource, t.Tables)
	return ctx
}

func (printer) StatementEnd(_ context.Context, _ observe.Statement, e observe.StatementEnd) {
	fmt.Printf("  merged %v, %d rows, err %v\n", e.Merged, e.Rows, e.Err)
}

func (printer) Refused(_ context.Context, r observe.Refusal) {
	fmt.Println("refused:", r.Reason)
}

func ExampleWithObserver() {
	db, err := gorm.Open(sqlite.Open("file:gormplugin_observer_example?mode=memory&cache=shared"), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		fmt.Println(err)
		return
	}
	if pool, err := db.DB(); err == nil {
		defer pool.Close() // the in-memory database goes with it
	}
	parsed, err := shardconf.Parse([]byte(`
dataSources:
  ds: {driver: sqlite, dsn: "file:unused"}
rules:
- !SHARDING
  tables:
    sharded_orders:
      actualDataNodes: ds.sharded_orders_${0..3}
      tableStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 4}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rules, err := shardconf.NewRouter(parsed)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rules), gormplugin.WithScatter(),
		gormplugin.WithObserver(printer{}))); err != nil {
		fmt.Println(err)
		return
	}
	if err := db.AutoMigrate(&ShardedOrder{}); err != nil {
		fmt.Println(err)
		return
	}
	db.Create(&[]ShardedOrder{{UserID: 1, Amount: 5}, {UserID: 2, Amount: 7}})
	var orders []ShardedOrder
	db.Where("user_id IN ?", []int64{1, 2, 3}).Order("amount").Find(&orders)
	var n int64
	db.Model(&ShardedOrder{}).Count(&n)
	db.Exec("DELETE FROM sharded_orders") // raw SQL naming a sharded table
	// Output:
	// insert [sharded_orders]: 2 tables (fan-out some)
	//   on ds [sharded_orders_1]
	//   on ds [sharded_orders_2]
	//   merged false, 0 rows, err <nil>
	// select [sharded_orders]: 3 tables (fan-out some)
	//   on ds [sharded_orders_1]
	//   on ds [sharded_orders_2]
	//   on ds [sharded_orders_3]
	//   merged true, 2 rows, err <nil>
	// select [sharded_orders]: 4 tables (fan-out all)
	//   on ds [sharded_orders_0]
	//   on ds [sharded_orders_1]
	//   on ds [sharded_orders_2]
	//   on ds [sharded_orders_3]
	//   merged true, 1 rows, err <nil>
	// refused: unsupported
}
