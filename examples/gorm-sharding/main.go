// Command gorm-sharding is shardkey's GORM sharding example: t_order is
// sharded over two databases by user_id and over two tables in each by its
// SNOWFLAKE order_id, as sharding.yaml (ShardingSphere 5.x rules) says.
// gormplugin fills order_id and sends every statement to its physical
// tables. A statement missing a sharding column is refused
// (shardconf.ErrMissingShardingKey) unless its *gorm.DB's plugin opted in
// with WithScatter, which runs it on every table the other conditions
// allow. A read may reach both databases (each on its own pool, merged);
// a write reaching both is refused (gormplugin.ErrUnsupported) unless the
// plugin has WithTwoPhaseCommit (PostgreSQL, MariaDB), which commits it on
// both atomically (see examples/twophase).
//
//	go run ./examples/gorm-sharding              # two SQLite files in a temporary directory
//	go run ./examples/gorm-sharding -dir data    # ... or in a directory of yours (kept)
//	go run ./examples/gorm-sharding \
//	    -dsn0 'postgres://postgres@127.0.0.1:5432/shard0?sslmode=disable' \
//	    -dsn1 'postgres://postgres@127.0.0.1:5432/shard1?sslmode=disable'
//	go run ./examples/gorm-sharding -worker 7 -rules my.yaml -sql
//
// -dsn0 and -dsn1 replace the DSNs of the rules' two data sources (ds_0,
// ds_1); the databases must exist. Their form selects the driver:
// postgres:// (or key=value with host=) is PostgreSQL, user@tcp(...)/db
// MySQL/MariaDB, anything else a SQLite file. The rules are sharding.yaml, built into the program, unless
// -rules names a file. Running it again on the same databases adds rows:
// AutoMigrate leaves the tables as they are.
package main

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

//go:embed sharding.yaml
var defaultRules []byte

// Order is the logic table t_order. Its primary key order_id is filled by
// the rules' SNOWFLAKE generator and, with user_id, chooses the physical
// table.
type Order struct {
	OrderID keygen.ID `gorm:"primaryKey"`
	UserID  int64     `gorm:"index"`
	Status  string
	Amount  int64
}

// TableName is the logic table of the rules.
func (Order) TableName() string { return "t_order" }

type config struct {
	Rules  string   // a rule file; "" for the built-in sharding.yaml
	Dir    string   // directory of the SQLite data sources; "" for a temporary one
	DSNs   []string // DSNs replacing the rules' data sources', in file order ("" keeps one)
	Worker int      // the SNOWFLAKE worker id: every process needs its own
	SQL    io.Writer
}

