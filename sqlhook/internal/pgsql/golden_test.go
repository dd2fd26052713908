package pgsql

import (
	"testing"

	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"github.com/shardkey/shardkey/sqlhook/internal/ir/irtest"
)

// TestCompilesPostgreSQLAsGolden compiles the statements of
// testdata/postgres_*.txt and compares the plans and the SQL one target
// receives with the text written beside them (go test -update rewrites it).
func TestCompilesPostgreSQLAsGolden(t *testing.T) {
	irtest.Run(t, ir.PostgreSQL, Compile, "testdata/postgres_*.txt")
}

// TestCompilesSQLiteAsGolden: SQLite statements are respelled into
// PostgreSQL's grammar and compiled by the same compiler.
func TestCompilesSQLiteAsGolden(t *testing.T) {
	irtest.Run(t, ir.SQLite, Compile, "testdata/sqlite_*.txt")
}
