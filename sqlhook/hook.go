package sqlhook

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// hook is the routing core shared by every connection of one connector.
type hook struct {
	*ir.Schema
	compiler ir.Compiler // the dialect's, registered by its package
	sources  []string
	opts     options
	cache    *planCache
	partners sync.Map // "a\x00b" -> map[shardconf.Target]shardconf.Target
}

// newHook compiles what routing needs. sources are the data source names
// (sorted), defaultDS one of them.
func newHook(r *shardconf.Router, sources []string, defaultDS string, d Dialect, o options) (*hook, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil router", ErrDataSource)
	}
	switch d {
	case PostgreSQL, MySQL, SQLite:
	default:
		return nil, fmt.Errorf("%w: unknown dialect %v (WithDialect takes PostgreSQL, MySQL or SQLite)", ErrDataSource, d)
	}
	compile := ir.Lookup(d)
	if compile == nil {
		return nil, &DialectNotRegisteredError{Dialect: d}
	}
	if d == MySQL && o.timeLoc == nil {
		o.timeLoc = time.UTC // go-sql-driver/mysql's default loc
	}
	if d != MySQL {
		o.timeLoc = nil
	}
	h := &hook{Schema: ir.NewSchema(r, defaultDS, d, o.binaryText), compiler: compile, sources: sources,
		opts: o, cache: newPlanCache(o.cacheSize)}
	return h, nil
}

// route turns a caller's statement into units. args are the caller's
// arguments after database/sql's conversion (Ordinal 1..n). Errors are
// *StatementError wrapping the cause, returned before anything runs.
func (h *hook) route(query string, args []driver.NamedValue) (*routed, error) {
	return h.routeContext(context.Background(), query, args)
}

// routeContext is route with the context key generators wait under.
func (h *hook) routeContext(ctx context.Context, query string, args []driver.NamedValue) (*routed, error) {
	p, err := h.plan(ctx, query)
	if err != nil {
		return nil, &StatementError{SQL: query, Err: err}
	}
	if p.Passthrough {
		if err := h.refusePassthroughHint(ctx, query); err != nil && !isSavepoint(query) {
			return nil, &StatementError{SQL: query, Err: err}
		}
		return &routed{units: []unit{{ds: h.DefaultDS, sql: query, args: args}}, passthrough: true,
			merge: mergeSpec{limit: -1}, txControl: isSavepoint(query)}, nil
	}
	r, err := h.bind(ctx, p, args)
	if err == nil && shardconf.HasHints(ctx) {
		// The names the plan does not route: unsharded tables, and
		// physical tables named beside a routed one.
		low := strings.ToLower(query)
		if err = h.refuseUnshardedHint(ctx, low); err == nil {
			err = h.refusePhysicalHint(ctx, low, p.Pinned)
		}
	}
	if err != nil {
		return nil, &StatementError{SQL: query, Err: err}
	}
	r.write = p.Kind == ir.KindInsert || p.Kind == ir.KindUpdate || p.Kind == ir.KindDelete
	if r.obs != nil {
		r.obs.plan = p
	}
	if h.opts.logger.Enabled(ctx, -4) {
		for _, u := range r.units {
			h.opts.logger.DebugContext(ctx, "sqlhook: routed", "dataSource", u.ds, "sql", u.sql)
		}
	}
	return r, nil
}

// plan returns the statement's plan from the cache or compiles it. The
// lookup is reported to the observer with ctx.
func (h *hook) plan(ctx context.Context, query string) (*ir.Plan, error) {
	p := h.cache.get(query)
	if h.opts.observer != nil && h.cache.size > 0 {
		h.reportPlanCache(ctx, p != nil)
	}
	if p != nil {
		return p, nil
	}
	p, err := h.compile(query)
	if err != nil {
		return nil, err
	}
	h.cache.put(query, p)
	return p, nil
}

func (h *hook) compile(query string) (*ir.Plan, error) {
	mentions := h.MentionsLogic(query)
	if !mentions && !h.mayEscapeNames(query) {
		return ir.PassthroughPlan, nil
	}
	if mentions && strings.IndexByte(query, 0) >= 0 {
		// The parsers read C strings and stop at the NUL; a database
		// might read on.
		return nil, fmt.Errorf("%w: a NUL byte in a statement naming a logic table", ErrParse)
	}
	var (
		p   *ir.Plan
		err error
	)
	p, err = h.compiler(h.Schema, query)
	if err != nil && !mentions && errors.Is(err, ErrParse) {
		// Parsed only in case of escapes: a text the grammar cannot read
		// goes to the server as before, which reports its own error.
		return ir.PassthroughPlan, nil
	}
	if err != nil && errors.Is(err, ErrParse) && !h.mayNameTable(query) {
		// A name occurs only inside longer words (users for a logic table
		// user): a text the grammar cannot read but the server may
		// (SQLite's AUTOINCREMENT, MariaDB's RETURNING) cannot reach a
		// logic table, so it goes through unchanged as the driver's would.
		return ir.PassthroughPlan, nil
	}
	if err != nil {
		return nil, err
	}
	if p.Passthrough {
		return ir.PassthroughPlan, nil
	}
	return p, nil
}

