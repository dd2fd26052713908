package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// Order is one row of the logic table t_order. OrderID is filled by the
// rules' SNOWFLAKE generator on create; keygen.ID marshals to JSON as a
// string, which JavaScript reads without losing digits.
type Order struct {
	OrderID   keygen.ID `gorm:"primaryKey"`
	UserID    int64     `gorm:"index;not null"`
	Amount    int64     `gorm:"not null"` // cents
	Status    string    `gorm:"size:16;not null"`
	CreatedAt time.Time
}

// TableName is the logic table; the plugin routes it to t_order_0..3 of
// ds_0 or ds_1.
func (Order) TableName() string { return "t_order" }

// users is how many users the orders are spread over.
const users = 1000

// shop holds one *gorm.DB per data source, each with the plugin, and a
// reporting *gorm.DB that may scatter.
type shop struct {
	router  *shardconf.Router
	dbs     map[string]*gorm.DB // per data source: statements whose transaction begins there
	report  *gorm.DB            // WithScatter: statements that leave the table open run on every table
	targets []shardconf.Target
	pools   map[string]gorm.ConnPool
	sqlDBs  map[string]*sql.DB
	// usersOf lists, per data source, the users the rules place there.
	usersOf map[string][]int64
	closers []func() error
	names   []string // data source → database, for the report
}

func openShop(ctx context.Context, c config, r *shardconf.Router) (*shop, error) {
	s := &shop{router: r, dbs: map[string]*gorm.DB{}, pools: map[string]gorm.ConnPool{}, sqlDBs: map[string]*sql.DB{}}
	var err error
	if s.targets, err = r.Targets("t_order"); err != nil {
		return nil, err
	}
	if s.usersOf, err = usersByDataSource(r); err != nil {
		return nil, err
	}
	plain := map[string]*gorm.DB{}
	for _, ds := range r.DataSources() {
		db, name, err := openDataSource(ctx, c, ds)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("data source %s: %w", ds, err)
		}
		sqlDB, err := db.DB()
		if err != nil {
			s.Close()
			return nil, err
		}
		s.closers = append(s.closers, sqlDB.Close)
		s.names = append(s.names, ds+" → "+name)
		plain[ds] = db
		s.pools[ds] = sqlDB
		s.sqlDBs[ds] = sqlDB
	}
	// Each data source's *gorm.DB gets the plugin with every pool: a
	// statement runs where the rules put it, and a transaction (GORM wraps
	// each create in one) stays on the data source it began on.
	for ds, db := range plain {
		if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(r), gormplugin.WithDataSources(s.pools))); err != nil {
			s.Close()
			return nil, err
		}
		s.dbs[ds] = db
	}
	first := r.DataSources()[0]
	s.report, err = openReport(plain[first].Dialector, s.pools[first], r, s.pools)
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// usersByDataSource places the tour's users. The tour needs t_order's
// data source chosen by user_id: a batch is one transaction, in one data
// source.
func usersByDataSource(r *shardconf.Router) (map[string][]int64, error) {
	usersOf := map[string][]int64{}
	for u := int64(0); u < users; u++ {
		ts, err := r.Scatter("t_order", shardconf.Eq("user_id", u))
		if err != nil {
			return nil, fmt.Errorf("the rules must place t_order's rows by user_id: %w", err)
		}
		ds := ts[0].DataSource
		for _, t := range ts[1:] {
			if t.DataSource != ds {
				return nil, fmt.Errorf("the rules must choose t_order's data source by user_id; user %d is in %s and %s", u, ds, t.DataSource)
			}
		}
		usersOf[ds] = append(usersOf[ds], u)
	}
	return usersOf, nil
}

// openReport opens a second *gorm.DB on the first data source's pool,
// with WithScatter: statements whose conditions leave the table (not the
// data source) open run on every table the rules allow.
func openReport(d gorm.Dialector, pool gorm.ConnPool, r *shardconf.Router, pools map[string]gorm.ConnPool) (*gorm.DB, error) {
	db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard, ConnPool: pool})
	if err != nil {
		return nil, err
	}
	return db, db.Use(gormplugin.New(nil, gormplugin.WithRules(r), gormplugin.WithDataSources(pools), gormplugin.WithScatter()))
}

func (s *shop) Close() {
	for _, c := range s.closers {
		c()
	}
}

func (s *shop) describe() string { return strings.Join(s.names, ", ") }

// any is a *gorm.DB for statements outside a transaction: the plugin sends
// each to the pool of its data source, whichever *gorm.DB runs it.
func (s *shop) any() *gorm.DB { return s.dbs[s.router.DataSources()[0]] }

// migrate creates every physical table (and its user_id index) in its data
// source; tables that exist are left as they are.
func (s *shop) migrate(ctx context.Context) error {
	return s.dbs[s.router.DataSources()[0]].WithContext(ctx).AutoMigrate(&Order{})
}

