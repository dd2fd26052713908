package gormplugin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/shardconf"
)

// Read replicas. A data source of the rules may be a readwrite-splitting
// group (the rule file's !READWRITE_SPLITTING): the plugin then gives that
// data source a pool of its own, which sends a read outside a transaction
// to one of the group's read data sources and everything else to its write
// data source. Routing picks that pool like any other; a callback after
// routing marks the statement's context as a read, and the pool looks only
// at that mark (never at the SQL text).
//
// gorm.io/plugin/dbresolver cannot be combined with routing: its callbacks
// replace the pool a statement was routed to with one of its own, so a row
// routed to one data source is written into another. It is refused, in
// either registration order.

// ErrDBResolver: gorm.io/plugin/dbresolver is registered on the same
// *gorm.DB as the plugin with rules. db.Use(plugin) returns it when
// dbresolver came first; when dbresolver comes after, every statement on a
// sharded or broadcast table fails with it (wrapped with ErrUnsupported)
// before anything runs. Give each data source its replicas in the rule
// file's !READWRITE_SPLITTING rule instead.
var ErrDBResolver = errors.New("gormplugin: gorm.io/plugin/dbresolver is registered on this *gorm.DB: its callbacks replace the connection pool a sharded statement is routed to," +
	" so a row could be written into another data source's database; give each data source its replicas in the rule file (!READWRITE_SPLITTING) instead")

// dbResolverName is dbresolver's plugin and callback name.
const dbResolverName = "gorm:db_resolver"

// readWrite is the plugin's readwrite-splitting state, built by
// prepareReadWrite.
type readWrite struct {
	groups map[string]*rwPool // by group (the rules' data source name)
	// single: the rules' only data source is a group. Routing then leaves
	// statements on the *gorm.DB's own pool (its write data source); reads
	// are moved to the group's pool when marked.
	single *rwPool
	// physical: lower-case physical table names of sharded tables, which
	// dbresolver must not see either
	physical map[string]bool
	// given: WithDataSources' pools as given, before the groups' pools
	// were added (GORM initializes a plugin again on every *gorm.DB opened
	// with the same Config, as dbresolver does)
	given map[string]gorm.ConnPool
}

// rwPool is the connection pool of a readwrite-splitting group. A query
// whose context carries the read mark goes to a read data source chosen by
// the group's load balancer; everything else (Exec, Prepare, a query
// without the mark such as INSERT ... RETURNING, and transactions) goes to
// the write data source.
type rwPool struct {
	group string
	write gorm.ConnPool
	reads []gorm.ConnPool // in the group's Reads order
	bal   *shardconf.ReadBalancer
	conn  gorm.ConnPool // the pool statements use: r, beginning transactions as write does
}

// pick is the pool a query runs on.
func (r *rwPool) pick(ctx context.Context) gorm.ConnPool {
	if isRead(ctx) {
		if i := r.bal.Next(); i >= 0 {
			return r.reads[i]
		}
	}
	return r.write
}

func (r *rwPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return r.write.PrepareContext(ctx, query)
}

func (r *rwPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.write.ExecContext(ctx, query, args...)
}

func (r *rwPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.pick(ctx).QueryContext(ctx, query, args...)
}

func (r *rwPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.pick(ctx).QueryRowContext(ctx, query, args...)
}

// GetDBConn returns the write data source's *sql.DB (gorm.DB.DB).
func (r *rwPool) GetDBConn() (*sql.DB, error) {
	switch w := r.write.(type) {
	case *sql.DB:
		return w, nil
	case gorm.GetDBConnector:
		return w.GetDBConn()
	}
	return nil, fmt.Errorf("%w: the write pool of data source %s is not a *sql.DB", gorm.ErrInvalidDB, r.group)
}

// rwTxPool is an rwPool whose write pool begins *sql.Tx transactions.
type rwTxPool struct{ *rwPool }

func (r *rwTxPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	return r.write.(gorm.TxBeginner).BeginTx(ctx, opts)
}

