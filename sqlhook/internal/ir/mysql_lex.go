package ir

import (
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/internal/sqltok"
)

// A MySQL statement is rewritten at byte offsets of its own text: TiDB's
// tree says which identifiers are table references, these tokens say
// where they are. They follow MySQL's lexical rules (internal/sqltok);
// where TiDB's lexer reads otherwise, the names located are checked by
// parsing the text again (mysqlsql's locate), so a difference refuses a
// statement rather than rewriting the wrong bytes.

// MyTok is a token of a MySQL statement. Comments and white space are not
// tokens.
type MyTok struct {
	Start, End int
	Kind       byte // 'w' word (unquoted name, keyword or number), '`' quoted name, '\'' string or literal, '?' placeholder, '@' variable, or the punctuation byte
}

// execComment is why a statement's executable comments stop the rewrite.
type execComment struct{ Text string }

// LexMySQL splits q into tokens, read by internal/sqltok with MySQL's
// rules. An executable comment (/*! */, /*M! */) or TiDB's /*T! */ is
// reported, not read: see mysqlsql.Compile.
func LexMySQL(q string) ([]MyTok, *execComment, error) {
	out := make([]MyTok, 0, len(q)/4+4) // one allocation: about a token per four bytes
	var exec *execComment
	execAt := -1 // the start of the executable comment being skipped
	l := sqltok.New(q, sqltok.MySQL)
	for {
		t := l.Next()
		text := q[t.Start:t.End]
		switch t.Kind {
		case sqltok.EOF:
			return out, exec, nil
		case sqltok.Error:
			return nil, nil, myLexError(q, t, execAt)
		case sqltok.Space:
		case sqltok.Comment:
			// TiDB's grammar, which says where the tables are, runs
			// /*T! ... */ as code; MySQL does not.
			if exec == nil && strings.HasPrefix(text, "/*T!") {
				exec = &execComment{Text: text}
			}
		case sqltok.ExecCommentStart:
			execAt = t.Start
		case sqltok.ExecCommentEnd:
			if exec == nil {
				exec = &execComment{Text: q[execAt:t.End]}
			}
			execAt = -1
		default:
			if execAt < 0 {
				out = append(out, MyTok{t.Start, t.End, myKind(t.Kind, text)})
			}
		}
	}
}

// myKind is the MyTok kind of a token.
func myKind(k sqltok.Kind, text string) byte {
	switch k {
	case sqltok.Ident, sqltok.Number:
		return 'w'
	case sqltok.QuotedIdent:
		return '`'
	case sqltok.String:
		return '\''
	case sqltok.Placeholder:
		return '?'
	case sqltok.Variable:
		return '@'
	}
	return text[0]
}

// myLexError says what the Error token t of q leaves open.
func myLexError(q string, t sqltok.Token, execAt int) error {
	text := q[t.Start:t.End]
	switch {
	case text == "":
		return fmt.Errorf("unterminated comment at byte %d", execAt)
	case strings.HasPrefix(text, "/*"):
		return fmt.Errorf("unterminated comment at byte %d", t.Start)
	}
	k := max(strings.IndexAny(text, "'\"`"), 0)
	return fmt.Errorf("unterminated %c at byte %d", text[k], t.Start+k)
}

func myWordByte(c byte) bool {
	return c == '_' || c == '$' || IsDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// identText is the name an identifier token spells, or "" for a token
// that is not one.
func IdentText(q string, t MyTok) string {
	s := q[t.Start:t.End]
	switch t.Kind {
	case '`':
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	case 'w':
		return s // a number never equals a logic table's name
	}
	return ""
}
