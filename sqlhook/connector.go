package sqlhook

//go:generate go run ./internal/mirrorgen

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// routeFunc is hook.routeContext (route with the statement's context, which
// key generators wait under); a field so that tests can route by hand.
type routeFunc func(ctx context.Context, query string, args []driver.NamedValue) (*routed, error)

// connector opens sqlhook conns: each holds one conn per data source it
// has used. It is shared by every conn of one *sql.DB.
type connector struct {
	h         *hook
	route     routeFunc
	opts      options
	sources   map[string]driver.Connector
	names     []string // data source names, sorted
	defaultDS string
	err       error // a Wrap that could not be built: Connect returns it
	// sessions: how statements touch session state, by text (several
	// data sources only; see session.go).
	sessions *sessClassCache
	// tp: two-phase commit (WithTwoPhaseCommit over several data sources
	// that can prepare), or nil.
	tp *twoPhase
}

// closingConnector is a connector that owns its data sources' connectors:
// sql.DB.Close calls Close, which closes those that are io.Closers.
type closingConnector struct{ *connector }

// Close stops two-phase commit recovery and closes its pools, then
// closes every data source connector that has a Close method.
func (c closingConnector) Close() error {
	var errs []error
	if c.tp != nil {
		errs = append(errs, c.tp.close())
	}
	for _, name := range c.names {
		if cl, ok := c.sources[name].(io.Closer); ok {
			if err := cl.Close(); err != nil {
				errs = append(errs, fmt.Errorf("sqlhook: close data source %s: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}

var (
	_ driver.Connector = (*connector)(nil)
	_ io.Closer        = closingConnector{}
)

// Wrap returns a connector routing statements by r across the shard tables
// of one data source, whose connections c opens:
//
//	db := sql.OpenDB(sqlhook.Wrap(c, router))
//
// The rules of r must name exactly one data source; for several use Open
// or OpenWith. Wrap reports no error itself: a problem (more data sources,
// an undetectable dialect, ...) is returned by every Connect, so the first
// query of the *sql.DB fails with it. If c has a Close method, so has the
// returned connector, and it closes c (sql.DB.Close calls it).
func Wrap(c driver.Connector, r *shardconf.Router, opts ...Option) driver.Connector {
	cn, err := wrap(c, r, opts)
	if err != nil {
		cn = &connector{err: err, sources: map[string]driver.Connector{}}
		if c != nil {
			// Keep c so that Driver and Close still reach it.
			cn.sources[""], cn.names = c, []string{""}
		}
	}
	if _, ok := c.(io.Closer); ok {
		return closingConnector{cn}
	}
	return cn
}

func wrap(c driver.Connector, r *shardconf.Router, opts []Option) (*connector, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: Wrap: nil connector", ErrDataSource)
	}
	if r == nil {
		return nil, fmt.Errorf("%w: Wrap: nil router", ErrDataSource)
	}
	names := r.DataSources()
	if len(names) != 1 {
		return nil, fmt.Errorf("%w: Wrap routes within one data source but the rules name %d (%s); use Open or OpenWith",
			ErrDataSource, len(names), strings.Join(names, ", "))
	}
	return newConnector(r, map[string]driver.Connector{names[0]: c}, buildOptions(opts))
}

// Open opens every data source of cfg (cfg.DataSources, each with a driver
// of pgx, mysql or sqlite and a DSN) and returns one *sql.DB routing across
// them by cfg's rules. Its drivers must be registered: import
// github.com/jackc/pgx/v5/stdlib, github.com/go-sql-driver/mysql or a
// SQLite driver registering "sqlite" (such as modernc.org/sqlite); and the
// sqlhook package of each dialect (see the package documentation). Like
// sql.Open, Open connects to nothing yet, unless WithTwoPhaseCommit: then
// Open and OpenWith prepare two-phase commit first (see it).
func Open(cfg *shardconf.Config, opts ...Option) (*sql.DB, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: Open: nil Config", ErrDataSource)
	}
	if len(cfg.DataSources) == 0 {
		return nil, fmt.Errorf("%w: the rules have no dataSources section; give each data source a driver and dsn, or use OpenWith", ErrDataSource)
	}
	o := buildOptions(opts)
	r, err := shardconf.NewRouter(cfg, o.routerOpts...)
	if err != nil {
		return nil, fmt.Errorf("sqlhook: %w", err)
	}
	sources := make(map[string]driver.Connector, len(cfg.DataSources))
	closeAll := func() {
		for _, c := range sources {
			if cl, ok := c.(io.Closer); ok {
				cl.Close()
			}
		}
	}
	for _, ds := range cfg.DataSources {
		c, err := sourceConnector(ds)
		if err != nil {
			closeAll()
			return nil, err
		}
		sources[ds.Name] = c
	}
	if o.timeLoc == nil {
		loc, err := mysqlLocation(cfg.DataSources)
		if err != nil {
			closeAll()
			return nil, err
		}
		o.timeLoc = loc
	}
	cn, err := newConnector(r, sources, o)
	if err != nil {
		closeAll()
		return nil, err
	}
	if err := cn.startTwoPhase(); err != nil {
		closeAll()
		return nil, err
	}
	return sql.OpenDB(closingConnector{cn}), nil
}

// mysqlLocation is the time zone go-sql-driver/mysql converts time.Time
// arguments to (its DSN parameter loc, UTC by default), which must be the
// same for every MySQL data source; nil when there is none.
func mysqlLocation(dss []shardconf.DataSource) (*time.Location, error) {
	var loc *time.Location
	for _, ds := range dss {
		if ds.Driver != "mysql" {
			continue
		}
		name := "UTC"
		if i := strings.LastIndexByte(ds.DSN, '?'); i >= 0 {
			q, err := url.ParseQuery(ds.DSN[i+1:])
			if err != nil {
				return nil, fmt.Errorf("%w: data source %s: DSN parameters: %v", ErrDataSource, ds.Name, err)
			}
			if v := q.Get("loc"); v != "" {
				name = v
			}
		}
		l, err := time.LoadLocation(name)
		if err != nil {
			return nil, fmt.Errorf("%w: data source %s: loc=%s: %v", ErrDataSource, ds.Name, name, err)
		}
		if loc != nil && loc.String() != l.String() {
			return nil, fmt.Errorf("%w: MySQL data sources use different time zones (loc=%s and loc=%s); time sharding values would route differently", ErrDataSource, loc, l)
		}
		loc = l
	}
	return loc, nil
}

// OpenWith returns one *sql.DB routing by r across the data sources whose
// connections sources open, by name; every data source r names needs a
// connector and there must be no others. Like sql.OpenDB, closing the
// *sql.DB closes the connectors that have a Close method.
func OpenWith(r *shardconf.Router, sources map[string]driver.Connector, opts ...Option) (*sql.DB, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: OpenWith: nil router", ErrDataSource)
	}
	cn, err := newConnector(r, sources, buildOptions(opts))
	if err != nil {
		return nil, err
	}
	if err := cn.startTwoPhase(); err != nil {
		return nil, err
	}
	return sql.OpenDB(closingConnector{cn}), nil
}

// newConnector checks sources against the rules, picks the default data
// source and the dialect, and compiles the hook.
func newConnector(r *shardconf.Router, sources map[string]driver.Connector, o options) (*connector, error) {
	names := ir.SortedKeys(sources)
	want := r.DataSources()
	for _, name := range want {
		if c, ok := sources[name]; !ok || c == nil {
			return nil, fmt.Errorf("%w: the rules name data source %s but no connector was given for it", ErrDataSource, name)
		}
	}
	for _, name := range names {
		if !slices.Contains(want, name) {
			return nil, fmt.Errorf("%w: a connector was given for %s, which the rules do not name (they name %s)",
				ErrDataSource, name, strings.Join(want, ", "))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: the rules name no data source", ErrDataSource)
	}
	defaultDS := names[0]
	if cfg := r.Config(); cfg != nil && cfg.DefaultDataSource != "" && sources[cfg.DefaultDataSource] != nil {
		defaultDS = cfg.DefaultDataSource // the rules' defaultDataSourceName
	}
	if o.defaultDS != "" {
		if _, ok := sources[o.defaultDS]; !ok {
			return nil, fmt.Errorf("%w: WithDefaultDataSource(%q): no such data source (have %s)",
				ErrDataSource, o.defaultDS, strings.Join(names, ", "))
		}
		defaultDS = o.defaultDS
	}
	d, err := pickDialect(o.dialect, sources, names, defaultDS)
	if err != nil {
		return nil, err
	}
	h, err := newHook(r, names, defaultDS, d, o)
	if err != nil {
		return nil, err
	}
	tp, err := newTwoPhase(r, sources, d, o)
	if err != nil {
		return nil, err
	}
	return &connector{h: h, route: h.routeContext, opts: o, sources: sources, names: names, defaultDS: defaultDS,
		sessions: &sessClassCache{size: o.cacheSize}, tp: tp}, nil
}

// startTwoPhase starts two-phase commit (log table, checks, recovery)
// when it is on; on failure its pools are closed (the caller closes the
// data sources' connectors).
func (cn *connector) startTwoPhase() error {
	if cn.tp == nil {
		return nil
	}
	if err := cn.tp.start(context.Background()); err != nil {
		cn.tp.close()
		return err
	}
	return nil
}

// pickDialect returns the dialect to parse in: the one asked for, else the
// default data source's. One statement is parsed once for all data
// sources, so each must be known to speak it: a driver recognised as
// another dialect is refused, and so is a driver that cannot be recognised
// unless WithDialect says what it speaks (never a guess from the others).
func pickDialect(asked Dialect, sources map[string]driver.Connector, names []string, defaultDS string) (Dialect, error) {
	d := asked
	if d == DialectAuto {
		var pkg string
		d, pkg = detectDialect(sources[defaultDS])
		if d == DialectAuto {
			return 0, fmt.Errorf("%w: cannot tell the SQL dialect of data source %s from its driver (package %q); give WithDialect",
				ErrDataSource, defaultDS, pkg)
		}
	}
	for _, name := range names {
		got, pkg := detectDialect(sources[name])
		switch {
		case got == DialectAuto && asked == DialectAuto:
			return 0, fmt.Errorf("%w: cannot tell the SQL dialect of data source %s from its driver (package %q); give WithDialect",
				ErrDataSource, name, pkg)
		case got == DialectAuto, got == d:
		case asked != DialectAuto:
			return 0, fmt.Errorf("%w: WithDialect(%v) names the %[2]v dialect, but data source %s's driver (package %q) speaks %v",
				ErrDataSource, asked, name, pkg, got)
		default:
			return 0, fmt.Errorf("%w: data source %s speaks %s but %s speaks %s; all data sources must share one dialect",
				ErrDataSource, name, got, defaultDS, d)
		}
	}
	return d, nil
}

// detectDialect tells the dialect of c's driver (internal/dialect: the one
// detection of the project, which looks through wrappers that expose the
// driver they wrap), and returns the driver's package path for messages.
func detectDialect(c driver.Connector) (Dialect, string) {
	drv := c.Driver()
	if drv == nil {
		return DialectAuto, ""
	}
	t := reflect.TypeOf(drv)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return fromName(dialect.FromDriver(drv)), t.PkgPath()
}

// fromName is sqlhook's Dialect for a dialect name, DialectAuto for "".
func fromName(n dialect.Name) Dialect {
	switch n {
	case dialect.Postgres:
		return PostgreSQL
	case dialect.MySQL:
		return MySQL
	case dialect.SQLite:
		return SQLite
	}
	return DialectAuto
}

// Connect opens the default data source's connection; the others are
// opened when a statement first reaches them.
func (cn *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if cn.err != nil {
		return nil, cn.err
	}
	dc, err := cn.sources[cn.defaultDS].Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &conn{cn: cn, def: dc, conns: map[string]driver.Conn{cn.defaultDS: dc}}
	return mirrors[optionalMask(dc)](c), nil
}

// Driver returns a driver.Driver that cannot open connections by name:
// sqlhook connections come from sql.OpenDB with a sqlhook connector.
func (cn *connector) Driver() driver.Driver { return hookDriver{} }

// hookDriver is what (*sql.DB).Driver returns for a sqlhook *sql.DB.
type hookDriver struct{}

// Open fails: a DSN cannot say how to route, so sqlhook is not registered
// under a name; use Wrap, Open or OpenWith.
func (hookDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("sqlhook: the driver cannot open connections by name; use sql.OpenDB(sqlhook.Wrap(...)), sqlhook.Open or sqlhook.OpenWith")
}

// driverImports says what registers each driver name Open accepts.
var driverImports = map[string]string{
	"pgx":    `_ "github.com/jackc/pgx/v5/stdlib"`,
	"mysql":  `_ "github.com/go-sql-driver/mysql"`,
	"sqlite": `a SQLite driver registering "sqlite", such as _ "modernc.org/sqlite"`,
}

// sourceConnector returns a connector for one data source of a rule file.
func sourceConnector(ds shardconf.DataSource) (driver.Connector, error) {
	if _, ok := driverImports[ds.Driver]; !ok {
		if ds.Driver == "" {
			return nil, fmt.Errorf("%w %s: no driver (want pgx, mysql or sqlite; entries written for Java need driver and dsn for Go)",
				ErrDataSource, ds.Name)
		}
		return nil, fmt.Errorf("%w %s: driver %q is not one of pgx, mysql, sqlite", ErrDataSource, ds.Name, ds.Driver)
	}
	if ds.DSN == "" {
		return nil, fmt.Errorf("%w %s: no dsn", ErrDataSource, ds.Name)
	}
	if err := dsnLexModeError(ds); err != nil {
		return nil, redact(err, ds)
	}
	return registeredConnector(ds, sql.Drivers())
}

// registeredConnector gets a connector the way sql.Open would, from the
// driver registered under ds.Driver; registered is sql.Drivers(). sqlhook
// imports no driver, so that programs link only the ones they use.
func registeredConnector(ds shardconf.DataSource, registered []string) (driver.Connector, error) {
	if !slices.Contains(registered, ds.Driver) {
		hint := driverImports[ds.Driver]
		if hint == "" {
			hint = "the driver's package"
		}
		return nil, fmt.Errorf("%w %s: no database/sql driver is registered as %q; import %s",
			ErrDataSource, ds.Name, ds.Driver, hint)
	}
	// database/sql exposes registered drivers only through a DB.
	db, err := sql.Open(ds.Driver, ds.DSN)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrDataSource, ds.Name, redact(err, ds))
	}
	drv := db.Driver()
	db.Close()
	if dc, ok := drv.(driver.DriverContext); ok {
		c, err := dc.OpenConnector(ds.DSN)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrDataSource, ds.Name, redact(err, ds))
		}
		return c, nil
	}
	return dsnConnector{drv: drv, dsn: ds.DSN}, nil
}

// dsnConnector opens conns of a driver without DriverContext, as
// database/sql does for sql.Open.
type dsnConnector struct {
	drv driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

// redactedError shows err with ds's DSN and password masked: a driver
// may quote the DSN it could not parse. Unwrap still gives err.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func redact(err error, ds shardconf.DataSource) error {
	red := ds.RedactedDSN()
	msg := strings.ReplaceAll(err.Error(), ds.DSN, red)
	if secret := dsnSecret(ds.DSN, red); secret != "" {
		msg = strings.ReplaceAll(msg, secret, "xxxxx")
	}
	return &redactedError{err: err, msg: msg}
}

// dsnSecret is the part of dsn that RedactedDSN replaced: the password.
func dsnSecret(dsn, redacted string) string {
	if dsn == redacted {
		return ""
	}
	p := 0
	for p < len(dsn) && p < len(redacted) && dsn[p] == redacted[p] {
		p++
	}
	s := 0
	for s < len(dsn)-p && s < len(redacted)-p && dsn[len(dsn)-1-s] == redacted[len(redacted)-1-s] {
		s++
	}
	return dsn[p : len(dsn)-s]
}
