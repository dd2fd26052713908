package sqlhook

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// conn is one sqlhook connection: a connection to the default data source,
// opened by Connect, and one to each other data source a statement has
// reached, kept for the conn's life (a transaction and session state live
// on them). database/sql uses a conn from one goroutine at a time, so conn
// needs no lock.
//
// database/sql sees a conn through a mirror type (mirror_gen.go) with the
// optional interfaces of the default data source's conn; those methods are
// on the conn* provider types below, so that *conn itself has only the
// methods every mirror type has.
type conn struct {
	cn    *connector
	def   driver.Conn            // the default data source's conn
	conns map[string]driver.Conn // every open conn by data source, def included
	tx    *tx                    // the transaction in progress, or nil
	// session: the session statements run on every data source conn
	// (several data sources only), replayed on each conn opened later.
	session []sessionEntry
	// bad: a data source's conn reported driver.ErrBadConn in the middle
	// of a statement, where the error could not be passed on as is (it
	// would make database/sql run the statement again). IsValid then
	// retires the conn, and ResetSession replaces its data source conns
	// with a fresh one.
	bad bool
	// gen counts reconnects: a statement's underlying statements belong
	// to the conns of one generation.
	gen int
}

// sqlhookConn finds the *conn inside any mirror type (see Unwrap).
func (c *conn) sqlhookConn() *conn { return c }

// Prepare returns a statement that is routed when it runs.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext returns a statement that is routed when it runs: where
// a statement naming a logic table goes depends on its arguments, so it
// is only planned here (a statement the router cannot read fails now).
// A statement naming none is prepared on the default data source at
// once, so that the driver reports its errors at Prepare as it would
// without sqlhook.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s := &stmt{c: c, query: query}
	if c.cn.h == nil {
		return s, nil
	}
	p, err := c.cn.h.plan(ctx, query)
	if err != nil {
		return nil, c.cn.refuse(ctx, &StatementError{SQL: query, Err: err})
	}
	if !p.Passthrough {
		return s, nil
	}
	r, err := c.cn.route(ctx, query, nil)
	if err != nil || !r.passthrough || len(r.units) != 1 {
		return s, nil // routing fails again, and reports, at Exec
	}
	u := r.units[0]
	dc, ok := c.conns[u.ds]
	if !ok {
		return s, nil
	}
	if _, err := s.underlying(ctx, u.ds, dc, u.sql); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes every data source's conn.
func (c *conn) Close() error {
	var errs []error
	for _, name := range ir.SortedKeys(c.conns) {
		if err := c.conns[name].Close(); err != nil {
			errs = append(errs, fmt.Errorf("sqlhook: close conn to data source %s: %w", name, err))
		}
	}
	c.conns = nil
	return errors.Join(errs...)
}

// Begin starts a transaction with default options.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction lazily: each data source begins its own
// when a statement of the transaction first reaches it. With options
// other than the defaults the default data source begins at once, so
// that options its driver refuses fail here; it counts as reached only
// when a statement goes there. (A MySQL XA branch of two-phase commit is
// never begun early: sqlhook checks the isolation level it will set.)
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.tx != nil {
		return nil, errors.New("sqlhook: a transaction is already in progress on this conn")
	}
	if c.bad {
		// Retired (a failed two-phase commit may have left a branch open
		// on one of its conns): database/sql begins on another conn.
		return nil, driver.ErrBadConn
	}
	if err := checkTxOptions(c.def, opts); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &tx{c: c, opts: opts, begun: map[string]driver.Tx{}, reached: map[string]bool{}, ctx: context.WithoutCancel(ctx)}
	switch {
	case opts == driver.TxOptions{}:
	case t.beginsXA():
		// An XA branch begun here might never be reached, and one XA
		// transaction cannot roll back a branch and commit the others:
		// check the options sqlhook itself will send instead.
		if opts.Isolation != 0 {
			if _, err := mysqlIsolation(opts.Isolation); err != nil {
				return nil, err
			}
		}
	default:
		// Options the driver may not support: begin on the default data
		// source now, so that BeginTx fails as the driver's would.
		if err := t.begin(ctx, c.cn.defaultDS, c.def); err != nil {
			return nil, err
		}
	}
	c.tx = t
	return t, nil
}

