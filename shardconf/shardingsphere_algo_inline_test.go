package shardconf

// ShardingSphere's InlineShardingAlgorithmTest (features/sharding/core/src/
// test/java/org/apache/shardingsphere/sharding/algorithm/sharding/inline/
// InlineShardingAlgorithmTest.java), rewritten as Go tests through shardFunc.

import (
	"math/big"
	"testing"
)

func ssInline(t *testing.T, expr string, allowRange bool, targets []string) shardFunc {
	t.Helper()
	props := map[string]string{"algorithm-expression": expr}
	if allowRange {
		props["allow-range-query-with-inline-sharding"] = "true"
	}
	f, err := newInlineAlgorithm(algoSpec{typ: "INLINE", props: props, targets: targets, column: "order_id", unreachable: func(string) {}})
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return f
}

var ssInlineTargets = []string{"t_order_0", "t_order_1", "t_order_2", "t_order_3"}

// ShardingSphere: InlineShardingAlgorithmTest.assertDoSharding. Java
// throws at routing when the value's column is not the expression's;
// shardkey checks the column when it loads the rule.
func TestShardingSphereInlineDoSharding(t *testing.T) {
	f := ssInline(t, "t_order_$->{order_id % 4}", true, ssInlineTargets)
	if got := atName(t, f, ssInlineTargets, int32(0)); got != "t_order_0" {
		t.Errorf("0 -> %q", got)
	}
	_, err := newInlineAlgorithm(algoSpec{typ: "INLINE", props: map[string]string{"algorithm-expression": "t_order_$->{order_id % 4}"},
		targets: ssInlineTargets, column: "non_existent_column1"})
	atPropErr(t, err, "algorithm-expression")
}

// ShardingSphere: InlineShardingAlgorithmTest.assertDoShardingWithRangeShardingConditionValue
func TestShardingSphereInlineRange(t *testing.T) {
	f := ssInline(t, "t_order_$->{order_id % 4}", true, ssInlineTargets)
	if got := atRange(t, f, ssInlineTargets, int64(1), true, int64(2), true); ssCount(got) != 4 {
		t.Errorf("range: %q, want every target", got)
	}
}

// ShardingSphere: InlineShardingAlgorithmTest.assertDoShardingWithNonExistNodes:
// "% 4" over two tables loads (t_order_2 and t_order_3 are unreachable).
func TestShardingSphereInlineNonExistNodes(t *testing.T) {
	two := []string{"t_order_0", "t_order_1"}
	for _, f := range []shardFunc{
		ssInline(t, "t_order_$->{order_id % 4}", true, two),
		ssInline(t, "t_order_${order_id % 4}", false, two),
	} {
		if got := atName(t, f, two, int32(0)); got != "t_order_0" {
			t.Errorf("0 -> %q", got)
		}
		if got := atName(t, f, two, int32(2)); got != "" {
			t.Errorf("2 -> %q, want no route (Java: null)", got)
		}
	}
}

// ShardingSphere: InlineShardingAlgorithmTest.assertDoShardingWithNegative
func TestShardingSphereInlineNegative(t *testing.T) {
	f := ssInline(t, "t_order_$->{(order_id % 4).abs()}", true, ssInlineTargets)
	for v, want := range map[int32]string{-1: "t_order_1", -4: "t_order_0"} {
		if got := atName(t, f, ssInlineTargets, v); got != want {
			t.Errorf("%d -> %q, want %q", v, got, want)
		}
	}
}

// ShardingSphere: InlineShardingAlgorithmTest.assertDoShardingWithLargeValues.
// The BigInteger 787694822390497280787694822390497280 is beyond 64 bits,
// which shardkey refuses for every sharding value (no sharding column of
// the supported databases holds it): a deliberate difference.
func TestShardingSphereInlineLargeValues(t *testing.T) {
	for _, f := range []shardFunc{
		ssInline(t, "t_order_$->{order_id % 4}", true, ssInlineTargets),
		ssInline(t, "t_order_${order_id % 4}", false, ssInlineTargets),
	} {
		if got := atName(t, f, ssInlineTargets, int64(787694822390497280)); got != "t_order_0" {
			t.Errorf("787694822390497280 -> %q", got)
		}
		huge, _ := new(big.Int).SetString("787694822390497280787694822390497280", 10)
		if got := atName(t, f, ssInlineTargets, huge); got != "error" {
			t.Errorf("beyond 64 bits -> %q, want refused", got)
		}
	}
}
