package ir

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	"github.com/shardkey/shardkey/internal/sqltok"
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
	if err != nil || n < 1 || n > sqliteMaxVariable || strconv.Itoa(n) != name[1:] {
		// ?01, $1a: bound by a name no argument can have; $1000000000
		// too (as a position it would size the argument list).
		return 0, false
	}
	return n, true
}

// run respells s[i:end], which starts and ends on token boundaries; the
// tokens are internal/sqltok's, by SQLite's rules.
func (r *respeller) run(i, end int) error {
	s := r.s
	l, base := sqltok.New(s[i:end], sqltok.SQLite), i
	for i < end {
		t := l.Next()
		t.Start, t.End = t.Start+base, t.End+base
		text := s[t.Start:t.End]
		var err error
		next := t.End
		switch t.Kind {
		case sqltok.Error:
			return unterminatedAt(text, i)
		case sqltok.QuotedIdent:
			if text[0] != '"' {
				r.quotedName(text)
				break
			}
			r.out = append(r.out, text...)
		case sqltok.String:
			r.out = append(r.out, text...)
		case sqltok.Comment:
			r.comment(text)
		case sqltok.Placeholder:
			next, err = r.placeholder(t, end)
		case sqltok.Ident:
			next, err = r.word(t, end)
		case sqltok.Number:
			// SQLite reads a number run on into name bytes (1a, 0x1$2)
			// as one illegal token: copied whole, no parameter in it.
			for next < end && isWordByte(s[next]) {
				next++
			}
			r.out = append(r.out, s[i:next]...)
		default:
			r.out = append(r.out, text...)
		}
		if err != nil {
			return err
		}
		if next != t.End { // read on past the token: lex again from there
			l, base = sqltok.New(s[next:end], sqltok.SQLite), next
		}
		i = next
	}
	return nil
}

// tokAt is the token of s[:end] starting at i.
func tokAt(s string, i, end int) sqltok.Token {
	l := sqltok.New(s[i:end], sqltok.SQLite)
	t := l.Next()
	t.Start, t.End = t.Start+i, t.End+i
	return t
}

// unterminatedAt is the error for the Error token text at offset i.
func unterminatedAt(text string, i int) error {
	if strings.HasPrefix(text, "/*") {
		return fmt.Errorf("unterminated comment at offset %d", i)
	}
	k := max(strings.IndexAny(text, "'\"`["), 0) // after an X prefix
	return fmt.Errorf("unterminated %c at offset %d", text[k], i+k)
}

// quotedName respells the `name` or [name] text as "name".
func (r *respeller) quotedName(text string) {
	name, _ := sqltok.Unquote(text, sqltok.SQLite)
	r.out = append(r.out, '"')
	r.out = append(r.out, strings.ReplaceAll(name, `"`, `""`)...)
	r.out = append(r.out, '"')
}

// comment copies a comment.
func (r *respeller) comment(text string) {
	if text[0] == '-' {
		r.out = append(r.out, text...)
		return
	}
	// SQLite's comments do not nest, PostgreSQL's do: a "/*" inside must
	// not open another one for the grammar reading this text.
	r.out = append(r.out, "/*"...)
	r.out = append(r.out, strings.ReplaceAll(text[2:len(text)-2], "/*", "/ *")...)
	r.out = append(r.out, "*/"...)
}

