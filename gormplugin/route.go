package gormplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"

	"github.com/shardkey/shardkey/shardconf"
)

// Routing. Before GORM builds SQL, the plugin reads the statement's clause
// tree (never its SQL), asks the rules for the targets, and then:
//   - one target: points the statement at the physical table and its data
//     source's pool, and lets GORM run it;
//   - several targets: GORM's own create/query/update/delete callbacks are
//     wrapped to run once per target (rows grouped by target for an
//     INSERT, results merged for a query, affected rows summed), inside
//     the statement's transaction;
//   - no way to be sure: an error (shardconf.ErrMissingShardingKey,
//     ErrUnsupported), never the logic table and never a guessed shard.

const targetsKey = "shardkey:targets"

// routed is what the route callback decided for a statement.
type routed struct {
	targets []shardconf.Target
	groups  []rowGroup // create: rows per target
	logic   string     // the logic table
	joins   []joinPlan // JOINs of binding tables, rewritten per target
	// multiSource: a read outside a transaction over several data
	// sources; each target runs on its own data source's pool.
	multiSource bool
	// spans: a statement over several data sources in a two-phase
	// transaction (WithTwoPhaseCommit); each target runs on its data
	// source's branch.
	spans bool
	// physical: the physical table the statement named, if it named one.
	physical string
	// ownValues: an UPDATE routed by the row's own sharding values (Save,
	// Updates(&row)), not by its WHERE clause alone.
	ownValues bool
	// zeroValues: routed by the row's zero sharding values too, the
	// statement having named no sharding key otherwise (planWhere).
	zeroValues bool
	// keys: a create's primary keys when it was routed (rowKeys).
	keys [][]any
	// aliased: a single target is named with the logic name as alias
	// (aliasTarget, joins.go); kind says which statement it is.
	aliased bool
	kind    stmtKind
}

// rowGroup is the rows of a create that go to one target.
type rowGroup struct {
	target shardconf.Target
	rows   []int // indexes into the statement's slice of rows
}

