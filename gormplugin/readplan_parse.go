package gormplugin

import (
	"fmt"
	"strings"
)

// A small reader of the SQL fragments users give GORM's Select, Order,
// Group and Having: enough to recognise column references, `*`, the
// aggregates COUNT/SUM/MIN/MAX/AVG (with DISTINCT) and an alias. Anything
// else is an opaque expression, which a merge may pass through only when
// it holds no aggregate, window or subquery.

type tokKind uint8

const (
	tokIdent  tokKind = iota + 1 // a bare or quoted identifier; text unquoted
	tokNumber                    // an unsigned numeric literal
	tokString                    // a '...' literal; text unquoted
	tokPunct                     // ( ) , . * ? and operators
)

type token struct {
	kind   tokKind
	text   string
	quoted bool // a quoted identifier: never a keyword
	dquote bool // quoted with "...": a string literal on MySQL
	pos    int  // offset in the source
}

func (t token) is(kw string) bool {
	return t.kind == tokIdent && !t.quoted && strings.EqualFold(t.text, kw)
}

func (t token) punct(p string) bool { return t.kind == tokPunct && t.text == p }

// tokenize splits a fragment. It refuses what it cannot read safely:
// comments, unterminated quotes, named parameters.
func tokenize(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '`' || c == '[', c == '\'':
			t, n, err := quoted(s, i)
			if err != nil {
				return nil, err
			}
			out, i = append(out, t), i+n
		case isIdentByte(c) || c >= 0x80:
			j := i
			for j < len(s) && (isIdentByte(s[j]) || s[j] == '$' || s[j] >= 0x80) {
				j++
			}
			kind := tokIdent
			if c >= '0' && c <= '9' {
				kind = tokNumber
				for j < len(s) && (s[j] == '.' || isIdentByte(s[j])) {
					j++
				}
			}
			out = append(out, token{kind: kind, text: s[i:j], pos: i})
			i = j
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '/' && i+1 < len(s) && s[i+1] == '*', c == '#':
			return nil, fmt.Errorf("a comment in %q", s)
		case c == '@' || c == '$' || c == ':' && i+1 < len(s) && s[i+1] != ':':
			return nil, fmt.Errorf("a named parameter in %q", s)
		default:
			n := 1
			if i+1 < len(s) {
				switch s[i : i+2] {
				case "<=", ">=", "<>", "!=", "||", "::":
					n = 2
				}
			}
			out = append(out, token{kind: tokPunct, text: s[i : i+n], pos: i})
			i += n
		}
	}
	return out, nil
}

// quoted reads the quoted identifier or string literal at s[i:], and how
// many bytes it takes.
func quoted(s string, i int) (token, int, error) {
	c := s[i]
	if c != '\'' {
		end := c
		if c == '[' {
			end = ']'
		}
		j := strings.IndexByte(s[i+1:], end)
		if j < 0 {
			return token{}, 0, fmt.Errorf("unterminated quote in %q", s)
		}
		return token{kind: tokIdent, text: s[i+1 : i+1+j], quoted: true, dquote: c == '"', pos: i}, j + 2, nil
	}
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\':
			return token{}, 0, fmt.Errorf("a backslash in a string literal in %q", s)
		case s[j] == '\'' && j+1 < len(s) && s[j+1] == '\'':
			b.WriteByte('\'')
			j++
		case s[j] == '\'':
			return token{kind: tokString, text: b.String(), pos: i}, j + 1 - i, nil
		default:
			b.WriteByte(s[j])
		}
	}
	return token{}, 0, fmt.Errorf("unterminated string in %q", s)
}

// splitTop splits tokens at top-level commas.
func splitTop(ts []token) [][]token {
	var out [][]token
	depth, start := 0, 0
	for i, t := range ts {
		switch {
		case t.punct("("):
			depth++
		case t.punct(")"):
			depth--
		case t.punct(",") && depth == 0:
			out = append(out, ts[start:i])
			start = i + 1
		}
	}
	return append(out, ts[start:])
}

