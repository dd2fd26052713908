package gormplugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/shardconf"
)

// Hints (shardconf.WithHint) travel in the statement's context, the one
// db.WithContext(ctx) sets (db.Statement.Context), and so reach the
// statements GORM derives from it: association saves, Preload's queries,
// FirstOrCreate's and Save's second statement. Every table a statement
// routes is routed with that context; a hint that cannot be honoured
// refuses the statement before anything runs.

// stmtContext is the context the statement runs with.
func stmtContext(db *gorm.DB) context.Context {
	if ctx := db.Statement.Context; ctx != nil {
		return ctx
	}
	return context.Background()
}

// checkUnroutedHint refuses a hint for a broadcast table: no strategy
// consumes it (shardconf.ErrUnusedHint, as the router reports it).
func (p *Plugin) checkUnroutedHint(db *gorm.DB, table string) error {
	ctx := stmtContext(db)
	if !shardconf.HintReaches(ctx, table) {
		return nil
	}
	_, err := p.rules.RouteContext(ctx, table)
	return err
}

// refuseUnroutedHint refuses a statement on a table the rules neither
// shard nor broadcast when the context carries a hint for it, or for
// every table: the statement runs on the default pool whatever the hint
// says, and shardkey does not ignore a route the caller asked for.
func (p *Plugin) refuseUnroutedHint(db *gorm.DB) {
	ctx := stmtContext(db)
	if db.Error != nil || !shardconf.HasHints(ctx) {
		return
	}
	t := db.Statement.Table
	if t == "" && db.Statement.Schema != nil {
		t = db.Statement.Schema.Table
	}
	if t == "" || !shardconf.HintReaches(ctx, t) {
		return
	}
	kind := "database"
	h, own := shardconf.HintFrom(ctx, t)
	if !own || len(h.Database)+len(h.Table) == 0 {
		h, _ = shardconf.HintFrom(ctx, shardconf.AllTables)
		kind = "database (*)"
		if len(h.Table) > 0 {
			kind = "table (*)"
		}
	} else if len(h.Database) == 0 {
		kind = "table"
	}
	p.fail(db, fmt.Errorf("%w: %s is not a sharded table: %w", ErrUnsupported, t,
		&shardconf.RouteError{Table: t, Hint: kind, Err: shardconf.ErrUnusedHint}))
}

// checkPartnerHints: a JOINed binding partner follows the statement's
// target by position (BoundTarget). A hint the context carries for the
// partner must agree with that pairing; one that does not, or that the
// partner's strategies cannot use, refuses the statement.
func (p *Plugin) checkPartnerHints(db *gorm.DB, table string, targets []shardconf.Target, joins []joinPlan) error {
	ctx := stmtContext(db)
	if !shardconf.HasHints(ctx) {
		return nil
	}
	for _, j := range joins {
		if !shardconf.HintReaches(ctx, j.partner) {
			continue
		}
		// Scatter: only the partner's hint strategies narrow the set.
		allowed, err := p.rules.ScatterContext(ctx, j.partner)
		if err != nil {
			return fmt.Errorf("gormplugin: %s: %w", j.partner, err)
		}
		for _, t := range targets {
			bt, err := p.rules.BoundTarget(table, t, j.partner)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrUnsupported, err)
			}
			if !slices.Contains(allowed, bt) {
				return fmt.Errorf("%w: the hint for binding table %s routes it to %v, but the statement pairs it with %s (%s routes to %s)",
					ErrUnsupported, j.partner, allowed, bt, table, t)
			}
		}
	}
	return nil
}

// hintKeyChange refuses an upsert of a row of a table placed by hints
// only whose primary key is in another table than the hint places it in:
// the update would change the stored row there, or the insert write its
// key a second time.
func hintKeyChange(table string, key []any, where, at shardconf.Target) error {
	re := &shardconf.RouteError{Table: table, Err: shardconf.ErrShardingKeyChange}
	return fmt.Errorf("%w: %w (an upsert of the row with primary key %v, which is in %s, while the statement's hint places it in %s; give the row's own hint, or delete it and create it again)",
		ErrUnsupported, re, fmt.Sprint(key...), where, at)
}

// refuseRawHint refuses raw SQL (which names no sharded table: routeRaw
// refuses the others) when the context carries a hint it would ignore:
// one for every table (shardconf.AllTables), one for a table the SQL
// names as a word, or one for the logic table of a physical table it
// names. The SQL runs on the default pool, unrouted.
func (p *Plugin) refuseRawHint(db *gorm.DB, sql string) {
	ctx := stmtContext(db)
	if !shardconf.HasHints(ctx) {
		return
	}
	if h, ok := shardconf.HintFrom(ctx, shardconf.AllTables); ok && len(h.Database)+len(h.Table) > 0 {
		kind := "database (*)"
		if len(h.Table) > 0 {
			kind = "table (*)"
		}
		p.fail(db, fmt.Errorf("%w: raw SQL runs on the default pool: %w", ErrUnsupported,
			&shardconf.RouteError{Table: shardconf.AllTables, Hint: kind, Err: shardconf.ErrUnusedHint}))
		return
	}
	for _, w := range wordRE.FindAllString(sql, -1) {
		if h, ok := shardconf.HintFrom(ctx, w); ok && len(h.Database)+len(h.Table) > 0 {
			p.fail(db, fmt.Errorf("%w: raw SQL naming %s runs on the default pool, unrouted: %w", ErrUnsupported, w,
				&shardconf.RouteError{Table: w, Hint: "database", Err: shardconf.ErrUnusedHint}))
			return
		}
		if logic := p.keyed.logic[strings.ToLower(w)]; logic != "" && shardconf.HintReaches(ctx, logic) {
			p.fail(db, fmt.Errorf("%w: raw SQL naming physical table %s of %s is not routed, and the hint for %s cannot place it", ErrUnsupported, w, logic, logic))
			return
		}
	}
}