func (p *Plugin) registerRouting(db *gorm.DB) error {
	ds := p.rules.DataSources()
	if len(ds) > 1 {
		for _, name := range ds {
			if _, ok := p.pools[name]; !ok {
				return fmt.Errorf("gormplugin: the rules have %d data sources; WithDataSources has no pool for %q", len(ds), name)
			}
		}
	}
	cb := db.Callback()
	// Wrap GORM's own create/query/update/delete/row callbacks as
	// registered (with the dialect's clauses), running them per target.
	orig := func(get func() func(*gorm.DB), fallback func(*gorm.DB)) func(*gorm.DB) {
		if f := get(); f != nil {
			return f
		}
		return fallback
	}
	create := orig(func() func(*gorm.DB) { return cb.Create().Get("gorm:create") }, callbacks.Create(&callbacks.Config{}))
	query := orig(func() func(*gorm.DB) { return cb.Query().Get("gorm:query") }, callbacks.Query)
	update := orig(func() func(*gorm.DB) { return cb.Update().Get("gorm:update") }, callbacks.Update(&callbacks.Config{}))
	del := orig(func() func(*gorm.DB) { return cb.Delete().Get("gorm:delete") }, callbacks.Delete(&callbacks.Config{}))
	row := orig(func() func(*gorm.DB) { return cb.Row().Get("gorm:row") }, callbacks.RowQuery)
	p.query = query
	for _, err := range []error{
		// Routing runs first: before GORM begins its transaction (which
		// must start on the target's pool), and whether or not that
		// callback is registered (SkipDefaultTransaction leaves it out).
		cb.Create().Before("*").Register("shardkey:route", p.routeCreate),
		cb.Create().Before("gorm:create").Register("shardkey:verify_route", p.verifyCreate),
		cb.Query().Before("gorm:query").Register("shardkey:route", p.routeQuery),
		cb.Update().Before("*").Register("shardkey:route", p.routeUpdate),
		cb.Delete().Before("*").Register("shardkey:route", p.routeDelete),
		cb.Row().Before("gorm:row").Register("shardkey:route", p.routeQuery),
		cb.Raw().Before("gorm:raw").Register("shardkey:route", p.routeRaw),
		// Right after the transaction begins, before the hooks and the
		// association saves that run in it.
		cb.Create().After("gorm:begin_transaction").Before("gorm:before_create").Register("shardkey:tx_begun", p.txBegun),
		cb.Update().After("gorm:begin_transaction").Before("gorm:setup_reflect_value").Register("shardkey:tx_begun", p.txBegun),
		cb.Delete().After("gorm:begin_transaction").Before("gorm:before_delete").Register("shardkey:tx_begun", p.txBegun),
		cb.Create().Before("gorm:commit_or_rollback_transaction").Register("shardkey:tx_ending", p.txEnding),
		cb.Update().Before("gorm:commit_or_rollback_transaction").Register("shardkey:tx_ending", p.txEnding),
		cb.Delete().Before("gorm:commit_or_rollback_transaction").Register("shardkey:tx_ending", p.txEnding),
		// A transaction of the plugin's own, for association saves with
		// SkipDefaultTransaction (writes.go), ends after GORM's last callback.
		cb.Create().After("gorm:after_create").Register("shardkey:end_own_tx", p.endOwnTx),
		cb.Update().After("gorm:after_update").Register("shardkey:end_own_tx", p.endOwnTx),
		cb.Delete().After("gorm:after_delete").Register("shardkey:end_own_tx", p.endOwnTx),
		cb.Create().Replace("gorm:create", p.observedCreate(create)),
		cb.Query().Replace("gorm:query", p.mergeQuery),
		cb.Update().Replace("gorm:update", p.checkedUpdate(update)),
		cb.Delete().Replace("gorm:delete", p.checkedDelete(del)),
		cb.Row().Replace("gorm:row", p.mergeRow(row)), // Row, Rows, Scan: merged over several targets (scatterread.go)
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// poolFor returns the connection pool of a data source: the *gorm.DB's
// own when the rules have one data source, else the WithDataSources pool.
func (p *Plugin) poolFor(db *gorm.DB, ds string) (gorm.ConnPool, error) {
	if len(p.rules.DataSources()) <= 1 {
		return db.Statement.ConnPool, nil
	}
	pool, ok := p.pools[ds]
	if !ok {
		return nil, fmt.Errorf("%w: no connection pool for data source %q", ErrUnsupported, ds)
	}
	return pool, nil
}

// usePool points the statement at a data source. Inside a transaction
// the statement must stay on the transaction's data source, unless the
// transaction is a two-phase one (WithTwoPhaseCommit): it then runs on
// that data source's branch.
func (p *Plugin) usePool(db *gorm.DB, ds string) error {
	if len(p.rules.DataSources()) <= 1 {
		return nil
	}
	if tx := tpOf(db.Statement.ConnPool); tx != nil {
		c, err := tx.use(db.Statement.Context, ds)
		if err != nil {
			return err
		}
		db.Statement.ConnPool = c
		return nil
	}
	pool, err := p.poolFor(db, ds)
	if err != nil {
		return err
	}
	if _, inTx := db.Statement.ConnPool.(gorm.TxCommitter); inTx {
		if cur, ok := p.txSources.Load(db.Statement.ConnPool); ok {
			if cur != ds {
				return crossSource(fmt.Errorf("%w: the transaction is on data source %v; this statement goes to %s", ErrUnsupported, cur, ds))
			}
			return nil
		}
		if ds != p.txDataSource(db) {
			return crossSource(fmt.Errorf("%w: a transaction on one data source cannot reach data source %s", ErrUnsupported, ds))
		}
		return nil
	}
	if tp, ok := p.tp.pools[ds]; ok {
		pool = tp // a transaction GORM begins here is a two-phase one
	}
	db.Statement.ConnPool = pool
	return nil
}

// txBegun records the data source of a transaction GORM just began for a
// routed write, on that data source's pool (callback after
// gorm:begin_transaction).
func (p *Plugin) txBegun(db *gorm.DB) {
	if _, started := db.InstanceGet("gorm:started_transaction"); !started || db.Error != nil || tpOf(db.Statement.ConnPool) != nil {
		return
	}
	if r, ok := routedOf(db); ok && len(r.targets) > 0 && !r.multiSource {
		p.txSources.Store(db.Statement.ConnPool, r.targets[0].DataSource)
	}
}

// txEnding forgets the transaction's data source before GORM commits or
// rolls it back (and puts the statement back on its pool).
func (p *Plugin) txEnding(db *gorm.DB) {
	if _, started := db.InstanceGet("gorm:started_transaction"); started {
		p.txSources.Delete(db.Statement.ConnPool)
	}
}

// txDataSource is the data source whose pool the *gorm.DB was opened on.
// With PrepareStmt, GORM wraps that pool in a *gorm.PreparedStmtDB.
func (p *Plugin) txDataSource(db *gorm.DB) string {
	if ds, ok := p.groupOfPool(db.Config.ConnPool); ok {
		return ds // opened on a readwrite-splitting group's write database
	}
	cfg := db.Config.ConnPool
	if tp, ok := cfg.(*tpPool); ok {
		cfg = tp.ConnPool // WithTwoPhaseCommit's wrapper of the *gorm.DB's pool
	}
	own := cfg
	if ps, ok := own.(*gorm.PreparedStmtDB); ok && ps != nil {
		own = ps.ConnPool
	}
	for name, pool := range p.pools {
		if pool == own || pool == cfg {
			return name
		}
	}
	return ""
}

// logicTable is the statement's table when the rules shard or broadcast
// it; "" when the plugin leaves the statement alone.
func (p *Plugin) logicTable(db *gorm.DB) string {
	t := db.Statement.Table
	if t == "" && db.Statement.Schema != nil {
		t = db.Statement.Schema.Table
	}
	if p.rules.IsSharded(t) || p.rules.IsBroadcast(t) {
		return t
	}
	return ""
}

// fail refuses the statement: nothing of it has run. The first error of a
// statement is reported to the observer as its refusal (WithObserver);
// errors found once the statement ran are added with db.AddError.
func (p *Plugin) fail(db *gorm.DB, err error) {
	if p.obs != nil && err != nil && db.Error == nil {
		p.refused(db, err)
	}
	_ = db.AddError(err)
}

// forget drops a routing decision the statement inherited: GORM copies a
// statement's Settings into the statements it derives (Preload's queries,
// association saves), and a derived statement on another table must not
// run on the parent's targets.
func forget(db *gorm.DB) { db.Statement.Settings.Delete(targetsKey) }

// routeCreate assigns keys, then groups the rows by target.
func (p *Plugin) routeCreate(db *gorm.DB) {
	forget(db)
	if db.Error != nil || migratingTarget(db) {
		return
	}
	table, phys := p.statementTable(db)
	if err := p.refuseTemplateTables(db); err != nil {
		p.fail(db, err)
		return
	}
	if table == "" {
		p.refuseShardedReferences(db)
		p.refuseUnroutedHint(db)
		p.unroutedHome(db)
		p.beginOwnTx(db, true)
		return
	}
	if p.rules.IsBroadcast(table) {
		p.broadcastWrite(db, table)
		return
	}
	// Keys the caller set, read before the plugin fills the others: only
	// those can already be in another table.
	keyCols, explicit := p.rowKeys(db, table)
	p.fillKeysNow(db)
	if db.Error != nil {
		return
	}
	if err := p.settleShardingValues(db, table); err != nil {
		p.fail(db, err)
		return
	}
	r, err := p.planCreate(db, table)
	if err != nil {
		p.fail(db, err)
		return
	}
	r.physical = phys
	_, r.keys = p.rowKeys(db, table)
	if err := keyInTwoTables(table, r); err != nil {
		p.fail(db, err)
		return
	}
	if err := p.checkCreate(db, table, r); err != nil {
		p.fail(db, err)
		return
	}
	p.settle(db, r, false)
	if db.Error == nil && !db.DryRun {
		p.refuseKeysElsewhere(db, table, r, keyCols, explicit)
	}
	p.beginOwnTx(db, true)
}

// planCreate groups the rows being created by the target their sharding
// values (and the hints of the statement's context) select.
func (p *Plugin) planCreate(db *gorm.DB, table string) (routed, error) {
	ctx := stmtContext(db)
	cols := p.rules.ShardingColumns(table)
	rows, err := rowValues(db, cols)
	if err != nil {
		return routed{}, err
	}
	if err := p.checkRowTimes(table, rows); err != nil {
		return routed{}, err
	}
	r := routed{logic: table}
	byTarget := map[shardconf.Target]int{}
	for i, vals := range rows {
		conds := make([]shardconf.Cond, 0, len(cols))
		for _, c := range cols {
			if v, ok := vals[c]; ok {
				conds = append(conds, shardconf.Eq(c, v))
			}
		}
		ts, err := p.rules.RouteContext(ctx, table, conds...)
		if err != nil {
			return routed{}, fmt.Errorf("gormplugin: create in %s: %w", table, err)
		}
		if len(ts) != 1 {
			return routed{}, fmt.Errorf("%w: a row of %s maps to %d tables", ErrUnsupported, table, len(ts))
		}
		g, ok := byTarget[ts[0]]
		if !ok {
			g = len(r.groups)
			byTarget[ts[0]] = g
			r.groups = append(r.groups, rowGroup{target: ts[0]})
			r.targets = append(r.targets, ts[0])
		}
		r.groups[g].rows = append(r.groups[g].rows, i)
	}
	return r, nil
}

// verifyCreate runs just before the INSERT is built: BeforeCreate hooks
// ran after routing and may have changed a sharding value. If the rows
// would now go elsewhere the create fails instead of writing to the table
// chosen before.
func (p *Plugin) verifyCreate(db *gorm.DB) {
	r, ok := routedOf(db)
	if !ok || db.Error != nil || len(r.groups) == 0 {
		return
	}
	again, err := p.planCreate(db, r.logic)
	if err != nil {
		p.fail(db, err)
		return
	}
	if fmt.Sprint(again.groups) != fmt.Sprint(r.groups) {
		p.fail(db, fmt.Errorf("%w: a BeforeCreate hook changed the sharding values of %s after routing", ErrUnsupported, r.logic))
		return
	}
	// A hook that set a primary key: look for the keys it set elsewhere.
	if _, keys := p.rowKeys(db, r.logic); !db.DryRun {
		changed := make([][]any, len(keys))
		found := false
		for i, k := range keys {
			if k != nil && (i >= len(r.keys) || fmt.Sprint(k) != fmt.Sprint(r.keys[i])) {
				changed[i], found = k, true
			}
		}
		if found {
			cols, _ := p.rowKeys(db, r.logic)
			p.refuseKeysElsewhere(db, r.logic, r, cols, changed)
		}
	}
}

// broadcastWrite allows a write to a broadcast table only when it has one
// copy: with several data sources one statement would update one copy and
// leave the others stale.
func (p *Plugin) broadcastWrite(db *gorm.DB, table string) {
	if err := p.checkUnroutedHint(db, table); err != nil {
		p.fail(db, err)
		return
	}
	ts, _ := p.rules.Targets(table)
	if len(ts) != 1 {
		p.fail(db, fmt.Errorf("%w: writing broadcast table %s, which has a copy in %d data sources; write each copy through its own connection", ErrUnsupported, table, len(ts)))
		return
	}
	p.settle(db, routed{targets: ts}, false)
}

// settle stores the decision and, for a single data source, points the
// statement at it before GORM begins its transaction. A read (query)
// outside a transaction may span data sources: each target then runs on
// its own pool and the results merge. A write, or a read inside a
// transaction, must stay in one data source: a transaction cannot span
// two databases.
func (p *Plugin) settle(db *gorm.DB, r routed, query bool) {
	if len(r.targets) == 0 {
		return
	}
	ds := r.targets[0].DataSource
	for _, t := range r.targets[1:] {
		if t.DataSource == ds {
			continue
		}
		_, inTx := db.Statement.ConnPool.(gorm.TxCommitter)
		if query && !inTx {
			r.multiSource = true
			break
		}
		if tpOf(db.Statement.ConnPool) != nil || (!inTx && p.tp.coord != nil) {
			r.spans = true // a two-phase transaction: each target on its data source's branch (runOn)
			break
		}
		a, b := min(ds, t.DataSource), max(ds, t.DataSource) // the same message whatever the order
		what := "a write runs in one; group batches by data source, or use WithTwoPhaseCommit"
		if query {
			what = "a transaction runs in one; read across them outside it, or use WithTwoPhaseCommit"
		}
		p.fail(db, crossSource(fmt.Errorf("%w: the statement spans data sources %s and %s (%s)", ErrUnsupported, a, b, what)))
		return
	}
	if !r.multiSource {
		if err := p.usePool(db, ds); err != nil {
			p.fail(db, err)
			return
		}
	}
	if len(r.targets) == 1 {
		if err := p.pointAt(db, r, r.targets[0]); err != nil {
			p.fail(db, err)
			return
		}
	}
	db.Statement.Settings.Store(targetsKey, r)
	if p.logger.Enabled(db.Statement.Context, slog.LevelDebug) {
		p.logger.Debug("shardkey: routed", "table", r.logic, "targets", fmt.Sprint(r.targets))
	}
}

// rowValues reads the sharding columns of every row being created.
func rowValues(db *gorm.DB, cols []string) ([]map[string]any, error) {
	stmt := db.Statement
	rv := stmt.ReflectValue
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]map[string]any, rv.Len())
		for i := range out {
			e := rv.Index(i)
			for e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface {
				e = e.Elem()
			}
			m, err := rowValuesOf(stmt, cols, e)
			if err != nil {
				return nil, err
			}
			out[i] = m
		}
		return out, nil
	case reflect.Struct, reflect.Map:
		m, err := rowValuesOf(stmt, cols, rv)
		if err != nil {
			return nil, err
		}
		return []map[string]any{m}, nil
	}
	return nil, fmt.Errorf("%w: cannot create from %s", ErrUnsupported, rv.Kind())
}

