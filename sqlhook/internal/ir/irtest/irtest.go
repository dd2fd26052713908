// Package irtest runs the dialect compilers' golden tests: statements in
// testdata files, each compiled without a database into the plan it
// gives and the SQL one target receives, compared with the text written
// beside it. A change to a compiler shows its effect as a diff; go test
// -update rewrites the expected text (review the diff before committing).
//
// A testdata file holds cases, each opened by a line "=== name":
//
//	=== INSERT without the generated key
//	@rules orders.yaml                  (optional; orders.yaml by default)
//	@phys t_order=ds_1.t_order_1        (optional; the table's first target by default)
//	@binary                             (optional: WithBinaryCollation)
//	INSERT INTO t_order (user_id) VALUES ($1)
//	---
//	the expected summary
//
// sqlhook's binding goldens (RunFunc) also read @args 7, "a", NULL,
// name="v" (the caller's arguments), @dialect postgres|mysql|sqlite,
// @scatter (WithScatter) and @hint table database-value table-value (a
// shardconf hint in the statement's context; - for no value). A space that ends a line of the summary is
// written as ·. The rule files shared by every dialect's cases are in
// irtest/rules.
package irtest

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/merge"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

var update = flag.Bool("update", false, "rewrite the expected text of the golden files")

//go:embed rules/*.yaml
var rules embed.FS

// Router builds the router of the shared rule file name.
func Router(t testing.TB, name string, opts ...shardconf.RouterOption) *shardconf.Router {
	t.Helper()
	b, err := rules.ReadFile("rules/" + name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Case is one statement of a golden file.
type Case struct {
	Name   string
	Rules  string
	Phys   map[string]string // logic table -> "ds.table"
	Binary bool
	// Args, Dialect, Scatter: for sqlhook's binding goldens (@args 7, "a",
	// NULL; @dialect mysql; @scatter).
	Args    string
	Dialect string
	Scatter bool
	Hints   []string // "@hint table db-value table-value" (- for none), one per line
	SQL     string
	Want    string
	header  []string // the lines between "=== name" and the SQL, kept on -update
}

// Parse reads the cases of a golden file.
func Parse(text string) ([]*Case, error) {
	var cases []*Case
	var c *Case
	inWant := false
	var sqlLines, wantLines []string
	flush := func() {
		if c != nil {
			c.SQL = strings.TrimSpace(strings.Join(sqlLines, "\n"))
			c.Want = strings.TrimSpace(strings.Join(wantLines, "\n"))
			cases = append(cases, c)
		}
	}
	for n, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "=== "):
			flush()
			c = &Case{Name: strings.TrimSpace(line[4:]), Rules: "orders.yaml", Phys: map[string]string{}}
			inWant, sqlLines, wantLines = false, nil, nil
		case c == nil:
			// comments before the first case
		case inWant:
			wantLines = append(wantLines, line)
		case line == "---":
			inWant = true
		case len(sqlLines) == 0 && strings.HasPrefix(line, "@"):
			c.header = append(c.header, line)
			f := strings.Fields(line)
			switch f[0] {
			case "@rules":
				c.Rules = f[1]
			case "@binary":
				c.Binary = true
			case "@scatter":
				c.Scatter = true
			case "@dialect":
				c.Dialect = f[1]
			case "@hint":
				c.Hints = append(c.Hints, strings.TrimSpace(strings.TrimPrefix(line, "@hint")))
			case "@args":
				c.Args = strings.TrimSpace(strings.TrimPrefix(line, "@args"))
			case "@phys":
				for _, kv := range f[1:] {
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						return nil, fmt.Errorf("line %d: @phys wants table=ds.table, not %q", n+1, kv)
					}
					c.Phys[strings.ToLower(k)] = v
				}
			default:
				return nil, fmt.Errorf("line %d: unknown directive %s", n+1, f[0])
			}
		default:
			sqlLines = append(sqlLines, line)
		}
	}
	flush()
	return cases, nil
}

// Run compiles the cases of every file matching pattern with compile in
// dialect d and compares each summary with the expected text.
func Run(t *testing.T, d ir.Dialect, compile ir.Compiler, pattern string) {
	RunFunc(t, pattern, func(t *testing.T, c *Case) string { return Summary(t, d, compile, c) })
}

