package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/shardkey/shardkey/entmixin"
	"github.com/shardkey/shardkey/examples/ent/ent"
	"github.com/shardkey/shardkey/examples/ent/ent/order"
	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
	_ "github.com/shardkey/shardkey/sqlhook/postgres" // this test's data sources are PostgreSQL
)

// shardedRules: orders in two PostgreSQL databases by id % 2; users and
// posts in ds_0 (the default data source).
const shardedRules = `
dataSources:
  ds_0: {driver: pgx, dsn: %q}
  ds_1: {driver: pgx, dsn: %q}
rules:
- !SHARDING
  tables:
    orders:
      actualDataNodes: ds_${0..1}.orders
      databaseStrategy:
        standard: {shardingColumn: id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`

// TestShardedThroughSQLHook (the entmixin tests' sharded case, here so that
// entmixin's module need not require sqlhook): an ent client over sqlhook on two PostgreSQL
// data sources: migration creates orders in both, each created order lands
// in the data source its generated id chooses, and reads by id find it.
func TestShardedThroughSQLHook(t *testing.T) {
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "9"})
	if err != nil {
		t.Fatal(err)
	}
	entmixin.Use(gen)
	entmixin.UseNamed("orders", gen)
	t.Cleanup(func() { entmixin.Use(nil); entmixin.UseNamed("orders", nil) })
	ctx := context.Background()
	dsn := [2]string{dbtest.Postgres(t, "entmixin_shard_0"), dbtest.Postgres(t, "entmixin_shard_1")}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, shardedRules, dsn[0], dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	// ent migrates in one transaction, and a sharded table's DDL reaches
	// every data source: migrations run on a client that allows that (not
	// atomic across data sources), the application on a strict one.
	migrateDB, err := sqlhook.Open(cfg, sqlhook.WithMultiSourceTx())
	if err != nil {
		t.Fatal(err)
	}
	migrator := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, migrateDB)))
	if err := migrator.Schema.Create(ctx); err != nil {
		t.Fatalf("migrate through sqlhook: %v", err)
	}
	migrator.Close()
	db, err := sqlhook.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	defer client.Close()
	direct := [2]*sql.DB{}
	for i := range direct {
		if direct[i], err = sql.Open("pgx", dsn[i]); err != nil {
			t.Fatal(err)
		}
		defer direct[i].Close()
	}

	ada := client.User.Create().SetName("Ada").SetEmail("ada@x").SaveX(ctx)
	var ids []keygen.ID
	one, err := client.Order.Create().SetUserID(ada.ID).SetAmount(1).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, one.ID)
	bulk, err := client.Order.CreateBulk(
		client.Order.Create().SetUserID(ada.ID).SetAmount(2),
		client.Order.Create().SetUserID(ada.ID).SetAmount(3),
		client.Order.Create().SetUserID(ada.ID).SetAmount(4),
		client.Order.Create().SetUserID(ada.ID).SetAmount(5),
	).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range bulk {
		ids = append(ids, o.ID)
	}
	perDS := [2]int{}
	for _, id := range ids {
		ds := int64(id) % 2
		perDS[ds]++
		var n int
		if err := direct[ds].QueryRow(`SELECT count(*) FROM orders WHERE id = $1`, int64(id)).Scan(&n); err != nil || n != 1 {
			t.Errorf("order %d not in ds_%d: %d, %v", id, ds, n, err)
		}
		got, err := client.Order.Query().Where(order.ID(id)).Only(ctx)
		if err != nil {
			t.Fatalf("read order %d back: %v", id, err)
		}
		if got.UserID != ada.ID {
			t.Errorf("order %d user %d", id, got.UserID)
		}
	}
	for ds, d := range direct {
		var n int
		d.QueryRow(`SELECT count(*) FROM orders`).Scan(&n)
		if n != perDS[ds] {
			t.Errorf("ds_%d holds %d orders, want %d", ds, n, perDS[ds])
		}
	}
	if perDS[0] == 0 || perDS[1] == 0 {
		t.Errorf("five orders all in one data source: %v (ids %v)", perDS, ids)
	}
	// users and posts are ordinary tables of the default data source.
	var users int
	direct[0].QueryRow(`SELECT count(*) FROM users`).Scan(&users)
	if users != 1 {
		t.Errorf("ds_0 holds %d users", users)
	}
	// A query the router cannot place is refused, not run on one shard.
	if _, err := client.Order.Query().All(ctx); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("orders without an id condition: %v, want ErrMissingShardingKey", err)
	}
}
