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
// makes the first writer win; after any failure the row is read back on
// a fresh connection, since the insert may have landed. An error means
// the log's content is unknown.
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
		if attempt == 0 && isDBClosed(err) {
			return 0, fmt.Errorf("%w: %w", errNotLogged, err)
		}
		last = err
		got, found, rerr := c.readDecision(fresh, gtrid)
		if rerr != nil {
			return 0, fmt.Errorf("xa: logging decision %c for %s failed (%v), and reading it back failed: %w", want, gtrid, err, rerr)
		}
		if found {
			return got, nil
		}
	}
	return 0, fmt.Errorf("xa: logging decision %c for %s: %w", want, gtrid, last)
}

// errNotLogged: the decision certainly was not written (the statement
// never left the process), so the transaction can still be rolled back.
var errNotLogged = errors.New("xa: the decision was not logged")

// isDBClosed tells database/sql's error for a closed *sql.DB (unexported
// there): nothing was sent.
func isDBClosed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "sql: database is closed")
}

// readDecision reads gtrid's logged outcome; found is false without a row.
func (c *Coordinator) readDecision(ctx context.Context, gtrid string) (outcome byte, found bool, err error) {
	var s string
	err = c.inLogTx(ctx, func(tx *sql.Tx) error { return tx.QueryRowContext(ctx, c.logSQL.read, gtrid).Scan(&s) })
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
// session ends, and read from a stale snapshot.
func (c *Coordinator) inLogTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := c.log.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
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
