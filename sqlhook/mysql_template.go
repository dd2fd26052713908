package sqlhook

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// myTemplate cuts a MySQL statement's own text into the plan's template:
// holes at the table references and qualifiers naming logic tables, at the
// placeholders, around the INSERT rows and at the LIMIT values; every
// other byte is copied as written.
type myTemplate struct {
	c       *myCompiler
	q       string
	toks    []myTok
	slots   *nameSlots
	stmt    ast.StmtNode
	found   map[slotRef]int
	dbs     map[string]string // data source -> database
	edits   []edit
	nameTok map[*ast.TableName]int // the name token of each placed table
}

func (t *myTemplate) fail(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}

func (t *myTemplate) build() error {
	if err := t.params(); err != nil {
		return err
	}
	var cands []int
	for j, tk := range t.toks {
		if name := identText(t.q, tk); name != "" {
			_, phys := t.c.h.physicalOf(name)
			if s, b := t.c.h.classify(name); s || b || phys && len(t.c.asLogic) > 0 {
				cands = append(cands, j)
			}
		}
	}
	t.found = locate(t.q, t.toks, cands, t.slots)
	t.dbs = t.c.h.mysqlDatabases()
	if err := t.names(); err != nil {
		return err
	}
	for tn := range t.c.placed {
		if _, ok := t.nameTok[tn]; !ok {
			return t.fail("cannot find table %s in the statement text", tn.Name.O)
		}
	}
	switch x := t.stmt.(type) {
	case *ast.InsertStmt:
		if t.c.p.ins != nil {
			if err := t.insert(x); err != nil {
				return err
			}
		}
	case *ast.SelectStmt:
		if err := t.limit(x); err != nil {
			return err
		}
		t.selectMerge()
	}
	slices.SortStableFunc(t.edits, func(a, b edit) int { return a.start - b.start })
	for i := 1; i < len(t.edits); i++ {
		if t.edits[i].start < t.edits[i-1].end {
			return t.fail("cannot rewrite: overlapping names in the statement text")
		}
	}
	t.c.p.tmpl = buildTemplate(t.q, t.edits)
	return nil
}

// params makes every placeholder a hole, after checking that the
// tokenizer and the grammar see the same placeholders.
func (t *myTemplate) params() error {
	v := &markerVisitor{}
	t.stmt.Accept(v)
	slices.SortFunc(v.ms, func(a, b *test_driver.ParamMarkerExpr) int { return a.Offset - b.Offset })
	n := 0
	for _, tk := range t.toks {
		if tk.kind != '?' {
			continue
		}
		if n >= len(v.ms) || v.ms[n].Offset != tk.start {
			return t.fail("cannot place the placeholders in the statement text")
		}
		t.edits = append(t.edits, edit{tk.start, tk.end, segment{hole: holeParam, i: n}})
		n++
	}
	if n != len(v.ms) {
		return t.fail("cannot place the placeholders in the statement text")
	}
	t.c.p.nparams = n
	return nil
}

// names makes holes of the placed tables and of the column qualifiers
// naming them.
func (t *myTemplate) names() error {
	p := t.c.p
	t.nameTok = map[*ast.TableName]int{}
	for k, tn := range t.slots.tables {
		if !t.c.placed[tn] {
			continue
		}
		j, ok := t.found[slotRef{fTableName, k}]
		if !ok {
			return t.fail("cannot find table %s in the statement text", tn.Name.O)
		}
		i := tableIndex(p, t.c.logicName(tn))
		start, err := t.qualified(j, tn.Schema.O, p.tables[i].logic)
		if err != nil {
			return err
		}
		t.nameTok[tn] = j
		t.edits = append(t.edits, edit{start, t.toks[j].end, segment{hole: holeTable, i: i}})
	}
	qualifier := func(schema, table, what string, field slotField, k int) error {
		i, ok := t.c.aliases[strings.ToLower(table)]
		if table == "" || !ok || i < 0 || !strings.EqualFold(p.tables[i].logic, table) {
			return nil
		}
		j, ok := t.found[slotRef{field, k}]
		if !ok {
			return t.fail("cannot find the qualifier of %s in the statement text", what)
		}
		start, err := t.qualified(j, schema, p.tables[i].logic)
		if err != nil {
			return err
		}
		t.edits = append(t.edits, edit{start, t.toks[j].end, segment{hole: holeTable, i: i}})
		return nil
	}
	for k, cn := range t.slots.cols {
		if err := qualifier(cn.Schema.O, cn.Table.O, cn.Table.O+"."+cn.Name.O, fColTable, k); err != nil {
			return err
		}
	}
	for k, w := range t.slots.stars {
		if err := qualifier(w.Schema.O, w.Table.O, w.Table.O+".*", fStarTable, k); err != nil {
			return err
		}
	}
	return nil
}

