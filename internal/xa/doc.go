// Package xa is shardkey's one two-phase commit engine: sqlhook and
// gormplugin open a branch per data source a transaction reaches and hand
// the branches to Tx.Commit or Tx.Rollback. It speaks PostgreSQL (PREPARE
// TRANSACTION) and MySQL/MariaDB (XA) through database/sql, without
// importing a driver.
//
// # Identifiers
//
// A transaction's GTRID is "sk1:<logtag>:<ms>:<txid>". The logtag is 16
// hex digits of SHA-256 of the decision log's id and location. The id is
// 16 random hex digits written into the log table, as the row with gtrid
// "sk1:log-id" and outcome 'I', by the first Start on it (the primary key
// lets one writer win); the location is database.schema.table on
// PostgreSQL (the schema the name resolves to), database.table on MySQL.
// A branch thus names the one log that decides it: two deployments never
// take each other's branches for their own, even when their logs have the
// same name on two servers, or one log is a copy of the other under
// another name (a restored dump, CREATE DATABASE ... TEMPLATE). ms is the
// base36 Unix millisecond the transaction began (by Config.Now): recovery
// measures a transaction's age from it. The txid is the base36 of a keygen
// id followed by 10 base36 digits of a 48-bit random nonce, so ids stay
// unique across processes and restarts. A PostgreSQL branch's gid is
// GTRID ":" data source name (unique in the cluster even when two data
// sources share it); a MySQL branch's xid is X'hex(GTRID)', X'hex(data
// source name)', formatID 0x736b31.
//
// Rows of the log are deleted by GC only. A log that has rows but lost its
// id row (an age-based purge: the id row is dated 9999 to stay out of
// reach) makes Start fail with ErrLogIDLost rather than mint a new id.
// Dropping or recreating the log table, or renaming its database or
// schema, changes the tag: branches prepared under the old
// one are no one's, and recovery never touches them. They stay visible in
// pg_prepared_xacts and XA RECOVER (gtrid "sk1:<old tag>:…"), to be ended
// by hand — ROLLBACK PREPARED / XA ROLLBACK, or COMMIT if the old log said
// 'C'. One case is left to operators: a MySQL log copied under the same
// database name to another server, for a deployment whose MySQL data
// sources share a server with the original's under the same names; give
// the copy a new id (delete its id row) before its first Start.
//
// # Commit
//
// One branch commits in one phase. Two or more:
//
//  1. Every branch is prepared in parallel (a read-only MySQL branch,
//     begun as a local transaction, just ends). Any failure rolls every
//     branch back and Commit returns an error wrapping ErrRolledBack.
//  2. A transaction older than Timeout is rolled back: recovery may
//     already be aborting it.
//  3. The decision is logged: one row (gtrid, 'C', branches, created_at)
//     inserted into the log table by a transaction of its own on the log
//     source's pool (explicit: sessions may default to autocommit off). (A
//     PostgreSQL PREPARE TRANSACTION in a failed transaction rolls back
//     and reports success, so each prepare is checked in
//     pg_prepared_xacts first.) The
//     primary key makes the first decision for a GTRID the only one: if
//     recovery wrote 'A' first, Commit rolls back. An insert failing
//     before its COMMIT logged nothing, and Commit rolls back. When the COMMIT's outcome is
//     unknown the row is read back on a fresh connection; if even that
//     fails, Commit returns an *InDoubtError with Decided false.
//  4. Every branch is committed in parallel. A branch that is no longer
//     prepared was committed by recovery (nobody rolls back a C-decided
//     branch). Any other failure returns an *InDoubtError with Decided
//     true: recovery will commit the rest.
//
// # Recovery
//
// At Start, every Interval and on Recover, each 2PC data source's
// prepared branches that are ours (format, logtag and the data source's
// own name) are settled: 'C' in the log commits, 'A' rolls back, none and
// older than Timeout logs 'A' (first writer wins) and acts on the row,
// none and younger is left to its coordinator. A MySQL branch is left
// until its transaction is older than Timeout whatever the decision, and
// Commit leaves to recovery a MySQL branch whose own connection failed
// (it never sends XA statements for a branch from another session):
// MariaDB 10.11 can report an XA COMMIT sent from another session while
// the owning session disconnects as done without doing it, leaving a
// zombie that holds its locks until a restart; after Timeout the owner is
// long gone. Any number of recoverers
// may run at once, in any processes: each decision is one row under a
// primary key, and each prepared branch can be finished once. GC deletes
// 'C' rows with no branch left and 'A' rows after max(24h, 100×Timeout).
//
// # Guarantees
//
// Every branch of a transaction ends the same way, committed or rolled
// back, whatever fails (processes, connections, servers) as long as the
// decision log is not lost and recovery eventually runs. Commit returning
// nil means every branch committed; an error not matching ErrInDoubt
// means none did or will; ErrInDoubt means the outcome is decided, or
// will be, by the log, and recovery carries it out.
//
// # What it does not give
//
// There is no global snapshot: a reader on two data sources can see one
// branch committed and the other not yet, since each database commits
// its branch at its own moment, and a read-only transaction across data
// sources reads each at a different instant. Locks of a prepared branch
// are held until it is finished, by its coordinator or by recovery (up to
// Timeout plus Interval after a crash). SQLite has no two-phase commit and
// cannot be spanned. A coordinator stalled for longer than the 'A' rows
// are kept could, in principle, log 'C' for a transaction recovery
// already rolled back.
//
// On MariaDB a prepared XA branch stays attached to its session while
// that session lives: only it can finish the branch. After a failed
// Commit the caller must therefore close the branch connections instead
// of returning them to a pool.
//
// Requirements: PostgreSQL with max_prepared_transactions > 0;
// MariaDB 10.5+ or MySQL 5.7.7+ (prepared XA branches survive a
// disconnect); data source names of at most 64 bytes of [A-Za-z0-9_.-].
package xa
