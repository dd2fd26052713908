package shardconf_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// hintRules shards t_order by hint in both strategies (ShardingSphere's
// documented HINT_INLINE example) and t_user by a column.
const hintRules = `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:h0.db"}
  ds_1: {driver: sqlite, dsn: "file:h1.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..3}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: tbl_hint}}
    t_user:
      actualDataNodes: ds_${0..1}.t_user
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: user_mod}}
  shardingAlgorithms:
    db_hint: {type: HINT_INLINE, props: {algorithm-expression: "ds_${value % 2}"}}
    tbl_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_order_$->{value % 4}"}}
    user_mod: {type: INLINE, props: {algorithm-expression: "ds_${user_id % 2}"}}
`

func hintRouter(t testing.TB, rules string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRouteContextRoutesHintStrategiesByHintValues(t *testing.T) {
	r := hintRouter(t, hintRules)
	ctx := shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Database: []any{1}, Table: []any{int64(6)}})
	got, err := r.RouteContext(ctx, "t_order")
	if err != nil || targets(got) != "ds_1.t_order_2" {
		t.Fatalf("RouteContext = %v, %v; want ds_1.t_order_2", targets(got), err)
	}
	if _, err := r.Route("t_order"); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Fatalf("Route without hint: err = %v, want ErrMissingShardingKey", err)
	}
}
