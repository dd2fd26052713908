package xa

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
)

// prepare runs phase 1 on one branch.
func (t *Tx) prepare(ctx context.Context, b *branch) error {
	switch {
	case b.pg():
		if err := b.src.checkCapable(ctx); err != nil {
			return err
		}
		gid := pgGID(t.gtrid, b.Source)
		b.tried = true
		if err := b.Exec(ctx, preparePG(gid)); err != nil {
			b.lost = isLost(err)
			return wrapBranch(b.Source, "PREPARE TRANSACTION", err)
		}
		// PREPARE TRANSACTION in a failed transaction rolls it back and
		// reports success: only pg_prepared_xacts tells. Asked on the
		// branch's own (now idle) session, so no pool connection is needed.
		if err := b.Exec(ctx, pgCheckPrepared(gid)); err != nil {
			return wrapBranch(b.Source, "PREPARE TRANSACTION", fmt.Errorf(
				"the transaction is not prepared (a failed transaction is rolled back by PREPARE TRANSACTION, which reports success), or checking failed: %w", err))
		}
		b.prepared = true
		return nil
	case b.Local != nil:
		// A read-only MySQL branch: nothing to prepare, its end changes nothing.
		b.ended = true
		return wrapBranch(b.Source, "commit of a read-only branch", b.Local(true))
	}
	xid := mysqlXID(t.gtrid, b.Source)
	if err := b.Exec(ctx, xaEnd(xid)); err != nil {
		return wrapBranch(b.Source, "XA END", err)
	}
	b.tried = true
	if err := b.Exec(ctx, xaPrepare(xid)); err != nil {
		b.lost = isLost(err)
		return wrapBranch(b.Source, "XA PREPARE", err)
	}
	b.prepared = true
	return nil
}

// rollbackAll rolls back every branch, whatever its state, in parallel.
func (t *Tx) rollbackAll(ctx context.Context, bs []*branch) error {
	ctx, cancel := t.detached(ctx)
	defer cancel()
	return errorsJoin(parallel(bs, func(b *branch) error { return t.rollbackOne(ctx, b) }))
}

func (t *Tx) rollbackOne(ctx context.Context, b *branch) error {
	switch {
	case b.ended:
		return nil
	case b.src == nil && b.Local == nil:
		return fmt.Errorf("xa: branch on unknown data source %q", b.Source)
	case b.Local != nil && !b.tried:
		b.ended = true
		return wrapBranch(b.Source, "rollback", b.Local(false))
	case b.pg():
		_, err := t.finish(ctx, b, false)
		if err == nil && b.lost {
			err = t.settleLost(ctx, b)
		}
		t.release([]*branch{b})
		return err
	}
	if !b.tried {
		// An active XA branch must be ended before it can be rolled back;
		// if that fails the rollback below says why.
		_ = b.Exec(ctx, xaEnd(mysqlXID(t.gtrid, b.Source)))
		err := b.Exec(ctx, xaRollback(mysqlXID(t.gtrid, b.Source)))
		if classify(err) == errRolledBack {
			err = nil // the server rolled it back already (a deadlock, a timeout)
		}
		return wrapBranch(b.Source, "XA ROLLBACK", err)
	}
	_, err := t.finish(ctx, b, false)
	if err == nil && b.lost {
		err = t.settleLost(ctx, b)
	}
	return err
}

// lostWait is how long a branch whose prepare lost its connection is
// watched: the server may still complete the PREPARE after the client
// gave up (seen some 300 ms later on MariaDB).
const lostWait = 2 * time.Second

