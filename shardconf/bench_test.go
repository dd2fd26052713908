package shardconf_test

import (
	"context"
	"testing"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

var sinkTargets []shardconf.Target

// benchRules has one table per algorithm, each sharded into 16 tables by
// order_id in one data source.
const benchRules = `
dataSources:
  ds: {driver: sqlite, dsn: "file:bench.db"}
rules:
- !SHARDING
  tables:
    t_mod:    {actualDataNodes: "ds.t_mod_${0..15}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: mod}}}
    t_hash:   {actualDataNodes: "ds.t_hash_${0..15}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: hash}}}
    t_inline: {actualDataNodes: "ds.t_inline_${0..15}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: inline}}}
    t_bits:
      actualDataNodes: "ds.t_bits_${0..15}"
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: bits}}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    mod:    {type: MOD, props: {sharding-count: 16}}
    hash:   {type: HASH_MOD, props: {sharding-count: 16}}
    inline: {type: INLINE, props: {algorithm-expression: "t_inline_${order_id % 16}"}}
    bits:   {type: SNOWFLAKE_BITS, props: {field: sequence, bits: 4}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}
`

func benchRouter(b *testing.B) *shardconf.Router {
	cfg, err := shardconf.Parse([]byte(benchRules))
	if err != nil {
		b.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

var (
	sinkRoute *struct{ n int }
	sinkN     int
)

// BenchmarkMapLookup is the baseline: one Go map lookup of a logic table
// name.
func BenchmarkMapLookup(b *testing.B) {
	m := map[string]*struct{ n int }{"t_mod": {1}, "t_hash": {2}, "t_inline": {3}, "t_bits": {4}, "t_user": {5}}
	name := "t_mod"
	var p *struct{ n int }
	b.ReportAllocs()
	for b.Loop() {
		p = m[name]
	}
	sinkRoute = p
}

// BenchmarkRouteEq routes one equality on each algorithm.
func BenchmarkRouteEq(b *testing.B) {
	r := benchRouter(b)
	_, gen, _ := r.KeyGenerator("t_bits")
	key, _ := gen.(keygen.IDGenerator).NextID(context.Background())
	for _, bc := range []struct {
		table string
		v     any
	}{
		{"t_mod", int64(1_331_042_935_696_789_505)},
		{"t_hash", int64(1_331_042_935_696_789_505)},
		{"t_inline", int64(1_331_042_935_696_789_505)},
		{"t_bits", key},
	} {
		b.Run(bc.table[2:], func(b *testing.B) {
			cond := shardconf.Eq("order_id", bc.v)
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				ts, err := r.Route(bc.table, cond)
				if err != nil {
					b.Fatal(err)
				}
				n += len(ts)
			}
			sinkN = n
		})
	}
}

// BenchmarkRouteIn routes an IN list of 8 values: the result is its only
// allocation.
func BenchmarkRouteIn(b *testing.B) {
	r := benchRouter(b)
	c := shardconf.In("order_id", 1, 2, 3, 4, 17, 18, 19, 20)
	b.ReportAllocs()
	for b.Loop() {
		ts, err := r.Route("t_mod", c)
		if err != nil {
			b.Fatal(err)
		}
		sinkTargets = ts
	}
}

// BenchmarkRouteBetween routes a range over 4 tables.
func BenchmarkRouteBetween(b *testing.B) {
	r := benchRouter(b)
	c := shardconf.Between("order_id", 100, 103)
	b.ReportAllocs()
	for b.Loop() {
		ts, err := r.Route("t_mod", c)
		if err != nil {
			b.Fatal(err)
		}
		sinkTargets = ts
	}
}

// BenchmarkRouteContext routes the equality of BenchmarkRouteEq/mod through
// RouteContext: with no hint in the context (a request context carrying
// other values), and with a hint for another table; then a hint-strategy
// table routed by its hint.
func BenchmarkRouteContext(b *testing.B) {
	r := benchRouter(b)
	cond := shardconf.Eq("order_id", int64(1_331_042_935_696_789_505))
	plain := context.WithValue(context.Background(), struct{ k int }{1}, "request-id")
	other := shardconf.WithHint(plain, "t_other", shardconf.Hint{Table: []any{1}})
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"nohint", plain}, {"otherhint", other}} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				ts, err := r.RouteContext(bc.ctx, "t_mod", cond)
				if err != nil {
					b.Fatal(err)
				}
				n += len(ts)
			}
			sinkN = n
		})
	}
	b.Run("hinted", func(b *testing.B) {
		hr := benchHintRouter(b)
		ctx := shardconf.WithHint(plain, "t_hint", shardconf.Hint{Table: []any{int64(1_331_042_935_696_789_505)}})
		n := 0
		b.ReportAllocs()
		for b.Loop() {
			ts, err := hr.RouteContext(ctx, "t_hint")
			if err != nil {
				b.Fatal(err)
			}
			n += len(ts)
		}
		sinkN = n
	})
}

func benchHintRouter(b *testing.B) *shardconf.Router {
	cfg, err := shardconf.Parse([]byte(`
dataSources:
  ds: {driver: sqlite, dsn: "file:bench.db"}
rules:
- !SHARDING
  tables:
    t_hint: {actualDataNodes: "ds.t_hint_${0..15}", tableStrategy: {hint: {shardingAlgorithmName: h}}}
  shardingAlgorithms:
    h: {type: HINT_INLINE, props: {algorithm-expression: "t_hint_${value % 16}"}}
`))
	if err != nil {
		b.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return r
}
