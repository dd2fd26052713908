package keygen

// SEGMENT is Meituan Leaf's segment mode: keys are consecutive integers
// handed out from ranges ("segments") reserved in a database table that is
// compatible with Leaf's leaf_alloc. The table is created when missing:
//
// PostgreSQL:
//
//	CREATE TABLE IF NOT EXISTS leaf_alloc (
//	    biz_tag     VARCHAR(128) NOT NULL PRIMARY KEY,
//	    max_id      BIGINT       NOT NULL DEFAULT 1,
//	    step        INT          NOT NULL,
//	    description VARCHAR(256),
//	    update_time TIMESTAMP    NOT NULL DEFAULT now()
//	)
//
// MySQL/MariaDB (Leaf's own DDL):
//
//	CREATE TABLE IF NOT EXISTS leaf_alloc (
//	    biz_tag     VARCHAR(128) NOT NULL DEFAULT '',
//	    max_id      BIGINT       NOT NULL DEFAULT 1,
//	    step        INT          NOT NULL,
//	    description VARCHAR(256) DEFAULT NULL,
//	    update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
//	    PRIMARY KEY (biz_tag)
//	) ENGINE=InnoDB
//
// The biz_tag row is inserted when missing with max_id 1 and the
// configured step. A range is reserved by one atomic statement,
// max_id = max_id + step (PostgreSQL: UPDATE ... RETURNING max_id; MySQL:
// UPDATE then SELECT in one transaction, the UPDATE's row lock making the
// pair atomic), and the range handed out is [max_id-step, max_id-1] of the
// new max_id. Two processes sharing a biz_tag therefore never overlap, and
// the first key of a fresh row is 1 (never 0).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
)

// ErrSegmentUnavailable: a SEGMENT generator has used up its buffered
// ranges and could not reserve a new one from the database before the
// caller's context was done. The error also wraps the context's error.
var ErrSegmentUnavailable = errors.New("keygen: segment range unavailable")

// errSegmentClosed is returned after Close.
var errSegmentClosed = errors.New("keygen: SEGMENT generator closed")

// WithDB gives database-backed generators (SEGMENT) their database. The
// caller owns db: closing the generator does not close it.
//
// SEGMENT speaks PostgreSQL or MySQL/MariaDB and tells which from db's
// driver (jackc/pgx, lib/pq, go-sql-driver/mysql). A driver wrapped by
// one that hides it (XSAM/otelsql's) cannot be told, so name the dialect
// in the prop dialect:
//
//	db, _ := otelsql.Open("pgx", dsn)
//	g, err := keygen.NewID("SEGMENT", keygen.Props{"biz-tag": "orders", "dialect": "postgres"}, keygen.WithDB(db))
//
// Without it such a database is refused with a *PropError for the key
// dialect (matching ErrInvalidProps), never used in a guessed dialect; a
// dialect that contradicts a recognised driver is refused too.
//
// SEGMENT's props: biz-tag (required, at most 128 bytes); step (the
// initial step, stored in a new row as Leaf's step; default 1000,
// 1..1e9); min-step and max-step (bounds of the adaptive step; defaults
// step and max(step, 1,000,000), Leaf's MAX_STEP); prefetch-threshold (the
// fraction 0..1 of the current range used that starts fetching the next;
// default 0.1); table (default leaf_alloc); dialect (postgres, also
// written postgresql, pg or pgx; or mysql, also written mariadb; default:
// told from the driver).
func WithDB(db *sql.DB) Option { return func(o *Options) { o.DB = db } }

// Segment defaults.
const (
	segmentDefaultStep      = 1000
	segmentMaxStep          = 1_000_000_000
	segmentLeafMaxStep      = 1_000_000 // Leaf's MAX_STEP, the default max-step
	segmentDefaultThreshold = 0.1
	segmentDefaultTable     = "leaf_alloc"
	// Adaptive step (Leaf's SEGMENT_DURATION): a range that lasted under
	// segmentFast doubles the next step, one that lasted over segmentSlow
	// halves it.
	segmentFast = 15 * time.Minute
	segmentSlow = 30 * time.Minute
	// Fetch attempts are bounded by segmentFetchTimeout and retried after
	// a backoff from segmentMinBackoff doubling up to segmentMaxBackoff.
	segmentFetchTimeout = 10 * time.Second
	segmentMinBackoff   = 10 * time.Millisecond
	segmentMaxBackoff   = time.Second
)

var segmentTableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z_][A-Za-z0-9_]{0,63})?$`)

// segmentDialect reads the prop dialect, else tells the dialect from db's
// driver. SEGMENT speaks PostgreSQL and MySQL/MariaDB only.
func segmentDialect(r *propReader, db *sql.DB) (dialect.Name, error) {
	const typ = "SEGMENT"
	const allowed = "postgres (or postgresql, pg, pgx) or mysql (or mariadb)"
	detected := dialect.FromDB(db)
	if detected == dialect.SQLite {
		return "", &PropError{Type: typ, Key: "WithDB", Reason: fmt.Sprintf("driver %T is SQLite's, which SEGMENT does not support", db.Driver()),
			Allowed: "a *sql.DB of PostgreSQL or MySQL/MariaDB"}
	}
	v, given := r.vals["dialect"]
	if !given {
		if detected == "" {
			return "", &PropError{Type: typ, Key: "dialect", Reason: fmt.Sprintf("required: driver %T is not one whose dialect is known (a wrapper such as otelsql hides the driver it wraps)", db.Driver()),
				Allowed: allowed}
		}
		return detected, nil
	}
	key := r.raw["dialect"]
	name, err := dialect.Parse(v)
	switch {
	case err != nil:
		return "", &PropError{Type: typ, Key: key, Value: v, Reason: "unknown SQL dialect", Allowed: allowed}
	case name != dialect.Postgres && name != dialect.MySQL:
		return "", &PropError{Type: typ, Key: key, Value: v, Reason: "SEGMENT does not support " + string(name), Allowed: allowed}
	case detected != "" && detected != name:
		// Both are known: the prop is a mistake, not an override.
		return "", &PropError{Type: typ, Key: key, Value: v, Reason: fmt.Sprintf("contradicts driver %T, which speaks %s", db.Driver(), detected),
			Allowed: string(detected) + ", or no dialect prop"}
	}
	return name, nil
}

// segRange is one reserved range [start, end). next is the only mutable
// field; it sits alone on its cache line.
type segRange struct {
	_          [64]byte
	next       atomic.Int64
	_          [56]byte
	start, end int64
	prefetchAt int64 // taking this value triggers the prefetch of the next range
}

// segmentGenerator is the SEGMENT generator. The current range is read
// through an atomic pointer and consumed with one atomic add; the mutex
// guards only the slow path (switching to the next range, waiting).
type segmentGenerator struct {
	_   [64]byte
	cur atomic.Pointer[segRange]
	_   [56]byte

	db        *sql.DB
	dialect   dialect.Name
	bizTag    string
	table     string
	threshold float64
	minStep   int64
	maxStep   int64
	clock     Clock
	logger    *slog.Logger

	// fetcher state (the fetcher goroutine only, after construction)
	step      int64
	fetchedAt time.Time

	mu       sync.Mutex
	next     *segRange     // the prefetched range, nil when none
	ready    chan struct{} // closed (and replaced) when a range arrives
	lastErr  error         // the latest fetch error, nil after a success
	closed   bool
	want     chan struct{} // asks the fetcher for the next range (buffer 1)
	done     chan struct{}
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once

	issuedDone atomic.Uint64 // keys of ranges already switched away from
	fetches    atomic.Uint64
	failures   atomic.Uint64
	waits      atomic.Uint64
	refusals   atomic.Uint64
}

// closedRange is an empty range installed by Close so that the fast path
// falls through to the slow path, which reports the closing.
var closedRange = func() *segRange { r := &segRange{start: 1, end: 1, prefetchAt: -1}; r.next.Store(1); return r }()

// newSegmentGenerator reads the props, creates the table and the biz_tag
// row when missing, reserves the first range and starts the fetcher. Its
// props are listed in WithDB's doc.
func newSegmentGenerator(props Props, o Options) (Generator, error) {
	const typ = "SEGMENT"
	r := readProps(typ, props, "biz-tag", "step", "prefetch-threshold", "min-step", "max-step", "table", "dialect")
	bizTag, ok := r.vals["biz-tag"]
	switch {
	case !ok:
		r.fail("biz-tag", "required", "a non-empty string of at most 128 bytes")
	case bizTag == "" || len(bizTag) > 128:
		r.fail("biz-tag", "empty or too long", "a non-empty string of at most 128 bytes")
	}
	step := r.int("step", 1, segmentMaxStep, segmentDefaultStep, false)
	minStep := r.int("min-step", 1, segmentMaxStep, step, false)
	maxStep := r.int("max-step", 1, segmentMaxStep, max(step, segmentLeafMaxStep), false)
	if r.has("min-step") && minStep > step {
		r.fail("min-step", "greater than step", fmt.Sprintf("an integer 1..%d (step)", step))
	}
	if r.has("max-step") && maxStep < step {
		r.fail("max-step", "less than step", fmt.Sprintf("an integer %d (step)..%d", step, segmentMaxStep))
	}
	threshold := segmentDefaultThreshold
	if v, ok := r.vals["prefetch-threshold"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			r.fail("prefetch-threshold", "not a fraction", "a number 0..1 (0.1: prefetch once 10% of the range is used)")
		} else {
			threshold = f
		}
	}
	table := segmentDefaultTable
	if v, ok := r.vals["table"]; ok {
		if !segmentTableName.MatchString(v) {
			r.fail("table", "not a plain SQL identifier", "a table name [schema.]name of letters, digits and _")
		} else {
			table = v
		}
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	if o.DB == nil {
		return nil, &PropError{Type: typ, Key: "WithDB", Reason: "no database given",
			Allowed: "a *sql.DB passed with keygen.WithDB (PostgreSQL or MySQL/MariaDB)"}
	}
	dia, err := segmentDialect(r, o.DB)
	if err != nil {
		return nil, err
	}
	g := &segmentGenerator{
		db: o.DB, dialect: dia, bizTag: bizTag, table: table, threshold: threshold,
		minStep: minStep, maxStep: maxStep, clock: o.Clock, logger: o.Logger, step: step,
		ready: make(chan struct{}), want: make(chan struct{}, 1), done: make(chan struct{}),
	}
	ctx, cancel := context.WithTimeout(context.Background(), acquireTimeout)
	defer cancel()
	if err := g.init(ctx); err != nil {
		return nil, err
	}
	first, err := g.fetch(ctx)
	if err != nil {
		return nil, err
	}
	g.cur.Store(first)
	bg, bgCancel := context.WithCancel(context.Background())
	g.cancel = bgCancel
	g.wg.Add(1)
	go g.fetcher(bg)
	return g, nil
}

// init creates the table and the biz_tag row when missing.
func (g *segmentGenerator) init(ctx context.Context) error {
	var ddl, ins string
	switch g.dialect {
	case dialect.Postgres:
		ddl = `CREATE TABLE IF NOT EXISTS ` + g.table + ` (
    biz_tag     VARCHAR(128) NOT NULL PRIMARY KEY,
    max_id      BIGINT       NOT NULL DEFAULT 1,
    step        INT          NOT NULL,
    description VARCHAR(256),
    update_time TIMESTAMP    NOT NULL DEFAULT now()
)`
		ins = `INSERT INTO ` + g.table + ` (biz_tag, max_id, step, description, update_time)
