// Package difftest holds shardkey's differential testers, of writes and of
// reads.
//
// # Writes
//
// The differential write tester is a seeded random
// sequence of writes applied both through shardkey (sqlhook, or GORM with
// gormplugin) to two data sources × several physical tables, and to one
// plain, unsharded oracle database with the same schema on the same server.
//
// After every step it reads every physical table directly (plain
// connections, no shardkey) and checks that
//
//   - every row sits in the physical table its sharding values route to
//     (routed with shardconf.Router; a row without a sharding value is
//     misplaced);
//   - no primary key exists twice across the physical tables;
//   - the union of the physical tables equals the oracle table, row for row
//     and column for column, and every copy of the broadcast table equals
//     the oracle's;
//   - an accepted step affected as many rows as the same step on the oracle;
//   - a refused step (any error) changed nothing anywhere; it is not applied
//     to the oracle.
//
// A step is an INSERT (one row, several rows, with and without generated
// keys), UPDATE, DELETE or upsert (ON CONFLICT ... DO UPDATE / DO NOTHING,
// ON DUPLICATE KEY UPDATE, INSERT IGNORE) through sqlhook, or a GORM
// Create, CreateInBatches, Save, Updates (the model, another struct type, a
// map), Update, UpdateColumn, Delete, upsert (clause.OnConflict),
// FirstOrCreate or association call through gormplugin; or a transaction of
// a few of them, committed or rolled back. Values come from small domains
// so that updates collide and upserts conflict, with NULLs, boundary values
// (0, negative, the int64 limits, a uint64 above them) and numbers passed
// as other Go types and as strings. Some steps must be refused: a sharding
// column changed to a value routing elsewhere, a missing sharding key
// without scatter, a NULL sharding value. Each step is built from its own
// random source, seeded by (seed, step number), so that any subset of steps
// replays exactly; a divergence prints the seed, the step, the operation
// and a minimal diff, then shrinks the run to a short list of steps that
// still diverges.
//
// Two more tables cover the routing kinds a statement's columns do not
// decide (one step in four is on them, drawn from a random source of its
// own, so that the other steps of a seed stay what they were):
//
//   - t_hint is routed by hints alone: YAML hint: database and table
//     strategies with HINT_INLINE (ds_${value % 2}, t_hint_$->{value % 3}),
//     as a ShardingSphere user writes them. Its column tenant is no
//     sharding column; each step runs under
//     shardconf.WithHint(ctx, "t_hint", Hint{Database: {tenant}, Table:
//     {tenant}}) for the tenant it is about (sqlhook: the context of
//     ExecContext, of each execution of a prepared statement, of each
//     statement of a transaction; GORM: db.WithContext, per call inside a
//     Transaction or a PrepareStmt session), with the tenant in various Go
//     integer types, and a row is placed right when it sits where the
//     hint of its stored tenant routes (RouteContext). Steps insert
//     (one row, several), update and delete by id, by tenant and under
//     several hint values at once (the union of their tables), upsert,
//     GORM Save and CreateInBatches, run a prepared statement under a
//     different hint at each execution, take the data source from an
//     AllTables hint and the table from t_hint's own; and must be refused:
//     no hint (ErrMissingShardingKey; with scatter an UPDATE/DELETE goes
//     everywhere), a hint for a table routed by a column or, for every
//     table, on the broadcast table (ErrUnusedHint). An UPDATE setting
//     tenant under the old tenant's hint is accepted, as ShardingSphere
//     runs it (a hint strategy has no column to check): the row stays
//     where the old hint put it. Steps keep the new tenant in the same
//     table; -difftest.hinttenant also moves it to another table's
//     tenant, which the placement check then reports (the caller's
//     convention that tenant and hint agree is broken, not a shardkey
//     rule).
//   - t_algo is routed by k through Go algorithms registered with
//     shardconf.RegisterAlgorithm (once per process, under names only this
//     package uses): the data source by DIFFTEST_SPLIT (k below 100 or
//     not, named by type:) and the table by floor(k/10) mod 2 (named as
//     CLASS_BASED with algorithmClassName), both RangeShardingAlgorithms,
//     so that =, IN, BETWEEN, open and half-open ranges, OR of ranges,
//     NOT BETWEEN, text values and a prepared range UPDATE are routed by
//     DoSharding and DoRangeSharding; k changed to a value of the same
//     target is allowed, of another refused.
//
// CI runs TestWritesAgreeWithOracle/{postgres,mariadb,sqlite}/{sqlhook,gorm}
// with a fixed seed and a few hundred steps (SHARDKEY_REQUIRE_DB=1 makes a
// missing server fail the test; under -short both randomized runs skip). A
// long run is one command:
//
//	SHARDKEY_REQUIRE_DB=1 go test ./internal/difftest/ -run TestWritesAgreeWithOracle -timeout 0 -v \
//	    -difftest.steps=100000 -difftest.seed=7
//
// Other flags: -difftest.db=postgres,mariadb,sqlite and
// -difftest.client=sqlhook,gorm choose the runs; -difftest.skip=REGEXP
// leaves out operation kinds (to look past a known divergence);
// -difftest.shrinktime=1m gives shrinking more time (15s by default);
// -difftest.keepgoing resets the tables after a divergence and goes on,
// counting divergences per operation kind; -difftest.shrink=false skips
// shrinking; -difftest.name=WORD puts WORD in the test databases' names,
// so that two runs at the same time do not share databases. The summary logged at the end gives, per operation kind, how
// many steps were accepted, refused by shardkey, or failed in the database.
//
// # Reads
//
// The differential read tester (TestReadsAgreeWithOracle) runs seeded
// random SELECTs through sqlhook (WithScatter), GORM query-builder calls
// through gormplugin (WithScatter, WithDataSources), and both (builder
// calls and Raw SELECTs) through GORM opened on sqlhook's *sql.DB. They
// read t_read, sharded across two data sources by user_id MOD 2 and two
// tables in each by k MOD 2, and the same statement, or the same GORM
// call, reads one unsharded oracle table holding the same generated rows
// (a few hundred, with NULLs, ties, case variants, trailing spaces,
// negative sharding values, bigints at their limits, DECIMAL(12,3),
// DOUBLE, TIMESTAMP and BOOLEAN columns). The column name is in a binary
// collation (utf8mb4_bin on MariaDB, "C" on PostgreSQL, BINARY on SQLite)
// declared with WithBinaryCollation; label is in one that orders otherwise
// (MariaDB's default, ICU on PostgreSQL, NOCASE on SQLite), and a read
// whose merge may compare it (ordering, grouping, aggregating or DISTINCT
// over it) runs without the declaration, so that it must be refused.
//
// The statements cover projections (columns, *, expressions, aliases),
// COUNT(*), COUNT(x), COUNT(DISTINCT x), SUM, MIN, MAX, AVG (DISTINCT
// too), aggregates of and inside expressions, functions and casts, DISTINCT,
// GROUP BY columns and expressions with HAVING, ORDER BY by column,
// expression, position and alias with ASC/DESC, NULLS FIRST/LAST, USING
// and explicit COLLATE, LIMIT/OFFSET as literals and placeholders (and
// LIMIT m, n), and WHERE with =, IN, ranges, BETWEEN, OR, NOT and IS NULL
// on sharding and other columns; some run through Prepare or in a
// transaction. The GORM calls cover Find, First, Last, Take, Count,
// Pluck, Distinct, Select aggregates with Group and Having into structs
// (Find and Scan) and maps, Order (text and clause.OrderByColumn), Limit,
// Offset and FindInBatches, with conditions as text, named arguments,
// slices, maps and structs, some in PrepareStmt mode.
//
// Results are compared as SQL allows: as multisets without ORDER BY; in
// order with ORDER BY, rows tied on the ORDER BY keys in any order among
// themselves; where LIMIT/OFFSET cuts a run of tied rows, the rows shown
// may be any of that run's (the oracle's rows without LIMIT, with the
// ORDER BY keys appended, say which rows tie). Exact numbers compare as
// the database spells them (a DECIMAL's scale included; as keys, by
// value), floating-point ones to 7 significant digits (a float sum's
// rounding depends on the order rows are added in, so rows tied on a
// float key to 7 digits may come either way); texts compare as the
// column's collation makes them equal (MariaDB ignores trailing spaces,
// and case too in its default collation). Result column names are
// compared as well, and so are the database type names the driver reports
// and each value's Go type (what a scan into any sees; not for GORM map
// scans on SQLite, whose types follow whichever row comes first). A
// statement is agreed, refused (an error wrapping sqlhook.ErrUnsupported
// or gormplugin.ErrUnsupported), divergent (any other difference, or any
// other error where the oracle answered) or skipped (the oracle itself
// failed). Each divergence is printed with the seed, the step, the
// statement, both results, a smaller statement that still diverges and
// the command that replays it. The summary gives, per database and layer,
// the counts, the share refused (of the statements the oracle answered)
// and the refusals grouped by reason.
//
// Families of their own (sql.tricky, gorm.tricky) try forms whose answer
// needs rows of several shards at once: window functions, subqueries,
// CTEs and derived tables on the logic table, UNION, self-joins, DISTINCT
// ON, FILTER, ROLLUP, GROUP BY a position or an alias; they must be
// merged right or refused, and most are refused, so the refusal share is
// given with and without them. TestPinnedReadsAgreeOrAreRefused runs fixed
// smallest-form reads whose merged answer can be subtly wrong, whatever the
// seed.
//
// CI runs a fixed seed; it fails on any divergence or on a refusal share
// (the tricky families aside) above readMaxRefused. The environment sets
// a long run:
//
//	SHARDKEY_REQUIRE_DB=1 SHARDKEY_DIFFREAD_STEPS=20000 SHARDKEY_DIFFREAD_SEED=7 \
//	    go test ./internal/difftest/ -run TestReadsAgreeWithOracle -timeout 0 -v
//
// SHARDKEY_DIFFREAD_DB (postgres,mariadb,sqlite) and
// SHARDKEY_DIFFREAD_LAYER (sqlhook,gorm,gorm+sqlhook) choose the runs;
// SHARDKEY_DIFFREAD_ROWS sets the number of rows (300);
// SHARDKEY_DIFFREAD_ONLY=N runs step N alone (to replay a divergence);
// SHARDKEY_DIFFREAD_MAXREFUSED the share refused that fails the test;
// SHARDKEY_DIFFREAD_NAME puts a word in the test databases' names
// (diffread_...), so that two runs at the same time do not share them.
//
// # Two-phase commit
//
// The two-phase-commit tester (twophase_test.go: TestTwoPhaseCommitAgreesWithOracle,
// TestTwoPhaseConcurrentTransfersApplyExactlyTheCommittedOnes) runs seeded
// random transactions through sqlhook and gormplugin with WithTwoPhaseCommit
// on a PostgreSQL pair and a MariaDB pair, and the same statements in one
// transaction on the oracle, injecting faults at every stage of the commit.
// After each transaction and recovery the oracle has applied it exactly when
// Commit returned nil or recovery committed it, the physical tables equal
// the oracle, and no prepared branch is left.
package difftest
