package shardconf_test

import (
	"context"
	"fmt"

	"github.com/shardkey/shardkey/shardconf"
)

// A table whose rows are placed by a value the SQL does not hold (a tenant
// from the request) routes by a hint, as ShardingSphere's HintManager.
func ExampleWithHint() {
	cfg, _ := shardconf.Parse([]byte(`
dataSources:
  ds_0: {driver: sqlite, dsn: "file:t0.db"}
  ds_1: {driver: sqlite, dsn: "file:t1.db"}
rules:
- !SHARDING
  tables:
    t_event:
      actualDataNodes: ds_${0..1}.t_event
      databaseStrategy: {hint: {shardingAlgorithmName: by_tenant}}
  shardingAlgorithms:
    by_tenant: {type: HINT_INLINE, props: {algorithm-expression: "ds_${value % 2}"}}
`))
	r, _ := shardconf.NewRouter(cfg)
	ctx := shardconf.WithHint(context.Background(), "t_event", shardconf.Hint{Database: []any{41}})
	ts, err := r.RouteContext(ctx, "t_event")
	fmt.Println(ts, err)
	_, err = r.RouteContext(context.Background(), "t_event")
	fmt.Println(err)
	// Output:
	// [ds_1.t_event] <nil>
	// shardconf: missing sharding key: table t_event, database hint (the strategy routes by hint: give one with shardconf.WithHint)
}
