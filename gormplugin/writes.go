package gormplugin

import (
	"context"
	"database/sql/driver"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// Writes are checked on the statement that runs, not on the API that
// built it. An UPDATE's change set is read from the final clause.Set,
// the one GORM's ConvertToAssignments makes from whatever Updates,
// Update, UpdateColumn(s) or Save were given (a struct of another type,
// a map keyed by field or column names, gorm.Expr values). An upsert's
// update part is read from its clause.OnConflict. A sharding column may be
// assigned only a plain value that, with the statement's other
// conditions, routes to the one target the statement runs on: the row
// then stays where it belongs (ShardingSphere allows the same). Anything
// else is shardconf.ErrShardingKeyChange, before anything is written.

// keyAssign is one assignment of a sharding column.
type keyAssign struct {
	column   string
	value    any
	expr     string // non-empty: not a plain value (an expression, a column, a subquery)
	excluded bool   // upsert: excluded.<column>, the inserted row's own value
}

// shardingAssigns lists the assignments of table's sharding columns in set.
func (p *Plugin) shardingAssigns(stmt *gorm.Statement, table string, set []clause.Assignment) []keyAssign {
	cols := p.rules.ShardingColumns(table)
	var out []keyAssign
	for _, a := range set {
		col := assignedColumn(stmt, a.Column)
		if !slices.Contains(cols, col) {
			continue
		}
		ka := keyAssign{column: col, value: a.Value}
		switch v := a.Value.(type) {
		case clause.Column:
			if strings.EqualFold(v.Table, "excluded") && assignedColumn(stmt, clause.Column{Name: v.Name}) == col {
				ka.excluded = true
			} else {
				ka.expr = v.Table + "." + v.Name
			}
		case clause.Expr:
			ka.expr = v.SQL
		case *clause.Expr:
			ka.expr = v.SQL
		case clause.NamedExpr:
			ka.expr = v.SQL
		case clause.Expression, gorm.Valuer, *gorm.DB, []any:
			ka.expr = fmt.Sprintf("%T", v)
		default:
			if plain, ok := plainValue(v); ok {
				ka.value = plain
			} else {
				ka.expr = fmt.Sprintf("%T", v)
			}
		}
		out = append(out, ka)
	}
	return out
}

// plainValue is the value the driver sends for v: pointers followed,
// driver.Valuer (sql.NullInt64 and the like) asked.
func plainValue(v any) (any, bool) {
	for i := 0; i < 8; i++ {
		if dv, ok := v.(driver.Valuer); ok {
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
				return nil, true
			}
			x, err := dv.Value()
			if err != nil {
				return nil, false
			}
			v = x
			continue
		}
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Pointer {
			return v, true
		}
		if rv.IsNil() {
			return nil, true
		}
		v = rv.Elem().Interface()
	}
	return nil, false
}

// assignedColumn is the column an assignment names, as the rules spell
// it: a field name ("UserID") becomes its column, quotes and a qualifier
// go ("orders"."user_id" is user_id).
func assignedColumn(stmt *gorm.Statement, c clause.Column) string {
	name := c.Name
	if stmt.Schema != nil {
		if f := stmt.Schema.LookUpField(name); f != nil && f.DBName != "" {
			return strings.ToLower(f.DBName)
		}
	}
	name = unquote(name)
	if stmt.Schema != nil {
		if f := stmt.Schema.LookUpField(name); f != nil && f.DBName != "" {
			return strings.ToLower(f.DBName)
		}
	}
	return name
}

// keyChange is the error for an assignment that would move a row.
func keyChange(table string, a keyAssign, why string) error {
	v := a.expr
	if v == "" {
		plain, ok := plainValue(a.value) // a *int64 or sql.NullInt64 as the value it sends
		if !ok {
			plain = a.value
		}
		v = fmt.Sprint(plain)
	}
	re := &shardconf.RouteError{Table: table, Column: a.column, Value: v, Err: shardconf.ErrShardingKeyChange}
	return fmt.Errorf("%w: %w (%s; delete the row and create it again)", ErrUnsupported, re, why)
}

