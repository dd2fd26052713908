package mysqlsql

import (
	"testing"

	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"github.com/shardkey/shardkey/sqlhook/internal/ir/irtest"
)

// TestCompilesMySQLAsGolden compiles the statements of testdata/*.txt and
// compares the plans and the SQL one target receives with the text
// written beside them (go test -update rewrites it).
func TestCompilesMySQLAsGolden(t *testing.T) {
	irtest.Run(t, ir.MySQL, Compile, "testdata/*.txt")
}