// rowValuesOf reads the sharding columns cols of one row, a model struct
// or a map (every entry, by column name).
func rowValuesOf(stmt *gorm.Statement, cols []string, rv reflect.Value) (map[string]any, error) {
	out := map[string]any{}
	if m, ok := rv.Interface().(map[string]any); ok {
		for k, v := range m {
			// GORM accepts field names ("UserID") and columns ("user_id").
			if stmt.Schema != nil {
				if f := stmt.Schema.LookUpField(k); f != nil {
					k = f.DBName
				}
			}
			k = strings.ToLower(k)
			if prev, dup := out[k]; dup && slices.Contains(cols, k) && fmt.Sprint(prev) != fmt.Sprint(v) {
				return nil, fmt.Errorf("%w: the map gives sharding column %s twice (%v and %v)", ErrUnsupported, k, prev, v)
			}
			out[k] = v
		}
		return out, nil
	}
	if stmt.Schema == nil {
		return nil, fmt.Errorf("%w: cannot read sharding values of %T", ErrUnsupported, rv.Interface())
	}
	for _, c := range cols {
		f := stmt.Schema.LookUpField(c)
		if f == nil {
			continue
		}
		v, _ := f.ValueOf(stmt.Context, rv)
		out[c] = v
	}
	return out, nil
}

