package sqlhook

import (
	"log/slog"
	"time"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// Dialect is the SQL dialect statements are parsed and written in. Its
// String method gives "postgresql", "mysql", "sqlite" or "auto". (It is
// defined in an internal package shared with the dialect compilers, which
// cannot import sqlhook.)
type Dialect = ir.Dialect

const (
	// DialectAuto detects the dialect from the wrapped driver's package
	// (pgx and lib/pq: PostgreSQL; go-sql-driver/mysql: MySQL; modernc,
	// glebarez, ncruces and mattn SQLite drivers: SQLite), looking through
	// a wrapping driver that exposes the one it wraps (an Unwrap()
	// driver.Driver method or an embedded driver.Driver field). A driver
	// it cannot tell (otelsql's hides the wrapped one) needs WithDialect.
	DialectAuto = ir.DialectAuto
	PostgreSQL  = ir.PostgreSQL
	MySQL       = ir.MySQL
	SQLite      = ir.SQLite
)

// DefaultPlanCacheSize is the number of statements whose route plans are
// kept when WithPlanCacheSize is not given.
const DefaultPlanCacheSize = 4096

// Option configures Wrap, Open and OpenWith. Options follow the
// convention of every shardkey package (see keygen.Option): With...
// functions applied in order, a later one replacing an earlier one's value
// and a variadic one (WithRouterOptions) appending; a nil argument means
// the default; a bad value is the constructor's error, never the option's.
type Option func(*options)

type options struct {
	dialect       Dialect
	logger        *slog.Logger
	cacheSize     int
	scatter       bool
	multiSourceTx bool
	defaultDS     string
	binaryText    bool
	timeLoc       *time.Location
	routerOpts    []shardconf.RouterOption
	twoPhase      twoPhaseOptions
	observer      observe.Observer // WithObserver's, or nil
}

func buildOptions(opts []Option) options {
	o := options{cacheSize: DefaultPlanCacheSize}
	for _, f := range opts {
		f(&o)
	}
	// Recovery runs in the background, where nobody gets its errors:
	// without WithLogger it logs to slog.Default() (xa's default).
	o.twoPhase.logger = o.logger
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// WithRouterOptions passes options to the shardconf.NewRouter that Open
// builds from its Config, such as shardconf.WithKeyGenProps to give this
// process's worker-id to a rule file shared by every process. Wrap and
// OpenWith take a Router built by the caller and ignore it.
func WithRouterOptions(opts ...shardconf.RouterOption) Option {
	return func(o *options) { o.routerOpts = append(o.routerOpts, opts...) }
}

// WithDialect sets the SQL dialect instead of detecting it from the
// driver: for drivers sqlhook cannot recognise (a wrapper that hides the
// driver it wraps, such as otelsql's). A data source whose driver it
// recognises as another dialect is refused.
func WithDialect(d Dialect) Option { return func(o *options) { o.dialect = d } }

// WithLogger logs routing decisions at debug level, multi-source commit
// failures and two-phase commits left in doubt at error level, and what
// two-phase commit recovery does and fails to do. DSNs are never logged.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithPlanCacheSize bounds the route-plan cache to n statements (by SQL
// text); 0 disables caching.
func WithPlanCacheSize(n int) Option { return func(o *options) { o.cacheSize = max(n, 0) } }

// WithScatter lets a statement that has no condition on a sharding column
// run on every target its other conditions allow; SELECT results are
// merged and UPDATE/DELETE rows affected are summed. Without it such a
// statement is shardconf.ErrMissingShardingKey.
func WithScatter() Option { return func(o *options) { o.scatter = true } }

// WithMultiSourceTx lets a transaction span several data sources. Such a
// transaction is NOT atomic: each data source commits on its own, and a
// failure part-way is a *PartialCommitError naming what committed.
// WithTwoPhaseCommit, given as well, takes precedence: the transaction is
// then atomic or refused, never committed in part.
func WithMultiSourceTx() Option { return func(o *options) { o.multiSourceTx = true } }

// WithDefaultDataSource names the data source that receives statements
// referencing no logic table (SELECT 1, SET, SHOW, unsharded tables) when
// there are several; the default is the rules' defaultDataSourceName, else
// the first by name.
func WithDefaultDataSource(name string) Option { return func(o *options) { o.defaultDS = name } }

// WithTimeLocation says which time zone the driver writes time.Time
// arguments in, so that a time sharding value routes by the wall clock the
// database stores. go-sql-driver/mysql converts to its DSN parameter loc
// (UTC unless set); Open reads it from the DSN, Wrap and OpenWith assume
// UTC for MySQL. Drivers that send the value's own wall clock or an instant
// (pgx, SQLite) need nothing: pass time sharding values in one location.
func WithTimeLocation(loc *time.Location) Option { return func(o *options) { o.timeLoc = loc } }

// WithBinaryCollation declares that every text column a query over
// several targets orders (ORDER BY, MIN, MAX, HAVING's <, >), groups or
// makes distinct compares bytewise in the database: PostgreSQL's "C"
// collation, SQLite's BINARY, MySQL's *_bin (compared with trailing
// spaces insignificant, as their PAD SPACE does). Without it such a merge
// is ErrUnsupported, unless the ORDER BY term names a binary collation
// itself (COLLATE "C"): a case-insensitive or locale-aware collation
// orders text differently from its bytes, and merged rows would come
// back in an order no single table gives. On PostgreSQL grouping and
// DISTINCT need no declaration (see the package documentation).
func WithBinaryCollation() Option { return func(o *options) { o.binaryText = true } }

// WithObserver reports what the connector does to o (nil, the default,
// reports nothing and costs one nil check per statement):
//
//   - PlanCache on every lookup in the route-plan cache (none when
//     WithPlanCacheSize(0) turns the cache off), at Prepare and at each
//     execution;
//   - Refused, once, for a statement refused before anything ran: a
//     routing error (ErrUnsupported, ErrParse, a hint the statement cannot
//     use, a shardconf error such as ErrMissingShardingKey), a transaction
//     refusing a second data source (ErrCrossSourceTx,
//     ErrTwoPhaseUnavailable), a statement of an aborted transaction, a
//     session statement refused across data sources. A statement the
//     server fails is no refusal: its StatementEnd carries the error;
//   - StatementStart and StatementEnd around each statement naming a
//     logic or broadcast table (a statement passed through unrouted
//     reports nothing else): its database system, operation, logic tables,
//     targets, data
//     sources and fan-out (one target; all the data nodes of the table it
//     routes by; some). For a query StatementEnd comes when its rows are
//     closed (or at once on an error), with the number of rows the merge
//     of several targets returned; its duration runs from StatementStart;
//   - TargetStart and TargetEnd around each target's physical statement
//     (for a query: until its rows are open), under the context
//     StatementStart returned, and that target's context goes to the
//     driver, so a tracer's spans nest: statement, target, driver;
//   - TwoPhase when a read-write transaction that reached several data
//     sources under WithTwoPhaseCommit ends, with its outcome (committed,
//     rolled_back, or in_doubt for an ErrTxInDoubt), the data sources it
//     reached and how long the commit or rollback took; so does a write
//     that ran in a two-phase transaction of its own.
//
// o's methods run on the statement's goroutine, so they must be quick
// and safe for concurrent use (see package observe). A panic in one is
// recovered and logged to WithLogger's logger: that event is lost, the
// statement's result stands (and a query's connection goes back to the
// pool). A query whose context is cancelled before its rows are read to
// the end ends with the context's error. Package
// github.com/shardkey/shardkey/shardotel implements o on OpenTelemetry.
func WithObserver(o observe.Observer) Option { return func(o2 *options) { o2.observer = o } }