// checkAssigns refuses sharding-column assignments unless every row the
// statement can touch keeps routing to the statement's single target.
// groups are the statement's OR-ed groups of AND-ed conditions; with the
// assignments in place of their columns' conditions, each must route to
// exactly that target.
func (p *Plugin) checkAssigns(ctx context.Context, table string, targets []shardconf.Target, groups [][]shardconf.Cond, assigns []keyAssign) error {
	if len(assigns) == 0 {
		return nil
	}
	for _, a := range assigns {
		if a.expr != "" {
			return keyChange(table, a, "an expression assigned to a sharding column cannot be routed")
		}
		if err := p.checkTime(table, a.column, a.value); err != nil {
			return err
		}
	}
	if len(targets) != 1 {
		return keyChange(table, assigns[0], fmt.Sprintf("the statement reaches %d tables", len(targets)))
	}
	for _, g := range groups {
		if ok, err := p.stays(ctx, table, targets[0], g, assigns); !ok {
			blame := assigns[0]
			for _, a := range assigns { // name the assignment that moves the row
				if one, _ := p.stays(ctx, table, targets[0], g, []keyAssign{a}); !one {
					blame = a
					break
				}
			}
			why := fmt.Sprintf("the new value routes elsewhere than %s", targets[0])
			if err != nil {
				why = fmt.Sprintf("the new value does not route to %s: %v", targets[0], err)
			}
			return keyChange(table, blame, why)
		}
	}
	return nil
}

// stays reports whether rows matching conds still route to target after
// assigns: conds with the assigned columns' conditions replaced by the
// assigned values must route to target alone (with the statement's hints,
// ctx, which keep routing the table's hint strategies).
func (p *Plugin) stays(ctx context.Context, table string, target shardconf.Target, conds []shardconf.Cond, assigns []keyAssign) (bool, error) {
	post := make([]shardconf.Cond, 0, len(conds)+len(assigns))
	for _, c := range conds {
		if !slices.ContainsFunc(assigns, func(a keyAssign) bool { return strings.EqualFold(a.column, c.Column()) }) {
			post = append(post, c)
		}
	}
	for _, a := range assigns {
		post = append(post, shardconf.Eq(a.column, a.value))
	}
	ts, err := p.rules.RouteContext(ctx, table, post...)
	return err == nil && len(ts) == 1 && ts[0] == target, err
}

// updateView is the statement as gorm:update will build it: its SET and
// the primary-key conditions ConvertToAssignments adds. Routing runs
// before GORM converts the change set, so it converts it itself, on a
// copy of the statement whose model cannot be written to (GORM writes the
// assigned values back into the model when it converts).
func updateView(db *gorm.DB) *gorm.Statement {
	stmt := db.Statement
	if _, ok := stmt.Clauses["SET"]; ok || stmt.SQL.Len() > 0 || stmt.Dest == nil {
		return stmt
	}
	ctx := stmt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	view := db.Session(&gorm.Session{Context: ctx}).Statement
	mv := reflect.ValueOf(stmt.Model)
	for mv.Kind() == reflect.Pointer && !mv.IsNil() {
		mv = mv.Elem()
	}
	if mv.IsValid() && mv.CanInterface() {
		view.ReflectValue = reflect.ValueOf(mv.Interface()) // a copy, not addressable
	}
	if set := callbacks.ConvertToAssignments(view); len(set) > 0 {
		view.AddClause(set)
	}
	return view
}

// finalSet adds to the statement the SET gorm:update would build, as
// gorm:update does, so that the check and the UPDATE read the same
// assignments. It returns a function that removes it again, as
// gorm:update does after building.
func finalSet(db *gorm.DB) (undo func(), empty bool) {
	stmt := db.Statement
	if _, ok := stmt.Clauses["SET"]; ok || stmt.SQL.Len() > 0 || stmt.Dest == nil {
		return func() {}, false
	}
	if stmt.Schema != nil {
		for _, c := range stmt.Schema.UpdateClauses {
			stmt.AddClause(c)
		}
	}
	set := callbacks.ConvertToAssignments(stmt)
	if len(set) == 0 {
		return func() {}, true
	}
	stmt.AddClause(set)
	return func() { delete(stmt.Clauses, "SET") }, false
}

