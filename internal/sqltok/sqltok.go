// Package sqltok splits SQL text into tokens by the lexical rules of
// PostgreSQL, MySQL (and MariaDB) or SQLite.
//
// Every byte of the input belongs to exactly one token, white space and
// comments included, and each token carries its byte offsets, so a caller
// that rewrites a statement copies what it does not change byte for byte.
// The tokenizer only delimits: it says where a string, a quoted name or a
// comment starts and ends, so that nothing inside one is taken for code;
// it does not parse. A string, quoted name or comment left open yields an
// Error token, which callers treat as a statement they cannot read.
//
// Lexing allocates nothing: a Lexer is a value and Next returns tokens by
// value.
package sqltok

// Mode selects the dialect whose lexical rules apply, with optional flags.
type Mode uint16

// Dialects. Exactly one is part of every Mode.
const (
	PostgreSQL Mode = 1 + iota
	MySQL           // MySQL and MariaDB
	SQLite
)

// Flags, OR-ed with a dialect.
const (
	// ANSIQuotes: in MySQL, "x" is a quoted name, not a string (sql_mode
	// ANSI_QUOTES).
	ANSIQuotes Mode = 1 << (8 + iota)
	// NoBackslashEscapes: in MySQL, a backslash in a string is an ordinary
	// character (sql_mode NO_BACKSLASH_ESCAPES).
	NoBackslashEscapes
	// BacktickQuotes: `x` is a quoted name in PostgreSQL too, for text
	// written once for several dialects (MySQL and SQLite read it so
	// anyway).
	BacktickQuotes
)

const dialectMask Mode = 0xff

// Dialect is m without its flags.
func (m Mode) Dialect() Mode { return m & dialectMask }

// Kind is what a token is.
type Kind uint8

// Token kinds.
const (
	EOF   Kind = iota // the end of the input; Start == End == len(src)
	Error             // an unterminated string, quoted name or comment: from its opening to the end of the input
	Space             // a run of space, \t, \n, \r, \f, \v
	// Comment is -- to the end of the line (the line break is not part of
	// it), # to the end of the line in MySQL, or /* ... */ (nested in
	// PostgreSQL). MySQL's optimizer hints (/*+ ... */) and TiDB's
	// /*T! ... */ are comments too.
	Comment
	// ExecCommentStart opens a MySQL executable comment: "/*!", "/*!50100",
	// "/*M!" or "/*M!100100". MySQL (and MariaDB, which also runs /*M!)
	// runs what follows as code, so the tokens up to ExecCommentEnd are
	// lexed as code. A caller that cannot reason about server versions
	// should refuse the statement.
	ExecCommentStart
	// ExecCommentEnd is the "*/" that closes an executable comment. An
	// executable comment the input leaves open ends with an empty Error
	// token at the end of the input.
	ExecCommentEnd
	Ident       // an unquoted identifier or keyword (MySQL: 1abc too)
	QuotedIdent // "x" (PostgreSQL, SQLite; MySQL with ANSIQuotes), `x` (MySQL, SQLite; PostgreSQL with BacktickQuotes), [x] (SQLite); U&"x" (PostgreSQL)
	// String is a string literal: '...' in every dialect; "..." in MySQL
	// without ANSIQuotes; E'...', B'...', X'...', N'...', U&'...' and
	// $tag$...$tag$ in PostgreSQL; X'...', B'...', N'...' in MySQL; X'...'
	// in SQLite. The prefix is part of the token.
	String
	Number      // 12, 1.5, .5, 1e-3, 0x1F (0b101, 0o17 in PostgreSQL; 0b101 in MySQL)
	Placeholder // ? (MySQL, SQLite), ?1 (SQLite), $1 (PostgreSQL), :name, @name, $name, #name (SQLite)
	Variable    // MySQL's @name, @'name', @`name`, @@name, @@session.name
	Punct       // one byte of an operator or punctuation; callers join multi-byte operators
)

var kindNames = [...]string{"EOF", "Error", "Space", "Comment", "ExecCommentStart", "ExecCommentEnd",
	"Ident", "QuotedIdent", "String", "Number", "Placeholder", "Variable", "Punct"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Token is a token of src: src[Start:End].
type Token struct {
	Kind       Kind
	Start, End int
}

// Text is the token's text in src.
func (t Token) Text(src string) string { return src[t.Start:t.End] }

// Lexer reads the tokens of one text. The zero Lexer is at EOF; make one
// with New.
type Lexer struct {
	src     string
	pos     int
	mode    Mode
	inExec  bool // inside a MySQL executable comment
	stopped bool // an Error was returned
	prev    Kind // the kind of the token that ended at pos
}

// New returns a Lexer of src in mode m.
func New(src string, m Mode) Lexer {
	return Lexer{src: src, mode: m, prev: Space}
}

// Tokens appends all tokens of src to dst, the last being an Error token
// if there is one; EOF is not appended.
func Tokens(dst []Token, src string, m Mode) []Token {
	l := New(src, m)
	for {
		t := l.Next()
		if t.Kind == EOF {
			return dst
		}
		dst = append(dst, t)
	}
}

// byte classes
const (
	cLetter = 1 << iota // A-Z a-z _ and bytes >= 0x80: may start a name
	cDigit
	cSpace
	cHex
)

var class = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c >= 0x80:
			t[c] |= cLetter
		case c >= '0' && c <= '9':
			t[c] |= cDigit | cHex
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\f', c == '\v':
			t[c] |= cSpace
		}
		if c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
			t[c] |= cHex
		}
	}
	return t
}()

