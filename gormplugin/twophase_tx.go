package gormplugin

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/observe"
)

// A two-phase transaction (WithTwoPhaseCommit). GORM begins transactions
// on the statement's pool: the plugin's pools (tpPool) begin a tpTx, and
// give GORM a tpConn, the transaction seen from one data source. Routing
// points a statement at the tpConn of its data source (usePool, runOn);
// a statement the plugin does not route runs on the data source the
// transaction began on. A data source's branch begins at its first
// statement, on a connection of its own: PostgreSQL (and a read-only or
// SQLite transaction) with a local BEGIN, MySQL with XA START, since a
// local transaction cannot become an XA branch later.

// tpPool is a data source's pool (or the *gorm.DB's own) whose BeginTx
// begins a two-phase transaction; everything else is the pool's.
type tpPool struct {
	gorm.ConnPool
	p    *Plugin
	home string // the data source of statements the plugin does not route
}

// BeginTx implements gorm.ConnPoolBeginner.
func (tp *tpPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	x, err := tp.p.tp.coord.NewTx()
	if err != nil {
		return nil, fmt.Errorf("gormplugin: begin a two-phase transaction: %w", err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	t := &tpTx{p: tp.p, x: x, ctx: ctx, opts: opts, deadline: time.Now().Add(tp.p.tp.txTimeout())}
	return &tpConn{tx: t, ds: tp.home}, nil
}

// GetDBConn is the pool's *sql.DB (gorm.DB.DB).
func (tp *tpPool) GetDBConn() (*sql.DB, error) {
	if c, ok := tp.ConnPool.(gorm.GetDBConnector); ok {
		return c.GetDBConn()
	}
	if db, ok := tp.ConnPool.(*sql.DB); ok {
		return db, nil
	}
	return nil, gorm.ErrInvalidDB
}

// tpTx is a two-phase transaction: its branches, savepoints and state.
type tpTx struct {
	p    *Plugin
	x    *xa.Tx
	ctx  context.Context // BeginTx's: its values reach commit, its cancellation does not
	opts *sql.TxOptions

	mu       sync.Mutex
	branches []*tpBranch // in the order begun
	saves    []string    // savepoint names, oldest first
	// failed: a failure that leaves the transaction unfit to commit (a
	// PostgreSQL branch aborted by a failed statement, a write over
	// several tables failing part-way), unless undone by rolling back to
	// a savepoint older than it: failedAt is len(saves) when it happened.
	failed   error
	failedAt int
	done     bool
	// deadline: the transaction cannot commit after it (the coordinator
	// rolls it back), so no statement of it waits longer: a lock wait
	// across data sources (a deadlock neither database sees) ends there.
	deadline time.Time
	cancels  []context.CancelFunc // of queries' bounded contexts, called at the end
}

// bound is ctx ending at the transaction's deadline at the latest. The
// cancel func of a query's context is kept until the transaction ends:
// its rows are read after QueryContext returns.
func (t *tpTx) bound(ctx context.Context, query bool) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = t.ctx
	}
	if d, ok := ctx.Deadline(); ok && !d.After(t.deadline) {
		return ctx, func() {}
	}
	ctx, cancel := context.WithDeadline(ctx, t.deadline)
	if !query {
		return ctx, cancel
	}
	t.mu.Lock()
	t.cancels = append(t.cancels, cancel)
	t.mu.Unlock()
	return ctx, func() {}
}

// tpBranch is the transaction's work on one data source.
type tpBranch struct {
	src  *tpSource
	conn *sql.Conn
	tx   *sql.Tx // a local transaction on conn; nil for a MySQL XA branch
}

func (b *tpBranch) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if b.tx != nil {
		return b.tx.ExecContext(ctx, query, args...)
	}
	return b.conn.ExecContext(ctx, query, args...)
}

// tpConn is the transaction as a gorm.ConnPool on data source ds, and its
// gorm.TxCommitter: committing or rolling back through any data source's
// tpConn ends the whole transaction.
type tpConn struct {
	tx *tpTx
	ds string
}

// tpOf is the two-phase transaction a statement's pool belongs to: a
// tpConn, or GORM's PreparedStmtTX around one (a PrepareStmt session).
func tpOf(pool gorm.ConnPool) *tpTx {
	switch c := pool.(type) {
	case *tpConn:
		return c.tx
	case *gorm.PreparedStmtTX:
		if c != nil {
			if t, ok := c.Tx.(*tpConn); ok {
				return t.tx
			}
		}
	}
	return nil
}

