package gormplugin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/keygen"
)

// Two-phase commit. With WithTwoPhaseCommit every transaction GORM begins
// on the *gorm.DB (db.Transaction, db.Begin, the default transaction of a
// write) is a transaction of the plugin's (twophase_tx.go) that holds one
// branch per data source it reaches, each on a connection of its own. A
// statement routed to a data source runs on that data source's branch;
// commit runs internal/xa's protocol over the branches. Without the option
// nothing here is used and a transaction stays on one data source.

// ErrTxInDoubt is matched (errors.Is) by the error of a commit that could
// not tell whether every data source committed: the commit decision may
// or may not be logged, and some branches may still be prepared. The
// recovery of the plugin (or of any process sharing its decision log)
// ends every branch the same way; the caller cannot know which yet. The
// error is a *TxInDoubtError.
var ErrTxInDoubt = xa.ErrInDoubt

// ErrTwoPhaseUnavailable is matched by the error of db.Use, or of a
// transaction, when a data source cannot take part in a two-phase commit
// (SQLite; PostgreSQL with max_prepared_transactions = 0). The error names
// the data source and the reason.
var ErrTwoPhaseUnavailable = xa.ErrUnavailable

// TxInDoubtError is the error of a commit whose outcome is in doubt: the
// transaction's GTRID, whether the commit decision was logged, and the
// data sources known committed and still pending.
type TxInDoubtError = xa.InDoubtError

// twoPhase is the configuration of WithTwoPhaseCommit and the state it
// builds in Initialize.
type twoPhase struct {
	on                bool
	logSource         string
	logTable          string
	timeout, interval time.Duration
	ids               keygen.IDGenerator
	hook              func(xa.Stage, string) error // tests: fault injection

	coord   *xa.Coordinator
	sources map[string]*tpSource // by the rules' data source name
	pools   map[string]*tpPool   // WithDataSources' pools, beginning 2PC transactions
}

// tpSource is a data source as a transaction's branches use it.
type tpSource struct {
	name    string
	dialect dialect.Name
	db      *sql.DB
	twoPC   bool // may take part in a two-phase commit with another source
}

// WithTwoPhaseCommit makes transactions spanning data sources atomic:
// writes and transactions may reach several data sources (a batch Create
// whose rows belong to several, db.Transaction touching several, an Update
// or Delete whose targets span them) and either every data source commits
// or none does, through a two-phase commit (PostgreSQL PREPARE
// TRANSACTION, MySQL/MariaDB XA). See the package documentation's "Two-
// phase commit" section for what it costs. Every data source must be
// given as a *sql.DB (or a *gorm.PreparedStmtDB over one) in
// WithDataSources. With one data source it changes nothing (local
// transactions are atomic there). Without it a write or transaction
// reaching a second data source is ErrUnsupported.
func WithTwoPhaseCommit() Option { return func(p *Plugin) { p.tp.on = true } }

// WithTwoPhaseLog sets where the commit decisions of WithTwoPhaseCommit
// are logged: a table (created when missing; default shardkey_xa_log) in
// one data source (default: the rules' first). Every process sharing the
// data sources must use the same log. "" keeps a default.
func WithTwoPhaseLog(dataSource, table string) Option {
	return func(p *Plugin) { p.tp.logSource, p.tp.logTable = dataSource, table }
}

// WithTwoPhaseRecovery sets how old an undecided transaction may get
// before recovery rolls it back (timeout; default 60s, at least 1s) and
// how often recovery runs (interval; default 30s, negative: only when
// db.Use runs it). 0 keeps a default.
func WithTwoPhaseRecovery(timeout, interval time.Duration) Option {
	return func(p *Plugin) { p.tp.timeout, p.tp.interval = timeout, interval }
}

// WithTwoPhaseKeyGenerator sets the generator of the ids that, with a
// random nonce, make transaction ids (GTRIDs) unique; nil is a SNOWFLAKE
// of the plugin's own. Any generator of positive ids will do (a
// transaction's age is the time written in its GTRID). The plugin does
// not close it.
func WithTwoPhaseKeyGenerator(g keygen.IDGenerator) Option {
	return func(p *Plugin) { p.tp.ids = g }
}

// withTwoPhaseHook sets the coordinator's test hook (fault injection).
func withTwoPhaseHook(h func(xa.Stage, string) error) Option {
	return func(p *Plugin) { p.tp.hook = h }
}

// errTwoPhaseOptions: a WithTwoPhase... setting without WithTwoPhaseCommit.
var errTwoPhaseOptions = errors.New("gormplugin: WithTwoPhaseLog, WithTwoPhaseRecovery and WithTwoPhaseKeyGenerator configure WithTwoPhaseCommit, which is not given")

