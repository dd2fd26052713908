package sqlhook

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// mysqlDynamicSQL refuses PREPARE ... FROM 'text' and SET @var = 'text'
// when the text names a logic or broadcast table: the statement prepared
// from it would run unrewritten on whichever data source EXECUTE reaches
// (the default one), reading or writing its unsharded copy. Text built at
// run time (CONCAT, hex literals, a variable set elsewhere) cannot be
// seen; do not build SQL naming logic tables in the database.
func (h *hook) mysqlDynamicSQL(q string, toks []myTok, stmts []ast.StmtNode) error {
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
		if t.kind != '\'' {
			continue
		}
		low := strings.ToLower(q[t.start:t.end])
		for _, name := range h.logic {
			if myContainsWord(low, name) {
				return fmt.Errorf("%w: text naming logic table %s handed to PREPARE or a variable: the prepared statement would run unrewritten on one data source", ErrUnsupported, name)
			}
		}
	}
	return nil
}

// myContainsWord reports whether word occurs in s with no identifier byte
// right before or after it.
func myContainsWord(s, word string) bool {
	for from := 0; word != ""; {
		i := strings.Index(s[from:], word)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(word)
		if (i == 0 || !myWordByte(s[i-1])) && (end == len(s) || !myWordByte(s[end])) {
			return true
		}
		from = i + 1
	}
	return false
}
