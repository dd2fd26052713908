package main

// sqlhook parses the SQL of the dialects a program imports (as
// database/sql drivers are registered): this example runs on SQLite.
import _ "github.com/shardkey/shardkey/sqlhook/sqlite"
