package shardconf_test

import (
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// BoundTarget pairs binding tables by position only where they route
// alike: a table placed by hints and one placed by its columns at the same
// level do not pair (ShardingSphere refuses to bind HINT_INLINE with
// INLINE), while two hint tables, as ShardingSphere's hint example binds
// them, do; so does a level with a single choice.
func TestBoundTargetRefusesToPairAHintStrategyWithAColumnStrategy(t *testing.T) {
	r := hintRouter(t, `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:h0.db"}
  ds_1: {driver: sqlite, dsn: "file:h1.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: order_hint}}
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: item_hint}}
    t_item:
      actualDataNodes: ds_${0..1}.t_item_${0..1}
      databaseStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: db_inline}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tbl_inline}}
    t_half:
      actualDataNodes: ds_${0..1}.t_half_${0..1}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: half_inline}}
    t_solo:
      actualDataNodes: ds_0.t_solo_${0..1}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: solo_hint}}
    t_solo_item:
      actualDataNodes: ds_0.t_solo_item_${0..1}
      databaseStrategy: {none: {}}
      tableStrategy: {hint: {shardingAlgorithmName: solo_item_hint}}
  bindingTables: ["t_order,t_order_item,t_item,t_half", "t_solo,t_solo_item"]
  shardingAlgorithms:
    db_hint: {type: HINT_INLINE, props: {algorithm-expression: "ds_${value % 2}"}}
    order_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_order_${value % 2}"}}
    item_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_order_item_${value % 2}"}}
    solo_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_solo_${value % 2}"}}
    solo_item_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_solo_item_${value % 2}"}}
    db_inline: {type: INLINE, props: {algorithm-expression: "ds_${order_id % 2}"}}
    tbl_inline: {type: INLINE, props: {algorithm-expression: "t_item_${order_id % 2}"}}
    half_inline: {type: INLINE, props: {algorithm-expression: "t_half_${order_id % 2}"}}
`)
	at := shardconf.Target{DataSource: "ds_1", Table: "t_order_0"}
	if bt, err := r.BoundTarget("t_order", at, "t_order_item"); err != nil || bt.String() != "ds_1.t_order_item_0" {
		t.Errorf("two hint tables: %v, %v; want ds_1.t_order_item_0", bt, err)
	}
	// One data source: the database level has one choice, however routed.
	solo := shardconf.Target{DataSource: "ds_0", Table: "t_solo_1"}
	if bt, err := r.BoundTarget("t_solo", solo, "t_solo_item"); err != nil || bt.String() != "ds_0.t_solo_item_1" {
		t.Errorf("one data source, hint and no database strategy: %v, %v; want ds_0.t_solo_item_1", bt, err)
	}
	for partner, level := range map[string]string{"t_item": "database", "t_half": "table"} {
		if bt, err := r.BoundTarget("t_order", at, partner); err == nil || !strings.Contains(err.Error(), level+" strategy") {
			t.Errorf("t_order with %s: %v, %v; want a refusal naming the %s strategy", partner, bt, err, level)
		}
		back := shardconf.Target{DataSource: "ds_1", Table: partner + "_0"}
		if bt, err := r.BoundTarget(partner, back, "t_order"); err == nil {
			t.Errorf("%s with t_order: %v; want a refusal", partner, bt)
		}
	}
}