// RunFunc compares summarize's text for each case of every file matching
// pattern with the expected text (sqlhook's binding goldens use it).
func RunFunc(t *testing.T, pattern string, summarize func(*testing.T, *Case) string) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files match %s (%v)", pattern, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cases, err := Parse(string(b))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var out strings.Builder
			out.WriteString(preamble(string(b)))
			names := map[string]bool{}
			for _, c := range cases {
				if names[c.Name] {
					t.Errorf("%s: two cases are named %q", file, c.Name)
				}
				names[c.Name] = true
				got := VisibleSpaces(summarize(t, c))
				if !*update && got != c.Want {
					t.Errorf("%s: case %q (- want, + got):\n%s\n(go test -update rewrites the golden files)", file, c.Name, Diff(c.Want, got))
				}
				fmt.Fprintf(&out, "=== %s\n", c.Name)
				for _, h := range c.header {
					out.WriteString(h + "\n")
				}
				fmt.Fprintf(&out, "%s\n---\n%s\n\n", c.SQL, got)
			}
			if *update {
				if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// preamble is the text before the first case.
func preamble(text string) string {
	if strings.HasPrefix(text, "=== ") {
		return ""
	}
	if i := strings.Index(text, "\n=== "); i >= 0 {
		return text[:i+1]
	}
	return text
}

// VisibleSpaces shows each space that ends a line as ·: trailing spaces
// would not survive editors.
func VisibleSpaces(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		body := strings.TrimRight(l, " ")
		lines[i] = body + strings.Repeat("·", len(l)-len(body))
	}
	return strings.Join(lines, "\n")
}

