package main

// The ddl command's template reader: a tokenizer that knows the quoting
// and comment rules of the three dialects, and a reader of the two
// statement shapes a table template holds (CREATE TABLE and CREATE INDEX).
// Names are replaced token by token, so a string literal or a comment that
// mentions the table is left as written.

import (
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/internal/sqltok"
)

// SQL dialects of the ddl command.
const (
	dialectPostgres = "postgres"
	dialectMySQL    = "mysql"
	dialectSQLite   = "sqlite"
)

type tokKind int

const (
	tkWord   tokKind = iota // bare identifier, keyword or number
	tkQuoted                // quoted identifier: "x", `x` or [x]
	tkString                // string literal
	tkPunct                 // any other character
)

type token struct {
	kind     tokKind
	name     string // tkWord: the word; tkQuoted: the identifier unquoted
	off, end int    // byte offsets in the template
	line     int
}

func (t token) is(word string) bool { return t.kind == tkWord && strings.EqualFold(t.name, word) }

func (t token) punct(c byte) bool { return t.kind == tkPunct && t.name == string(c) }

func (t token) ident() bool { return t.kind == tkWord || t.kind == tkQuoted }

// templateError is a problem in the template, at a line.
type templateError struct {
	file string
	line int
	msg  string
}

func (e *templateError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.file, e.msg)
}

// lexSQL splits src into statements (at top-level semicolons) of tokens,
// read by internal/sqltok with dialect's rules: in MySQL "x" is a string
// and a backslash escapes in strings, # starts a comment and -- does only
// before a space; in PostgreSQL and SQLite "x" is an identifier;
// PostgreSQL has E'..' and $tag$..$tag$ strings and nested block
// comments; SQLite has [x]. `x` is an identifier in every dialect (it is
// re-quoted for the output dialect). Comments and blanks are skipped.
//
// MySQL runs what an executable comment (/*!50100 ... */) holds, so it is
// read as code and kept in its statement (a CREATE TABLE's trailing
// /*!50100 PARTITION BY ... */ is part of every physical table's DDL); a
// statement wholly inside executable comments, such as mysqldump's
// /*!40101 SET ... */, sets up a session, not a table, and is skipped.
func lexSQL(file, src, dialect string) ([][]token, error) {
	mode := sqltok.PostgreSQL | sqltok.BacktickQuotes
	switch dialect {
	case dialectMySQL:
		mode = sqltok.MySQL
	case dialectSQLite:
		mode = sqltok.SQLite
	}
	var stmts [][]token
	var cur []token
	line, execLine := 1, 0
	inExec, allExec := false, true // allExec: every token of cur is in an executable comment
	flush := func() {
		if len(cur) > 0 && !allExec {
			stmts = append(stmts, cur)
		}
		cur, allExec = nil, true
	}
	add := func(t token) {
		cur = append(cur, t)
		allExec = allExec && inExec
	}
	l := sqltok.New(src, mode)
	for {
		t := l.Next()
		text := src[t.Start:t.End]
		switch t.Kind {
		case sqltok.EOF:
			flush()
			return stmts, nil
		case sqltok.Error:
			if text == "" {
				line = execLine
			}
			return nil, &templateError{file: file, line: line, msg: unterminated(text)}
		case sqltok.Space, sqltok.Comment:
		case sqltok.Ident, sqltok.Number:
			add(token{kind: tkWord, name: text, off: t.Start, end: t.End, line: line})
		case sqltok.String:
			add(token{kind: tkString, name: text, off: t.Start, end: t.End, line: line})
		case sqltok.QuotedIdent:
			off := t.Start
			if text[0] == 'U' || text[0] == 'u' { // PostgreSQL's U&"x": the U& stays as written
				add(token{kind: tkWord, name: text[:1], off: off, end: off + 1, line: line})
				add(token{kind: tkPunct, name: "&", off: off + 1, end: off + 2, line: line})
				off += 2
			}
			name, ok := sqltok.Unquote(src[off:t.End], mode)
			if !ok || name == "" {
				return nil, &templateError{file: file, line: line, msg: "empty quoted identifier"}
			}
			add(token{kind: tkQuoted, name: name, off: off, end: t.End, line: line})
		case sqltok.ExecCommentStart:
			inExec, execLine = true, line
			add(token{kind: tkPunct, name: text, off: t.Start, end: t.End, line: line})
		case sqltok.ExecCommentEnd:
			add(token{kind: tkPunct, name: text, off: t.Start, end: t.End, line: line})
			inExec = false
		default: // punctuation, placeholders, MySQL variables
			if text == ";" {
				flush()
				break
			}
			add(token{kind: tkPunct, name: text, off: t.Start, end: t.End, line: line})
		}
		switch t.Kind {
		case sqltok.Space, sqltok.Comment, sqltok.String, sqltok.QuotedIdent:
			line += strings.Count(text, "\n")
		}
	}
}

