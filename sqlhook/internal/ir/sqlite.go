package ir

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
)

// sqliteMaxVariable is SQLite's default SQLITE_MAX_VARIABLE_NUMBER: ?NNN
// beyond it is an error there.
const sqliteMaxVariable = 32766

// SQLiteToPG respells a SQLite statement for the PostgreSQL grammar (see
// SQLiteRespell). A parameter that binds a named argument (sql.Named) is
// refused here: the caller's arguments reach a plan by position only.
func SQLiteToPG(s string) (string, error) {
	text, names, err := SQLiteRespell(s)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if n != "" {
			return "", fmt.Errorf("parameter bound by the name %q (sql.Named) on SQLite: use ?, ?NNN or $NNN placeholders", n)
		}
	}
	return text, nil
}

// SQLiteRespell respells a SQLite statement for the PostgreSQL grammar:
// `x` and [x] identifiers become "x"; LIMIT offset, count becomes LIMIT
// count OFFSET offset; COLLATE BINARY becomes COLLATE "binary"; every
// parameter (?, ?NNN, :name, @name, $name) becomes the $k of the argument
// the SQLite driver binds to it. Everything else (strings, comments,
// "identifiers") is copied as is. Every placeholder becomes a template
// hole, so what reaches SQLite uses ? again.
//
// names is nil when every parameter binds an argument by position ($k is
// argument k). Otherwise it has one entry per $k: "" for argument k, or
// the sql.Named name $k binds (see SQLiteArgs).
func SQLiteRespell(s string) (text string, names []string, err error) {
	// SQLite numbers parameters as it reads them, and a slot's binding
	// depends on the first name it was given, which may come later in the
	// text (?, ?1): a first pass learns every slot, a second writes.
	dry := &respeller{s: s}
	if err := dry.run(0, len(s)); err != nil {
		return "", nil, err
	}
	r := &respeller{s: s, out: make([]byte, 0, len(s)+8)}
	names = dry.bindings(r)
	if err := r.run(0, len(s)); err != nil {
		return "", nil, err
	}
	return string(r.out), names, nil
}

// respeller reads a SQLite statement the way SQLite's tokenizer does,
// numbering parameters as sqlite3ExprAssignVarNumber does.
type respeller struct {
	s        string
	out      []byte
	nvar     int            // the largest parameter number so far
	slotName map[int]string // the name a slot was first given (?NNN, :a, $1, ...)
	nameSlot map[string]int // the slot of each named parameter
	pgNum    map[int]int    // second pass: slot -> $k
}

// bindings gives w the $k of every slot d saw, as modernc.org/sqlite (and
// the drivers built on it) binds them: a slot without a name, or named ?N
// or $N (N written as strconv.Itoa writes it), takes argument N (the
// slot's own number when unnamed); any other name takes the sql.Named argument of that name
// without its prefix. Named arguments get numbers after the positional.
func (d *respeller) bindings(w *respeller) []string {
	w.pgNum = make(map[int]int, d.nvar)
	var byName []string
	top := 0
	for slot := 1; slot <= d.nvar; slot++ {
		if n, ok := positional(slot, d.slotName[slot]); ok {
			w.pgNum[slot] = n
			top = max(top, n)
		} else {
			byName = append(byName, d.slotName[slot])
		}
	}
	if len(byName) == 0 {
		return nil
	}
	names := make([]string, top)
	seen := map[string]int{}
	for slot := 1; slot <= d.nvar; slot++ {
		if _, ok := w.pgNum[slot]; ok {
			continue
		}
		name := d.slotName[slot][1:]
		k, ok := seen[name]
		if !ok {
			names = append(names, name)
			k = len(names)
			seen[name] = k
		}
		w.pgNum[slot] = k
	}
	return names
}

// positional is the argument number a slot binds by position, if it does.
func positional(slot int, name string) (int, bool) {
	if name == "" {
		return slot, true
	}
	if name[0] != '?' && name[0] != '$' {
		return 0, false
	}
	n, err := strconv.Atoi(name[1:])
	if err != nil || n < 1 || strconv.Itoa(n) != name[1:] {
		return 0, false // ?01, $1a: bound by a name no argument can have
	}
	return n, true
}