// dsConn returns the conn to data source ds, opening it with ctx on first
// use.
func (c *conn) dsConn(ctx context.Context, ds string) (driver.Conn, error) {
	if dc, ok := c.conns[ds]; ok {
		return dc, nil
	}
	if c.conns == nil {
		return nil, driver.ErrBadConn // closed
	}
	src, ok := c.cn.sources[ds]
	if !ok {
		return nil, fmt.Errorf("%w: unknown data source %q (have %s)", ErrDataSource, ds, strings.Join(c.cn.names, ", "))
	}
	dc, err := src.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlhook: connect to data source %s: %w", ds, err)
	}
	if err := c.replaySession(ctx, ds, dc); err != nil {
		dc.Close()
		return nil, err
	}
	c.conns[ds] = dc
	return dc, nil
}

// eachConn calls f with every open data source conn, in data source name
// order, until f returns false. It allocates nothing in the common case of
// one conn (database/sql calls IsValid and ResetSession on every checkout).
func (c *conn) eachConn(f func(driver.Conn) bool) {
	if len(c.conns) == 1 {
		f(c.def)
		return
	}
	for _, name := range ir.SortedKeys(c.conns) {
		if !f(c.conns[name]) {
			return
		}
	}
}

func (c *conn) exec(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.cn.route(ctx, query, args)
	if err != nil {
		return nil, c.cn.refuse(ctx, err)
	}
	return c.execRouted(ctx, query, r, nil)
}

func (c *conn) query(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.cn.route(ctx, query, args)
	if err != nil {
		return nil, c.cn.refuse(ctx, err)
	}
	return c.queryRouted(ctx, query, r, nil)
}

// Providers of the optional driver.Conn interfaces, embedded by the mirror
// types of mirror_gen.go.
type (
	connPinger            struct{ c *conn }
	connExecer            struct{ c *conn }
	connExecerContext     struct{ c *conn }
	connQueryer           struct{ c *conn }
	connQueryerContext    struct{ c *conn }
	connSessionResetter   struct{ c *conn }
	connValidator         struct{ c *conn }
	connNamedValueChecker struct{ c *conn }
)

// Ping pings every open data source conn that can be pinged.
func (p connPinger) Ping(ctx context.Context) error {
	var err error
	p.c.eachConn(func(dc driver.Conn) bool {
		if pg, ok := dc.(driver.Pinger); ok {
			err = pg.Ping(ctx)
		}
		return err == nil
	})
	return err
}

// Exec routes and runs a statement (drivers without ExecerContext).
func (p connExecer) Exec(query string, args []driver.Value) (driver.Result, error) {
	return p.c.exec(context.Background(), query, valuesToNamed(args))
}

// ExecContext routes and runs a statement.
func (p connExecerContext) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return p.c.exec(ctx, query, args)
}

// Query routes and runs a query (drivers without QueryerContext).
func (p connQueryer) Query(query string, args []driver.Value) (driver.Rows, error) {
	return p.c.query(context.Background(), query, valuesToNamed(args))
}

// QueryContext routes and runs a query.
func (p connQueryerContext) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return p.c.query(ctx, query, args)
}

// ResetSession resets every open data source conn, stopping at the first
// error.
func (p connSessionResetter) ResetSession(ctx context.Context) error {
	if p.c.bad || len(p.c.session) > 0 {
		// A driver may or may not reset session state here, so the
		// record of what every data source conn has could no longer be
		// trusted: start again from a fresh default conn. (Refusing
		// with driver.ErrBadConn would retire the conn, but a caller
		// handed only such conns, as under MaxOpenConns, would get the
		// error once database/sql's retries run out.)
		return p.c.reconnect(ctx)
	}
	var err error
	p.c.eachConn(func(dc driver.Conn) bool {
		if sr, ok := dc.(driver.SessionResetter); ok {
			err = sr.ResetSession(ctx)
		}
		return err == nil
	})
	return err
}