// Summary compiles c and describes the plan and the SQL of one target.
func Summary(t testing.TB, d ir.Dialect, compile ir.Compiler, c *Case) string {
	r := Router(t, c.Rules)
	ds := r.DataSources()
	s := ir.NewSchema(r, ds[0], d, c.Binary)
	p, err := compile(s, c.SQL)
	if err != nil {
		return "refused: " + err.Error() + refusalClass(err)
	}
	if p.Passthrough {
		return "passthrough (sent unchanged to the default data source)"
	}
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("kind: %s", kindName(p.Kind))
	var tabs []string
	for _, x := range p.Tables {
		what := "broadcast"
		if x.Sharded {
			what = "sharded"
		}
		if x.PartnerOf >= 0 {
			what += ", bound to " + p.Tables[x.PartnerOf].Logic
		}
		tabs = append(tabs, fmt.Sprintf("%s (%s)", x.Logic, what))
	}
	line("tables: %s", strings.Join(tabs, ", "))
	if p.Routed >= 0 {
		line("routed by: %s", p.Tables[p.Routed].Logic)
	}
	switch {
	case p.Kind == ir.KindInsert || p.Kind == ir.KindDDL:
		// routed by the rows, or run on every table
	case p.Unbounded:
		line("where: too complex to narrow the targets")
	case len(p.Branches) == 0 || len(p.Branches) == 1 && len(p.Branches[0]) == 0:
		line("where: no condition on a sharding column")
	default:
		var or []string
		for _, br := range p.Branches {
			var and []string
			for _, pr := range br {
				and = append(and, predText(p, pr))
			}
			if len(and) == 0 {
				and = append(and, "true")
			}
			or = append(or, strings.Join(and, " AND "))
		}
		line("where: %s", strings.Join(or, " OR "))
	}
	if ins := p.Ins; ins != nil {
		key := "none"
		switch {
		case ins.KeyCol == "":
		case ins.KeyIdx < 0:
			key = ins.KeyCol + " (added)"
		default:
			key = fmt.Sprintf("%s (column %d)", ins.KeyCol, ins.KeyIdx+1)
		}
		line("insert: columns %s, generated key %s", strings.Join(ins.Cols, ", "), key)
		for i, row := range ins.Rows {
			var vs []string
			for _, v := range row {
				vs = append(vs, valText(v))
			}
			fill := ""
			if ins.KeyNull[i] {
				fill = " (key filled)"
			}
			line("  row %d: %s%s", i+1, strings.Join(vs, ", "), fill)
		}
		if ins.Single != "" {
			line("  one target only: %s", ins.Single)
		}
	}
	for _, k := range p.KeySets {
		line("sets sharding column: %s.%s = %s", p.Tables[k.Table].Logic, k.Column, valText(k.Val))
	}
	if p.WriteMulti != "" {
		line("several targets refused: %s", p.WriteMulti)
	}
	if p.Pinned != "" {
		line("physical table named: %s", p.Pinned)
	}
	if sel := p.Sel; sel != nil {
		selectSummary(line, sel)
	}
	if p.Names != nil {
		line("named parameters: %q", p.Names)
	}
	line("parameters: %d", p.NParams)
	phys, where := targets(t, r, p, c)
	spec := ir.RenderSpec{Phys: phys, AddKey: p.Ins != nil && p.Ins.KeyCol != "" && p.Ins.KeyIdx < 0}
	render(line, d, p, spec, "one target ("+where+")")
	if p.Sel != nil && p.Sel.Merge != nil {
		spec.MergeTail = true
		render(line, d, p, spec, "each target of a merged read")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// refusalClass names the shardconf sentinels a refusal also matches.
func refusalClass(err error) string {
	var also []string
	for _, s := range []struct {
		err  error
		name string
	}{
		{shardconf.ErrShardingKeyChange, "shardconf.ErrShardingKeyChange"},
		{shardconf.ErrMissingShardingKey, "shardconf.ErrMissingShardingKey"},
		{shardconf.ErrNoRoute, "shardconf.ErrNoRoute"},
	} {
		if errors.Is(err, s.err) {
			also = append(also, s.name)
		}
	}
	if len(also) == 0 {
		return ""
	}
	return "\n  (also " + strings.Join(also, ", ") + ")"
}

func render(line func(string, ...any), d ir.Dialect, p *ir.Plan, spec ir.RenderSpec, label string) {
	out := p.RenderFor(d, spec)
	line("sql for %s:", label)
	for _, l := range strings.Split(out.SQL, "\n") {
		line("  %s", l)
	}
	if len(out.Src) > 0 {
		var args []string
		for i, s := range out.Src {
			var what string
			switch s.Kind {
			case ir.SrcArg:
				what = fmt.Sprintf("argument %d", s.I+1)
			case ir.SrcKey:
				what = fmt.Sprintf("generated key of row %d", s.I+1)
			case ir.SrcLimit:
				what = "LIMIT + OFFSET"
			}
			args = append(args, fmt.Sprintf("%d=%s", i+1, what))
		}
		line("  placeholders: %s", strings.Join(args, ", "))
	}
}

// targets is the physical table of each plan table for the rendering: the
// case's @phys, else the first target of the routed table (a binding
// partner pairing with it) and of every other sharded table, the logic name
// of a broadcast table.
func targets(t testing.TB, r *shardconf.Router, p *ir.Plan, c *Case) ([]string, string) {
	phys := make([]string, len(p.Tables))
	chosen := make([]shardconf.Target, len(p.Tables))
	var where []string
	pick := func(i int) {
		x := p.Tables[i]
		if v, ok := c.Phys[x.Key]; ok {
			dsName, table, _ := strings.Cut(v, ".")
			chosen[i] = shardconf.Target{DataSource: dsName, Table: table}
		} else if !x.Sharded {
			chosen[i] = shardconf.Target{Table: x.Logic}
		} else if x.PartnerOf >= 0 && chosen[x.PartnerOf].Table != "" {
			bt, err := r.BoundTarget(p.Tables[x.PartnerOf].Logic, chosen[x.PartnerOf], x.Logic)
			if err != nil {
				t.Fatalf("%s: binding partner of %s: %v", c.Name, x.Logic, err)
			}
			chosen[i] = bt
		} else {
			ts, err := r.Targets(x.Logic)
			if err != nil || len(ts) == 0 {
				t.Fatalf("%s: targets of %s: %v", c.Name, x.Logic, err)
			}
			chosen[i] = ts[0]
			for _, tg := range ts {
				if i == p.Routed && p.Pinned != "" && strings.EqualFold(tg.Table, p.Pinned) {
					chosen[i] = tg // the physical table the statement named
					break
				}
			}
		}
		phys[i] = chosen[i].Table
	}
	order := []int{}
	if p.Routed >= 0 {
		order = append(order, p.Routed)
	}
	for i := range p.Tables {
		if i != p.Routed && p.Tables[i].PartnerOf < 0 {
			order = append(order, i)
		}
	}
	for i := range p.Tables {
		if p.Tables[i].PartnerOf >= 0 && !slices.Contains(order, i) {
			order = append(order, i)
		}
	}
	for _, i := range order {
		pick(i)
	}
	for i, x := range p.Tables {
		if x.Sharded {
			where = append(where, x.Logic+" = "+chosen[i].DataSource+"."+chosen[i].Table)
		}
	}
	if len(where) == 0 {
		return phys, "broadcast tables keep their names"
	}
	return phys, strings.Join(where, ", ")
}

func kindName(k any) string {
	switch k {
	case ir.KindSelect:
		return "SELECT"
	case ir.KindInsert:
		return "INSERT"
	case ir.KindUpdate:
		return "UPDATE"
	case ir.KindDelete:
		return "DELETE"
	case ir.KindDDL:
		return "DDL"
	}
	return fmt.Sprint(k)
}

func predText(p *ir.Plan, pr ir.Pred) string {
	col := p.Tables[pr.Table].Logic + "." + pr.Column
	var vs []string
	for _, v := range pr.Vals {
		vs = append(vs, valText(v))
	}
	switch pr.Op {
	case ir.OpEq:
		return col + " = " + vs[0]
	case ir.OpIn:
		return col + " IN (" + strings.Join(vs, ", ") + ")"
	case ir.OpAny:
		return col + " = ANY(" + vs[0] + ")"
	case ir.OpBetween:
		return col + " BETWEEN " + vs[0] + " AND " + vs[1]
	case ir.OpLt:
		return col + " < " + vs[0]
	case ir.OpLe:
		return col + " <= " + vs[0]
	case ir.OpGt:
		return col + " > " + vs[0]
	case ir.OpGe:
		return col + " >= " + vs[0]
	}
	return fmt.Sprintf("%s op%d %v", col, pr.Op, vs)
}

func valText(v ir.ValRef) string {
	switch {
	case v.Expr:
		return "(expression)"
	case v.Param >= 0:
		return fmt.Sprintf("argument %d", v.Param+1)
	case v.Lit == nil:
		return "NULL"
	}
	if s, ok := v.Lit.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v.Lit)
}

func selectSummary(line func(string, ...any), sel *ir.SelectPlan) {
	if sel.Limit != nil {
		l := "LIMIT " + valText(*sel.Limit)
		if sel.Offset != nil {
			l += " OFFSET " + valText(*sel.Offset)
		}
		line("select: %s", l)
	}
	if sel.Merge == nil {
		line("merge over several targets: refused: %s", sel.Multi)
		return
	}
	m := sel.Merge
	var parts []string
	if m.Distinct {
		parts = append(parts, "DISTINCT")
	}
	if m.Grouped {
		parts = append(parts, "grouped")
	}
	if len(m.GroupBy) > 0 {
		parts = append(parts, "group by "+cols(m.GroupBy))
	}
	for _, a := range m.Aggs {
		agg := funcName(a.Fn) + " into " + colText(a.Col)
		if len(a.Args) > 0 {
			agg += " from " + cols(a.Args)
		}
		parts = append(parts, agg)
	}
	if m.Having != nil {
		parts = append(parts, "HAVING evaluated after merging")
	}
	for _, k := range m.OrderBy {
		dir := "ASC"
		if k.Desc {
			dir = "DESC"
		}
		nulls := "NULLS LAST"
		if k.NullsFirst {
			nulls = "NULLS FIRST"
		}
		parts = append(parts, fmt.Sprintf("order by %s %s %s (%s)", colText(k.Col), dir, nulls, textName(k.Text)))
	}
	if len(m.Calcs) > 0 {
		parts = append(parts, fmt.Sprintf("%d columns computed after merging", len(m.Calcs)))
	}
	if m.Hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d hidden columns", m.Hidden))
	}
	if len(parts) == 0 {
		parts = append(parts, "rows concatenated")
	}
	line("merge over several targets: %s", strings.Join(parts, "; "))
}

