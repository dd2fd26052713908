package gormplugin

import (
	"database/sql"
	"database/sql/driver"
	"go/ast"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"

	"github.com/shardkey/shardkey/internal/sqltok"
	"github.com/shardkey/shardkey/shardconf"
)

// Reading Where templates. GORM keeps Where("user_id = ?", 5),
// Where("user_id = 101") and Where("user_id = @uid", sql.Named("uid", 5))
// as a template and its values (clause.Expr, clause.NamedExpr). The
// scanner here reads such a template as SQL tokens, with GORM's own
// substitution of ? and @name, and takes from it only what it reads
// exactly: the AND-ed comparisons "<column> <op> <value>" (op =, <, <=,
// >, >= or IN) at its top level or inside parentheses that hold nothing
// else. An AND-ed part it cannot read narrows nothing, which is safe
// (the other parts still hold). What could make a part look like a
// condition it is not makes the whole template narrow nothing: an OR (or
// MySQL's ||, XOR) at the top level, CASE, a comment, a backslash (an
// escape in MySQL strings and PostgreSQL E'' strings), a placeholder
// inside a quoted string, or any character the scanner does not know.
// A template that can reshape the WHERE clause around it (condTainted)
// makes the whole clause narrow nothing.

// litKind is how a column's values may be spelled as SQL literals in a
// template and still route as the value the database compares.
type litKind int

const (
	litNone litKind = iota // unknown type: literals do not route
	litInt                 // an integer column: decimal integer literals
	litText                // a text column: '...' literals
)

// condScope is what reading a template needs to know of its statement.
type condScope struct {
	owner   string // the logic table
	dialect string // the GORM dialector's name: "postgres", "mysql", "sqlite"
	kindOf  func(col string) litKind
}

// scopeOf describes stmt for reading its templates. Literal values route
// only for a column whose type the model states: in MySQL a text column
// equals 101 for '0101' and ' 101', so a number literal says nothing
// exact about a text column (nor a string literal about an integer one).
func scopeOf(stmt *gorm.Statement, owner string) condScope {
	sc := condScope{owner: owner, kindOf: func(string) litKind { return litNone }}
	if stmt.DB != nil && stmt.DB.Dialector != nil {
		sc.dialect = stmt.DB.Dialector.Name()
	}
	if s := stmt.Schema; s != nil {
		sc.kindOf = func(col string) litKind {
			f := s.LookUpField(col)
			if f == nil || !strings.EqualFold(f.DBName, col) {
				return litNone
			}
			switch f.DataType {
			case schema.Int, schema.Uint:
				return litInt
			case schema.String:
				return litText
			}
			return litNone
		}
	}
	return sc
}

// exprConds reads a clause.Expr with placeholders only (no literal
// routes: the scope knows no column types).
func exprConds(x clause.Expr, owner string) []shardconf.Cond {
	return scopeCondsExpr(condScope{owner: owner, kindOf: func(string) litKind { return litNone }}, x)
}

// scopeCondsExpr reads a clause.Expr: GORM replaces every ? of its
// template, in order, by the next value, wherever the ? is.
func scopeCondsExpr(sc condScope, x clause.Expr) []shardconf.Cond {
	if strings.IndexByte(x.SQL, 0) >= 0 || strings.Count(x.SQL, "?") != len(x.Vars) {
		return nil
	}
	return sc.read(strings.ReplaceAll(x.SQL, "?", "\x00"), x.Vars)
}

