package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/shardconf"
)

var ddlCmd = &command{
	name:     "ddl",
	synopsis: "-template FILE.sql [-table T,...] [-datasource DS,...] [-dialect auto|postgres|mysql|sqlite] [-o text|json] [-rules] RULES.yaml [TABLE...]",
	summary:  "print CREATE TABLE statements for every physical table",
	details: `Ddl prints the statements that create the physical tables of logic tables,
per data source, from a template written for the logic tables: a CREATE
TABLE for each, and any CREATE INDEX on them, separated by semicolons.

  CREATE TABLE t_order (
    order_id BIGINT NOT NULL,
    user_id  BIGINT NOT NULL,
    CONSTRAINT pk_t_order PRIMARY KEY (order_id)
  );
  CREATE INDEX idx_user ON t_order (user_id);

In each copy the logic table's name (where a table is named: after CREATE
TABLE, ON, REFERENCES, and before .column) becomes the physical table's.
Index and constraint names are made unique per physical table, since
PostgreSQL and SQLite name indexes per schema: the logic table's name in
them becomes the physical one (pk_t_order -> pk_t_order_0), else the
physical name is appended (idx_user -> idx_user_t_order_0). Strings and
comments are left as written. Names are quoted for the dialect. In the
template a name in backquotes is an identifier in every dialect, one in
double quotes in all but MySQL (where it is a string).

Without tables (-table or arguments) it prints every table of the rules,
sharded and broadcast, and the template must create them all. Tables come
in the template's order, so write a referenced table first.

The dialect of each data source comes from its driver in the rules (pgx:
postgres, mysql, sqlite) unless -dialect names one. -datasource limits the
output to some data sources, to pipe it to their databases. Text output
groups the statements under a "-- data source NAME (DIALECT)" comment;
-o json prints a list of
{dataSource, dialect, logicTable, table, statements}.
`,
	examples: `  shardkey ddl -rules rules.yaml -table t_order -template t_order.sql
  shardkey ddl -rules rules.yaml -template schema.sql -dialect mysql
  shardkey ddl -template schema.sql -o json rules.yaml t_order t_order_item
  shardkey ddl -rules rules.yaml -template schema.sql -datasource ds_0 | psql app_0
`,
	setup: func(fs *flag.FlagSet) action {
		rf := addRulesFlags(fs)
		tmpl := fs.String("template", "", "`file` of CREATE TABLE (and CREATE INDEX) statements written for the logic tables (required)")
		table := fs.String("table", "", "logic `tables`, comma-separated (default: every table of the rules)")
		dsFlag := fs.String("datasource", "", "print only these data `sources`, comma-separated (default: all)")
		dialect := choiceFlag(fs, "dialect", "SQL `dialect`: auto (from each data source's driver), postgres, mysql or sqlite",
			"auto", dialectPostgres, dialectMySQL, dialectSQLite)
		return func(args []string, stdout io.Writer) error {
			file, tables, err := rf.file(args)
			if err != nil {
				return err
			}
			if *tmpl == "" {
				return usageErrorf("-template is required")
			}
			tables = append(tables, commaList(*table)...)
			return ddl(stdout, rf, file, *tmpl, tables, commaList(*dsFlag), dialect.value, rf.out.value)
		}
	},
}

// commaList splits a comma-separated flag value, dropping empty items.
func commaList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// ddlEntry is the statements of one physical table.
type ddlEntry struct {
	DataSource string   `json:"dataSource"`
	Dialect    string   `json:"dialect"`
	LogicTable string   `json:"logicTable"`
	Table      string   `json:"table"`
	Statements []string `json:"statements"`

	line int // of the CREATE TABLE in the template
}