// insert creates n orders in batches, each batch of one data source's
// users (a batch is one transaction, which spans two databases only with
// gormplugin.WithTwoPhaseCommit, and SQLite has no two-phase commit). It
// returns a few orders of each data source's last batch, read back later,
// and the time taken.
func (s *shop) insert(ctx context.Context, n, batch int, progress io.Writer) ([]Order, time.Duration, error) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	bar := newProgress(progress, n)
	rows := make([]Order, 0, min(batch, n))
	var sources []string // the data sources holding users, in the rules' order
	for _, ds := range s.router.DataSources() {
		if len(s.usersOf[ds]) > 0 {
			sources = append(sources, ds)
		}
	}
	sample := map[string][]Order{}
	start := time.Now()
	for done, b := 0, 0; done < n; b++ {
		ds := sources[b%len(sources)]
		rows = rows[:0]
		for i := 0; i < batch && done+i < n; i++ {
			us := s.usersOf[ds]
			rows = append(rows, Order{
				UserID: us[rng.IntN(len(us))],
				Amount: int64(rng.IntN(100_000)),
				Status: "NEW",
			})
		}
		if err := s.dbs[ds].WithContext(ctx).Create(&rows).Error; err != nil {
			return nil, 0, err
		}
		done += len(rows)
		bar.set(done)
		// Keep a few orders of the last batch of each data source.
		sample[ds] = append(sample[ds][:0], rows[:min(len(rows), 3)]...)
	}
	took := time.Since(start)
	bar.finish()
	var out []Order
	for _, ds := range sources {
		out = append(out, sample[ds]...)
	}
	return out, took, nil
}

// readBack reads orders by user and key: one table of one data source each.
func (s *shop) readBack(ctx context.Context, sample []Order, out io.Writer) error {
	db := s.any().WithContext(ctx)
	start := time.Now()
	for _, want := range sample {
		var got Order
		if err := db.Where("user_id = ? AND order_id = ?", want.UserID, want.OrderID).First(&got).Error; err != nil {
			return fmt.Errorf("read order %d: %w", want.OrderID, err)
		}
		if got.Amount != want.Amount || got.UserID != want.UserID {
			return fmt.Errorf("read order %d: got %+v, want %+v", want.OrderID, got, want)
		}
		ts, err := s.router.Route("t_order", shardconf.Eq("user_id", want.UserID), shardconf.Eq("order_id", int64(want.OrderID)))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  read order %d of user %d from %s.%s\n", got.OrderID, got.UserID, ts[0].DataSource, ts[0].Table)
	}
	fmt.Fprintf(out, "read %d orders back by key in %s\n", len(sample), time.Since(start).Round(time.Microsecond))
	return nil
}

// scatter counts and lists one user's orders: user_id places the data
// source, and with no order_id the query runs on its four tables and the
// plugin merges the answers (sum of counts; ORDER BY and LIMIT over the
// merged rows). Then a count with neither key runs on all eight tables.
func (s *shop) scatter(ctx context.Context, user int64, out io.Writer) error {
	db := s.report.WithContext(ctx)
	var n int64
	if err := db.Model(&Order{}).Where("user_id = ?", user).Count(&n).Error; err != nil {
		return fmt.Errorf("count user %d: %w", user, err)
	}
	var top []Order
	if err := db.Where("user_id = ?", user).Order("amount DESC").Limit(3).Find(&top).Error; err != nil {
		return fmt.Errorf("largest orders of user %d: %w", user, err)
	}
	ts, err := s.router.Scatter("t_order", shardconf.Eq("user_id", user))
	if err != nil {
		return err
	}
	amounts := make([]string, len(top))
	for i, o := range top {
		amounts[i] = fmt.Sprintf("%d.%02d", o.Amount/100, o.Amount%100)
	}
	fmt.Fprintf(out, "scatter over %d tables of %s: user %d has %d orders; largest: %s\n",
		len(ts), ts[0].DataSource, user, n, strings.Join(amounts, ", "))

	// Without user_id the query reaches every table of both databases: a
	// read outside a transaction runs on each database's pool and merges.
	var big int64
	if err := db.Model(&Order{}).Where("amount >= ?", 99_900).Count(&big).Error; err != nil {
		return fmt.Errorf("count of large orders: %w", err)
	}
	fmt.Fprintf(out, "scatter over all %d tables of %s: %d orders of 999.00 or more\n",
		len(s.targets), strings.Join(s.router.DataSources(), " and "), big)
	return nil
}

// refused shows failing closed: without user_id the data source is
// unknown, so the router refuses instead of guessing one.
func (s *shop) refused(ctx context.Context, id keygen.ID, out io.Writer) error {
	var o Order
	err := s.any().WithContext(ctx).Where("order_id = ?", id).First(&o).Error
	if !errors.Is(err, shardconf.ErrMissingShardingKey) {
		return fmt.Errorf("a query without user_id: %v, want shardconf.ErrMissingShardingKey", err)
	}
	fmt.Fprintf(out, "refused, as it should be: a query by order_id alone: %v\n", err)
	return nil
}

// counts prints the rows of every physical table, read from it directly.
func (s *shop) counts(ctx context.Context, out io.Writer) error {
	fmt.Fprintln(out, "rows per physical table:")
	var total int64
	for _, t := range s.targets {
		var n int64
		// The physical table by name, on its database's own pool.
		if err := s.sqlDBs[t.DataSource].QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.Table).Scan(&n); err != nil {
			return fmt.Errorf("%s.%s: %w", t.DataSource, t.Table, err)
		}
		total += n
		fmt.Fprintf(out, "  %s.%-10s %8d\n", t.DataSource, t.Table, n)
	}
	fmt.Fprintf(out, "  %-15s %8d\n", "total", total)
	return nil
}