// run respells s[i:end], which starts and ends on token boundaries.
func (r *respeller) run(i, end int) error {
	s := r.s
	for i < end {
		c := s[i]
		var err error
		switch {
		case (c == '\'' || c == '"') && pgOnlyPrefix(s, i):
			// E'...', U&'...' and U&"..." are escape syntax to PostgreSQL's
			// grammar but a name and a plain string to SQLite: the two
			// would read different statements.
			return fmt.Errorf("PostgreSQL escape syntax at offset %d, which SQLite reads otherwise", i)
		case c == '$' && i+1 < end && s[i+1] == '$':
			return fmt.Errorf("$$ at offset %d: PostgreSQL reads a dollar-quoted string, SQLite does not", i)
		case c == '\'' || c == '"':
			j := endQuoted(s, i, c)
			if j < 0 {
				return fmt.Errorf("unterminated %c at offset %d", c, i)
			}
			r.out = append(r.out, s[i:j]...)
			i = j
		case c == '`' || c == '[':
			i, err = r.quotedName(i)
		case c == '-' && i+1 < end && s[i+1] == '-', c == '/' && i+1 < end && s[i+1] == '*':
			i, err = r.comment(i)
		case c == '?':
			j := i + 1
			for j < end && IsDigit(s[j]) {
				j++
			}
			err = r.param(s[i:j], i)
			i = j
		case (c == ':' || c == '@' || c == '$') && i+1 < end && isWordByte(s[i+1]) && !(c == ':' && i > 0 && s[i-1] == ':'):
			i, err = r.namedParam(i, end)
		case isIdentStart(c) || c >= 0x80:
			i, err = r.word(i, end)
		default:
			r.out = append(r.out, c)
			i++
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// quotedName respells the `name` or [name] at i as "name".
func (r *respeller) quotedName(i int) (int, error) {
	s := r.s
	var name string
	var next int
	if s[i] == '`' {
		next = endQuoted(s, i, '`')
		if next < 0 {
			return 0, fmt.Errorf("unterminated ` at offset %d", i)
		}
		name = strings.ReplaceAll(s[i+1:next-1], "``", "`")
	} else {
		j := strings.IndexByte(s[i+1:], ']')
		if j < 0 {
			return 0, fmt.Errorf("unterminated [ at offset %d", i)
		}
		name, next = s[i+1:i+1+j], i+j+2
	}
	r.out = append(r.out, '"')
	r.out = append(r.out, strings.ReplaceAll(name, `"`, `""`)...)
	r.out = append(r.out, '"')
	return next, nil
}

// comment copies the comment at i.
func (r *respeller) comment(i int) (int, error) {
	j := commentEnd(r.s, i)
	if j < 0 {
		return 0, fmt.Errorf("unterminated comment at offset %d", i)
	}
	if r.s[i] == '-' {
		r.out = append(r.out, r.s[i:j]...)
		return j, nil
	}
	// SQLite's comments do not nest, PostgreSQL's do: a "/*" inside must
	// not open another one for the grammar reading this text.
	r.out = append(r.out, "/*"...)
	r.out = append(r.out, strings.ReplaceAll(r.s[i+2:j-2], "/*", "/ *")...)
	r.out = append(r.out, "*/"...)
	return j, nil
}

// commentEnd is the offset just past the comment starting at i, -1 when
// a block comment is unterminated.
func commentEnd(s string, i int) int {
	if s[i] == '-' {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return len(s)
		}
		return i + j
	}
	j := strings.Index(s[i+2:], "*/")
	if j < 0 {
		return -1
	}
	return i + 2 + j + 2
}

// namedParam reads the :name, @name or $name at i as SQLite's tokenizer
// does (identifier characters).
func (r *respeller) namedParam(i, end int) (int, error) {
	s := r.s
	j := i + 1
	for j < end && isWordByte(s[j]) {
		j++
	}
	if j < end && (s[j] == '(' || s[j] == ':' && j+1 < end && s[j+1] == ':') {
		// SQLite reads $a(x) and $a::b as one Tcl-style parameter;
		// PostgreSQL would read a call or a cast.
		return 0, fmt.Errorf("parameter %s followed by %c at offset %d: SQLite reads it as part of the parameter's name", s[i:j], s[j], j)
	}
	return j, r.param(s[i:j], i)
}

// param numbers the parameter tok (at offset at) as SQLite does and
// writes the $k it binds.
func (r *respeller) param(tok string, at int) error {
	if r.slotName == nil {
		r.slotName, r.nameSlot = map[int]string{}, map[string]int{}
	}
	var slot int
	switch {
	case tok == "?":
		r.nvar++
		slot = r.nvar
	case tok[0] == '?':
		n, err := strconv.Atoi(tok[1:])
		if err != nil || n < 1 || n > sqliteMaxVariable {
			return fmt.Errorf("bad placeholder %s at offset %d: SQLite numbers them ?1 to ?%d", tok, at, sqliteMaxVariable)
		}
		slot = n
		r.nvar = max(r.nvar, n)
		if r.slotName[n] == "" {
			r.slotName[n] = tok
		}
	default:
		if slot = r.nameSlot[tok]; slot == 0 {
			r.nvar++
			slot = r.nvar
			r.nameSlot[tok], r.slotName[slot] = slot, tok
		}
	}
	if r.nvar > sqliteMaxVariable {
		return fmt.Errorf("too many parameters at offset %d: SQLite allows %d", at, sqliteMaxVariable)
	}
	if r.pgNum != nil {
		r.out = append(r.out, '$')
		r.out = strconv.AppendInt(r.out, int64(r.pgNum[slot]), 10)
	}
	return nil
}

// word copies the keyword or identifier at i; after LIMIT it reads
// SQLite's LIMIT offset, count.
func (r *respeller) word(i, end int) (int, error) {
	j := i + 1
	for j < end && isWordByte(r.s[j]) {
		j++
	}
	r.out = append(r.out, r.s[i:j]...)
	switch {
	case strings.EqualFold(r.s[i:j], "limit"):
		return r.limitComma(j, end)
	case strings.EqualFold(r.s[i:j], "collate"):
		return r.collation(j, end)
	}
	return j, nil
}

// collation respells COLLATE BINARY (i just past COLLATE) as COLLATE
// "binary": BINARY is a keyword to PostgreSQL's grammar, and SQLite finds
// collations by name in any case, quoted or not.
func (r *respeller) collation(i, end int) (int, error) {
	k := skipBlank(r.s, i, end)
	j := k
	for j < end && isWordByte(r.s[j]) {
		j++
	}
	if !strings.EqualFold(r.s[k:j], "binary") {
		return i, nil
	}
	if err := r.run(i, k); err != nil {
		return 0, err
	}
	r.out = append(r.out, `"binary"`...)
	return j, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
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

// SQLiteArgs lays out the caller's arguments as $1..$len(names) of a
// statement SQLiteRespell returned names for, binding as modernc.org/sqlite
// (and the drivers built on it) does: $k with no name takes the argument
// in position k (named or not), a name takes the first argument of that
// name.
func SQLiteArgs(names []string, args []driver.NamedValue) ([]driver.NamedValue, error) {
	out := make([]driver.NamedValue, len(names))
	for k, name := range names {
		out[k].Ordinal = k + 1
		if name == "" {
			if k >= len(args) {
				return nil, fmt.Errorf("sqlhook: the statement binds argument %d but %d arguments were given", k+1, len(args))
			}
			out[k].Value = args[k].Value
			continue
		}
		found := false
		for _, a := range args {
			if a.Name == name {
				out[k].Value, found = a.Value, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("sqlhook: missing named argument %q", name)
		}
	}
	return out, nil
}

// limitComma reads what follows LIMIT (i just past it). SQLite's LIMIT
// offset, count is written as LIMIT count OFFSET offset, which both
// grammars read and SQLite runs alike; the offset's parameters are still
// numbered first, as SQLite numbers them. Only a number, a parameter or a
// parenthesized expression (with a sign) is read on either side of the
// comma: the end of a longer expression is not told by tokens alone.
func (r *respeller) limitComma(i, end int) (int, error) {
	s := r.s
	aStart := skipBlank(s, i, end)
	aEnd := limitItemEnd(s, aStart, end)
	comma := skipBlank(s, max(aEnd, aStart), end)
	if aEnd < 0 || comma >= end || s[comma] != ',' {
		if commaFollows(s, aStart, end) {
			return 0, fmt.Errorf("LIMIT offset, count at offset %d with an expression sqlhook does not read there: write LIMIT count OFFSET offset", i)
		}
		return i, nil
	}
	bStart := skipBlank(s, comma+1, end)
	bEnd := limitItemEnd(s, bStart, end)
	if bEnd < 0 || !limitEnds(s, skipBlank(s, bEnd, end), end) {
		return 0, fmt.Errorf("LIMIT offset, count at offset %d with an expression sqlhook does not read there: write LIMIT count OFFSET offset", i)
	}
	mark := len(r.out)
	if err := r.run(aStart, aEnd); err != nil {
		return 0, err
	}
	offset := string(r.out[mark:])
	r.out = r.out[:mark]
	r.out = append(r.out, ' ')
	if err := r.run(bStart, bEnd); err != nil {
		return 0, err
	}
	r.out = append(r.out, " OFFSET "...)
	r.out = append(r.out, offset...)
	return bEnd, nil
}

// limitItemEnd is the end of the number, parameter or parenthesized
// expression at i, with an optional sign; -1 for anything else.
func limitItemEnd(s string, i, end int) int {
	if i < end && (s[i] == '+' || s[i] == '-' && (i+1 >= end || s[i+1] != '-')) {
		i = skipBlank(s, i+1, end)
	}
	if i >= end {
		return -1
	}
	j := i + 1
	switch c := s[i]; {
	case IsDigit(c):
		for j < end && (isWordByte(s[j]) || s[j] == '.') {
			j++
		}
	case c == '?':
		for j < end && IsDigit(s[j]) {
			j++
		}
	case (c == ':' || c == '@' || c == '$') && j < end && isWordByte(s[j]):
		for j < end && isWordByte(s[j]) {
			j++
		}
	case c == '(':
		return groupEnd(s, i, end)
	default:
		return -1
	}
	return j
}

// limitEnds reports whether the clause ends at i: the end of the text or
// statement, the closing parenthesis of a subquery, or an INSERT ...
// SELECT's ON CONFLICT or RETURNING.
func limitEnds(s string, i, end int) bool {
	if i >= end || s[i] == ')' || s[i] == ';' {
		return true
	}
	j := i
	for j < end && isWordByte(s[j]) {
		j++
	}
	w := s[i:j]
	return strings.EqualFold(w, "on") || strings.EqualFold(w, "returning")
}

// commaFollows reports whether a comma follows LIMIT's expression at i at
// its own nesting level, before the clause ends (OFFSET, ON CONFLICT and
// RETURNING end it too).
func commaFollows(s string, i, end int) bool {
	for i < end {
		switch c := s[i]; {
		case c == ',':
			return true
		case c == ')' || c == ';':
			return false
		case isWordByte(c):
			j := i
			for j < end && isWordByte(s[j]) {
				j++
			}
			if limitEnds(s, i, end) || strings.EqualFold(s[i:j], "offset") {
				return false
			}
			i = j
			continue
		case c == '(':
			if i = groupEnd(s, i, end); i < 0 {
				return false
			}
			continue
		}
		j := skipToken(s, i, end)
		if j < 0 {
			return false
		}
		i = j
	}
	return false
}

// groupEnd is the offset just past the parenthesis matching the one at i,
// -1 when it is not closed.
func groupEnd(s string, i, end int) int {
	depth := 0
	for i < end {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i + 1
			}
		}
		if i = skipToken(s, i, end); i < 0 {
			return -1
		}
	}
	return -1
}

// skipToken is the offset past the byte at i, or past the whole quoted
// name, string or comment starting there; -1 when it is unterminated.
func skipToken(s string, i, end int) int {
	j := i + 1
	switch c := s[i]; {
	case c == '\'' || c == '"' || c == '`':
		j = endQuoted(s, i, c)
	case c == '[':
		if j = strings.IndexByte(s[i:end], ']'); j >= 0 {
			j += i + 1
		}
	case c == '-' && i+1 < end && s[i+1] == '-', c == '/' && i+1 < end && s[i+1] == '*':
		j = commentEnd(s, i)
	}
	if j > end {
		return -1
	}
	return j
}

// skipBlank skips white space and comments from i.
func skipBlank(s string, i, end int) int {
	for i < end {
		switch {
		case IsSpace(s[i]):
			i++
		case s[i] == '-' && i+1 < end && s[i+1] == '-', s[i] == '/' && i+1 < end && s[i+1] == '*':
			j := commentEnd(s, i)
			if j < 0 {
				return end
			}
			i = j
		default:
			return i
		}
	}
	return i
}
