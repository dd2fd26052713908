// Package workerlease hands Snowflake-family generators their worker id
// through leases kept in a table of a PostgreSQL or MySQL/MariaDB database
// the application already uses. It implements keygen.WorkerSource:
//
//	src, err := workerlease.New(ctx, workerlease.Config{DB: db, Namespace: "orders"})
//	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
//	defer gen.(io.Closer).Close() // releases the worker id
//
// The package imports no database driver: the caller opens the *sql.DB.
// The dialect is detected from the driver's package (jackc/pgx and lib/pq
// are PostgreSQL, go-sql-driver/mysql is MySQL) or set in Config.Dialect
// (DisposableConfig.Dialect). A driver wrapped by one that hides it, as
// XSAM/otelsql's does, cannot be told: set the dialect, else New refuses
// the database with ErrUnknownDialect rather than guess.
//
//	db, err := otelsql.Open("pgx", dsn)
//	src, err := workerlease.New(ctx, workerlease.Config{DB: db, Dialect: workerlease.PostgreSQL})
//
// # Promise
//
// Leases fail closed. Two processes never hold the same worker id at once,
// and a new holder of a worker id never issues keys at or before a time the
// previous holder may have used:
//
//   - Every expiry is computed on the database's clock, never a client's.
//   - A slot is claimed in one transaction that locks the candidate row
//     (SELECT ... FOR UPDATE SKIP LOCKED) and re-checks, in the UPDATE,
//     that it is still free.
//   - A lease is valid, on the generator's own clock, until the reading
//     taken just before the claim or renewal statement was sent plus TTL.
//     The database records an expiry no earlier than that (the statement
//     runs after it was sent), and a slot that expired without being
//     released is claimed again only SafeGuard after its expiry, which
//     absorbs clock-rate differences and late readings.
//   - The validity also ends on Go's monotonic clock, TTL after the claim
//     or renewal was sent, whatever the generator's clock reads: a clock
//     stepped back while the database cannot be reached does not stretch
//     it. Each renewal sets the validity to its own end; after such an
//     expiry ValidUntil is math.MinInt64 until a renewal succeeds.
//   - Renewal updates the row only while it still names the lease's own
//     owner token. The token is Config.Instance followed by a random
//     suffix drawn for each lease, so a lease whose slot was taken over,
//     even by the same instance, can never renew it again: it is lost for
//     good and the generator stops issuing (keygen.ErrLeaseLost).
//   - A lease whose renewals fail (database unreachable) stays valid until
//     its last validity ends; the generator then stops issuing. When the
//     database comes back and the row still names the lease, the next
//     renewal succeeds and the generator resumes.
//   - LastUsed is, for a slot released cleanly, the latest issued time the
//     previous holder wrote when it closed; for a slot that expired without
//     release, the latest of that, the slot's expiry (the database's
//     clock) and the previous holder's own validity end (its clock), since
//     it may have issued keys until its lease ran out: each claim and
//     renewal raises last_ms to the validity end it gives, so a holder
//     whose clock ran ahead of the database's is covered too, and Close
//     sets it back to the last issued time.
//
// # Table
//
// New creates the table when it is missing (CREATE TABLE IF NOT EXISTS);
// a database user without that right can have it created beforehand. Rows
// are created lazily, one per worker id that was ever claimed, so a layout
// with 2^22 worker ids costs rows only for the ids in use. Several
// namespaces (one per service, say) share one table with separate id
// spaces. expires_at is Unix milliseconds on the database's clock, last_ms
// mostly on the holders' clocks; a free slot has owner NULL, and one
// released by Close has expires_at 0 too.
//
// PostgreSQL (9.5 or later):
//
//	CREATE TABLE IF NOT EXISTS shardkey_worker (
//		namespace  VARCHAR(64)  NOT NULL,
//		worker_id  BIGINT       NOT NULL,
//		owner      VARCHAR(255),
//		expires_at BIGINT       NOT NULL DEFAULT 0,
//		last_ms    BIGINT       NOT NULL DEFAULT 0,
//		PRIMARY KEY (namespace, worker_id)
//	)
//
// MySQL 8.0 or later, MariaDB 10.6 or later (for SKIP LOCKED):
//
//	CREATE TABLE IF NOT EXISTS shardkey_worker (
//		namespace  VARCHAR(64)  NOT NULL,
//		worker_id  BIGINT       NOT NULL,
//		owner      VARCHAR(255) NULL,
//		expires_at BIGINT       NOT NULL DEFAULT 0,
//		last_ms    BIGINT       NOT NULL DEFAULT 0,
//		PRIMARY KEY (namespace, worker_id)
//	) ENGINE=InnoDB
//
// The table name is Config.Table (default shardkey_worker), optionally
// schema-qualified.
package workerlease
