package xa

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
)

// Tx is one distributed transaction: its GTRID, and Commit or Rollback of
// the branches the caller opened under it.
type Tx struct {
	c     *Coordinator
	gtrid string
	born  time.Time // when NewTx ran, by Config.Now; in the GTRID to the millisecond
	hook  func(Stage, string) error
	done  atomic.Bool
}

// GTRID is the transaction's global id.
func (t *Tx) GTRID() string { return t.gtrid }

// XAStart is the statement that begins the transaction's branch on a MySQL
// data source (run it on the branch's connection, after any SET
// TRANSACTION ISOLATION LEVEL); "" for any other data source.
func (t *Tx) XAStart(source string) string {
	s, ok := t.c.sources[source]
	if !ok || s.Dialect != dialect.MySQL {
		return ""
	}
	return xaStart(mysqlXID(t.gtrid, source))
}

// Branch is the transaction's work on one data source, on a connection
// the caller holds until Commit or Rollback returns.
//
// Exec runs one statement on that connection. Local ends a branch begun
// as a local transaction (every PostgreSQL branch, and a read-only MySQL
// one): Local(true) commits it, Local(false) rolls it back. It is nil for
// a branch begun with XAStart, which the engine ends with XA statements
// through Exec. The engine calls Local at most once per branch, and calls
// Local(false) on a PostgreSQL branch after it was prepared, only to
// release the driver's transaction object: the session is idle by then,
// so that ROLLBACK changes nothing and its error is ignored.
type Branch struct {
	Source string
	Exec   func(ctx context.Context, query string) error
	Local  func(commit bool) error
}

// Commit commits every branch. One branch commits in one phase. Two or
// more run the two-phase protocol (see the package documentation): nil
// means every branch committed; an error matching ErrInDoubt (an
// *InDoubtError) means the outcome is not known yet and recovery will
// settle it; any other error means every branch was, or will be, rolled
// back.
func (t *Tx) Commit(ctx context.Context, branches []Branch) error {
	if !t.done.CompareAndSwap(false, true) {
		return ErrTxDone
	}
	switch len(branches) {
	case 0:
		return nil
	case 1:
		return t.commitOne(ctx, branches[0])
	}
	bs, err := t.c.resolve(branches)
	if err != nil {
		t.rollbackAll(ctx, bs)
		return err
	}
	return t.commitTwoPhase(ctx, bs)
}

// Rollback rolls back every branch (none is prepared yet).
func (t *Tx) Rollback(ctx context.Context, branches []Branch) error {
	if !t.done.CompareAndSwap(false, true) {
		return ErrTxDone
	}
	bs := make([]*branch, len(branches))
	for i, b := range branches {
		bs[i] = &branch{Branch: b, src: t.c.sources[b.Source]}
	}
	return t.rollbackAll(ctx, bs)
}

// commitOne commits a lone branch in one phase: no log, no prepare.
func (t *Tx) commitOne(ctx context.Context, b Branch) error {
	if b.Local != nil {
		return wrapBranch(b.Source, "commit", b.Local(true))
	}
	xid := mysqlXID(t.gtrid, b.Source)
	if err := b.Exec(ctx, xaEnd(xid)); err != nil {
		t.rollbackAll(ctx, []*branch{{Branch: b, src: t.c.sources[b.Source]}})
		return wrapBranch(b.Source, "XA END", err)
	}
	return wrapBranch(b.Source, "XA COMMIT ONE PHASE", b.Exec(ctx, xaCommitOnePhase(xid)))
}

func wrapBranch(source, what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("xa: %s on data source %q: %w", what, source, err)
}

// resolve pairs branches with their sources, refusing unknown, duplicate
// and non-2PC sources and MySQL XA branches the caller gave a Local.
func (c *Coordinator) resolve(branches []Branch) ([]*branch, error) {
	bs := make([]*branch, len(branches))
	seen := map[string]bool{}
	var err error
	for i, b := range branches {
		s := c.sources[b.Source]
		bs[i] = &branch{Branch: b, src: s}
		switch {
		case err != nil:
		case s == nil:
			err = fmt.Errorf("xa: branch on unknown data source %q", b.Source)
		case seen[b.Source]:
			err = fmt.Errorf("xa: two branches on data source %q", b.Source)
		case !twoPhase(s.Dialect):
			err = &UnavailableError{Source: s.Name, Dialect: s.Dialect, Reason: "this dialect has no two-phase commit; a transaction cannot span it and another data source"}
		case s.Dialect == dialect.Postgres && b.Local == nil:
			err = fmt.Errorf("xa: PostgreSQL branch on %q has no Local (every PostgreSQL branch begins as a local transaction)", b.Source)
		}
		seen[b.Source] = true
	}
	return bs, err
}

// errorsJoin is errors.Join that keeps a single error as it is.
func errorsJoin(errs []error) error {
	var nonNil []error
	for _, e := range errs {
		if e != nil {
			nonNil = append(nonNil, e)
		}
	}
	if len(nonNil) == 1 {
		return nonNil[0]
	}
	return errors.Join(nonNil...)
}
