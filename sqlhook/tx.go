package sqlhook

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// tx is a transaction on a sqlhook conn. It begins lazily: a data source
// begins its own transaction, with the options given to BeginTx, when a
// statement of the transaction first reaches it, so a transaction whose
// statements all go to one data source never touches the others. Options
// other than the defaults are checked by beginning at once on the default
// data source, so that one its driver cannot honour fails BeginTx as it
// would without sqlhook.
type tx struct {
	c     *conn
	opts  driver.TxOptions
	begun map[string]driver.Tx // by data source; *xaBranch for an XA branch
	// ctx: BeginTx's context without its cancellation, for the
	// two-phase commit at the end (cancelling must not stop a commit
	// half-way; recovery would have to finish it).
	ctx context.Context
	// xt: the two-phase transaction (WithTwoPhaseCommit), made when a
	// branch first needs its id (XA START, or a commit across data
	// sources).
	xt *xa.Tx
	// reached: the data sources a statement of the transaction has run
	// on (savepoints and SET LOCAL aside); what WithMultiSourceTx
	// governs. A data source begun by BeginTx is begun but not reached
	// until a statement goes there.
	reached map[string]bool
	// log: the savepoints and SET LOCALs in force, in order. Every data
	// source of the transaction has them; one that begins late gets them
	// replayed, so that ROLLBACK TO and RELEASE mean the same on each.
	log []txEntry
	// failed: a statement ran on some of its units and failed on the
	// next; until a ROLLBACK TO undoes it, statements and Commit fail.
	failed error
	// broken: the data sources' transactions differ in a way nothing can
	// repair (see ErrTxAborted); only Rollback is left.
	broken error
}

// txEntry is a savepoint (name set) or a SET LOCAL of the transaction.
type txEntry struct {
	name string // savepoint's name as the database compares it; "" for SET LOCAL
	sql  string
	args []driver.NamedValue
}

var _ driver.Tx = (*tx)(nil)

// checkTxOptions refuses options a conn without ConnBeginTx cannot honour,
// as database/sql does.
func checkTxOptions(dc driver.Conn, opts driver.TxOptions) error {
	if _, ok := dc.(driver.ConnBeginTx); ok {
		return nil
	}
	if opts.Isolation != driver.IsolationLevel(0) {
		return errors.New("sqlhook: the driver does not support non-default isolation level")
	}
	if opts.ReadOnly {
		return errors.New("sqlhook: the driver does not support read-only transactions")
	}
	return nil
}

// usable returns the error every statement of an aborted transaction
// fails with, or nil.
func (t *tx) usable(query string) error {
	cause := t.broken
	if cause == nil {
		cause = t.failed
	}
	if cause == nil {
		return nil
	}
	return &StatementError{SQL: query, Err: fmt.Errorf("%w (roll it back): %v", ErrTxAborted, cause)}
}

// admit refuses a statement that would make the transaction span several
// data sources unless WithTwoPhaseCommit or WithMultiSourceTx was given;
// with WithTwoPhaseCommit, a span two-phase commit cannot commit is
// refused too, and so is a statement naming the decision log.
func (t *tx) admit(query string, units []unit) error {
	if err := t.usable(query); err != nil {
		return err
	}
	if err := t.refuseLogTable(query, units); err != nil {
		return err
	}
	tpOn := t.c.cn.opts.twoPhase.on
	if t.c.cn.opts.multiSourceTx && !tpOn {
		return nil
	}
	span := maps.Clone(t.reached)
	for _, u := range units {
		span[u.ds] = true
	}
	if len(span) <= 1 {
		return nil
	}
	if tpOn {
		return t.admitTwoPhase(query, span)
	}
	return &StatementError{SQL: query, Err: fmt.Errorf(
		"%w: it would reach data sources %s; a transaction across data sources is not atomic (WithMultiSourceTx allows it)",
		ErrCrossSourceTx, strings.Join(ir.SortedKeys(span), ", "))}
}

