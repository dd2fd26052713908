package sqlhook

import (
	"context"
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// Hints (shardconf.WithHint) travel in the context of each statement
// execution: QueryContext, ExecContext, a prepared statement's
// ExecContext/QueryContext (not PrepareContext's: a statement is routed
// when it runs), a transaction's statements (not BeginTx's). Every table
// a statement routes is routed with that context, so a hint-strategy
// table is never placed by a path that ignores its hint; a hint that
// cannot be honoured refuses the statement before anything runs (the
// refusals made here are hintRefusals, reported as observe.ReasonHint;
// the router's match shardconf.ErrUnusedHint).

// routeTable routes the statement's driving table with the hints of ctx.
func (h *hook) routeTable(ctx context.Context, table string, conds []shardconf.Cond) ([]shardconf.Target, error) {
	if h.opts.scatter {
		return h.Router.ScatterContext(ctx, table, conds...)
	}
	return h.Router.RouteContext(ctx, table, conds...)
}

// checkUnroutedHints refuses a hint for a table the statement names but
// does not route by a strategy (a broadcast table): the router reports
// it as shardconf.ErrUnusedHint, as it does for any table whose
// strategies do not consume the hint. A hint for every table
// (shardconf.AllTables) is honoured by a broadcast table joined to a
// routed one, whose copy is read on the routed target's data source; a
// statement on broadcast tables alone ignores data sources, and is
// refused under it.
func (h *hook) checkUnroutedHints(ctx context.Context, p *ir.Plan) error {
	if !shardconf.HasHints(ctx) {
		return nil
	}
	for _, t := range p.Tables {
		if !t.Broadcast {
			continue
		}
		own, ok := shardconf.HintFrom(ctx, t.Logic)
		hasOwn := ok && len(own.Database)+len(own.Table) > 0
		if !hasOwn && (p.Routed >= 0 || !shardconf.HintReaches(ctx, t.Logic)) {
			continue
		}
		if _, err := h.Router.RouteContext(ctx, t.Logic); err != nil {
			return err
		}
	}
	return nil
}

// checkPartnerHints: a binding partner follows the driving table's
// target, by position. A hint the context carries for the partner must
// agree with that pairing; one that does not (or that its strategies
// cannot use) refuses the statement instead of being ignored.
func (h *hook) checkPartnerHints(ctx context.Context, p *ir.Plan, targets []shardconf.Target) error {
	if !shardconf.HasHints(ctx) {
		return nil
	}
	main := p.Tables[p.Routed].Logic
	for _, pt := range p.Tables {
		if pt.PartnerOf < 0 || !shardconf.HintReaches(ctx, pt.Logic) {
			continue
		}
		// Scatter: only the partner's hint strategies narrow the set; its
		// conditions are the driving table's business.
		allowed, err := h.Router.ScatterContext(ctx, pt.Logic)
		if err != nil {
			return err
		}
		for _, t := range targets {
			bt, err := h.partner(main, t, pt.Logic)
			if err != nil {
				return err
			}
			if !containsTarget(allowed, bt) {
				return hintRefusal{fmt.Errorf("%w: the hint for binding table %s routes it to %v, but the statement pairs it with %s.%s (its binding partner %s routes to %s.%s)",
					ErrUnsupported, pt.Logic, allowed, bt.DataSource, bt.Table, main, t.DataSource, t.Table)}
			}
		}
	}
	return nil
}

// refuseDDLHint refuses DDL on a table a hint reaches: DDL runs on every
// physical table, and a hint asks for some of them only.
func refuseDDLHint(ctx context.Context, table string) error {
	if shardconf.HintReaches(ctx, table) {
		return hintRefusal{fmt.Errorf("%w: DDL on %s runs on every physical table; the context's hint (shardconf.WithHint) cannot narrow it, run it without one",
			ErrUnsupported, table)}
	}
	return nil
}

// refusePassthroughHint refuses a statement that names no sharded or
// broadcast table (so it is not routed and runs on the default data
// source) while the context carries a hint it would ignore: one for
// every table (shardconf.AllTables), or one for a table the statement
// names, which is then unsharded or a physical table of a hinted logic
// table. Names are found as words of the text (a false positive only
// refuses).
func (h *hook) refusePassthroughHint(ctx context.Context, query string) error {
	if !shardconf.HasHints(ctx) {
		return nil
	}
	if hn, ok := shardconf.HintFrom(ctx, shardconf.AllTables); ok && len(hn.Database)+len(hn.Table) > 0 {
		kind := "database (*)"
		if len(hn.Table) > 0 {
			kind = "table (*)"
		}
		return fmt.Errorf("%w: the statement names no sharded table and runs on the default data source: %w",
			ErrUnsupported, &shardconf.RouteError{Table: shardconf.AllTables, Hint: kind, Err: shardconf.ErrUnusedHint})
	}
	low := strings.ToLower(query)
	if err := h.refuseUnshardedHint(ctx, low); err != nil {
		return err
	}
	return h.refusePhysicalHint(ctx, low, "")
}

// refusePhysicalHint refuses a statement (low is its lower-case text)
// naming a physical table of a logic table ctx has a hint for: a name
// written directly is not routed, so it is read or written where the
// statement runs, whatever the hint says. pinned is the physical table an
// INSERT names as its target, which is routed (by the hint) and checked
// (plan.pinned); "" when there is none.
func (h *hook) refusePhysicalHint(ctx context.Context, low, pinned string) error {
	for phys, logic := range h.Physical {
		if phys != pinned && shardconf.HintReaches(ctx, logic) && ir.ContainsWord(low, phys) {
			return hintRefusal{fmt.Errorf("%w: physical table %s of %s is named directly, so it is not routed and the hint for %s cannot place it; name the logic table",
				ErrUnsupported, phys, logic, logic)}
		}
	}
	return nil
}

// refuseUnshardedHint refuses a statement naming a table (low is its
// lower-case text) for which ctx carries a hint although the rules
// neither shard nor broadcast it: no strategy consumes the hint.
func (h *hook) refuseUnshardedHint(ctx context.Context, low string) error {
	for _, t := range shardconf.HintTables(ctx) {
		if t == shardconf.AllTables || h.Router.IsSharded(t) || h.Router.IsBroadcast(t) {
			continue
		}
		hn, _ := shardconf.HintFrom(ctx, t)
		if len(hn.Database)+len(hn.Table) == 0 || !ir.ContainsWord(low, strings.ToLower(t)) {
			continue
		}
		kind := "database"
		if len(hn.Database) == 0 {
			kind = "table"
		}
		return fmt.Errorf("%w: %s is not a sharded table: %w", ErrUnsupported, t,
			&shardconf.RouteError{Table: t, Hint: kind, Err: shardconf.ErrUnusedHint})
	}
	return nil
}
