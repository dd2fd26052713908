package xa

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
)

// checkCapable refuses a PostgreSQL source whose server cannot prepare
// (max_prepared_transactions = 0); a pass is remembered.
func (s *source) checkCapable(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checked {
		return nil
	}
	var v string
	if err := s.DB.QueryRowContext(ctx, pgMaxPrepared).Scan(&v); err != nil {
		return fmt.Errorf("xa: reading max_prepared_transactions of data source %q: %w", s.Name, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return fmt.Errorf("xa: max_prepared_transactions of data source %q is %q: %w", s.Name, v, err)
	}
	if n <= 0 {
		return &UnavailableError{Source: s.Name, Dialect: s.Dialect,
			Reason: "max_prepared_transactions is 0: set max_prepared_transactions > 0 in postgresql.conf and restart"}
	}
	s.checked = true
	return nil
}

// writeDecision logs outcome want ('C' or 'A') for gtrid unless a row is
// there already, and returns the outcome the log holds. The primary key
// makes the first writer win. The insert runs in a transaction of its
// own: when it fails before its COMMIT is sent, the row certainly is not
// there (errNotLogged, unless a read shows another writer's); when the
// COMMIT's outcome is unknown, the row is read back on a fresh
// connection and, if absent, the insert is tried once more (a COMMIT
// still in flight makes it wait on the key). An error other than
// errNotLogged means the log's content is unknown.
func (c *Coordinator) writeDecision(ctx context.Context, gtrid string, want byte, branches []string) (byte, error) {
	fresh, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
	defer cancel()
	var last error
	for attempt := range 2 {
		ictx := ctx
		if attempt > 0 {
			ictx = fresh
		}
		err := c.inLogTx(ictx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ictx, c.logSQL.insert, gtrid, string(want), strings.Join(branches, ","), c.now().UTC())
			return err
		})
		if err == nil {
			return want, nil
		}
		last = err
		got, found, rerr := c.readDecision(fresh, gtrid)
		switch {
		case rerr == nil && found:
			return got, nil
		case attempt == 0 && !errors.Is(err, errCommitUnknown):
			return 0, fmt.Errorf("%w: %w", errNotLogged, err)
		case rerr != nil:
			return 0, fmt.Errorf("xa: logging decision %c for %s failed (%v), and reading it back failed: %w", want, gtrid, err, rerr)
		}
	}
	return 0, fmt.Errorf("xa: logging decision %c for %s: %w", want, gtrid, last)
}

// errNotLogged: the decision certainly was not written (no COMMIT of it
// was sent), so the transaction can still be rolled back.
var errNotLogged = errors.New("xa: the decision was not logged")

// errCommitUnknown wraps the error of a log transaction's COMMIT: it may
// have been applied.
var errCommitUnknown = errors.New("xa: outcome of the log's COMMIT unknown")

// readDecision reads gtrid's logged outcome; found is false without a row.
func (c *Coordinator) readDecision(ctx context.Context, gtrid string) (outcome byte, found bool, err error) {
	var s string
	err = c.inReadTx(ctx, func(tx *sql.Tx) error { return tx.QueryRowContext(ctx, c.logSQL.read, gtrid).Scan(&s) })
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("xa: reading the decision for %s: %w", gtrid, err)
	}
	if s = strings.TrimSpace(s); s != "C" && s != "A" {
		return 0, false, fmt.Errorf("xa: decision log row for %s has outcome %q (want C or A)", gtrid, s)
	}
	return s[0], true, nil
}

// aKeep is how long rollback decisions are kept: a stalled coordinator
// that wakes up must still find the 'A' that recovery wrote.
func (c *Coordinator) aKeep() time.Duration {
	return max(24*time.Hour, 100*c.timeout)
}

// inLogTx runs f in an explicit transaction of the log's pool and commits
// it: a session whose autocommit is off (my.cnf, init_connect, a DSN
// option) would otherwise keep a decision uncommitted, lost when the
// session ends.
func (c *Coordinator) inLogTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := c.log.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%w: %w", errCommitUnknown, err)
	}
	return nil
}

// inReadTx runs the reads of f in an explicit transaction of the log's
// pool (not a stale snapshot a session with autocommit off kept open),
// ended by ROLLBACK: there is nothing to commit, and its reply cannot
// change what was read.
func (c *Coordinator) inReadTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := c.log.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return f(tx)
}

// poolExec runs q on a connection of s's pool. On MySQL it first ends
// whatever local transaction the session holds (with autocommit off, any
// earlier statement opened one, and XA statements then fail with
// XAER_OUTSIDE); nothing of ours is ever left in one.
func poolExec(ctx context.Context, s *source, q string) error {
	if s.Dialect != dialect.MySQL {
		_, err := s.DB.ExecContext(ctx, q)
		return err
	}
	conn, err := s.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, q)
	return err
}