func main() {
	var cfg config
	var dsn0, dsn1 string
	var logSQL bool
	flag.StringVar(&cfg.Rules, "rules", "", "sharding rules file (default: the built-in sharding.yaml)")
	flag.StringVar(&cfg.Dir, "dir", "", "directory of the SQLite data sources (default: a temporary one, removed at exit)")
	flag.StringVar(&dsn0, "dsn0", "", "DSN of the first data source (ds_0): postgres://..., user@tcp(host)/db or a SQLite file")
	flag.StringVar(&dsn1, "dsn1", "", "DSN of the second data source (ds_1)")
	flag.IntVar(&cfg.Worker, "worker", 1, "SNOWFLAKE worker id (0-1023), unique per process")
	flag.BoolVar(&logSQL, "sql", false, "log SQL statements to stderr")
	flag.Parse()
	cfg.DSNs = []string{dsn0, dsn1}
	if logSQL {
		cfg.SQL = os.Stderr
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		slog.Error("example failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	rules, err := loadRules(cfg.Rules)
	if err != nil {
		return err
	}
	// The rule file names no worker id; this process passes its own.
	router, err := shardconf.NewRouter(rules, shardconf.WithKeyGenProps(keygen.Props{"worker-id": strconv.Itoa(cfg.Worker)}))
	if err != nil {
		return err
	}
	dir, removeDir, err := dataDir(cfg.Dir)
	if err != nil {
		return err
	}
	defer removeDir()
	cfg.Dir = dir
	srcs, err := openDataSources(rules, cfg, stdout)
	if err != nil {
		return err
	}
	defer srcs.close()

	// db routes by the rules and refuses statements without the sharding
	// key; scatter, over the same pools, runs them on every table.
	db, scatter, err := srcs.gormDBs(ctx, router)
	if err != nil {
		return err
	}
	targets, err := router.Targets("t_order")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "t_order: sharded by %s over %s\n", strings.Join(router.ShardingColumns("t_order"), ", "), joinTargets(targets))

	// AutoMigrate creates every physical table in its data source.
	if err := db.AutoMigrate(&Order{}); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	orders, err := createOrders(db, router, stdout)
	if err != nil {
		return err
	}
	if err := readByKey(db, orders, stdout); err != nil {
		return err
	}
	refuseWithoutKey(db, orders[4], stdout)
	if err := readScattered(scatter, router, stdout); err != nil {
		return err
	}
	return countRows(ctx, srcs.sqlDBs, targets, stdout)
}

// dataDir is the directory of the SQLite data sources: dir, created if
// missing, or a new temporary one that remove deletes.
func dataDir(dir string) (_ string, remove func(), err error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	tmp, err := os.MkdirTemp("", "shardkey-gorm-sharding-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// dataSources holds one *gorm.DB, one pool, per data source of the rules.
type dataSources struct {
	cfg       config
	pools     map[string]gorm.ConnPool
	sqlDBs    map[string]*sql.DB
	first     *gorm.DB // the first data source's, which the plugins are installed on
	firstKind string
	firstName string
}

// gormConfig is a new gorm.Config: each *gorm.DB needs one of its own, as
// GORM keeps its callbacks and plugins in it.
func (cfg config) gormConfig() *gorm.Config {
	c := &gorm.Config{Logger: logger.Discard}
	if cfg.SQL != nil {
		c.Logger = logger.New(log.New(cfg.SQL, "", 0), logger.Config{LogLevel: logger.Info})
	}
	return c
}

// openDataSources opens the rules' data sources, a DSN of cfg.DSNs
// replacing a rule's and a relative SQLite file placed in cfg.Dir.
func openDataSources(rules *shardconf.Config, cfg config, stdout io.Writer) (*dataSources, error) {
	srcs := &dataSources{cfg: cfg, pools: map[string]gorm.ConnPool{}, sqlDBs: map[string]*sql.DB{}}
	for i, ds := range rules.DataSources {
		dsn := ds.DSN
		if i < len(cfg.DSNs) && cfg.DSNs[i] != "" {
			dsn = cfg.DSNs[i]
		} else if ds.Driver == "sqlite" && !filepath.IsAbs(dsn) && !strings.HasPrefix(dsn, "file:") {
			dsn = filepath.Join(cfg.Dir, dsn)
		}
		dialector, kind := open(dsn)
		db, err := gorm.Open(dialector, cfg.gormConfig())
		if err != nil {
			srcs.close()
			return nil, fmt.Errorf("data source %s: %w", ds.Name, err)
		}
		pool, err := db.DB()
		if err != nil {
			srcs.close()
			return nil, err
		}
		srcs.pools[ds.Name], srcs.sqlDBs[ds.Name] = pool, pool
		fmt.Fprintf(stdout, "data source %s: %s\n", ds.Name, kind)
		if srcs.first == nil {
			srcs.first, srcs.firstKind, srcs.firstName = db, kind, ds.Name
		}
	}
	if srcs.first == nil {
		return nil, errors.New("the rules name no data source")
	}
	return srcs, nil
}

func (srcs *dataSources) close() {
	for _, pool := range srcs.sqlDBs {
		pool.Close()
	}
}

// gormDBs installs the plugin on the first data source's *gorm.DB (db,
// strict) and on a second *gorm.DB over the same pool (scatter, WithScatter).
func (srcs *dataSources) gormDBs(ctx context.Context, router *shardconf.Router) (db, scatter *gorm.DB, err error) {
	db = srcs.first.WithContext(ctx)
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(router), gormplugin.WithDataSources(srcs.pools))); err != nil {
		return nil, nil, err
	}
	scatter, err = gorm.Open(reuse(srcs.firstKind, srcs.sqlDBs[srcs.firstName]), srcs.cfg.gormConfig())
	if err != nil {
		return nil, nil, err
	}
	scatter = scatter.WithContext(ctx)
	err = scatter.Use(gormplugin.New(nil, gormplugin.WithRules(router), gormplugin.WithDataSources(srcs.pools), gormplugin.WithScatter()))
	if err != nil {
		return nil, nil, err
	}
	return db, scatter, nil
}

// createOrders writes three orders for each of users 1 to 4 and prints
// where each went. Each user's orders are one batch in one database: the
// plugin keys them, then sends one INSERT per table, in one transaction.
func createOrders(db *gorm.DB, router *shardconf.Router, stdout io.Writer) ([]Order, error) {
	var orders []Order
	for user := int64(1); user <= 4; user++ {
		batch := []Order{
			{UserID: user, Status: "new", Amount: user * 100},
			{UserID: user, Status: "paid", Amount: user*100 + 1},
			{UserID: user, Status: "paid", Amount: user*100 + 2},
		}
		if err := db.Create(&batch).Error; err != nil {
			return nil, err
		}
		for _, o := range batch {
			ts, err := router.Route("t_order", shardconf.Eq("user_id", o.UserID), shardconf.Eq("order_id", o.OrderID))
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(stdout, "order %s: user %d, amount %d, %s -> %s\n", o.OrderID, o.UserID, o.Amount, o.Status, joinTargets(ts))
		}
		orders = append(orders, batch...)
	}
	// One batch cannot span databases: one transaction could not hold it.
	err := db.Create(&[]Order{{UserID: 1, Status: "new"}, {UserID: 2, Status: "new"}}).Error
	fmt.Fprintf(stdout, "batch for users 1 and 2: %s\n", outcome(err))
	return orders, nil
}

// readByKey reads and updates orders by their sharding key.
func readByKey(db *gorm.DB, orders []Order, stdout io.Writer) error {
	// A point read by the whole sharding key reaches one table.
	want := orders[4]
	var got Order
	if err := db.Where("user_id = ? AND order_id = ?", want.UserID, want.OrderID).First(&got).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "point read user %d, order %s: amount %d, %s\n", got.UserID, got.OrderID, got.Amount, got.Status)

	// An update of the loaded model: GORM adds its key (order_id = ...),
	// which picks the table; user_id, which picks the database, is not
	// taken from the model, so it is stated.
	if err := db.Model(&got).Where("user_id = ?", got.UserID).Update("status", "shipped").Error; err != nil {
		return err
	}
	var again Order
	if err := db.Where(&Order{UserID: got.UserID, OrderID: got.OrderID}).Take(&again).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "updated order %s: %s\n", again.OrderID, again.Status)

	// Both sharding columns, with several keys: the tables they select,
	// merged in order.
	var mine []Order
	ids := []keygen.ID{orders[6].OrderID, orders[7].OrderID, orders[8].OrderID}
	if err := db.Where("user_id = ? AND order_id IN ?", 3, ids).Order("order_id").Find(&mine).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "user 3, 3 order ids: %d orders, amounts %s\n", len(mine), amounts(mine))
	return nil
}

