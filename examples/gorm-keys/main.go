// Command gorm-keys is shardkey's GORM key example: gormplugin fills every
// primary key with a SNOWFLAKE key (no sharding rules), on a single create,
// on CreateInBatches and on a has-many association, whose children get
// their parent's key; one key is then decoded into its time, worker and
// sequence.
//
//	go run ./examples/gorm-keys                  # SQLite file in a temporary directory
//	go run ./examples/gorm-keys -dsn shop.db     # or a SQLite file of yours
//	go run ./examples/gorm-keys -dsn 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./examples/gorm-keys -dsn 'root@tcp(127.0.0.1:3306)/test'
//	go run ./examples/gorm-keys -worker 7 -sql   # another worker id; log SQL to stderr
//
// The database must exist. The -dsn form selects the driver: postgres://
// (or key=value with host=) is PostgreSQL, user@tcp(...)/db is
// MySQL/MariaDB, anything else a SQLite file. Running it again on the same database adds rows: AutoMigrate
// leaves the tables as they are.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
)

// Customer's ID is a GORM integer primary key: the plugin fills it with a
// SNOWFLAKE key, and AutoMigrate creates it as a plain bigint (no
// auto-increment, identity or sequence).
type Customer struct {
	ID     keygen.ID
	Name   string
	Orders []Order // has-many: each order's CustomerID is Customer.ID
}

// Order has its own generated key and its customer's key.
type Order struct {
	ID         keygen.ID
	CustomerID keygen.ID `gorm:"index"`
	Amount     int64
}

type config struct {
	DSN    string // "" for a SQLite file in a temporary directory
	Worker int    // the SNOWFLAKE worker id: every process needs its own
	SQL    io.Writer
}

func main() {
	var cfg config
	var logSQL bool
	flag.StringVar(&cfg.DSN, "dsn", "", "database: postgres://..., user@tcp(host)/db (MySQL) or a SQLite file (default: one in a temporary directory)")
	flag.IntVar(&cfg.Worker, "worker", 1, "SNOWFLAKE worker id (0-1023), unique per process")
	flag.BoolVar(&logSQL, "sql", false, "log SQL statements to stderr")
	flag.Parse()
	if logSQL {
		cfg.SQL = os.Stderr
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		slog.Error("example failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	dsn := cfg.DSN
	if dsn == "" {
		dir, err := os.MkdirTemp("", "shardkey-gorm-keys-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dsn = filepath.Join(dir, "shop.db")
	}
	dialector, kind := open(dsn)
	db, err := gorm.Open(dialector, cfg.gormConfig())
	if err != nil {
		return err
	}
	if pool, err := db.DB(); err == nil {
		defer pool.Close()
	}
	db = db.WithContext(ctx)
	fmt.Fprintln(stdout, "database:", kind)

	// The plugin's generator: a SNOWFLAKE with this process's worker id.
	// A bad worker id is the error of db.Use.
	props := keygen.Props{"worker-id": strconv.Itoa(cfg.Worker)}
	if err := db.Use(gormplugin.New(props)); err != nil {
		return err
	}
	if err := db.AutoMigrate(&Customer{}, &Order{}); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	ada, err := createWithOrders(db, stdout)
	if err != nil {
		return err
	}
	if err := createInBatches(db, stdout); err != nil {
		return err
	}
	if err := decode(ada.ID, stdout); err != nil {
		return err
	}
	return readBack(db, ada.ID, stdout)
}

func (cfg config) gormConfig() *gorm.Config {
	c := &gorm.Config{Logger: logger.Discard}
	if cfg.SQL != nil {
		c.Logger = logger.New(log.New(cfg.SQL, "", 0), logger.Config{LogLevel: logger.Info})
	}
	return c
}

// createWithOrders is one create with a has-many association: the
// customer's key is issued first, then its orders', each order carrying the
// customer's key.
func createWithOrders(db *gorm.DB, stdout io.Writer) (Customer, error) {
	ada := Customer{Name: "Ada", Orders: []Order{{Amount: 1200}, {Amount: 350}}}
	if err := db.Create(&ada).Error; err != nil {
		return Customer{}, err
	}
	fmt.Fprintf(stdout, "customer %s: %s\n", ada.ID, ada.Name)
	for _, o := range ada.Orders {
		fmt.Fprintf(stdout, "  order %s: customer %s, amount %d\n", o.ID, o.CustomerID, o.Amount)
	}
	return ada, nil
}

// createInBatches writes two rows per INSERT: each batch's keys come from
// one NextIDs call, which reserves its sequence range at once; the keys
// ascend in slice order.
func createInBatches(db *gorm.DB, stdout io.Writer) error {
	batch := []Customer{{Name: "Grace"}, {Name: "Edsger"}, {Name: "Barbara"}, {Name: "Donald"}, {Name: "Frances"}}
	if err := db.CreateInBatches(&batch, 2).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "batch of %d customers, 2 per INSERT:\n", len(batch))
	for _, c := range batch {
		fmt.Fprintf(stdout, "  customer %s: %s\n", c.ID, c.Name)
	}
	return nil
}

// decode shows that a key is its own creation record. LayoutFor decodes
// SNOWFLAKE keys without a worker id (the generator itself is a
// keygen.Decomposer too).
func decode(id keygen.ID, stdout io.Writer) error {
	layout, err := keygen.LayoutFor("SNOWFLAKE", nil)
	if err != nil {
		return err
	}
	p, err := layout.Decompose(id.Int64())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "decoded %s: time %s, worker %d, sequence %d\n",
		id, p.Time.UTC().Format(time.RFC3339Nano), p.Worker, p.Sequence)
	fmt.Fprintf(stdout, "  as JSON %s, base62 %s\n", mustJSON(id), id.Base62())
	return nil
}

// readBack reads a customer by key, with the association, and counts the
// rows of both tables.
func readBack(db *gorm.DB, id keygen.ID, stdout io.Writer) error {
	var back Customer
	if err := db.Preload("Orders").First(&back, id).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "read back %s: %s with %d orders\n", back.ID, back.Name, len(back.Orders))

	var customers, orders int64
	if err := db.Model(&Customer{}).Count(&customers).Error; err != nil {
		return err
	}
	if err := db.Model(&Order{}).Count(&orders).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rows: customers %d, orders %d\n", customers, orders)
	return nil
}

func mustJSON(id keygen.ID) string {
	b, err := id.MarshalJSON()
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// open picks the GORM driver by the DSN's form.
func open(dsn string) (gorm.Dialector, string) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"), strings.Contains(dsn, "host="):
		return postgres.Open(dsn), "postgres"
	case strings.Contains(dsn, "@tcp("), strings.Contains(dsn, "@unix("), strings.HasPrefix(dsn, "tcp("):
		return mysql.Open(dsn), "mysql"
	case strings.HasPrefix(dsn, "file:"):
		return sqlite.Open(dsn), "sqlite"
	default: // a file name; wait for a lock instead of failing with SQLITE_BUSY
		return sqlite.Open("file:" + dsn + "?_pragma=busy_timeout(5000)"), "sqlite"
	}
}