// rowOwnValues: an UPDATE or DELETE of one loaded row (Save,
// Updates(&row), Delete(&row), db.Model(&row)...) routes by the row's own
// sharding values for the sharding columns its WHERE clause does not
// name: the value its SET writes, else the model's value when it is not
// zero (a zero value is read as not set, unless zeros: see planWhere).
// Only a row with its whole
// primary key, which GORM puts in the WHERE clause: the statement then
// matches at most that row, and running it on fewer tables cannot miss
// another. If the row is not where those values route, the statement
// matches nothing, and checkedUpdate/checkedDelete look for it elsewhere
// (refuseIfMoved).
func rowOwnValues(stmt *gorm.Statement, cols []string, groups [][]shardconf.Cond, assigns []keyAssign, zeros bool) bool {
	row, ok := keyedModelRow(stmt)
	if !ok || len(groups) != 1 { // with an OR, other rows may match too
		return false
	}
	own := map[string]any{}
	for _, c := range cols {
		if i := slices.IndexFunc(assigns, func(a keyAssign) bool { return a.column == c }); i >= 0 {
			if assigns[i].expr == "" {
				own[c] = assigns[i].value
			}
			continue
		}
		if f := stmt.Schema.LookUpField(c); f != nil {
			if v, zero := f.ValueOf(stmt.Context, row); !zero || zeros {
				own[c] = v
			}
		}
	}
	added := false
	for gi, g := range groups {
		for _, c := range cols {
			v, ok := own[c]
			if !ok || slices.ContainsFunc(g, func(x shardconf.Cond) bool { return strings.EqualFold(x.Column(), c) }) {
				continue
			}
			groups[gi] = append(groups[gi], shardconf.Eq(c, v))
			added = true
		}
	}
	return added
}

// keyedModelRow is the statement's model when it is one row of the
// model's type with a non-zero primary key.
func keyedModelRow(stmt *gorm.Statement) (reflect.Value, bool) {
	mv := reflect.ValueOf(stmt.Model)
	if stmt.Schema == nil || len(stmt.Schema.PrimaryFields) == 0 || mv.Kind() != reflect.Pointer || mv.IsNil() {
		return reflect.Value{}, false
	}
	row := mv.Elem()
	if row.Kind() != reflect.Struct || row.Type() != stmt.Schema.ModelType {
		return reflect.Value{}, false
	}
	if _, ok := primaryKey(stmt, row); !ok {
		return reflect.Value{}, false
	}
	return row, true
}

// changesAreModel reports whether an UPDATE's change set is its model
// (Save, Updates(&row)): the same pointer. Maps are not compared (an
// interface comparison of two maps panics).
func changesAreModel(stmt *gorm.Statement) bool {
	d, m := reflect.ValueOf(stmt.Dest), reflect.ValueOf(stmt.Model)
	return d.Kind() == reflect.Pointer && m.Kind() == reflect.Pointer && !d.IsNil() &&
		d.Type() == m.Type() && d.Pointer() == m.Pointer()
}

// setOf is the statement's SET clause, if any.
func setOf(stmt *gorm.Statement) []clause.Assignment {
	set, _ := stmt.Clauses["SET"].Expression.(clause.Set)
	return set
}

// checkedUpdate wraps gorm:update: the SET is built first (as gorm:update
// would), and the statement is routed again from it and its final WHERE
// clause. BeforeUpdate/BeforeSave hooks and belongs-to saves ran after
// the first routing and may have changed the row; if the targets differ,
// the UPDATE is refused (inside GORM's transaction, which rolls back).
func (p *Plugin) checkedUpdate(f func(*gorm.DB)) func(*gorm.DB) {
	run := p.each(f)
	return func(db *gorm.DB) {
		r, ok := routedOf(db)
		if !ok || db.Error != nil || r.logic == "" || !p.rules.IsSharded(r.logic) {
			so := p.startStatement(db, "update")
			run(db, so)
			so.end(db.Error, 0, false)
			return
		}
		undo, empty := finalSet(db)
		defer undo()
		if db.Error != nil || empty {
			return // nothing to set: gorm:update runs no statement
		}
		again, err := p.planWhere(db, db.Statement, r.logic, r.physical, false)
		if err != nil {
			p.fail(db, err)
			return
		}
		if !slices.Equal(again.targets, r.targets) {
			p.fail(db, fmt.Errorf("%w: the UPDATE of %s routed to %v, and to %v after BeforeUpdate/BeforeSave hooks or association saves changed the row", ErrUnsupported, r.logic, r.targets, again.targets))
			return
		}
		so := p.startStatement(db, "update")
		run(db, so)
		if db.Error == nil && db.RowsAffected == 0 && again.ownValues && !db.DryRun && len(r.targets) == 1 {
			p.refuseIfMoved(db, r.logic, r.targets[0], again.zeroValues)
		}
		so.end(db.Error, 0, false)
	}
}

