package sqlhook

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// Transactions under WithTwoPhaseCommit. A data source's part of the
// transaction is a branch of one xa.Tx: a PostgreSQL branch (and a
// read-only MySQL one) begins as a local transaction, a MySQL branch with
// XA START (a local transaction cannot become an XA branch later). At
// the end every branch goes to the coordinator, which commits one branch
// in one phase and several by two-phase commit.

// spansSources reports whether a transaction may span data sources.
func (cn *connector) spansSources() bool { return cn.opts.multiSourceTx || cn.opts.twoPhase.on }

// admitTwoPhase admits a transaction reaching the data sources of span
// if every one of them can take part in a two-phase commit; the refusal
// matches ErrCrossSourceTx and ErrTwoPhaseUnavailable.
func (t *tx) admitTwoPhase(query string, span map[string]bool) error {
	names := ir.SortedKeys(span)
	for _, ds := range names {
		if t.c.cn.tp != nil && t.c.cn.tp.coord.CanTwoPhase(ds) {
			continue
		}
		d := t.c.cn.h.Dialect
		reason := "it cannot take part in a two-phase commit"
		if d == SQLite {
			reason = "SQLite cannot prepare a transaction, so it cannot take part in a two-phase commit"
		}
		ue := &xa.UnavailableError{Source: ds, Dialect: dialectName(d), Reason: reason}
		return &StatementError{SQL: query, Err: fmt.Errorf("%w: it would reach data sources %s: %w",
			ErrCrossSourceTx, strings.Join(names, ", "), ue)}
	}
	return nil
}

// refuseLogTable refuses a statement of the transaction that names the
// decision log's table and reaches the log's data source: a lock it takes
// there (LOCK TABLE, a locking read, the gap locks of a DELETE) would be
// held by the prepared branch, while what finishes the branch is a row
// written to that table: Commit and recovery would wait on it for good.
// Nothing is sent.
func (t *tx) refuseLogTable(query string, units []unit) error {
	tp := t.c.cn.tp
	if tp == nil || !slices.ContainsFunc(units, func(u unit) bool { return u.ds == tp.logSource }) {
		return nil
	}
	// A Unicode-escaped identifier (PostgreSQL's U&"...") can spell the
	// log's name without its letters: not read, refused.
	low := strings.ToLower(query)
	escaped := t.c.cn.h.Dialect != MySQL && strings.Contains(low, `u&"`)
	if !escaped && !strings.Contains(low, tp.logName) {
		return nil
	}
	toks, err := sessLex(t.c.cn.h.Dialect, query)
	named := err != nil || escaped // unreadable: assume it does
	for _, tok := range toks {
		if (tok.kind == slWord || tok.kind == slQuoted) && strings.EqualFold(tok.text, tp.logName) {
			named = true
		}
	}
	if !named {
		return nil
	}
	return &StatementError{SQL: query, Err: fmt.Errorf(
		"%w: a transaction cannot use %s, the two-phase commit decision log (nor a Unicode-escaped identifier on its data source, which could name it): a lock on it would keep its own decision, and every other, from being logged",
		ErrUnsupported, tp.logName)}
}

// beginsXA reports whether a branch begins with XA START: MySQL under
// two-phase commit, unless the transaction is read-only (it has nothing
// to prepare).
func (t *tx) beginsXA() bool {
	return t.c.cn.tp != nil && t.c.cn.h.Dialect == MySQL && !t.opts.ReadOnly
}

// xaTx returns the transaction's xa.Tx, made on first use.
func (t *tx) xaTx() (*xa.Tx, error) {
	if t.xt == nil {
		xt, err := t.c.cn.tp.coord.NewTx()
		if err != nil {
			return nil, fmt.Errorf("sqlhook: two-phase commit: %w", err)
		}
		t.xt = xt
	}
	return t.xt, nil
}

// beginXA begins data source ds's branch with XA START on dc, after SET
// TRANSACTION ISOLATION LEVEL when the transaction asks for a level. If
// it fails the conn's state is unknown, and it is retired.
func (t *tx) beginXA(ctx context.Context, ds string, dc driver.Conn) (driver.Tx, error) {
	xt, err := t.xaTx()
	if err != nil {
		return nil, err
	}
	if t.opts.Isolation != 0 {
		level, err := mysqlIsolation(t.opts.Isolation)
		if err != nil {
			return nil, err
		}
		if _, err := directExec(ctx, dc, "SET TRANSACTION ISOLATION LEVEL "+level, nil); err != nil {
			return nil, err
		}
	}
	if _, err := directExec(ctx, dc, xt.XAStart(ds), nil); err != nil {
		t.c.bad = true
		return nil, err
	}
	return &xaBranch{t: t, ds: ds}, nil
}

// mysqlIsolation is the SQL name of an isolation level MySQL has.
func mysqlIsolation(l driver.IsolationLevel) (string, error) {
	switch sql.IsolationLevel(l) {
	case sql.LevelReadUncommitted:
		return "READ UNCOMMITTED", nil
	case sql.LevelReadCommitted:
		return "READ COMMITTED", nil
	case sql.LevelRepeatableRead:
		return "REPEATABLE READ", nil
	case sql.LevelSerializable:
		return "SERIALIZABLE", nil
	}
	return "", fmt.Errorf("sqlhook: MySQL has no isolation level %v", sql.IsolationLevel(l))
}

// xaBranch is the driver.Tx of a branch begun with XA START. end never
// calls it (it hands the branch to the coordinator); it ends the branch
// alone through the coordinator all the same.
type xaBranch struct {
	t  *tx
	ds string
}

func (b *xaBranch) Commit() error {
	return b.t.xt.Commit(b.t.ctx, []xa.Branch{b.t.branch(b.ds)})
}

