package sqlhook

import (
	"context"
	"database/sql/driver"
	"fmt"
	"slices"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// A write that assigns a sharding column is allowed only when the row
// provably stays in the table it is in: an UPDATE whose WHERE reaches one
// target and whose new values (with the WHERE's conditions on the columns
// it does not assign) route to that same target, or an upsert whose update
// part sets the columns to the inserted row's values (which routed the
// INSERT to this table). Anything else is refused with an error matching
// both shardconf.ErrShardingKeyChange (what happened) and ErrUnsupported
// (sqlhook's class of refusal, which callers already test for).

// checkKeyChange refuses an UPDATE routed to targets whose assignments to
// sharding columns would leave a row where its new values do not route
// (with the hints of ctx, which route the table's hint strategies).
func (h *hook) checkKeyChange(ctx context.Context, p *ir.Plan, targets []shardconf.Target, args []driver.NamedValue) error {
	if len(p.KeySets) == 0 || len(targets) == 0 {
		return nil // no assignment, or a WHERE no row can match
	}
	main := p.Tables[p.Routed].Logic
	first := p.KeySets[0]
	for _, k := range p.KeySets {
		if k.Table != p.Routed {
			return ir.KeyChangeError(p.Tables[k.Table].Logic, k.Column, "", "it is not the table the statement is routed by")
		}
	}
	if len(targets) != 1 {
		return ir.KeyChangeError(main, first.Column, valueText(value(first.Val, args)),
			fmt.Sprintf("the WHERE clause reaches %d tables, so the new value cannot route to each row's own", len(targets)))
	}
	set := map[string]bool{}
	var conds []shardconf.Cond
	for _, k := range p.KeySets {
		set[k.Column] = true
		conds = append(conds, shardconf.Eq(k.Column, h.routeValue(value(k.Val, args))))
	}
	branches := p.Branches
	if p.Unbounded || len(branches) == 0 {
		branches = [][]ir.Pred{nil}
	}
	for _, b := range branches {
		kept := slices.DeleteFunc(slices.Clone(b), func(pr ir.Pred) bool { return set[pr.Column] })
		all, err := h.conds(p, kept, args, slices.Clone(conds))
		if err != nil {
			return err
		}
		// With the statement's hints: a hint strategy keeps routing by them.
		ts, err := h.routeTable(ctx, main, all)
		if err != nil {
			return ir.KeyChangeError(main, first.Column, valueText(value(first.Val, args)), "the new values do not route to one table: "+err.Error())
		}
		for _, t := range ts {
			if t != targets[0] {
				return ir.KeyChangeError(main, first.Column, valueText(value(first.Val, args)),
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
