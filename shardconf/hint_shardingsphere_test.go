package shardconf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// coreHintFixture is ShardingSphere's CORE.HINT.FIXTURE test algorithm in
// Go: the target whose name ends in the hint value.
type coreHintFixture struct{}

func (coreHintFixture) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	suffix := fmt.Sprint(v.Value)
	for _, t := range targets {
		if strings.HasSuffix(t, suffix) {
			return t, nil
		}
	}
	return "", shardconf.ErrNoRoute
}

var coreHintOnce sync.Once

// shardingSphereHintRules are ShardingRoutingEngineFixtureBuilder's
// createHintShardingRule and createMixedShardingRule as a rule file.
const shardingSphereHintRules = `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:s0.db"}
  ds_1: {driver: sqlite, dsn: "file:s1.db"}
rules:
- !SHARDING
  tables:
    t_hint_test:
      actualDataNodes: ds_${0..1}.t_hint_test_${0..1}
      databaseStrategy: {hint: {shardingAlgorithmName: core_hint_fixture}}
      tableStrategy: {hint: {shardingAlgorithmName: core_hint_fixture}}
    t_hint_ds_test:
      actualDataNodes: ds_${0..1}.t_hint_ds_test_${0..1}
      databaseStrategy: {hint: {shardingAlgorithmName: core_hint_fixture}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: t_hint_ds_test_inline}}
    t_hint_table_test:
      actualDataNodes: ds_${0..1}.t_hint_table_test_${0..1}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: ds_inline}}
      tableStrategy: {hint: {shardingAlgorithmName: core_hint_fixture}}
  shardingAlgorithms:
    core_hint_fixture: {type: CORE.HINT.FIXTURE}
    ds_inline: {type: INLINE, props: {algorithm-expression: "ds_${user_id % 2}"}}
    t_hint_ds_test_inline: {type: INLINE, props: {algorithm-expression: "t_hint_ds_test_${order_id % 2}"}}
`

// ShardingSphere: ShardingStandardRoutingEngineTest, the hint cases. Its
// createShardingConditions are user_id = 1 AND order_id = 1.
func TestHintRoutingMatchesShardingSphereStandardRoutingEngine(t *testing.T) {
	coreHintOnce.Do(func() {
		if err := shardconf.RegisterAlgorithm("CORE.HINT.FIXTURE", func(map[string]string) (shardconf.ShardingAlgorithm, error) {
			return coreHintFixture{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	r := hintRouter(t, shardingSphereHintRules)
	conds := []shardconf.Cond{shardconf.Eq("user_id", int64(1)), shardconf.Eq("order_id", int64(1))}
	db1 := shardconf.Hint{Database: vals(1)}
	tbl1 := shardconf.Hint{Table: vals(1)}
	// assertRouteByHint: database and table hint 1.
	checkRouteContext(t, r, hinted("t_hint_test", shardconf.Hint{Database: vals(1), Table: vals(1)}), "t_hint_test", false, nil, "ds_1.t_hint_test_1", nil)
	// assertRouteByMixedWithHintDataSource.
	checkRouteContext(t, r, hinted("t_hint_ds_test", db1), "t_hint_ds_test", false, conds, "ds_1.t_hint_ds_test_1", nil)
	// assertRouteByMixedWithHintTable.
	checkRouteContext(t, r, hinted("t_hint_table_test", tbl1), "t_hint_table_test", false, conds, "ds_1.t_hint_table_test_1", nil)
	// assertRouteByMixedWithHintDataSourceOnly and ...TableOnly: with no
	// conditions ShardingSphere full-routes the other strategy. shardkey
	// does so only under Scatter; Route refuses (ErrMissingShardingKey).
	checkRouteContext(t, r, hinted("t_hint_ds_test", db1), "t_hint_ds_test", true, nil, "ds_1.t_hint_ds_test_0 ds_1.t_hint_ds_test_1", nil)
	checkRouteContext(t, r, hinted("t_hint_ds_test", db1), "t_hint_ds_test", false, nil, "order_id", shardconf.ErrMissingShardingKey)
	checkRouteContext(t, r, hinted("t_hint_table_test", tbl1), "t_hint_table_test", true, nil, "ds_0.t_hint_table_test_1 ds_1.t_hint_table_test_1", nil)
	checkRouteContext(t, r, hinted("t_hint_table_test", tbl1), "t_hint_table_test", false, nil, "user_id", shardconf.ErrMissingShardingKey)
}
