package gormplugin

import (
	"fmt"
	"regexp"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// JOINs between binding tables. Tables bound together are sharded alike,
// so the rows of orders_3 join only with order_items_3. A query written as
// db.Table("orders").Joins("JOIN order_items ON order_items.order_id =
// orders.id") runs on each target as
//
//	FROM "orders_3" "orders" JOIN "order_items_3" "order_items" ON ...
//
// The physical tables carry their logic names as aliases, so the
// conditions the user wrote (and GORM's own column qualifiers) keep
// working. Only the table named right after JOIN is replaced; any other
// mention of a sharded table is refused.

// joinPlan locates the table name of one JOIN in its template.
type joinPlan struct {
	index      int    // into Statement.Joins
	partner    string // the joined logic table
	name       string // the template as written
	start, end int    // the partner's name within it
}

var joinHead = regexp.MustCompile(`(?i)^\s*(?:(?:left|right|full|inner|cross)\s+(?:outer\s+)?)?join\s+([A-Za-z_][A-Za-z0-9_]*)\b`)

// planJoins accepts JOINs of the table's binding partners in queries and
// refuses the rest.
func (p *Plugin) planJoins(db *gorm.DB, table string, query bool) ([]joinPlan, error) {
	stmt := db.Statement
	if len(stmt.Joins) == 0 {
		return nil, nil
	}
	if !query {
		return nil, fmt.Errorf("%w: JOIN in an UPDATE or DELETE of sharded table %s", ErrUnsupported, table)
	}
	group := p.rules.BindingGroup(table)
	var plans []joinPlan
	for i, j := range stmt.Joins {
		m := joinHead.FindStringSubmatchIndex(j.Name)
		if m == nil || j.Expression != nil || j.On != nil {
			return nil, fmt.Errorf("%w: JOIN %q on sharded table %s (write JOIN <binding table> ON ...)", ErrUnsupported, j.Name, table)
		}
		partner := j.Name[m[2]:m[3]]
		bound := false
		for _, g := range group {
			if strings.EqualFold(g, partner) && !strings.EqualFold(g, table) {
				bound = true
			}
		}
		if !bound {
			return nil, fmt.Errorf("%w: JOIN of %s, which is not bound to sharded table %s (bindingTables)", ErrUnsupported, partner, table)
		}
		for _, v := range j.Conds {
			if containsDB(v) {
				return nil, fmt.Errorf("%w: a subquery in a JOIN on sharded table %s", ErrUnsupported, table)
			}
		}
		plans = append(plans, joinPlan{index: i, partner: partner, name: j.Name, start: m[2], end: m[3]})
	}
	return plans, nil
}

// pointAt aims the statement at one target: the physical table, and for
// JOINs the partners' tables of the same index, all aliased to their
// logic names.
func (p *Plugin) pointAt(db *gorm.DB, r routed, t shardconf.Target) error {
	stmt := db.Statement
	if len(r.joins) == 0 {
		if aliasTarget(stmt, r, t) {
			return nil
		}
		stmt.Table, stmt.TableExpr = t.Table, nil
		if c, ok := stmt.Clauses["WHERE"]; ok && r.logic != "" && !strings.EqualFold(r.logic, t.Table) {
			if w, ok := c.Expression.(clause.Where); ok {
				c.Expression = clause.Where{Exprs: requalify(w.Exprs, r.logic)}
				stmt.Clauses["WHERE"] = c
			}
		}
		return nil
	}
	stmt.Table = r.logic
	stmt.TableExpr = &clause.Expr{SQL: "? ?", Vars: []any{clause.Table{Name: t.Table}, clause.Table{Name: r.logic}}}
	for _, j := range r.joins {
		pt, err := p.rules.BoundTarget(r.logic, t, j.partner)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		stmt.Joins[j.index].Name = j.name[:j.start] + stmt.Quote(clause.Table{Name: pt.Table}) + " " +
			stmt.Quote(clause.Table{Name: j.partner}) + j.name[j.end:]
	}
	return nil
}

// requalify points conditions GORM qualified with the logic table's name
// (association queries write "bound_items"."id") at the current table,
// which is the physical table once the statement is routed. The
// expressions are copied: a statement's clauses share them with the
// statements cloned from it.
func requalify(es []clause.Expression, logic string) []clause.Expression {
	col := func(c any) any {
		if x, ok := c.(clause.Column); ok && strings.EqualFold(x.Table, logic) {
			x.Table = clause.CurrentTable
			return x
		}
		return c
	}
	out := make([]clause.Expression, len(es))
	for i, e := range es {
		switch x := e.(type) {
		case clause.Where:
			out[i] = clause.Where{Exprs: requalify(x.Exprs, logic)}
		case clause.AndConditions:
			out[i] = clause.AndConditions{Exprs: requalify(x.Exprs, logic)}
		case clause.OrConditions:
			out[i] = clause.OrConditions{Exprs: requalify(x.Exprs, logic)}
		case clause.NotConditions:
			out[i] = clause.NotConditions{Exprs: requalify(x.Exprs, logic)}
		case clause.IN:
			x.Column = col(x.Column)
			out[i] = x
		case clause.Eq:
			x.Column = col(x.Column)
			out[i] = x
		case clause.Neq:
			x.Column = col(x.Column)
			out[i] = x
		case clause.Gt:
			x.Column = col(x.Column)
			out[i] = x
		case clause.Gte:
			x.Column = col(x.Column)
			out[i] = x
		case clause.Lt:
			x.Column = col(x.Column)
			out[i] = x
		case clause.Lte:
			x.Column = col(x.Column)
			out[i] = x
		default:
			out[i] = e
		}
	}
	return out
}

// Single-table statements name their physical table with the logic name
// as alias, so that columns the caller qualified with the logic table
// (Where("orders.user_id = ?"), Order("orders.id desc"),
// Select("orders.id")) and GORM's own qualifiers name it:
//
//	SELECT ... FROM "orders_1" AS "orders" WHERE orders.user_id = ...
//	UPDATE "orders_1" AS "orders" SET ... WHERE ...
//	DELETE FROM "orders_1" AS "orders" WHERE ...       (PostgreSQL, SQLite)
//	DELETE `orders` FROM `orders_1` AS `orders` WHERE  (MySQL, MariaDB)
//
// AS is written because SQLite requires it in UPDATE and DELETE.
// MariaDB (before 11.6) has no alias in a single-table DELETE; its
// multi-table form takes one but no ORDER BY, LIMIT or RETURNING, so such
// a DELETE names the physical table without alias (GORM's qualifiers are
// pointed at it; a caller's "orders.col" is then rejected by the
// database). An INSERT and a statement naming a physical table
// (db.Table("orders_1")) are not aliased.

// aliasSQL is the table expression of an aliased statement.
const aliasSQL = "? AS ?"

// aliasTarget points a single-table statement at t under its logic name;
// false when the statement is not to be aliased.
func aliasTarget(stmt *gorm.Statement, r routed, t shardconf.Target) bool {
	if !r.aliased || r.physical != "" || r.logic == "" || strings.EqualFold(r.logic, t.Table) {
		return false
	}
	mysqlDelete := r.kind == kindDelete && stmt.DB != nil && stmt.DB.Dialector != nil && stmt.DB.Dialector.Name() == "mysql"
	if mysqlDelete {
		for _, c := range []string{"ORDER BY", "LIMIT", "RETURNING"} {
			if _, ok := stmt.Clauses[c]; ok {
				return false
			}
		}
	}
	stmt.Table = r.logic
	stmt.TableExpr = &clause.Expr{SQL: aliasSQL, Vars: []any{clause.Table{Name: t.Table}, clause.Table{Name: r.logic}}}
	if mysqlDelete {
		d, _ := stmt.Clauses["DELETE"].Expression.(clause.Delete)
		name := stmt.Quote(clause.Table{Name: r.logic})
		// Once per statement: each target of a DELETE over several tables
		// comes here again.
		d.Modifier = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(d.Modifier), name) + " " + name)
		stmt.AddClause(d)
	}
	return true
}

// unpoint undoes what pointAt left on a statement that is run again (a
// *gorm.DB reused for Count and then Find): the alias and the table
// named by the MySQL DELETE, so that the statement is routed afresh.
func (p *Plugin) unpoint(db *gorm.DB) {
	stmt := db.Statement
	e := stmt.TableExpr
	if e == nil || len(e.Vars) != 2 || (e.SQL != aliasSQL && e.SQL != "? ?") {
		return
	}
	phys, ok1 := e.Vars[0].(clause.Table)
	logic, ok2 := e.Vars[1].(clause.Table)
	if !ok1 || !ok2 || !strings.EqualFold(logic.Name, stmt.Table) || !strings.EqualFold(p.logicOf(phys.Name), logic.Name) {
		return
	}
	stmt.TableExpr = nil
	if d, ok := stmt.Clauses["DELETE"].Expression.(clause.Delete); ok {
		d.Modifier = strings.TrimSpace(strings.TrimSuffix(d.Modifier, stmt.Quote(clause.Table{Name: logic.Name})))
		stmt.AddClause(d)
	}
}