// routeQuery routes SELECT statements (Find, First, Count, Pluck, Row).
func (p *Plugin) routeQuery(db *gorm.DB) {
	p.routeByWhere(db, kindQuery)
}

// routeUpdate routes UPDATE statements.
func (p *Plugin) routeUpdate(db *gorm.DB) {
	p.routeByWhere(db, kindUpdate)
}

// routeDelete routes DELETE statements.
func (p *Plugin) routeDelete(db *gorm.DB) {
	p.routeByWhere(db, kindDelete)
}

type stmtKind int

const (
	kindQuery stmtKind = iota
	kindUpdate
	kindDelete
)

// statementTable is the logic table a statement works on, and the
// physical table when the statement names one (db.Table("t_order_1")):
// such a statement is checked as its logic table's are, and runs on the
// table it names.
func (p *Plugin) statementTable(db *gorm.DB) (logic, physical string) {
	if t := p.logicTable(db); t != "" {
		return t, ""
	}
	t := db.Statement.Table
	if t == "" && db.Statement.Schema != nil {
		t = db.Statement.Schema.Table
	}
	if l := p.logicOf(t); l != t && p.rules.IsSharded(l) {
		return l, t
	}
	if p.keyed.ambiguous[strings.ToLower(t)] {
		p.fail(db, fmt.Errorf("%w: %s is a physical table of several logic tables; name the logic table", ErrUnsupported, t))
	}
	return "", ""
}

// routeByWhere routes a query, update or delete: raw SQL by its text, a
// statement on a broadcast table to its copies, one on a sharded table by
// its WHERE clause (and its model's keys), after the checks that refuse
// what cannot be routed.
func (p *Plugin) routeByWhere(db *gorm.DB, kind stmtKind) {
	forget(db)
	query := kind == kindQuery
	if db.Error != nil || migratingTarget(db) {
		return
	}
	if db.Statement.SQL.Len() > 0 { // Raw(...).Scan/Row: SQL given by the caller
		p.routeRaw(db)
		return
	}
	p.unpoint(db)
	if kind == kindUpdate {
		if err := p.refuseAssociationWrite(db); err != nil {
			p.fail(db, err)
			return
		}
	}
	table, phys := p.statementTable(db)
	if table == "" {
		p.checkUnsharded(db, kind)
		return
	}
	written := table
	if phys != "" {
		written = phys
	}
	if err := checkShape(db, written); err != nil {
		p.fail(db, err)
		return
	}
	if err := p.refuseTemplateTables(db); err != nil {
		p.fail(db, err)
		return
	}
	joins, err := p.planJoins(db, table, query)
	if err != nil {
		p.fail(db, err)
		return
	}
	if p.rules.IsBroadcast(table) {
		p.routeBroadcast(db, table, query)
		return
	}
	view := db.Statement
	if kind == kindUpdate {
		view = updateView(db)
	}
	r, err := p.planWhere(db, view, table, phys, query)
	if err != nil {
		p.fail(db, err)
		return
	}
	if err := p.checkPartnerHints(db, table, r.targets, joins); err != nil {
		p.fail(db, err)
		return
	}
	r.joins = joins
	r.aliased, r.kind = true, kind
	if !query && len(r.targets) > 1 && hasLimit(db.Statement) {
		// Sent to each table, LIMIT n would change up to n rows per table.
		p.fail(db, fmt.Errorf("%w: an UPDATE or DELETE with LIMIT on %s reaches %d tables; each would take the limit", ErrUnsupported, table, len(r.targets)))
		return
	}
	p.settle(db, r, query)
	switch kind {
	case kindUpdate:
		p.beginOwnTx(db, false)
	case kindDelete:
		if r, _ := routedOf(db); r.spans {
			p.beginOwnTx(db, false)
		}
	}
}

// checkUnsharded checks a statement on no sharded table: it may name no
// sharded table in its clauses or templates, nor carry a hint for one.
func (p *Plugin) checkUnsharded(db *gorm.DB, kind stmtKind) {
	p.refuseShardedReferences(db)
	if db.Error == nil {
		if err := p.refuseTemplateTables(db); err != nil {
			p.fail(db, err)
		}
	}
	p.refuseUnroutedHint(db)
	p.unroutedHome(db)
	if kind == kindUpdate {
		p.beginOwnTx(db, false)
	}
}

// routeBroadcast sends a write to every copy of broadcast table table and
// a read to one.
func (p *Plugin) routeBroadcast(db *gorm.DB, table string, query bool) {
	if !query {
		p.broadcastWrite(db, table)
		return
	}
	if err := p.checkUnroutedHint(db, table); err != nil {
		p.fail(db, err)
		return
	}
	ts, _ := p.rules.Targets(table)
	p.settle(db, routed{targets: ts[:1]}, true) // every copy holds the same rows
}