// use returns the transaction's tpConn of data source ds, beginning its
// branch now so that a failure is the routed statement's error.
func (t *tpTx) use(ctx context.Context, ds string) (*tpConn, error) {
	if _, err := t.branch(ctx, ds); err != nil {
		return nil, err
	}
	return &tpConn{tx: t, ds: ds}, nil
}

// existing returns the branch of ds if it has begun.
func (t *tpTx) existing(ds string) *tpBranch {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range t.branches {
		if b.src.name == ds {
			return b
		}
	}
	return nil
}

// branch returns the branch of ds, beginning it at the first statement.
// A data source that cannot prepare (SQLite) is refused beside another.
func (t *tpTx) branch(ctx context.Context, ds string) (*tpBranch, error) {
	if ctx == nil {
		ctx = t.ctx
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, sql.ErrTxDone
	}
	for _, b := range t.branches {
		if b.src.name == ds {
			return b, nil
		}
	}
	src := t.p.tp.sources[ds]
	if src == nil {
		return nil, fmt.Errorf("%w: no data source %q", ErrUnsupported, ds)
	}
	if len(t.branches) > 0 {
		for _, s := range []*tpSource{src, t.branches[0].src} {
			if !s.twoPC {
				return nil, fmt.Errorf("%w: the transaction is on data source %s and this statement goes to %s: %w", ErrUnsupported,
					t.branches[0].src.name, ds, &xa.UnavailableError{Source: s.name, Dialect: s.dialect,
						Reason: "it has no two-phase commit; a transaction reaching it cannot reach another data source"})
			}
		}
	}
	b, err := t.begin(ctx, src)
	if err != nil {
		// The statement failed, as if the database had failed it: on
		// PostgreSQL that aborts the transaction, and committing the
		// other branches would keep work of a failed transaction.
		err = fmt.Errorf("gormplugin: begin the transaction's branch on data source %s: %w", ds, err)
		t.failLocked(err, len(t.saves))
		return nil, err
	}
	t.branches = append(t.branches, b)
	return b, nil
}

// begin opens a branch on src and sets on it the savepoints the
// transaction has so far, so that rolling back to one of them undoes the
// branch's work as well (GORM's nested transactions).
func (t *tpTx) begin(ctx context.Context, src *tpSource) (*tpBranch, error) {
	conn, err := src.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	b := &tpBranch{src: src, conn: conn}
	readOnly := t.opts != nil && t.opts.ReadOnly
	if src.dialect != dialect.MySQL || readOnly || !src.twoPC {
		// Not cancelled with ctx: database/sql would roll back the branch
		// on its own, behind the transaction's back.
		b.tx, err = conn.BeginTx(context.WithoutCancel(ctx), t.opts)
	} else {
		err = t.xaStart(ctx, b)
	}
	for i := 0; err == nil && i < len(t.saves); i++ {
		_, err = b.exec(ctx, "SAVEPOINT "+t.saves[i])
	}
	if err != nil {
		if b.tx != nil {
			_ = b.tx.Rollback()
		}
		discard(conn)
		return nil, err
	}
	return b, nil
}

// xaStart begins a MySQL branch: the isolation level first (it applies
// to the next transaction), then XA START.
func (t *tpTx) xaStart(ctx context.Context, b *tpBranch) error {
	if t.opts != nil && t.opts.Isolation != sql.LevelDefault {
		lvl, ok := mysqlIsolation[t.opts.Isolation]
		if !ok {
			return fmt.Errorf("%w: isolation level %v on MySQL", ErrUnsupported, t.opts.Isolation)
		}
		if _, err := b.conn.ExecContext(ctx, "SET TRANSACTION ISOLATION LEVEL "+lvl); err != nil {
			return err
		}
	}
	_, err := b.conn.ExecContext(ctx, t.x.XAStart(b.src.name))
	return err
}

var mysqlIsolation = map[sql.IsolationLevel]string{
	sql.LevelReadUncommitted: "READ UNCOMMITTED",
	sql.LevelReadCommitted:   "READ COMMITTED",
	sql.LevelRepeatableRead:  "REPEATABLE READ",
	sql.LevelSerializable:    "SERIALIZABLE",
}