func ddl(stdout io.Writer, rf rulesFlags, rulesFile, tmplFile string, tables, sources []string, dialect, out string) error {
	r, _, err := rf.load(rulesFile)
	if err != nil {
		return err
	}
	for _, ds := range sources {
		if !slices.Contains(r.DataSources(), ds) {
			return fmt.Errorf("-datasource %s: not a data source of %s (it has %s)", ds, rulesFile, strings.Join(r.DataSources(), ", "))
		}
	}
	src, err := os.ReadFile(tmplFile)
	if err != nil {
		return err
	}
	j := &ddlJob{r: r, rulesFile: rulesFile, tmplFile: tmplFile, src: string(src), sources: sources, dialect: dialect,
		drivers: map[string]string{}, templates: map[string]*template{}}
	j.named = len(tables) > 0
	if !j.named {
		tables = r.Tables()
	}
	for _, t := range tables {
		if !slices.ContainsFunc(j.tables, func(s string) bool { return strings.EqualFold(s, t) }) {
			j.tables = append(j.tables, t)
		}
	}
	for _, ds := range r.Config().DataSources {
		j.drivers[ds.Name] = ds.Driver
	}
	entries, err := j.entries()
	if err != nil {
		return err
	}
	if out == "json" {
		return writeJSON(stdout, entries)
	}
	return writeDDLText(stdout, entries)
}

// ddlJob is one run of ddl: the rules, the template's text and the flags'
// choices.
type ddlJob struct {
	r                   *shardconf.Router
	rulesFile, tmplFile string
	src                 string
	tables              []string             // logic tables, each once
	named               bool                 // tables were named, not every table of the rules
	sources             []string             // data sources to print; nil for all
	dialect             string               // the -dialect flag: "auto" or a dialect
	drivers             map[string]string    // data source -> its driver in the rules
	templates           map[string]*template // dialect -> the template as it reads it
}

// dialectOf is the SQL dialect of data source ds.
func (j *ddlJob) dialectOf(ds string) (string, error) {
	if j.dialect != "auto" {
		return j.dialect, nil
	}
	// internal/dialect reads driver names as sqlhook, SEGMENT and workerlease do.
	if d, err := dialect.Parse(j.drivers[ds]); err == nil {
		return string(d), nil
	}
	return "", fmt.Errorf("%s: data source %s has no driver (pgx, mysql or sqlite) to tell its SQL dialect; pass -dialect", j.rulesFile, ds)
}

// template is the template read as dialect d reads it, parsed and checked
// against the rules once per dialect.
func (j *ddlJob) template(d string) (*template, error) {
	if t := j.templates[d]; t != nil {
		return t, nil
	}
	t, err := parseTemplate(j.tmplFile, j.src, d)
	if err != nil {
		return nil, err
	}
	if err := checkTemplate(t, j.r, j.rulesFile, j.tables, j.named); err != nil {
		return nil, err
	}
	j.templates[d] = t
	return t, nil
}

// entries renders the statements of every physical table of j's tables:
// per data source (in the rules' order), tables in the template's order,
// so that a table is created before the tables that reference it (a
// broadcast table, say).
func (j *ddlJob) entries() ([]ddlEntry, error) {
	byDS := map[string][]ddlEntry{}
	names := map[string]map[string]bool{} // per data source: index and constraint names
	order := slices.Clone(j.r.DataSources())
	for _, logic := range j.tables {
		targets, err := j.r.Targets(logic)
		if err != nil {
			return nil, err
		}
		if k := slices.IndexFunc(j.r.Tables(), func(t string) bool { return strings.EqualFold(t, logic) }); k >= 0 {
			logic = j.r.Tables()[k] // as the rules spell it
		}
		for _, tg := range targets {
			if len(j.sources) > 0 && !slices.Contains(j.sources, tg.DataSource) {
				continue
			}
			if names[tg.DataSource] == nil {
				names[tg.DataSource] = map[string]bool{}
			}
			e, err := j.entry(logic, tg, names[tg.DataSource])
			if err != nil {
				return nil, err
			}
			if !slices.Contains(order, tg.DataSource) {
				order = append(order, tg.DataSource)
			}
			byDS[tg.DataSource] = append(byDS[tg.DataSource], e)
		}
	}
	if len(j.templates) == 0 { // nothing printed: still check the template
		if err := j.checkUnused(); err != nil {
			return nil, err
		}
	}
	entries := []ddlEntry{}
	for _, ds := range order {
		es := byDS[ds]
		slices.SortStableFunc(es, func(a, b ddlEntry) int { return a.line - b.line })
		entries = append(entries, es...)
	}
	return entries, nil
}