// planWhere routes a statement by its WHERE clause (and a model's keys);
// for an UPDATE it also checks the sharding columns its SET assigns.
//
// An UPDATE or DELETE of one loaded row reads a zero sharding value of
// the row as not set (db.Delete(&Order{ID: 5}) names no user), but a
// loaded row may hold one (user 0): when the statement is otherwise
// missing its sharding key, it is routed by the row's zero values too.
// That is safe for the same reason as routing by its other values: if
// the row is not there the statement matches nothing, and
// checkedUpdate/checkedDelete look for its key elsewhere.
func (p *Plugin) planWhere(db *gorm.DB, view *gorm.Statement, table, phys string, query bool) (routed, error) {
	r, err := p.planWhereWith(db, view, table, phys, query, false)
	if err != nil && !query && errors.Is(err, shardconf.ErrMissingShardingKey) {
		if withZeros, zerr := p.planWhereWith(db, view, table, phys, query, true); zerr == nil && withZeros.ownValues {
			withZeros.zeroValues = true
			return withZeros, nil
		}
	}
	return r, err
}

// planWhereWith is planWhere; zeros routes a loaded row by its zero
// sharding values too.
func (p *Plugin) planWhereWith(db *gorm.DB, view *gorm.Statement, table, phys string, query, zeros bool) (routed, error) {
	if err := p.checkWhereTimes(view, table); err != nil {
		return routed{}, err
	}
	disjuncts, tainted := whereDisjuncts(view, table)
	// GORM appends a model's key conditions to the WHERE clause, which it
	// writes without parentheses: "a OR b AND key" is a OR (b AND key),
	// so they narrow the last OR-ed group only (and nothing when a
	// template reshapes the clause).
	if !tainted {
		last := len(disjuncts) - 1
		disjuncts[last] = append(disjuncts[last], modelKeyConds(view, !query)...)
	}
	var assigns []keyAssign
	r := routed{logic: table, physical: phys}
	if !query {
		assigns = p.shardingAssigns(view, table, setOf(view))
		r.ownValues = rowOwnValues(view, p.rules.ShardingColumns(table), disjuncts, assigns, zeros)
	}
	// The statement's context (db.WithContext) carries its hints.
	ctx := stmtContext(db)
	var err error
	if r.targets, err = p.routeDisjuncts(ctx, table, disjuncts); err != nil {
		return routed{}, err
	}
	all, _ := p.rules.Targets(table)
	if phys != "" {
		// A named physical table answers as its logic table would only
		// when the conditions route there alone.
		for _, t := range r.targets {
			if !strings.EqualFold(t.Table, phys) {
				return routed{}, fmt.Errorf("%w: the conditions of a statement on %s route to %s, not to %s alone; name the logic table %s", ErrUnsupported, phys, t, phys, table)
			}
		}
		all = slices.DeleteFunc(slices.Clone(all), func(t shardconf.Target) bool { return !strings.EqualFold(t.Table, phys) })
	}
	if len(r.targets) == 0 && len(all) > 0 {
		// Contradictory conditions: no table can hold a match. Run on one
		// target so GORM returns its empty result or affects no row.
		r.targets = all[:1]
	}
	if err := p.checkAssigns(ctx, table, r.targets, disjuncts, assigns); err != nil {
		return routed{}, err
	}
	return r, nil
}

// routeDisjuncts routes each OR-ed group of conditions (scattering when
// the plugin does) and returns the targets of them all, each once, in the
// order found.
func (p *Plugin) routeDisjuncts(ctx context.Context, table string, disjuncts [][]shardconf.Cond) ([]shardconf.Target, error) {
	route := p.rules.RouteContext
	if p.scatter {
		route = p.rules.ScatterContext
	}
	var targets []shardconf.Target
	seen := map[shardconf.Target]bool{}
	for _, conds := range disjuncts {
		ts, err := route(ctx, table, conds...)
		if err != nil {
			return nil, fmt.Errorf("gormplugin: %s: %w", table, err)
		}
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				targets = append(targets, t)
			}
		}
	}
	return targets, nil
}

// checkShape refuses statements whose other tables the plugin would leave
// unrouted: joins and subqueries.
func checkShape(db *gorm.DB, table string) error {
	stmt := db.Statement
	if from, ok := stmt.Clauses["FROM"].Expression.(clause.From); ok && (len(from.Joins) > 0 || len(from.Tables) > 0) {
		return fmt.Errorf("%w: FROM/JOIN clause on sharded table %s", ErrUnsupported, table)
	}
	// db.Table("orders") sets TableExpr to the quoted name, which pointAt
	// replaces; any other table expression (an alias, a subquery) cannot be
	// placed.
	if e := stmt.TableExpr; e != nil && (len(e.Vars) > 0 || e.SQL != stmt.Quote(table)) {
		return fmt.Errorf("%w: a table expression on sharded table %s", ErrUnsupported, table)
	}
	if hasSubquery(stmt) {
		return fmt.Errorf("%w: a subquery in a statement on sharded table %s", ErrUnsupported, table)
	}
	return nil
}

func hasSubquery(stmt *gorm.Statement) bool {
	for _, c := range stmt.Clauses {
		if containsDB(c.Expression) {
			return true
		}
	}
	return false
}

func containsDB(e any) bool {
	switch x := e.(type) {
	case *gorm.DB:
		return true
	case clause.Where:
		return anyContainsDB(x.Exprs)
	case clause.AndConditions:
		return anyContainsDB(x.Exprs)
	case clause.OrConditions:
		return anyContainsDB(x.Exprs)
	case clause.NotConditions:
		return anyContainsDB(x.Exprs)
	case clause.Expr:
		return slices.ContainsFunc(x.Vars, containsDB)
	case clause.NamedExpr:
		return slices.ContainsFunc(x.Vars, containsDB)
	case clause.Eq:
		return containsDB(x.Value)
	case clause.Neq:
		return containsDB(x.Value)
	case clause.IN:
		return slices.ContainsFunc(x.Values, containsDB)
	}
	return false
}