// colText names a result column: the query's own from 1, hidden ones
// (added for the merge, negative ColRefs) apart.
func colText(c ir.ColRef) string {
	if c < 0 {
		return fmt.Sprintf("hidden column %d", -c)
	}
	return fmt.Sprintf("column %d", c+1)
}

func cols(cs []ir.ColRef) string {
	var s []string
	for _, c := range cs {
		s = append(s, colText(c))
	}
	return strings.Join(s, ", ")
}

// textName says how the merge compares text values of a key.
func textName(t merge.Text) string {
	switch t {
	case merge.TextRefused:
		return "text values refused: collation unknown"
	case merge.TextBinary:
		return "text bytewise"
	case merge.TextPadSpace:
		return "text bytewise, trailing spaces ignored"
	case merge.TextEqualOnly:
		return "text for equality only"
	case merge.TextNoCase:
		return "text ignoring ASCII case"
	case merge.TextRTrim:
		return "text ignoring trailing spaces"
	}
	return fmt.Sprint(t)
}

func funcName(f merge.Func) string {
	switch f {
	case merge.Count:
		return "COUNT"
	case merge.Sum:
		return "SUM"
	case merge.Min:
		return "MIN"
	case merge.Max:
		return "MAX"
	case merge.Avg:
		return "AVG"
	case merge.CountDistinct:
		return "COUNT(DISTINCT)"
	case merge.SumDistinct:
		return "SUM(DISTINCT)"
	case merge.AvgDistinct:
		return "AVG(DISTINCT)"
	}
	return fmt.Sprint(f)
}

// Diff shows the lines of want and got that differ, marked - and +, with
// the lines they share for context.
func Diff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	// Longest common subsequence: the files are small.
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + b[j] + "\n")
			j++
		default:
			out.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return strings.TrimRight(out.String(), "\n")
}