// reconnect closes every data source conn and opens a new one to the
// default data source, leaving no session state; statements prepared
// on the old conns are prepared again on use (gen).
func (c *conn) reconnect(ctx context.Context) error {
	if c.tx != nil || c.conns == nil {
		return driver.ErrBadConn
	}
	for _, dc := range c.conns {
		dc.Close() // the conn is being replaced; its close error changes nothing
	}
	c.conns, c.session, c.bad = map[string]driver.Conn{}, nil, false
	c.gen++
	dc, err := c.cn.sources[c.cn.defaultDS].Connect(ctx)
	if err != nil {
		c.bad = true
		return fmt.Errorf("%w: sqlhook: reconnect to data source %s: %v", driver.ErrBadConn, c.cn.defaultDS, err)
	}
	c.def, c.conns[c.cn.defaultDS] = dc, dc
	return nil
}

// IsValid reports whether every open data source conn is valid. A conn
// carrying session state is not (see ResetSession): database/sql closes
// it as it goes back to the pool.
func (p connValidator) IsValid() bool {
	valid := !p.c.bad && len(p.c.session) == 0
	if valid {
		p.c.eachConn(func(dc driver.Conn) bool {
			if v, ok := dc.(driver.Validator); ok {
				valid = v.IsValid()
			}
			return valid
		})
	}
	return valid
}

// CheckNamedValue converts arguments as the default data source's driver
// does.
func (p connNamedValueChecker) CheckNamedValue(nv *driver.NamedValue) error {
	return p.c.def.(driver.NamedValueChecker).CheckNamedValue(nv)
}

// Unwrap returns the default data source's driver.Conn from inside a
// sqlhook conn, the value (*sql.Conn).Raw passes to its function:
//
//	err := sqlConn.Raw(func(dc any) error {
//		pc, err := sqlhook.Unwrap(dc)
//		if err != nil {
//			return err
//		}
//		_, err = pc.(*stdlib.Conn).Conn().CopyFrom(ctx, ...)
//		return err
//	})
//
// Statements sent on it are not routed. During a transaction of the
// sqlhook conn, the data source's transaction is begun first (it begins
// lazily), so that what is sent on it belongs to the transaction.
func Unwrap(driverConn any) (driver.Conn, error) {
	c, err := hookConn(driverConn)
	if err != nil {
		return nil, err
	}
	if c.conns == nil {
		return nil, driver.ErrBadConn
	}
	return c.rawConn(context.Background(), c.cn.defaultDS)
}

// UnwrapDataSource is Unwrap for the data source called name, whose
// connection is opened with ctx if no statement has reached it yet.
func UnwrapDataSource(ctx context.Context, driverConn any, name string) (driver.Conn, error) {
	c, err := hookConn(driverConn)
	if err != nil {
		return nil, err
	}
	return c.rawConn(ctx, name)
}

// rawConn returns the conn to data source ds for statements sqlhook
// does not see. In a transaction it reaches ds as a statement would
// (refused across data sources without WithMultiSourceTx): a statement
// sent before the data source's transaction began would run outside
// it, and stay when the transaction rolls back.
func (c *conn) rawConn(ctx context.Context, ds string) (driver.Conn, error) {
	if c.tx == nil {
		return c.dsConn(ctx, ds)
	}
	if err := c.prepareUnits(ctx, "(raw connection of data source "+ds+")", []unit{{ds: ds}}); err != nil {
		return nil, err
	}
	return c.conns[ds], nil
}

func hookConn(driverConn any) (*conn, error) {
	hc, ok := driverConn.(interface{ sqlhookConn() *conn })
	if !ok {
		return nil, fmt.Errorf("sqlhook: %T is not a sqlhook connection", driverConn)
	}
	return hc.sqlhookConn(), nil
}

// valuesToNamed gives legacy arguments their ordinals.
func valuesToNamed(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, v := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nv
}