// checkedDelete wraps gorm:delete: a DELETE routed by the row's own
// sharding values (Delete(&row)) that matched nothing is refused if the
// row's key is in another table (see refuseIfMoved): one table would have
// deleted it.
func (p *Plugin) checkedDelete(f func(*gorm.DB)) func(*gorm.DB) {
	run := p.each(f)
	return func(db *gorm.DB) {
		so := p.startStatement(db, "delete")
		run(db, so)
		r, ok := routedOf(db)
		if ok && r.ownValues && db.Error == nil && db.RowsAffected == 0 && !db.DryRun && len(r.targets) == 1 {
			p.refuseIfMoved(db, r.logic, r.targets[0], r.zeroValues)
		}
		so.end(db.Error, 0, false)
	}
}

// refuseIfMoved: an UPDATE routed by the row's own sharding values
// (Save, Updates(&row)) matched nothing. If the row's primary key is in
// another table, its sharding values were changed in memory: an UPDATE
// in place would leave it in the wrong table, and Save's fallback INSERT
// would put the key in two tables. Refused instead.
//
// zeros: the row was routed by a zero sharding value (see planWhere),
// which may be a model built without it (db.Delete(&Order{ID: 5})) as
// well as a loaded row changed to zero: the error then also matches
// shardconf.ErrMissingShardingKey.
func (p *Plugin) refuseIfMoved(db *gorm.DB, table string, at shardconf.Target, zeros bool) {
	stmt := db.Statement
	rv, ok := keyedModelRow(stmt)
	if !ok {
		return
	}
	key, _ := primaryKey(stmt, rv)
	where, err := p.keyElsewhere(db, table, at, stmt.Schema.PrimaryFieldDBNames, [][]any{key})
	if err != nil {
		_ = db.AddError(err) // the statement ran: its end reports this
		return
	}
	if where != nil {
		col := p.rules.ShardingColumns(table)[0]
		for _, c := range p.rules.ShardingColumns(table) { // name the column that moved the row, not the key
			if !slices.ContainsFunc(stmt.Schema.PrimaryFieldDBNames, func(k string) bool { return strings.EqualFold(k, c) }) {
				col = c
				break
			}
		}
		var v any
		if f := stmt.Schema.LookUpField(col); f != nil {
			v, _ = f.ValueOf(stmt.Context, rv)
		}
		err := keyChange(table, keyAssign{column: col, value: v},
			fmt.Sprintf("the row with primary key %v is in %s; the row's values route to %s", fmt.Sprint(key...), *where, at))
		if zeros {
			missing := &shardconf.RouteError{Table: table, Column: col, Err: shardconf.ErrMissingShardingKey}
			err = fmt.Errorf("%w (the model's zero %s was taken as its value: %w)", missing, col, err)
		}
		_ = db.AddError(err) // the statement ran: its end reports this
	}
}

// oneNow makes the statement's NowFunc return one time until the returned
// function is called: a write run once per target then stamps every table
// alike (soft delete's deleted_at, a create's CreatedAt), as one statement
// on one table would. The statement gets its own copy of the config, as
// Session(&gorm.Session{NowFunc: ...}) gives; the shared one is untouched.
func oneNow(db *gorm.DB) (undo func()) {
	now := db.NowFunc()
	fixed := func() time.Time { return now }
	saved, stmtDB := db.Config, db.Statement.DB
	cfg := *saved
	cfg.NowFunc = fixed
	db.Config = &cfg
	var stmtSaved *gorm.Config
	if stmtDB != nil && stmtDB != db {
		stmtSaved = stmtDB.Config
		own := *stmtSaved
		own.NowFunc = fixed
		stmtDB.Config = &own
	}
	return func() {
		db.Config = saved
		if stmtSaved != nil {
			stmtDB.Config = stmtSaved
		}
	}
}
