package xa

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
)

// Start makes the coordinator ready: it creates the decision log table
// and, in an empty log, the log's id (see createLogID: a log that lost its
// id is an error wrapping ErrLogIDLost), checks every PostgreSQL
// source can prepare (an *UnavailableError if not), runs a first Recover
// and GC (their errors are logged, not returned) and starts the recovery
// timer. A second Start does nothing.
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
	if err := c.createLog(ctx); err != nil {
		return err
	}
	loc, err := c.locate(ctx)
	if err != nil {
		return err
	}
	id, err := c.createLogID(ctx)
	if err != nil {
		return err
	}
	tag := tagOf(id, loc)
	for _, name := range c.order {
		if s := c.sources[name]; s.Dialect == dialect.Postgres {
			if err := s.checkCapable(ctx); err != nil {
				return err
			}
		}
	}
	c.warnNotDurable(ctx)
	c.setTag(tag)
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

// Attach only reads the decision log's id (the logtag), so that List,
// Recover and GC work: no table is created, nothing is checked or
// recovered, no timer runs. For tools that must change nothing unasked
// (shardkey xa list). Without a log table or id, an error wrapping
// ErrNoLog: no prepared branch can be this deployment's. NewTx still
// needs Start.
func (c *Coordinator) Attach(ctx context.Context) error {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if _, err := c.ready(); err != ErrNotStarted {
		return err // nil when attached; ErrClosed when closed
	}
	loc, err := c.locate(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: no table %s on data source %q", ErrNoLog, c.table, c.log.Name)
	}
	if err != nil {
		return err
	}
	id, ok, err := c.readLogID(ctx)
	switch {
	case err != nil && classify(err) == errNoTable:
		return fmt.Errorf("%w: no table %s on data source %q", ErrNoLog, c.table, c.log.Name)
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w: table %s on data source %q has no log id (never started)", ErrNoLog, c.table, c.log.Name)
	}
	c.setTag(tagOf(id, loc))
	return nil
}

// tagOf is the logtag of the log with id at loc: 16 hex digits of
// SHA-256 of both. A copy of the log (a dump restored under another
// database name, CREATE DATABASE ... TEMPLATE) carries the id but lives
// elsewhere, so it gets a tag of its own and never takes the original's
// branches for its own.
func tagOf(id, loc string) string {
	sum := sha256.Sum256([]byte(id + "\x00" + loc))
	return hex.EncodeToString(sum[:tagLen/2])
}

// locate finds the log table as this session resolves its name and
// points every later log statement at it by its qualified name: a session
// of the pool with another search_path (or default database) must not
// read or write another table of that name. It returns the location
// (database.schema.table on PostgreSQL, database.table on MySQL); an
// error wrapping sql.ErrNoRows when PostgreSQL has no such table.
func (c *Coordinator) locate(ctx context.Context) (string, error) {
	var db, schema, table sql.NullString
	var err error
	switch i := strings.IndexByte(c.table, '.'); {
	case c.log.Dialect == dialect.Postgres:
		err = c.log.DB.QueryRowContext(ctx, pgLogLocation, c.table).Scan(&db, &schema, &table)
	case i >= 0:
		db.String, db.Valid, table.String = c.table[:i], true, c.table[i+1:]
	default:
		err = c.log.DB.QueryRowContext(ctx, mysqlLocation).Scan(&db)
		table.String = c.table
	}
	if err != nil {
		return "", fmt.Errorf("xa: locating the decision log %s on %q: %w", c.table, c.log.Name, err)
	}
	if !db.Valid {
		return "", fmt.Errorf("xa: data source %q has no current database for the decision log %s (qualify it as database.table)", c.log.Name, c.table)
	}
	if c.log.Dialect == dialect.Postgres {
		c.logSQL = newLogSQL(c.log.Dialect, quotePG(schema.String)+"."+quotePG(table.String))
		return db.String + "." + schema.String + "." + table.String, nil
	}
	c.logSQL = newLogSQL(c.log.Dialect, quoteMySQL(db.String)+"."+quoteMySQL(table.String))
	return db.String + "." + table.String, nil
}

func quotePG(s string) string    { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteMySQL(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (c *Coordinator) setTag(tag string) {
	c.mu.Lock()
	c.tag = tag
	c.mu.Unlock()
}

// createLogID returns the log's id, writing a random one into an empty
// log: the primary key lets one writer win, whose id everyone then reads.
// A log with rows but no id lost it (a purge of old rows, a hand edit):
// a new id would orphan every branch prepared under the old tag, so that
// is an error wrapping ErrLogIDLost. The id row's created_at is in year
// 9999, out of reach of purges by age.
func (c *Coordinator) createLogID(ctx context.Context) (string, error) {
	if id, ok, err := c.readLogID(ctx); err != nil || ok {
		return id, err
	}
	fresh, err := newLogID()
	if err != nil {
		return "", err
	}
	insErr := c.inLogTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, c.logSQL.count).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: decision log %s on %q holds %d rows but no id row (gtrid %q): recovery cannot find the branches "+
				"prepared under its old id. End them by hand (pg_prepared_xacts / XA RECOVER, gtrid sk1:<old tag>:...; COMMIT those "+
				"whose gtrid has a 'C' row, roll back the others), then delete every row of the log", ErrLogIDLost, c.table, c.log.Name, n, logIDKey)
		}
		_, err := tx.ExecContext(ctx, c.logSQL.insert, logIDKey, "I", fresh, idRowTime)
		return err
	})
	if errors.Is(insErr, ErrLogIDLost) {
		return "", insErr
	}
	id, ok, err := c.readLogID(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("xa: writing the id of decision log %s on %q: %w", c.table, c.log.Name, insErr)
	}
	return id, err
}

// idRowTime is the id row's created_at: no purge by age reaches it.
var idRowTime = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// readLogID reads the log's id; ok is false when the log has none.
func (c *Coordinator) readLogID(ctx context.Context) (id string, ok bool, err error) {
	err = c.inReadTx(ctx, func(tx *sql.Tx) error { return tx.QueryRowContext(ctx, c.logSQL.readID, logIDKey).Scan(&id) })
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("xa: reading the id of decision log %s on %q: %w", c.table, c.log.Name, err)
	}
	if id = strings.TrimSpace(id); len(id) != tagLen || !isLowerHex(id) {
		return "", false, fmt.Errorf("xa: decision log %s on %q holds a malformed log id %q", c.table, c.log.Name, id)
	}
	return id, true, nil
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

// warnNotDurable warns about MySQL sources that may lose what they
// acknowledged in a crash (innodb_flush_log_at_trx_commit != 1, or a
// binary log not synced at each commit): a prepared branch or the
// decision lost after another source committed is a half commit.
func (c *Coordinator) warnNotDurable(ctx context.Context) {
	for _, name := range c.order {
		s := c.sources[name]
		if s.Dialect != dialect.MySQL {
			continue
		}
		var flush, logBin, syncBinlog sql.NullString
		if err := s.DB.QueryRowContext(ctx, mysqlDurability).Scan(&flush, &logBin, &syncBinlog); err != nil {
			c.logger.Debug("xa: reading durability settings", "source", name, "err", err)
			continue
		}
		if flush.String != "1" || logBin.String == "1" && syncBinlog.String != "1" {
			c.logger.Warn("xa: data source may lose committed or prepared transactions in a crash, which can leave a two-phase commit half done: set innodb_flush_log_at_trx_commit = 1 (and sync_binlog = 1 with the binary log on)",
				"source", name, "innodb_flush_log_at_trx_commit", flush.String, "log_bin", logBin.String, "sync_binlog", syncBinlog.String)
		}
	}
}