// begin begins the transaction on data source ds, whose conn is dc, if it
// has not begun there yet, and replays the savepoints and SET LOCALs in
// force. A failed replay leaves the transaction broken: ds would not
// have the savepoints the others have.
func (t *tx) begin(ctx context.Context, ds string, dc driver.Conn) error {
	if _, ok := t.begun[ds]; ok {
		return nil
	}
	var (
		dtx driver.Tx
		err error
	)
	if t.beginsXA() {
		dtx, err = t.beginXA(ctx, ds, dc)
	} else if bt, ok := dc.(driver.ConnBeginTx); ok {
		dtx, err = bt.BeginTx(ctx, t.opts)
	} else if err = checkTxOptions(dc, t.opts); err == nil {
		if err = ctx.Err(); err == nil {
			dtx, err = dc.Begin() //lint:ignore SA1019 a driver without the Context interfaces gets the pre-Go 1.8 calls, as database/sql makes them
		}
	}
	if err != nil {
		return fmt.Errorf("sqlhook: begin transaction on data source %s: %w", ds, err)
	}
	t.begun[ds] = dtx
	for _, e := range t.log {
		if _, err := directExec(ctx, dc, e.sql, e.args); err != nil {
			t.broken = fmt.Errorf("replaying %q on data source %s as it joined the transaction failed: %v", e.sql, ds, err)
			return &StatementError{SQL: e.sql, Err: fmt.Errorf("%w: %v", ErrTxAborted, t.broken)}
		}
	}
	return nil
}

// Commit commits on every data source the transaction reached; an
// aborted transaction is rolled back everywhere and Commit fails.
func (t *tx) Commit() error {
	if t.c.tx == t && (t.broken != nil || t.failed != nil) {
		cause := t.broken
		if cause == nil {
			cause = t.failed
		}
		rbErr := t.end("rollback")
		err := fmt.Errorf("%w: commit refused, every data source rolled back: %v", ErrTxAborted, cause)
		if rbErr != nil {
			err = fmt.Errorf("%w; the rollback failed: %w", err, rbErr)
		}
		return err
	}
	return t.end("commit")
}

// Rollback rolls back on every data source the transaction reached.
func (t *tx) Rollback() error { return t.end("rollback") }

// end commits or rolls back each data source in name order. A data
// source begun but never reached is rolled back first (it holds no
// work). With one data source left its error goes back as is. With
// several, any failure is a *PartialCommitError; once a commit has failed
// the remaining data sources are rolled back rather than committed, so
// that as little as possible commits of a transaction that failed.
func (t *tx) end(op string) error {
	if t.c.tx != t {
		return fmt.Errorf("sqlhook: %s: the transaction has already ended", op)
	}
	t.c.tx = nil
	if t.c.cn.tp != nil {
		return t.endTwoPhase(op)
	}
	var names []string
	for _, name := range slices.Sorted(maps.Keys(t.begun)) {
		if t.reached[name] {
			names = append(names, name)
		} else if err := t.begun[name].Rollback(); err != nil && errors.Is(err, driver.ErrBadConn) {
			t.c.bad = true
		}
	}
	finish := func(dtx driver.Tx, rollback bool) error {
		if rollback {
			return dtx.Rollback()
		}
		return dtx.Commit()
	}
	switch len(names) {
	case 0:
		return nil
	case 1:
		return finish(t.begun[names[0]], op == "rollback")
	}
	var (
		done        []string
		failed      = map[string]error{}
		firstFailed string
	)
	for _, name := range names {
		dtx := t.begun[name]
		if op == "commit" && firstFailed != "" {
			err := fmt.Errorf("not committed: rolled back because the commit on %s failed", firstFailed)
			if rbErr := dtx.Rollback(); rbErr != nil {
				err = fmt.Errorf("%w; the rollback failed too: %w", err, rbErr)
			}
			failed[name] = err
			continue
		}
		if err := finish(dtx, op == "rollback"); err != nil {
			failed[name] = err
			if firstFailed == "" {
				firstFailed = name
			}
			continue
		}
		done = append(done, name)
	}
	if len(failed) == 0 {
		return nil
	}
	pe := &PartialCommitError{Op: op, Committed: done, Failed: failed}
	t.c.cn.opts.logger.Error("sqlhook: "+op+" of a transaction across data sources failed part-way",
		"op", op, "succeeded", done, "failed", ir.SortedKeys(failed), "error", pe.Error())
	return pe
}
