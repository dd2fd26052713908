package gormplugin

import (
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/sqltok"
)

// Statements that end or reshape a transaction, sent as raw SQL
// (tx.Exec("COMMIT")), would act on one branch of a two-phase
// transaction only: a COMMIT on PostgreSQL commits that data source's
// work at once (the other data sources may then roll back), a SAVEPOINT
// exists on one branch. They are refused before they run; GORM's own
// Commit, Rollback, SavePoint and RollbackTo act on every branch.

// txControl returns the statement of query that controls transactions
// ("" when none does). A text of several statements is refused whole:
// where one ends depends on how the session reads strings (PostgreSQL with
// standard_conforming_strings off takes a backslash in '...' for an
// escape), which the text itself does not say. GORM never sends one.
func txControl(query string, d dialect.Name) string {
	if i := strings.IndexByte(query, ';'); i >= 0 && strings.TrimRight(query[i:], "; \t\r\n") != "" {
		return "a text of several statements"
	}
	mode := sqltok.PostgreSQL
	switch d {
	case dialect.MySQL:
		mode = sqltok.MySQL
	case dialect.SQLite:
		mode = sqltok.SQLite
	}
	l := sqltok.New(query, mode)
	var st stmtWords
	for {
		t := l.Next()
		switch t.Kind {
		case sqltok.EOF, sqltok.Error:
			return st.controls(d)
		case sqltok.Space, sqltok.Comment, sqltok.ExecCommentStart, sqltok.ExecCommentEnd:
			continue
		case sqltok.Punct:
			if t.Text(query) == ";" {
				if c := st.controls(d); c != "" {
					return c
				}
				st = stmtWords{}
				continue
			}
		}
		w := ""
		if t.Kind == sqltok.Ident || t.Kind == sqltok.Variable {
			w = strings.ToUpper(strings.TrimLeft(t.Text(query), "@"))
		}
		st.add(w)
	}
}

// stmtWords is what txControl keeps of a statement: its first two
// tokens (keywords upper case, "" for anything else) and whether it
// names autocommit.
type stmtWords struct {
	n          int
	first, sec string
	autocommit bool
}

func (s *stmtWords) add(w string) {
	switch s.n {
	case 0:
		s.first = w
	case 1:
		s.sec = w
	}
	s.n++
	if w == "AUTOCOMMIT" || w == "SESSION.AUTOCOMMIT" {
		s.autocommit = true
	}
}

// controls names the statement when it controls transactions.
func (s *stmtWords) controls(d dialect.Name) string {
	switch s.first {
	case "BEGIN", "START", "COMMIT", "ROLLBACK", "END", "ABORT", "SAVEPOINT", "RELEASE", "XA":
		return s.first
	case "PREPARE": // PREPARE TRANSACTION; PREPARE name AS ... is a prepared statement
		if s.sec == "TRANSACTION" {
			return "PREPARE TRANSACTION"
		}
	case "SET": // MySQL: SET autocommit = 1 commits the transaction
		if d == dialect.MySQL && s.autocommit {
			return "SET autocommit"
		}
	}
	return ""
}

// refuseTxControl is the error for such a statement.
func refuseTxControl(query string, d dialect.Name) error {
	c := txControl(query, d)
	if c == "" {
		return nil
	}
	return fmt.Errorf("%w: %s in a two-phase transaction would act on one data source's branch only; use the transaction's Commit, Rollback, SavePoint and RollbackTo", ErrUnsupported, c)
}
