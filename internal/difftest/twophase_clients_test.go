package difftest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// tpSQLClient: sqlhook with WithTwoPhaseCommit and WithScatter (a write
// naming users but no order reaches every table of their data sources).
type tpSQLClient struct{ db *sql.DB }

func newTPSQLClient(t testing.TB, w *world, interval time.Duration) *tpSQLClient {
	t.Helper()
	db, err := sqlhook.Open(w.b.config(t), sqlhook.WithTwoPhaseCommit(), sqlhook.WithScatter(),
		sqlhook.WithTwoPhaseRecovery(tpTimeout, interval), sqlhook.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(8)
	t.Cleanup(func() { db.Close() })
	return &tpSQLClient{db: db}
}

func tpTxOptions(iso sql.IsolationLevel) *sql.TxOptions {
	if iso == sql.LevelDefault {
		return nil
	}
	return &sql.TxOptions{Isolation: iso}
}

func (c *tpSQLClient) begin(ctx context.Context, iso sql.IsolationLevel) (tpShardTx, error) {
	tx, err := c.db.BeginTx(ctx, tpTxOptions(iso))
	if err != nil {
		return nil, err
	}
	return tpSQLTx{tx}, nil
}

type tpSQLTx struct{ tx *sql.Tx }

func (x tpSQLTx) exec(ctx context.Context, it tpItem, text string) (int64, error) {
	res, err := x.tx.ExecContext(ctx, text, it.sql.args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (x tpSQLTx) read(ctx context.Context, it tpItem, text string) (int64, string, error) {
	var n int64
	var sum sql.NullString
	err := x.tx.QueryRowContext(ctx, text, it.sql.args...).Scan(&n, &sum)
	return n, sum.String, err
}

func (x tpSQLTx) commit() error   { return x.tx.Commit() }
func (x tpSQLTx) rollback() error { return x.tx.Rollback() }

// tpGormClient: GORM with gormplugin's WithTwoPhaseCommit and
// WithScatter; statements are GORM calls (Create, Updates, Update,
// Delete), savepoints SavePoint/RollbackTo/Exec.
type tpGormClient struct {
	db *gorm.DB
	n  atomic.Int64 // transactions begun (workers begin at once)
}

func newTPGormClient(t testing.TB, w *world, interval time.Duration) tpClient {
	t.Helper()
	open := func(dsn string) (*gorm.DB, *sql.DB) {
		db, err := gorm.Open(w.b.dialector(dsn), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		pool, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		pool.SetMaxOpenConns(16) // a transaction's branches, and room for xa's log and recovery
		t.Cleanup(func() { pool.Close() })
		return db, pool
	}
	db, pool0 := open(w.b.dsn[0])
	_, pool1 := open(w.b.dsn[1])
	r, err := shardconf.NewRouter(w.b.config(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	err = db.Use(gormplugin.New(nil, gormplugin.WithRules(r), gormplugin.WithScatter(),
		gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": pool1}),
		gormplugin.WithTwoPhaseCommit(), gormplugin.WithTwoPhaseRecovery(tpTimeout, interval),
		gormplugin.WithLogger(slog.New(slog.DiscardHandler))))
	if err != nil {
		t.Fatal(err)
	}
	return &tpGormClient{db: db}
}

func (c *tpGormClient) begin(ctx context.Context, iso sql.IsolationLevel) (tpShardTx, error) {
	var opts []*sql.TxOptions
	if o := tpTxOptions(iso); o != nil {
		opts = append(opts, o)
	}
	if c.n.Add(1)%2 == 0 {
		// every other transaction the idiomatic way: db.Transaction
		return newTPGormCallbackTx(c.db.WithContext(ctx), opts), nil
	}
	tx := c.db.WithContext(ctx).Begin(opts...)
	if tx.Error != nil {
		return nil, tx.Error
	}
	return tpGormTx{tx}, nil
}

type tpGormTx struct{ tx *gorm.DB }

func (x tpGormTx) exec(ctx context.Context, it tpItem, text string) (int64, error) {
	var res *gorm.DB
	switch {
	case it.gorm != nil:
		res = it.gorm(x.tx)
	// savepoints on a session: an error of the tx's own *gorm.DB sticks
	// to it, and its Rollback would return it again
	case strings.HasPrefix(it.sql.text, "SAVEPOINT "):
		res = x.tx.Session(&gorm.Session{}).SavePoint(strings.TrimPrefix(it.sql.text, "SAVEPOINT "))
	case strings.HasPrefix(it.sql.text, "ROLLBACK TO SAVEPOINT "):
		res = x.tx.Session(&gorm.Session{}).RollbackTo(strings.TrimPrefix(it.sql.text, "ROLLBACK TO SAVEPOINT "))
	default:
		res = x.tx.Exec(it.sql.text, it.sql.args...)
	}
	return res.RowsAffected, res.Error
}

func (x tpGormTx) read(ctx context.Context, it tpItem, text string) (int64, string, error) {
	var out struct {
		N int64
		S sql.NullString
	}
	err := x.tx.Model(&Order{}).Select("count(*) AS n, sum(amount) AS s").Where("user_id IN ?", it.users).Scan(&out).Error
	return out.N, out.S.String, err
}

func (x tpGormTx) commit() error   { return x.tx.Commit().Error }
func (x tpGormTx) rollback() error { return x.tx.Rollback().Error }

// tpSQLAuto runs statements on sqlhook's *sql.DB, outside a transaction.
type tpSQLAuto struct {
	db  *sql.DB
	err error
}

func (c *tpSQLClient) auto() tpShardTx { return &tpSQLAuto{db: c.db} }

func (x *tpSQLAuto) exec(ctx context.Context, it tpItem, text string) (int64, error) {
	res, err := x.db.ExecContext(ctx, text, it.sql.args...)
	if x.err = err; err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (x *tpSQLAuto) read(ctx context.Context, it tpItem, text string) (int64, string, error) {
	var n int64
	var sum sql.NullString
	x.err = x.db.QueryRowContext(ctx, text, it.sql.args...).Scan(&n, &sum)
	return n, sum.String, x.err
}

func (x *tpSQLAuto) commit() error   { return x.err }
func (x *tpSQLAuto) rollback() error { return nil }

// tpGormAuto runs GORM calls outside a transaction (gormplugin begins a
// two-phase one for a write over several data sources).
type tpGormAuto struct {
	db  *gorm.DB
	err error
}

func (c *tpGormClient) auto() tpShardTx { return &tpGormAuto{db: c.db} }

func (x *tpGormAuto) exec(ctx context.Context, it tpItem, text string) (int64, error) {
	res := it.gorm(x.db.WithContext(ctx))
	x.err = res.Error
	return res.RowsAffected, res.Error
}

func (x *tpGormAuto) read(ctx context.Context, it tpItem, text string) (int64, string, error) {
	n, sum, err := tpGormTx{x.db.WithContext(ctx)}.read(ctx, it, text)
	x.err = err
	return n, sum, err
}

func (x *tpGormAuto) commit() error   { return x.err }
func (x *tpGormAuto) rollback() error { return nil }

// tpGormCallbackTx runs a transaction through db.Transaction: the callback
// runs on a goroutine of its own and takes the statements one at a time;
// commit makes it return nil, rollback an error, and both wait for what
// Transaction returns.
type tpGormCallbackTx struct {
	reqs chan func(tx *gorm.DB)
	end  chan bool // true: commit
	done chan error
}

var errTPRollback = errors.New("difftest: rolled back by the callback")

func newTPGormCallbackTx(db *gorm.DB, opts []*sql.TxOptions) *tpGormCallbackTx {
	x := &tpGormCallbackTx{reqs: make(chan func(*gorm.DB)), end: make(chan bool), done: make(chan error, 1)}
	go func() {
		x.done <- db.Transaction(func(tx *gorm.DB) error {
			for {
				select {
				case f := <-x.reqs:
					f(tx)
				case commit := <-x.end:
					if commit {
						return nil
					}
					return errTPRollback
				}
			}
		}, opts...)
	}()
	return x
}

// run runs f inside the callback; false when Transaction has already
// returned (its Begin failed).
func (x *tpGormCallbackTx) run(f func(tx *gorm.DB)) error {
	ran := make(chan struct{})
	select {
	case x.reqs <- func(tx *gorm.DB) { f(tx); close(ran) }:
		<-ran
		return nil
	case err := <-x.done:
		x.done <- err
		return fmt.Errorf("db.Transaction returned before its statements: %w", err)
	}
}

func (x *tpGormCallbackTx) exec(ctx context.Context, it tpItem, text string) (n int64, err error) {
	if rerr := x.run(func(tx *gorm.DB) { n, err = tpGormTx{tx}.exec(ctx, it, text) }); rerr != nil {
		return 0, rerr
	}
	return n, err
}

func (x *tpGormCallbackTx) read(ctx context.Context, it tpItem, text string) (n int64, sum string, err error) {
	if rerr := x.run(func(tx *gorm.DB) { n, sum, err = tpGormTx{tx}.read(ctx, it, text) }); rerr != nil {
		return 0, "", rerr
	}
	return n, sum, err
}

func (x *tpGormCallbackTx) finish(commit bool) error {
	select {
	case x.end <- commit:
		return <-x.done
	case err := <-x.done:
		return err
	}
}

func (x *tpGormCallbackTx) commit() error { return x.finish(true) }

func (x *tpGormCallbackTx) rollback() error {
	if err := x.finish(false); err != nil && !errors.Is(err, errTPRollback) {
		return err
	}
	return nil
}
