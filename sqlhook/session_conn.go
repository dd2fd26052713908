package sqlhook

import (
	"bytes"
	"context"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// control runs what is not a routed statement: savepoint statements of a
// transaction, and, with several data sources, statements that change
// session state. handled is false for every other statement.
func (c *conn) control(ctx context.Context, query string, r *routed, s *stmt, asQuery bool) (res any, handled bool, err error) {
	if c.bad {
		// A statement ran on some data source conns and failed on
		// others (or a conn broke mid-statement): they may differ, so
		// nothing more runs here. Nothing ran for this statement, so
		// database/sql may retry it on another conn.
		return nil, true, driver.ErrBadConn
	}
	if c.tx != nil && r.txControl {
		res, err := c.tx.savepoint(ctx, query, r, s, asQuery)
		return res, true, err
	}
	if c.tx != nil {
		if err := c.tx.usable(query); err != nil {
			return nil, true, c.cn.refuse(ctx, err)
		}
	}
	if c.cn.h == nil {
		return nil, false, nil
	}
	cls := c.cn.sessions.get(c.cn.h.Dialect, query)
	if cls.lexMode {
		return nil, true, c.cn.refuse(ctx, &StatementError{SQL: query, Err: &sessionStateError{why: cls.why}})
	}
	if len(c.cn.names) < 2 {
		return nil, false, nil
	}
	switch cls.kind {
	case sessNone:
		return nil, false, nil
	case sessRefuse:
		return nil, true, c.cn.refuse(ctx, &StatementError{SQL: query, Err: &sessionStateError{why: cls.why}})
	case sessSavepoint:
		return nil, true, c.cn.refuse(ctx, &StatementError{SQL: query, Err: &sessionStateError{
			why: "a savepoint outside a transaction begun with BeginTx would reach one data source only"}})
	}
	if !r.passthrough || len(r.units) != 1 {
		return nil, true, c.cn.refuse(ctx, &StatementError{SQL: query, Err: &sessionStateError{
			why: "a session statement that names a logic table cannot be repeated on every data source"}})
	}
	if cls.kind == sessTxLocal {
		if c.tx == nil {
			return nil, false, nil // no effect outside a transaction: pass it on
		}
		res, err := c.tx.setLocal(ctx, query, r.units[0], s, asQuery)
		return res, true, err
	}
	if c.tx != nil && cls.transactional {
		return nil, true, c.cn.refuse(ctx, &StatementError{SQL: query, Err: &sessionStateError{
			why: "inside a transaction this changes the data sources in it differently from the others (PostgreSQL undoes a SET on rollback; SQLite ignores or rolls back some pragmas); run it outside the transaction (PostgreSQL: SET LOCAL inside it)"}})
	}
	res, err = c.applySession(ctx, query, r.units[0], s, asQuery)
	return res, true, err
}

// applySession runs a session statement on the default data source's
// conn, then on every other open one, and records it for the conns
// opened later. If it fails after the default data source ran it the
// conns differ and the conn is retired.
func (c *conn) applySession(ctx context.Context, query string, u unit, s *stmt, asQuery bool) (any, error) {
	if len(c.session) >= maxSessionLog {
		return nil, c.cn.refuse(ctx, &StatementError{SQL: query, Err: &sessionStateError{why: fmt.Sprintf(
			"more than %d session statements on one connection (each is replayed on every data source connection opened later); use a fresh connection", maxSessionLog)}})
	}
	dss := []string{c.cn.defaultDS}
	for _, ds := range ir.SortedKeys(c.conns) {
		if ds != c.cn.defaultDS {
			dss = append(dss, ds)
		}
	}
	res, done, err := c.runEach(ctx, dss, u, s, asQuery)
	if err != nil {
		if len(done) > 0 {
			c.bad = true
			return nil, fmt.Errorf("sqlhook: session statement ran on %s but failed on another data source; the connection is retired: %v",
				strings.Join(done, ", "), err)
		}
		return nil, err
	}
	c.session = append(c.session, sessionEntry{sql: u.sql, args: cloneArgs(u.args)})
	return res, nil
}

// replaySession runs the recorded session statements on dc, the new conn
// to data source ds.
func (c *conn) replaySession(ctx context.Context, ds string, dc driver.Conn) error {
	for _, e := range c.session {
		if _, err := directExec(ctx, dc, e.sql, e.args); err != nil {
			return fmt.Errorf("sqlhook: replaying session statement %q on data source %s: %w", e.sql, ds, err)
		}
	}
	return nil
}

// setLocal runs a PostgreSQL SET LOCAL (or SET CONSTRAINTS) on every data
// source the transaction has begun on and records it in the
// transaction's log for those that begin later.
func (t *tx) setLocal(ctx context.Context, query string, u unit, s *stmt, asQuery bool) (any, error) {
	res, done, err := t.c.runEach(ctx, ir.SortedKeys(t.begun), u, s, asQuery)
	if err != nil {
		if len(done) > 0 {
			t.broken = fmt.Errorf("%s ran on %s and failed on another data source: %v", query, strings.Join(done, ", "), err)
			return nil, &StatementError{SQL: query, Err: fmt.Errorf("%w: %v", ErrTxAborted, t.broken)}
		}
		return nil, err
	}
	t.log = append(t.log, txEntry{sql: u.sql, args: cloneArgs(u.args)})
	return res, nil
}

// cloneArgs copies arguments kept for replay (a []byte may be reused by
// the caller).
func cloneArgs(args []driver.NamedValue) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		if b, ok := a.Value.([]byte); ok {
			a.Value = bytes.Clone(b)
		}
		out[i] = a
	}
	return out
}