// unterminated says what an Error token of the tokenizer leaves open.
func unterminated(text string) string {
	switch {
	case text == "":
		return "unterminated /*! comment"
	case strings.HasPrefix(text, "/*"):
		return "unterminated /* comment"
	case text[0] == '$':
		if k := strings.IndexByte(text[1:], '$'); k >= 0 {
			return fmt.Sprintf("unterminated %s string", text[:k+2])
		}
	}
	if k := strings.IndexAny(text, "'\"`["); k >= 0 {
		return fmt.Sprintf("unterminated %c", text[k])
	}
	return "unterminated " + text
}

// editKind says what to do with a token of a template statement.
type editKind int

const (
	editTable   editKind = iota // the logic table: becomes the physical table
	editRename                  // an index or constraint name: made unique per physical table
	editRequote                 // another quoted identifier: quoted for the output dialect
	editRef                     // a table another table's REFERENCES names: resolved by the caller
)

type edit struct {
	tok  int
	kind editKind
}

// tmplStmt is one statement of the template.
type tmplStmt struct {
	index    bool   // CREATE INDEX, else CREATE TABLE
	table    string // the logic table it creates or indexes, as written
	line     int
	toks     []token
	edits    []edit
	off, end int // the statement's text, without the semicolon
}

// tmplTable is a logic table of the template with its statements, the
// CREATE TABLE first.
type tmplTable struct {
	name  string
	line  int
	stmts []*tmplStmt
}

// template is a parsed template file.
type template struct {
	file   string
	src    string
	tables []*tmplTable // in file order
}

func (t *template) lookup(name string) *tmplTable {
	for _, tt := range t.tables {
		if strings.EqualFold(tt.name, name) {
			return tt
		}
	}
	return nil
}

// parseTemplate reads the statements of a template as dialect reads them.
func parseTemplate(file, src, dialect string) (*template, error) {
	stmts, err := lexSQL(file, src, dialect)
	if err != nil {
		return nil, err
	}
	t := &template{file: file, src: src}
	for _, toks := range stmts {
		s, err := parseStmt(file, toks)
		if err != nil {
			return nil, err
		}
		tt := t.lookup(s.table)
		switch {
		case !s.index && tt != nil:
			return nil, &templateError{file, s.line, fmt.Sprintf("second CREATE TABLE %s (the first is at line %d)", s.table, tt.line)}
		case !s.index:
			t.tables = append(t.tables, &tmplTable{name: s.table, line: s.line, stmts: []*tmplStmt{s}})
		case tt == nil:
			return nil, &templateError{file, s.line, fmt.Sprintf("CREATE INDEX on %s, which no CREATE TABLE above creates", s.table)}
		default:
			tt.stmts = append(tt.stmts, s)
		}
	}
	if len(t.tables) == 0 {
		return nil, &templateError{file: file, msg: "no CREATE TABLE statement"}
	}
	return t, nil
}

