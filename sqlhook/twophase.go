package sqlhook

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// twoPhaseOptions is what the WithTwoPhase... options set.
type twoPhaseOptions struct {
	on                bool
	logSource         string
	logTable          string
	timeout, interval time.Duration
	ids               keygen.IDGenerator
	logger            *slog.Logger                 // WithLogger's, or nil
	hook              func(xa.Stage, string) error // tests only
}

// WithTwoPhaseCommit makes a transaction that reaches several data sources
// commit atomically, by two-phase commit (see the package documentation):
// every data source prepares, the decision is logged in the decision log,
// then every data source commits. A failure before the decision rolls
// every data source back; a failure after it is an error matching
// ErrTxInDoubt, and recovery finishes the commit. A transaction that
// reaches one data source commits as without it.
//
// Open and OpenWith then connect: they create the decision log table,
// check that every data source can prepare transactions (PostgreSQL's
// max_prepared_transactions > 0) and recover what an earlier process
// left prepared; recovery then runs in the background until the *sql.DB
// is closed, logging what it does and fails to do to WithLogger's logger,
// or slog.Default() without it. With a single data source it changes
// nothing; with SQLite data sources (which cannot prepare) it only
// refuses a transaction that would span them (ErrTwoPhaseUnavailable).
// WithMultiSourceTx is ignored beside it: a transaction is atomic or
// refused, never committed in part.
func WithTwoPhaseCommit() Option { return func(o *options) { o.twoPhase.on = true } }

// WithTwoPhaseLog names the data source holding the decision log of
// WithTwoPhaseCommit and the log's table; "" keeps the default (the first
// data source in the rules' order; shardkey_xa_log). Every process
// sharing data sources must name the same log; a log tags the
// transactions it decides, so two logs never touch each other's. It has
// no effect without WithTwoPhaseCommit.
func WithTwoPhaseLog(dataSource, table string) Option {
	return func(o *options) { o.twoPhase.logSource, o.twoPhase.logTable = dataSource, table }
}

// WithTwoPhaseRecovery sets, for WithTwoPhaseCommit, the timeout: how old
// a prepared transaction with no decision must be before recovery rolls
// it back; and how often recovery runs in the background. A transaction
// older than the timeout when its decision would be logged is rolled back
// instead; its age counts from Commit on PostgreSQL, and from its first
// statement on MySQL (XA START needs the id). Zero keeps a default (60s,
// 30s); a timeout under a second is refused; a negative interval runs
// recovery only at open. It has no effect without WithTwoPhaseCommit.
func WithTwoPhaseRecovery(timeout, interval time.Duration) Option {
	return func(o *options) { o.twoPhase.timeout, o.twoPhase.interval = timeout, interval }
}

// WithTwoPhaseKeyGenerator gives the IDs that name the transactions of
// WithTwoPhaseCommit (the default is a private SNOWFLAKE generator);
// sqlhook does not close it. It has no effect without WithTwoPhaseCommit.
func WithTwoPhaseKeyGenerator(g keygen.IDGenerator) Option {
	return func(o *options) { o.twoPhase.ids = g }
}

// withTwoPhaseHook sets the coordinator's fault-injection hook (tests
// only: see xa.Config.Hook).
func withTwoPhaseHook(h func(stage xa.Stage, gtrid string) error) Option {
	return func(o *options) { o.twoPhase.hook = h }
}

// twoPhase is the two-phase commit machinery of one connector: the
// coordinator and the pools it uses (one small *sql.DB per data source,
// for the decision log, recovery and capability checks).
type twoPhase struct {
	coord *xa.Coordinator
	dbs   []*sql.DB
	// logSource and logName: the decision log's data source and its
	// table's name (unqualified, lower case), which transactions may not
	// name (see refuseLogTable).
	logSource, logName string
}

// noCloseConnector hides a data source connector's Close from the pool
// opened over it: the data source's connector belongs to the sqlhook
// connector, which closes it after the pools.
type noCloseConnector struct{ driver.Connector }

// newTwoPhase builds the coordinator over the data sources, in the rules'
// order (the first holds the log by default). It does no I/O. It returns
// nil when no transaction can span data sources by two-phase commit: one
// data source only, or SQLite's (admit then refuses a second one).
func newTwoPhase(r *shardconf.Router, sources map[string]driver.Connector, d Dialect, o options) (*twoPhase, error) {
	order := r.DataSources()
	if !o.twoPhase.on || len(order) < 2 || d == SQLite {
		return nil, nil
	}
	tp := &twoPhase{}
	srcs := make([]xa.Source, 0, len(order))
	for _, ds := range order {
		db := sql.OpenDB(noCloseConnector{sources[ds]})
		db.SetMaxIdleConns(2)
		db.SetConnMaxIdleTime(time.Minute)
		tp.dbs = append(tp.dbs, db)
		srcs = append(srcs, xa.Source{Name: ds, Dialect: dialectName(d), DB: db})
	}
	logSource := o.twoPhase.logSource
	if logSource == "" {
		logSource = order[0]
	}
	tp.logSource = logSource
	tp.logName = strings.ToLower(cmp.Or(o.twoPhase.logTable, xa.DefaultLogTable))
	if i := strings.LastIndexByte(tp.logName, '.'); i >= 0 {
		tp.logName = tp.logName[i+1:]
	}
	coord, err := xa.New(xa.Config{
		LogSource: logSource, LogTable: o.twoPhase.logTable,
		Timeout: o.twoPhase.timeout, Interval: o.twoPhase.interval,
		IDs: o.twoPhase.ids, Logger: o.twoPhase.logger, Hook: o.twoPhase.hook,
	}, srcs)
	if err != nil {
		tp.closeDBs()
		return nil, fmt.Errorf("%w: WithTwoPhaseCommit: %w", ErrDataSource, err)
	}
	tp.coord = coord
	return tp, nil
}

// dialectName is internal/dialect's name of d.
func dialectName(d Dialect) dialect.Name {
	switch d {
	case PostgreSQL:
		return dialect.Postgres
	case MySQL:
		return dialect.MySQL
	case SQLite:
		return dialect.SQLite
	}
	return ""
}

// start creates the log table, checks the data sources and recovers;
// recovery then runs on its timer until close.
func (tp *twoPhase) start(ctx context.Context) error {
	if err := tp.coord.Start(ctx); err != nil {
		return fmt.Errorf("sqlhook: WithTwoPhaseCommit: %w", err)
	}
	return nil
}

// close stops recovery, then closes the pools.
func (tp *twoPhase) close() error {
	err := tp.coord.Close()
	return errors.Join(err, tp.closeDBs())
}

func (tp *twoPhase) closeDBs() error {
	var errs []error
	for _, db := range tp.dbs {
		errs = append(errs, db.Close())
	}
	return errors.Join(errs...)
}