// rwConnPoolTxPool is an rwPool whose write pool begins gorm.ConnPool
// transactions (a gorm.PreparedStmtDB).
type rwConnPoolTxPool struct{ *rwPool }

func (r *rwConnPoolTxPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	return r.write.(gorm.ConnPoolBeginner).BeginTx(ctx, opts)
}

// asConnPool returns r as a pool that begins transactions as its write
// pool does.
func (r *rwPool) asConnPool() gorm.ConnPool {
	switch r.write.(type) {
	case gorm.TxBeginner:
		return &rwTxPool{r}
	case gorm.ConnPoolBeginner:
		return &rwConnPoolTxPool{r}
	}
	return r
}

// readKey marks a statement's context as a read outside a transaction;
// primaryReadKey asks for reads from the write data source.
type (
	readKey        struct{}
	primaryReadKey struct{}
)

// readCtx is a context carrying the read mark, so that the mark can be
// taken off again by unwrapping it.
type readCtx struct{ context.Context }

func (c readCtx) Value(k any) any {
	if k == (readKey{}) {
		return true
	}
	return c.Context.Value(k)
}

func isRead(ctx context.Context) bool {
	v, _ := ctx.Value(readKey{}).(bool)
	return v
}

// ReadFromPrimary returns a context whose reads go to each data source's
// write data source, for a read that must see a write just made outside a
// transaction (replicas lag behind):
//
//	db.WithContext(gormplugin.ReadFromPrimary(ctx)).First(&order, "user_id = ? AND id = ?", u, id)
//
// Reads in a transaction and SELECT ... FOR UPDATE/SHARE go there anyway.
func ReadFromPrimary(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryReadKey{}, true)
}

// prepareReadWrite runs first in Initialize, before anything is
// registered: it refuses dbresolver and builds the pool of every
// readwrite-splitting group from WithDataSources' pools.
func (p *Plugin) prepareReadWrite(db *gorm.DB) error {
	if p.rules == nil {
		return nil
	}
	if resolverRegistered(db) {
		return ErrDBResolver
	}
	again := p.rw != nil
	if again {
		p.pools = p.rw.given
	}
	rw := &readWrite{groups: map[string]*rwPool{}, physical: map[string]bool{}, given: p.pools}
	for _, t := range p.rules.Tables() {
		ts, _ := p.rules.Targets(t)
		for _, tg := range ts {
			rw.physical[strings.ToLower(tg.Table)] = true
		}
	}
	p.rw = rw
	names := p.rules.DataSources()
	for _, ds := range names {
		g, ok := p.rules.ReadWriteGroup(ds)
		if !ok {
			continue
		}
		// A Config built in code is not checked as a rule file is: a
		// member routed to as a data source of its own would let a read
		// data source take writes.
		for _, m := range g.Names() {
			if slices.Contains(names, m) {
				return fmt.Errorf("gormplugin: data source %s of readwrite-splitting group %s is also a data source of the rules; the rules must name the group only", m, g.Name)
			}
		}
		pool, err := p.groupPool(g)
		if err != nil {
			return err
		}
		rw.groups[ds] = pool
	}
	if len(rw.groups) == 0 {
		return nil
	}
	pools := maps.Clone(p.pools) // the caller's map stays as it was
	if pools == nil {
		pools = map[string]gorm.ConnPool{}
	}
	for ds, g := range rw.groups {
		pools[ds] = g.conn
	}
	p.pools = pools
	if len(names) == 1 {
		if err := p.checkSingleGroup(db, rw.groups[names[0]], again); err != nil {
			return err
		}
		rw.single = rw.groups[names[0]]
	}
	return nil
}