func anyContainsDB(es []clause.Expression) bool {
	return slices.ContainsFunc(es, func(e clause.Expression) bool { return containsDB(e) })
}

// shardedSubquery returns the sharded or broadcast table a subquery of the
// statement reads ("" when none does): in its clauses, its table
// expression (db.Table("(?) AS s", sub)) or its joins' conditions.
func (p *Plugin) shardedSubquery(db *gorm.DB) string {
	stmt := db.Statement
	var found string
	visit := func(sub *gorm.DB) {
		if found == "" {
			found = p.subqueryTable(db, sub)
		}
	}
	for _, c := range stmt.Clauses {
		eachDB(c.Expression, visit)
	}
	if stmt.TableExpr != nil {
		eachDB(*stmt.TableExpr, visit)
	}
	for _, j := range stmt.Joins {
		for _, c := range j.Conds {
			eachDB(c, visit)
		}
		if j.Expression != nil {
			eachDB(j.Expression, visit)
		}
	}
	return found
}

// subqueryTable is the sharded or broadcast table sub reads, or "".
func (p *Plugin) subqueryTable(db *gorm.DB, sub *gorm.DB) string {
	names := []string{sub.Statement.Table}
	if sub.Statement.Model != nil {
		if s, err := schema.Parse(sub.Statement.Model, &p.subquerySchemas, db.Config.NamingStrategy); err == nil {
			names = append(names, s.Table)
		}
	}
	for _, n := range names {
		if n != "" && (p.rules.IsSharded(n) || p.rules.IsBroadcast(n) || p.mentionsSharded(n) || p.mentionsPhysical(n)) {
			return n
		}
	}
	if e := sub.Statement.TableExpr; e != nil && (p.mentionsSharded(e.SQL) || p.mentionsPhysical(e.SQL)) {
		return e.SQL
	}
	return ""
}

// eachDB calls f with every *gorm.DB inside e (containsDB's walk).
func eachDB(e any, f func(*gorm.DB)) {
	switch x := e.(type) {
	case *gorm.DB:
		f(x)
	case clause.Where:
		eachDBs(x.Exprs, f)
	case clause.AndConditions:
		eachDBs(x.Exprs, f)
	case clause.OrConditions:
		eachDBs(x.Exprs, f)
	case clause.NotConditions:
		eachDBs(x.Exprs, f)
	case clause.Expr:
		for _, v := range x.Vars {
			eachDB(v, f)
		}
	case clause.NamedExpr:
		for _, v := range x.Vars {
			eachDB(v, f)
		}
	case clause.Eq:
		eachDB(x.Value, f)
	case clause.Neq:
		eachDB(x.Value, f)
	case clause.IN:
		for _, v := range x.Values {
			eachDB(v, f)
		}
	}
}

func eachDBs(es []clause.Expression, f func(*gorm.DB)) {
	for _, e := range es {
		eachDB(e, f)
	}
}

// refuseShardedReferences fails a statement on an unsharded table that
// joins or subqueries a sharded one (GORM would read the logic table), or
// whose table expression or joins name a physical table of one (it would
// run unrouted on the default data source).
func (p *Plugin) refuseShardedReferences(db *gorm.DB) {
	stmt := db.Statement
	if table := p.shardedSubquery(db); table != "" {
		// GORM builds a subquery as a DryRun and drops its error: a refused
		// one would leave "()" in the SQL, which SQLite reads as an empty
		// IN list. Refused here, where the error reaches the caller.
		p.fail(db, fmt.Errorf("%w: a subquery on sharded table %s", ErrUnsupported, table))
		return
	}
	if e := stmt.TableExpr; e != nil && (p.mentionsSharded(e.SQL) || p.mentionsPhysical(e.SQL)) {
		p.fail(db, fmt.Errorf("%w: table expression %q names a sharded table", ErrUnsupported, e.SQL))
		return
	}
	for _, j := range stmt.Joins {
		if stmt.Schema != nil {
			if rel, ok := stmt.Schema.Relationships.Relations[j.Name]; ok && rel.FieldSchema != nil &&
				(p.rules.IsSharded(rel.FieldSchema.Table) || p.rules.IsBroadcast(rel.FieldSchema.Table)) {
				p.fail(db, fmt.Errorf("%w: JOIN of association %s, whose table %s is sharded", ErrUnsupported, j.Name, rel.FieldSchema.Table))
				return
			}
		}
		if p.mentionsSharded(j.Name) || p.mentionsPhysical(j.Name) {
			p.fail(db, fmt.Errorf("%w: JOIN of sharded table in %q", ErrUnsupported, j.Name))
			return
		}
	}
}

// modelKeyConds are the primary-key conditions GORM adds from a model
// value (db.Model(&order).Update, db.Delete(&order), First(&order) on a
// loaded order).
func modelKeyConds(stmt *gorm.Statement, update bool) []shardconf.Cond {
	if stmt.Schema == nil {
		return nil
	}
	rv := stmt.ReflectValue
	if mv := reflect.ValueOf(stmt.Model); update && mv.Kind() == reflect.Pointer && !mv.IsNil() {
		// An UPDATE's WHERE gets the Model's keys (db.Model(&o).Updates(...)),
		// whatever the changes are; a SELECT uses only the destination's.
		rv = mv.Elem()
	}
	if !rv.IsValid() || rv.Kind() != reflect.Struct || rv.Type() != stmt.Schema.ModelType {
		return nil
	}
	var out []shardconf.Cond
	for _, f := range stmt.Schema.PrimaryFields {
		if v, zero := f.ValueOf(stmt.Context, rv); !zero {
			out = append(out, shardconf.Eq(f.DBName, v))
		}
	}
	return out
}