VALUES ($1, 1, $2, $3, now()) ON CONFLICT (biz_tag) DO NOTHING`
	default:
		ddl = "CREATE TABLE IF NOT EXISTS " + g.table + ` (
    biz_tag     VARCHAR(128) NOT NULL DEFAULT '',
    max_id      BIGINT       NOT NULL DEFAULT 1,
    step        INT          NOT NULL,
    description VARCHAR(256) DEFAULT NULL,
    update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    PRIMARY KEY (biz_tag)
) ENGINE=InnoDB`
		ins = "INSERT IGNORE INTO " + g.table + ` (biz_tag, max_id, step, description) VALUES (?, 1, ?, ?)`
	}
	var err error
	// Concurrent CREATE TABLE IF NOT EXISTS can fail on PostgreSQL (a race
	// on the catalog); the table then exists and a retry succeeds.
	for i := 0; i < 3; i++ {
		if _, err = g.db.ExecContext(ctx, ddl); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("keygen: SEGMENT: create table %s: %w", g.table, err)
	}
	if _, err := g.db.ExecContext(ctx, ins, g.bizTag, g.step, "shardkey SEGMENT key generator"); err != nil {
		return fmt.Errorf("keygen: SEGMENT: insert biz_tag %q into %s: %w", g.bizTag, g.table, err)
	}
	return nil
}

// nextStep is Leaf's adaptive step: double it when the previous range
// lasted under 15 minutes, halve it when it lasted over 30.
func (g *segmentGenerator) nextStep(now time.Time) int64 {
	if g.fetchedAt.IsZero() {
		return g.step
	}
	d := now.Sub(g.fetchedAt)
	switch {
	case d < segmentFast:
		return min(g.step*2, max(g.maxStep, g.step))
	case d > segmentSlow:
		return max(g.step/2, min(g.minStep, g.step))
	}
	return g.step
}

// fetch reserves the next range with one atomic statement.
func (g *segmentGenerator) fetch(ctx context.Context) (*segRange, error) {
	now := g.clock.Now()
	step := g.nextStep(now)
	ctx, cancel := context.WithTimeout(ctx, segmentFetchTimeout)
	defer cancel()
	var maxID int64
	switch g.dialect {
	case dialect.Postgres:
		err := g.db.QueryRowContext(ctx, `UPDATE `+g.table+` SET max_id = max_id + $1, update_time = now() WHERE biz_tag = $2 RETURNING max_id`,
			step, g.bizTag).Scan(&maxID)
		if err != nil {
			return nil, fmt.Errorf("keygen: SEGMENT: reserve %d keys for %q: %w", step, g.bizTag, err)
		}
	default:
		var err error
		if maxID, err = g.fetchMySQL(ctx, step); err != nil {
			return nil, fmt.Errorf("keygen: SEGMENT: reserve %d keys for %q: %w", step, g.bizTag, err)
		}
	}
	start, end := maxID-step, maxID
	if start < 1 {
		start = 1 // a row edited to max_id < step: never issue zero or negatives
	}
	if end <= start {
		return nil, fmt.Errorf("keygen: SEGMENT: biz_tag %q: max_id %d leaves no positive keys", g.bizTag, maxID)
	}
	r := &segRange{start: start, end: end, prefetchAt: start + int64(g.threshold*float64(end-start))}
	r.next.Store(start)
	g.step, g.fetchedAt = step, now
	g.fetches.Add(1)
	g.logger.Debug("keygen: SEGMENT range reserved", "biz_tag", g.bizTag, "first", start, "last", end-1, "step", step)
	return r, nil
}

func (g *segmentGenerator) fetchMySQL(ctx context.Context, step int64) (maxID int64, err error) {
	tx, err := g.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	res, err := tx.ExecContext(ctx, "UPDATE "+g.table+" SET max_id = max_id + ?, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ?", step, g.bizTag)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err == nil && n != 1 {
		return 0, fmt.Errorf("biz_tag row missing from %s", g.table)
	}
	if err := tx.QueryRowContext(ctx, "SELECT max_id FROM "+g.table+" WHERE biz_tag = ?", g.bizTag).Scan(&maxID); err != nil {
		return 0, err
	}
	return maxID, tx.Commit()
}

// fetcher reserves the next range whenever asked, retrying with backoff,
// until Close.
func (g *segmentGenerator) fetcher(ctx context.Context) {
	defer g.wg.Done()
	timer := time.NewTimer(0)
	if !timer.Stop() {
		<-timer.C
	}
	for {
		select {
		case <-g.done:
			return
		case <-g.want:
		}
		g.mu.Lock()
		have := g.next != nil
		g.mu.Unlock()
		if have {
			continue
		}
		backoff := segmentMinBackoff
		for {
			r, err := g.fetch(ctx)
			if err == nil {
				g.mu.Lock()
				g.next, g.lastErr = r, nil
				close(g.ready)
				g.ready = make(chan struct{})
				g.mu.Unlock()
				break
			}
			g.failures.Add(1)
			g.mu.Lock()
			g.lastErr = err
			g.mu.Unlock()
			g.logger.Warn("keygen: SEGMENT range reservation failed; retrying", "biz_tag", g.bizTag, "backoff", backoff, "error", err)
			timer.Reset(backoff)
			select {
			case <-g.done:
				timer.Stop()
				return
			case <-timer.C:
			}
			backoff = min(2*backoff, segmentMaxBackoff)
		}
	}
}

// kick asks the fetcher for the next range; it never blocks.
func (g *segmentGenerator) kick() {
	select {
	case g.want <- struct{}{}:
	default:
	}
}

// Type returns "SEGMENT".
func (g *segmentGenerator) Type() string { return "SEGMENT" }

// NextKey returns NextID's key as an int64.
func (g *segmentGenerator) NextKey(ctx context.Context) (any, error) {
	id, err := g.NextID(ctx)
	if err != nil {
		return nil, err
	}
	return id, nil
}

// NextID returns the next key of the current range: one atomic add and a
// bound check, unless the range is used up.
func (g *segmentGenerator) NextID(ctx context.Context) (int64, error) {
	for {
		r := g.cur.Load()
		v := r.next.Add(1) - 1
		if v < r.end {
			if v == r.prefetchAt {
				g.kick()
			}
			return v, nil
		}
		if err := g.advance(ctx, r); err != nil {
			return 0, err
		}
	}
}

// NextIDs fills dst with keys, taking contiguous runs of the current range
// with one atomic add each.
func (g *segmentGenerator) NextIDs(ctx context.Context, dst []int64) error {
	for i := 0; i < len(dst); {
		r := g.cur.Load()
		want := int64(len(dst) - i)
		v := r.next.Add(want) - want
		if v < r.end {
			n := min(want, r.end-v)
			if v <= r.prefetchAt && r.prefetchAt < v+n {
				g.kick()
			}
			for k := int64(0); k < n; k++ {
				dst[i] = v + k
				i++
			}
			continue
		}
		if err := g.advance(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// advance is the slow path, reached when r is used up: switch to the
// prefetched range, or wait for the fetcher until ctx is done.
func (g *segmentGenerator) advance(ctx context.Context, r *segRange) error {
	waited := false
	for {
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return errSegmentClosed
		}
		if g.cur.Load() != r {
			g.mu.Unlock()
			return nil // someone else switched
		}
		if g.next != nil {
			g.issuedDone.Add(uint64(r.end - r.start))
			g.cur.Store(g.next)
			g.next = nil
			g.mu.Unlock()
			return nil
		}
		ready, lastErr := g.ready, g.lastErr
		g.mu.Unlock()
		g.kick()
		if !waited {
			waited = true
			g.waits.Add(1)
		}
		select {
		case <-ready:
		case <-g.done:
			return errSegmentClosed
		case <-ctx.Done():
			g.refusals.Add(1)
			if lastErr != nil {
				return fmt.Errorf("%w: biz_tag %q: %w (last database error: %v)", ErrSegmentUnavailable, g.bizTag, ctx.Err(), lastErr)
			}
			return fmt.Errorf("%w: biz_tag %q: %w", ErrSegmentUnavailable, g.bizTag, ctx.Err())
		}
	}
}

// Stats reports what the generator did. Issued counts keys handed out
// (keys of the current range taken by calls that failed are not counted).
// The Snowflake-family fields are reused: LeaseRenewals counts ranges
// reserved in the database, LeaseFailures failed reservations,
// SequenceWaits calls that waited for a range because both buffers were
// empty, and LeaseRefusals calls refused with ErrSegmentUnavailable.
// LeaseValidUntil stays 0: SEGMENT holds no worker id.
func (g *segmentGenerator) Stats() Stats {
	g.mu.Lock()
	r := g.cur.Load()
	done := g.issuedDone.Load()
	g.mu.Unlock()
	used := min(max(r.next.Load()-r.start, 0), r.end-r.start)
	return Stats{
		Issued:        done + uint64(used),
		SequenceWaits: g.waits.Load(),
		LeaseRenewals: g.fetches.Load(),
		LeaseFailures: g.failures.Load(),
		LeaseRefusals: g.refusals.Load(),
	}
}

// Close stops the background fetcher and waits for it; NextID then fails.
// The keys of the buffered ranges are abandoned (never issued by anyone).
// The database is not closed. Close is idempotent.
func (g *segmentGenerator) Close() error {
	g.stopOnce.Do(func() {
		g.mu.Lock()
		g.closed = true
		old := g.cur.Load()
		g.issuedDone.Add(uint64(min(max(old.next.Load()-old.start, 0), old.end-old.start)))
		g.cur.Store(closedRange)
		g.next = nil
		g.mu.Unlock()
		close(g.done)
		g.cancel()
		g.wg.Wait()
	})
	return nil
}