// namedToValues is the reverse for legacy driver methods, which take no
// names.
func namedToValues(args []driver.NamedValue) ([]driver.Value, error) {
	vs := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, fmt.Errorf("sqlhook: the driver does not support named parameters (%s)", a.Name)
		}
		vs[i] = a.Value
	}
	return vs, nil
}

// Running units. A statement's units run in unit order on the conns of
// their data sources; s is the caller's prepared statement, whose
// underlying statements are reused, or nil for a one-off statement.

// prepareUnits does everything that can fail before a unit runs, so that
// a refused statement sends nothing: it checks the data sources, admits
// the statement to the transaction (admitUnits), opens the conns and
// begins the transaction on each (openUnits).
func (c *conn) prepareUnits(ctx context.Context, query string, units []unit) error {
	if err := c.admitUnits(query, units); err != nil {
		return err
	}
	return c.openUnits(ctx, units)
}

// admitUnits is the part of prepareUnits that refuses a statement: it
// sends nothing.
func (c *conn) admitUnits(query string, units []unit) error {
	if len(units) == 0 {
		return &StatementError{SQL: query, Err: errors.New("sqlhook: the statement was routed to no data source")}
	}
	for _, u := range units {
		if _, ok := c.cn.sources[u.ds]; !ok {
			return &StatementError{SQL: query, Err: fmt.Errorf("%w: routed to unknown data source %q", ErrDataSource, u.ds)}
		}
	}
	if c.tx != nil {
		return c.tx.admit(query, units)
	}
	return nil
}

// openUnits is the part of prepareUnits that connects and begins: it
// fails as the databases do.
func (c *conn) openUnits(ctx context.Context, units []unit) error {
	for i, u := range units {
		if i > 0 && u.ds == units[i-1].ds {
			continue
		}
		dc, err := c.dsConn(ctx, u.ds)
		if err == nil && c.tx != nil {
			if err = c.tx.begin(ctx, u.ds, dc); err == nil {
				c.tx.reached[u.ds] = true
			}
		}
		if err != nil {
			c.joinFailed(err)
			return err
		}
	}
	return nil
}

// joinFailed records, in the transaction in progress, that a data source
// could not be reached or could not begin its part: the statement
// failed, as if the database had failed it (on PostgreSQL the
// transaction then fails until ROLLBACK TO), and if the conn was retired
// on the way (an XA START that failed) only Rollback is left.
func (c *conn) joinFailed(err error) {
	if c.tx == nil {
		return
	}
	if c.bad && c.tx.broken == nil {
		c.tx.broken = fmt.Errorf("a data source could not begin its part of the transaction: %v", err)
		return
	}
	c.statementFailed(err)
}

// execRouted runs the units of an Exec.
func (c *conn) execRouted(ctx context.Context, query string, r *routed, s *stmt) (driver.Result, error) {
	if res, handled, err := c.control(ctx, query, r, s, false); handled {
		if err != nil {
			return nil, err
		}
		return res.(driver.Result), nil
	}
	so := c.cn.observeStatement(r)
	res, err := c.execUnits(ctx, query, r, s, so)
	so.end(err, 0, false)
	return res, err
}

// execUnits runs the units of an Exec that control did not handle,
// reporting to so (nil without an observer).
func (c *conn) execUnits(ctx context.Context, query string, r *routed, s *stmt, so *statementObs) (driver.Result, error) {
	if c.implicitTwoPhase(r) {
		return inImplicitTx(ctx, c, func() (driver.Result, error) { return c.execUnits(ctx, query, r, s, so) })
	}
	if err := c.admitUnits(query, r.units); err != nil {
		return nil, c.cn.refuse(ctx, err)
	}
	ctx = so.start(ctx)
	if err := c.openUnits(ctx, r.units); err != nil {
		return nil, err
	}
	if len(r.units) == 1 {
		tctx := so.targetStart(ctx, 0)
		res, err := c.execUnit(tctx, r.units[0], s)
		so.targetEnd(tctx, 0, err)
		if err != nil {
			c.statementFailed(err)
		}
		return res, err
	}
	results := make([]driver.Result, 0, len(r.units))
	for i, u := range r.units {
		tctx := so.targetStart(ctx, i)
		res, err := c.execUnit(tctx, u, s)
		so.targetEnd(tctx, i, err)
		if err != nil {
			return nil, c.unitError("statement", i, r.units, err)
		}
		results = append(results, res)
	}
	if r.copies || r.txControl {
		return results[0], nil
	}
	return sumResult{results}, nil
}