// parseStmt reads CREATE TABLE [IF NOT EXISTS] name (...) [options] or
// CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT EXISTS] [name] ON [ONLY] table ...
func parseStmt(file string, toks []token) (*tmplStmt, error) {
	s := &tmplStmt{line: toks[0].line, toks: toks, off: toks[0].off, end: toks[len(toks)-1].end}
	fail := func(t token, format string, a ...any) error {
		return &templateError{file: file, line: t.line, msg: fmt.Sprintf(format, a...)}
	}
	at := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		last := toks[len(toks)-1]
		return token{kind: tkPunct, name: "", off: last.end, end: last.end, line: last.line}
	}
	words := func(i int, ws ...string) bool {
		for k, w := range ws {
			if !at(i + k).is(w) {
				return false
			}
		}
		return true
	}
	// name reads an unqualified identifier at i.
	name := func(i int, what string) error {
		t := at(i)
		if !t.ident() {
			return fail(t, "want %s name, got %s", what, describe(t))
		}
		if at(i + 1).punct('.') {
			return fail(t, "%s name %s.%s is schema-qualified; the data source decides the schema", what, t.name, at(i+2).name)
		}
		return nil
	}

	i := 1
	switch {
	case !toks[0].is("CREATE"):
		return nil, fail(toks[0], "want CREATE TABLE or CREATE INDEX, got %s", describe(toks[0]))
	case at(1).is("TABLE"):
		i = 2
		if words(i, "IF", "NOT", "EXISTS") {
			i += 3
		}
		if err := name(i, "table"); err != nil {
			return nil, err
		}
		s.table = toks[i].name
		s.edits = append(s.edits, edit{i, editTable})
		i++
		if !at(i).punct('(') {
			return nil, fail(at(i), "want ( and the columns after CREATE TABLE %s, got %s", s.table, describe(at(i)))
		}
	case at(1).is("INDEX") || words(1, "UNIQUE", "INDEX"):
		s.index = true
		i = 2
		if at(1).is("UNIQUE") {
			i = 3
		}
		if at(i).is("CONCURRENTLY") {
			i++
		}
		if words(i, "IF", "NOT", "EXISTS") {
			i += 3
		}
		if !at(i).is("ON") {
			if err := name(i, "index"); err != nil {
				return nil, err
			}
			s.edits = append(s.edits, edit{i, editRename})
			i++
		}
		if !at(i).is("ON") {
			return nil, fail(at(i), "want ON after the index name, got %s", describe(at(i)))
		}
		i++
		if at(i).is("ONLY") {
			i++
		}
		if err := name(i, "table"); err != nil {
			return nil, err
		}
		s.table = toks[i].name
		s.edits = append(s.edits, edit{i, editTable})
		i++
	default:
		return nil, fail(toks[0], "want CREATE TABLE or CREATE INDEX, got CREATE %s", at(1).name)
	}

	// The rest: parentheses must balance; constraint names are renamed;
	// references to the table itself (REFERENCES t, t.column) follow it.
	depth := 0
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.punct('('):
			depth++
		case t.punct(')'):
			if depth--; depth < 0 {
				return nil, fail(t, "unbalanced )")
			}
		case t.is("CONSTRAINT") && at(i+1).ident() && !isConstraintKeyword(at(i+1)):
			if err := name(i+1, "constraint"); err != nil {
				return nil, err
			}
			i++
			s.edits = append(s.edits, edit{i, editRename})
		case t.is("REFERENCES") && at(i+1).ident() && !strings.EqualFold(at(i+1).name, s.table) && !at(i+2).punct('.'):
			i++
			s.edits = append(s.edits, edit{i, editRef})
		case t.is("REFERENCES") && at(i+1).ident() && strings.EqualFold(at(i+1).name, s.table):
			i++
			s.edits = append(s.edits, edit{i, editTable})
		case t.ident() && at(i+1).punct('.') && strings.EqualFold(t.name, s.table) && !(i > 0 && toks[i-1].punct('.')):
			s.edits = append(s.edits, edit{i, editTable})
		case t.kind == tkQuoted:
			s.edits = append(s.edits, edit{i, editRequote})
		}
	}
	if depth != 0 {
		return nil, fail(toks[len(toks)-1], "unbalanced ( in the statement starting at line %d", s.line)
	}
	return s, nil
}

