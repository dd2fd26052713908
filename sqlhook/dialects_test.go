package sqlhook

// The engine's tests run every dialect: link each one's compiler, as a
// program does by importing the dialect packages.
import (
	_ "github.com/shardkey/shardkey/sqlhook/mysql"
	_ "github.com/shardkey/shardkey/sqlhook/postgres"
	_ "github.com/shardkey/shardkey/sqlhook/sqlite"
)
