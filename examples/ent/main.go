// Command ent is shardkey's ent example: ent schemas with generated IDs
// (entmixin), and an orders table sharded four ways through sqlhook, on an
// embedded SQLite file.
//
//	go run ./examples/ent             # a fresh database in a temporary directory
//	go run ./examples/ent -db shop.db # or a file of yours
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/glebarez/go-sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/entmixin"
	"github.com/shardkey/shardkey/examples/ent/ent"
	"github.com/shardkey/shardkey/examples/ent/ent/order"
	_ "github.com/shardkey/shardkey/examples/ent/ent/runtime" // registers entmixin's hook
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

func main() {
	path := flag.String("db", "", "SQLite file (default: a new one in a temporary directory)")
	rules := flag.String("rules", filepath.Join("examples", "ent", "sharding.yaml"), "sharding rules")
	flag.Parse()
	if err := run(context.Background(), *path, *rules); err != nil {
		slog.Error("example failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path, rules string) error {
	if path == "" {
		dir, err := os.MkdirTemp("", "shardkey-ent-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "shop.db")
	}
	cfg, err := shardconf.Load(rules)
	if err != nil {
		return err
	}
	cfg.DataSources[0].DSN = "file:" + path + "?_pragma=foreign_keys(1)"
	client, err := openClient(cfg)
	if err != nil {
		return err
	}
	defer client.Close()

	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "1"})
	if err != nil {
		return err
	}
	entmixin.Use(gen)
	entmixin.UseNamed("orders", gen)

	if err := client.Schema.Create(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	ada, err := client.User.Create().SetName("Ada").SetEmail("ada@example.com").Save(ctx)
	if err != nil {
		return err
	}
	post, err := client.Post.Create().SetTitle("Hello").SetAuthor(ada).Save(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("user %d, post %d by user %d\n", ada.ID, post.ID, post.QueryAuthor().OnlyIDX(ctx))

	orders, err := client.Order.CreateBulk(
		client.Order.Create().SetUserID(ada.ID).SetAmount(10),
		client.Order.Create().SetUserID(ada.ID).SetAmount(20),
		client.Order.Create().SetUserID(ada.ID).SetAmount(30),
	).Save(ctx)
	if err != nil {
		return err
	}
	for _, o := range orders {
		got, err := client.Order.Query().Where(order.ID(o.ID)).Only(ctx) // routed by the id
		if err != nil {
			return err
		}
		fmt.Printf("order %s (table orders_%d): amount %d\n", got.ID, int64(got.ID)%4, got.Amount)
	}
	return nil
}

// openClient returns an ent client over sqlhook for the rules' data source.
func openClient(cfg *shardconf.Config) (*ent.Client, error) {
	db, err := sqlhook.Open(cfg)
	if err != nil {
		return nil, err
	}
	return ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, db))), nil
}
