// Command ent is shardkey's ent example: ent schemas with generated IDs
// (entmixin), and an orders table sharded four ways through sqlhook, on an
// embedded SQLite file.
//
//	go run ./examples/ent             # a fresh database in a temporary directory
//	go run ./examples/ent -db shop.db # or a file of yours (run it again: it migrates and adds orders)
//	go run ./examples/ent -rules my.yaml
//
// Migrations: ent's migration inspects tables by name, so through sqlhook
// it would find no table called orders on every start and create its
// physical tables again (an error once they exist). migrate instead runs
// ent's migration on the data source itself, with the sharded table
// replaced by copies named after its physical tables: it creates what is
// missing and adds new columns and indexes to every physical table, on
// the first start and on every later one.
package main

import (
	"context"
	"database/sql"
	_ "embed"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/entmixin"
	"github.com/shardkey/shardkey/examples/ent/ent"
	"github.com/shardkey/shardkey/examples/ent/ent/migrate"
	"github.com/shardkey/shardkey/examples/ent/ent/order"
	_ "github.com/shardkey/shardkey/examples/ent/ent/runtime" // registers entmixin's hook
	"github.com/shardkey/shardkey/examples/ent/ent/user"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
	// sqlhook parses the SQL of the dialects a program imports, as
	// database/sql drivers are registered: this example runs on SQLite.
	_ "github.com/shardkey/shardkey/sqlhook/sqlite"
)

//go:embed sharding.yaml
var defaultRules []byte

func main() {
	path := flag.String("db", "", "SQLite file (default: a new one in a temporary directory)")
	rules := flag.String("rules", "", "sharding rules file (default: the built-in sharding.yaml)")
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
	cfg, err := loadRules(rules)
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

	if err := migrateTables(ctx, cfg); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	ada, err := createUserAndPost(ctx, client)
	if err != nil {
		return err
	}
	return createOrders(ctx, client, ada)
}

func loadRules(path string) (*shardconf.Config, error) {
	if path == "" {
		return shardconf.Parse(defaultRules)
	}
	return shardconf.Load(path)
}

// createUserAndPost writes a post by Ada, who is created on the first run
// and found on the next ones.
func createUserAndPost(ctx context.Context, client *ent.Client) (*ent.User, error) {
	ada, err := client.User.Query().Where(user.Email("ada@example.com")).Only(ctx)
	if ent.IsNotFound(err) {
		ada, err = client.User.Create().SetName("Ada").SetEmail("ada@example.com").Save(ctx)
	}
	if err != nil {
		return nil, err
	}
	post, err := client.Post.Create().SetTitle("Hello").SetAuthor(ada).Save(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Printf("user %d, post %d by user %d\n", ada.ID, post.ID, post.QueryAuthor().OnlyIDX(ctx))
	return ada, nil
}

// createOrders writes three orders of ada's to the sharded table and reads
// each back, routed by its id.
func createOrders(ctx context.Context, client *ent.Client, ada *ent.User) error {
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

// migrateTables runs ent's migration on the rules' data source directly
// (not through sqlhook), with each sharded table replaced by copies named
// after its physical tables.
func migrateTables(ctx context.Context, cfg *shardconf.Config) error {
	router, err := shardconf.NewRouter(cfg)
	if err != nil {
		return err
	}
	physical, err := physicalTables(router, migrate.Tables)
	if err != nil {
		return err
	}
	ds := cfg.DataSources[0] // the example's one data source
	db, err := sql.Open(ds.Driver, ds.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	m, err := schema.NewMigrate(entsql.OpenDB(dialect.SQLite, db))
	if err != nil {
		return err
	}
	return m.Create(ctx, physical...)
}

// physicalTables copies ent's tables, each sharded table replaced by one
// copy per physical table; index names get the physical table's name,
// since SQLite and PostgreSQL keep index names per schema.
func physicalTables(router *shardconf.Router, logic []*schema.Table) ([]*schema.Table, error) {
	tables, err := schema.CopyTables(logic)
	if err != nil {
		return nil, err
	}
	var physical []*schema.Table
	for _, t := range tables {
		if !router.IsSharded(t.Name) {
			physical = append(physical, t)
			continue
		}
		targets, err := router.Targets(t.Name)
		if err != nil {
			return nil, err
		}
		for _, target := range targets {
			c, err := schema.CopyTables([]*schema.Table{t})
			if err != nil {
				return nil, err
			}
			pt := c[0]
			pt.Name = target.Table
			for _, idx := range pt.Indexes {
				idx.Name += "_" + target.Table
			}
			physical = append(physical, pt)
		}
	}
	return physical, nil
}

// openClient returns an ent client over sqlhook for the rules' data source.
func openClient(cfg *shardconf.Config) (*ent.Client, error) {
	db, err := sqlhook.Open(cfg)
	if err != nil {
		return nil, err
	}
	return ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, db))), nil
}
