package shardconf_test

import (
	"math/big"
	"testing"
)

func TestHashModNormalizeNumericIntRangeRoutesIntsAsJavaIntegers(t *testing.T) {
	r := algosRouter(t, algosOneTable("ds.t_order_${0..3}", "order_id", "HASH_MOD",
		"        sharding-count: 4\n        normalize-numeric-int-range: true\n"))
	checkRoutes(t, r, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", int64(-1))), want: "ds.t_order_1"}, // Integer -1, not Long -1
		{table: "t_order", conds: conds(eq("order_id", -1)), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(eq("order_id", big.NewInt(-1))), want: "ds.t_order_1"},
		{table: "t_order", conds: conds(eq("order_id", int64(9223372036854775807))), want: "ds.t_order_0"},
		{table: "t_order", conds: conds(in("order_id", -1, -2)), want: "ds.t_order_1 ds.t_order_2"},
	})
	legacy := algosRouter(t, algosOneTable("ds.t_order_${0..3}", "order_id", "HASH_MOD", "        sharding-count: 4\n"))
	checkRoutes(t, legacy, []routeCase{
		{table: "t_order", conds: conds(eq("order_id", int64(-1))), want: "ds.t_order_0"}, // Long.hashCode(-1) = 0
	})
}
