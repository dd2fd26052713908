package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// SEGMENT (Meituan Leaf's segment mode) can keep its allocation table
// behind a sqlhook *sql.DB, whose driver it cannot recognise: without the
// prop dialect it refuses, a dialect that is not the data sources' fails
// without issuing a key, and with the right one its table (no logic table)
// lives on the default data source and it issues unique keys, also as the
// key generator of rules routed by the keys it issues.
func TestSegmentOverSqlhookDBNeedsTheDialectPropThenIssuesUniqueKeys(t *testing.T) {
	for _, b := range []struct {
		name, driver, dialect, wrong string
		dsn                          func(*testing.T, string) string
		ph                           string
	}{
		{"postgres", "pgx", "postgres", "mysql", func(t *testing.T, n string) string { return dbtest.Postgres(t, n) }, "$1"},
		{"mariadb", "mysql", "mariadb", "postgres", func(t *testing.T, n string) string { return dbtest.MySQL(t, n) }, "?"},
	} {
		t.Run(b.name, func(t *testing.T) {
			dsn := [2]string{b.dsn(t, "sqlhook_seg_0"), b.dsn(t, "sqlhook_seg_1")}
			var direct [2]*sql.DB
			for i := range dsn {
				d, err := sql.Open(b.driver, dsn[i])
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { d.Close() })
				for _, tb := range []string{"t_order_0", "t_order_1"} {
					if _, err := d.Exec(`CREATE TABLE ` + tb + ` (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)`); err != nil {
						t.Fatal(err)
					}
				}
				direct[i] = d
			}
			rules := func(keygenPart string) *shardconf.Config {
				cfg, err := shardconf.Parse(fmt.Appendf(nil, `
dataSources:
  ds_0: {driver: %s, dsn: %q}
  ds_1: {driver: %s, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: db_mod}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: tb_div}
%s
  shardingAlgorithms:
    db_mod: {type: MOD, props: {sharding-count: 2}}
    tb_div: {type: INLINE, props: {algorithm-expression: "t_order_${order_id.intdiv(2) %% 2}"}}
`, b.driver, dsn[0], b.driver, dsn[1], keygenPart))
				if err != nil {
					t.Fatal(err)
				}
				return cfg
			}
			db, err := sqlhook.Open(rules(""))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			ctx := context.Background()

			_, err = keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "orders"}, keygen.WithDB(db))
			var pe *keygen.PropError
			if !errors.As(err, &pe) || pe.Key != "dialect" {
				t.Errorf("SEGMENT over sqlhook without the prop dialect: err = %v, want a PropError on dialect", err)
			}
			if g, err := keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "wrong", "dialect": b.wrong}, keygen.WithDB(db)); err == nil {
				id, err := g.NextID(ctx)
				t.Errorf("SEGMENT over sqlhook with dialect %s on %s: created, first key %d, %v; want an error", b.wrong, b.name, id, err)
			}

			const workers, each = 4, 300
			seen := make(map[int64]bool)
			var mu sync.Mutex
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for range workers {
				g, err := keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "orders", "dialect": b.dialect, "step": "50"}, keygen.WithDB(db))
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					defer g.(interface{ Close() error }).Close()
					for range each {
						id, err := g.NextID(ctx)
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						if seen[id] {
							errs <- fmt.Errorf("key %d issued twice", id)
						}
						seen[id] = true
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if len(seen) != workers*each {
				t.Errorf("%d distinct keys, want %d", len(seen), workers*each)
			}
			for i, want := range []int{1, 0} {
				var n int
				if err := direct[i].QueryRow(`SELECT COUNT(*) FROM leaf_alloc WHERE biz_tag = 'orders'`).Scan(&n); err != nil {
					n = 0 // no table: none
				}
				if n != want {
					t.Errorf("ds_%d holds %d leaf_alloc rows for orders, want %d (the default data source only)", i, n, want)
				}
			}

			// The same SEGMENT as the rules' key generator: each row is placed
			// by the key it was given.
			keyed, err := sqlhook.Open(rules(`      keyGenerateStrategy: {column: order_id, keyGeneratorName: seg}
  keyGenerators:
    seg: {type: SEGMENT, props: {biz-tag: keyed, dialect: `+b.dialect+`, step: "7"}}`),
				sqlhook.WithRouterOptions(shardconf.WithKeyGenOptions(keygen.WithDB(db))))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { keyed.Close() })
			for u := range 30 {
				if _, err := keyed.Exec(`INSERT INTO t_order (user_id) VALUES (`+b.ph+`)`, u); err != nil {
					t.Fatal(err)
				}
			}
			total := 0
			for i, d := range direct {
				for j, tb := range []string{"t_order_0", "t_order_1"} {
					rows, err := d.Query(`SELECT order_id FROM ` + tb)
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
						var id int64
						if err := rows.Scan(&id); err != nil {
							t.Fatal(err)
						}
						total++
						if int(id%2) != i || int(id/2%2) != j {
							t.Errorf("key %d in ds_%d.%s", id, i, tb)
						}
					}
					rows.Close()
				}
			}
			if total != 30 {
				t.Errorf("%d rows stored, want 30", total)
			}
		})
	}
}