// discard closes conn's session instead of returning it to the pool: it
// may be inside a transaction or an XA branch.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

// fail records a failure that forbids committing (see tpTx.failed).
func (t *tpTx) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failLocked(err, len(t.saves))
}

func (t *tpTx) failLocked(err error, at int) {
	if t.failed == nil || at < t.failedAt {
		t.failed, t.failedAt = err, at
	}
}

// noteErr: a failed statement aborts a PostgreSQL transaction, whose
// PREPARE TRANSACTION would then roll it back and report no error.
func (t *tpTx) noteErr(b *tpBranch, err error) {
	if err != nil && b.src.dialect == dialect.Postgres {
		t.fail(fmt.Errorf("a statement failed on data source %s, which aborts its PostgreSQL transaction: %w", b.src.name, err))
	}
}

// xaBranches gives the branches to the coordinator.
func xaBranches(bs []*tpBranch) []xa.Branch {
	out := make([]xa.Branch, len(bs))
	for i, b := range bs {
		out[i] = xa.Branch{Source: b.src.name, Exec: func(ctx context.Context, q string) error {
			_, err := b.exec(ctx, q)
			return err
		}}
		if b.tx != nil {
			out[i].Local = func(commit bool) error {
				if commit {
					return b.tx.Commit()
				}
				return b.tx.Rollback()
			}
		}
	}
	return out
}

// end takes the branches for Commit or Rollback; a second end is
// sql.ErrTxDone.
func (t *tpTx) end() ([]*tpBranch, error, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, nil, sql.ErrTxDone
	}
	t.done = true
	for _, cancel := range t.cancels {
		cancel()
	}
	t.cancels = nil
	return t.branches, t.failed, nil
}

// commit runs the coordinator's commit over the branches, or its rollback
// when a failure forbids committing.
func (t *tpTx) commit() error {
	bs, failed, err := t.end()
	if err != nil {
		return err
	}
	began := t.p.obsNow()
	ctx := context.WithoutCancel(t.ctx) // a cancelled ctx must not stop phase 2 half-way
	if failed != nil {
		rerr := t.x.Rollback(ctx, xaBranches(bs))
		release(bs, rerr != nil)
		t.report(len(bs), observe.OutcomeRolledBack, began)
		return errors.Join(fmt.Errorf("gormplugin: the transaction was rolled back instead of committed: %w", failed), rerr)
	}
	if err := t.p.logRoom(bs); err != nil {
		rerr := t.x.Rollback(ctx, xaBranches(bs))
		release(bs, rerr != nil)
		t.report(len(bs), observe.OutcomeRolledBack, began)
		return errors.Join(err, rerr)
	}
	err = t.x.Commit(ctx, xaBranches(bs))
	release(bs, err != nil)
	switch {
	case err == nil:
		t.report(len(bs), observe.OutcomeCommitted, began)
	case errors.Is(err, ErrTxInDoubt):
		t.report(len(bs), observe.OutcomeInDoubt, began)
	default: // failed before the decision was logged: every branch rolled back
		t.report(len(bs), observe.OutcomeRolledBack, began)
	}
	if err != nil {
		return fmt.Errorf("gormplugin: commit: %w", err)
	}
	return nil
}

func (t *tpTx) rollback() error {
	bs, _, err := t.end()
	if err != nil {
		return err
	}
	began := t.p.obsNow()
	err = t.x.Rollback(context.WithoutCancel(t.ctx), xaBranches(bs))
	release(bs, err != nil)
	// A branch that could not roll back now is rolled back by recovery.
	t.report(len(bs), observe.OutcomeRolledBack, began)
	if err != nil {
		return fmt.Errorf("gormplugin: rollback: %w", err)
	}
	return nil
}

// obsNow is the time an observed end began (zero without an observer).
func (p *Plugin) obsNow() time.Time {
	if p.obs == nil {
		return time.Time{}
	}
	return time.Now()
}

// report tells the observer how a transaction over several data sources
// (branches) ended; one branch commits in one phase and is not reported,
// nor is a read-only transaction (it writes nothing to make atomic).
func (t *tpTx) report(branches int, o observe.Outcome, began time.Time) {
	if t.p.obs == nil || branches < 2 || t.opts != nil && t.opts.ReadOnly {
		return
	}
	t.p.obs.TwoPhase(t.ctx, observe.TwoPhase{Component: component, Outcome: o, Branches: branches, Duration: time.Since(began)})
}

