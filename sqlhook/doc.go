// Package sqlhook is a database/sql driver wrapper that routes SQL across
// shard tables and data sources: anything that speaks database/sql (ent,
// sqlx, hand-written SQL, GORM on a raw connection) gets sharding by
// opening its *sql.DB through it.
//
//	cfg, _ := shardconf.Load("sharding.yaml")
//	db, err := sqlhook.Open(cfg)             // every data source of the rules
//	db.ExecContext(ctx, `INSERT INTO t_order (user_id, status) VALUES ($1, $2)`, 7, "new")
//	db.QueryContext(ctx, `SELECT id, status FROM t_order WHERE user_id = $1 AND order_id = $2`, 7, id)
//
// or, for one data source whose connector you build:
//
//	db := sql.OpenDB(sqlhook.Wrap(connector, router))
//
// Open does not import drivers: import them as usual
// (_ "github.com/jackc/pgx/v5/stdlib", _ "github.com/go-sql-driver/mysql",
// a SQLite driver registering "sqlite").
//
// # Dialects are linked by import
//
// Package sqlhook imports no SQL parser. Each dialect's compiler is a
// package registered by a blank import, as database/sql drivers are, so
// a program links the parsers of the dialects it uses and no others:
//
//	import (
//		_ "github.com/jackc/pgx/v5/stdlib"
//		_ "github.com/shardkey/shardkey/sqlhook/postgres" // PostgreSQL: libpg_query
//	)
//
// github.com/shardkey/shardkey/sqlhook/mysql compiles MySQL and MariaDB
// (TiDB's parser); github.com/shardkey/shardkey/sqlhook/sqlite compiles
// SQLite (respelled into PostgreSQL's grammar, so it links libpg_query,
// not TiDB's parser). A data source whose dialect has no compiler
// registered is refused by Open and OpenWith, and by every Connect of a
// Wrap connector, before anything runs: ErrDialectNotRegistered, as a
// *DialectNotRegisteredError naming the import to add. Nothing is ever
// passed through unparsed for want of a compiler.
//
// # What happens to a statement
//
// Each statement is parsed once per distinct text with a real grammar and
// its route plan cached (WithPlanCacheSize). A statement whose text cannot
// name a logic table (none of the rule's sharded or broadcast table names
// occurs in it, in any case, and with PostgreSQL it has no U& or
// backslash escape that could spell one) is not parsed at all and goes
// unchanged to the default data source (WithDefaultDataSource), as do
// SELECT 1, SET and SHOW.
//
// Only identifiers the parser places in table position are rewritten: a
// logic table's name in a string literal, a comment, a column alias or a
// column name is left alone, and arguments are never spliced into SQL. In
// every dialect the statement text is kept byte for byte around the
// replaced names and placeholders (literals, comments, optimizer hints and
// locking clauses included). With PostgreSQL and SQLite a table without an
// alias gets its logic name as alias ("t_order_1" AS t_order) so qualified
// columns keep working; with MySQL the qualifiers naming it are renamed
// with it (t_order.status becomes `t_order_1`.status).
//
// Sharding values come from equality, IN, BETWEEN and range conditions on
// the sharding columns, from bind arguments of any Go integer type,
// string, []byte or driver.Valuer (keygen.ID), or from integer and string
// literals. AND and OR combine as they should: each OR branch routes and
// the targets are united. A condition the router cannot read (a function,
// a subquery, NOT, a cast literal, a fractional number) only widens the
// route, never narrows it. IN lists are sent whole to each target (each
// table holds only its own rows, so the extra values match nothing).
//
//   - INSERT routes each row by its sharding values; rows of a multi-row
//     INSERT on different targets are split into one INSERT per target,
//     with placeholders renumbered. A key column governed by a
//     keyGenerateStrategy that is missing, NULL, DEFAULT or a nil argument
//     is filled from its generator (a NULL placeholder shared by several
//     rows is refused: each row needs its own key). A fractional value
//     for a sharding column is refused, since the value stored depends on
//     the column's type. RETURNING, ON CONFLICT and ON DUPLICATE KEY
//     UPDATE go with the rows (a conflict is always within one physical
//     table); for setting a sharding column in them see below. A split INSERT
//     outside a transaction is not atomic across targets; inside one
//     confined to a data source it is.
//   - SELECT on several targets runs on each and the rows are merged into
//     the answer one table holding all the rows would give, or the query
//     is refused before it runs (see "Reads over several targets").
//   - UPDATE and DELETE on several targets run on each and sum rows
//     affected.
//   - A write that changes a sharding column's value would leave the row
//     in a table its new value does not route to. It is refused with an
//     error matching both shardconf.ErrShardingKeyChange and
//     ErrUnsupported (a *shardconf.RouteError naming table, column and,
//     when known, value), unless the row provably stays: an UPDATE whose
//     WHERE reaches one target and whose new values (with the WHERE's
//     conditions on the sharding columns it does not set) route to that
//     same target, as ShardingSphere allows; SET c = c; and an upsert
//     setting c = excluded.c (MySQL: VALUES(c)) when every sharding column
//     is set from the inserted row or is a column of the conflict target
//     (the inserted row routed the statement to this table). An
//     expression, DEFAULT or a subquery as the new value is refused.
//   - JOINs of binding tables (bindingTables) go to the same-index
//     physical tables; a JOIN of two sharded tables that are not bound, a
//     self-join of a sharded table, a logic table inside a subquery, CTE
//     or UNION, and any statement with a WITH clause naming a logic table
//     are refused. With MySQL, an alias anywhere in the statement equal
//     to the name of a logic table used without alias is refused.
//   - A physical table named directly (t_order_1): an INSERT routes its
//     rows as the logic table's and runs on the data source they route to,
//     and is refused when a row routes to a table of another name; an
//     UPDATE of it may not assign a sharding column. Other statements on
//     it go unchanged to the default data source.
//   - Broadcast tables: writes go to every data source, reads to one (the
//     default data source's copy); a write reports one copy's rows
//     affected and RETURNING rows, as one table would.
//   - DDL (CREATE/ALTER/DROP/TRUNCATE TABLE, CREATE INDEX) on a logic
//     table runs on every physical table. PostgreSQL and SQLite index
//     names are schema-wide, so an index gets its table's name appended
//     (idx_user on t_user_0 becomes idx_user_t_user_0); a named PRIMARY
//     KEY, UNIQUE or EXCLUDE constraint on PostgreSQL, renaming a logic
//     table or one of its sharding columns, a foreign key to a sharded
//     table, and DROP/TRUNCATE of a logic table with other tables are
//     refused before anything runs. RENAME COLUMN runs on every physical
//     table; a foreign key to a broadcast table references each data
//     source's own copy.
//
// # Hints
//
// A table whose rules route it by hint (hint: strategies, HINT_INLINE)
// is placed by the values of shardconf.WithHint in the context of the
// statement's execution: QueryContext, ExecContext, and a prepared
// statement's ExecContext or QueryContext (it is routed when it runs, so
// PrepareContext's context routes nothing). In a transaction each
// statement's own context counts (BeginTx's does not reach them). The
// statement's SQL does not route a hint strategy; without a hint the
// statement is shardconf.ErrMissingShardingKey before anything runs
// (with WithScatter, a read or UPDATE/DELETE without a hint goes to every
// table, an INSERT still needs one). Every table a statement routes is
// routed with that context: INSERT rows (generated keys included), the
// WHERE of SELECT, UPDATE and DELETE, the check of an UPDATE setting a
// sharding column. A JOINed binding table follows the driving table's
// target; a hint given for it must agree with that pairing or the
// statement is refused. A hint that cannot be honoured refuses the
// statement: one for a table not routed by hint (shardconf.ErrUnusedHint),
// for a broadcast table, DDL on a hinted table (ErrUnsupported), and a
// hint for every table (shardconf.AllTables) on a statement naming no
// sharded table, which would run on the default data source. A hint for
// a table outside the rules, or for the logic table of a physical table
// a statement names directly (not routed), refuses a statement whose
// text names that table as a word; an INSERT into a physical table is
// routed by its logic table's hint and must route to that table.
//
// # Reads over several targets
//
// A SELECT that reaches several targets runs on each, and internal/merge
// combines their rows as the database combines one table's: ORDER BY
// (with its direction, NULLS FIRST/LAST and USING < or >; NULL sorts as
// the largest value on PostgreSQL, the smallest on MySQL and SQLite),
// LIMIT and OFFSET, COUNT, SUM, MIN, MAX and AVG (exact for every numeric
// type, AVG divided with the database's result type and rounding), GROUP
// BY with HAVING, SELECT DISTINCT, COUNT/SUM/AVG(DISTINCT ...), and
// arithmetic over aggregates in the select list, ORDER BY and HAVING (+,
// -, *, /, negation, COALESCE/IFNULL, numeric constants: COUNT(*) * 2,
// SUM(a) / COUNT(*)), computed after merging with the dialect's typing and
// division. The SQL each target gets differs from the caller's only in
// this:
//
//   - hidden columns are appended to the select list (named
//     shardkey_hidden_N, prefixed with shardkey_ again while the statement
//     writes that name, removed from the result): ORDER BY terms that are
//     not selected, AVG's SUM(x) and COUNT(x) (the AVG column itself stays,
//     so its name and type are the database's), the values of a DISTINCT
//     aggregate's argument, HAVING's aggregates and arithmetic over them,
//     GROUP BY keys that are not selected, the aggregates an expression
//     is computed from, and on SQLite the MIN, MAX and COUNT of each
//     SUM's and AVG's argument;
//   - the argument of a DISTINCT aggregate joins the GROUP BY (or a GROUP
//     BY is added), so each target returns its distinct values;
//   - HAVING is removed and evaluated on the merged groups;
//   - LIMIT n OFFSET m becomes LIMIT n+m OFFSET 0 where the merge streams
//     (no grouping, no DISTINCT); a grouped or DISTINCT query reads every
//     row (LIMIT becomes "no limit").
//
// LIMIT and OFFSET bound to placeholders are read as the database reads
// them: NULL is no limit on PostgreSQL, 0 on MySQL and an error on SQLite.
//
// Result column names and types are the database's: the visible columns
// are written as the caller wrote them. A query that reaches one target
// is sent exactly as written (tables renamed) and its rows come back
// unwrapped.
//
// Memory: an ORDER BY merge is a k-way heap holding one row per target,
// and stops reading at LIMIT + OFFSET. GROUP BY, an aggregate without
// GROUP BY, SELECT DISTINCT and DISTINCT aggregates hold every group,
// distinct row or distinct value in memory, at most 1<<20 of them; more
// fail the query with ErrUnsupported rather than use unbounded memory.
//
// Text is compared only where the comparison is known to equal the
// database's: ordering (ORDER BY, MIN, MAX, HAVING's <, >) needs a binary
// collation declared with WithBinaryCollation (bytes; MySQL's *_bin
// collations with trailing spaces insignificant) or written on the ORDER
// BY term (COLLATE "C", "POSIX" or ucs_basic on PostgreSQL, utf8mb4_bin,
// *_nopad_bin or binary on MySQL, "BINARY", NOCASE or RTRIM on SQLite,
// which the merge reproduces). Grouping, DISTINCT
// and equality need the same on MySQL and SQLite; on PostgreSQL they are
// allowed for every column, since deterministic collations (all but
// nondeterministic ICU ones) make only identical strings equal: do not
// group or DISTINCT across targets on a column with a nondeterministic
// ICU collation, whose equal strings may differ in bytes. Values whose
// order the merge cannot reproduce (PostgreSQL interval, money, json,
// enums, arrays; MySQL JSON, ENUM, SET...) are refused when they would be
// ordered, grouped or compared. These refusals come from Query, or from
// the first Next that meets such a value; both match ErrUnsupported.
//
// Refused across several targets (ErrUnsupported, before anything runs):
// an aggregate inside other functions or operators (ABS(MIN(x)),
// COUNT(*) % 2), an expression mixing aggregates with columns or
// placeholders, and in HAVING anything but comparisons, IN, BETWEEN and
// IS NULL of aggregates, arithmetic over them, GROUP BY keys and
// constants (integers, strings, NULL, placeholders): the merged value
// would have to be computed by rules sqlhook does not reproduce;
// aggregates
// other than COUNT, SUM, MIN, MAX and AVG, and with FILTER or ORDER BY;
// window functions and WINDOW; GROUP BY ROLLUP, CUBE, GROUPING SETS and
// WITH ROLLUP; DISTINCT ON; FETCH ... WITH TIES; ORDER BY ... USING an
// operator other than < and >; SELECT DISTINCT ordered by a term not
// selected; SELECT * with GROUP BY or aggregates; on MySQL, SUM or AVG
// of an expression containing / (MariaDB rounds each target's partial
// result to div_precision_increment, so the last digit would differ), and
// an ORDER BY or GROUP BY expression naming an output alias (MySQL and
// SQLite read the alias, a hidden copy in the select list would not);
// outer joins that keep the rows of an unsharded table; on MySQL and
// SQLite, a grouped select item or ORDER BY term reading a column that is
// neither grouped nor aggregated (MariaDB returns any row's value, SQLite
// the row of the MIN or MAX: the merge cannot tell which), and on SQLite
// an aggregate in HAVING or ORDER BY of a query whose select list has none
// and no GROUP BY (SQLite fails it). On SQLite, SUM
// and AVG of integers are refused (from Query or Next) where some order
// of the rows could take SQLite's running integer sum out of int64 (COUNT
// times MAX or MIN beyond it): one table's AVG would go on in floating
// point there, its SUM fail. SUM and AVG of
// floating-point values are exact sums of each target's sum, which may
// differ in the last bits from one table's floating-point accumulation. A
// user-defined aggregate cannot be told from a function by name: do not
// run one across several targets.
//
// # What is refused because the plan cannot cover it
//
// Every occurrence of a logic or broadcast table's name as an identifier
// (quoted or not, in any case: names match as ShardingSphere matches
// them, so "T_ORDER" is t_order) must be a table position the plan
// rewrites, or something the parse tree shows is not a table: a column,
// a column or table alias, a function name, an option name, a plain
// value. Otherwise the statement would run unchanged on the default data
// source, on its unsharded table or on one copy of a broadcast table, so
// it is refused with ErrUnsupported before anything runs (the examples
// are PostgreSQL's; SQLite statements are read by the same grammar, and
// MySQL's by its own in the same way):
//
//   - a text of several statements that names one anywhere (send them one
//     by one);
//   - a procedural body that mentions one as a word, escapes decoded: DO
//     blocks, CREATE FUNCTION and CREATE PROCEDURE bodies (quoted,
//     dollar-quoted or BEGIN ATOMIC);
//   - a string the server may read as SQL or as a table name: given to a
//     function (query_to_xml('SELECT ... FROM t_order'),
//     pg_relation_size('t_order')) or cast to a reg* type
//     ('t_order'::regclass);
//   - SELECT INTO and CREATE TABLE AS (each target would create its own
//     partial table), INSERT ... SELECT from one, a logic table in a
//     subquery, CTE, UNION arm, MERGE, EXPLAIN, PREPARE, DECLARE CURSOR,
//     COPY, LOCK, VACUUM, ANALYZE, CLUSTER, REINDEX, COMMENT ON, SECURITY
//     LABEL, GRANT/REVOKE, CREATE VIEW/RULE/POLICY/TRIGGER, a foreign key
//     REFERENCES or LIKE naming one, ALTER ... RENAME TO, DROP VIEW, DROP
//     INDEX or DROP SEQUENCE of that name, a type named after one
//     (NULL::t_order, its row type on the default data source);
//   - a name spelled with Unicode escapes (U&"t\005forder"), and a
//     database-qualified name (db.public.t_order: each data source has its
//     own database). A schema-qualified name keeps its schema and is
//     rewritten: public.t_order becomes public."t_order_1" AS t_order.
//
// No static check sees SQL built at run time: a function body that
// assembles a table name from pieces (format('%I', 't_' || x)), or a
// function called by name (SELECT f(), CALL p()), runs on the default data
// source as written. Do not reach logic tables that way.
//
// Without WithScatter, a statement that lacks a condition on any sharding
// column (database or table) is shardconf.ErrMissingShardingKey; every
// refusal happens in the Exec or Query call, before anything reaches a
// database, as a *StatementError.
//
// # Sharding values the database compares differently
//
// The router computes a target from the value it is given, as
// ShardingSphere does; the database compares by the column's type and
// collation. Where the two differ, a read can miss a row: a HASH_MOD on a
// text column under a case-insensitive collation (route 'alice', stored
// 'Alice'), a string '10' compared with a bigint column (hashed as text,
// stored by its number), a time.Time in another zone than the one the
// driver writes (WithTimeLocation; Open reads go-sql-driver/mysql's loc).
// Pass sharding values in one canonical form: the column's Go type,
// normalised text, UTC times.
//
// # Transactions
//
// A transaction begins lazily on each data source it touches. With
// options other than the defaults (an isolation level, read-only) the
// default data source begins at once, so that options its driver refuses
// fail BeginTx as they would without sqlhook; it counts as reached only
// when a statement goes there. Work on one data source has that
// database's full transactional semantics. A statement that would take a
// transaction to a second data source is ErrCrossSourceTx unless
// WithTwoPhaseCommit (below: the transaction commits atomically) or
// WithMultiSourceTx (the transaction is not atomic: each data source
// commits on its own, and a failure part-way is a *PartialCommitError
// that names what committed). Given both, WithTwoPhaseCommit wins.
//
// SAVEPOINT, RELEASE and ROLLBACK TO go to every data source the
// transaction has begun on. Before it has begun on any they are kept,
// and a data source that begins later first gets the savepoints in force
// (RELEASE and ROLLBACK TO applied), so a savepoint as the first
// statement (GORM's nested Transaction) works as on the bare driver and
// ROLLBACK TO undoes the work of every data source. A savepoint
// statement must stand alone (anything after it would run on every data
// source: ErrUnsupported). PostgreSQL's SET LOCAL and SET CONSTRAINTS
// follow the same rules.
//
// The transaction becomes unusable (ErrTxAborted: every statement fails,
// Commit rolls back every data source and returns it, Rollback rolls
// back every data source) when a savepoint statement succeeds on some
// data sources and fails on others, when giving the savepoints to a
// joining data source fails, or, with WithMultiSourceTx or
// WithTwoPhaseCommit, when a ROLLBACK TO a savepoint the transaction set
// fails: committing would keep work the application undid (a ROLLBACK TO
// of a name never set fails as the driver's would and leaves the
// transaction as the driver does). A statement that ran on some of its
// units and failed on the next, and with WithMultiSourceTx or
// WithTwoPhaseCommit on PostgreSQL any failed statement, fails the
// transaction until a ROLLBACK TO undoes it, as PostgreSQL does: a
// statement is never committed in part.
//
// # Two-phase commit
//
// WithTwoPhaseCommit lets a transaction span data sources and commit
// atomically: every data source commits or every one rolls back. Use it
// when a transaction must write on several data sources (moving a row
// between shards, an order and its stock on different databases); keep
// it off when transactions stay on one data source, and design the
// sharding so that they mostly do: a transaction that reaches one data
// source commits in one phase as without it. A write outside a
// transaction that reaches several data sources (a multi-row INSERT, an
// UPDATE or DELETE over several, a broadcast table's copies) runs in a
// two-phase transaction of its own: it is stored whole or not at all,
// and its error matches ErrTxInDoubt when its commit is in doubt.
//
// A transaction reaching several data sources costs, at Commit, four
// round trips in sequence instead of one: on every data source in
// parallel PREPARE TRANSACTION and a look in pg_prepared_xacts (MySQL:
// XA END and XA PREPARE), then an INSERT into the decision log (its own
// transaction on the log's data source), then on every data source in
// parallel COMMIT PREPARED (XA COMMIT); and a decision log row per
// transaction, deleted by background recovery later. On MySQL and MariaDB
// every read-write transaction begins with XA START (a local transaction
// cannot become an XA branch later), so a transaction that stays on one
// data source pays XA END and XA COMMIT ... ONE PHASE instead of COMMIT;
// a read-only one (sql.TxOptions.ReadOnly) begins as usual; an
// isolation level is set by SET TRANSACTION before XA START (BeginTx
// checks it without beginning on the default data source). Statements
// that commit implicitly (DDL) fail inside an XA branch; PostgreSQL
// refuses to prepare a transaction that used temporary tables, cursors
// WITH HOLD, LISTEN or NOTIFY (Commit then rolls back every data source).
// Only transactional tables take part: on MySQL and MariaDB a write to a
// MyISAM, Aria (non-transactional) or MEMORY table is not undone when
// the transaction rolls back, as without two-phase commit. MySQL sessions
// must run with autocommit on (the default): with it off (my.cnf,
// init_connect, ?autocommit=0) a statement outside a transaction opens
// one that stays open, and the next XA START on that session fails
// (XAER_OUTSIDE).
//
// A transaction spanning data sources that is older than the recovery
// timeout (60 seconds by default) when its decision would be logged is
// rolled back instead (recovery may be rolling back its prepared branches
// already). Its age counts from XA START on MySQL, so a long transaction
// there cannot commit across data sources; on PostgreSQL from Commit.
//
// It gives atomicity, not a global snapshot: each data source runs its
// part at the isolation level asked, on its own; a reader can see one
// data source's part committed before another's (between the COMMIT
// PREPAREDs), and two transactions can be ordered differently on two data
// sources. Locks are held until the second phase ends.
//
// Commit returns nil when every data source committed. An error matching
// ErrTxInDoubt (a *TxInDoubtError) means the outcome is not known yet:
// the decision may have been logged and some data sources may have
// committed; recovery settles every data source the same way (commit if
// the decision is logged, else roll back once the transaction is older
// than the recovery timeout). Any other error means every data source
// rolled back. A prepared transaction keeps its locks until it is
// settled.
//
// The decision log is a table (shardkey_xa_log, created when missing) on
// the first data source in the rules' order, or where WithTwoPhaseLog
// says; every process sharing data sources must name the same log. A
// statement of a transaction naming the log's table on that data source
// is refused (ErrUnsupported): a lock on it, held by a prepared branch,
// would keep every decision from being logged. Open
// and OpenWith recover at once what an earlier process left prepared and
// then every 30 seconds until the *sql.DB is closed (WithTwoPhaseRecovery
// sets the timeout and the interval); several processes recovering at
// once are safe. Transaction ids come from a SNOWFLAKE generator
// (WithTwoPhaseKeyGenerator replaces it) and a random nonce.
//
// PostgreSQL must allow prepared transactions: max_prepared_transactions
// (0 by default; a server restart applies it) at least the number of
// transactions that may be prepared at once, typically max_connections.
// Open and OpenWith refuse a data source where it is 0 with an error
// matching ErrTwoPhaseUnavailable. MySQL needs 5.7.7 or later and MariaDB
// 10.5 or later (a prepared XA branch must survive its connection). SQLite
// cannot prepare a transaction: a statement that would take a transaction
// to a second SQLite data source is refused before it runs, with an error
// matching ErrCrossSourceTx and ErrTwoPhaseUnavailable.
//
// # Session state
//
// With one data source, statements pass through. With several, a
// connection holds one connection per data source it has used, and
// session state must be the same on all of them, so before a statement
// runs it is sorted:
//
//   - Applied to every open data source connection, recorded, and
//     replayed on each one opened later: MySQL SET of session and user
//     variables (SET @u := 1, SET SESSION x = ..., SET NAMES, SET
//     CHARACTER SET, SET SESSION TRANSACTION, SET ROLE) to values every
//     server computes alike (literals, arguments, variables,
//     deterministic functions; no subquery, no NOW(), RAND(), UUID(), no
//     system variable into a user variable); PostgreSQL SET, RESET, SET
//     ROLE, SET search_path outside a transaction (PostgreSQL undoes
//     them on rollback); SQLite PRAGMA name = value outside a
//     transaction. A connection carrying any is not handed out again as
//     it is: IsValid reports it invalid as it goes back to the pool, and
//     ResetSession closes its data source connections and opens a fresh
//     one without session state (statements prepared on it are prepared
//     again). Keep session state on a *sql.Conn or in a transaction.
//   - Refused before anything is sent (ErrSessionState, which also
//     matches ErrUnsupported): temporary tables (CREATE TEMP/TEMPORARY,
//     SELECT INTO TEMP, SQLite temp.x, pg_temp.x); MySQL USE, LOCK and
//     UNLOCK TABLES, SET GLOBAL/PERSIST/PASSWORD/DEFAULT ROLE/STATEMENT,
//     SET TRANSACTION, SET autocommit, a user variable assigned outside
//     SET (SELECT @x := ..., SELECT ... INTO @x), SHOW WARNINGS/ERRORS,
//     GET DIAGNOSTICS, @@warning_count and the like; PostgreSQL DISCARD,
//     SET TRANSACTION, set_config(), DO blocks; SQLite ATTACH, DETACH and
//     PRAGMA name(value); CALL; transaction control in SQL text (BEGIN,
//     START TRANSACTION, COMMIT, ROLLBACK, XA, a savepoint outside a
//     transaction: use BeginTx); SQL-level PREPARE/EXECUTE/DEALLOCATE;
//     functions that answer for the connection's last statement
//     (LAST_INSERT_ID, FOUND_ROWS, ROW_COUNT, lastval, currval,
//     last_insert_rowid, changes), which ran on whichever data source it
//     was routed to (use RETURNING or the Result); a string of several
//     statements of which one touches session state; and anything that
//     changes how the server reads statement text (MySQL sql_mode flags
//     such as ANSI_QUOTES or NO_BACKSLASH_ESCAPES, multi-byte client
//     character sets such as GBK; PostgreSQL standard_conforming_strings
//     off or a non-UTF8 client_encoding), also with one data source, and
//     in a data source's DSN, refused at Open (ErrDataSource): sqlhook
//     would read such text differently from the server.
//
// So a read across data sources that uses @u, a setting or a temporary
// table sees the same state on each, or is refused. Not seen: what a
// function body does, and statements sent on a connection from Unwrap or
// UnwrapDataSource (inside a transaction these begin the data source's
// transaction first, so what they send is part of it). If a session statement runs on some data source
// connections and fails on another, the connection runs nothing more and
// is retired.
//
// # Parsers, and why these
//
// PostgreSQL statements are parsed by libpg_query, PostgreSQL's own
// grammar, through github.com/pganalyze/pg_query_go/v6 (cgo; about 27 µs
// for a point SELECT on the development machine). Its tree gives the byte
// offset of every table reference, which is what lets the rewrite touch
// only those bytes. Built without cgo, the same library runs as
// WebAssembly (github.com/wasilibs/go-pgquery, pure Go): about 90 µs per
// parse after a one-off ~1 s compile in each process.
//
// MySQL statements are parsed by TiDB's parser
// (github.com/pingcap/tidb/pkg/parser, about 6-10 µs for a point SELECT).
// Vitess's sqlparser is faster (about 3-6 µs) but importing it registers
// glog's command-line flags (-v, -log_dir, ...) on flag.CommandLine, so a
// program that defines its own -v panics at start; a library must not do
// that to its users. TiDB's tree has no byte offsets for names, so the
// statement is parsed a second time with each identifier that spells a
// logic table's name replaced by a sentinel of its own: where each
// sentinel lands in the tree says which identifiers are table references
// or qualifiers of their columns, and the template is cut from the
// caller's text at exactly those tokens (a first compile costs a few tens
// of µs; plans are cached). Everything else is sent as written: 0x28 stays
// a number and x'28' a string; LOCK IN SHARE MODE, FOR UPDATE NOWAIT, SKIP
// LOCKED, hints and comments stay. Only the VALUES rows of a split or
// key-filled INSERT are re-joined with ", " (each value, its comments
// included, as written), and an INSERT ... SET that needs a generated key
// is sent as (columns) VALUES (values).
//
// Text is read as MySQL reads it by default (backslash escapes in strings,
// "..." a string); a session that changes how statements are read
// (sql_mode ANSI_QUOTES or NO_BACKSLASH_ESCAPES, multi-byte client
// character sets such as GBK) is refused. In a statement naming a logic
// table, executable comments (/*! */, /*M! */, /*T! */) are refused, since
// the server runs them by its version while TiDB's grammar reads every /*!
// */ and no /*M! */; so is SQL text naming a logic table handed to PREPARE
// (PREPARE ... FROM '...', SET @v = '...'), which would run unrewritten on
// one data source (SQL assembled in the database, with CONCAT or hex
// literals, cannot be seen). A logic table qualified by a database
// (app_0.t_order, app_0.t_order.status) must be qualified by the database
// of a data source holding it or of the default data source, as the rules'
// mysql DSNs name them; the qualifier is dropped, so each target's
// connection finds the physical table in its own database. Any other
// database is refused, as is every qualifier when the databases are
// unknown (data sources given as connectors to OpenWith or Wrap).
//
// MariaDB's INSERT ... RETURNING and DELETE ... RETURNING on a logic table
// are ErrParse: TiDB's grammar has no RETURNING. GORM's MySQL dialector
// sends RETURNING to MariaDB 10.5 and later; open it with
// mysql.Config{DisableWithReturning: true}, or use gormplugin.
//
// SQLite statements are read by the PostgreSQL grammar after respelling
// `quoted` and [bracketed] names, SQLite's LIMIT offset, count (as LIMIT
// count OFFSET offset), an unquoted collation name after COLLATE, and its
// parameters: ?, ?NNN and $NNN bind the arguments SQLite binds (a bare ?
// takes one above the largest number so far), :name, @name and $name bind
// sql.Named arguments. SQLite shares PostgreSQL's shapes
// (RETURNING, ON CONFLICT, "quoted" names), which MySQL's grammar does not
// read. SQLite-only syntax (INSERT OR REPLACE, REPLACE INTO, AUTOINCREMENT)
// on a logic table is ErrParse.
//
// Plans are cached by text, so parsing is paid once per distinct
// statement; routing a cached plan costs about 0.4 µs (see the
// README for measured figures).
//
// # Observing
//
// WithObserver reports to a package observe Observer (shardotel's, for
// OpenTelemetry): each routed statement with its targets, fan-out and
// merged rows, each refusal once with its reason, each route-plan cache
// lookup, and how each two-phase transaction ended. Each target's
// physical statement runs under the context its TargetStart returned,
// itself under StatementStart's, so a tracer's spans nest down to the
// driver's. Without an observer nothing is reported and nothing is
// spent: a nil check per statement (BenchmarkRoutedStatement against
// BenchmarkRoutedStatementObserved measures the cost of reporting).
//
// # The wrapper is transparent
//
// A wrapped connection implements exactly the optional driver interfaces
// (Pinger, ExecerContext, QueryerContext, SessionResetter, Validator,
// NamedValueChecker, ...) of the default data source's connection; a
// query that reaches one target returns the driver's own rows (with an
// observer, rows that answer each optional method as the driver's do), so
// ColumnTypeScanType and NextResultSet work as without sqlhook. Unwrap
// gives the driver's connection from (*sql.Conn).Raw, e.g. for pgx's
// CopyFrom.
//
// Prepare of a statement that names no logic table prepares it on the
// default data source at once, so its errors come from Prepare as with
// the driver; a statement naming one is planned at Prepare (a statement
// the router cannot parse or place fails there) and prepared on each
// data source at its first execution there.
package sqlhook
