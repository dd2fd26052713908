package gormplugin

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/internal/merge"
)

// A read over several targets is planned from the statement's clauses:
// what each target is asked (the select list GORM builds, plus hidden
// columns the merge needs; GROUP BY without HAVING; LIMIT n+m when the
// merge streams) and how the engine combines the answers (merge.Plan).

// pcol is a column of the shard rows: a visible one (>= 0) or the j-th
// hidden one (-(j+1)), whose index is known once the visible columns are
// counted (a `*` is expanded by the database).
type pcol int

func hiddenCol(j int) pcol { return pcol(-(j + 1)) }

// use is how a column's text values are compared.
type use uint8

const (
	useEqual use = iota + 1 // grouping, DISTINCT, equality in HAVING
	useOrder                // ORDER BY, MIN/MAX, order comparisons in HAVING
)

type sortKey struct {
	col        pcol
	desc       bool
	nullsFirst bool
	collate    *merge.Text // an explicit COLLATE the engine implements
}

type aggPlan struct {
	col      pcol
	fn       merge.Func
	args     []pcol
	textCols []pcol // the columns whose text values it compares
	use      use
}

type condPlan struct {
	op   merge.CondOp
	kids []*condPlan
	cmp  merge.CmpOp
	l, r operandPlan
}

type operandPlan struct {
	col     pcol
	val     any
	isConst bool
}

// selItem is one visible column of the select list.
type selItem struct {
	col   string   // a plain column reference
	alias string   // its alias, if any
	agg   *aggCall // an aggregate call
	star  bool
	text  string // its source text, lower-cased, to match ORDER BY/HAVING terms
	// computed: an expression over aggregates (ts, read from src), which
	// the merge computes from the merged aggregates.
	computed bool
	ts       []token
	src      string
	vars     []any // the arguments of its ? placeholders
	// collateIn: its expression's tokens, when they hold a COLLATE.
	collateIn []token
}

// readPlan is the plan of one read over several targets.
type readPlan struct {
	logic   string
	dialect merge.Dialect
	binary  bool // WithBinaryCollation

	visible  clause.Expression // the SELECT GORM builds
	items    []selItem
	star     bool // the visible columns are counted from the results
	hidden   []clause.Expression
	hiddenAt map[string]int

	grouped    bool
	groupBy    []pcol
	groupNames []string // the GROUP BY columns' names
	aggs       []aggPlan
	computed   []computedPlan // in the order the engine evaluates them
	having     *condPlan
	distinct   bool
	orderBy    []sortKey
	offset     int64
	limit      int64

	extraGroup []clause.Column // per-target GROUP BY additions (distinct aggregates' arguments)
	ordered    []string        // columns whose values are ordered (sort keys, MIN/MAX arguments)

	// colNames: the model column a plan column reads, where known, for the
	// collation its field's type tag declares (declared).
	colNames map[pcol]string
	declared func(column string) (collation string, ok bool)
	// mayBeColumn: name may be a column of the table (true without a model).
	mayBeColumn func(name string) bool
}

func dialectOf(db *gorm.DB) (merge.Dialect, error) {
	switch db.Dialector.Name() {
	case "postgres":
		return merge.PostgreSQL, nil
	case "mysql":
		return merge.MySQL, nil
	case "sqlite":
		return merge.SQLite, nil
	}
	return 0, fmt.Errorf("%w: merging a read over several tables on %s", ErrUnsupported, db.Dialector.Name())
}

// gormSelect is the SELECT clause GORM would build for the statement,
// with columns qualified by the logic table (the alias every target's
// physical table gets).
func gormSelect(db *gorm.DB, logic string) clause.Expression {
	stmt := db.Statement
	clauses, table, expr := maps.Clone(stmt.Clauses), stmt.Table, stmt.TableExpr
	sqlText, vars := stmt.SQL.String(), stmt.Vars
	stmt.Table, stmt.TableExpr = logic, nil
	stmt.SQL.Reset()
	callbacks.BuildQuerySQL(db)
	sel := stmt.Clauses["SELECT"].Expression
	restoreClauses(stmt, clauses)
	stmt.Table, stmt.TableExpr, stmt.Vars = table, expr, vars
	stmt.SQL.Reset()
	stmt.SQL.WriteString(sqlText)
	return sel
}