func tableIndex(p *plan, name string) int {
	key := strings.ToLower(name)
	for i, t := range p.tables {
		if t.key == key {
			return i
		}
	}
	return -1
}

// qualified returns where the name at token j, of logic table logic,
// starts with its database qualifier, which must be the database of a data
// source holding the table (see ownDatabase): it is dropped.
func (t *myTemplate) qualified(j int, schema, logic string) (int, error) {
	if schema == "" {
		return t.toks[j].start, nil
	}
	if j < 2 || t.toks[j-1].kind != '.' || identText(t.q, t.toks[j-2]) != schema {
		return 0, t.fail("cannot find the qualifier of %s.%s in the statement text", schema, logic)
	}
	if !t.c.h.ownDatabase(t.dbs, schema, logic) {
		if len(t.dbs) == 0 {
			return 0, t.fail("%s.%s: the databases of the data sources are unknown (give each a mysql DSN in the rules' dataSources), so the qualifier cannot be resolved", schema, logic)
		}
		return 0, t.fail("%s.%s: database %s is not the database of a data source holding %s", schema, logic, schema, logic)
	}
	return t.toks[j-2].start, nil
}

// take removes the edits inside [a, b) and returns them relative to a.
func (t *myTemplate) take(a, b int) []edit {
	var in []edit
	kept := t.edits[:0]
	for _, e := range t.edits {
		if e.start >= a && e.end <= b && e.end > e.start {
			e.start, e.end = e.start-a, e.end-a
			in = append(in, e)
			continue
		}
		kept = append(kept, e)
	}
	t.edits = kept
	return in
}

// segs is the template of q[a:b] with the edits inside it, which it takes.
func (t *myTemplate) segs(a, b int) []segment {
	return buildTemplate(t.q[a:b], t.take(a, b))
}