// whereDisjuncts turns the WHERE clause into OR-ed groups of AND-ed
// conditions on plain columns. A group that constrains the sharding
// columns routes; one that does not is a missing key (or a scatter).
// GORM keeps Where(a).Or(b) as [a, OrConditions{b}]: each top-level OR
// starts a new group.
//
// tainted: a template changes how the clause reads around it
// (whereTainted); then nothing narrows the targets.
func whereDisjuncts(stmt *gorm.Statement, owner string) (groups [][]shardconf.Cond, tainted bool) {
	where, _ := stmt.Clauses["WHERE"].Expression.(clause.Where)
	sc := scopeOf(stmt, owner)
	if whereTainted(where.Exprs, sc.dialect, false) {
		return [][]shardconf.Cond{nil}, true
	}
	groups = [][]shardconf.Cond{nil}
	for _, e := range where.Exprs {
		if or, ok := e.(clause.OrConditions); ok {
			groups = append(groups, collect(nil, sc, or.Exprs...))
			continue
		}
		last := len(groups) - 1
		groups[last] = collect(groups[last], sc, e)
	}
	// First(&o, id) and friends name the primary key by placeholder.
	if pk := primaryColumn(stmt); pk != "" {
		for _, g := range groups {
			for i, c := range g {
				if c.Column() == strings.ToLower(clause.PrimaryKey) {
					g[i] = c.WithColumn(pk)
				}
			}
		}
	}
	return groups, false
}

func primaryColumn(stmt *gorm.Statement) string {
	if stmt.Schema != nil && stmt.Schema.PrioritizedPrimaryField != nil {
		return stmt.Schema.PrioritizedPrimaryField.DBName
	}
	return ""
}

// collect adds the conditions an AND-ed expression states on plain
// columns. Expressions it cannot read add nothing: they can only narrow
// the result, so leaving them out never loses a target.
//
// sc.owner is the statement's logic table: a condition on another
// table's column (a joined table's, "items.id = ?") says nothing about
// owner's. Templates (Where("user_id = 101"), named arguments) are read
// by conds.go.
func collect(out []shardconf.Cond, sc condScope, es ...clause.Expression) []shardconf.Cond {
	owner := sc.owner
	for _, e := range es {
		switch x := e.(type) {
		case clause.Eq:
			if col, ok := columnName(x.Column, owner); ok && !isSlice(x.Value) {
				out = append(out, shardconf.Eq(col, x.Value))
			}
		case clause.IN:
			if col, ok := columnName(x.Column, owner); ok {
				out = append(out, shardconf.In(col, x.Values...))
			}
		case clause.Gt:
			if col, ok := columnName(x.Column, owner); ok {
				out = append(out, shardconf.Gt(col, x.Value))
			}
		case clause.Gte:
			if col, ok := columnName(x.Column, owner); ok {
				out = append(out, shardconf.Ge(col, x.Value))
			}
		case clause.Lt:
			if col, ok := columnName(x.Column, owner); ok {
				out = append(out, shardconf.Lt(col, x.Value))
			}
		case clause.Lte:
			if col, ok := columnName(x.Column, owner); ok {
				out = append(out, shardconf.Le(col, x.Value))
			}
		case clause.AndConditions:
			// GORM builds a grouped Where(a).Or(b) as AndConditions{a,
			// OrConditions{b}}, meaning (a OR b): with an OR inside, the
			// group narrows nothing.
			if !hasOr(x.Exprs) {
				out = collect(out, sc, x.Exprs...)
			}
		case clause.Where:
			if !hasOr(x.Exprs) {
				out = collect(out, sc, x.Exprs...)
			}
		case clause.Expr:
			out = append(out, scopeCondsExpr(sc, x)...)
		case clause.NamedExpr:
			out = append(out, scopeCondsNamed(sc, x)...)
		}
		// OR groups nested inside an AND, NOT, and other expressions do
		// not narrow the targets.
	}
	return out
}

func hasOr(es []clause.Expression) bool {
	for _, e := range es {
		if _, ok := e.(clause.OrConditions); ok {
			return true
		}
	}
	return false
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// columnName is the column a clause names, when it is a column of owner
// (unqualified, qualified with owner, or GORM's current-table marker).
func columnName(c any, owner string) (string, bool) {
	switch x := c.(type) {
	case clause.Column:
		if x.Raw {
			return "", false
		}
		return ownColumn(x.Name, x.Table, owner)
	case string:
		return ownColumn(x, "", owner)
	}
	return "", false
}

// ownColumn strips quotes and a qualifier ("t"."order_id" -> order_id)
// and reports whether the qualifier, if any, is owner.
func ownColumn(name, table, owner string) (string, bool) {
	name = strings.TrimSpace(name)
	if i := strings.LastIndex(name, "."); i >= 0 {
		if table == "" {
			table = name[:i]
		}
		name = name[i+1:]
	}
	table = strings.Trim(strings.TrimSpace(table), "`\"[]")
	mine := table == "" || table == clause.CurrentTable || strings.EqualFold(table, owner)
	return unquote(name), mine
}

// unquote strips quotes and a table qualifier: "t"."order_id" -> order_id.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	return strings.ToLower(strings.Trim(s, "`\"[]"))
}

func isSlice(v any) bool {
	if v == nil {
		return false
	}
	k := reflect.TypeOf(v).Kind()
	_, bytes := v.([]byte)
	return (k == reflect.Slice || k == reflect.Array) && !bytes
}

