package ir

import (
	"fmt"
	"strings"
	"unicode"
)

// A MySQL statement is rewritten at byte offsets of its own text: TiDB's
// tree says which identifiers are table references, this tokenizer says
// where they are. It reads the text as TiDB's lexer does (so that both
// agree on what is code), not as a full MySQL lexer: only the token
// boundaries matter here.

// myTok is a token of a MySQL statement. Comments and white space are not
// tokens.
type MyTok struct {
	Start, End int
	Kind       byte // 'w' word (unquoted name, keyword or number), '`' quoted name, '\'' string or literal, '?' placeholder, or the punctuation byte
}

// execComment is why a statement's executable comments stop the rewrite.
type execComment struct{ Text string }

// lexMySQL splits q into tokens. An executable comment (/*! */, /*M! */,
// /*T! */) is reported, not read: see compileMySQL.
func LexMySQL(q string) ([]MyTok, *execComment, error) {
	var out []MyTok
	var exec *execComment
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case c == '#':
			i = lineEnd(q, i)
		case c == '-' && strings.HasPrefix(q[i:], "--") && (i+2 == len(q) || unicode.IsSpace(rune(q[i+2]))):
			i = lineEnd(q, i)
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				return nil, nil, fmt.Errorf("unterminated comment at byte %d", i)
			}
			body := q[i+2:]
			if exec == nil && (strings.HasPrefix(body, "!") || strings.HasPrefix(body, "M!") || strings.HasPrefix(body, "T!")) {
				exec = &execComment{Text: q[i : i+2+j+2]}
			}
			i += 2 + j + 2
		case c == '`':
			j, err := quotedEnd(q, i, false)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, MyTok{i, j, '`'})
			i = j
		case c == '\'' || c == '"':
			j, err := quotedEnd(q, i, true)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, MyTok{i, j, '\''})
			i = j
		case c == '?':
			out = append(out, MyTok{i, i + 1, '?'})
			i++
		case myWordByte(c):
			j := i + 1
			for j < len(q) && myWordByte(q[j]) {
				j++
			}
			// X'..', B'..' and N'..' are one literal.
			if j == i+1 && j < len(q) && q[j] == '\'' && strings.ContainsRune("xXbBnN", rune(c)) {
				k, err := quotedEnd(q, j, true)
				if err != nil {
					return nil, nil, err
				}
				out = append(out, MyTok{i, k, '\''})
				i = k
				continue
			}
			out = append(out, MyTok{i, j, 'w'})
			i = j
		default:
			out = append(out, MyTok{i, i + 1, c})
			i++
		}
	}
	return out, exec, nil
}

func lineEnd(q string, i int) int {
	if j := strings.IndexByte(q[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(q)
}

// quotedEnd is the end of the quoted token starting at i: a doubled quote
// stands for itself, and in strings a backslash escapes the next byte
// (MySQL's default, without NO_BACKSLASH_ESCAPES).
func quotedEnd(q string, i int, backslash bool) (int, error) {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		switch {
		case backslash && q[j] == '\\':
			j++
		case q[j] == quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated %c at byte %d", quote, i)
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