// restoreClauses puts back the statement's clauses in its own map, which
// GORM's finishers hold on to (Count deletes its SELECT from it when it
// returns).
func restoreClauses(stmt *gorm.Statement, saved map[string]clause.Clause) {
	clear(stmt.Clauses)
	maps.Copy(stmt.Clauses, saved)
}

// planRead builds the plan of a read over several targets, or refuses it.
func (p *Plugin) planRead(db *gorm.DB, logic string) (*readPlan, error) {
	d, err := dialectOf(db)
	if err != nil {
		return nil, err
	}
	rp := &readPlan{logic: logic, dialect: d, binary: p.binaryText, hiddenAt: map[string]int{}, limit: -1,
		colNames: map[pcol]string{}, declared: declaredCollation(db.Statement), mayBeColumn: mayBeColumn(db.Statement)}
	rp.visible = gormSelect(db, logic)
	if db.Error != nil {
		return nil, db.Error
	}
	if err := rp.readSelect(db.Statement); err != nil {
		return nil, err
	}
	gb, _ := db.Statement.Clauses["GROUP BY"].Expression.(clause.GroupBy)
	rp.grouped = len(gb.Columns) > 0 || len(gb.Having) > 0
	for _, it := range rp.items {
		rp.grouped = rp.grouped || it.agg != nil || it.computed
	}
	steps := []func() error{
		func() error { return rp.planGroups(db.Statement, gb) },
		func() error { return rp.planItems() },
		func() error { return rp.planHaving(gb.Having) },
		func() error { return rp.planOrder(db.Statement) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("%w: %v over several tables of %s", ErrUnsupported, err, logic)
		}
	}
	if err := rp.refuseBinaryForms(db.Statement); err != nil {
		return nil, err
	}
	if l, ok := db.Statement.Clauses["LIMIT"].Expression.(clause.Limit); ok {
		if l.Limit != nil && *l.Limit >= 0 {
			rp.limit = int64(*l.Limit)
		}
		rp.offset = int64(max(l.Offset, 0))
	}
	return rp, nil
}

// hide adds a hidden column (once per distinct text) and returns it.
func (rp *readPlan) hide(key string, e clause.Expression) pcol {
	if j, ok := rp.hiddenAt[key]; ok {
		return hiddenCol(j)
	}
	rp.hiddenAt[key] = len(rp.hidden)
	rp.hidden = append(rp.hidden, e)
	return hiddenCol(len(rp.hidden) - 1)
}

// hideText hides an expression written in SQL text; role keeps apart
// the same text read for different purposes (an aggregate the merge
// combines, AVG's inputs, distinct values).
func (rp *readPlan) hideText(role, text string) pcol {
	return rp.hide(role+":"+strings.ToLower(text), clause.Expr{SQL: text})
}

// readSelect reads the visible select list.
func (rp *readPlan) readSelect(stmt *gorm.Statement) error {
	switch s := rp.visible.(type) {
	case clause.Select:
		if len(s.Columns) == 0 {
			rp.items, rp.star = []selItem{{star: true}}, true
			return nil
		}
		rp.distinct = s.Distinct
		for _, c := range s.Columns {
			if !c.Raw {
				it := selItem{alias: strings.ToLower(c.Alias)}
				if rp.dialect == merge.PostgreSQL {
					it.alias = c.Alias // GORM quotes it
				}
				name, isCol := rp.columnKey(stmt, c)
				if isCol {
					it.col, it.text = name, name
				} else { // another table's column: an expression to the merge
					it.text = strings.TrimPrefix(name, "expr:")
				}
				rp.items = append(rp.items, it)
				continue
			}
			if err := rp.readItems(c.Name, nil); err != nil {
				return err
			}
		}
		return nil
	case clause.Expr:
		// GORM's Count writes COUNT(?) of a clause.Column: read as the
		// column; other arguments stay ? and go with their select item.
		var text strings.Builder
		var vars []any
		k := 0
		for i := 0; i < len(s.SQL); i++ {
			if s.SQL[i] != '?' || k >= len(s.Vars) {
				text.WriteByte(s.SQL[i])
				continue
			}
			if c, ok := s.Vars[k].(clause.Column); ok && !c.Raw {
				text.WriteString(stmt.Quote(c))
			} else {
				text.WriteByte('?')
				vars = append(vars, s.Vars[k])
			}
			k++
		}
		return rp.readItems(text.String(), vars)
	}
	return fmt.Errorf("%w: select %T over several tables", ErrUnsupported, rp.visible)
}

