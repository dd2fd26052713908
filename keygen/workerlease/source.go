package workerlease

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/leaseclock"
	"github.com/shardkey/shardkey/keygen"
)

// Dialect is the SQL dialect of the database holding the leases.
type Dialect int

const (
	// Detect, the zero value, detects the dialect from the driver of
	// Config.DB.
	Detect Dialect = iota
	// PostgreSQL is PostgreSQL 9.5 or later.
	PostgreSQL
	// MySQL is MySQL 8.0 or later, or MariaDB 10.6 or later.
	MySQL
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case Detect:
		return "detect"
	case PostgreSQL:
		return "PostgreSQL"
	case MySQL:
		return "MySQL"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// Defaults and limits of Config.
const (
	DefaultTable     = "shardkey_worker"
	DefaultNamespace = "default"
	DefaultTTL       = 30 * time.Second
	// MinTTL is the shortest TTL accepted.
	MinTTL = 100 * time.Millisecond
	// MaxNamespaceLen and MaxInstanceLen bound the namespace and instance
	// (the owner column also holds a 17-byte per-lease suffix).
	MaxNamespaceLen = 64
	MaxInstanceLen  = 255 - ownerSuffixLen
)

// ownerSuffixLen is the length of "/" plus the 16 hex digits that make
// each lease's owner token unique.
const ownerSuffixLen = 17

// ErrNoFreeWorker is wrapped by Acquire's error when every worker id of the
// namespace is held.
var ErrNoFreeWorker = errors.New("workerlease: no free worker id")

// ErrUnknownDialect is wrapped by New's and NewDisposable's error when the
// dialect is Detect and the driver of DB is not one whose dialect is known
// (a wrapper such as otelsql hides the driver it wraps: set the config's
// Dialect), or when Dialect is not one of the constants. The database is
// then not touched: no dialect is ever guessed.
var ErrUnknownDialect = errors.New("workerlease: unknown SQL dialect")

// Config configures a Source. Only DB is required. A struct rather than
// options: these are a deployment's settings, read from its configuration;
// every field but DB defaults when zero.
type Config struct {
	// DB is the database holding the lease table. The Source does not
	// close it.
	DB *sql.DB
	// Dialect is the database's dialect; Detect (0) derives it from the
	// package of DB's driver, which needs it set when that driver is
	// wrapped by one that hides it (XSAM/otelsql's). A Dialect that
	// contradicts a recognised driver is an error.
	Dialect Dialect
	// Table is the lease table, optionally schema-qualified; default
	// shardkey_worker. Letters, digits and underscores only.
	Table string
	// Namespace separates id spaces sharing the table (one per service,
	// say); default "default". At most 64 bytes.
	Namespace string
	// Instance names this process in the owner column; default host name,
	// process id and a random suffix. Each lease appends its own random
	// token, so instances need not be unique for safety, only for reading.
	// At most MaxInstanceLen bytes.
	Instance string
	// TTL is how long a claim or renewal keeps the worker id; leases renew
	// every TTL/3. Default 30s, at least MinTTL.
	TTL time.Duration
	// SafeGuard is how long after its expiry a slot that was not released
	// stays unclaimable, covering clock-rate differences between the
	// database and the holder. Default (0) TTL; negative is an error.
	SafeGuard time.Duration
	// Logger receives lease changes at info, renewal failures at warn and
	// lost leases at error. When nil the generator's logger
	// (keygen.WorkerInfo.Logger) is used, and when that is nil too nothing
	// is logged.
	Logger *slog.Logger
}

// Source is a keygen.WorkerSource leasing worker ids from a table. It is
// safe for concurrent use; every Acquire gets a distinct lease.
type Source struct {
	db        *sql.DB
	dialect   Dialect
	table     string
	namespace string
	instance  string
	ttl       time.Duration
	safeGuard time.Duration
	logger    *slog.Logger
	q         queries
}

var _ keygen.WorkerSource = (*Source)(nil)

// Slot is one row of the lease table, as List reports it.
type Slot struct {
	Worker int64
	// Owner is the owner token of the last claim ("" once released): the
	// instance name, "/" and the lease's random suffix.
	Owner string
	// ExpiresAt is the end of the last claim or renewal on the database's
	// clock; zero when the slot was released by its holder.
	ExpiresAt time.Time
	// LastUsed bounds the keys issued with the worker id: for a slot
	// released by Close, the latest issued time; while a holder has it,
	// the validity end of its last claim or renewal on its own clock (the
	// latest time it may issue a key until it renews); zero when none.
	LastUsed time.Time
	// Held says the slot has an owner whose lease has not expired, by the
	// database's clock when listed. A slot that expired without release
	// becomes claimable only SafeGuard after ExpiresAt.
	Held bool
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// New checks cfg and creates the lease table when it is missing.
func New(ctx context.Context, cfg Config) (*Source, error) {
	if cfg.DB == nil {
		return nil, errors.New("workerlease: Config.DB is nil")
	}
	s := &Source{
		db:        cfg.DB,
		dialect:   cfg.Dialect,
		table:     cfg.Table,
		namespace: cfg.Namespace,
		instance:  cfg.Instance,
		ttl:       cfg.TTL,
		safeGuard: cfg.SafeGuard,
		logger:    cfg.Logger,
	}
	d, err := resolveDialect(cfg.DB, cfg.Dialect, "Config.Dialect")
	if err != nil {
		return nil, err
	}
	s.dialect = d
	if s.table == "" {
		s.table = DefaultTable
	}
	if len(s.table) > 127 || !identRE.MatchString(s.table) {
		return nil, fmt.Errorf("workerlease: table name %q is not a plain identifier (letters, digits, underscores, optionally schema.table)", s.table)
	}
	if s.namespace == "" {
		s.namespace = DefaultNamespace
	}
	if len(s.namespace) > MaxNamespaceLen {
		return nil, fmt.Errorf("workerlease: namespace %q is longer than %d bytes", s.namespace, MaxNamespaceLen)
	}
	if s.instance == "" {
		s.instance = leaseclock.Instance(200)
	}
	if len(s.instance) > MaxInstanceLen {
		return nil, fmt.Errorf("workerlease: instance name is longer than %d bytes", MaxInstanceLen)
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.ttl < MinTTL {
		return nil, fmt.Errorf("workerlease: TTL %v is shorter than %v", s.ttl, MinTTL)
	}
	if s.safeGuard < 0 {
		return nil, fmt.Errorf("workerlease: negative SafeGuard %v", s.safeGuard)
	}
	if s.safeGuard == 0 {
		s.safeGuard = s.ttl
	}
	// The table counts whole milliseconds: round both up, so the database
	// never frees a slot earlier than the holder believes it valid.
	s.ttl = ceilMs(s.ttl)
	s.safeGuard = ceilMs(s.safeGuard)
	s.q = buildQueries(s.dialect, s.table)
	if err := s.ensureTable(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func ceilMs(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1) / time.Millisecond * time.Millisecond
}

// resolveDialect returns asked, or when it is Detect the dialect of db's
// driver; field names the setting for messages.
func resolveDialect(db *sql.DB, asked Dialect, field string) (Dialect, error) {
	if asked != Detect && asked != PostgreSQL && asked != MySQL {
		return Detect, fmt.Errorf("%w: %s is %v", ErrUnknownDialect, field, asked)
	}
	detected, err := detectDialect(db)
	switch {
	case err != nil && !errors.Is(err, ErrUnknownDialect):
		return Detect, err // a driver of a dialect leases cannot use
	case err != nil && asked == Detect:
		return Detect, fmt.Errorf("%w; set %s", err, field)
	case err != nil:
		return asked, nil // the override
	case asked != Detect && asked != detected:
		// Both are known: the setting is a mistake, not an override.
		return Detect, fmt.Errorf("workerlease: %s is %v but driver %T speaks %v", field, asked, db.Driver(), detected)
	}
	return detected, nil
}

// detectDialect tells the dialect of db's driver (internal/dialect).
func detectDialect(db *sql.DB) (Dialect, error) {
	switch dialect.FromDB(db) {
	case dialect.Postgres:
		return PostgreSQL, nil
	case dialect.MySQL:
		return MySQL, nil
	case dialect.SQLite:
		return Detect, fmt.Errorf("workerlease: driver %T is SQLite's; leases need PostgreSQL or MySQL/MariaDB", db.Driver())
	}
	return Detect, fmt.Errorf("%w: driver %T is not one whose dialect is known (a wrapper such as otelsql hides the driver it wraps)",
		ErrUnknownDialect, db.Driver())
}

// randomHex returns 2n random hex digits (owner tokens' suffixes).
var randomHex = leaseclock.RandomHex

// ensureTable creates the table if missing and checks it has the columns.
// A CREATE that fails (no right to create, or a concurrent creation
// racing in PostgreSQL's catalog) is fine if the table is usable after it.
func (s *Source) ensureTable(ctx context.Context) error {
	_, createErr := s.db.ExecContext(ctx, s.q.create)
	if _, err := s.db.ExecContext(ctx, s.q.probe); err != nil {
		if createErr != nil {
			return fmt.Errorf("workerlease: create table %s: %w", s.table, createErr)
		}
		return fmt.Errorf("workerlease: table %s is not usable: %w", s.table, err)
	}
	return nil
}

// Namespace returns the namespace the source leases in.
func (s *Source) Namespace() string { return s.namespace }

// Instance returns the instance name written in claimed rows.
func (s *Source) Instance() string { return s.instance }

// List returns every slot row of the namespace, by worker id.
func (s *Source) List(ctx context.Context) ([]Slot, error) {
	rows, err := s.db.QueryContext(ctx, s.q.list, s.namespace)
	if err != nil {
		return nil, fmt.Errorf("workerlease: list %s: %w", s.namespace, err)
	}
	defer rows.Close()
	var out []Slot
	for rows.Next() {
		var (
			sl               Slot
			owner            sql.NullString
			expires, last, h int64
		)
		if err := rows.Scan(&sl.Worker, &owner, &expires, &last, &h); err != nil {
			return nil, fmt.Errorf("workerlease: list %s: %w", s.namespace, err)
		}
		sl.Owner = owner.String
		sl.ExpiresAt = msTime(expires)
		sl.LastUsed = msTime(last)
		sl.Held = h != 0
		out = append(out, sl)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workerlease: list %s: %w", s.namespace, err)
	}
	return out, nil
}

// Release revokes the slot of a worker id, for operators (a CLI): its
// owner is cleared, so the holder's next renewal finds the slot taken and
// its generator stops issuing keys for good (keygen.ErrLeaseLost). The
// slot keeps its expiry and becomes claimable only SafeGuard after it, as
// if its holder had died; its last use becomes the later of the recorded
// last use and the expiry. Releasing a slot whose holder still runs is
// thus disruptive (that generator fails) but never lets two processes
// issue with the same worker id. A slot whose holder died is claimable at
// once if its lease expired SafeGuard ago, otherwise when it does.
func (s *Source) Release(ctx context.Context, worker int64) error {
	res, err := s.db.ExecContext(ctx, s.q.revoke, s.namespace, worker)
	if err != nil {
		return fmt.Errorf("workerlease: release worker %d in %s: %w", worker, s.namespace, err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		s.log(nil).Info("workerlease: worker id revoked", "namespace", s.namespace, "worker", worker)
		return nil
	}
	// No row changed: either there is none, or it was free already (MySQL
	// counts unchanged rows as unaffected).
	var n int64
	if err := s.db.QueryRowContext(ctx, s.q.exists, s.namespace, worker).Scan(&n); err != nil {
		return fmt.Errorf("workerlease: release worker %d in %s: %w", worker, s.namespace, err)
	}
	if n == 0 {
		return fmt.Errorf("workerlease: release: no slot for worker %d in namespace %q", worker, s.namespace)
	}
	return nil
}

func (s *Source) log(fallback *slog.Logger) *slog.Logger {
	switch {
	case s.logger != nil:
		return s.logger
	case fallback != nil:
		return fallback
	}
	return discard
}

var discard = slog.New(slog.DiscardHandler)

// msTime converts Unix milliseconds to a time; 0 or less is the zero time.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
