package ir

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The coverage check: every place a statement names a logic or broadcast
// table must be a table position the plan rewrites, or a place the parse
// tree shows is not a table reference (a column, an alias, a function
// name, a value). Anything else runs unrewritten on the default data
// source and reads or writes its unsharded copy (or one copy of a
// broadcast table), so it is refused with ErrUnsupported before anything
// runs. This file holds what every dialect's check shares;
// sqlhook/internal/pgsql/pg_coverage.go is the PostgreSQL and SQLite check.

// IsLogicName reports whether an identifier's value (unquoted, as the
// dialect reads it) names a sharded or broadcast table.
func (h *Schema) IsLogicName(name string) bool {
	s, b := h.Classify(name)
	return s || b
}

// MentionedName returns the first logic or broadcast table name that
// occurs in s as a whole word (not inside a longer identifier such as
// t_order_id_seq), case-insensitively, also after decoding backslash
// escapes (E'\x74_order'); "" when none. It is the test for text the
// database may run as SQL later: procedural bodies and strings handed to
// functions.
func (h *Schema) MentionedName(s string) string {
	low := strings.ToLower(s)
	if strings.Contains(low, "u&") {
		return "(spelled with U& escapes)" // a name sqlhook does not decode here
	}
	for _, text := range []string{low, strings.ToLower(UnescapeBackslashes(s))} {
		for _, name := range h.Logic {
			if ContainsWord(text, name) {
				return name
			}
		}
	}
	return ""
}

// ContainsWord reports whether word occurs in s with no identifier
// character right before or after it.
func ContainsWord(s, word string) bool {
	if word == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(s[from:], word)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(word)
		if (i == 0 || !isWordByte(s[i-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		from = i + 1
	}
}

// isWordByte: a byte that continues an unquoted identifier in any of the
// dialects (letters, digits, _, $ and every byte of a multibyte
// character).
func isWordByte(c byte) bool { return IsIdentChar(c) || c == '$' || c >= 0x80 }

// UnescapeBackslashes decodes the backslash escapes of PostgreSQL's
// E'...' strings (\xHH, \ooo, \uXXXX, \UXXXXXXXX, \c) wherever they occur,
// so that a name spelled with escapes inside a body is still seen.
func UnescapeBackslashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		n, width, ok := decodeEscape(s[i+1:])
		if !ok {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		if n < utf8.RuneSelf {
			b.WriteByte(byte(n))
		} else {
			b.WriteRune(rune(n))
		}
		i += width
	}
	return b.String()
}

// decodeEscape reads the escape after a backslash: its code and length.
func decodeEscape(s string) (code uint64, width int, ok bool) {
	digits := func(start, maxLen, base int) (uint64, int, bool) {
		end := start
		for end < len(s) && end-start < maxLen && isDigitIn(s[end], base) {
			end++
		}
		if end == start {
			return 0, 0, false
		}
		v, err := strconv.ParseUint(s[start:end], base, 32)
		return v, end, err == nil
	}
	switch {
	case s[0] == 'x':
		return digits(1, 2, 16)
	case s[0] == 'u':
		return digits(1, 4, 16)
	case s[0] == 'U':
		return digits(1, 8, 16)
	case s[0] >= '0' && s[0] <= '7':
		return digits(0, 3, 8)
	}
	return 0, 0, false
}

func isDigitIn(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case c == '8' || c == '9':
		return base >= 10
	case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
		return base == 16
	}
	return false
}

// spellings are the lower-case forms in which each logic name can appear
// in a statement's text: as is, and with a quote character doubled inside
// a quoted identifier. MentionsLogic looks for them.
func Spellings(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		for _, s := range []string{n, strings.ReplaceAll(n, `"`, `""`), strings.ReplaceAll(n, "`", "``")} {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// NotCovered is the refusal of a statement naming a logic table outside
// the plan's table positions.
func NotCovered(name, where string) error {
	return fmt.Errorf("%w: logic table %s is named %s, which sqlhook cannot route; the statement would run unchanged on the default data source", ErrUnsupported, name, where)
}
