// Command quickstart shows shardkey end to end in one command: sharding
// rules from a YAML file, generated keys, GORM statements routed to
// physical tables across two databases, and the router refusing what it
// cannot place.
//
//	go run ./examples/quickstart                      # embedded SQLite, no server, no cgo
//	go run ./examples/quickstart -n 1000000           # more orders
//	go run ./examples/quickstart -dsn 'postgres://postgres@127.0.0.1:5432/quickstart_{ds}?sslmode=disable'
//	go run ./examples/quickstart -dsn 'root@tcp(127.0.0.1:3306)/quickstart_{ds}'
//
// The rules (rules.yaml, built in; -rules reads another file) put t_order
// in two data sources × four tables: user_id picks the data source, the
// SNOWFLAKE order_id picks the table. The program creates the eight
// physical tables, inserts -n orders through GORM with generated keys,
// reads some back by key, runs a query over the four tables of one user's
// data source and one over all eight tables of both databases (a read
// may scatter; -n's writes are batched per database), shows a query the
// rules cannot place being refused, and
// prints the rows per physical table, the insert rate and one key decoded.
//
// Data sources: by default each is a SQLite file, -dir/ds_0.db and
// -dir/ds_1.db (-dir defaults to shardkey-quickstart in the temporary
// directory). -dsn replaces them with one database per data source on
// PostgreSQL or MySQL/MariaDB: {ds} in the DSN is replaced by the data
// source's name (ds_0, ds_1), and a database that does not exist is
// created. The set-up is idempotent: a second run adds more orders to the
// same tables.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	_ "embed"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

//go:embed rules.yaml
var defaultRules []byte

// config is what the flags set.
type config struct {
	rules    string // a rule file; "" for the built-in rules.yaml
	dir      string // where the SQLite files go
	dsn      string // a DSN template with {ds}; "" for SQLite
	orders   int
	batch    int
	worker   int
	progress io.Writer // the progress bar; nil for none
}

func main() {
	var c config
	flag.StringVar(&c.rules, "rules", "", "sharding rules `file` (default: the built-in rules.yaml)")
	flag.StringVar(&c.dir, "dir", filepath.Join(os.TempDir(), "shardkey-quickstart"), "`directory` of the SQLite files")
	flag.StringVar(&c.dsn, "dsn", "", "PostgreSQL or MySQL `DSN` template; {ds} is replaced by each data source's name")
	flag.IntVar(&c.orders, "n", 100_000, "`orders` to insert")
	flag.IntVar(&c.batch, "batch", 1000, "orders per INSERT batch")
	flag.IntVar(&c.worker, "worker", 1, "SNOWFLAKE worker `id` of this process (0..1023)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "quickstart: unexpected argument %q\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		c.progress = os.Stderr // a terminal: draw the bar
	}
	if err := run(context.Background(), c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run is the whole tour; out receives the report.
func run(ctx context.Context, c config, out io.Writer) error {
	if c.orders < 0 || c.batch < 1 {
		return errors.New("-n must be ≥ 0 and -batch ≥ 1")
	}
	router, err := newRouter(c)
	if err != nil {
		return err
	}
	shop, err := openShop(ctx, c, router)
	if err != nil {
		return err
	}
	defer shop.Close()
	fmt.Fprintf(out, "rules: t_order in %d data sources × %d tables; data: %s\n",
		len(router.DataSources()), len(shop.targets)/len(router.DataSources()), where(c, shop))

	// 1. The physical tables: AutoMigrate on the logic model creates all eight.
	if err := shop.migrate(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "created (if missing) %d physical tables of t_order\n", len(shop.targets))

	// 2. Insert orders with generated keys.
	sample, took, err := shop.insert(ctx, c.orders, c.batch, c.progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "inserted %d orders in %s (%.0f orders/s)\n", c.orders, took.Round(time.Millisecond), rate(c.orders, took))
	if len(sample) == 0 {
		return nil
	}

	// 3. Point reads by key: each goes to one table of one data source.
	if err := shop.readBack(ctx, sample, out); err != nil {
		return err
	}

	// 4. A query over the four tables of one data source (the rules place
	// the user; the order table is open), then one the rules cannot place.
	if err := shop.scatter(ctx, sample[0].UserID, out); err != nil {
		return err
	}
	if err := shop.refused(ctx, sample[0].OrderID, out); err != nil {
		return err
	}

	// 5. Where the rows went, and what a key holds.
	if err := shop.counts(ctx, out); err != nil {
		return err
	}
	return decodeKey(router, sample[0].OrderID, out)
}

// newRouter reads the rules (c.rules, or the built-in ones) with this
// process's SNOWFLAKE worker id.
func newRouter(c config) (*shardconf.Router, error) {
	cfg, err := loadRules(c.rules)
	if err != nil {
		return nil, err
	}
	return shardconf.NewRouter(cfg, shardconf.WithKeyGenProps(keygen.Props{"worker-id": fmt.Sprint(c.worker)}))
}

// where says where the data is: the SQLite files' directory, or each data
// source's database.
func where(c config, s *shop) string {
	if c.dsn != "" {
		return s.describe()
	}
	return "SQLite files in " + c.dir
}

// rate is n per second of took.
func rate(n int, took time.Duration) float64 {
	if took <= 0 {
		return 0
	}
	return float64(n) / took.Seconds()
}

// loadRules reads the rule file, or the built-in rules.
func loadRules(path string) (*shardconf.Config, error) {
	if path != "" {
		return shardconf.Load(path)
	}
	return shardconf.Parse(defaultRules)
}

// decodeKey prints the fields of a key, with the layout of t_order's key
// generator.
func decodeKey(r *shardconf.Router, id keygen.ID, out io.Writer) error {
	_, gen, ok := r.KeyGenerator("t_order")
	if !ok {
		return errors.New("t_order has no key generator in the rules")
	}
	d, ok := gen.(keygen.Decomposer)
	if !ok {
		return fmt.Errorf("t_order's %s keys do not decompose", gen.Type())
	}
	p, err := d.Decompose(int64(id))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "key %d (%s as JSON): %s time %s, worker %d, sequence %d\n",
		id, mustJSON(id), gen.Type(), p.Time.UTC().Format(time.RFC3339Nano), p.Worker, p.Sequence)
	return nil
}

func mustJSON(id keygen.ID) string {
	b, err := id.MarshalJSON()
	if err != nil {
		return err.Error()
	}
	return string(b)
}
