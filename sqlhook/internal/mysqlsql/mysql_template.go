package mysqlsql

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// myTemplate cuts a MySQL statement's own text into the plan's template:
// holes at the table references and qualifiers naming logic tables, at the
// placeholders, around the INSERT rows and at the LIMIT values; every
// other byte is copied as written.
type myTemplate struct {
	c       *myCompiler
	q       string
	toks    []ir.MyTok
	slots   *nameSlots
	stmt    ast.StmtNode
	found   map[slotRef]int
	dbs     map[string]string // data source -> database
	edits   []ir.Edit
	nameTok map[*ast.TableName]int // the name token of each placed table
}

func (t *myTemplate) fail(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ir.ErrUnsupported}, args...)...)
}

func (t *myTemplate) build() error {
	if err := t.params(); err != nil {
		return err
	}
	var cands []int
	for j, tk := range t.toks {
		if name := ir.IdentText(t.q, tk); name != "" {
			_, phys := t.c.h.PhysicalOf(name)
			if s, b := t.c.h.Classify(name); s || b || phys && len(t.c.asLogic) > 0 {
				cands = append(cands, j)
			}
		}
	}
	t.found = locate(t.q, t.toks, cands, t.slots)
	t.dbs = t.c.h.MySQLDatabases()
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
		if t.c.p.Ins != nil {
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
	slices.SortStableFunc(t.edits, func(a, b ir.Edit) int { return a.Start - b.Start })
	for i := 1; i < len(t.edits); i++ {
		if t.edits[i].Start < t.edits[i-1].End {
			return t.fail("cannot rewrite: overlapping names in the statement text")
		}
	}
	t.c.p.Tmpl = ir.BuildTemplate(t.q, t.edits)
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
		if tk.Kind != '?' {
			continue
		}
		if n >= len(v.ms) || v.ms[n].Offset != tk.Start {
			return t.fail("cannot place the placeholders in the statement text")
		}
		t.edits = append(t.edits, ir.Edit{Start: tk.Start, End: tk.End, Seg: ir.Segment{Hole: ir.HoleParam, I: n}})
		n++
	}
	if n != len(v.ms) {
		return t.fail("cannot place the placeholders in the statement text")
	}
	t.c.p.NParams = n
	return nil
}

// names makes holes of the placed tables and of the column qualifiers
// naming them.
func (t *myTemplate) names() error {
	p := t.c.p
	t.nameTok = map[*ast.TableName]int{}
	for k, tn := range t.slots.Tables {
		if !t.c.placed[tn] {
			continue
		}
		j, ok := t.found[slotRef{fTableName, k}]
		if !ok {
			return t.fail("cannot find table %s in the statement text", tn.Name.O)
		}
		i := tableIndex(p, t.c.logicName(tn))
		start, err := t.qualified(j, tn.Schema.O, p.Tables[i].Logic)
		if err != nil {
			return err
		}
		t.nameTok[tn] = j
		t.edits = append(t.edits, ir.Edit{Start: start, End: t.toks[j].End, Seg: ir.Segment{Hole: ir.HoleTable, I: i}})
	}
	qualifier := func(schema, table, what string, field slotField, k int) error {
		i, ok := t.c.aliases[strings.ToLower(table)]
		if table == "" || !ok || i < 0 || !strings.EqualFold(p.Tables[i].Logic, table) {
			return nil
		}
		j, ok := t.found[slotRef{field, k}]
		if !ok {
			return t.fail("cannot find the qualifier of %s in the statement text", what)
		}
		start, err := t.qualified(j, schema, p.Tables[i].Logic)
		if err != nil {
			return err
		}
		t.edits = append(t.edits, ir.Edit{Start: start, End: t.toks[j].End, Seg: ir.Segment{Hole: ir.HoleTable, I: i}})
		return nil
	}
	for k, cn := range t.slots.Cols {
		if err := qualifier(cn.Schema.O, cn.Table.O, cn.Table.O+"."+cn.Name.O, fColTable, k); err != nil {
			return err
		}
	}
	for k, w := range t.slots.Stars {
		if err := qualifier(w.Schema.O, w.Table.O, w.Table.O+".*", fStarTable, k); err != nil {
			return err
		}
	}
	return nil
}

func tableIndex(p *ir.Plan, name string) int {
	key := strings.ToLower(name)
	for i, t := range p.Tables {
		if t.Key == key {
			return i
		}
	}
	return -1
}