// placeholder respells the placeholder t: ?, ?NNN, :name, @name, $name
// (#name is copied as written, as a # and a name).
func (r *respeller) placeholder(t sqltok.Token, end int) (int, error) {
	s := r.s
	tok := s[t.Start:t.End]
	switch {
	case tok[0] == '?':
		return t.End, r.param(tok, t.Start)
	case strings.HasPrefix(tok, "$$"):
		return 0, fmt.Errorf("$$ at offset %d: PostgreSQL reads a dollar-quoted string, SQLite does not", t.Start)
	case tok[0] == '#' || tok[0] == ':' && t.Start > 0 && s[t.Start-1] == ':':
		r.out = append(r.out, tok[0])
		return t.Start + 1, nil
	}
	if j := t.End; j < end && (s[j] == '(' || s[j] == ':' && j+1 < end && s[j+1] == ':') {
		// SQLite reads $a(x) and $a::b as one Tcl-style parameter;
		// PostgreSQL would read a call or a cast.
		return 0, fmt.Errorf("parameter %s followed by %c at offset %d: SQLite reads it as part of the parameter's name", tok, s[j], j)
	}
	return t.End, r.param(tok, t.Start)
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

// word copies the keyword or identifier t; after LIMIT it reads SQLite's
// LIMIT offset, count.
func (r *respeller) word(t sqltok.Token, end int) (int, error) {
	w := r.s[t.Start:t.End]
	if q := pgOnlyPrefix(r.s, w, t.End); q >= 0 && (t.Start == 0 || !isWordByte(r.s[t.Start-1])) {
		// E'...', U&'...' and U&"..." are escape syntax to PostgreSQL's
		// grammar but a name and a plain string to SQLite: the two would
		// read different statements.
		return 0, fmt.Errorf("PostgreSQL escape syntax at offset %d, which SQLite reads otherwise", q)
	}
	r.out = append(r.out, w...)
	switch {
	case strings.EqualFold(w, "limit"):
		return r.limitComma(t.End, end)
	case strings.EqualFold(w, "collate"):
		return r.collation(t.End, end)
	}
	return t.End, nil
}

// collation respells COLLATE BINARY (i just past COLLATE) as COLLATE
// "binary": BINARY is a keyword to PostgreSQL's grammar, and SQLite finds
// collations by name in any case, quoted or not.
func (r *respeller) collation(i, end int) (int, error) {
	k := skipBlank(r.s, i, end)
	if k >= end {
		return i, nil
	}
	t := tokAt(r.s, k, end)
	if t.Kind != sqltok.Ident || !strings.EqualFold(r.s[t.Start:t.End], "binary") {
		return i, nil
	}
	if err := r.run(i, k); err != nil {
		return 0, err
	}
	r.out = append(r.out, `"binary"`...)
	return t.End, nil
}

// pgOnlyPrefix is the offset of the quote when the name w, ending at j,
// is E before ' or U before &' or &" (PostgreSQL's E'...', U&'...',
// U&"..."), else -1.
func pgOnlyPrefix(s, w string, j int) int {
	switch {
	case (w == "e" || w == "E") && j < len(s) && s[j] == '\'':
		return j
	case (w == "u" || w == "U") && j+1 < len(s) && s[j] == '&' && (s[j+1] == '\'' || s[j+1] == '"'):
		return j + 1
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
	t := tokAt(s, i, end)
	switch {
	case t.Kind == sqltok.Number && IsDigit(s[i]):
		// SQLite reads a number run on into a name (10abc) as an error;
		// it is one item here, as before.
		for t.End < end {
			n := tokAt(s, t.End, end)
			if n.Kind != sqltok.Ident && n.Kind != sqltok.Number {
				break
			}
			t.End = n.End
		}
		return t.End
	case t.Kind == sqltok.Placeholder && s[i] != '#':
		return t.End
	case s[i] == '(':
		return groupEnd(s, i, end)
	}
	return -1
}

// limitEnds reports whether the clause ends at i: the end of the text or
// statement, the closing parenthesis of a subquery, or an INSERT ...
// SELECT's ON CONFLICT or RETURNING.
func limitEnds(s string, i, end int) bool {
	if i >= end || s[i] == ')' || s[i] == ';' {
		return true
	}
	t := tokAt(s, i, end)
	w := s[t.Start:t.End]
	return t.Kind == sqltok.Ident && (strings.EqualFold(w, "on") || strings.EqualFold(w, "returning"))
}

// commaFollows reports whether a comma follows LIMIT's expression at i at
// its own nesting level, before the clause ends (OFFSET, ON CONFLICT and
// RETURNING end it too).
func commaFollows(s string, i, end int) bool {
	for i < end {
		t := tokAt(s, i, end)
		switch {
		case t.Kind == sqltok.Error:
			return false
		case s[i] == ',':
			return true
		case s[i] == ')' || s[i] == ';':
			return false
		case t.Kind == sqltok.Ident:
			if limitEnds(s, i, end) || strings.EqualFold(s[t.Start:t.End], "offset") {
				return false
			}
		case s[i] == '(':
			if i = groupEnd(s, i, end); i < 0 {
				return false
			}
			continue
		}
		i = t.End
	}
	return false
}

// groupEnd is the offset just past the parenthesis matching the one at i,
// -1 when it is not closed.
func groupEnd(s string, i, end int) int {
	depth := 0
	for i < end {
		t := tokAt(s, i, end)
		switch {
		case t.Kind == sqltok.Error:
			return -1
		case t.Kind != sqltok.Punct:
		case s[i] == '(':
			depth++
		case s[i] == ')':
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i = t.End
	}
	return -1
}

// skipBlank skips white space and comments from i (to end when a comment
// is left open).
func skipBlank(s string, i, end int) int {
	for i < end {
		switch t := tokAt(s, i, end); {
		case t.Kind == sqltok.Space || t.Kind == sqltok.Comment:
			i = t.End
		case t.Kind == sqltok.Error && strings.HasPrefix(s[i:], "/*"):
			return end
		default:
			return i
		}
	}
	return i
}