// isSavepoint reports whether query is SAVEPOINT, RELEASE [SAVEPOINT] or
// ROLLBACK TO [SAVEPOINT] (after leading spaces and comments).
func isSavepoint(query string) bool {
	q := strings.TrimLeft(leadingCommentsCut(query), " \t\r\n(")
	word := func(w string) bool {
		if len(q) < len(w) || !strings.EqualFold(q[:len(w)], w) {
			return false
		}
		return len(q) == len(w) || !ir.IsIdentChar(q[len(w)])
	}
	switch {
	case word("SAVEPOINT"), word("RELEASE"):
		return true
	case word("ROLLBACK"):
		rest := strings.TrimLeft(q[len("ROLLBACK"):], " \t\r\n")
		for _, w := range []string{"WORK", "TRANSACTION"} {
			if len(rest) >= len(w) && strings.EqualFold(rest[:len(w)], w) {
				rest = strings.TrimLeft(rest[len(w):], " \t\r\n")
			}
		}
		return len(rest) >= 2 && strings.EqualFold(rest[:2], "TO")
	}
	return false
}

// leadingCommentsCut is query after its leading whitespace and comments.
func leadingCommentsCut(query string) string {
	if n := len(ir.LeadingComments(query)); n < len(query) {
		return query[n:]
	}
	return ""
}

// mayNameTable reports whether query could reach a logic, broadcast or
// physical table by name: one occurs as a whole word (also after
// backslash escapes are decoded), or the text may spell one where a word
// test cannot see it (escapes, dynamic SQL, MySQL executable comments,
// which may glue a name to their version number: /*!50000t_order*/).
func (h *hook) mayNameTable(query string) bool {
	low := strings.ToLower(query)
	if h.mayEscapeNames(query) || strings.Contains(low, "/*!") || strings.Contains(low, "/*m!") || strings.Contains(low, "/*t!") {
		return true
	}
	for _, text := range []string{low, strings.ToLower(ir.UnescapeBackslashes(query))} {
		for _, name := range h.Spell {
			if ir.ContainsWord(text, name) {
				return true
			}
		}
	}
	return false
}

// mayEscapeNames reports whether query could spell a name in a way the
// substring test cannot see, so that the compiler must look: PostgreSQL's
// U&"..." identifiers and U&'...' strings, and backslash escapes in
// strings (a body or a function argument); MySQL's PREPARE and EXECUTE
// (IMMEDIATE), whose SQL text may be escaped, hex or a variable. SQLite
// has no escapes and no dynamic SQL.
func (h *hook) mayEscapeNames(query string) bool {
	switch h.Dialect {
	case PostgreSQL:
		return strings.Contains(query, `\`) || strings.Contains(query, "U&") || strings.Contains(query, "u&")
	case MySQL:
		low := strings.ToLower(query)
		return strings.Contains(low, "prepare") || strings.Contains(low, "execute")
	}
	return false
}

// partner is the physical table of logic table partner that binds with
// target t of logic table main: the one at the same position among their
// sorted data nodes.
func (h *hook) partner(main string, t shardconf.Target, partner string) (shardconf.Target, error) {
	key := strings.ToLower(main) + "\x00" + strings.ToLower(partner)
	m, ok := h.partners.Load(key)
	if !ok {
		mine, err := h.Router.Targets(main)
		if err != nil {
			return shardconf.Target{}, err
		}
		// The router's own pairing refuses tables that cannot pair (one
		// routed by hint, the other by its columns).
		if len(mine) > 0 {
			if _, err := h.Router.BoundTarget(main, mine[0], partner); err != nil {
				return shardconf.Target{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
			}
		}
		theirs, err := h.Router.Targets(partner)
		if err != nil {
			return shardconf.Target{}, err
		}
		pairs := make(map[shardconf.Target]shardconf.Target, len(mine))
		for i, x := range mine {
			if i < len(theirs) && theirs[i].DataSource == x.DataSource {
				pairs[x] = theirs[i]
			}
		}
		m, _ = h.partners.LoadOrStore(key, pairs)
	}
	pt, ok := m.(map[shardconf.Target]shardconf.Target)[t]
	if !ok {
		return shardconf.Target{}, fmt.Errorf("%w: binding tables %s and %s do not pair at %s", ErrUnsupported, main, partner, t)
	}
	return pt, nil
}

// planCache keeps plans by statement text, at most size of them; when
// full it drops an arbitrary one (Go's map iteration order), which costs
// nothing to track and keeps the hot set in practice.
type planCache struct {
	mu   sync.RWMutex
	m    map[string]*ir.Plan
	size int
}

func newPlanCache(size int) *planCache {
	return &planCache{m: make(map[string]*ir.Plan), size: size}
}

func (c *planCache) get(q string) *ir.Plan {
	if c.size == 0 {
		return nil
	}
	c.mu.RLock()
	p := c.m[q]
	c.mu.RUnlock()
	return p
}

func (c *planCache) put(q string, p *ir.Plan) {
	if c.size == 0 {
		return
	}
	c.mu.Lock()
	if len(c.m) >= c.size {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[q] = p
	c.mu.Unlock()
}