// qualified returns where the name at token j, of logic table logic,
// starts with its database qualifier, which must be the database of a data
// source holding the table (see ir.OwnDatabase): it is dropped.
func (t *myTemplate) qualified(j int, schema, logic string) (int, error) {
	if schema == "" {
		return t.toks[j].Start, nil
	}
	if j < 2 || t.toks[j-1].Kind != '.' || ir.IdentText(t.q, t.toks[j-2]) != schema {
		return 0, t.fail("cannot find the qualifier of %s.%s in the statement text", schema, logic)
	}
	if !t.c.h.OwnDatabase(t.dbs, schema, logic) {
		if len(t.dbs) == 0 {
			return 0, t.fail("%s.%s: the databases of the data sources are unknown (give each a mysql DSN in the rules' dataSources), so the qualifier cannot be resolved", schema, logic)
		}
		return 0, t.fail("%s.%s: database %s is not the database of a data source holding %s", schema, logic, schema, logic)
	}
	return t.toks[j-2].Start, nil
}

// take removes the edits inside [a, b) and returns them relative to a.
func (t *myTemplate) take(a, b int) []ir.Edit {
	var in []ir.Edit
	kept := t.edits[:0]
	for _, e := range t.edits {
		if e.Start >= a && e.End <= b && e.End > e.Start {
			e.Start, e.End = e.Start-a, e.End-a
			in = append(in, e)
			continue
		}
		kept = append(kept, e)
	}
	t.edits = kept
	return in
}

// segs is the template of q[a:b] with the edits inside it, which it takes.
func (t *myTemplate) segs(a, b int) []ir.Segment {
	return ir.BuildTemplate(t.q[a:b], t.take(a, b))
}

