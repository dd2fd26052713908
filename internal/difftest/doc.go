// Package difftest is shardkey's differential write tester: a seeded random
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
// CI runs TestWritesAgreeWithOracle/{postgres,mariadb,sqlite}/{sqlhook,gorm}
// with a fixed seed and a few hundred steps (SHARDKEY_REQUIRE_DB=1 makes a
// missing server fail the test). A long run is one command:
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
package difftest