// checkSingleGroup: with one data source, routing leaves statements on the
// *gorm.DB's own pool, where writes and transactions run, so it must be
// the group's write data source.
func (p *Plugin) checkSingleGroup(db *gorm.DB, g *rwPool, again bool) error {
	if unwrapPool(db.Config.ConnPool) == unwrapPool(g.write) {
		return nil
	}
	w := g.writeName(p.rules)
	if again {
		return fmt.Errorf("gormplugin: the plugin, already in use, is initialized again on a *gorm.DB that is not opened on %s,"+
			" as gorm.io/plugin/dbresolver does for each of its sources and replicas: %w", w, ErrDBResolver)
	}
	return fmt.Errorf("gormplugin: the rules' only data source %s is a readwrite-splitting group: open the *gorm.DB on its write data source %s,"+
		" the pool WithDataSources gives for %s (statements in a transaction and writes run on the *gorm.DB's own pool)", g.group, w, w)
}

// groupPool builds the pool of group g from WithDataSources' pools, which
// are keyed by the physical data source names.
func (p *Plugin) groupPool(g shardconf.ReadWriteGroup) (*rwPool, error) {
	if _, ok := p.pools[g.Name]; ok {
		return nil, fmt.Errorf("gormplugin: WithDataSources has a pool for %s, a readwrite-splitting group; give pools for its data sources %s instead",
			g.Name, strings.Join(g.Names(), ", "))
	}
	get := func(name string) (gorm.ConnPool, error) {
		pool, ok := p.pools[name]
		if !ok || pool == nil {
			return nil, fmt.Errorf("gormplugin: WithDataSources has no pool for %q, a data source of readwrite-splitting group %s", name, g.Name)
		}
		return pool, nil
	}
	w, err := get(g.Write.Name)
	if err != nil {
		return nil, err
	}
	r := &rwPool{group: g.Name, write: w, bal: g.NewReadBalancer()}
	for _, rd := range g.Reads {
		pool, err := get(rd.Name)
		if err != nil {
			return nil, err
		}
		r.reads = append(r.reads, pool)
	}
	r.conn = r.asConnPool()
	return r, nil
}

// writeName is the name of the group's write data source.
func (r *rwPool) writeName(rules *shardconf.Router) string {
	g, _ := rules.ReadWriteGroup(r.group)
	return g.Write.Name
}

func unwrapPool(pool gorm.ConnPool) gorm.ConnPool {
	if tp, ok := pool.(*tpPool); ok {
		pool = tp.ConnPool
	}
	if ps, ok := pool.(*gorm.PreparedStmtDB); ok && ps != nil {
		return ps.ConnPool
	}
	return pool
}

// groupOfPool returns the readwrite-splitting group whose write data
// source pool is pool (a *gorm.DB opened on it begins its transactions
// there), so that a transaction on it counts as one on the group.
func (p *Plugin) groupOfPool(pool gorm.ConnPool) (string, bool) {
	if p.rw == nil {
		return "", false
	}
	pool = unwrapPool(pool)
	for ds, g := range p.rw.groups {
		if unwrapPool(g.write) == pool {
			return ds, true
		}
	}
	return "", false
}

// resolverRegistered reports whether dbresolver is in use on db.
func resolverRegistered(db *gorm.DB) bool {
	if _, ok := db.Config.Plugins[dbResolverName]; ok {
		return true
	}
	cb := db.Callback()
	for _, get := range []func(string) func(*gorm.DB){cb.Create().Get, cb.Query().Get, cb.Update().Get, cb.Delete().Get, cb.Row().Get, cb.Raw().Get} {
		if get(dbResolverName) != nil {
			return true
		}
	}
	return false
}