// startTwoPhase builds and starts the coordinator (recovery runs now) and
// makes the *gorm.DB's pool and WithDataSources' pools begin two-phase
// transactions. It runs last in Initialize, so a refused db.Use leaves
// nothing running.
func (p *Plugin) startTwoPhase(db *gorm.DB) error {
	tp := &p.tp
	if !tp.on {
		if tp.logSource != "" || tp.logTable != "" || tp.timeout != 0 || tp.interval != 0 || tp.ids != nil {
			return errTwoPhaseOptions
		}
		return nil
	}
	if p.rules == nil {
		return errors.New("gormplugin: WithTwoPhaseCommit needs WithRules")
	}
	if len(p.rules.DataSources()) <= 1 {
		return nil // one data source: its local transactions are atomic
	}
	home := p.txDataSource(db)
	if home == "" {
		return fmt.Errorf("%w: WithTwoPhaseCommit: the *gorm.DB's own connection pool is none of WithDataSources' pools; open it on one of them", ErrUnsupported)
	}
	if err := makeDoneTx(); err != nil {
		return err
	}
	if tp.coord == nil { // GORM initializes a plugin again for each *gorm.DB of one Config
		if err := p.newCoordinator(db); err != nil {
			return err
		}
	}
	if err := p.registerTwoPhase(db); err != nil {
		return err
	}
	if _, ok := db.Config.ConnPool.(*tpPool); !ok {
		own := &tpPool{ConnPool: db.Config.ConnPool, p: p, home: home}
		if db.Statement.ConnPool == db.Config.ConnPool {
			db.Statement.ConnPool = own
		}
		db.Config.ConnPool = own
	}
	return nil
}

