package ir

import (
	"fmt"
	"strings"
)

// MySQLPreparedText refuses PREPARE name FROM x and EXECUTE IMMEDIATE x
// (MariaDB) unless x is a plain string whose value names no logic,
// broadcast or physical table. The statement prepared from it would run
// unrewritten on the data source the connection is on (the default one),
// so a hex or bit literal, a variable or an expression, whose value the
// router cannot read, is refused too. It works on tokens, before the
// grammar: TiDB's parser reads neither EXECUTE IMMEDIATE nor a hex
// PREPARE text, and a statement it cannot parse would pass through.
func (h *Schema) MySQLPreparedText(q string, toks []MyTok) error {
	for i := range toks {
		var x int
		switch {
		case tokWord(q, toks, i, "PREPARE") && i+2 < len(toks) && IdentText(q, toks[i+1]) != "" && tokWord(q, toks, i+2, "FROM"):
			x = i + 3
		case tokWord(q, toks, i, "EXECUTE") && tokWord(q, toks, i+1, "IMMEDIATE"):
			x = i + 2
		default:
			continue
		}
		text, ok := myStringValue(q, toks, x)
		if !ok {
			return fmt.Errorf("%w: the SQL text of PREPARE or EXECUTE IMMEDIATE is not a plain string (a hex or bit literal, a variable or an expression): sqlhook cannot see which tables it names, and it would run unrewritten on the default data source", ErrUnsupported)
		}
		if name := h.namesTable(text); name != "" {
			return fmt.Errorf("%w: SQL text of PREPARE or EXECUTE IMMEDIATE names table %s: the prepared statement would run unrewritten on one data source", ErrUnsupported, name)
		}
		// The text may itself hand text on; the server refuses that, but
		// it is read here too rather than trusted to stay so.
		inner, _, err := LexMySQL(text)
		if err != nil {
			continue // the server cannot read it either
		}
		if err := h.MySQLPreparedText(text, inner); err != nil {
			return err
		}
	}
	return nil
}

// tokWord reports whether token i of q is the unquoted word w.
func tokWord(q string, toks []MyTok, i int, w string) bool {
	return i >= 0 && i < len(toks) && toks[i].Kind == 'w' && strings.EqualFold(q[toks[i].Start:toks[i].End], w)
}

// myStringValue is the value of the string literal at token i, with the
// adjacent string literals MySQL joins to it ('a' 'b' is 'ab'); ok is
// false when token i is no plain string (X'..', B'..', 0x.., @v, ...).
func myStringValue(q string, toks []MyTok, i int) (string, bool) {
	var b strings.Builder
	n := 0
	for ; i < len(toks) && toks[i].Kind == '\''; i++ {
		s := q[toks[i].Start:toks[i].End]
		if s[0] == 'n' || s[0] == 'N' {
			s = s[1:] // N'..' is a string in the national character set
		}
		if s[0] != '\'' && s[0] != '"' {
			return "", false // X'..' or B'..'
		}
		b.WriteString(MyUnescape(s[1:len(s)-1], s[0]))
		n++
	}
	return b.String(), n > 0
}

// MyUnescape applies MySQL's string escapes (without NO_BACKSLASH_ESCAPES):
// a doubled quote is the quote, \0 \b \n \r \t \Z are control bytes, \%
// and \_ keep their backslash, and any other \c is c (so 't_\dict' is
// t_dict).
func MyUnescape(s string, quote byte) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == quote && i+1 < len(s) && s[i+1] == quote:
			i++
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case '0':
				c = 0
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'Z':
				c = 0x1a
			case '%', '_':
				b.WriteByte('\\')
				c = e
			default:
				c = e
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// namesTable is a logic, broadcast or physical table named as a word in
// text (any case), or "".
func (h *Schema) namesTable(text string) string {
	low := strings.ToLower(text)
	for _, name := range h.Spell {
		if MyContainsWord(low, name) {
			return name
		}
	}
	for name := range h.Physical {
		if MyContainsWord(low, name) {
			return name
		}
	}
	return ""
}
