package gormplugin

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// Reads over several targets: each target is queried and the results
// merged into the destination.

// mergeable refuses queries whose results cannot be merged by
// concatenating rows or adding counts: DISTINCT, GROUP BY, HAVING,
// aggregate or computed select expressions, and destinations of another
// type than the model (GORM builds their select list for the first table
// only).
func mergeable(stmt *gorm.Statement) error {
	if stmt.Distinct {
		return fmt.Errorf("%w: DISTINCT over several tables", ErrUnsupported)
	}
	if _, ok := stmt.Clauses["GROUP BY"]; ok {
		return fmt.Errorf("%w: GROUP BY/HAVING over several tables", ErrUnsupported)
	}
	for _, sel := range stmt.Selects {
		if strings.ContainsAny(sel, "(*") || strings.Contains(strings.ToLower(sel), "distinct") {
			return fmt.Errorf("%w: select expression %q over several tables", ErrUnsupported, sel)
		}
	}
	if sel, ok := stmt.Clauses["SELECT"].Expression.(clause.Select); ok {
		if sel.Distinct {
			return fmt.Errorf("%w: DISTINCT over several tables", ErrUnsupported)
		}
		if e, ok := sel.Expression.(clause.Expr); ok {
			low := strings.ToLower(strings.ReplaceAll(e.SQL, " ", ""))
			if _, count := stmt.Dest.(*int64); !count || low != "count(*)" {
				return fmt.Errorf("%w: select expression %q over several tables", ErrUnsupported, e.SQL)
			}
		}
	}
	if _, count := stmt.Dest.(*int64); count {
		if _, ok := stmt.Clauses["SELECT"]; !ok && len(stmt.Selects) > 0 {
			return fmt.Errorf("%w: a scalar result over several tables", ErrUnsupported)
		}
		return nil
	}
	base := reflect.Indirect(stmt.ReflectValue)
	elem := base.Type()
	if base.Kind() == reflect.Slice || base.Kind() == reflect.Array {
		elem = elem.Elem()
	}
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if elem.Kind() == reflect.Struct && stmt.Schema != nil && elem != stmt.Schema.ModelType {
		return fmt.Errorf("%w: a %s result over several tables of %s (use the model type)", ErrUnsupported, elem, stmt.Schema.Name)
	}
	if elem.Kind() == reflect.Map {
		return fmt.Errorf("%w: map results over several tables", ErrUnsupported)
	}
	return nil
}

// modelRows reports whether the destination holds the model's rows.
func modelRows(stmt *gorm.Statement) bool {
	if stmt.Schema == nil {
		return false
	}
	t := reflect.Indirect(stmt.ReflectValue).Type()
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t == stmt.Schema.ModelType
}

// mergeQuery runs a SELECT on every target and merges the results into
// the destination: rows are concatenated, counts add up, and ORDER BY
// with LIMIT/OFFSET is applied to the merged rows, so First, Last, Take
// and paging give the answer a single table would.
func (p *Plugin) mergeQuery(db *gorm.DB) {
	r, ok := routedOf(db)
	if !ok || len(r.targets) <= 1 {
		p.query(db)
		return
	}
	if err := p.queryAll(db, r.targets); err != nil {
		p.fail(db, err)
	}
}

func (p *Plugin) queryAll(db *gorm.DB, targets []shardconf.Target) error {
	stmt := db.Statement
	if err := mergeable(stmt); err != nil {
		return err
	}
	limit, _ := stmt.Clauses["LIMIT"].Expression.(clause.Limit)
	if limit.Limit != nil && *limit.Limit < 0 { // Limit(-1) cancels a limit
		limit.Limit = nil
	}
	order, _ := stmt.Clauses["ORDER BY"].Expression.(clause.OrderBy)
	keys, err := orderKeys(stmt, order)
	if err != nil {
		return err // rows from several tables would come back in the wrong order
	}
	if len(keys) > 0 && !modelRows(stmt) {
		return fmt.Errorf("%w: ORDER BY over several tables into %T (only the model's own rows can be merged in order)", ErrUnsupported, stmt.Dest)
	}
	table, dest, rv := stmt.Table, stmt.Dest, stmt.ReflectValue
	limitClause, hadLimit := stmt.Clauses["LIMIT"]
	defer func() {
		stmt.Table, stmt.Dest, stmt.ReflectValue = table, dest, rv
		if hadLimit {
			stmt.Clauses["LIMIT"] = limitClause
		}
	}()
	// Each table returns up to offset+limit rows from its start; the
	// offset applies once, after merging.
	if hadLimit {
		c := limitClause // keep the clause's other settings; change the expression only
		if limit.Limit != nil {
			n := *limit.Limit + limit.Offset
			c.Expression = clause.Limit{Limit: &n}
		} else {
			c.Expression = clause.Limit{}
		}
		stmt.Clauses["LIMIT"] = c
	}
	switch d := dest.(type) {
	case *int64: // Count
		var sum int64
		for _, t := range targets {
			var n int64
			if err := p.runOn(db, t, &n, reflect.ValueOf(&n).Elem(), p.query, nil); err != nil {
				return err
			}
			sum += n
		}
		*d = sum
		db.RowsAffected = 1
		return nil
	}
	base := reflect.Indirect(rv)
	single := base.Kind() == reflect.Struct
	elem := base.Type()
	if !single {
		if base.Kind() != reflect.Slice {
			return fmt.Errorf("%w: merging a query into %s", ErrUnsupported, base.Type())
		}
		elem = base.Type().Elem()
	}
	merged := reflect.MakeSlice(reflect.SliceOf(elem), 0, 8)
	for _, t := range targets {
		ptr := reflect.New(reflect.SliceOf(elem))
		if err := p.runOn(db, t, ptr.Interface(), ptr.Elem(), p.query, nil); err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				db.Error = nil
				continue
			}
			return err
		}
		merged = reflect.AppendSlice(merged, ptr.Elem())
	}
	if len(order.Columns) > 0 {
		sortRows(merged, keys)
	}
	if limit.Offset > 0 {
		if limit.Offset >= merged.Len() {
			merged = merged.Slice(0, 0)
		} else {
			merged = merged.Slice(limit.Offset, merged.Len())
		}
	}
	if limit.Limit != nil && *limit.Limit < merged.Len() {
		merged = merged.Slice(0, *limit.Limit)
	}
	db.RowsAffected = int64(merged.Len())
	if single {
		if merged.Len() == 0 {
			if stmt.RaiseErrorOnNotFound { // First, Take, Last; not Limit(1).Find (FirstOrCreate)
				return gorm.ErrRecordNotFound
			}
			return nil
		}
		base.Set(merged.Index(0))
		return nil
	}
	base.Set(merged)
	return nil
}