func (b *xaBranch) Rollback() error {
	return b.t.xt.Rollback(b.t.ctx, []xa.Branch{b.t.branch(b.ds)})
}

// branch is data source ds's branch as the coordinator drives it.
func (t *tx) branch(ds string) xa.Branch {
	dc := t.c.conns[ds]
	b := xa.Branch{Source: ds, Exec: func(ctx context.Context, query string) error {
		_, err := directExec(ctx, dc, query, nil)
		return err
	}}
	if dtx, ok := t.begun[ds]; ok {
		if _, isXA := dtx.(*xaBranch); !isXA {
			b.Local = func(commit bool) error {
				if commit {
					return dtx.Commit()
				}
				return dtx.Rollback()
			}
		}
	}
	return b
}

// endTwoPhase commits or rolls back every branch through the
// coordinator. A branch begun but never reached holds no work and is
// rolled back. After any failure the conns are retired: a branch may be
// left in a state (an open or prepared XA branch) the next transaction
// on them could not begin in.
func (t *tx) endTwoPhase(op string) error {
	began := t.twoPhaseStart()
	var reached, idle []xa.Branch
	for _, ds := range ir.SortedKeys(t.begun) {
		if t.reached[ds] && op == "commit" {
			reached = append(reached, t.branch(ds))
		} else {
			idle = append(idle, t.branch(ds))
		}
	}
	var err error
	if len(idle) > 0 {
		err = t.rollbackBranches(idle)
		if op == "commit" && err != nil {
			t.c.bad = true // holds no work: only the conn suffers
			err = nil
		}
	}
	switch {
	case len(reached) > 1 && t.opts.ReadOnly:
		err = commitReadOnly(reached)
	case len(reached) > 0:
		err = t.commitBranches(reached)
	}
	if err != nil {
		t.c.dropConns()
		if errors.Is(err, ErrTxInDoubt) {
			t.c.cn.opts.logger.Error("sqlhook: two-phase commit outcome in doubt; recovery will settle it", "error", err.Error())
		}
	}
	t.reportTwoPhase(op, began, err)
	return err
}

// commitBranches commits the reached branches: one in one phase, several
// by two-phase commit. A lone local transaction (PostgreSQL, read-only
// MySQL) commits as without two-phase commit: no id is drawn.
func (t *tx) commitBranches(bs []xa.Branch) error {
	if len(bs) == 1 && bs[0].Local != nil && t.xt == nil {
		return bs[0].Local(true)
	}
	xt, err := t.xaTx()
	if err != nil {
		// Nothing is prepared: roll back, and say why.
		if rbErr := t.rollbackBranches(bs); rbErr != nil {
			err = fmt.Errorf("%w; the rollback failed: %w", err, rbErr)
		}
		return err
	}
	return xt.Commit(t.ctx, bs)
}

// commitReadOnly ends the branches of a read-only transaction, each a
// local transaction that wrote nothing (MySQL's XA cannot begin read-only,
// and has nothing to prepare): there is no outcome to agree on, so each
// commits on its own, and a failure is no partial commit.
func commitReadOnly(bs []xa.Branch) error {
	var errs []error
	for _, b := range bs {
		if err := b.Local(true); err != nil {
			errs = append(errs, fmt.Errorf("sqlhook: commit of read-only transaction on data source %s: %w", b.Source, err))
		}
	}
	return errors.Join(errs...)
}

// rollbackBranches rolls back bs: through the coordinator once the
// transaction has an xa.Tx (an XA branch may be among them), else each
// local transaction.
func (t *tx) rollbackBranches(bs []xa.Branch) error {
	if t.xt != nil {
		return t.xt.Rollback(t.ctx, bs)
	}
	var errs []error
	for _, b := range bs {
		if err := b.Local(false); err != nil {
			errs = append(errs, fmt.Errorf("sqlhook: rollback on data source %s: %w", b.Source, err))
		}
	}
	return errors.Join(errs...)
}

// implicitTwoPhase reports whether r, run outside a transaction, must run
// in a two-phase transaction of its own: a write reaching several data
// sources that can all prepare. Without it each data source would commit
// its part on its own, and a unit failing after others ran would leave
// their changes (a statement committed in part).
func (c *conn) implicitTwoPhase(r *routed) bool {
	if c.tx != nil || c.cn.tp == nil || !r.write {
		return false
	}
	for _, u := range r.units[1:] {
		if u.ds != r.units[0].ds {
			return true
		}
	}
	return false
}

// inImplicitTx runs f, a statement reaching several data sources, in a
// transaction of its own: committed if f succeeds (an in-doubt commit is
// the statement's error, matching ErrTxInDoubt), rolled back if it fails.
func inImplicitTx[T any](ctx context.Context, c *conn, f func() (T, error)) (T, error) {
	var zero T
	t, err := c.BeginTx(ctx, driver.TxOptions{})
	if err != nil {
		return zero, err
	}
	v, err := f()
	if err != nil {
		if rbErr := t.Rollback(); rbErr != nil {
			err = fmt.Errorf("%w (rolling back the statement's transaction failed too: %w)", err, rbErr)
		}
		return zero, err
	}
	if err := t.Commit(); err != nil {
		return zero, err
	}
	return v, nil
}

// dropConns closes every data source conn at once and retires the conn:
// after a failed two-phase end a MySQL session may still hold a prepared
// XA branch, which stays attached to it (recovery's XA COMMIT gets
// XAER_NOTA, its locks stay) until the session ends, and an application
// holding a *sql.Conn could keep it open for long. Later statements on
// the conn get driver.ErrBadConn (database/sql then uses another conn).
func (c *conn) dropConns() {
	for _, dc := range c.conns {
		dc.Close() // the branch may be in doubt; closing is what detaches it
	}
	c.conns, c.bad = nil, true
}