// word reports whether token j is the keyword w.
func (t *myTemplate) word(j int, ws ...string) bool {
	if j < 0 || j >= len(t.toks) || t.toks[j].kind != 'w' {
		return false
	}
	s := t.q[t.toks[j].start:t.toks[j].end]
	for _, w := range ws {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// topWord is the first token at parenthesis depth 0 from token from that
// is one of the keywords ws, or -1.
func (t *myTemplate) topWord(from int, ws ...string) int {
	depth := 0
	for j := from; j < len(t.toks); j++ {
		switch t.toks[j].kind {
		case '(':
			depth++
		case ')':
			depth--
		default:
			if depth == 0 && t.word(j, ws...) {
				return j
			}
		}
	}
	return -1
}

// span is the text of an INSERT value, from its first token to its last.
type span struct{ a, b int }

// insert cuts the rows of INSERT ... VALUES, or the assignments of INSERT
// ... SET. A single row that needs no key is left exactly as written.
func (t *myTemplate) insert(x *ast.InsertStmt) error {
	ins := t.c.p.ins
	tn := x.Table.TableRefs.Left.(*ast.TableSource).Source.(*ast.TableName)
	from := t.nameTok[tn] + 1
	needKey := ins.keyCol != "" && (ins.keyIdx < 0 || slices.Contains(ins.keyNull, true))
	if x.Setlist {
		return t.insertSet(from, needKey)
	}
	v := t.topWord(from, "VALUES", "VALUE")
	if v < 0 || t.toks[v-1].kind != ')' {
		return t.fail("cannot find the column list and VALUES of the INSERT in the statement text")
	}
	rows, last, err := t.valueRows(v + 1)
	if err != nil {
		return err
	}
	if len(rows) != len(ins.rows) {
		return t.fail("cannot read the VALUES rows")
	}
	whole := len(rows) > 1 || needKey
	if whole {
		// The rows hole takes the edits inside the rows.
		t.edits = append(t.edits, edit{t.toks[v-1].start, t.toks[v-1].start, segment{hole: holeKeyCol}})
	}
	for r, row := range rows {
		if len(row) != len(ins.cols) {
			return t.fail("row %d has %d values for %d columns", r+1, len(row), len(ins.cols))
		}
		items := make([][]segment, len(row))
		for k, s := range row {
			if whole {
				items[k] = t.segs(s.a, s.b)
			} else {
				items[k] = []segment{{text: t.q[s.a:s.b]}}
			}
		}
		ins.items = append(ins.items, items)
	}
	if whole {
		t.edits = append(t.edits, edit{t.toks[v+1].start, t.toks[last].end, segment{hole: holeValues}})
	}
	return nil
}

// between is the text of a value between the separator tokens sep and
// next (next may be len(toks), the end), without the white space around
// it; comments stay. A line comment ending the value keeps its newline, so
// that what is written after the value is not commented out.
func (t *myTemplate) between(sep, next int) span {
	a, b := t.toks[sep].end, len(t.q)
	if next < len(t.toks) {
		b = t.toks[next].start
	}
	limit := b
	for a < b && unicode.IsSpace(rune(t.q[a])) {
		a++
	}
	for b > a && unicode.IsSpace(rune(t.q[b-1])) {
		b--
	}
	if last := t.toks[next-1].end; last < b && (strings.Contains(t.q[last:b], "--") || strings.Contains(t.q[last:b], "#")) {
		if nl := strings.IndexByte(t.q[b:limit], '\n'); nl >= 0 {
			b += nl + 1
		}
	}
	return span{a, b}
}

// valueRows reads the rows from token from, each "(" values ")", separated
// by commas; last is the index of the last row's ")".
func (t *myTemplate) valueRows(from int) (rows [][]span, last int, err error) {
	k := from
	for {
		if k >= len(t.toks) || t.toks[k].kind != '(' {
			return nil, 0, t.fail("cannot read the VALUES rows")
		}
		var row []span
		depth, first := 0, -1
		item := func(end int) bool {
			if first < 0 {
				return false
			}
			row = append(row, t.between(first-1, end+1))
			first = -1
			return true
		}
	row:
		for ; k < len(t.toks); k++ {
			switch t.toks[k].kind {
			case '(':
				depth++
				if depth == 1 {
					continue
				}
			case ')':
				depth--
				if depth == 0 {
					if !item(k-1) && len(row) > 0 {
						return nil, 0, t.fail("cannot read the VALUES rows")
					}
					break row
				}
			case ',':
				if depth == 1 {
					if !item(k - 1) {
						return nil, 0, t.fail("cannot read the VALUES rows")
					}
					continue
				}
			}
			if first < 0 {
				first = k
			}
		}
		if k >= len(t.toks) {
			return nil, 0, t.fail("cannot read the VALUES rows")
		}
		rows, last = append(rows, row), k
		if k+1 < len(t.toks) && t.toks[k+1].kind == ',' {
			k += 2
			continue
		}
		return rows, last, nil
	}
}

// insertSet reads INSERT ... SET col = value, ... When a key must be added
// or replaced, the assignments are written as (cols) VALUES (values), the
// columns and values spelled as in the statement, so that the key goes
// where the rows of a VALUES list take it.
func (t *myTemplate) insertSet(from int, needKey bool) error {
	ins := t.c.p.ins
	s := t.topWord(from, "SET")
	if s < 0 {
		return t.fail("cannot find SET in the statement text")
	}
	var cols []string
	var vals []span
	depth, eq := 0, -1
	for k := s + 1; k <= len(t.toks); k++ {
		if k < len(t.toks) {
			tk := t.toks[k]
			switch {
			case tk.kind == '(':
				depth++
			case tk.kind == ')':
				depth--
			case depth == 0 && tk.kind == '=' && eq < 0:
				eq = k
			}
			if depth != 0 || tk.kind != ',' && tk.kind != ';' && !t.word(k, "ON", "AS", "RETURNING") {
				continue
			}
		}
		// An assignment ends at token k: column ["." column] ("=" | ":=") value.
		name := eq - 1
		if name >= 0 && t.toks[name].kind == ':' {
			name--
		}
		if eq < 0 || name <= s || eq+1 >= k {
			return t.fail("cannot read the assignments of INSERT ... SET")
		}
		cols = append(cols, t.q[t.toks[name].start:t.toks[name].end])
		vals = append(vals, t.between(eq, k))
		if len(cols) <= len(ins.cols) && identText(t.q, t.toks[name]) != ins.cols[len(cols)-1] {
			return t.fail("cannot read the assignments of INSERT ... SET")
		}
		if k == len(t.toks) || t.toks[k].kind != ',' {
			break
		}
		eq = -1
	}
	if len(cols) != len(ins.cols) || len(ins.rows) != 1 {
		return t.fail("cannot read the assignments of INSERT ... SET")
	}
	items := make([][]segment, len(vals))
	if !needKey {
		for k, v := range vals {
			items[k] = []segment{{text: t.q[v.a:v.b]}}
		}
		ins.items = [][][]segment{items}
		return nil
	}
	at, stop := t.toks[s].start, vals[len(vals)-1].b // the last value with its comments
	for k, v := range vals {
		items[k] = t.segs(v.a, v.b)
	}
	ins.items = [][][]segment{items}
	t.take(at, stop) // names in the column part: the list below spells them unqualified
	t.edits = append(t.edits,
		edit{at, at, segment{text: "(" + strings.Join(cols, ", ")}},
		edit{at, at, segment{hole: holeKeyCol}},
		edit{at, at, segment{text: ") VALUES "}},
		edit{at, stop, segment{hole: holeValues}})
	return nil
}

// limit makes holes of the top-level LIMIT values: "n", "o, n" or
// "n OFFSET o".
func (t *myTemplate) limit(s *ast.SelectStmt) error {
	sp := t.c.p.sel
	if s.Limit == nil || sp == nil || (sp.limit == nil && sp.offset == nil) {
		return nil
	}
	l := -1
	for j := t.topWord(0, "LIMIT"); j >= 0; j = t.topWord(j+1, "LIMIT") {
		l = j
	}
	value := func(j int) bool {
		return j < len(t.toks) && (t.toks[j].kind == '?' || t.toks[j].kind == 'w' && isDigit(t.q[t.toks[j].start]))
	}
	countAt, offsetAt := l+1, -1
	switch {
	case l < 0 || !value(l+1):
		return t.fail("cannot find the LIMIT in the statement text")
	case l+2 < len(t.toks) && t.toks[l+2].kind == ',':
		offsetAt, countAt = l+1, l+3
	case t.word(l+2, "OFFSET"):
		offsetAt = l + 3
	}
	if !value(countAt) || offsetAt >= 0 && !value(offsetAt) || (s.Limit.Offset != nil) != (offsetAt >= 0) {
		return t.fail("cannot find the LIMIT in the statement text")
	}
	hole := func(j int, kind holeKind) {
		tk := t.toks[j]
		seg := segment{hole: kind, i: -1, text: t.q[tk.start:tk.end]}
		if in := t.take(tk.start, tk.end); len(in) == 1 && in[0].seg.hole == holeParam {
			seg.i = in[0].seg.i
		}
		t.edits = append(t.edits, edit{tk.start, tk.end, seg})
	}
	if sp.limit != nil {
		hole(countAt, holeLimit)
	}
	if sp.offset != nil {
		hole(offsetAt, holeOffset)
	}
	return nil
}