func sliceValues(v any) ([]any, bool) {
	if !isSlice(v) {
		return nil, false
	}
	rv := reflect.ValueOf(v)
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// routeRaw fails closed on raw SQL that names a sharded table: reading
// SQL is sqlhook's job (a real parser); GORM's Raw/Exec would otherwise
// reach the logic table.
func (p *Plugin) routeRaw(db *gorm.DB) {
	if db.Error != nil || migratingTarget(db) {
		return
	}
	sql := db.Statement.SQL.String()
	if p.mentionsSharded(sql) || p.writesPhysical(sql) {
		p.fail(db, fmt.Errorf("%w: raw SQL on a sharded table; use GORM's query builder, or open the database through sqlhook, which parses SQL", ErrUnsupported))
		return
	}
	p.refuseRawHint(db, sql)
	p.unroutedHome(db)
}

var wordRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_$]*`)

// mentionsSharded reports whether text contains a sharded or broadcast
// logic table name as a word. A false positive only refuses a statement.
func (p *Plugin) mentionsSharded(text string) bool {
	for _, w := range wordRE.FindAllString(text, -1) {
		if p.rules.IsSharded(w) || p.rules.IsBroadcast(w) {
			return true
		}
	}
	return false
}

// writesPhysical reports whether raw SQL names a physical table of a
// sharded table and may write ("UPDATE t_order_1 SET user_id = ..."): it
// would run unchecked on the default data source and could leave a row
// in a table its values do not route to. A raw read of a physical table
// reads just that table and is left alone. Any word that may make the
// statement write counts (a false positive only refuses).
func (p *Plugin) writesPhysical(text string) bool {
	if !p.mentionsPhysical(text) {
		return false
	}
	for _, w := range wordRE.FindAllString(text, -1) {
		if rawWriteWords[strings.ToLower(w)] {
			return true
		}
	}
	return false
}

// mentionsPhysical reports whether text contains, as a word, a physical
// table of a sharded table. A table expression with an alias
// (db.Table("t_order_1 AS o")) or a join naming one would run on the
// default data source, unrouted and unchecked.
func (p *Plugin) mentionsPhysical(text string) bool {
	for _, w := range wordRE.FindAllString(text, -1) {
		lw := strings.ToLower(w)
		if p.keyed.logic[lw] != "" || p.keyed.ambiguous[lw] {
			return true
		}
	}
	return false
}

var rawWriteWords = map[string]bool{"insert": true, "update": true, "delete": true, "replace": true, "merge": true,
	"upsert": true, "truncate": true, "alter": true, "drop": true, "rename": true, "load": true, "call": true, "do": true}

func routedOf(db *gorm.DB) (routed, bool) {
	v, ok := db.Statement.Settings.Load(targetsKey)
	if !ok {
		return routed{}, false
	}
	r, ok := v.(routed)
	return r, ok
}

// each runs GORM's create/update/delete once per target. For a create,
// each run inserts only its target's rows; for update/delete (sum) the
// affected rows add up. so (nil without an observer) reports each
// target's statement.
func (p *Plugin) each(f func(*gorm.DB)) func(*gorm.DB, *stmtObs) {
	return func(db *gorm.DB, so *stmtObs) {
		r, ok := routedOf(db)
		if !ok || len(r.targets) <= 1 {
			so.runOne(db, f)
			return
		}
		if db.Error != nil {
			return // GORM's create/update/delete run nothing after an error either
		}
		stmt := db.Statement
		table, dest, rv := stmt.Table, stmt.Dest, stmt.ReflectValue
		defer func() { stmt.Table, stmt.Dest, stmt.ReflectValue = table, dest, rv }()
		keep := callerClauses(stmt)
		defer oneNow(db)()
		var total int64
		if len(r.groups) > 0 {
			base := reflect.Indirect(rv)
			for _, g := range r.groups {
				part := reflect.MakeSlice(reflect.SliceOf(base.Type().Elem()), 0, len(g.rows))
				for _, i := range g.rows {
					part = reflect.Append(part, base.Index(i))
				}
				ptr := reflect.New(part.Type())
				ptr.Elem().Set(part)
				if err := p.runOn(db, so, g.target, ptr.Interface(), ptr.Elem(), f, keep); err != nil {
					p.failedPartWay(db, r, total)
					return
				}
				total += db.RowsAffected
				// Write back what the database returned (RETURNING keys).
				for j, i := range g.rows {
					base.Index(i).Set(ptr.Elem().Index(j))
				}
			}
		} else {
			for _, t := range r.targets {
				if err := p.runOn(db, so, t, dest, rv, f, keep); err != nil {
					p.failedPartWay(db, r, total)
					return
				}
				total += db.RowsAffected
			}
		}
		db.RowsAffected = total
	}
}

// observedCreate is gorm:create, run per target (each), reported as one
// statement (WithObserver).
func (p *Plugin) observedCreate(f func(*gorm.DB)) func(*gorm.DB) {
	run := p.each(f)
	return func(db *gorm.DB) {
		so := p.startStatement(db, "insert")
		run(db, so)
		so.end(db.Error, 0, false)
	}
}

// runOn runs f with the statement pointed at one target (and, for a read
// across data sources, at its data source's pool).
//
// keep (nil for a query) holds the clauses of a write as the caller gave
// them (callerClauses). so (nil without an observer) reports the target's
// statement.
func (p *Plugin) runOn(db *gorm.DB, so *stmtObs, t shardconf.Target, dest any, rv reflect.Value, f func(*gorm.DB), keep map[string]clause.Clause) error {
	stmt := db.Statement
	stmt.Dest, stmt.ReflectValue = dest, rv
	r, _ := routedOf(db)
	if r.multiSource || r.spans {
		pool, err := p.targetPool(db, t.DataSource, r.multiSource)
		if err != nil {
			return db.AddError(err)
		}
		saved := stmt.ConnPool
		stmt.ConnPool = pool
		defer func() { stmt.ConnPool = saved }()
	}
	if keep != nil {
		// GORM's write callbacks add to the clauses as they build (see
		// callerClauses): each target starts again from the caller's.
		clear(stmt.Clauses)
		maps.Copy(stmt.Clauses, keep)
	}
	if err := p.pointAt(db, r, t); err != nil {
		return db.AddError(err)
	}
	if len(r.joins) > 0 {
		// GORM stores the FROM clause it builds, JOINs included, back in
		// the statement: each target builds its own.
		from, had := stmt.Clauses["FROM"]
		defer func() {
			if had {
				stmt.Clauses["FROM"] = from
			} else {
				delete(stmt.Clauses, "FROM")
			}
		}()
	}
	stmt.SQL.Reset()
	stmt.Vars = nil
	db.RowsAffected = 0
	return so.target(db, t, func() error {
		f(db)
		return db.Error
	})
}

// hasLimit reports whether the statement has a LIMIT or OFFSET GORM will
// write (Limit(-1) writes none).
func hasLimit(stmt *gorm.Statement) bool {
	l, ok := stmt.Clauses["LIMIT"].Expression.(clause.Limit)
	return ok && (l.Limit != nil && *l.Limit >= 0 || l.Offset > 0)
}