// entry renders the statements of target tg of logic; names holds the
// index and constraint names already used in tg's data source.
func (j *ddlJob) entry(logic string, tg shardconf.Target, names map[string]bool) (ddlEntry, error) {
	d, err := j.dialectOf(tg.DataSource)
	if err != nil {
		return ddlEntry{}, err
	}
	t, err := j.template(d)
	if err != nil {
		return ddlEntry{}, err
	}
	tt := t.lookup(logic)
	e := ddlEntry{DataSource: tg.DataSource, Dialect: d, LogicTable: logic, Table: tg.Table, line: tt.line}
	ref := func(name string) (string, error) { return referencedTable(j.r, logic, tg, name) }
	for _, s := range tt.stmts {
		text, err := t.render(s, tg.Table, d, ref, names)
		if err != nil {
			return ddlEntry{}, err
		}
		e.Statements = append(e.Statements, text)
	}
	return e, nil
}

// checkUnused parses and checks the template when no table was rendered,
// in the dialect of -dialect, of the first -datasource, or PostgreSQL's.
func (j *ddlJob) checkUnused() error {
	d := j.dialect
	if d == "auto" {
		d = dialectPostgres
		if len(j.sources) > 0 {
			var err error
			if d, err = j.dialectOf(j.sources[0]); err != nil {
				return err
			}
		}
	}
	_, err := j.template(d)
	return err
}

// writeDDLText prints entries grouped under a "-- data source NAME
// (DIALECT)" comment, a blank line between tables.
func writeDDLText(stdout io.Writer, entries []ddlEntry) error {
	w := bufio.NewWriter(stdout)
	for i, e := range entries {
		switch {
		case i == 0 || e.DataSource != entries[i-1].DataSource:
			if i > 0 {
				w.WriteByte('\n')
			}
			fmt.Fprintf(w, "-- data source %s (%s)\n", e.DataSource, e.Dialect)
		default:
			w.WriteByte('\n')
		}
		for _, s := range e.Statements {
			fmt.Fprintf(w, "%s;\n", s)
		}
	}
	return w.Flush()
}

// referencedTable is the physical table that target t of logic references
// when its template says REFERENCES name. A table the rules do not shard
// (a broadcast table, an ordinary one) is itself; a sharded one must be
// bound to logic (bindingTables), and its bound table holds the rows.
func referencedTable(r *shardconf.Router, logic string, t shardconf.Target, name string) (string, error) {
	if !r.IsSharded(name) {
		return name, nil
	}
	bt, err := r.BoundTarget(logic, t, name)
	if err != nil {
		return "", fmt.Errorf("REFERENCES %s from %s: no one physical table of it holds the rows: %w", name, t, err)
	}
	return bt.Table, nil
}

// checkTemplate checks the template creates the tables asked for, and,
// when they are all the rules' tables, no other.
func checkTemplate(t *template, r *shardconf.Router, rulesFile string, tables []string, named bool) error {
	var missing []string
	for _, name := range tables {
		if t.lookup(name) == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		if len(t.tables) == 1 && len(missing) == len(tables) {
			return &templateError{t.file, t.tables[0].line, fmt.Sprintf("CREATE TABLE %s, not the logic table %s",
				t.tables[0].name, strings.Join(missing, ", "))}
		}
		var have []string
		for _, tt := range t.tables {
			have = append(have, fmt.Sprintf("%s (line %d)", tt.name, tt.line))
		}
		return &templateError{file: t.file, msg: fmt.Sprintf("no CREATE TABLE for %s; it creates %s",
			strings.Join(missing, ", "), strings.Join(have, ", "))}
	}
	if named {
		return nil
	}
	for _, tt := range t.tables {
		if !slices.ContainsFunc(tables, func(s string) bool { return strings.EqualFold(s, tt.name) }) {
			return &templateError{t.file, tt.line, fmt.Sprintf("CREATE TABLE %s: not a table of %s (it has %s)",
				tt.name, rulesFile, strings.Join(r.Tables(), ", "))}
		}
	}
	return nil
}
