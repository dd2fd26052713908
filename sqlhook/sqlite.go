package sqlhook

import (
	"fmt"
	"strconv"
	"strings"
)

// sqliteToPG respells a SQLite statement for the PostgreSQL grammar:
// `x` and [x] identifiers become "x", ? and ?NNN placeholders become $n.
// Everything else (strings, comments, "identifiers") is copied as is.
// Every placeholder becomes a template hole, so what reaches SQLite uses
// ? again.
func sqliteToPG(s string) (string, error) {
	var b strings.Builder
	b.Grow(len(s) + 8)
	highest := 0 // a bare ? takes the number after the highest so far, as in SQLite
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case (c == '\'' || c == '"') && pgOnlyPrefix(s, i):
			// E'...', U&'...' and U&"..." are escape syntax to PostgreSQL's
			// grammar but a name and a plain string to SQLite: the two
			// would read different statements.
			return "", fmt.Errorf("PostgreSQL escape syntax at offset %d, which SQLite reads otherwise", i)
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			return "", fmt.Errorf("$$ at offset %d: PostgreSQL reads a dollar-quoted string, SQLite does not", i)
		case c == '\'' || c == '"':
			j := endQuoted(s, i, c)
			if j < 0 {
				return "", fmt.Errorf("unterminated %c at offset %d", c, i)
			}
			b.WriteString(s[i:j])
			i = j
		case c == '`' || c == '[':
			closer := byte('`')
			if c == '[' {
				closer = ']'
			}
			j := strings.IndexByte(s[i+1:], closer)
			if c == '`' {
				j = endQuoted(s, i, '`') - i - 2
				if j < -1 {
					return "", fmt.Errorf("unterminated ` at offset %d", i)
				}
			}
			if j < 0 {
				return "", fmt.Errorf("unterminated %c at offset %d", c, i)
			}
			name := s[i+1 : i+1+j]
			if c == '`' {
				name = strings.ReplaceAll(name, "``", "`")
			}
			b.WriteByte('"')
			b.WriteString(strings.ReplaceAll(name, `"`, `""`))
			b.WriteByte('"')
			i += j + 2
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j])
			i += j
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return "", fmt.Errorf("unterminated comment at offset %d", i)
			}
			// SQLite's comments do not nest, PostgreSQL's do: a "/*" inside
			// must not open another one for the grammar reading this text.
			b.WriteString("/*")
			b.WriteString(strings.ReplaceAll(s[i+2:i+2+j], "/*", "/ *"))
			b.WriteString("*/")
			i += j + 4
		case c == '?':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n := highest + 1
			if j > i+1 {
				var err error
				if n, err = strconv.Atoi(s[i+1 : j]); err != nil || n < 1 || n > 32766 {
					return "", fmt.Errorf("bad placeholder %s", s[i:j])
				}
			}
			highest = max(highest, n)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i = j
		case (c == ':' || c == '@' || c == '$') && i+1 < len(s) && isIdentStart(s[i+1]):
			if c == ':' && i > 0 && s[i-1] == ':' {
				b.WriteByte(c)
				i++
				continue
			}
			return "", fmt.Errorf("named placeholder at offset %d: use ? placeholders", i)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// pgOnlyPrefix reports whether the quote at i follows E or U&, alone (not
// the end of a longer name).
func pgOnlyPrefix(s string, i int) bool {
	start := i - 1
	switch {
	case s[i] == '\'' && i >= 1 && (s[i-1] == 'e' || s[i-1] == 'E'):
	case i >= 2 && s[i-1] == '&' && (s[i-2] == 'u' || s[i-2] == 'U'):
		start = i - 2
	default:
		return false
	}
	return start == 0 || !isWordByte(s[start-1])
}

// endQuoted is the offset just past the quoted token starting at i, where
// a doubled quote stands for itself; -1 when unterminated.
func endQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return -1
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
