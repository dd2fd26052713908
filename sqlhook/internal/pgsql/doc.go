// Package pgsql compiles PostgreSQL statements, and SQLite statements
// respelled into PostgreSQL's grammar (ir.SQLiteRespell), into ir plans.
// It parses with libpg_query, the PostgreSQL server's own parser: through
// github.com/pganalyze/pg_query_go with cgo and github.com/wasilibs/go-pgquery
// (WebAssembly under wazero) without. sqlhook/postgres and sqlhook/sqlite
// register Compile.
package pgsql