// queryRouted runs the units of a Query and merges their rows.
func (c *conn) queryRouted(ctx context.Context, query string, r *routed, s *stmt) (driver.Rows, error) {
	if res, handled, err := c.control(ctx, query, r, s, true); handled {
		if err != nil {
			return nil, err
		}
		return res.(driver.Rows), nil
	}
	so := c.cn.observeStatement(r)
	if so == nil {
		return c.queryUnits(ctx, query, r, s, nil)
	}
	rows, err := c.queryUnits(ctx, query, r, s, so)
	if err != nil {
		so.end(err, 0, false)
		return nil, err
	}
	return so.rows(rows), nil // StatementEnd when they close
}

// queryUnits runs the units of a Query that control did not handle and
// merges their rows, reporting to so (nil without an observer).
func (c *conn) queryUnits(ctx context.Context, query string, r *routed, s *stmt, so *statementObs) (driver.Rows, error) {
	if c.implicitTwoPhase(r) {
		// A write's units are each read to the end (below), so its rows
		// outlive the transaction.
		return inImplicitTx(ctx, c, func() (driver.Rows, error) { return c.queryUnits(ctx, query, r, s, so) })
	}
	if err := c.admitUnits(query, r.units); err != nil {
		return nil, c.cn.refuse(ctx, err)
	}
	ctx = so.start(ctx)
	if err := c.openUnits(ctx, r.units); err != nil {
		return nil, err
	}
	if len(r.units) == 1 {
		tctx := so.targetStart(ctx, 0)
		rows, err := c.queryUnit(tctx, r.units[0], s)
		so.targetEnd(tctx, 0, err)
		if err != nil {
			c.statementFailed(err)
		}
		return rows, err
	}
	rows := make([]driver.Rows, 0, len(r.units))
	closeAll := func() {
		for _, rs := range rows {
			if rs != nil {
				rs.Close()
			}
		}
	}
	// open[ds]: the index in rows of the rows still open on ds's conn.
	// Most drivers (pgx, MySQL) cannot run a statement on a conn while a
	// result is open on it, so the earlier result is read into memory
	// first.
	open := map[string]int{}
	// A write returning rows (UPDATE ... RETURNING) runs on some drivers
	// only as its rows are read (SQLite), and may report a unit's error
	// with its rows (pgx): each unit is read to the end before the next
	// runs, so that a unit failing after others ran is a unit failure
	// (the transaction fails until ROLLBACK TO), never an error of the
	// merged rows after which Commit would keep the other units'
	// changes, nor a unit left unrun by an early Close.
	write := c.cn.h != nil && writesRows(c.cn.h.Dialect, query)
	for i, u := range r.units {
		if j, ok := open[u.ds]; ok {
			b, err := materialize(rows[j])
			if err != nil {
				rows[j] = nil // materialize closed it
				closeAll()
				if e := r.merge.refine(err); e != err {
					return nil, e
				}
				return nil, c.queryUnitError(i, r, write, err)
			}
			rows[j] = b
		}
		tctx := so.targetStart(ctx, i)
		rs, err := c.queryUnit(tctx, u, s)
		if err == nil && write {
			rs, err = materialize(rs)
		}
		so.targetEnd(tctx, i, err)
		if err != nil {
			closeAll()
			if e := r.merge.refine(err); e != err {
				return nil, e
			}
			return nil, c.queryUnitError(i, r, write, err)
		}
		open[u.ds] = len(rows)
		rows = append(rows, rs)
	}
	if r.copies || r.txControl {
		// One copy's rows go back; the others are read to the end, which
		// is what runs the statement on some drivers (SQLite).
		for j := 1; j < len(rows); j++ {
			if _, err := materialize(rows[j]); err != nil {
				rows[j] = nil
				closeAll()
				return nil, c.unitError("query", j, r.units, err)
			}
		}
		return rows[0], nil
	}
	spec := r.merge
	if spec.dialect == 0 && c.cn.h != nil {
		spec.dialect = ir.MergeDialect(c.cn.h.Dialect)
	}
	m, err := newMergedRows(rows, spec)
	if err != nil {
		closeAll()
		return nil, err
	}
	return m, nil
}