// source is the text a token range was read from.
func source(s string, ts []token) string {
	if len(ts) == 0 {
		return ""
	}
	last := ts[len(ts)-1]
	end := last.pos + len(last.text)
	switch {
	case last.kind == tokString:
		end = strings.IndexByte(s[last.pos+1:], '\'') + last.pos + 2
		for end < len(s) && s[end] == '\'' { // a doubled quote inside
			end = strings.IndexByte(s[end+1:], '\'') + end + 2
		}
	case last.quoted:
		end += 2
	}
	return s[ts[0].pos:end]
}

// aggregateNames are aggregate functions of PostgreSQL, MySQL/MariaDB and
// SQLite; one of these inside an expression the merge does not compute
// makes the query refused (each table would aggregate only its own rows).
var aggregateNames = map[string]bool{
	"count": true, "sum": true, "min": true, "max": true, "avg": true, "total": true,
	"group_concat": true, "string_agg": true, "array_agg": true, "json_agg": true, "jsonb_agg": true,
	"json_object_agg": true, "jsonb_object_agg": true, "json_arrayagg": true, "json_objectagg": true,
	"json_group_array": true, "json_group_object": true, "xmlagg": true,
	"bit_and": true, "bit_or": true, "bit_xor": true, "bool_and": true, "bool_or": true, "every": true,
	"std": true, "stddev": true, "stddev_pop": true, "stddev_samp": true, "variance": true,
	"var_pop": true, "var_samp": true, "corr": true, "covar_pop": true, "covar_samp": true,
	"regr_slope": true, "regr_intercept": true, "regr_count": true, "regr_r2": true, "regr_avgx": true,
	"regr_avgy": true, "regr_sxx": true, "regr_syy": true, "regr_sxy": true, "mode": true,
	"percentile_cont": true, "percentile_disc": true, "median": true, "any_value": true,
	"range_agg": true, "range_intersect_agg": true,
}

// opaqueProblem says why an expression cannot pass through a merge as it
// is: an aggregate, a window, a subquery. "" when it can.
func opaqueProblem(ts []token) string {
	for i, t := range ts {
		next := token{}
		if i+1 < len(ts) {
			next = ts[i+1]
		}
		switch {
		case t.kind == tokIdent && next.punct("(") && aggregateNames[strings.ToLower(t.text)]:
			// Quoted too: PostgreSQL and SQLite call "count"(*) as count(*).
			return "an aggregate inside an expression"
		case t.is("within") && next.is("group"):
			return "an ordered-set aggregate (WITHIN GROUP)"
		case t.is("filter") && next.punct("(") && i > 0 && ts[i-1].punct(")"):
			return "an aggregate with FILTER"
		case t.is("over"):
			return "a window function"
		case t.is("select"):
			return "a subquery"
		}
	}
	return ""
}

// colRef reads `col`, `t.col` or `schema.t.col` (quoted or not); the
// qualifier must be the logic table (or none).
func colRef(ts []token, logic string) (col string, ok bool) {
	if len(ts) == 0 || len(ts)%2 == 0 || len(ts) > 5 {
		return "", false
	}
	for i, t := range ts {
		if i%2 == 1 {
			if !t.punct(".") {
				return "", false
			}
			continue
		}
		if t.kind != tokIdent || (!t.quoted && reservedWords[strings.ToLower(t.text)]) {
			return "", false
		}
	}
	if len(ts) >= 3 && !strings.EqualFold(ts[len(ts)-3].text, logic) {
		return "", false
	}
	return strings.ToLower(ts[len(ts)-1].text), true
}

// reservedWords are words that are not column names where a column
// reference is expected.
var reservedWords = map[string]bool{
	"null": true, "true": true, "false": true, "distinct": true, "all": true, "as": true, "and": true,
	"or": true, "not": true, "is": true, "case": true, "when": true, "then": true, "else": true, "end": true,
	"select": true, "from": true, "current_date": true, "current_time": true, "current_timestamp": true,
	"localtime": true, "localtimestamp": true, "interval": true, "collate": true,
}