// release gives the branches' connections back, or closes their sessions
// when the transaction did not end cleanly (an XA branch may still be
// prepared there; the coordinator's recovery ends it from elsewhere).
func release(bs []*tpBranch, broken bool) {
	for _, b := range bs {
		if b.tx != nil {
			_ = b.tx.Rollback() // ends database/sql's Tx if the coordinator did not; the session is idle
		}
		if broken {
			discard(b.conn)
		} else {
			_ = b.conn.Close()
		}
	}
}

// savePoint sets a savepoint on every branch begun; a branch begun later
// gets it at its start (begin).
func (t *tpTx) savePoint(ctx context.Context, name string) error {
	if err := savepointName(name); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return sql.ErrTxDone
	}
	for _, b := range t.branches {
		if _, err := b.exec(ctx, "SAVEPOINT "+name); err != nil {
			return fmt.Errorf("gormplugin: savepoint %s on data source %s: %w", name, b.src.name, err)
		}
	}
	t.saves = append(t.saves, name)
	return nil
}

// savepointName refuses a savepoint name that is no plain identifier:
// GORM writes it into the SQL as it is, so "sp1; COMMIT" would commit a
// branch on its own.
func savepointName(name string) error {
	ok := name != "" && len(name) <= 63
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9'
	}
	if !ok {
		return fmt.Errorf("%w: savepoint name %q is not an identifier (letters, digits, _)", ErrUnsupported, name)
	}
	return nil
}

// rollbackTo rolls every branch back to the latest savepoint name. A
// failure recorded after that savepoint is undone with it; a branch that
// cannot roll back leaves the transaction unfit to commit.
func (t *tpTx) rollbackTo(ctx context.Context, name string) error {
	if err := savepointName(name); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return sql.ErrTxDone
	}
	i := len(t.saves) - 1
	for i >= 0 && t.saves[i] != name {
		i--
	}
	if i < 0 {
		return fmt.Errorf("gormplugin: no savepoint %s in the transaction", name)
	}
	for _, b := range t.branches {
		if _, err := b.exec(ctx, "ROLLBACK TO SAVEPOINT "+name); err != nil {
			err = fmt.Errorf("gormplugin: rollback to savepoint %s on data source %s: %w", name, b.src.name, err)
			t.failLocked(err, 0)
			return err
		}
	}
	t.saves = t.saves[:i+1] // later savepoints are gone, as in SQL
	if t.failed != nil && i < t.failedAt {
		t.failed = nil
	}
	return nil
}

// The gorm.ConnPool of one data source: the statement runs on its branch.

// refuse refuses a statement before it runs: transaction control (see
// refuseTxControl), and every statement once the transaction cannot
// commit (tpTx.failed): it would see, or build on, the part of a failed
// write that ran, which a database's own statement never leaves behind.
// RollbackTo a savepoint older than the failure makes it usable again.
func (c *tpConn) refuse(query string) error {
	c.tx.mu.Lock()
	failed := c.tx.failed
	c.tx.mu.Unlock()
	if failed != nil {
		return fmt.Errorf("gormplugin: the two-phase transaction cannot commit (roll it back, or back to a savepoint before the failure): %w", failed)
	}
	if src := c.tx.p.tp.sources[c.ds]; src != nil {
		return refuseTxControl(query, src.dialect)
	}
	return nil
}

func (c *tpConn) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if err := c.refuse(query); err != nil {
		return nil, err
	}
	ctx, cancel := c.tx.bound(ctx, false)
	defer cancel()
	b, err := c.tx.branch(ctx, c.ds)
	if err != nil {
		return nil, err
	}
	if b.tx != nil {
		return b.tx.PrepareContext(ctx, query)
	}
	return b.conn.PrepareContext(ctx, query)
}

func (c *tpConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := c.refuse(query); err != nil {
		return nil, err
	}
	ctx, cancel := c.tx.bound(ctx, false)
	defer cancel()
	b, err := c.tx.branch(ctx, c.ds)
	if err != nil {
		return nil, err
	}
	res, err := b.exec(ctx, query, args...)
	c.tx.noteErr(b, err)
	return res, err
}

