package shardconf

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Hint is the sharding values a caller supplies for one logic table, as
// ShardingSphere's HintManager does (addDatabaseShardingValue,
// addTableShardingValue): Database values route the table's hint database
// strategy, Table values its hint table strategy. Each value is normalised
// as a Cond value is (int64 for any integer type, string, time.Time, ...)
// and routed through the strategy's algorithm (HINT_INLINE, or a Go
// algorithm registered for hints); several values route to the union of
// their targets. A nil or empty list supplies nothing for that strategy.
type Hint struct {
	Database []any
	Table    []any
}

// AllTables, as the table of WithHint, supplies Database values to every
// table whose own hint (if any) has none: ShardingSphere's
// HintManager.setDatabaseShardingValue, kept explicit. A statement on a
// table whose database strategy is not a hint strategy (an unsharded or
// broadcast table included) then fails with ErrUnusedHint, as does any
// statement when the AllTables hint has Table values.
const AllTables = "*"

type hintCtxKey struct{}

// hintNode is one WithHint; the newest is first, so a later hint for a
// table replaces an earlier one, as a derived context overrides its parent.
type hintNode struct {
	table string // as given to WithHint
	h     Hint
	next  *hintNode
}

// WithHint returns a context carrying h for the logic table (matched
// case-insensitively, like table names in Route), for RouteContext and
// ScatterContext and for the statements sqlhook and gormplugin run with
// that context. A second WithHint for the same table replaces the first in
// the derived context; hints for other tables are kept. The value slices
// are copied, so the caller may reuse them.
//
// A hint routes only a hint strategy (hint: in the rule file). A hint for
// a table whose corresponding strategy is not a hint strategy, or for an
// unsharded or broadcast table, makes the statement on that table fail
// with ErrUnusedHint: shardkey never ignores a route the caller asked for.
// Hints for tables a statement does not touch are not consulted.
func WithHint(ctx context.Context, table string, h Hint) context.Context {
	prev, _ := ctx.Value(hintCtxKey{}).(*hintNode)
	h = Hint{Database: slices.Clone(h.Database), Table: slices.Clone(h.Table)}
	return context.WithValue(ctx, hintCtxKey{}, &hintNode{table: table, h: h, next: prev})
}

// HintFrom returns a copy of the hint ctx carries for table itself (not
// one given for AllTables; for that, ask for AllTables).
func HintFrom(ctx context.Context, table string) (Hint, bool) {
	n := hintsOf(ctx)
	if n == nil {
		return Hint{}, false
	}
	h, ok := n.find(table)
	return Hint{Database: slices.Clone(h.Database), Table: slices.Clone(h.Table)}, ok
}

// HintReaches reports whether ctx carries hint values that would route
// table: its own hint's, or AllTables'. An integration asks it before it
// runs a statement on table without routing it by a strategy (DDL, a
// physical table named directly), which must then be refused: a hint is
// never silently ignored.
func HintReaches(ctx context.Context, table string) bool {
	own, all, _ := hintsOf(ctx).findWithAll(table)
	return len(own.Database)+len(own.Table)+len(all.Database)+len(all.Table) > 0
}

// HintTables lists the tables ctx carries hints for, as given to WithHint
// (AllTables included), newest first, each once (case-insensitively). An
// integration that does not route a statement (one naming no sharded
// table) uses it to refuse a hint it would otherwise ignore.
func HintTables(ctx context.Context) []string {
	var out []string
	for n := hintsOf(ctx); n != nil; n = n.next {
		if !slices.ContainsFunc(out, func(t string) bool { return strings.EqualFold(t, n.table) }) {
			out = append(out, n.table)
		}
	}
	return out
}

// HasHints reports whether ctx carries any hint: an integration can skip
// hint handling for the common context without one.
func HasHints(ctx context.Context) bool { return hintsOf(ctx) != nil }

func hintsOf(ctx context.Context) *hintNode {
	if ctx == nil {
		return nil
	}
	n, _ := ctx.Value(hintCtxKey{}).(*hintNode)
	return n
}

// find returns the newest hint for table (case-insensitive).
func (n *hintNode) find(table string) (Hint, bool) {
	for ; n != nil; n = n.next {
		if n.table == table || strings.EqualFold(n.table, table) {
			return n.h, true
		}
	}
	return Hint{}, false
}

