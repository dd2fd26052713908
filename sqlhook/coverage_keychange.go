package sqlhook

import (
	"context"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"

	"github.com/shardkey/shardkey/shardconf"
)

// A write that assigns a sharding column is allowed only when the row
// provably stays in the table it is in: an UPDATE whose WHERE reaches one
// target and whose new values (with the WHERE's conditions on the columns
// it does not assign) route to that same target, or an upsert whose update
// part sets the columns to the inserted row's values (which routed the
// INSERT to this table). Anything else is refused with an error matching
// both shardconf.ErrShardingKeyChange (what happened) and ErrUnsupported
// (sqlhook's class of refusal, which callers already test for).

// keySet is an UPDATE's assignment of a new value to a sharding column of
// the routed table (an assignment of the column to itself is not one).
type keySet struct {
	table  int    // index into plan.tables
	column string // lower case
	val    valRef
}

// keyChangeError is the refusal of a sharding key change.
func keyChangeError(table, column, value, why string) error {
	return fmt.Errorf("%w: %w (%s; to move a row, delete it and insert it again)", ErrUnsupported,
		&shardconf.RouteError{Table: table, Column: column, Value: value, Err: shardconf.ErrShardingKeyChange}, why)
}

// checkKeyChange refuses an UPDATE routed to targets whose assignments to
// sharding columns would leave a row where its new values do not route
// (with the hints of ctx, which route the table's hint strategies).
func (h *hook) checkKeyChange(ctx context.Context, p *plan, targets []shardconf.Target, args []driver.NamedValue) error {
	if len(p.keySets) == 0 || len(targets) == 0 {
		return nil // no assignment, or a WHERE no row can match
	}
	main := p.tables[p.routed].logic
	first := p.keySets[0]
	for _, k := range p.keySets {
		if k.table != p.routed {
			return keyChangeError(p.tables[k.table].logic, k.column, "", "it is not the table the statement is routed by")
		}
	}
	if len(targets) != 1 {
		return keyChangeError(main, first.column, valueText(value(first.val, args)),
			fmt.Sprintf("the WHERE clause reaches %d tables, so the new value cannot route to each row's own", len(targets)))
	}
	set := map[string]bool{}
	var conds []shardconf.Cond
	for _, k := range p.keySets {
		set[k.column] = true
		conds = append(conds, shardconf.Eq(k.column, h.routeValue(value(k.val, args))))
	}
	branches := p.branches
	if p.unbounded || len(branches) == 0 {
		branches = [][]pred{nil}
	}
	for _, b := range branches {
		kept := slices.DeleteFunc(slices.Clone(b), func(pr pred) bool { return set[pr.column] })
		all, err := h.conds(p, kept, args, slices.Clone(conds))
		if err != nil {
			return err
		}
		// With the statement's hints: a hint strategy keeps routing by them.
		ts, err := h.routeTable(ctx, main, all)
		if err != nil {
			return keyChangeError(main, first.column, valueText(value(first.val, args)), "the new values do not route to one table: "+err.Error())
		}
		for _, t := range ts {
			if t != targets[0] {
				return keyChangeError(main, first.column, valueText(value(first.val, args)),
					fmt.Sprintf("the new values route to %s.%s, the rows are in %s.%s", t.DataSource, t.Table, targets[0].DataSource, targets[0].Table))
			}
		}
	}
	return nil
}

func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case driver.Valuer:
		if y, err := x.Value(); err == nil {
			return valueText(y)
		}
	}
	return fmt.Sprint(v)
}

// upsertKeyChange decides an upsert's update part (PostgreSQL's and
// SQLite's ON CONFLICT DO UPDATE, MySQL's ON DUPLICATE KEY UPDATE) that
// assigns sharding columns of table. fromInserted are the sharding columns
// set to the inserted row's value (excluded.c, VALUES(c)); conflictCols
// are the columns a conflicting row shares with the inserted row (the
// conflict target's columns; nil when any unique key may conflict). The
// row the update changes is in the table the inserted row routed to, and
// keeps routing there when each sharding column ends up equal to the
// inserted row's: set from it, or equal to it through the conflict.
func (h *hook) upsertKeyChange(table string, fromInserted, conflictCols []string) error {
	if len(fromInserted) == 0 {
		return nil
	}
	for _, c := range h.router.ShardingColumns(table) {
		if containsFold(fromInserted, c) || containsFold(conflictCols, c) {
			continue
		}
		return keyChangeError(table, fromInserted[0], "",
			fmt.Sprintf("the upsert sets it from the inserted row, but sharding column %s is neither set so nor a conflict column, so the updated row may route elsewhere", c))
	}
	return nil
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}
