package gormplugin

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// Checks of creates: the values the INSERT carries, named physical
// tables, and the update part of upserts.

// callerClauses is a copy of a write's clauses as the caller gave them,
// for each target to start from (runOn). GORM's callbacks extend the
// clauses as they build: a DELETE adds its rows' keys to WHERE, qualified
// with the table it runs on; UpdateAll in an ON CONFLICT becomes a list of
// assignments; soft delete adds a SET, "deleted_at IS NULL" to WHERE and a
// "soft_delete_enabled" marker that stops a second run from adding that
// condition again. Left over from the previous target, the marker made the
// next table's DELETE fail with gorm.ErrMissingWhereConditions or, when
// the WHERE held loaded rows' keys, soft-delete again rows deleted before
// (counted, their deleted_at overwritten). Every clause starts afresh.
func callerClauses(stmt *gorm.Statement) map[string]clause.Clause {
	return maps.Clone(stmt.Clauses)
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
		if err := p.checkTime(table, a.column, a.value); err != nil {
			return err
		}
	}
	known := p.conflictColumns(db, oc)
	rows, err := rowValues(db, p.rules.ShardingColumns(table))
	if err != nil {
		return err
	}
	for _, g := range r.groups {
		for _, i := range g.rows {
			if err := p.checkUpsertRow(stmtContext(db), table, g.target, rows[i], assigns, known); err != nil {
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
func (p *Plugin) checkUpsertRow(ctx context.Context, table string, at shardconf.Target, row map[string]any, assigns []keyAssign, known map[string]bool) error {
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
	ts, err := p.rules.RouteContext(ctx, table, post...)
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
