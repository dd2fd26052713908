// Package dbtest gives tests their own database on the PostgreSQL and
// MariaDB/MySQL servers every development and CI machine runs (.ci/run
// starts them). Servers are found through SHARDKEY_PG_DSN and
// SHARDKEY_MYSQL_DSN, defaulting to the loopback servers. When a server is
// unreachable the test is skipped with the reason, unless
// SHARDKEY_REQUIRE_DB=1 (set by .ci/run), which makes it fail.
//
// Under go test -short every test that asks for a database is skipped,
// whatever SHARDKEY_REQUIRE_DB says: -short is the fast inner loop, and
// CI, which sets SHARDKEY_REQUIRE_DB=1, never passes -short. SkipShort
// does the same for other slow tests (subprocesses, long randomized runs)
// of modules that already import dbtest.
package dbtest
