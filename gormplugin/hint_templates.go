package gormplugin

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// SQL templates a caller writes into a builder statement (Where("id IN
// (SELECT ... FROM t_order_1)"), Select, Order, Group, Having, a JOIN's
// condition, a SET or ON CONFLICT expression, a gorm.Expr value of a
// created map) reach the database as written: a table
// they name is not routed. A sharded logic table named there is read
// unrouted on the statement's pool (the logic table, or a stale unsharded
// copy of it), and a physical table of a table the context hints is read
// or written where the statement runs, whatever the hint says, as is an
// unsharded table the context has a hint for. All are refused before
// anything runs; a name used as a qualifier (orders.id) is
// a column reference and passes, as do quoted string literals.

// refuseTemplateTables refuses a statement whose templates name a
// sharded logic table, a table the statement's context has a hint for
// (shardconf.ErrUnusedHint), or a physical table of a logic table the
// context hints.
func (p *Plugin) refuseTemplateTables(db *gorm.DB) error {
	ctx := stmtContext(db)
	for _, text := range templatesOf(db.Statement) {
		for _, w := range tableWords(text) {
			if p.rules.IsSharded(w) {
				return fmt.Errorf("%w: the SQL template %q names sharded table %s, which it would read unrouted; use a subquery of GORM's builder on an unsharded table, or sqlhook", ErrUnsupported, text, w)
			}
			if h, ok := shardconf.HintFrom(ctx, w); ok && len(h.Database)+len(h.Table) > 0 {
				return fmt.Errorf("%w: the SQL template %q names %s, which is not routed by a hint strategy: %w", ErrUnsupported, text, w,
					&shardconf.RouteError{Table: w, Hint: "database", Err: shardconf.ErrUnusedHint})
			}
			if logic := p.keyed.logic[strings.ToLower(w)]; logic != "" && shardconf.HintReaches(ctx, logic) {
				return fmt.Errorf("%w: the SQL template %q names physical table %s of %s, which is not routed, so the hint for %s cannot place it", ErrUnsupported, text, w, logic, logic)
			}
		}
	}
	return nil
}

// templatesOf collects the SQL text a caller wrote into the statement's
// clauses (GORM's own column names are not templates).
func templatesOf(stmt *gorm.Statement) []string {
	w := &templateWalker{out: append([]string(nil), stmt.Selects...)}
	// A create's map rows may hold expressions (gorm.Expr) as values.
	w.walk(stmt.Dest)
	for _, name := range []string{"WHERE", "SELECT", "ORDER BY", "GROUP BY", "SET", "ON CONFLICT"} {
		if c, ok := stmt.Clauses[name]; ok {
			w.walk(c.Expression)
		}
	}
	for _, j := range stmt.Joins {
		// The table right after JOIN is planJoins' (a binding partner) or
		// refuseShardedReferences'; the rest is the caller's template.
		if m := joinHead.FindStringIndex(j.Name); m != nil {
			w.out = append(w.out, j.Name[m[1]:])
		} else {
			w.out = append(w.out, j.Name)
		}
		for _, c := range j.Conds {
			w.walk(c)
		}
		if j.On != nil {
			w.walk(*j.On)
		}
	}
	return w.out
}

// templateWalker collects the SQL templates of clauses and values.
type templateWalker struct{ out []string }

func (w *templateWalker) walk(e any) {
	switch x := e.(type) {
	case clause.Expr:
		w.out = append(w.out, x.SQL)
		for _, v := range x.Vars {
			w.walk(v)
		}
	case clause.NamedExpr:
		w.out = append(w.out, x.SQL)
		for _, v := range x.Vars {
			w.walk(v)
		}
	case clause.Where:
		walkAll(x.Exprs, w.walk)
	case clause.AndConditions:
		walkAll(x.Exprs, w.walk)
	case clause.OrConditions:
		walkAll(x.Exprs, w.walk)
	case clause.NotConditions:
		walkAll(x.Exprs, w.walk)
	case clause.Select:
		rawColumns(x.Columns, &w.out)
		if x.Expression != nil {
			w.walk(x.Expression)
		}
	case clause.OrderBy:
		for _, c := range x.Columns {
			rawColumns([]clause.Column{c.Column}, &w.out)
		}
		if x.Expression != nil {
			w.walk(x.Expression)
		}
	case clause.GroupBy:
		rawColumns(x.Columns, &w.out)
		walkAll(x.Having, w.walk)
	case clause.Set:
		for _, a := range x {
			w.walk(a.Value)
		}
	case clause.OnConflict:
		w.walk(x.Where)
		w.walk(x.TargetWhere)
		w.walk(x.DoUpdates)
	default:
		w.walkValues(e)
	}
}

// walkValues walks the values of a create's map rows.
func (w *templateWalker) walkValues(e any) {
	switch x := e.(type) {
	case map[string]any:
		for _, v := range x {
			w.walk(v)
		}
	case []map[string]any:
		for _, m := range x {
			w.walk(m)
		}
	case *map[string]any:
		if x != nil {
			w.walk(*x)
		}
	case *[]map[string]any:
		if x != nil {
			w.walk(*x)
		}
	}
}

func walkAll(es []clause.Expression, f func(any)) {
	for _, e := range es {
		f(e)
	}
}

func rawColumns(cs []clause.Column, out *[]string) {
	for _, c := range cs {
		if c.Raw {
			*out = append(*out, c.Name)
		}
	}
}

// tableWords returns the words of text that may name a table: outside
// single-quoted strings, and not a qualifier (a word followed, after an
// optional closing quote, by '.').
func tableWords(text string) []string {
	var out []string
	inStr := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'':
			inStr = !inStr
			i++
		case inStr || !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
			i++
		default:
			j := i
			for j < len(text) && (isIdentByte(text[j]) || text[j] == '$') {
				j++
			}
			k := j
			if k < len(text) && (text[k] == '"' || text[k] == '`' || text[k] == ']') {
				k++
			}
			if k >= len(text) || text[k] != '.' {
				out = append(out, text[i:j])
			}
			i = j
		}
	}
	return out
}