// isConstraintKeyword: MySQL allows CONSTRAINT without a name before these.
func isConstraintKeyword(t token) bool {
	if t.kind != tkWord {
		return false
	}
	switch strings.ToUpper(t.name) {
	case "PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "NOT", "NULL", "DEFAULT", "REFERENCES":
		return true
	}
	return false
}

func describe(t token) string {
	switch {
	case t.name == "" && t.kind == tkPunct:
		return "the end of the statement"
	case t.kind == tkWord:
		return t.name
	}
	return fmt.Sprintf("%q", t.name)
}

// quoteIdent quotes an identifier for dialect.
func quoteIdent(name, dialect string) string {
	if dialect == dialectMySQL {
		return "`" + strings.ReplaceAll(name, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// maxIdentLen is the longest identifier dialect keeps whole (PostgreSQL
// truncates longer ones, which could make two index names equal; MySQL
// refuses them). 0: no limit.
func maxIdentLen(dialect string) int {
	switch dialect {
	case dialectPostgres:
		return 63
	case dialectMySQL:
		return 64
	}
	return 0
}

// uniqueName makes an index or constraint name of logic unique to the
// physical table phys: the logic table's name in it, as a whole word
// between underscores, becomes phys (idx_t_order_user ->
// idx_t_order_0_user), else phys is appended (idx_user ->
// idx_user_t_order_0; t_orders_idx -> t_orders_idx_t_order_0). A physical
// table named like its logic table (a broadcast table) keeps the names as
// written. Two names can still meet (idx_user and idx_user_t_order);
// render refuses that.
func uniqueName(name, logic, phys string) string {
	if strings.EqualFold(logic, phys) {
		return name
	}
	for k := 0; k+len(logic) <= len(name); k++ {
		end := k + len(logic)
		if (k == 0 || name[k-1] == '_') && (end == len(name) || name[end] == '_') && asciiEqualFold(name[k:end], logic) {
			return name[:k] + phys + name[end:]
		}
	}
	return name + "_" + phys
}

// asciiLower lowers the ASCII letters of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// asciiEqualFold compares a and b ignoring the case of ASCII letters only,
// byte for byte (Unicode case folding can change lengths).
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// render writes statement s for the physical table phys in dialect; ref
// gives the physical table for a table another table's REFERENCES names.
// Renamed index and constraint names are added to names (folded as the
// dialect compares them); one already there is an error.
func (t *template) render(s *tmplStmt, phys, dialect string, ref func(string) (string, error), names map[string]bool) (string, error) {
	var b strings.Builder
	pos := s.off
	for _, e := range s.edits {
		tok := s.toks[e.tok]
		b.WriteString(t.src[pos:tok.off])
		pos = tok.end
		var name string
		switch e.kind {
		case editTable:
			name = phys
		case editRename:
			written := tok.name
			if dialect == dialectPostgres && tok.kind == tkWord {
				written = asciiLower(written) // as PostgreSQL folds an unquoted name: ASCII letters only
			}
			name = uniqueName(written, s.table, phys)
			key := name
			if dialect != dialectPostgres {
				key = strings.ToLower(name) // MySQL and SQLite compare these names without case
			}
			if names[key] {
				return "", &templateError{t.file, tok.line, fmt.Sprintf("name %s for table %s is used twice; rename one of them", name, phys)}
			}
			names[key] = true
		case editRequote:
			name = tok.name
		case editRef:
			var err error
			if name, err = ref(tok.name); err != nil {
				return "", &templateError{t.file, tok.line, err.Error()}
			}
			if name == tok.name && tok.kind == tkWord {
				b.WriteString(name) // not a sharded table: left as written
				continue
			}
		}
		if n := maxIdentLen(dialect); n > 0 && len(name) > n {
			return "", &templateError{t.file, tok.line, fmt.Sprintf("name %s for table %s is longer than %s's %d bytes; shorten %s",
				name, phys, dialect, n, tok.name)}
		}
		b.WriteString(quoteIdent(name, dialect))
	}
	b.WriteString(t.src[pos:s.end])
	return b.String(), nil
}