// scopeCondsNamed reads a clause.NamedExpr: GORM replaces @name (up to a
// space, comma, condClosing parenthesis, quote, line break or semicolon) by
// the value its arguments give that name, and leaves an unknown name as
// it is written.
func scopeCondsNamed(sc condScope, x clause.NamedExpr) []shardconf.Cond {
	if strings.IndexByte(x.SQL, 0) >= 0 || strings.IndexByte(x.SQL, '?') >= 0 {
		return nil // positional values mixed in: not read
	}
	named := condNamedValues(x.Vars)
	var b strings.Builder
	var vars []any
	flush := func(name string) {
		if v, ok := named[name]; ok {
			b.WriteByte(0)
			vars = append(vars, v)
		} else {
			b.WriteString("@" + name)
		}
	}
	s := x.SQL
	for i := 0; i < len(s); i++ {
		if s[i] != '@' {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && !strings.ContainsRune(" ,)\"'`\r\n;", rune(s[j])) {
			j++
		}
		flush(s[i+1 : j])
		i = j - 1
	}
	return sc.read(b.String(), vars)
}

// condNamedValues collects the names GORM resolves @name with: sql.NamedArg,
// map[string]any, and the exported fields of a struct (embedded structs'
// fields too, by their own names). A time from a map or a struct is left
// out (its name is then not read): the WithTimeLocation check reads only
// sql.NamedArg values.
func condNamedValues(vars []any) map[string]any {
	out := map[string]any{}
	set := func(k string, v any) {
		switch v.(type) {
		case time.Time, *time.Time:
			delete(out, k)
		default:
			out[k] = v
		}
	}
	var fields func(rv reflect.Value)
	fields = func(rv reflect.Value) {
		rv = reflect.Indirect(rv)
		if rv.Kind() != reflect.Struct {
			return
		}
		for i := 0; i < rv.NumField(); i++ {
			f := rv.Type().Field(i)
			if !ast.IsExported(f.Name) {
				continue
			}
			set(f.Name, rv.Field(i).Interface())
			if f.Anonymous {
				fields(rv.Field(i))
			}
		}
	}
	for _, v := range vars {
		switch x := v.(type) {
		case sql.NamedArg:
			out[x.Name] = x.Value
		case map[string]any:
			for k, e := range x {
				set(k, e)
			}
		default:
			fields(reflect.ValueOf(v))
		}
	}
	return out
}

// read reads a template in which each value is the byte 0.
func (sc condScope) read(text string, vars []any) []shardconf.Cond {
	toks, ok := condLex(text, sc.dialect, false)
	if !ok {
		return nil
	}
	out, ok := sc.conjunction(toks, vars)
	if !ok {
		return nil
	}
	return out
}

type condTokKind int

const (
	ctIdent  condTokKind = iota // a bare word, lower-cased
	ctQuoted                    // a quoted identifier
	ctNum                       // decimal digits
	ctStr                       // a '...' string, unescaped
	ctVar                       // a value GORM binds
	ctOp                        // a run of < > = !
	ctDot
	ctLParen
	ctRParen
	ctComma
	ctMinus
	ctOther // an operator that is read as something unknown
)

type condToken struct {
	kind condTokKind
	text string
	v    int // ctVar: index into the values
}

// condLex splits a template into tokens, read by internal/sqltok with
// the dialect's quoting and comment rules; false when it holds anything
// that could hide or reshape a condition (see the comment at the top).
//
// loose (for condTainted) reads unknown operator characters as ctOther
// tokens instead of failing: only what can hide or reshape a condition
// fails then.
func condLex(s, dialect string, loose bool) ([]condToken, bool) {
	mode := condMode(dialect)
	out := make([]condToken, 0, 8)
	vi, prev := 0, sqltok.Space // prev: the kind of the token before, which ends where this one starts
	l := sqltok.New(s, mode)
	for {
		t := l.Next()
		text := s[t.Start:t.End]
		after := prev
		prev = t.Kind
		switch t.Kind {
		case sqltok.EOF:
			return out, vi == strings.Count(s, "\x00")
		case sqltok.Space:
		case sqltok.Error, sqltok.Comment, sqltok.ExecCommentStart, sqltok.ExecCommentEnd:
			return nil, false // unterminated, or a comment (MySQL runs /*! ... */)
		case sqltok.String, sqltok.QuotedIdent:
			tok, ok := condQuoted(text, t.Kind, mode, dialect)
			if !ok {
				return nil, false
			}
			out = append(out, tok)
		case sqltok.Number:
			// Only decimal integers are read as values; 1.5, 1e3, 0x1F
			// are unknown operands (1_000 and a number run on into a
			// name, 1abc, are refused: PostgreSQL before 16 reads 1_000
			// as 1 and a name, before 15 1or as 1 OR).
			switch {
			case condDigits(text):
				out = append(out, condToken{kind: ctNum, text: text})
			case loose && strings.IndexByte(text, '_') < 0:
				out = append(out, condToken{kind: ctOther, text: text})
			default:
				return nil, false
			}
		case sqltok.Ident:
			// A number run on into a name (MySQL's 1abc, or 1 then abc),
			// or a MySQL name starting with $ (a dollar quote elsewhere).
			if text[0] == '$' || text[0] >= '0' && text[0] <= '9' || after == sqltok.Number {
				return nil, false
			}
			out = append(out, condToken{kind: ctIdent, text: strings.ToLower(text)})
		case sqltok.Placeholder, sqltok.Variable:
			// $1, $name, #name, @var: values or variables GORM does not
			// bind; what starts with $ or # is refused as in code.
			if !loose || text[0] == '$' || text[0] == '#' {
				return nil, false
			}
			out = append(out, condToken{kind: ctOther, text: text})
		default: // one byte of punctuation
			var ok bool
			if out, vi, ok = condPunct(out, s, t, vi, after == sqltok.Punct, dialect, loose); !ok {
				return nil, false
			}
		}
	}
}

// condMode is the tokenizer's mode for a GORM dialector name; another
// dialector's templates are read with PostgreSQL's rules and `x` names,
// the rules of the condLex before it.
func condMode(dialect string) sqltok.Mode {
	switch dialect {
	case "mysql":
		return sqltok.MySQL
	case "sqlite":
		return sqltok.SQLite
	case "postgres":
		return sqltok.PostgreSQL
	}
	return sqltok.PostgreSQL | sqltok.BacktickQuotes
}

// condPunct reads one punctuation byte t of s; joined says the token
// before it was punctuation ending where t starts (so <, = make <=).
func condPunct(out []condToken, s string, t sqltok.Token, vi int, joined bool, dialect string, loose bool) ([]condToken, int, bool) {
	c := s[t.Start]
	switch {
	case c == 0:
		return append(out, condToken{kind: ctVar, v: vi}), vi + 1, true
	case c == '<' || c == '>' || c == '=' || c == '!':
		if n := len(out); joined && out[n-1].kind == ctOp {
			out[n-1].text = s[t.Start-len(out[n-1].text) : t.End]
			return out, vi, true
		}
		return append(out, condToken{kind: ctOp, text: s[t.Start:t.End]}), vi, true
	case c == '.':
		return append(out, condToken{kind: ctDot}), vi, true
	case c == '(':
		return append(out, condToken{kind: ctLParen}), vi, true
	case c == ')':
		return append(out, condToken{kind: ctRParen}), vi, true
	case c == ',':
		return append(out, condToken{kind: ctComma}), vi, true
	case c == '-':
		if t.End < len(s) && s[t.End] == '-' {
			return nil, vi, false // MySQL's --x: a double minus, else a comment
		}
		return append(out, condToken{kind: ctMinus}), vi, true
	case c == '`' && dialect == "postgres" && !loose:
		return nil, vi, false
	case strings.IndexByte("+*/%^&~", c) >= 0:
		return append(out, condToken{kind: ctOther, text: s[t.Start:t.End]}), vi, true
	}
	// | (MySQL's || is OR), # (a MySQL comment), ; $ \ and := can hide or
	// reshape a condition; : @ ? [ ] { } and the rest are unknown
	// operators, read only loosely.
	hard := strings.IndexByte("|#;$\\", c) >= 0 || (c == ':' && t.End < len(s) && s[t.End] == '=')
	if !loose || hard {
		return nil, vi, false
	}
	return append(out, condToken{kind: ctOther, text: s[t.Start:t.End]}), vi, true
}

// condQuoted reads a string or quoted name. A doubled quote stands for
// itself. A backslash (an escape in MySQL and in PostgreSQL's E'...'
// strings) or a value inside makes it unreadable, as do a dollar-quoted
// string and SQLite's [name]; a prefixed literal (E'..', X'..', N'..',
// U&"..") is read as an unknown operand.
func condQuoted(text string, kind sqltok.Kind, mode sqltok.Mode, dialect string) (condToken, bool) {
	if strings.ContainsAny(text, "\\\x00") || text[0] == '$' || text[0] == '[' {
		return condToken{}, false
	}
	q := text[0]
	if q != '\'' && q != '"' && q != '`' {
		return condToken{kind: ctOther, text: text}, true
	}
	body, ok := sqltok.Unquote(text, mode)
	switch {
	case !ok:
		return condToken{}, false
	case kind == sqltok.String && q == '\'':
		return condToken{kind: ctStr, text: body}, true
	case kind == sqltok.String:
		// "x" is a string in MySQL (without ANSI_QUOTES): never a column.
		return condToken{kind: ctOther, text: body}, true
	}
	return condToken{kind: ctQuoted, text: condQuotedName(body, dialect)}, true
}

// condDigits reports whether s is decimal digits only.
func condDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// condQuotedName is a quoted identifier as the rules name columns: MySQL and
// SQLite compare column names without case; PostgreSQL's quoted names
// keep theirs, so "User_ID" is not user_id (it stays apart, and narrows
// nothing).
func condQuotedName(s, dialect string) string {
	if dialect == "postgres" {
		if strings.ToLower(s) != s {
			return "\x01" + s // no rule column is spelled so
		}
		return s
	}
	return strings.ToLower(s)
}

func condWord(t condToken, w string) bool { return t.kind == ctIdent && t.text == w }

// conjunction reads AND-ed parts. ok is false when the tokens hold an OR
// at this level, or a part that cannot be told apart (empty, CASE).
func (sc condScope) conjunction(toks []condToken, vars []any) ([]shardconf.Cond, bool) {
	var parts [][]condToken
	depth, start, between := 0, 0, false
	for i, t := range toks {
		switch {
		case t.kind == ctLParen:
			depth++
		case t.kind == ctRParen:
			depth--
			if depth < 0 {
				return nil, false
			}
		case condWord(t, "case"):
			return nil, false
		case depth > 0:
		case condWord(t, "or") || condWord(t, "xor"):
			return nil, false
		case condWord(t, "between"):
			between = true
		case condWord(t, "and"):
			if between { // BETWEEN a AND b: this AND is the BETWEEN's
				between = false
				continue
			}
			parts = append(parts, toks[start:i])
			start = i + 1
		}
	}
	if depth != 0 {
		return nil, false
	}
	parts = append(parts, toks[start:])
	var out []shardconf.Cond
	for _, p := range parts {
		if len(p) == 0 {
			return nil, false
		}
		if p[0].kind == ctLParen && condClosing(p) == len(p)-1 {
			// A group holding only ANDs is AND-ed here; one holding an OR
			// narrows nothing, which is safe for an AND-ed part.
			if inner, ok := sc.conjunction(p[1:len(p)-1], vars); ok {
				out = append(out, inner...)
			}
			continue
		}
		if c, ok := sc.comparison(p, vars); ok && c.Column() != "" {
			out = append(out, c)
		}
	}
	return out, true
}

// condClosing is the index of the parenthesis condClosing p[0].
func condClosing(p []condToken) int {
	depth := 0
	for i, t := range p {
		switch t.kind {
		case ctLParen:
			depth++
		case ctRParen:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// comparison reads exactly "<column> <op> <value>", "<column> IN
// <values>" or "<column> BETWEEN <lo> AND <hi>". ok with an empty column: a comparison on another table's
// column, which narrows nothing here.
func (sc condScope) comparison(p []condToken, vars []any) (shardconf.Cond, bool) {
	col, mine, n := sc.column(p)
	if n == 0 || n >= len(p) {
		return shardconf.Cond{}, false
	}
	op, rest := p[n], p[n+1:]
	if condWord(op, "in") {
		vs, ok := sc.list(col, rest, vars)
		if !ok {
			return shardconf.Cond{}, false
		}
		if !mine {
			return shardconf.Cond{}, true
		}
		return shardconf.In(col, vs...), true
	}
	if condWord(op, "between") {
		return sc.between(col, mine, rest, vars)
	}
	if op.kind != ctOp {
		return shardconf.Cond{}, false
	}
	v, m, ok := sc.scalar(col, rest, vars, op.text == "=")
	if !ok || m != len(rest) {
		return shardconf.Cond{}, false
	}
	if !mine {
		return shardconf.Cond{}, true
	}
	switch op.text {
	case "=":
		return shardconf.Eq(col, v), true
	case ">":
		return shardconf.Gt(col, v), true
	case ">=":
		return shardconf.Ge(col, v), true
	case "<":
		return shardconf.Lt(col, v), true
	case "<=":
		return shardconf.Le(col, v), true
	}
	return shardconf.Cond{}, false
}

// between reads the rest of "<column> BETWEEN <lo> AND <hi>", both bounds
// inclusive, as SQL has them; anything more after hi reads as no condition.
func (sc condScope) between(col string, mine bool, rest []condToken, vars []any) (shardconf.Cond, bool) {
	lo, n, ok := sc.scalar(col, rest, vars, false)
	if !ok || n >= len(rest) || !condWord(rest[n], "and") {
		return shardconf.Cond{}, false
	}
	rest = rest[n+1:]
	hi, m, ok := sc.scalar(col, rest, vars, false)
	if !ok || m != len(rest) {
		return shardconf.Cond{}, false
	}
	if !mine {
		return shardconf.Cond{}, true
	}
	return shardconf.Between(col, lo, hi), true
}

// column reads "col", "table.col" (names bare or quoted); n is the
// number of tokens read, 0 if none.
func (sc condScope) column(p []condToken) (col string, mine bool, n int) {
	name := func(t condToken) bool { return t.kind == ctIdent || t.kind == ctQuoted }
	if len(p) == 0 || !name(p[0]) || condWord(p[0], "not") {
		return "", false, 0
	}
	if len(p) >= 3 && p[1].kind == ctDot {
		if !name(p[2]) {
			return "", false, 0
		}
		table := p[0].text
		mine = strings.EqualFold(table, sc.owner) && !strings.HasPrefix(table, "\x01")
		return p[2].text, mine, 3
	}
	return p[0].text, true, 1
}

// scalar reads one value: a bound value, an integer literal (with a
// minus) for an integer column, or a string literal for a text column
// (only for =: how text compares in ranges depends on collation).
func (sc condScope) scalar(col string, p []condToken, vars []any, eq bool) (any, int, bool) {
	if len(p) == 0 {
		return nil, 0, false
	}
	switch p[0].kind {
	case ctVar:
		v := vars[p[0].v]
		if !condBoundValue(v) || condListValue(v) {
			return nil, 0, false
		}
		return v, 1, true
	case ctStr:
		if !eq || sc.kindOf(col) != litText {
			return nil, 0, false
		}
		return p[0].text, 1, true
	case ctNum, ctMinus:
		text, n := p[0].text, 1
		if p[0].kind == ctMinus {
			if len(p) < 2 || p[1].kind != ctNum {
				return nil, 0, false
			}
			text, n = "-"+p[1].text, 2
		}
		if sc.kindOf(col) != litInt {
			return nil, 0, false
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, 0, false
		}
		return i, n, true
	}
	return nil, 0, false
}

// list reads the values of IN: a bound list ("IN ?", "IN (?)") or
// "(v, v, ...)".
func (sc condScope) list(col string, p []condToken, vars []any) ([]any, bool) {
	if len(p) == 1 && p[0].kind == ctVar {
		return condBoundList(vars[p[0].v])
	}
	if len(p) < 3 || p[0].kind != ctLParen || p[len(p)-1].kind != ctRParen {
		return nil, false
	}
	inner := p[1 : len(p)-1]
	if len(inner) == 1 && inner[0].kind == ctVar && condListValue(vars[inner[0].v]) {
		return condBoundList(vars[inner[0].v])
	}
	var out []any
	for len(inner) > 0 {
		v, n, ok := sc.scalar(col, inner, vars, true)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		inner = inner[n:]
		if len(inner) > 0 {
			if inner[0].kind != ctComma || len(inner) == 1 {
				return nil, false
			}
			inner = inner[1:]
		}
	}
	return out, true
}

// condBoundList is the values GORM writes for a bound list.
func condBoundList(v any) ([]any, bool) {
	if !condListValue(v) {
		return nil, false
	}
	vs, _ := sliceValues(v)
	for _, e := range vs {
		if !condBoundValue(e) || condListValue(e) {
			return nil, false
		}
	}
	return vs, true
}

// condListValue reports whether GORM writes v as a parenthesised list: a
// slice or array other than []byte that is not a driver.Valuer.
func condListValue(v any) bool {
	if _, ok := v.(driver.Valuer); ok {
		return false
	}
	return isSlice(v)
}

// condBoundValue reports whether GORM binds v as a value the database
// compares, rather than writing SQL for it (an expression, a column, a
// subquery, a gorm.Valuer).
func condBoundValue(v any) bool {
	switch v.(type) {
	case clause.Expression, clause.Column, clause.Table, clause.Interface, gorm.Valuer, *gorm.DB, sql.NamedArg:
		return false
	}
	return true
}

// condTainted reports whether a template can change how the WHERE clause
// around it reads. GORM joins a WHERE clause's conditions with " AND ",
// and puts a template in parentheses only when its text holds " AND " or
// " OR " (with those very spaces): "a = 1\tOR b = 2", then AND user_id =
// 5, is a = 1 OR (b = 2 AND user_id = 5), which user_id = 5 does not
// narrow. So is a comment (it swallows what follows), a parenthesis
// closed outside the template, a BETWEEN whose AND comes from the next
// condition, and what the scanner cannot delimit (a backslash escape, a
// dollar-quoted string, MySQL's || and #, a semicolon). inNot: under
// NOT, where GORM's own wrapping differs.
func condTainted(sql, dialect string, inNot bool) bool {
	toks, ok := condLex(sql, dialect, true)
	if !ok {
		return true
	}
	depth, orLike, between := 0, false, false
	for _, t := range toks {
		switch {
		case t.kind == ctLParen:
			depth++
		case t.kind == ctRParen:
			depth--
			if depth < 0 {
				return true
			}
		case depth > 0:
		case condWord(t, "or") || condWord(t, "xor"):
			orLike = true
		case condWord(t, "between"):
			between = true
		case condWord(t, "and"):
			between = false
		}
	}
	if depth != 0 || between {
		return true
	}
	if !orLike {
		return false
	}
	up := strings.ToUpper(sql)
	wrapped := strings.Contains(up, " AND ") || strings.Contains(up, " OR ")
	return !wrapped || inNot
}

// whereTainted reports whether any template in es is condTainted: then
// no condition of the WHERE clause is known to hold for every row it
// selects.
func whereTainted(es []clause.Expression, dialect string, inNot bool) bool {
	for _, e := range es {
		switch x := e.(type) {
		case clause.Expr:
			if condTainted(x.SQL, dialect, inNot) {
				return true
			}
		case clause.NamedExpr:
			if condTainted(x.SQL, dialect, inNot) {
				return true
			}
		case clause.AndConditions:
			if whereTainted(x.Exprs, dialect, inNot) {
				return true
			}
		case clause.OrConditions:
			if whereTainted(x.Exprs, dialect, inNot) {
				return true
			}
		case clause.NotConditions:
			if whereTainted(x.Exprs, dialect, true) {
				return true
			}
		case clause.Where:
			if whereTainted(x.Exprs, dialect, inNot) {
				return true
			}
		}
	}
	return false
}
