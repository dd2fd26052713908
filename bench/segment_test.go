package bench

// BenchmarkSegmentVsSnowflake: one NextID per op from SEGMENT (Leaf's
// segment mode on the loopback PostgreSQL, step 1,000,000 so a refill is
// rare and asynchronous) and from the default SNOWFLAKE (41 ms / 10 / 12,
// capped at 4,096,000 IDs/s), serial and RunParallel.

import (
	"context"
	"database/sql"
	"io"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
)

func BenchmarkSegmentVsSnowflake(b *testing.B) {
	ctx := context.Background()
	db, err := sql.Open("pgx", dbtest.Postgres(b, "bench_segment"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	gens := map[string]func() (keygen.IDGenerator, error){
		"snowflake": func() (keygen.IDGenerator, error) {
			return keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "12"})
		},
		"segment": func() (keygen.IDGenerator, error) {
			return keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "bench", "step": "1000000"}, keygen.WithDB(db))
		},
	}
	for _, impl := range []string{"snowflake", "segment"} {
		for _, mode := range []string{"serial", "parallel"} {
			b.Run("impl="+impl+"/mode="+mode, func(b *testing.B) {
				g, err := gens[impl]()
				if err != nil {
					b.Fatal(err)
				}
				if c, ok := g.(io.Closer); ok {
					defer c.Close()
				}
				b.ReportAllocs()
				if mode == "serial" {
					for b.Loop() {
						if _, err := g.NextID(ctx); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := g.NextID(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkCachedUIDVsSnowflake: one NextID per op from CACHED_UID (a
// static worker id here; production wants a lease or a disposable id) and
// from the default SNOWFLAKE, serial and RunParallel.
func BenchmarkCachedUIDVsSnowflake(b *testing.B) {
	ctx := context.Background()
	for _, impl := range []string{"snowflake", "cached-uid"} {
		for _, mode := range []string{"serial", "parallel"} {
			b.Run("impl="+impl+"/mode="+mode, func(b *testing.B) {
				var g keygen.IDGenerator
				var err error
				if impl == "snowflake" {
					g, err = keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "13"})
				} else {
					g, err = keygen.NewID("CACHED_UID", keygen.Props{"worker-id": "13"})
				}
				if err != nil {
					b.Fatal(err)
				}
				if c, ok := g.(io.Closer); ok {
					defer c.Close()
				}
				b.ReportAllocs()
				if mode == "serial" {
					for b.Loop() {
						if _, err := g.NextID(ctx); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := g.NextID(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