// readItems reads a select list written as text, whose ? placeholders
// take vars in order.
func (rp *readPlan) readItems(text string, vars []any) error {
	ts, err := rp.tokenize(text)
	if err != nil {
		return fmt.Errorf("%w: select %q over several tables: %v", ErrUnsupported, text, err)
	}
	if len(ts) > 0 && len(rp.items) == 0 && (ts[0].is("distinct") || ts[0].is("distinctrow") && rp.dialect == merge.MySQL) {
		rp.distinct, ts = true, ts[1:] // MySQL's DISTINCTROW is DISTINCT
	}
	if len(ts) > 1 && len(rp.items) == 0 && rp.distinct && ts[0].is("on") && ts[1].punct("(") {
		// PostgreSQL's DISTINCT ON keeps each table's first row per key.
		return fmt.Errorf("%w: SELECT DISTINCT ON over several tables", ErrUnsupported)
	}
	for _, item := range splitTop(ts) {
		it, err := rp.readItem(text, item)
		if err != nil {
			return fmt.Errorf("%w: select %q over several tables: %v", ErrUnsupported, text, err)
		}
		n := 0
		for _, t := range item {
			if t.punct("?") {
				n++
			}
		}
		if n > len(vars) {
			return fmt.Errorf("%w: select %q has more ? than arguments", ErrUnsupported, text)
		}
		it.vars, vars = vars[:n], vars[n:]
		for _, v := range it.vars {
			if sqlArgument(v) {
				// gorm.Expr or a subquery is SQL each table runs (an
				// aggregate, a window), not a value the same in every row.
				return fmt.Errorf("%w: select %q with a %T argument over several tables", ErrUnsupported, text, v)
			}
		}
		rp.items = append(rp.items, it)
	}
	return nil
}

// sqlArgument reports whether a placeholder's argument is SQL GORM writes
// in its place rather than a value it binds.
func sqlArgument(v any) bool {
	switch v.(type) {
	case clause.Expression, *gorm.DB, []clause.Expression:
		return true
	}
	return false
}

func (rp *readPlan) readItem(text string, ts []token) (selItem, error) {
	if len(ts) == 1 && ts[0].punct("*") || len(ts) == 3 && ts[1].punct(".") && ts[2].punct("*") {
		rp.star = true
		return selItem{star: true}, nil
	}
	expr, alias := cutAlias(ts)
	if alias != "" {
		alias = rp.identKey(ts[len(ts)-1])
	}
	if strings.HasPrefix(strings.ToLower(alias), hiddenAlias) {
		return selItem{}, fmt.Errorf("the alias %s, which hidden columns take", alias)
	}
	it := selItem{alias: alias, text: normTokens(expr)}
	if _, ok := collationOf(expr); ok {
		it.collateIn = expr
	}
	if col, ok := colRef(expr, rp.logic); ok {
		it.col = col
		return it, nil
	}
	if a, ok := readAgg(text, expr, rp.logic); ok {
		if p := opaqueProblem(a.arg); p != "" {
			return it, fmt.Errorf("%s", p)
		}
		it.agg = &a
		return it, nil
	}
	if onlyAggregates(expr) {
		it.computed, it.ts, it.src = true, expr, text
		return it, nil
	}
	if p := opaqueProblem(expr); p != "" {
		return it, fmt.Errorf("%s", p)
	}
	return it, nil // an expression computed per row
}

