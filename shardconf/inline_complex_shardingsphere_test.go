package shardconf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// complexInlineRouter is ShardingSphere's ComplexInlineShardingAlgorithmTest
// set-up as a rule file: t_order_${type % 2}_${order_id % 2} over
// t_order_0_0 .. t_order_1_1, sharding-columns "type,order_id".
func complexInlineRouter(t *testing.T, extraProps string) *shardconf.Router {
	t.Helper()
	rules := `dataSources:
  ds: {}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds.t_order_${0..1}_${0..1}
      tableStrategy:
        complex:
          shardingColumns: type,order_id
          shardingAlgorithmName: t_complex
  shardingAlgorithms:
    t_complex:
      type: COMPLEX_INLINE
      props:
        algorithm-expression: t_order_${type % 2}_${order_id % 2}
        sharding-columns: type,order_id
` + extraProps
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestComplexInlineRoutesAsShardingSphere(t *testing.T) {
	r := complexInlineRouter(t, "")
	checkRoutes(t, r, []routeCase{
		// ShardingSphere: ComplexInlineShardingAlgorithmTest.assertDoSharding
		{table: "t_order", conds: conds(eq("type", 2), eq("order_id", 2)), want: "ds.t_order_0_0"},
		// ShardingSphere: ComplexInlineShardingAlgorithmTest.assertDoShardingWithMultiValue
		{table: "t_order", conds: conds(in("type", 1, 2), in("order_id", 1, 2)),
			want: "ds.t_order_0_0 ds.t_order_0_1 ds.t_order_1_0 ds.t_order_1_1"},
		{table: "t_order", conds: conds(eq("type", 3), in("order_id", 4, 5)), want: "ds.t_order_1_0 ds.t_order_1_1"},
	})
	// Without allow-range-query-with-inline-sharding a range is refused, as
	// ShardingSphere throws UnsupportedSQLOperationException.
	if got, err := r.Route("t_order", between("type", 1, 5), eq("order_id", 1)); err == nil || !strings.Contains(err.Error(), "allow-range-query-with-inline-sharding") {
		t.Errorf("range without allow-range-query: %v, %v; want a refusal naming the prop", targets(got), err)
	}
}

// ShardingSphere: ComplexInlineShardingAlgorithmTest.assertDoShardingWithRangeValue
func TestComplexInlineRangeGoesEverywhereWhenAllowed(t *testing.T) {
	r := complexInlineRouter(t, "        allow-range-query-with-inline-sharding: true\n")
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(between("type", 1, 5), eq("order_id", 1)),
			want: "ds.t_order_0_0 ds.t_order_0_1 ds.t_order_1_0 ds.t_order_1_1"},
	})
}