// findWithAll is find(table) and find(AllTables) in one walk.
func (n *hintNode) findWithAll(table string) (own, all Hint, hasAll bool) {
	hasOwn := false
	for ; n != nil && !(hasOwn && hasAll); n = n.next {
		switch {
		case !hasAll && n.table == AllTables:
			all, hasAll = n.h, true
		case !hasOwn && (n.table == table || strings.EqualFold(n.table, table)):
			own, hasOwn = n.h, true
		}
	}
	return own, all, hasAll
}

// UsesHint reports whether table's database or table strategy is a hint
// strategy, so that routing it needs a context carrying a Hint.
func (r *Router) UsesHint(table string) bool {
	tr := r.lookup(table)
	return tr != nil && (tr.db != nil && tr.db.hint || tr.table != nil && tr.table.hint)
}

// RouteContext is Route with the hints ctx carries (WithHint). A hint
// strategy routes by the hint's values for the table and never by the
// statement's conditions; without a hint for it the statement is
// ErrMissingShardingKey, as Route (which has no hints) reports for every
// hint strategy. A hint the table's strategies do not consume is
// ErrUnusedHint. Without hints in ctx it is Route, and allocates nothing
// more.
func (r *Router) RouteContext(ctx context.Context, table string, conds ...Cond) ([]Target, error) {
	n := hintsOf(ctx)
	if n == nil {
		return r.route(table, conds, false)
	}
	return r.routeHinted(n, table, conds, false)
}

// ScatterContext is Scatter with the hints ctx carries: a hint strategy
// without a hint goes to all its targets, as an unconstrained strategy
// does under Scatter. A hint the table's strategies do not consume is
// still ErrUnusedHint.
func (r *Router) ScatterContext(ctx context.Context, table string, conds ...Cond) ([]Target, error) {
	n := hintsOf(ctx)
	if n == nil {
		return r.route(table, conds, true)
	}
	return r.routeHinted(n, table, conds, true)
}

// routeHinted routes table with the hints in n. The table's own Database
// values take precedence over AllTables'; its Table values are its own.
func (r *Router) routeHinted(n *hintNode, table string, conds []Cond, scatter bool) ([]Target, error) {
	h, all, hasAll := n.findWithAll(table)
	wildcard := ""
	if hasAll {
		if len(all.Table) > 0 {
			return nil, &RouteError{Table: table, Hint: "table (*)", Err: ErrUnusedHint}
		}
		if len(h.Database) == 0 && len(all.Database) > 0 {
			h.Database, wildcard = all.Database, " (*)"
		}
	}
	if len(h.Database) == 0 && len(h.Table) == 0 {
		return r.route(table, conds, scatter)
	}
	tr := r.lookup(table)
	switch {
	case len(h.Database) > 0 && (tr == nil || tr.db == nil || !tr.db.hint):
		return nil, &RouteError{Table: table, Hint: "database" + wildcard, Err: ErrUnusedHint}
	case len(h.Table) > 0 && (tr == nil || tr.table == nil || !tr.table.hint):
		return nil, &RouteError{Table: table, Hint: "table", Err: ErrUnusedHint}
	}
	return tr.routeGeneral(conds, scatter, &h)
}

// chooseHint routes a hint strategy by the hint's values: the union of the
// targets each value maps to.
func (tr *tableRoute) chooseHint(s *compiledStrategy, vals []any, scatter bool, sc *scratch) (idxSet, error) {
	if len(vals) == 0 {
		if scatter {
			return idxSet{all: true}, nil
		}
		return idxSet{}, &RouteError{Table: tr.name, Hint: s.hintKind(tr), Err: ErrMissingShardingKey}
	}
	out := sc.take()
	for _, x := range vals {
		v, err := toValue(x)
		if err != nil {
			return idxSet{}, fmt.Errorf("shardconf: table %s, %s hint: %w", tr.name, s.hintKind(tr), err)
		}
		i, err := s.std.one(v)
		if err != nil {
			return idxSet{}, fmt.Errorf("shardconf: table %s, %s hint, value %s: %w", tr.name, s.hintKind(tr), v, err)
		}
		if i < 0 {
			e := &RouteError{Table: tr.name, Hint: s.hintKind(tr), Value: v.String(), Err: ErrNoRoute}
			if n, ok := s.std.(interface{ target(value) (string, error) }); ok {
				e.Target, _ = n.target(v)
			}
			return idxSet{}, e
		}
		out = append(out, i)
	}
	out = sortUnique(out)
	if len(out) == 1 {
		return idxSet{one: out[0]}, nil
	}
	return idxSet{list: out}, nil
}

// hintKind names the strategy s of tr for errors.
func (s *compiledStrategy) hintKind(tr *tableRoute) string {
	if s == tr.db {
		return "database"
	}
	return "table"
}