// columnKey is the name a GORM column stands for among the plan's
// columns (isCol): a column of the logic table by its name; another
// table's column (Table set, or "t.col" given as one name, which GORM
// quotes part by part) as an expression, named as one written in text.
func (rp *readPlan) columnKey(stmt *gorm.Statement, c clause.Column) (name string, isCol bool) {
	if c.Name == clause.PrimaryKey {
		return quotedPrimaryKey(stmt), true
	}
	if t := c.Table; t != "" && t != clause.CurrentTable && !strings.EqualFold(t, rp.logic) {
		return "expr:" + strings.ToLower(t) + " . " + strings.ToLower(c.Name), false
	}
	if strings.ContainsAny(c.Name, ".`\"") { // t.col, or a name quoted inside
		if ts, err := tokenize(c.Name); err == nil {
			if name, ok := colRef(ts, rp.logic); ok {
				return name, true
			}
			return exprName(ts), false
		}
	}
	return strings.ToLower(c.Name), true
}

// tokenize reads a fragment of the statement. MySQL (without
// ANSI_QUOTES) reads "..." as a string, not a name: refused rather than
// merged as the column it would name elsewhere.
func (rp *readPlan) tokenize(text string) ([]token, error) {
	ts, err := tokenize(text)
	for _, t := range ts {
		if err == nil && t.dquote && rp.dialect == merge.MySQL {
			err = fmt.Errorf("%s in %q: a string on MySQL, not a name", source(text, []token{t}), text)
		}
	}
	return ts, err
}

// identKey is the name an identifier token stands for, as names compare:
// PostgreSQL keeps a quoted name's case ("N" and n are two columns);
// MySQL's aliases and SQLite's names compare without case.
func (rp *readPlan) identKey(t token) string {
	if rp.dialect == merge.PostgreSQL && t.quoted {
		return t.text
	}
	return strings.ToLower(t.text)
}

// refuseBinaryForms refuses ordering a MariaDB UUID or INET6 column, as
// the model declares it: the driver reports such a column as CHAR, so the
// merge would order its text, while MariaDB orders its binary form.
func (rp *readPlan) refuseBinaryForms(stmt *gorm.Statement) error {
	if rp.dialect != merge.MySQL || stmt.Schema == nil {
		return nil
	}
	// MariaDB returns groups in GROUP BY order: grouping keys are ordered too.
	for _, name := range append(slices.Clone(rp.ordered), rp.groupNames...) {
		f := stmt.Schema.LookUpField(name)
		if f == nil {
			continue
		}
		t := strings.ToLower(f.TagSettings["TYPE"] + " " + string(f.DataType))
		if strings.Contains(t, "uuid") || strings.Contains(t, "inet") {
			return fmt.Errorf("%w: ordering %s (type %s) over several tables of %s: MariaDB orders it by its binary form, which the merge does not read", ErrUnsupported, name, strings.Fields(t)[0], rp.logic)
		}
	}
	return nil
}

// declaredCollation reads the collation a model field's type tag declares
// (`gorm:"type:varchar(20) COLLATE utf8mb4_bin"`).
func declaredCollation(stmt *gorm.Statement) func(string) (string, bool) {
	return func(column string) (string, bool) {
		if stmt.Schema == nil {
			return "", false
		}
		f := stmt.Schema.LookUpField(column)
		if f == nil {
			return "", false
		}
		ts, err := tokenize(f.TagSettings["TYPE"])
		if err != nil {
			return "", false
		}
		for i := 0; i+1 < len(ts); i++ {
			if ts[i].is("collate") {
				return ts[i+1].text, true
			}
		}
		return "", false
	}
}

// quotedPrimaryKey is the column GORM writes for clause.PrimaryKey: the
// prioritized primary key, else (a composite key) the model's first
// column, as First and Last order by it.
func quotedPrimaryKey(stmt *gorm.Statement) string {
	if c := primaryColumn(stmt); c != "" || stmt.Schema == nil || len(stmt.Schema.DBNames) == 0 {
		return c
	}
	return stmt.Schema.DBNames[0]
}

// mayBeColumn reports whether name may be a column of the statement's
// table: one of its model's, or any name without a model.
func mayBeColumn(stmt *gorm.Statement) func(string) bool {
	return func(name string) bool {
		if stmt.Schema == nil {
			return true
		}
		_, ok := stmt.Schema.FieldsByDBName[name]
		return ok
	}
}

// nameCol records that plan column c reads model column name.
func (rp *readPlan) nameCol(c pcol, name string) {
	if name != "" && !strings.HasPrefix(name, "expr:") {
		rp.colNames[c] = name
	}
}