// settleLost watches b's branch for lostWait after its prepare lost the
// connection, rolling it back if it appears prepared; an error when it
// is still prepared at the end (recovery rolls it back after Timeout).
func (t *Tx) settleLost(ctx context.Context, b *branch) error {
	if b.src.Dialect == dialect.MySQL {
		// Its session may be disconnecting: see Coordinator.tooYoung.
		return fmt.Errorf("xa: data source %q: the branch's XA PREPARE lost its connection; if it completed, recovery rolls the branch back after the timeout", b.Source)
	}
	q := finishSQL(b.src.Dialect, t.gtrid, b.Source, false)
	end := time.Now().Add(lostWait)
	for {
		listed, err := t.c.listed(ctx, b.src, t.gtrid)
		if err == nil && listed {
			if err = poolExec(ctx, b.src, q); err == nil || classify(err) == errRolledBack {
				return nil
			}
		}
		if time.Now().After(end) || ctx.Err() != nil {
			if listed {
				return fmt.Errorf("xa: data source %q: the branch prepared after its connection was lost, and rolling it back failed: %v", b.Source, err)
			}
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isLost tells an error that leaves a statement's outcome on the server
// unknown: the context ended or the connection broke while it ran.
func isLost(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne):
		return true
	}
	msg := err.Error()
	for _, s := range []string{"invalid connection", "terminating connection", "conn closed", "connection reset", "broken pipe",
		"Error 1927", "Connection was killed", "Error 2006", "gone away", "Error 2013", "Lost connection", "Error 1053"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// finish commits or rolls back b's (possibly) prepared branch on its own
// connection, and on the source's pool when that fails (the branch
// outlives its session). gone says the branch was not there: resolved by
// someone else, or never prepared.
func (t *Tx) finish(ctx context.Context, b *branch, commit bool) (gone bool, err error) {
	q := finishSQL(b.src.Dialect, t.gtrid, b.Source, commit)
	own := b.Exec(ctx, q)
	if done, gone, err := t.judge(ctx, b, q, commit, own); done {
		return gone, err
	}
	if b.src.Dialect == dialect.MySQL {
		// Another session cannot finish the branch while its own session
		// lives (XAER_NOTA), and must not while that session ends (see
		// Coordinator.tooYoung): recovery finishes it after the timeout.
		return false, fmt.Errorf("xa: %s on data source %q failed on the branch's own connection; recovery finishes it after the timeout: %w", q, b.Source, own)
	}
	pool := poolExec(ctx, b.src, q)
	if done, gone, err := t.judge(ctx, b, q, commit, pool); done {
		return gone, err
	}
	return false, fmt.Errorf("xa: %s on data source %q: %w (on the branch's own connection: %v)", q, b.Source, pool, own)
}

// judge reads the error of q on b: done when it settles the branch's end,
// with the error to report.
func (t *Tx) judge(ctx context.Context, b *branch, q string, commit bool, err error) (done, gone bool, _ error) {
	switch k := classify(err); {
	case err == nil, k == errRolledBack && !commit, k == errBusy && !commit:
		return true, false, nil
	case k == errRolledBack:
		return true, false, fmt.Errorf("xa: %s on data source %q: the server rolled the prepared branch back: %w", q, b.Source, err)
	case k == errBusy:
		// Recovery is committing it right now: done once it is gone.
		return true, true, t.waitFinished(ctx, b)
	case k == errGone:
		return true, true, nil
	}
	return false, false, nil
}

// waitFinished waits until another session has finished b's PostgreSQL
// branch (it leaves pg_prepared_xacts), so that Commit returns only once
// every branch's commit is visible.
func (t *Tx) waitFinished(ctx context.Context, b *branch) error {
	gid := pgGID(t.gtrid, b.Source)
	for {
		var n int
		err := b.src.DB.QueryRowContext(ctx, pgIsPrepared, gid).Scan(&n)
		if err == nil && n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("xa: branch %s on data source %q is still being finished by another session: %w (%v)", gid, b.Source, ctx.Err(), err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// listed tells whether gtrid's branch on s is prepared.
func (c *Coordinator) listed(ctx context.Context, s *source, gtrid string) (bool, error) {
	p, err := parseGTRID(gtrid)
	if err != nil {
		return false, err
	}
	fs, err := c.listSource(ctx, s, p.Tag)
	for _, f := range fs {
		if f.GTRID == gtrid {
			return true, err
		}
	}
	return false, err
}

// commitAll runs phase 2. With a hook, the first branch commits alone
// first so StageCommittedOne falls between two commits.
func (t *Tx) commitAll(ctx context.Context, bs []*branch) error {
	ctx, cancel := t.detached(ctx)
	defer cancel()
	defer t.release(bs)
	var committed []string
	rest := bs
	if t.hook != nil {
		if _, err := t.finish(ctx, bs[0], true); err != nil {
			return &InDoubtError{GTRID: t.gtrid, Decided: true, Pending: branchNames(bs), Err: err}
		}
		committed, rest = []string{bs[0].Source}, bs[1:]
		if err := t.hookAt(StageCommittedOne); err != nil {
			return &InDoubtError{GTRID: t.gtrid, Decided: true, Committed: committed, Pending: branchNames(rest), Err: err}
		}
	}
	// A C-decided branch that is gone was committed by recovery: nobody
	// rolls back a C-decided branch.
	errs := parallel(rest, func(b *branch) error {
		_, err := t.finish(ctx, b, true)
		t.release([]*branch{b}) // here, not after the slowest branch
		return err
	})
	var pending []string
	for i, err := range errs {
		if err != nil {
			pending = append(pending, rest[i].Source)
		} else {
			committed = append(committed, rest[i].Source)
		}
	}
	if len(pending) > 0 {
		return &InDoubtError{GTRID: t.gtrid, Decided: true, Committed: committed, Pending: pending, Err: errorsJoin(errs)}
	}
	return nil
}
