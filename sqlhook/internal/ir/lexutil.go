package ir

import "strings"

// LeadingComments is the whitespace and comments before the first token.
func LeadingComments(q string) string {
	i := 0
	for i < len(q) {
		switch {
		case q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r':
			i++
		case strings.HasPrefix(q[i:], "/*") && !strings.HasPrefix(q[i:], "/*!") && !strings.HasPrefix(q[i:], "/*+"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				return q[:i]
			}
			i += j + 4
		case strings.HasPrefix(q[i:], "-- ") || q[i] == '#':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				return q + "\n"
			}
			i += j + 1
		default:
			return q[:i]
		}
	}
	return q[:i]
}

func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

func SetOnce(s *string, v string) {
	if *s == "" {
		*s = v
	}
}

func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// span is the text of an INSERT value, from its first token to its last.
type Span struct{ A, B int }

// MyContainsWord reports whether word occurs in s with no identifier byte
// right before or after it.
func MyContainsWord(s, word string) bool {
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
