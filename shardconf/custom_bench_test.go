package shardconf_test

import (
	"sync"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// modGo is MOD over 16 tables written as a Go algorithm: what a
// go-gorm/sharding user's function becomes.
type modGo struct{}

func (modGo) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	n, _ := v.Value.(int64)
	return targets[uint64(n)%uint64(len(targets))], nil
}

var registerModGo = sync.OnceValue(func() error {
	return shardconf.RegisterAlgorithm("BENCH_MOD_GO", func(map[string]string) (shardconf.ShardingAlgorithm, error) { return modGo{}, nil })
})

// BenchmarkRouteCustomEq routes one equality through a Go algorithm, with
// the built-in MOD over the same tables as its baseline. The Go algorithm
// costs the boxing of the value into ShardingValue.Value (one allocation
// for an int64 above 255) and the check that its answer is a target.
func BenchmarkRouteCustomEq(b *testing.B) {
	if err := registerModGo(); err != nil {
		b.Fatal(err)
	}
	cfg, err := shardconf.Parse([]byte(`
dataSources:
  ds: {driver: sqlite, dsn: "file:bench.db"}
rules:
- !SHARDING
  tables:
    t_mod: {actualDataNodes: "ds.t_mod_${0..15}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: mod}}}
    t_go:  {actualDataNodes: "ds.t_go_${0..15}", tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: go}}}
  shardingAlgorithms:
    mod: {type: MOD, props: {sharding-count: 16}}
    go:  {type: BENCH_MOD_GO}
`))
	if err != nil {
		b.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, table := range []string{"t_mod", "t_go"} {
		b.Run(table[2:], func(b *testing.B) {
			cond := shardconf.Eq("order_id", int64(1_331_042_935_696_789_505))
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				ts, err := r.Route(table, cond)
				if err != nil {
					b.Fatal(err)
				}
				n += len(ts)
			}
			sinkN = n
		})
	}
}
