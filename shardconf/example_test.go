package shardconf_test

import (
	"errors"
	"fmt"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// rules is a ShardingSphere 5.x rule file: t_order in two databases (by
// user_id) × two tables (by order_id).
const rules = `
dataSources:
  ds_0: {driver: sqlite, dsn: "ds_0.db"}
  ds_1: {driver: sqlite, dsn: "ds_1.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user:
      type: INLINE
      props: {algorithm-expression: "ds_${user_id % 2}"}
    by_order:
      type: MOD
      props: {sharding-count: 2}
  keyGenerators:
    snowflake: {type: SNOWFLAKE}
`

func ExampleRouter_Route() {
	cfg, err := shardconf.Parse([]byte(rules)) // shardconf.Load("rules.yaml") for a file
	if err != nil {
		fmt.Println(err)
		return
	}
	// The file leaves worker-id to each process.
	r, err := shardconf.NewRouter(cfg, shardconf.WithKeyGenProps(keygen.Props{"worker-id": "1"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	ts, _ := r.Route("t_order", shardconf.Eq("user_id", 7), shardconf.Eq("order_id", 10))
	fmt.Println(ts)
	ts, _ = r.Route("t_order", shardconf.Eq("user_id", 7), shardconf.In("order_id", 10, 11))
	fmt.Println(ts)

	// Without a condition on order_id the table is unknown: an error, not a guess.
	_, err = r.Route("t_order", shardconf.Eq("user_id", 7))
	fmt.Println(errors.Is(err, shardconf.ErrMissingShardingKey))
	// Scatter is the explicit opt-in: every table the other conditions allow.
	ts, _ = r.Scatter("t_order", shardconf.Eq("user_id", 7))
	fmt.Println(ts)

	col, gen, _ := r.KeyGenerator("t_order")
	fmt.Println(col, gen.Type())
	// Output:
	// [ds_1.t_order_0]
	// [ds_1.t_order_0 ds_1.t_order_1]
	// true
	// [ds_1.t_order_0 ds_1.t_order_1]
	// order_id SNOWFLAKE
}

func ExampleParse_error() {
	// A misspelt key is an error with its line and column, never ignored.
	_, err := shardconf.Parse([]byte(`
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_${0..1}
      tablesStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}
`))
	fmt.Println(err)
	// Output: rules:7:7: rules[0].tables.t_order.tablesStrategy: unknown key "tablesStrategy"
}