func (c *tpConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := c.refuse(query); err != nil {
		return nil, err
	}
	ctx, _ = c.tx.bound(ctx, true)
	b, err := c.tx.branch(ctx, c.ds)
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	if b.tx != nil {
		rows, err = b.tx.QueryContext(ctx, query, args...)
	} else {
		rows, err = b.conn.QueryContext(ctx, query, args...)
	}
	c.tx.noteErr(b, err)
	return rows, err
}

// QueryRowContext: the row's error shows only at Scan, where the plugin
// cannot see it; a PostgreSQL branch aborted that way is caught by the
// coordinator before it prepares (its PREPARE would fail).
func (c *tpConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if err := c.refuse(query); err != nil {
		return errRow(ctx, err)
	}
	ctx, _ = c.tx.bound(ctx, true)
	b, err := c.tx.branch(ctx, c.ds)
	if err != nil {
		return errRow(ctx, err)
	}
	if b.tx != nil {
		return b.tx.QueryRowContext(ctx, query, args...)
	}
	return b.conn.QueryRowContext(ctx, query, args...)
}

// StmtContext makes tpConn a gorm.Tx, so that a PrepareStmt session
// keeps the transaction (GORM wraps it in a PreparedStmtTX; otherwise the
// session's statements ran outside it). Routing points every statement
// it sees at a tpConn again, unprepared; a statement that still comes here
// runs on a PostgreSQL branch's transaction, prepared again there, and is
// refused on a MySQL XA branch, which has no database/sql transaction.
func (c *tpConn) StmtContext(ctx context.Context, stmt *sql.Stmt) *sql.Stmt {
	b, err := c.tx.branch(ctx, c.ds)
	if err == nil && b.tx != nil {
		return b.tx.StmtContext(ctx, stmt)
	}
	return doneTx.StmtContext(ctx, stmt) // its Exec and Query fail with sql.ErrTxDone
}

// Commit implements gorm.TxCommitter for the whole transaction.
func (c *tpConn) Commit() error { return c.tx.commit() }

// Rollback implements gorm.TxCommitter for the whole transaction.
func (c *tpConn) Rollback() error { return c.tx.rollback() }

// errRow is a *sql.Row whose Scan returns err (database/sql builds rows
// only from a query: this one fails to connect with err).
func errRow(ctx context.Context, err error) *sql.Row {
	db := sql.OpenDB(errConnector{err})
	defer db.Close()
	return db.QueryRowContext(context.WithoutCancel(ctx), "")
}

type errConnector struct{ err error }

func (e errConnector) Connect(context.Context) (driver.Conn, error) { return nil, e.err }
func (e errConnector) Driver() driver.Driver                        { return errDriver(e) }

type errDriver struct{ err error }

func (e errDriver) Open(string) (driver.Conn, error) { return nil, e.err }

// doneTx is a finished *sql.Tx of an in-process driver: a statement
// given to its StmtContext fails (sql.ErrTxDone) without reaching any
// database. Made once by startTwoPhase (db.Use reports a failure); its
// database is closed at once, so nothing runs in the background.
var doneTx *sql.Tx

var doneTxOnce sync.Once

func makeDoneTx() error {
	var err error
	doneTxOnce.Do(func() {
		db := sql.OpenDB(stubConnector{})
		defer db.Close()
		var tx *sql.Tx
		if tx, err = db.Begin(); err == nil {
			_ = tx.Rollback()
			doneTx = tx
		}
	})
	if err == nil && doneTx == nil {
		err = errors.New("gormplugin: no finished transaction for refused prepared statements")
	}
	return err
}

type (
	stubConnector struct{}
	stubConn      struct{}
)

func (stubConnector) Connect(context.Context) (driver.Conn, error) { return stubConn{}, nil }
func (stubConnector) Driver() driver.Driver                        { return errDriver{sql.ErrConnDone} }
func (stubConn) Prepare(string) (driver.Stmt, error)               { return nil, sql.ErrConnDone }
func (stubConn) Close() error                                      { return nil }
func (stubConn) Begin() (driver.Tx, error)                         { return stubConn{}, nil }
func (stubConn) Commit() error                                     { return nil }
func (stubConn) Rollback() error                                   { return nil }
