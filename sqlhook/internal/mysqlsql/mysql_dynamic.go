package mysqlsql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// mysqlDynamicSQL refuses PREPARE ... FROM 'text' and SET @var = 'text'
// when the text names a logic or broadcast table: the statement prepared
// from it would run unrewritten on whichever data source EXECUTE reaches
// (the default one), reading or writing its unsharded copy. Text built at
// run time (CONCAT, hex literals, a variable set elsewhere) cannot be
// seen; do not build SQL naming logic tables in the database.
func mysqlDynamicSQL(h *ir.Schema, q string, toks []ir.MyTok, stmts []ast.StmtNode) error {
	dynamic := false
	for _, s := range stmts {
		switch s.(type) {
		case *ast.PrepareStmt, *ast.SetStmt:
			dynamic = true
		}
	}
	if !dynamic {
		return nil
	}
	for _, t := range toks {
		if t.Kind != '\'' {
			continue
		}
		low := strings.ToLower(q[t.Start:t.End])
		for _, name := range h.Logic {
			if ir.MyContainsWord(low, name) {
				return fmt.Errorf("%w: text naming logic table %s handed to PREPARE or a variable: the prepared statement would run unrewritten on one data source", ir.ErrUnsupported, name)
			}
		}
	}
	return nil
}
