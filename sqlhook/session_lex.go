package sqlhook

import (
	"errors"
	"strings"
)

// A small SQL tokenizer for what the session layer must see in any
// statement, including those the routing core never parses (they name no
// logic table): the first keyword, user variables, function names, the
// words of SET and savepoint statements. It knows each dialect's quoting
// and comments so that nothing inside a string or a comment is taken for
// code, and MySQL's executable comments (/*! ... */, /*M! ... */) are
// read as the code they are.

type tokKind uint8

const (
	tkWord    tokKind = iota + 1 // unquoted identifier or keyword; text lower-cased
	tkQuoted                     // quoted identifier; text as written inside the quotes
	tkString                     // string literal (text not kept)
	tkNumber                     // numeric literal
	tkParam                      // placeholder: ?, $1, :name, SQLite's @name
	tkUserVar                    // MySQL @name, @'name', @`name`
	tkSysVar                     // MySQL @@name, @@session.name (text: what follows @@, lower-cased)
	tkOp                         // operator or punctuation; ":=" is one token
)

type token struct {
	kind tokKind
	text string
}

var errLex = errors.New("unterminated string, identifier or comment")

// lexSQL splits q into tokens in dialect d, dropping comments and spaces.
func lexSQL(d Dialect, q string) ([]token, error) {
	var toks []token
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(q) && q[i+1] == '-' && (d != MySQL || i+2 == len(q) || q[i+2] <= ' '), c == '#' && d == MySQL:
			// MySQL reads "--" as a comment only before a space or a
			// control character: 1--1 is 1 - -1.
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			n, code, err := blockComment(d, q[i:])
			if err != nil {
				return toks, err
			}
			if code {
				// An executable comment: drop its marker and version,
				// read what is inside, and its closing */ later.
				i += execCommentPrefix(q[i:])
				continue
			}
			i += n
		case c == '*' && d == MySQL && i+1 < len(q) && q[i+1] == '/':
			i += 2 // the end of an executable comment
		case c == '\'':
			n, err := quoted(q[i:], '\'', d == MySQL || d == PostgreSQL && isEscapeString(q, i))
			if err != nil {
				return toks, err
			}
			toks = append(toks, token{kind: tkString})
			i += n
		case c == '"' && d == MySQL:
			n, err := quoted(q[i:], '"', true)
			if err != nil {
				return toks, err
			}
			toks = append(toks, token{kind: tkString})
			i += n
		case c == '"' || c == '`' || c == '[' && d == SQLite:
			closer := c
			if c == '[' {
				closer = ']'
			}
			n, err := quoted(q[i:], closer, false)
			if err != nil {
				return toks, err
			}
			toks = append(toks, token{kind: tkQuoted, text: unquote(q[i+1:i+n-1], closer)})
			i += n
		case c == '$' && d == PostgreSQL && i+1 < len(q) && !lexDigit(q[i+1]):
			n, err := dollarQuoted(q[i:])
			if err != nil {
				return toks, err
			}
			toks = append(toks, token{kind: tkString})
			i += n
		case c == '@' && d == MySQL:
			n, t := mysqlVar(q[i:])
			toks = append(toks, t)
			i += n
		case c == '?', c == '$', c == '@' && d == SQLite, c == ':' && i+1 < len(q) && lexIdentStart(q[i+1]) && d != MySQL:
			j := i + 1
			for j < len(q) && lexIdentChar(q[j]) {
				j++
			}
			toks = append(toks, token{kind: tkParam})
			i = j
		case lexDigit(c) || c == '.' && i+1 < len(q) && lexDigit(q[i+1]):
			j := i + 1
			for j < len(q) && (lexIdentChar(q[j]) || q[j] == '.') {
				j++
			}
			toks = append(toks, token{kind: tkNumber})
			i = j
		case lexIdentStart(c):
			j := i + 1
			for j < len(q) && (lexIdentChar(q[j]) || q[j] == '$' || q[j] >= 0x80) {
				j++
			}
			toks = append(toks, token{kind: tkWord, text: strings.ToLower(q[i:j])})
			i = j
		case c == ':' && i+1 < len(q) && q[i+1] == '=':
			toks = append(toks, token{kind: tkOp, text: ":="})
			i += 2
		default:
			toks = append(toks, token{kind: tkOp, text: q[i : i+1]})
			i++
		}
	}
	return toks, nil
}

func lexIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// isEscapeString reports whether the quote at q[i] opens a PostgreSQL
// E'...' string, where a backslash escapes the next character.
func isEscapeString(q string, i int) bool {
	return i > 0 && (q[i-1] == 'e' || q[i-1] == 'E') && (i == 1 || !lexIdentChar(q[i-2]))
}

// quoted is the length of the quoted text at the start of s (quote s[0],
// closed by closer; a doubled closer is one character; backslash escapes
// when bs).
func quoted(s string, closer byte, bs bool) (int, error) {
	for i := 1; i < len(s); i++ {
		switch {
		case bs && s[i] == '\\':
			i++
		case s[i] == closer:
			if i+1 < len(s) && s[i+1] == closer && closer != ']' {
				i++
				continue
			}
			return i + 1, nil
		}
	}
	return 0, errLex
}

func unquote(s string, closer byte) string {
	if closer == ']' {
		return s
	}
	return strings.ReplaceAll(s, string([]byte{closer, closer}), string(closer))
}

// blockComment is the length of the /* comment at the start of s, and
// whether it is a MySQL executable comment. PostgreSQL comments nest.
func blockComment(d Dialect, s string) (int, bool, error) {
	if d == MySQL && len(s) > 2 && (s[2] == '!' || strings.HasPrefix(s[2:], "M!")) {
		return 0, true, nil
	}
	depth := 0
	for i := 0; i+1 < len(s); i++ {
		switch {
		case s[i] == '/' && s[i+1] == '*':
			if depth > 0 && d != PostgreSQL {
				continue
			}
			depth++
			i++
		case s[i] == '*' && s[i+1] == '/':
			depth--
			i++
			if depth == 0 {
				return i + 1, false, nil
			}
		}
	}
	return 0, false, errLex
}

// execCommentPrefix is the length of "/*!50100" or "/*M!100100".
func execCommentPrefix(s string) int {
	i := 3
	if s[2] == 'M' {
		i = 4
	}
	for i < len(s) && lexDigit(s[i]) {
		i++
	}
	return i
}

// dollarQuoted is the length of the $tag$...$tag$ string at the start of
// s; a lone $ (an operator in no dialect here) is one character.
func dollarQuoted(s string) (int, error) {
	j := 1
	for j < len(s) && (lexIdentChar(s[j])) {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return 1, nil
	}
	tag := s[:j+1]
	end := strings.Index(s[j+1:], tag)
	if end < 0 {
		return 0, errLex
	}
	return j + 1 + end + len(tag), nil
}

// mysqlVar reads @name, @'name', @`name` or @@[scope.]name at the start
// of s.
func mysqlVar(s string) (int, token) {
	if len(s) > 1 && s[1] == '@' {
		j := 2
		for j < len(s) && (lexIdentChar(s[j]) || s[j] == '.' || s[j] == '$') {
			j++
		}
		return j, token{kind: tkSysVar, text: strings.ToLower(s[2:j])}
	}
	if len(s) > 1 && (s[1] == '\'' || s[1] == '"' || s[1] == '`') {
		if n, err := quoted(s[1:], s[1], s[1] != '`'); err == nil {
			return 1 + n, token{kind: tkUserVar, text: strings.ToLower(s[2:n])}
		}
	}
	j := 1
	for j < len(s) && (lexIdentChar(s[j]) || s[j] == '.' || s[j] == '$') {
		j++
	}
	return j, token{kind: tkUserVar, text: strings.ToLower(s[1:j])}
}

func lexDigit(c byte) bool { return c >= '0' && c <= '9' }

func lexIdentChar(c byte) bool {
	return c == '_' || lexDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