// writesRows reports whether query may write: it holds INSERT, UPDATE,
// DELETE, REPLACE or MERGE outside strings and comments (a data-modifying
// CTE included). A false positive only reads the rows early.
func writesRows(d Dialect, query string) bool {
	toks, err := sessLex(d, query)
	if err != nil {
		return true
	}
	for _, t := range toks {
		switch tokWordAt([]sessToken{t}, 0) {
		case "insert", "update", "delete", "replace", "merge":
			return true
		}
	}
	return false
}

// unitError reports the failure of unit i of a statement of several
// units. The first unit's error goes back as is: nothing has run. Later,
// earlier units have run and their changes stand (outside a transaction),
// so the error says so, and a driver.ErrBadConn is not passed on as such:
// database/sql would run the whole statement again on another conn.
func (c *conn) unitError(what string, i int, units []unit, err error) error {
	if i == 0 {
		c.statementFailed(err)
		return err
	}
	done := make([]string, i)
	for j := range i {
		done[j] = units[j].ds
	}
	after := "their changes stand"
	if c.tx != nil {
		after = "the transaction fails until ROLLBACK TO a savepoint or Rollback undoes them"
		c.tx.failed = fmt.Errorf("a statement ran on %d of its %d units and failed on data source %s: %v", i, len(units), units[i].ds, err)
	}
	verb := "%w"
	if errors.Is(err, driver.ErrBadConn) {
		c.bad = true
		verb = "%v"
	}
	return fmt.Errorf("sqlhook: %s unit %d of %d failed on data source %s; %d earlier unit(s) succeeded (on %s) and %s: "+verb,
		what, i+1, len(units), units[i].ds, i, strings.Join(done, ", "), after, err)
}

// queryUnitError is unitError for a query. A query that writes nothing
// changed nothing on the units that ran before the failing one, so a
// transaction goes on as after a failure on one data source
// (statementFailed) rather than failing until ROLLBACK TO.
func (c *conn) queryUnitError(i int, r *routed, write bool, err error) error {
	if write || r.copies || i == 0 {
		return c.unitError("query", i, r.units, err)
	}
	c.statementFailed(err)
	verb := "%w"
	if errors.Is(err, driver.ErrBadConn) {
		c.bad = true // the other data sources' conns are retired with it
		verb = "%v"
	}
	return fmt.Errorf("sqlhook: query unit %d of %d failed on data source %s: "+verb, i+1, len(r.units), r.units[i].ds, err)
}

// statementFailed notes a statement that failed in a transaction across
// data sources on PostgreSQL. PostgreSQL aborts the transaction of the
// data source it failed on until ROLLBACK TO; the whole transaction does
// the same, so that the other data sources cannot commit without it.
// (With two-phase commit it matters more: PREPARE TRANSACTION of an
// aborted transaction rolls it back without an error.)
func (c *conn) statementFailed(err error) {
	if c.tx != nil && c.tx.failed == nil && c.cn.spansSources() && c.cn.h != nil && c.cn.h.Dialect == PostgreSQL {
		c.tx.failed = fmt.Errorf("a statement failed: %v", err)
	}
}

func (c *conn) execUnit(ctx context.Context, u unit, s *stmt) (driver.Result, error) {
	dc := c.conns[u.ds]
	if s != nil {
		st, err := s.underlying(ctx, u.ds, dc, u.sql)
		if err != nil {
			return nil, err
		}
		return stmtExec(ctx, st, u.args)
	}
	return directExec(ctx, dc, u.sql, u.args)
}