// word reports whether token j is the keyword w.
func (t *myTemplate) word(j int, ws ...string) bool {
	if j < 0 || j >= len(t.toks) || t.toks[j].Kind != 'w' {
		return false
	}
	s := t.q[t.toks[j].Start:t.toks[j].End]
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
		switch t.toks[j].Kind {
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

// insert cuts the rows of INSERT ... VALUES, or the assignments of INSERT
// ... SET. A single row that needs no key is left exactly as written.
func (t *myTemplate) insert(x *ast.InsertStmt) error {
	ins := t.c.p.Ins
	tn := x.Table.TableRefs.Left.(*ast.TableSource).Source.(*ast.TableName)
	from := t.nameTok[tn] + 1
	needKey := ins.KeyCol != "" && (ins.KeyIdx < 0 || slices.Contains(ins.KeyNull, true))
	if x.Setlist {
		return t.insertSet(from, needKey)
	}
	v := t.topWord(from, "VALUES", "VALUE")
	if v < 0 || t.toks[v-1].Kind != ')' {
		return t.fail("cannot find the column list and VALUES of the INSERT in the statement text")
	}
	rows, last, err := t.valueRows(v + 1)
	if err != nil {
		return err
	}
	if len(rows) != len(ins.Rows) {
		return t.fail("cannot read the VALUES rows")
	}
	whole := len(rows) > 1 || needKey
	if whole {
		// The rows hole takes the edits inside the rows.
		t.edits = append(t.edits, ir.Edit{Start: t.toks[v-1].Start, End: t.toks[v-1].Start, Seg: ir.Segment{Hole: ir.HoleKeyCol}})
	}
	for r, row := range rows {
		if len(row) != len(ins.Cols) {
			return t.fail("row %d has %d values for %d columns", r+1, len(row), len(ins.Cols))
		}
		items := make([][]ir.Segment, len(row))
		for k, s := range row {
			if whole {
				items[k] = t.segs(s.A, s.B)
			} else {
				items[k] = []ir.Segment{{Text: t.q[s.A:s.B]}}
			}
		}
		ins.Items = append(ins.Items, items)
	}
	if whole {
		t.edits = append(t.edits, ir.Edit{Start: t.toks[v+1].Start, End: t.toks[last].End, Seg: ir.Segment{Hole: ir.HoleValues}})
	}
	return nil
}

// between is the text of a value between the separator tokens sep and
// next (next may be len(toks), the end), without the white space around
// it; comments stay. A line comment ending the value keeps its newline, so
// that what is written after the value is not commented out.
func (t *myTemplate) between(sep, next int) ir.Span {
	a, b := t.toks[sep].End, len(t.q)
	if next < len(t.toks) {
		b = t.toks[next].Start
	}
	limit := b
	for a < b && unicode.IsSpace(rune(t.q[a])) {
		a++
	}
	for b > a && unicode.IsSpace(rune(t.q[b-1])) {
		b--
	}
	if last := t.toks[next-1].End; last < b && (strings.Contains(t.q[last:b], "--") || strings.Contains(t.q[last:b], "#")) {
		if nl := strings.IndexByte(t.q[b:limit], '\n'); nl >= 0 {
			b += nl + 1
		}
	}
	return ir.Span{A: a, B: b}
}

// valueRows reads the rows from token from, each "(" values ")", separated
// by commas; last is the index of the last row's ")".
func (t *myTemplate) valueRows(from int) (rows [][]ir.Span, last int, err error) {
	k := from
	for {
		if k >= len(t.toks) || t.toks[k].Kind != '(' {
			return nil, 0, t.fail("cannot read the VALUES rows")
		}
		var row []ir.Span
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
			switch t.toks[k].Kind {
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
		if k+1 < len(t.toks) && t.toks[k+1].Kind == ',' {
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
	ins := t.c.p.Ins
	s := t.topWord(from, "SET")
	if s < 0 {
		return t.fail("cannot find SET in the statement text")
	}
	var cols []string
	var vals []ir.Span
	depth, eq := 0, -1
	for k := s + 1; k <= len(t.toks); k++ {
		if k < len(t.toks) {
			tk := t.toks[k]
			switch {
			case tk.Kind == '(':
				depth++
			case tk.Kind == ')':
				depth--
			case depth == 0 && tk.Kind == '=' && eq < 0:
				eq = k
			}
			if depth != 0 || tk.Kind != ',' && tk.Kind != ';' && !t.word(k, "ON", "AS", "RETURNING") {
				continue
			}
		}
		// An assignment ends at token k: column ["." column] ("=" | ":=") value.
		name := eq - 1
		if name >= 0 && t.toks[name].Kind == ':' {
			name--
		}
		if eq < 0 || name <= s || eq+1 >= k {
			return t.fail("cannot read the assignments of INSERT ... SET")
		}
		cols = append(cols, t.q[t.toks[name].Start:t.toks[name].End])
		vals = append(vals, t.between(eq, k))
		if len(cols) <= len(ins.Cols) && ir.IdentText(t.q, t.toks[name]) != ins.Cols[len(cols)-1] {
			return t.fail("cannot read the assignments of INSERT ... SET")
		}
		if k == len(t.toks) || t.toks[k].Kind != ',' {
			break
		}
		eq = -1
	}
	if len(cols) != len(ins.Cols) || len(ins.Rows) != 1 {
		return t.fail("cannot read the assignments of INSERT ... SET")
	}
	items := make([][]ir.Segment, len(vals))
	if !needKey {
		for k, v := range vals {
			items[k] = []ir.Segment{{Text: t.q[v.A:v.B]}}
		}
		ins.Items = [][][]ir.Segment{items}
		return nil
	}
	at, stop := t.toks[s].Start, vals[len(vals)-1].B // the last value with its comments
	for k, v := range vals {
		items[k] = t.segs(v.A, v.B)
	}
	ins.Items = [][][]ir.Segment{items}
	t.take(at, stop) // names in the column part: the list below spells them unqualified
	t.edits = append(t.edits,
		ir.Edit{Start: at, End: at, Seg: ir.Segment{Text: "(" + strings.Join(cols, ", ")}},
		ir.Edit{Start: at, End: at, Seg: ir.Segment{Hole: ir.HoleKeyCol}},
		ir.Edit{Start: at, End: at, Seg: ir.Segment{Text: ") VALUES "}},
		ir.Edit{Start: at, End: stop, Seg: ir.Segment{Hole: ir.HoleValues}})
	return nil
}

// limit makes holes of the top-level LIMIT values: "n", "o, n" or
// "n OFFSET o".
func (t *myTemplate) limit(s *ast.SelectStmt) error {
	sp := t.c.p.Sel
	if s.Limit == nil || sp == nil || (sp.Limit == nil && sp.Offset == nil) {
		return nil
	}
	l := -1
	for j := t.topWord(0, "LIMIT"); j >= 0; j = t.topWord(j+1, "LIMIT") {
		l = j
	}
	value := func(j int) bool {
		return j < len(t.toks) && (t.toks[j].Kind == '?' || t.toks[j].Kind == 'w' && ir.IsDigit(t.q[t.toks[j].Start]))
	}
	countAt, offsetAt := l+1, -1
	switch {
	case l < 0 || !value(l+1):
		return t.fail("cannot find the LIMIT in the statement text")
	case l+2 < len(t.toks) && t.toks[l+2].Kind == ',':
		offsetAt, countAt = l+1, l+3
	case t.word(l+2, "OFFSET"):
		offsetAt = l + 3
	}
	if !value(countAt) || offsetAt >= 0 && !value(offsetAt) || (s.Limit.Offset != nil) != (offsetAt >= 0) {
		return t.fail("cannot find the LIMIT in the statement text")
	}
	hole := func(j int, kind ir.HoleKind) {
		tk := t.toks[j]
		seg := ir.Segment{Hole: kind, I: -1, Text: t.q[tk.Start:tk.End]}
		if in := t.take(tk.Start, tk.End); len(in) == 1 && in[0].Seg.Hole == ir.HoleParam {
			seg.I = in[0].Seg.I
		}
		t.edits = append(t.edits, ir.Edit{Start: tk.Start, End: tk.End, Seg: seg})
	}
	if sp.Limit != nil {
		hole(countAt, ir.HoleLimit)
	}
	if sp.Offset != nil {
		hole(offsetAt, ir.HoleOffset)
	}
	return nil
}
