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

type sessTokKind uint8

const (
	slWord    sessTokKind = iota + 1 // unquoted identifier or keyword; text lower-cased
	slQuoted                         // quoted identifier; text as written inside the quotes
	slString                         // string literal; text as written between the quotes
	slNumber                         // numeric literal
	slParam                          // placeholder: ?, $1, :name, SQLite's @name
	slUserVar                        // MySQL @name, @'name', @`name`
	slSysVar                         // MySQL @@name, @@session.name (text: what follows @@, lower-cased)
	slOp                             // operator or punctuation; ":=" is one sessToken
)

type sessToken struct {
	kind sessTokKind
	text string
}

var errSessLex = errors.New("unterminated string, identifier or comment")

// sessLex splits q into tokens in dialect d, dropping comments and spaces.
func sessLex(d Dialect, q string) ([]sessToken, error) {
	var toks []sessToken
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
			n, code, err := slBlockComment(d, q[i:])
			if err != nil {
				return toks, err
			}
			if code {
				// An executable comment: drop its marker and version,
				// read what is inside, and its closing */ later.
				i += slExecCommentPrefix(q[i:])
				continue
			}
			i += n
		case c == '*' && d == MySQL && i+1 < len(q) && q[i+1] == '/':
			i += 2 // the end of an executable comment
		case c == '\'':
			n, err := slQuotedLen(q[i:], '\'', d == MySQL || d == PostgreSQL && slEscapeString(q, i))
			if err != nil {
				return toks, err
			}
			toks = append(toks, sessToken{kind: slString, text: q[i+1 : i+n-1]})
			i += n
		case c == '"' && d == MySQL:
			n, err := slQuotedLen(q[i:], '"', true)
			if err != nil {
				return toks, err
			}
			toks = append(toks, sessToken{kind: slString, text: q[i+1 : i+n-1]})
			i += n
		case c == '"' || c == '`' || c == '[' && d == SQLite:
			closer := c
			if c == '[' {
				closer = ']'
			}
			n, err := slQuotedLen(q[i:], closer, false)
			if err != nil {
				return toks, err
			}
			toks = append(toks, sessToken{kind: slQuoted, text: slUnquote(q[i+1:i+n-1], closer)})
			i += n
		case c == '$' && d == PostgreSQL && i+1 < len(q) && !slDigit(q[i+1]):
			n, err := slDollarQuoted(q[i:])
			if err != nil {
				return toks, err
			}
			toks = append(toks, sessToken{kind: slString})
			i += n
		case c == '@' && d == MySQL:
			n, t := slMySQLVar(q[i:])
			toks = append(toks, t)
			i += n
		case c == '?', c == '$', c == '@' && d == SQLite, c == ':' && i+1 < len(q) && slIdentStart(q[i+1]) && d != MySQL:
			j := i + 1
			for j < len(q) && slIdentChar(q[j]) {
				j++
			}
			toks = append(toks, sessToken{kind: slParam})
			i = j
		case slDigit(c) || c == '.' && i+1 < len(q) && slDigit(q[i+1]):
			j := i + 1
			for j < len(q) && (slIdentChar(q[j]) || q[j] == '.') {
				j++
			}
			toks = append(toks, sessToken{kind: slNumber})
			i = j
		case slIdentStart(c):
			j := i + 1
			for j < len(q) && (slIdentChar(q[j]) || q[j] == '$' || q[j] >= 0x80) {
				j++
			}
			toks = append(toks, sessToken{kind: slWord, text: strings.ToLower(q[i:j])})
			i = j
		case c == ':' && i+1 < len(q) && q[i+1] == '=':
			toks = append(toks, sessToken{kind: slOp, text: ":="})
			i += 2
		default:
			toks = append(toks, sessToken{kind: slOp, text: q[i : i+1]})
			i++
		}
	}
	return toks, nil
}

func slIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// slEscapeString reports whether the quote at q[i] opens a PostgreSQL
// E'...' string, where a backslash escapes the next character.
func slEscapeString(q string, i int) bool {
	return i > 0 && (q[i-1] == 'e' || q[i-1] == 'E') && (i == 1 || !slIdentChar(q[i-2]))
}

// slQuotedLen is the length of the quoted text at the start of s (quote s[0],
// closed by closer; a doubled closer is one character; backslash escapes
// when bs).
func slQuotedLen(s string, closer byte, bs bool) (int, error) {
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
	return 0, errSessLex
}

func slUnquote(s string, closer byte) string {
	if closer == ']' {
		return s
	}
	return strings.ReplaceAll(s, string([]byte{closer, closer}), string(closer))
}

// slBlockComment is the length of the /* comment at the start of s, and
// whether it is a MySQL executable comment. PostgreSQL comments nest.
func slBlockComment(d Dialect, s string) (int, bool, error) {
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
	return 0, false, errSessLex
}

// slExecCommentPrefix is the length of "/*!50100" or "/*M!100100".
func slExecCommentPrefix(s string) int {
	i := 3
	if s[2] == 'M' {
		i = 4
	}
	for i < len(s) && slDigit(s[i]) {
		i++
	}
	return i
}

// slDollarQuoted is the length of the $tag$...$tag$ string at the start of
// s; a lone $ (an operator in no dialect here) is one character.
func slDollarQuoted(s string) (int, error) {
	j := 1
	for j < len(s) && (slIdentChar(s[j])) {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return 1, nil
	}
	tag := s[:j+1]
	end := strings.Index(s[j+1:], tag)
	if end < 0 {
		return 0, errSessLex
	}
	return j + 1 + end + len(tag), nil
}

// slMySQLVar reads @name, @'name', @`name` or @@[scope.]name at the start
// of s.
func slMySQLVar(s string) (int, sessToken) {
	if len(s) > 1 && s[1] == '@' {
		j := 2
		for j < len(s) && (slIdentChar(s[j]) || s[j] == '.' || s[j] == '$') {
			j++
		}
		return j, sessToken{kind: slSysVar, text: strings.ToLower(s[2:j])}
	}
	if len(s) > 1 && (s[1] == '\'' || s[1] == '"' || s[1] == '`') {
		if n, err := slQuotedLen(s[1:], s[1], s[1] != '`'); err == nil {
			return 1 + n, sessToken{kind: slUserVar, text: strings.ToLower(s[2:n])}
		}
	}
	j := 1
	for j < len(s) && (slIdentChar(s[j]) || s[j] == '.' || s[j] == '$') {
		j++
	}
	return j, sessToken{kind: slUserVar, text: strings.ToLower(s[1:j])}
}

func slDigit(c byte) bool { return c >= '0' && c <= '9' }

func slIdentChar(c byte) bool {
	return c == '_' || slDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