// registerReadWrite registers, after routing: the guard against a
// dbresolver registered later (first in every chain), and, when the rules
// have readwrite-splitting groups, the read mark around GORM's query and
// row callbacks.
func (p *Plugin) registerReadWrite(db *gorm.DB) error {
	cb := db.Callback()
	errs := []error{
		cb.Create().Before("*").Register("shardkey:readwrite", p.guard(cb.Create().Get)),
		cb.Update().Before("*").Register("shardkey:readwrite", p.guard(cb.Update().Get)),
		cb.Delete().Before("*").Register("shardkey:readwrite", p.guard(cb.Delete().Get)),
		cb.Raw().Before("*").Register("shardkey:readwrite", p.guard(cb.Raw().Get)),
		cb.Query().Before("*").Register("shardkey:readwrite", p.guard(cb.Query().Get)),
		cb.Row().Before("*").Register("shardkey:readwrite", p.guard(cb.Row().Get)),
	}
	if p.rw != nil && len(p.rw.groups) > 0 {
		errs = append(errs,
			cb.Query().After("shardkey:route").Before("gorm:query").Register("shardkey:read_replica", p.markRead),
			cb.Query().After("gorm:query").Register("shardkey:read_replica_end", unmarkRead),
			cb.Row().After("shardkey:route").Before("gorm:row").Register("shardkey:read_replica", p.markRead),
			cb.Row().After("gorm:row").Register("shardkey:read_replica_end", unmarkRead),
		)
	}
	return errors.Join(errs...)
}

// guard returns the callback that runs first in a chain (get is the
// chain's Get). It refuses a statement on a sharded or broadcast table
// once dbresolver has been registered after the plugin (its plugin, or
// only its callbacks when its db.Use failed), and takes off a read mark the
// statement inherited (a write from an AfterFind hook runs on the query's
// context): only a query the plugin marked itself may reach a replica.
func (p *Plugin) guard(get func(string) func(*gorm.DB)) func(*gorm.DB) {
	return func(db *gorm.DB) {
		if db.Statement.Context != nil && isRead(db.Statement.Context) {
			db.Statement.Context = context.WithValue(db.Statement.Context, readKey{}, false)
		}
		if db.Error != nil {
			return
		}
		if _, ok := db.Config.Plugins[dbResolverName]; ok || get(dbResolverName) != nil {
			p.refuseResolved(db)
		}
	}
}

// refuseResolved fails a statement on a sharded or broadcast table (or
// one of their physical tables): dbresolver would pick its pool.
func (p *Plugin) refuseResolved(db *gorm.DB) {
	t := db.Statement.Table
	if t == "" && db.Statement.Schema != nil {
		t = db.Statement.Schema.Table
	}
	if p.logicTable(db) != "" || (p.rw != nil && p.rw.physical[strings.ToLower(t)]) {
		p.fail(db, fmt.Errorf("%w: table %s: %w", ErrUnsupported, t, ErrDBResolver))
	}
}

// markRead runs after routing and before GORM's query or row callback: a
// routed read outside a transaction, without a locking clause (SELECT ...
// FOR UPDATE/SHARE) and not asked for the primary (ReadFromPrimary), gets
// the read mark, so that a group's pool sends it to a replica.
func (p *Plugin) markRead(db *gorm.DB) {
	st := db.Statement
	if db.Error != nil || st.Context == nil {
		return
	}
	if _, inTx := st.ConnPool.(gorm.TxCommitter); inTx {
		return
	}
	if _, locking := st.Clauses["FOR"]; locking {
		return
	}
	if primary, _ := st.Context.Value(primaryReadKey{}).(bool); primary {
		return
	}
	// Only a statement routed from its clause tree is known to be a read:
	// raw SQL (Raw().Scan, a migrator's catalog queries) stays on the
	// write data source.
	if _, routed := routedOf(db); !routed || st.SQL.Len() > 0 {
		return
	}
	if s := p.rw.single; s != nil {
		// One data source: routing left the statement on the *gorm.DB's
		// own pool, its write data source.
		if unwrapPool(st.ConnPool) != unwrapPool(s.write) {
			return
		}
		st.ConnPool = s.conn
	}
	st.Context = readCtx{st.Context}
}

// unmarkRead takes the read mark off after the query ran, so that a
// statement reused for a write does not carry it.
func unmarkRead(db *gorm.DB) {
	if rc, ok := db.Statement.Context.(readCtx); ok {
		db.Statement.Context = rc.Context
	}
}