func isLetter(c byte) bool { return class[c]&cLetter != 0 }
func isDigit(c byte) bool  { return class[c]&cDigit != 0 }

// isNameByte: a byte that continues an unquoted name (in every dialect
// here, $ continues one).
func isNameByte(c byte) bool { return class[c]&(cLetter|cDigit) != 0 || c == '$' }

// Next returns the next token, EOF at the end (and after an Error).
func (l *Lexer) Next() Token {
	if l.stopped || l.pos >= len(l.src) {
		if l.inExec && !l.stopped {
			l.stopped = true
			return Token{Error, len(l.src), len(l.src)}
		}
		return Token{EOF, len(l.src), len(l.src)}
	}
	start := l.pos
	kind, end := l.scan(start)
	if kind == Error {
		l.stopped = true
		end = len(l.src)
	}
	l.pos, l.prev = end, kind
	return Token{kind, start, end}
}

func (l *Lexer) scan(i int) (Kind, int) {
	s, d := l.src, l.mode.Dialect()
	c := s[i]
	switch {
	case class[c]&cSpace != 0:
		j := i + 1
		for j < len(s) && class[s[j]]&cSpace != 0 {
			j++
		}
		return Space, j
	case isLetter(c):
		return l.word(i)
	case isDigit(c):
		return l.number(i)
	}
	switch c {
	case '-':
		// MySQL reads -- as a comment only before a space, a control
		// character or the end: 1--1 is 1 - -1.
		if i+1 < len(s) && s[i+1] == '-' && (d != MySQL || i+2 == len(s) || s[i+2] <= ' ' || s[i+2] == 0x7f) {
			return Comment, lineEnd(s, i)
		}
	case '#':
		if d == MySQL {
			return Comment, lineEnd(s, i)
		}
		if d == SQLite && i+1 < len(s) && isNameByte(s[i+1]) {
			return Placeholder, nameEnd(s, i+1)
		}
	case '/':
		if i+1 < len(s) && s[i+1] == '*' {
			return l.blockComment(i)
		}
	case '*':
		if l.inExec && i+1 < len(s) && s[i+1] == '/' {
			l.inExec = false
			return ExecCommentEnd, i + 2
		}
	case '\'':
		return l.quoted(i, i, String, d == MySQL && l.mode&NoBackslashEscapes == 0)
	case '"':
		if d == MySQL && l.mode&ANSIQuotes == 0 {
			return l.quoted(i, i, String, l.mode&NoBackslashEscapes == 0)
		}
		return l.quoted(i, i, QuotedIdent, false)
	case '`':
		if d != PostgreSQL || l.mode&BacktickQuotes != 0 {
			return l.quoted(i, i, QuotedIdent, false)
		}
	case '[':
		if d == SQLite {
			if j := indexByte(s, i+1, ']'); j >= 0 {
				return QuotedIdent, j + 1
			}
			return Error, len(s)
		}
	case '.':
		if i+1 < len(s) && isDigit(s[i+1]) && !(l.prev == Ident || l.prev == QuotedIdent) {
			return l.number(i)
		}
	case '?':
		if d == SQLite {
			j := i + 1
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			return Placeholder, j
		}
		if d == MySQL {
			return Placeholder, i + 1
		}
	case '$':
		return l.dollar(i)
	case ':':
		if d == SQLite && i+1 < len(s) && isNameByte(s[i+1]) {
			return Placeholder, nameEnd(s, i+1)
		}
	case '@':
		if d == SQLite && i+1 < len(s) && isNameByte(s[i+1]) {
			return Placeholder, nameEnd(s, i+1)
		}
		if d == MySQL {
			return l.variable(i)
		}
	}
	return Punct, i + 1
}

