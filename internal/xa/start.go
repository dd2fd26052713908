package xa

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
)

// Start makes the coordinator ready: it creates the decision log table
// when missing, reads the log's location (its logtag), checks every
// PostgreSQL source can prepare (an *UnavailableError if not), runs a
// first Recover and GC (their errors are logged, not returned) and starts
// the recovery timer. A second Start does nothing.
func (c *Coordinator) Start(ctx context.Context) error {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.mu.Lock()
	started, closed := c.started, c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if started {
		return nil
	}
	if err := c.attach(ctx); err != nil {
		return err
	}
	if err := c.createLog(ctx); err != nil {
		return err
	}
	for _, name := range c.order {
		if s := c.sources[name]; s.Dialect == dialect.Postgres {
			if err := s.checkCapable(ctx); err != nil {
				return err
			}
		}
	}
	c.logReport(c.Recover(ctx))
	if _, err := c.GC(ctx); err != nil {
		c.logger.Warn("xa: decision log garbage collection", "err", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started = true
	if c.every > 0 && !c.closed {
		c.wg.Add(1)
		go c.loop()
	}
	return nil
}

// Attach only reads where the decision log is (its logtag), so that
// List, Recover and GC work: no table is created, nothing is checked or
// recovered, no timer runs. For tools that must change nothing unasked
// (shardkey xa list). NewTx still needs Start.
func (c *Coordinator) Attach(ctx context.Context) error {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	return c.attach(ctx)
}

func (c *Coordinator) attach(ctx context.Context) error {
	if _, err := c.ready(); err != ErrNotStarted {
		return err // nil when attached; ErrClosed when closed
	}
	tag, err := c.locateLog(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.tag = tag
	c.mu.Unlock()
	return nil
}

// locateLog computes the logtag from the log table's full name:
// database.schema.table on PostgreSQL (unquoted names fold to lower
// case), database.table on MySQL.
func (c *Coordinator) locateLog(ctx context.Context) (string, error) {
	db := c.log.DB
	if c.log.Dialect == dialect.Postgres {
		var name, schema sql.NullString
		if err := db.QueryRowContext(ctx, pgLogLocation).Scan(&name, &schema); err != nil {
			return "", fmt.Errorf("xa: locating the decision log on %q: %w", c.log.Name, err)
		}
		table := strings.ToLower(c.table)
		if !strings.Contains(table, ".") {
			if !schema.Valid {
				return "", fmt.Errorf("xa: data source %q has no current schema for the decision log %q (qualify it, or set search_path)", c.log.Name, c.table)
			}
			table = schema.String + "." + table
		}
		return LogTag(name.String, table), nil
	}
	if i := strings.IndexByte(c.table, '.'); i >= 0 {
		return LogTag(c.table[:i], c.table[i+1:]), nil
	}
	var name sql.NullString
	if err := db.QueryRowContext(ctx, mysqlLocation).Scan(&name); err != nil {
		return "", fmt.Errorf("xa: locating the decision log on %q: %w", c.log.Name, err)
	}
	if !name.Valid {
		return "", fmt.Errorf("xa: data source %q has no current database for the decision log %q (qualify it as database.table)", c.log.Name, c.table)
	}
	return LogTag(name.String, c.table), nil
}

// createLog creates the log table; another process creating it at the
// same moment can fail the CREATE, so a table that exists afterwards will do.
func (c *Coordinator) createLog(ctx context.Context) error {
	_, err := c.log.DB.ExecContext(ctx, c.logSQL.create)
	if err == nil {
		return nil
	}
	if _, err2 := c.log.DB.ExecContext(ctx, "SELECT gtrid FROM "+c.table+" WHERE 1 = 0"); err2 == nil {
		return nil
	}
	return fmt.Errorf("xa: creating the decision log %s on %q: %w", c.table, c.log.Name, err)
}

// loop runs recovery and GC every Interval until Close.
func (c *Coordinator) loop() {
	defer c.wg.Done()
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
			c.logReport(c.Recover(ctx))
			if _, err := c.GC(ctx); err != nil {
				c.logger.Warn("xa: decision log garbage collection", "err", err)
			}
			cancel()
		}
	}
}

func (c *Coordinator) logReport(rep Report, err error) {
	if err != nil {
		c.logger.Warn("xa recovery", "err", err)
	}
	for _, e := range rep.Errors {
		c.logger.Warn("xa recovery", "err", e)
	}
	if len(rep.Left) > 0 {
		c.logger.Info("xa recovery: undecided branches left to their coordinators", "count", len(rep.Left))
	}
}