// registerTwoPhase: a session made with PrepareStmt wraps the *gorm.DB's
// pool (a tpPool) in a PreparedStmtDB, which begins only transactions of
// its own kind; GORM's default transaction would then be skipped silently
// (gorm:begin_transaction ignores gorm.ErrInvalidTransaction). Before it
// begins, the statement is put back on the tpPool: its transaction is a
// two-phase one, its statements unprepared.
func (p *Plugin) registerTwoPhase(db *gorm.DB) error {
	unwrap := func(db *gorm.DB) {
		if ps, ok := db.Statement.ConnPool.(*gorm.PreparedStmtDB); ok && ps != nil {
			if tp, ok := ps.ConnPool.(*tpPool); ok {
				db.Statement.ConnPool = tp
			}
		}
	}
	cb := db.Callback()
	for _, err := range []error{
		cb.Create().Before("gorm:begin_transaction").Register("shardkey:two_phase_pool", unwrap),
		cb.Update().Before("gorm:begin_transaction").Register("shardkey:two_phase_pool", unwrap),
		cb.Delete().Before("gorm:begin_transaction").Register("shardkey:two_phase_pool", unwrap),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// newCoordinator builds the coordinator over every data source's *sql.DB
// and starts it.
func (p *Plugin) newCoordinator(db *gorm.DB) error {
	tp := &p.tp
	tp.sources, tp.pools = map[string]*tpSource{}, map[string]*tpPool{}
	var sources []xa.Source
	for _, name := range p.rules.DataSources() {
		pool := p.pools[name]
		sqlDB, err := sqlDBOf(pool)
		if err != nil {
			return fmt.Errorf("%w: WithTwoPhaseCommit: data source %s: %w", ErrUnsupported, name, err)
		}
		d := dialect.FromDB(sqlDB)
		if d == "" && unwrapPool(pool) == unwrapPool(db.Config.ConnPool) {
			d, _ = dialect.Parse(db.Dialector.Name())
		}
		if d == "" {
			return fmt.Errorf("%w: WithTwoPhaseCommit: the driver of data source %s is not one shardkey recognises (PostgreSQL, MySQL/MariaDB, SQLite)", ErrUnsupported, name)
		}
		sources = append(sources, xa.Source{Name: name, Dialect: d, DB: sqlDB})
		tp.sources[name] = &tpSource{name: name, dialect: d, db: sqlDB}
		tp.pools[name] = &tpPool{ConnPool: pool, p: p, home: name}
	}
	if !slices.ContainsFunc(sources, func(s xa.Source) bool { return s.Dialect == dialect.Postgres || s.Dialect == dialect.MySQL }) {
		s := sources[0]
		return fmt.Errorf("gormplugin: WithTwoPhaseCommit: %w", &xa.UnavailableError{Source: s.Name, Dialect: s.Dialect,
			Reason: "no data source of the rules can take part in a two-phase commit (PostgreSQL or MySQL/MariaDB)"})
	}
	coord, err := xa.New(xa.Config{
		LogSource: tp.logSource, LogTable: tp.logTable,
		Timeout: tp.timeout, Interval: tp.interval,
		IDs: tp.ids, Logger: p.logger, Hook: tp.hook,
	}, sources)
	if err != nil {
		return fmt.Errorf("gormplugin: WithTwoPhaseCommit: %w", err)
	}
	ctx := db.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if err := coord.Start(ctx); err != nil {
		_ = coord.Close()
		return fmt.Errorf("gormplugin: WithTwoPhaseCommit: %w", err)
	}
	for name, s := range tp.sources {
		s.twoPC = coord.CanTwoPhase(name)
	}
	tp.coord = coord
	return nil
}

// sqlDBOf is the *sql.DB behind a data source's pool: the pool itself, a
// PreparedStmtDB's, or a readwrite-splitting group's write pool's.
func sqlDBOf(pool gorm.ConnPool) (*sql.DB, error) {
	for range 4 {
		switch x := pool.(type) {
		case *sql.DB:
			return x, nil
		case *gorm.PreparedStmtDB:
			pool = x.ConnPool
		case *rwTxPool:
			pool = x.write
		case *rwConnPoolTxPool:
			pool = x.write
		case *rwPool:
			pool = x.write
		case *tpPool:
			pool = x.ConnPool
		default:
			return nil, fmt.Errorf("its pool is a %T; give a *sql.DB in WithDataSources (a two-phase branch needs connections of its own)", pool)
		}
	}
	return nil, errors.New("its pool wraps too many pools")
}

// Close stops what the plugin runs in the background: the two-phase
// coordinator's recovery timer (WithTwoPhaseCommit), and the key generator
// New built from props when it runs one (a CACHED_UID's filler). A
// generator given with WithGenerator, the rules' generators and the
// connection pools stay their owners'. Call it after the last statement,
// before the pools close: a transaction begun after it fails, one begun
// before and committed after it is rolled back on every data source, and
// a commit left in doubt earlier is settled by the recovery of the next
// process using the decision log.
func (p *Plugin) Close() error {
	var errs []error
	if c := p.tp.coord; c != nil {
		errs = append(errs, c.Close()) // idempotent; NewTx is then xa.ErrClosed
	}
	if p.ownGen {
		p.ownGen = false
		if c, ok := p.gen.(interface{ Close() error }); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// targetPool is the pool one target of a statement over several data
// sources runs on: a read outside a transaction (multiSource) on its data
// source's pool, anything else on its data source's branch of the
// statement's two-phase transaction. A write over several data sources
// never runs outside one.
func (p *Plugin) targetPool(db *gorm.DB, ds string, multiSource bool) (gorm.ConnPool, error) {
	if multiSource || db.DryRun {
		return p.poolFor(db, ds)
	}
	if tx := tpOf(db.Statement.ConnPool); tx != nil {
		return tx.use(db.Statement.Context, ds)
	}
	return nil, crossSource(fmt.Errorf("%w: a statement over several data sources outside a two-phase transaction", ErrUnsupported))
}

// failedPartWay: a write over several tables failed after writing some
// rows. In a two-phase transaction that cannot commit any more (unless
// rolled back to a savepoint set before the write): committing would keep
// half a statement.
func (p *Plugin) failedPartWay(db *gorm.DB, r routed, written int64) {
	if tx := tpOf(db.Statement.ConnPool); tx != nil && written > 0 {
		tx.fail(fmt.Errorf("gormplugin: a write to %s failed after writing %d rows in other tables: %w", r.logic, written, db.Error))
	}
}

// logRoom: a commit over several branches writes its decision on a
// connection of the log data source's pool besides the branch this
// transaction holds there. A pool limited to one connection would make
// the commit wait out the timeout; it is refused at once instead.
func (p *Plugin) logRoom(bs []*tpBranch) error {
	if len(bs) < 2 {
		return nil
	}
	name := p.tp.logSource
	if name == "" {
		name = p.rules.DataSources()[0]
	}
	for _, b := range bs {
		if b.src.name == name && b.src.db.Stats().MaxOpenConnections == 1 {
			return fmt.Errorf("%w: the pool of data source %s, which holds the two-phase decision log, allows one connection, which the transaction's branch holds: the decision needs another (SetMaxOpenConns(2) or more); rolled back", ErrTwoPhaseUnavailable, name)
		}
	}
	return nil
}

// unroutedHome points a statement the plugin does not route (an
// unsharded table, raw SQL) in a two-phase transaction at the branch of
// the *gorm.DB's own data source, where such tables live, whichever data
// source the statement that issued it (a hook's parent) was routed to.
func (p *Plugin) unroutedHome(db *gorm.DB) {
	tx := tpOf(db.Statement.ConnPool)
	if tx == nil || db.Error != nil {
		return
	}
	home := p.txDataSource(db)
	if home == "" {
		return
	}
	c, err := tx.use(db.Statement.Context, home)
	if err != nil {
		p.fail(db, err)
		return
	}
	db.Statement.ConnPool = c
}

// txTimeout is the coordinator's timeout (WithTwoPhaseRecovery's, or
// xa's default).
func (tp *twoPhase) txTimeout() time.Duration {
	if tp.timeout > 0 {
		return tp.timeout
	}
	return xa.DefaultTimeout
}