// word reads a name, or a string with a letter prefix (E'..', X'..', U&'..').
func (l *Lexer) word(i int) (Kind, int) {
	s, d := l.src, l.mode.Dialect()
	j := nameEnd(s, i+1)
	if j < len(s) && j == i+1 {
		c := s[i] | 0x20 // lower case
		switch {
		case s[j] == '\'' && (c == 'x' || d != SQLite && (c == 'b' || c == 'n') || d == PostgreSQL && c == 'e'):
			bs := d == MySQL && l.mode&NoBackslashEscapes == 0 || d == PostgreSQL && c == 'e'
			return l.quoted(i, j, String, bs)
		case d == PostgreSQL && c == 'u' && s[j] == '&' && j+1 < len(s) && (s[j+1] == '\'' || s[j+1] == '"'):
			if s[j+1] == '\'' {
				return l.quoted(i, j+1, String, false)
			}
			return l.quoted(i, j+1, QuotedIdent, false)
		}
	}
	return Ident, j
}

// number reads a numeric literal at i (a digit, or a dot before one). In
// MySQL a name may start with digits (1abc, 0xZZ): that is an Ident.
func (l *Lexer) number(i int) (Kind, int) {
	s, d := l.src, l.mode.Dialect()
	if d == MySQL && s[i] != '.' {
		j := nameEnd(s, i)
		if k, ok := mysqlNumber(s, i, j); ok {
			return Number, k
		}
		return Ident, j
	}
	if s[i] == '0' && i+2 < len(s) {
		var ok func(byte) bool
		switch s[i+1] | 0x20 {
		case 'x':
			ok = func(c byte) bool { return class[c]&cHex != 0 }
		case 'b':
			if d == PostgreSQL {
				ok = func(c byte) bool { return c == '0' || c == '1' }
			}
		case 'o':
			if d == PostgreSQL {
				ok = func(c byte) bool { return c >= '0' && c <= '7' }
			}
		}
		if ok != nil && ok(s[i+2]) {
			return Number, digitsEnd(s, i+2, ok, d == PostgreSQL)
		}
	}
	dec := func(c byte) bool { return isDigit(c) }
	j := i
	if s[j] != '.' {
		j = digitsEnd(s, j, dec, d == PostgreSQL)
	}
	// A fraction, but not the first dot of "1..2" (PostgreSQL reads that
	// as 1 and ..2, neither a number).
	if j < len(s) && s[j] == '.' && !(j+1 < len(s) && s[j+1] == '.') {
		j++
		if j < len(s) && isDigit(s[j]) {
			j = digitsEnd(s, j, dec, d == PostgreSQL)
		}
	}
	return Number, exponentEnd(s, j)
}

// mysqlNumber reads the number MySQL sees in the name-like run s[i:j],
// starting with a digit: digits, 0x.., 0b.., digits with an exponent;
// else the run is a name.
func mysqlNumber(s string, i, j int) (int, bool) {
	run := s[i:j]
	if len(run) > 2 && run[0] == '0' && (run[1] == 'x' || run[1] == 'b') {
		for k := 2; k < len(run); k++ {
			if run[1] == 'x' && class[run[k]]&cHex == 0 || run[1] == 'b' && run[k] != '0' && run[k] != '1' {
				return 0, false
			}
		}
		return j, true
	}
	k := i
	for k < j && isDigit(s[k]) {
		k++
	}
	switch {
	case k == j: // digits: a fraction and an exponent may follow
		if k < len(s) && s[k] == '.' {
			k++
			for k < len(s) && isDigit(s[k]) {
				k++
			}
		}
		return exponentEnd(s, k), true
	case s[k]|0x20 == 'e':
		// 1e5 or 1e+5 is a number; 1e, 1ex a name.
		m := k + 1
		for m < j && isDigit(s[m]) {
			m++
		}
		if m == j && m > k+1 {
			return j, true
		}
		if m == j && m == k+1 && j+1 < len(s) && (s[j] == '+' || s[j] == '-') && isDigit(s[j+1]) {
			m = j + 1
			for m < len(s) && isDigit(s[m]) {
				m++
			}
			return m, true
		}
	}
	return 0, false
}

// digitsEnd is the end of the run of digits (ok) from i; PostgreSQL allows
// one _ between digits.
func digitsEnd(s string, i int, ok func(byte) bool, underscore bool) int {
	for i < len(s) {
		switch {
		case ok(s[i]):
			i++
		case underscore && s[i] == '_' && i+1 < len(s) && ok(s[i+1]) && i > 0 && ok(s[i-1]):
			i++
		default:
			return i
		}
	}
	return i
}

// exponentEnd is the end of an exponent at i (e5, E-3), or i.
func exponentEnd(s string, i int) int {
	if i < len(s) && s[i]|0x20 == 'e' {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			return j
		}
	}
	return i
}

// quoted reads a quoted token whose prefix starts at i and whose opening
// quote is at q: a doubled closing quote stands for itself, and with bs a
// backslash escapes the next byte.
func (l *Lexer) quoted(i, q int, kind Kind, bs bool) (Kind, int) {
	s := l.src
	quote := s[q]
	for j := q + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && bs:
			j++
		case c == quote:
			if j+1 < len(s) && s[j+1] == quote {
				j++
				continue
			}
			return kind, j + 1
		}
	}
	return Error, len(s)
}