func (c *conn) queryUnit(ctx context.Context, u unit, s *stmt) (driver.Rows, error) {
	dc := c.conns[u.ds]
	if s != nil {
		st, err := s.underlying(ctx, u.ds, dc, u.sql)
		if err != nil {
			return nil, err
		}
		return stmtQuery(ctx, st, u.args)
	}
	return directQuery(ctx, dc, u.sql, u.args)
}

// The pre-Go 1.8 optional interfaces, which database/sql still calls on a
// driver that lacks the Context ones; so does sqlhook.
//
//lint:ignore SA1019 a driver without the Context interfaces gets the pre-Go 1.8 calls, as database/sql makes them
type legacyExecer = driver.Execer

//lint:ignore SA1019 a driver without the Context interfaces gets the pre-Go 1.8 calls, as database/sql makes them
type legacyQueryer = driver.Queryer

// directExec runs a one-off statement on dc the way database/sql would:
// ExecerContext, else Execer, else (or on driver.ErrSkip) prepare, exec
// and close.
func directExec(ctx context.Context, dc driver.Conn, query string, args []driver.NamedValue) (driver.Result, error) {
	if ec, ok := dc.(driver.ExecerContext); ok {
		res, err := ec.ExecContext(ctx, query, args)
		if !errors.Is(err, driver.ErrSkip) {
			return res, err
		}
	} else if e, ok := dc.(legacyExecer); ok {
		vs, err := namedToValues(args)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := e.Exec(query, vs)
		if !errors.Is(err, driver.ErrSkip) {
			return res, err
		}
	}
	st, err := prepareOn(ctx, dc, query)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return stmtExec(ctx, st, args)
}

// directQuery is directExec for queries; rows of a statement it prepared
// close the statement when they close.
func directQuery(ctx context.Context, dc driver.Conn, query string, args []driver.NamedValue) (driver.Rows, error) {
	if qc, ok := dc.(driver.QueryerContext); ok {
		rows, err := qc.QueryContext(ctx, query, args)
		if !errors.Is(err, driver.ErrSkip) {
			return rows, err
		}
	} else if q, ok := dc.(legacyQueryer); ok {
		vs, err := namedToValues(args)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows, err := q.Query(query, vs)
		if !errors.Is(err, driver.ErrSkip) {
			return rows, err
		}
	}
	st, err := prepareOn(ctx, dc, query)
	if err != nil {
		return nil, err
	}
	rows, err := stmtQuery(ctx, st, args)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &stmtRows{Rows: rows, st: st}, nil
}

func prepareOn(ctx context.Context, dc driver.Conn, query string) (driver.Stmt, error) {
	if pc, ok := dc.(driver.ConnPrepareContext); ok {
		return pc.PrepareContext(ctx, query)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return dc.Prepare(query)
}

// checkNumInput does database/sql's argument count check, which it cannot
// do for sqlhook statements (NumInput -1); drivers rely on it.
func checkNumInput(st driver.Stmt, args []driver.NamedValue) error {
	if n := st.NumInput(); n >= 0 && n != len(args) {
		return fmt.Errorf("sqlhook: expected %d arguments, got %d", n, len(args))
	}
	return nil
}

func stmtExec(ctx context.Context, st driver.Stmt, args []driver.NamedValue) (driver.Result, error) {
	if err := checkNumInput(st, args); err != nil {
		return nil, err
	}
	if se, ok := st.(driver.StmtExecContext); ok {
		return se.ExecContext(ctx, args)
	}
	vs, err := namedToValues(args)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return st.Exec(vs) //lint:ignore SA1019 a driver without the Context interfaces gets the pre-Go 1.8 calls, as database/sql makes them
}

func stmtQuery(ctx context.Context, st driver.Stmt, args []driver.NamedValue) (driver.Rows, error) {
	if err := checkNumInput(st, args); err != nil {
		return nil, err
	}
	if sq, ok := st.(driver.StmtQueryContext); ok {
		return sq.QueryContext(ctx, args)
	}
	vs, err := namedToValues(args)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return st.Query(vs) //lint:ignore SA1019 a driver without the Context interfaces gets the pre-Go 1.8 calls, as database/sql makes them
}