// refuseWithoutKey shows statements refused on the strict db. A sharding
// column without a condition: the rules cannot say where the rows are, so
// the statement is refused rather than run on one guessed table.
func refuseWithoutKey(db *gorm.DB, known Order, stdout io.Writer) {
	var found []Order
	err := db.Where("status = ?", "paid").Find(&found).Error
	fmt.Fprintf(stdout, "status = paid: %s\n", outcome(err))
	err = db.Where("user_id = ?", 3).Find(&found).Error
	fmt.Fprintf(stdout, "user_id = 3 alone: %s\n", outcome(err))
	var got Order
	err = db.First(&got, known.OrderID).Error
	fmt.Fprintf(stdout, "order %s alone: %s\n", known.OrderID, outcome(err))
}

// readScattered reads through the scatter *gorm.DB, which opted in: every
// table the other conditions allow (here both tables of ds_1), merged as
// one table would answer (ORDER BY, LIMIT after the merge).
func readScattered(scatter *gorm.DB, router *shardconf.Router, stdout io.Writer) error {
	ts, err := router.Scatter("t_order", shardconf.Eq("user_id", 3))
	if err != nil {
		return err
	}
	var mine, paid []Order
	if err := scatter.Where("user_id = ?", 3).Order("amount").Find(&mine).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "scatter user_id = 3 (%s): %d orders, amounts %s\n", joinTargets(ts), len(mine), amounts(mine))
	if err := scatter.Where("user_id = ? AND status = ?", 3, "paid").Order("amount desc").Limit(1).Find(&paid).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "scatter user_id = 3, paid, largest: amounts %s\n", amounts(paid))
	// A read may reach both databases: each runs on its own pool and the
	// plugin merges. A write may not without WithTwoPhaseCommit (one local
	// transaction cannot span two databases): gormplugin.ErrUnsupported,
	// before anything runs.
	var nPaid int64
	if err := scatter.Model(&Order{}).Where("status = ?", "paid").Count(&nPaid).Error; err != nil {
		return err
	}
	fmt.Fprintf(stdout, "scatter status = paid over both databases: %d orders\n", nPaid)
	err = scatter.Model(&Order{}).Where("status = ?", "paid").Update("status", "archived").Error
	fmt.Fprintf(stdout, "update status = paid over both databases: %s\n", outcome(err))
	return nil
}

// countRows prints what each physical table holds, asked of its database
// directly.
func countRows(ctx context.Context, sqlDBs map[string]*sql.DB, targets []shardconf.Target, stdout io.Writer) error {
	var total int64
	for _, t := range targets {
		var n int64
		if err := sqlDBs[t.DataSource].QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.Table).Scan(&n); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s.%s: %d rows\n", t.DataSource, t.Table, n)
		total += n
	}
	fmt.Fprintf(stdout, "t_order: %d rows\n", total)
	return nil
}

func loadRules(path string) (*shardconf.Config, error) {
	if path == "" {
		return shardconf.Parse(defaultRules)
	}
	return shardconf.Load(path)
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, shardconf.ErrMissingShardingKey):
		return "refused, missing sharding key (" + err.Error() + ")"
	case errors.Is(err, gormplugin.ErrUnsupported):
		return "refused, unsupported (" + err.Error() + ")"
	default:
		return "error: " + err.Error()
	}
}

func joinTargets(ts []shardconf.Target) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.DataSource + "." + t.Table
	}
	return strings.Join(s, ", ")
}

func amounts(os []Order) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = strconv.FormatInt(o.Amount, 10)
	}
	return "[" + strings.Join(s, " ") + "]"
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

// reuse is a dialector of kind over an open pool.
func reuse(kind string, pool *sql.DB) gorm.Dialector {
	switch kind {
	case "postgres":
		return postgres.New(postgres.Config{Conn: pool})
	case "mysql":
		return mysql.New(mysql.Config{Conn: pool})
	default:
		return sqlite.Dialector{Conn: pool}
	}
}