// blockComment reads /* ... */ at i.
func (l *Lexer) blockComment(i int) (Kind, int) {
	s, d := l.src, l.mode.Dialect()
	if d == MySQL && !l.inExec && i+2 < len(s) {
		j := i + 2
		if s[j] == 'M' && j+1 < len(s) && s[j+1] == '!' {
			j++
		}
		if s[j] == '!' {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			l.inExec = true
			return ExecCommentStart, j
		}
	}
	depth := 0
	for j := i; j+1 < len(s); j++ {
		switch {
		case s[j] == '/' && s[j+1] == '*' && (depth == 0 || d == PostgreSQL):
			depth++
			j++
		case s[j] == '*' && s[j+1] == '/':
			j++
			if depth--; depth == 0 {
				return Comment, j + 1
			}
		}
	}
	return Error, len(s)
}

// dollar reads what starts with $ at i: PostgreSQL's $1 and $tag$...$tag$,
// SQLite's $name; in MySQL $ starts a name.
func (l *Lexer) dollar(i int) (Kind, int) {
	s := l.src
	switch l.mode.Dialect() {
	case MySQL:
		return Ident, nameEnd(s, i+1)
	case SQLite:
		if i+1 < len(s) && isNameByte(s[i+1]) {
			return Placeholder, nameEnd(s, i+1)
		}
		return Punct, i + 1
	}
	if i+1 < len(s) && isDigit(s[i+1]) {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		return Placeholder, j
	}
	// $tag$: the tag is a name without $ (possibly empty).
	j := i + 1
	if j < len(s) && isLetter(s[j]) {
		for j < len(s) && class[s[j]]&(cLetter|cDigit) != 0 {
			j++
		}
	}
	if j >= len(s) || s[j] != '$' {
		return Punct, i + 1
	}
	tag := s[i : j+1]
	for k := j + 1; k+len(tag) <= len(s); k++ {
		if s[k] == '$' && s[k:k+len(tag)] == tag {
			return String, k + len(tag)
		}
	}
	return Error, len(s)
}

// variable reads a MySQL @name, @'name', @`name` or @@[scope.]name at i.
func (l *Lexer) variable(i int) (Kind, int) {
	s := l.src
	j := i + 1
	if j < len(s) && s[j] == '@' {
		j++
	} else if j < len(s) && (s[j] == '\'' || s[j] == '"' || s[j] == '`') {
		return l.quoted(i, j, Variable, s[j] != '`' && l.mode&NoBackslashEscapes == 0)
	}
	k := j
	for k < len(s) && (isNameByte(s[k]) || s[k] == '.') {
		k++
	}
	if k == j {
		return Punct, i + 1
	}
	return Variable, k
}

func nameEnd(s string, i int) int {
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	return i
}

func lineEnd(s string, i int) int {
	if j := indexByte(s, i, '\n'); j >= 0 {
		return j
	}
	return len(s)
}

func indexByte(s string, from int, c byte) int {
	for j := from; j < len(s); j++ {
		if s[j] == c {
			return j
		}
	}
	return -1
}

// Unquote returns what the text of a QuotedIdent or String token spells
// in mode m: without its quotes, a doubled quote read as one (a [name]
// and a $tag$ string as written inside). ok is false for a text it cannot
// read exactly without interpreting escapes: one with a prefix (E'..',
// X'..', U&".."), or a backslash in a string whose mode reads backslash
// escapes (MySQL's strings).
func Unquote(text string, m Mode) (s string, ok bool) {
	if len(text) < 2 {
		return "", false
	}
	q := text[0]
	switch q {
	case '[':
		if m.Dialect() != SQLite || text[len(text)-1] != ']' {
			return "", false
		}
		return text[1 : len(text)-1], true
	case '$':
		if m.Dialect() != PostgreSQL {
			return "", false
		}
		k := indexByte(text, 1, '$')
		if k < 0 || 2*(k+1) > len(text) || text[len(text)-k-1:] != text[:k+1] {
			return "", false
		}
		return text[k+1 : len(text)-k-1], true
	case '\'', '"':
		if m.Dialect() == MySQL && m&NoBackslashEscapes == 0 && (q == '\'' || m&ANSIQuotes == 0) && indexByte(text, 1, '\\') >= 0 {
			return "", false
		}
	case '`':
	default:
		return "", false
	}
	if text[len(text)-1] != q {
		return "", false
	}
	body := text[1 : len(text)-1]
	if indexByte(body, 0, q) < 0 {
		return body, true
	}
	b := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		b = append(b, body[i])
		if body[i] == q {
			i++ // the doubled quote
		}
	}
	return string(b), true
}
