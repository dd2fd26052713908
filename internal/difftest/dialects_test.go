package difftest

// The testers run sqlhook on PostgreSQL, MariaDB and SQLite: link the
// compiler of each, as a program does by importing the dialect packages.
import (
	_ "github.com/shardkey/shardkey/sqlhook/mysql"
	_ "github.com/shardkey/shardkey/sqlhook/postgres"
	_ "github.com/shardkey/shardkey/sqlhook/sqlite"
)
