package gormplugin

import (
	"context"
	"database/sql/driver"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"

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
		v = fmt.Sprint(a.value)
	}
	re := &shardconf.RouteError{Table: table, Column: a.column, Value: v, Err: shardconf.ErrShardingKeyChange}
	return fmt.Errorf("%w: %w (%s; delete the row and create it again)", ErrUnsupported, re, why)
}

// checkAssigns refuses sharding-column assignments unless every row the
// statement can touch keeps routing to the statement's single target.
// groups are the statement's OR-ed groups of AND-ed conditions; with the
// assignments in place of their columns' conditions, each must route to
// exactly that target.
func (p *Plugin) checkAssigns(table string, targets []shardconf.Target, groups [][]shardconf.Cond, assigns []keyAssign) error {
	if len(assigns) == 0 {
		return nil
	}
	for _, a := range assigns {
		if a.expr != "" {
			return keyChange(table, a, "an expression assigned to a sharding column cannot be routed")
		}
	}
	if len(targets) != 1 {
		return keyChange(table, assigns[0], fmt.Sprintf("the statement reaches %d tables", len(targets)))
	}
	for _, g := range groups {
		if ok, err := p.stays(table, targets[0], g, assigns); !ok {
			blame := assigns[0]
			for _, a := range assigns { // name the assignment that moves the row
				if one, _ := p.stays(table, targets[0], g, []keyAssign{a}); !one {
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
// assigned values must route to target alone.
func (p *Plugin) stays(table string, target shardconf.Target, conds []shardconf.Cond, assigns []keyAssign) (bool, error) {
	post := make([]shardconf.Cond, 0, len(conds)+len(assigns))
	for _, c := range conds {
		if !slices.ContainsFunc(assigns, func(a keyAssign) bool { return strings.EqualFold(a.column, c.Column()) }) {
			post = append(post, c)
		}
	}
	for _, a := range assigns {
		post = append(post, shardconf.Eq(a.column, a.value))
	}
	ts, err := p.rules.Route(table, post...)
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

// rowOwnValues: Save and Updates(&row) (the change set is the model
// itself) route by the row's own sharding values for sharding columns the
// WHERE clause says nothing about: the value its SET writes, else the
// model's value when it is not zero (a zero value is read as not set).
// If the row is not where those values route, the UPDATE matches nothing
// and checkedUpdate looks for it elsewhere (refuseIfMoved).
func rowOwnValues(stmt *gorm.Statement, cols []string, groups [][]shardconf.Cond, assigns []keyAssign) bool {
	if !changesAreModel(stmt) || stmt.Schema == nil {
		return false
	}
	row := reflect.Indirect(reflect.ValueOf(stmt.Dest))
	own := map[string]any{}
	for _, c := range cols {
		if i := slices.IndexFunc(assigns, func(a keyAssign) bool { return a.column == c }); i >= 0 {
			if assigns[i].expr == "" {
				own[c] = assigns[i].value
			}
			continue
		}
		if f := stmt.Schema.LookUpField(c); f != nil && row.Kind() == reflect.Struct {
			if v, zero := f.ValueOf(stmt.Context, row); !zero {
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
			run(db)
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
		run(db)
		if db.Error == nil && db.RowsAffected == 0 && again.ownValues && !db.DryRun {
			p.refuseIfMoved(db, r.logic, r.targets[0])
		}
	}
}

// checkedDelete wraps gorm:delete: a DELETE routed by the row's own
// sharding values (Delete(&row)) that matched nothing is refused if the
// row's key is in another table (see refuseIfMoved): one table would have
// deleted it.
func (p *Plugin) checkedDelete(f func(*gorm.DB)) func(*gorm.DB) {
	run := p.each(f)
	return func(db *gorm.DB) {
		run(db)
		r, ok := routedOf(db)
		if ok && r.ownValues && db.Error == nil && db.RowsAffected == 0 && !db.DryRun && len(r.targets) == 1 {
			p.refuseIfMoved(db, r.logic, r.targets[0])
		}
	}
}

// refuseIfMoved: an UPDATE routed by the row's own sharding values
// (Save, Updates(&row)) matched nothing. If the row's primary key is in
// another table, its sharding values were changed in memory: an UPDATE
// in place would leave it in the wrong table, and Save's fallback INSERT
// would put the key in two tables. Refused instead.
func (p *Plugin) refuseIfMoved(db *gorm.DB, table string, at shardconf.Target) {
	stmt := db.Statement
	if stmt.Schema == nil || len(stmt.Schema.PrimaryFields) == 0 {
		return
	}
	rv := reflect.Indirect(reflect.ValueOf(stmt.Dest))
	if rv.Kind() != reflect.Struct {
		return
	}
	key, ok := primaryKey(stmt, rv)
	if !ok {
		return
	}
	where, err := p.keyElsewhere(db, table, at, stmt.Schema.PrimaryFieldDBNames, [][]any{key})
	if err != nil {
		p.fail(db, err)
		return
	}
	if where != nil {
		col := p.rules.ShardingColumns(table)[0]
		var v any
		if f := stmt.Schema.LookUpField(col); f != nil {
			v, _ = f.ValueOf(stmt.Context, rv)
		}
		p.fail(db, keyChange(table, keyAssign{column: col, value: v},
			fmt.Sprintf("the row with primary key %v is in %s; the row's values route to %s", fmt.Sprint(key...), *where, at)))
	}
}

// primaryKey reads a row's primary key; ok is false when a part is zero.
func primaryKey(stmt *gorm.Statement, rv reflect.Value) ([]any, bool) {
	var key []any
	for _, f := range stmt.Schema.PrimaryFields {
		v, zero := f.ValueOf(stmt.Context, rv)
		if zero {
			return nil, false
		}
		key = append(key, v)
	}
	return key, true
}

// keyDetermines reports whether a primary key alone routes table's rows
// to one target: then a key can only ever be in that table.
func (p *Plugin) keyDetermines(table string, pkCols []string, key []any) bool {
	conds := make([]shardconf.Cond, len(pkCols))
	for i, c := range pkCols {
		conds[i] = shardconf.Eq(c, key[i])
	}
	ts, err := p.rules.Route(table, conds...)
	return err == nil && len(ts) == 1
}

// keyElsewhere looks for rows with any of keys (primary-key values, in
// the schema's primary-key order) in table's targets other than at, and
// returns the first target holding one. Targets in at's data source are
// read through the statement's connection (its transaction, if any),
// others through their data source's pool.
func (p *Plugin) keyElsewhere(db *gorm.DB, table string, at shardconf.Target, pkCols []string, keys [][]any) (*shardconf.Target, error) {
	stmt := db.Statement
	var todo [][]any
	for _, k := range keys {
		if !p.keyDetermines(table, pkCols, k) {
			todo = append(todo, k)
		}
	}
	if len(todo) == 0 {
		return nil, nil
	}
	all, err := p.rules.Targets(table)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		if t == at {
			continue
		}
		pool := stmt.ConnPool
		if t.DataSource != at.DataSource {
			if pool, err = p.poolFor(db, t.DataSource); err != nil {
				return nil, err
			}
		}
		found, err := p.holdsKey(db, pool, t, pkCols, todo)
		if err != nil {
			return nil, fmt.Errorf("gormplugin: looking for the primary key of a row of %s in %s: %w", table, t, err)
		}
		if found {
			return &t, nil
		}
	}
	return nil, nil
}

// holdsKey reports whether physical table t holds a row with one of keys.
func (p *Plugin) holdsKey(db *gorm.DB, pool gorm.ConnPool, t shardconf.Target, cols []string, keys [][]any) (bool, error) {
	ctx := db.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	s := db.Session(&gorm.Session{NewDB: true, Context: ctx})
	s.Statement.ConnPool = pool
	// Marked as already on its physical table: routing leaves it alone.
	q := s.Set(migrateTargetKey, t).Table(t.Table)
	var or []clause.Expression
	for _, k := range keys {
		and := make([]clause.Expression, len(cols))
		for i, c := range cols {
			and[i] = clause.Eq{Column: clause.Column{Name: c}, Value: k[i]}
		}
		or = append(or, clause.And(and...))
	}
	var n int64
	err := q.Where(clause.Or(or...)).Limit(1).Count(&n).Error
	return n > 0, err
}

// callerClauses keeps the clauses a create was given that GORM's create
// callback extends as it builds.
func callerClauses(stmt *gorm.Statement) map[string]clause.Clause {
	keep := map[string]clause.Clause{}
	for _, name := range []string{"ON CONFLICT", "RETURNING"} {
		if c, ok := stmt.Clauses[name]; ok {
			keep[name] = c
		}
	}
	return keep
}

// createRows lists the struct rows a create inserts (none for maps).
func createRows(stmt *gorm.Statement) []reflect.Value {
	rv := stmt.ReflectValue
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Struct:
		return []reflect.Value{rv}
	case reflect.Slice, reflect.Array:
		out := make([]reflect.Value, 0, rv.Len())
		for i := 0; i < rv.Len(); i++ {
			e := rv.Index(i)
			for (e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface) && !e.IsNil() {
				e = e.Elem()
			}
			out = append(out, e)
		}
		return out
	}
	return nil
}

// rowKeys reads the primary key of every row a create inserts, in the
// order rowValues reads the rows; nil where a part is zero or missing.
// The key columns are the schema's primary key or, for a map without a
// model, the column the table's key generator fills.
func (p *Plugin) rowKeys(db *gorm.DB, table string) (cols []string, keys [][]any) {
	stmt := db.Statement
	if stmt.Schema != nil {
		cols = stmt.Schema.PrimaryFieldDBNames
	} else if c, _, ok := p.rules.KeyGenerator(table); ok {
		cols = []string{c}
	}
	if len(cols) == 0 {
		return nil, nil
	}
	read := func(row reflect.Value) []any {
		for (row.Kind() == reflect.Pointer || row.Kind() == reflect.Interface) && !row.IsNil() {
			row = row.Elem()
		}
		switch row.Kind() {
		case reflect.Struct:
			if stmt.Schema == nil {
				return nil
			}
			k, _ := primaryKey(stmt, row)
			return k
		case reflect.Map:
			m, ok := row.Interface().(map[string]any)
			if !ok {
				return nil
			}
			vals := map[string]any{}
			for k, v := range m {
				if stmt.Schema != nil {
					if f := stmt.Schema.LookUpField(k); f != nil {
						k = f.DBName
					}
				}
				vals[strings.ToLower(unquote(k))] = v
			}
			key := make([]any, len(cols))
			for i, c := range cols {
				v, ok := vals[strings.ToLower(c)]
				if !ok || isZeroAny(v) {
					return nil
				}
				key[i] = v
			}
			return key
		}
		return nil
	}
	rv := stmt.ReflectValue
	for (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		for i := 0; i < rv.Len(); i++ {
			keys = append(keys, read(rv.Index(i)))
		}
		return cols, keys
	}
	return cols, [][]any{read(rv)}
}

// settleShardingValues gives the sharding columns of the rows being
// created the values GORM's INSERT will carry, before they are routed:
// GORM fills a zero autoCreateTime/autoUpdateTime column with the time
// and a zero column with a default: tag with that default while it builds
// the INSERT, after routing. A sharding column the INSERT leaves out
// (Select, Omit) or whose value the database would choose (a default
// that is an SQL expression, an auto-increment) cannot be routed.
func (p *Plugin) settleShardingValues(db *gorm.DB, table string) error {
	stmt := db.Statement
	if stmt.Schema == nil {
		return nil
	}
	switch stmt.Dest.(type) {
	case map[string]any, *map[string]any, []map[string]any, *[]map[string]any:
		return nil // the map's keys are the INSERT's columns
	}
	selected, restricted := stmt.SelectAndOmitColumns(true, false)
	rows := createRows(stmt)
	for _, c := range p.rules.ShardingColumns(table) {
		f := stmt.Schema.LookUpField(c)
		if f == nil || f.DBName == "" {
			continue // not a column of the model: routing reports it missing
		}
		if v, ok := selected[f.DBName]; (ok && !v) || (!ok && restricted && f.AutoCreateTime == 0 && f.AutoUpdateTime == 0) || !f.Creatable {
			return fmt.Errorf("%w: the INSERT into %s leaves out sharding column %s (Select/Omit, or a field GORM may not create)", ErrUnsupported, table, c)
		}
		for _, row := range rows {
			if row.Kind() != reflect.Struct {
				continue
			}
			if _, zero := f.ValueOf(stmt.Context, row); !zero {
				continue
			}
			var err error
			switch {
			case f.AutoCreateTime > 0 || f.AutoUpdateTime > 0:
				err = f.Set(stmt.Context, row, db.NowFunc())
			case f.DefaultValueInterface != nil:
				err = f.Set(stmt.Context, row, f.DefaultValueInterface)
			case f.HasDefaultValue:
				return fmt.Errorf("%w: sharding column %s of %s is zero and has a database default: the database would choose the row's table", ErrUnsupported, c, table)
			}
			if err != nil {
				return fmt.Errorf("gormplugin: create in %s: %w", table, err)
			}
		}
	}
	return nil
}

// checkCreate refuses a create into a named physical table its rows do
// not route to, and an upsert whose update part could move a row.
func (p *Plugin) checkCreate(db *gorm.DB, table string, r routed) error {
	for _, g := range r.groups {
		if r.physical != "" && !strings.EqualFold(g.target.Table, r.physical) {
			return fmt.Errorf("%w: a row created in %s routes to %s; create it through %s, or in its own table", ErrUnsupported, r.physical, g.target, table)
		}
	}
	oc, ok := db.Statement.Clauses["ON CONFLICT"].Expression.(clause.OnConflict)
	if !ok || oc.DoNothing || (len(oc.DoUpdates) == 0 && !oc.UpdateAll) {
		return nil
	}
	assigns := p.upsertAssigns(db.Statement, table, oc)
	if len(assigns) == 0 {
		return nil
	}
	for _, a := range assigns {
		if a.expr != "" {
			return keyChange(table, a, "an upsert assigns an expression to a sharding column")
		}
	}
	known := p.conflictColumns(db, oc)
	rows, err := rowValues(db, p.rules.ShardingColumns(table))
	if err != nil {
		return err
	}
	for _, g := range r.groups {
		for _, i := range g.rows {
			if err := p.checkUpsertRow(table, g.target, rows[i], assigns, known); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkUpsertRow: the row an upsert updates is the conflicting row, in
// the same physical table. After the update its sharding values are the
// assigned ones (excluded.<column> is the inserted row's value) and, for
// the columns not assigned, its own; those are known only for columns of
// the conflict target (the conflicting row has the inserted row's value
// there). Every sharding column must be known and route to the table
// the row is inserted in.
func (p *Plugin) checkUpsertRow(table string, at shardconf.Target, row map[string]any, assigns []keyAssign, known map[string]bool) error {
	var post []shardconf.Cond
	for _, c := range p.rules.ShardingColumns(table) {
		i := slices.IndexFunc(assigns, func(a keyAssign) bool { return a.column == c })
		switch {
		case i >= 0 && assigns[i].excluded:
			post = append(post, shardconf.Eq(c, row[c]))
		case i >= 0:
			post = append(post, shardconf.Eq(c, assigns[i].value))
		case known[c]:
			post = append(post, shardconf.Eq(c, row[c]))
		}
	}
	ts, err := p.rules.Route(table, post...)
	if err != nil || len(ts) != 1 || ts[0] != at {
		why := fmt.Sprintf("the updated row would not route to %s, where the statement runs", at)
		if err != nil {
			why = fmt.Sprintf("the conflicting row's other sharding values are unknown (%v)", err)
		}
		return keyChange(table, assigns[0], why)
	}
	return nil
}

// upsertAssigns lists the sharding columns an upsert's update part
// assigns: its DoUpdates, and for UpdateAll the columns GORM expands it
// to (callbacks.ConvertToCreateValues: every inserted column but the
// primary key, autoCreateTime columns and columns with a database
// default).
func (p *Plugin) upsertAssigns(stmt *gorm.Statement, table string, oc clause.OnConflict) []keyAssign {
	assigns := p.shardingAssigns(stmt, table, oc.DoUpdates)
	if !oc.UpdateAll || stmt.Schema == nil {
		return assigns
	}
	selected, restricted := stmt.SelectAndOmitColumns(true, true)
	for _, c := range p.rules.ShardingColumns(table) {
		f := stmt.Schema.LookUpField(c)
		if f == nil || f.PrimaryKey || f.AutoCreateTime > 0 {
			continue
		}
		if v, ok := selected[f.DBName]; (ok && !v) || (!ok && restricted) {
			continue
		}
		if f.HasDefaultValue && f.DefaultValueInterface == nil && !strings.EqualFold(f.DefaultValue, "NULL") {
			continue
		}
		if f.AutoUpdateTime > 0 {
			assigns = append(assigns, keyAssign{column: c, expr: "the current time"})
			continue
		}
		assigns = append(assigns, keyAssign{column: c, excluded: true})
	}
	return assigns
}

// conflictColumns are the columns whose values the conflicting row of an
// upsert shares with the inserted row. PostgreSQL and SQLite update only
// a row that conflicts on the target GORM writes (the primary key when
// none is given). MySQL and MariaDB ignore the target: ON DUPLICATE KEY
// UPDATE fires on any unique key, so only the primary key is trusted, and
// only when the model declares no other unique key.
func (p *Plugin) conflictColumns(db *gorm.DB, oc clause.OnConflict) map[string]bool {
	stmt := db.Statement
	known := map[string]bool{}
	if oc.OnConstraint != "" {
		return known
	}
	pk := func() {
		if stmt.Schema != nil {
			for _, n := range stmt.Schema.PrimaryFieldDBNames {
				known[strings.ToLower(n)] = true
			}
		}
	}
	if db.Dialector.Name() == "mysql" {
		if stmt.Schema != nil && !declaresOtherUnique(stmt) {
			pk()
		}
		return known
	}
	if len(oc.Columns) == 0 {
		pk()
		return known
	}
	for _, c := range oc.Columns {
		known[assignedColumn(stmt, c)] = true
	}
	return known
}

// declaresOtherUnique reports whether the model declares a unique field
// or index besides its primary key.
func declaresOtherUnique(stmt *gorm.Statement) bool {
	for _, f := range stmt.Schema.Fields {
		if f.Unique && !f.PrimaryKey {
			return true
		}
	}
	for _, idx := range stmt.Schema.ParseIndexes() {
		if idx.Class == "UNIQUE" || idx.Option == "UNIQUE" {
			return true
		}
	}
	return false
}

// refuseKeysElsewhere: a create whose caller-set primary key is already
// in another table of the logic table would put the key in two tables
// (its sharding values differ from the stored row's). A plain INSERT is
// refused as the database refuses a duplicate key (gorm.ErrDuplicatedKey);
// an upsert or INSERT ... DO NOTHING, which would update or keep the
// stored row, with shardconf.ErrShardingKeyChange. Generated keys are
// new, and a key that alone routes the row has one possible table, so
// neither is looked for.
func (p *Plugin) refuseKeysElsewhere(db *gorm.DB, table string, r routed, cols []string, explicit [][]any) {
	stmt := db.Statement
	_, upsert := stmt.Clauses["ON CONFLICT"]
	for _, g := range r.groups {
		var keys [][]any
		for _, i := range g.rows {
			if i < len(explicit) && explicit[i] != nil {
				keys = append(keys, explicit[i])
			}
		}
		if len(keys) == 0 {
			continue
		}
		where, err := p.keyElsewhere(db, table, g.target, cols, keys)
		if err != nil {
			p.fail(db, err)
			return
		}
		if where == nil {
			continue
		}
		if !upsert {
			p.fail(db, fmt.Errorf("%w: gormplugin: a row of %s with this primary key is in %s; this row routes to %s", gorm.ErrDuplicatedKey, table, *where, g.target))
			return
		}
		p.fail(db, keyChange(table, keyAssign{column: p.rules.ShardingColumns(table)[0], value: fmt.Sprint(keys[0]...)},
			fmt.Sprintf("an upsert of a row whose primary key is in %s, while its sharding values route to %s", *where, g.target)))
		return
	}
}

// refuseAssociationWrite: association mode (Association(...).Append,
// Replace) saves the new rows of a has-one/has-many association and then,
// for Replace, detaches the old ones (their foreign key set to NULL) in a
// second statement, which on a sharded table is refused (a key change,
// or no sharding key). Outside a transaction the first statement would
// have been committed by then, so association writes to a sharded table
// must run in one (db.Transaction), where the refusal rolls both back.
func (p *Plugin) refuseAssociationWrite(db *gorm.DB) error {
	stmt := db.Statement
	if stmt.Schema == nil || !changesAreModel(stmt) || len(stmt.Selects) == 0 {
		return nil
	}
	if _, inTx := stmt.ConnPool.(gorm.TxCommitter); inTx {
		return nil
	}
	for _, name := range stmt.Selects {
		rel, ok := stmt.Schema.Relationships.Relations[name]
		if !ok || rel.FieldSchema == nil {
			continue
		}
		if rel.Type != schema.HasOne && rel.Type != schema.HasMany {
			continue
		}
		if p.rules.IsSharded(rel.FieldSchema.Table) || p.rules.IsBroadcast(rel.FieldSchema.Table) {
			return fmt.Errorf("%w: association %s of %s writes sharded table %s in several statements; run Append/Replace inside db.Transaction (a refusal then rolls back every statement)", ErrUnsupported, name, stmt.Schema.Table, rel.FieldSchema.Table)
		}
	}
	return nil
}

// ownTxKey marks a statement run in a transaction the plugin began (see
// beginOwnTx); its value is the pool to return to afterwards.
const ownTxKey = "shardkey:own_tx"

// beginOwnTx: with SkipDefaultTransaction GORM runs a create or update
// and its association saves without a transaction, so a refusal of a
// later statement (an association saved first, then the row refused)
// would leave the earlier ones written. A routed write that saves
// associations, outside a transaction, runs in one the plugin begins on
// the routed data source and ends after GORM's last callback
// (endOwnTx): committed, or rolled back on any error.
func (p *Plugin) beginOwnTx(db *gorm.DB, create bool) {
	if db.Error != nil || !db.Config.SkipDefaultTransaction || db.DryRun || !p.savesShardedAssociations(db.Statement, create) {
		return
	}
	if _, inTx := db.Statement.ConnPool.(gorm.TxCommitter); inTx {
		return
	}
	r, _ := routedOf(db)
	was := db.Statement.ConnPool
	tx := db.Session(&gorm.Session{NewDB: true}).Begin()
	if tx.Error != nil {
		p.fail(db, tx.Error)
		return
	}
	db.Statement.ConnPool = tx.Statement.ConnPool
	db.InstanceSet(ownTxKey, was)
	if len(r.targets) > 0 && !r.multiSource {
		p.txSources.Store(db.Statement.ConnPool, r.targets[0].DataSource)
	}
}

// endOwnTx commits or rolls back the transaction beginOwnTx began.
func (p *Plugin) endOwnTx(db *gorm.DB) {
	v, ok := db.InstanceGet(ownTxKey)
	if !ok {
		return
	}
	tx, ok := db.Statement.ConnPool.(gorm.TxCommitter)
	if !ok {
		return
	}
	p.txSources.Delete(db.Statement.ConnPool)
	var err error
	if db.Error != nil {
		err = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	if err != nil && db.Error == nil {
		_ = db.AddError(err)
	}
	if was, ok := v.(gorm.ConnPool); ok {
		db.Statement.ConnPool = was
	}
}

// savesShardedAssociations reports whether GORM will save associations
// of the rows a create or update writes (a relationship field that is set
// and not left out by Select/Omit), the row's table or the association's
// being sharded or broadcast.
func (p *Plugin) savesShardedAssociations(stmt *gorm.Statement, create bool) bool {
	if stmt.Schema == nil || len(stmt.Schema.Relationships.Relations) == 0 {
		return false
	}
	sharded := func(t string) bool { return p.rules.IsSharded(t) || p.rules.IsBroadcast(t) || p.logicOf(t) != t }
	selected, restricted := stmt.SelectAndOmitColumns(create, !create)
	rows := createRows(stmt)
	if !create {
		rows = nil
		if mv := reflect.Indirect(reflect.ValueOf(stmt.Model)); mv.Kind() == reflect.Struct {
			rows = []reflect.Value{mv}
		}
	}
	for _, rel := range stmt.Schema.Relationships.Relations {
		if v, ok := selected[rel.Name]; (ok && !v) || (!ok && restricted) {
			continue
		}
		if rel.FieldSchema == nil || !sharded(stmt.Table) && !sharded(rel.FieldSchema.Table) {
			continue
		}
		for _, row := range rows {
			if row.Kind() == reflect.Struct {
				if _, zero := rel.Field.ValueOf(stmt.Context, row); !zero {
					return true
				}
			}
		}
	}
	return false
}