// aggCall is a recognised aggregate: FUNC([DISTINCT] arg).
type aggCall struct {
	fn       string // count, sum, min, max, avg
	distinct bool
	star     bool     // COUNT(*)
	argCol   string   // the argument when it is a column reference, else ""
	arg      []token  // the argument's tokens (parentheses GORM adds stripped)
	argText  string   // the argument's source text
	parts    []string // COUNT(DISTINCT a, b): each argument's source text
}

// readAgg reads ts as one aggregate call; ok is false when ts is not a
// call of COUNT/SUM/MIN/MAX/AVG.
func readAgg(s string, ts []token, logic string) (aggCall, bool) {
	if len(ts) < 3 || ts[0].kind != tokIdent || ts[0].quoted || !ts[1].punct("(") || !ts[len(ts)-1].punct(")") {
		return aggCall{}, false
	}
	fn := strings.ToLower(ts[0].text)
	switch fn {
	case "count", "sum", "min", "max", "avg":
	default:
		return aggCall{}, false
	}
	inner := ts[2 : len(ts)-1]
	if !balanced(inner) {
		return aggCall{}, false // count(a) + count(b)
	}
	a := aggCall{fn: fn}
	if len(inner) > 0 && inner[0].is("distinct") {
		a.distinct, inner = true, inner[1:]
	} else if len(inner) > 0 && inner[0].is("all") {
		inner = inner[1:]
	}
	for len(inner) >= 2 && inner[0].punct("(") && inner[len(inner)-1].punct(")") && balanced(inner[1:len(inner)-1]) {
		inner = inner[1 : len(inner)-1] // COUNT(DISTINCT(col)), as GORM's Count writes it
	}
	if len(inner) == 0 {
		return aggCall{}, false
	}
	a.arg, a.argText = inner, source(s, inner)
	if parts := splitTop(inner); len(parts) > 1 { // MySQL's COUNT(DISTINCT a, b)
		if fn != "count" || !a.distinct {
			return aggCall{}, false
		}
		for _, part := range parts {
			a.parts = append(a.parts, source(s, part))
		}
		return a, true
	}
	if len(inner) == 1 && inner[0].punct("*") {
		a.star = fn == "count" && !a.distinct
		return a, a.star
	}
	a.argCol, _ = colRef(inner, logic)
	return a, true
}

// balanced reports whether parentheses pair up within ts.
func balanced(ts []token) bool {
	depth := 0
	for _, t := range ts {
		if t.punct("(") {
			depth++
		} else if t.punct(")") {
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// cutAlias splits `expr [AS] alias` off a select item. A bare trailing
// identifier is an alias only after an expression that ends in `)`, a
// literal or a column reference followed by a space.
func cutAlias(ts []token) (expr []token, alias string) {
	n := len(ts)
	if n >= 3 && ts[n-2].is("as") && ts[n-1].kind == tokIdent {
		return ts[:n-2], strings.ToLower(ts[n-1].text)
	}
	if n >= 2 && ts[n-1].kind == tokIdent && !reservedWords[strings.ToLower(ts[n-1].text)] {
		prev := ts[n-2]
		if prev.is("collate") { // x COLLATE "C": the collation's name
			return ts, ""
		}
		if prev.punct(")") || prev.kind == tokIdent || prev.kind == tokNumber || prev.kind == tokString {
			return ts[:n-1], strings.ToLower(ts[n-1].text)
		}
	}
	return ts, ""
}

// normTokens is a fragment's comparable form: lower-case tokens, unquoted,
// space-separated ("COUNT( * )" and "count(*)" are the same term).
func normTokens(ts []token) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = strings.ToLower(t.text)
		if t.kind == tokString {
			parts[i] = "'" + t.text + "'"
		}
	}
	return strings.Join(parts, " ")
}
