package xa

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
)

// branch is a Branch during Commit, with what is known of its state.
type branch struct {
	Branch
	src      *source
	tried    bool // a prepare statement was sent: the branch may be prepared
	lost     bool // the prepare statement lost its connection or context: it may complete later
	prepared bool // known prepared
	ended    bool // Local was called
}

func (b *branch) pg() bool { return b.src != nil && b.src.Dialect == dialect.Postgres }

// finishSQL is the statement committing or rolling back the prepared
// branch of gtrid on source (of dialect d).
func finishSQL(d dialect.Name, gtrid, source string, commit bool) string {
	if d == dialect.Postgres {
		if commit {
			return commitPreparedPG(pgGID(gtrid, source))
		}
		return rollbackPreparedPG(pgGID(gtrid, source))
	}
	if commit {
		return xaCommit(mysqlXID(gtrid, source))
	}
	return xaRollback(mysqlXID(gtrid, source))
}

// parallel runs f on every branch at once and returns its errors by index.
func parallel(bs []*branch, f func(*branch) error) []error {
	errs := make([]error, len(bs))
	var wg sync.WaitGroup
	for i, b := range bs {
		wg.Go(func() { errs[i] = f(b) })
	}
	wg.Wait()
	return errs
}

// commitTwoPhase runs the protocol on two or more branches of 2PC sources.
func (t *Tx) commitTwoPhase(ctx context.Context, bs []*branch) error {
	c := t.c
	born := t.born
	if _, err := c.ready(); err != nil {
		// Closed: no recovery is left in this process to finish what
		// would be prepared.
		return t.abort(ctx, bs, err)
	}
	if t.hook = c.hook; t.hook == nil {
		t.hook = testHook(ctx)
	}
	if err := t.checkAge(born); err != nil {
		return t.abort(ctx, bs, err)
	}
	// Phase 1 is bounded by Timeout, not by the time left: a PREPARE cut by
	// the deadline may still complete on the server. The age check below
	// refuses a transaction that got too old meanwhile.
	pctx, pcancel := context.WithTimeout(ctx, c.timeout)
	defer pcancel()
	if err := errorsJoin(parallel(bs, func(b *branch) error { return t.prepare(pctx, b) })); err != nil {
		return t.abort(ctx, bs, err)
	}
	if err := t.hookAt(StagePrepared); err != nil {
		return t.abort(ctx, bs, err)
	}
	if err := t.checkAge(born); err != nil {
		return t.abort(ctx, bs, err)
	}
	// Nothing may be decided once the transaction is Timeout old: an
	// insert cut by this deadline logged nothing, and Commit rolls back.
	dctx, cancel := context.WithTimeout(ctx, c.timeout-c.now().Sub(born))
	defer cancel()
	outcome, err := c.writeDecision(dctx, t.gtrid, 'C', branchNames(bs))
	if errors.Is(err, errNotLogged) {
		return t.abort(ctx, bs, err)
	}
	if err != nil {
		t.release(bs)
		return &InDoubtError{GTRID: t.gtrid, Pending: branchNames(bs), Err: err}
	}
	if outcome != 'C' {
		return t.abort(ctx, bs, errors.New("recovery logged a rollback decision first"))
	}
	if err := t.hookAt(StageDecided); err != nil {
		t.release(bs)
		return &InDoubtError{GTRID: t.gtrid, Decided: true, Pending: branchNames(bs), Err: err}
	}
	return t.commitAll(ctx, bs)
}

// checkAge refuses a transaction older than Timeout: recovery may be
// rolling it back.
func (t *Tx) checkAge(born time.Time) error {
	if age := t.c.now().Sub(born); age > t.c.timeout {
		return fmt.Errorf("transaction is %v old, past the %v timeout (recovery may be rolling it back)", age.Round(time.Millisecond), t.c.timeout)
	}
	return nil
}

func (t *Tx) hookAt(s Stage) error {
	if t.hook == nil {
		return nil
	}
	if err := t.hook(s, t.gtrid); err != nil {
		return fmt.Errorf("xa: hook at stage %s: %w", s, err)
	}
	return nil
}

func branchNames(bs []*branch) []string {
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Source
	}
	return names
}

// detached is ctx without its cancellation, bounded by the timeout: once
// begun, finishing or undoing branches must not stop because the caller
// gave up.
func (t *Tx) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), t.c.timeout)
}

// abort rolls every branch back and returns an error wrapping
// ErrRolledBack and cause.
func (t *Tx) abort(ctx context.Context, bs []*branch, cause error) error {
	if rerr := t.rollbackAll(ctx, bs); rerr != nil {
		return fmt.Errorf("%w: %w (and rolling back: %v; recovery rolls back what is left prepared after the timeout)", ErrRolledBack, cause, rerr)
	}
	return fmt.Errorf("%w: %w", ErrRolledBack, cause)
}

// release ends the driver transactions of prepared PostgreSQL branches
// (their sessions are idle: see Branch).
func (t *Tx) release(bs []*branch) {
	for _, b := range bs {
		if b.Local != nil && !b.ended {
			b.ended = true
			if err := b.Local(false); err != nil {
				t.c.logger.Debug("xa: releasing a prepared branch's transaction", "source", b.Source, "err", err)
			}
		}
	}
}
