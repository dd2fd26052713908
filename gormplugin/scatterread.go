package gormplugin

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/internal/merge"
)

// Reads over several targets: each target is asked the statement's
// SELECT, rewritten by its plan (readplan*.go), the answers merge in the
// merge engine, and GORM scans the merged rows as it scans one table's.

// mergeQuery is GORM's query callback for a routed statement: one target
// runs as GORM would run it; several are merged.
func (p *Plugin) mergeQuery(db *gorm.DB) {
	r, ok := routedOf(db)
	if !ok || len(r.targets) <= 1 || db.Error != nil {
		so := p.startStatement(db, "select")
		so.runOne(db, p.query)
		so.end(db.Error, 0, false)
		return
	}
	merged, so, err := p.scatterRows(db, r)
	if err != nil || merged == nil {
		p.failRead(db, so, err)
		return
	}
	rows, err := sqlRows(db.Statement.Context, merged)
	if err != nil {
		p.failRead(db, so, err)
		return
	}
	defer func() {
		_ = db.AddError(rows.Close())
		if o, ok := merged.(*observedRows); ok {
			so.end(db.Error, o.n, true)
		}
	}()
	gorm.Scan(rows, db, 0)
	if db.Statement.Result != nil {
		db.Statement.Result.RowsAffected = db.RowsAffected
	}
}

// failRead fails a read over several targets: a refusal when it was
// refused before any target ran (so is nil), else the statement's end.
func (p *Plugin) failRead(db *gorm.DB, so *stmtObs, err error) {
	if so == nil {
		p.fail(db, err)
		return
	}
	_ = db.AddError(err)
	so.end(db.Error, 0, true)
}

// mergeRow is GORM's row callback (Row, Rows, Scan) for a routed
// statement: over several targets it returns the merged rows as a
// *sql.Rows, or a *sql.Row holding the first.
func (p *Plugin) mergeRow(row func(*gorm.DB)) func(*gorm.DB) {
	return func(db *gorm.DB) {
		r, ok := routedOf(db)
		if !ok || len(r.targets) <= 1 || db.Error != nil {
			so := p.startStatement(db, "select")
			so.runOne(db, row)
			so.end(db.Error, 0, false)
			return
		}
		isRows, _ := db.Get("rows")
		db.Statement.Settings.Delete("rows")
		merged, so, err := p.scatterRows(db, r)
		if err != nil || merged == nil {
			p.failRead(db, so, err)
			return
		}
		if o, ok := merged.(*observedRows); ok {
			o.endOnClose = true // the caller closes them (Row: its Scan)
		}
		if b, _ := isRows.(bool); b {
			db.Statement.Dest, err = sqlRows(db.Statement.Context, merged)
			_ = db.AddError(err) // on an error the rows were closed, which ended the statement
		} else {
			db.Statement.Dest = sqlRow(db.Statement.Context, merged)
		}
		db.RowsAffected = -1
	}
}

// scatterRows runs the statement on every target and merges the results.
// A DryRun (and so a subquery) over several targets is refused. so (nil
// without an observer, or when the read was refused before any target
// ran) is the statement, reported as started; on an error it has ended.
func (p *Plugin) scatterRows(db *gorm.DB, r routed) (_ driver.Rows, so *stmtObs, err error) {
	stmt := db.Statement
	if db.DryRun {
		// GORM builds a subquery (db.Table("(?) AS s", sub), Where("x IN
		// (?)", sub)) as a DryRun and drops its error: the text it takes
		// must fail in the database, for no one table's SQL answers over
		// several (SQLite would read an empty "IN ()" as no rows).
		stmt.SQL.Reset()
		stmt.SQL.WriteString(dryRunRefused)
		return nil, nil, fmt.Errorf("%w: a read over %d tables of %s built without running it (DryRun, or a subquery of another statement): no one SQL text answers it",
			ErrUnsupported, len(r.targets), r.logic)
	}
	rp, err := p.planRead(db, r.logic)
	if err != nil {
		return nil, nil, err
	}
	if p.obs != nil {
		so = p.startRouted(db, r, "select")
		defer func() {
			if err != nil {
				so.end(err, 0, true)
			}
		}()
	}
	saved := maps.Clone(stmt.Clauses)
	table, expr, dest, rv := stmt.Table, stmt.TableExpr, stmt.Dest, stmt.ReflectValue
	defer func() {
		restoreClauses(stmt, saved)
		stmt.Table, stmt.TableExpr, stmt.Dest, stmt.ReflectValue = table, expr, dest, rv
	}()
	var shards []driver.Rows
	closeAll := func() {
		for _, s := range shards {
			_ = s.Close()
		}
	}
	for _, t := range r.targets {
		var shard driver.Rows
		run := func(db *gorm.DB) { shard = p.queryTarget(db, r, rp, saved, len(r.targets)) }
		if err := p.runOn(db, so, t, dest, rv, run, nil); err != nil {
			closeAll()
			return nil, so, err
		}
		shards = append(shards, shard)
	}
	if err := sameColumns(shards, r.logic); err != nil {
		closeAll()
		return nil, so, err
	}
	plan, err := rp.mergePlan(shards[0].(colTypes))
	if err != nil {
		closeAll()
		return nil, so, err
	}
	m, err := merge.New(plan, shards)
	if err != nil {
		closeAll()
		return nil, so, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if so != nil {
		return &observedRows{refusing: refusing{m}, so: so}, so, nil
	}
	return refusing{m}, nil, nil
}

// dryRunRefused is the SQL a DryRun over several tables builds: a call of
// a function no database has, so a statement embedding it fails.
const dryRunRefused = "SELECT shardkey_refused_a_read_over_several_tables()"

// sameColumns checks that every target returned the same columns in the
// same order, of the same types: a SELECT * over tables whose columns were
// created or moved in another order would otherwise merge one table's
// values into another column, and a column migrated in one table only
// would be read as another type.
func sameColumns(shards []driver.Rows, logic string) error {
	first := shards[0].Columns()
	for _, s := range shards[1:] {
		if !slices.Equal(s.Columns(), first) {
			return fmt.Errorf("%w: the tables of %s return their columns in different orders (%s; %s): select the columns by name",
				ErrUnsupported, logic, strings.Join(first, ", "), strings.Join(s.Columns(), ", "))
		}
		// The merge reads every table's values as the first table's types.
		a, okA := shards[0].(colTypes)
		b, okB := s.(colTypes)
		for i := range first {
			if okA && okB && a.ColumnTypeDatabaseTypeName(i) != b.ColumnTypeDatabaseTypeName(i) {
				return fmt.Errorf("%w: column %s has type %s in one table of %s and %s in another",
					ErrUnsupported, first[i], a.ColumnTypeDatabaseTypeName(i), logic, b.ColumnTypeDatabaseTypeName(i))
			}
		}
	}
	return nil
}

// queryTarget builds and runs one target's SELECT (the statement already
// points at the target and its pool).
func (p *Plugin) queryTarget(db *gorm.DB, r routed, rp *readPlan, clauses map[string]clause.Clause, n int) driver.Rows {
	stmt := db.Statement
	restoreClauses(stmt, clauses)
	if len(r.joins) == 0 { // name the physical table by its logic name
		phys := stmt.Table
		if stmt.TableExpr != nil && len(stmt.TableExpr.Vars) == 2 {
			if t, ok := stmt.TableExpr.Vars[0].(clause.Table); ok {
				phys = t.Name
			}
		}
		stmt.Table = r.logic
		stmt.TableExpr = &clause.Expr{SQL: "? AS ?", Vars: []any{clause.Table{Name: phys}, clause.Table{Name: r.logic}}}
	}
	rp.apply(stmt)
	callbacks.BuildQuerySQL(db)
	if db.Error != nil || db.DryRun {
		return nil
	}
	rows, err := stmt.ConnPool.QueryContext(stmt.Context, stmt.SQL.String(), stmt.Vars...)
	if err != nil {
		_ = db.AddError(err)
		return nil
	}
	shard, err := merge.FromSQL(rows)
	if err != nil {
		_ = rows.Close()
		_ = db.AddError(err)
		return nil
	}
	if streamable(stmt.ConnPool, n) {
		return shard
	}
	buffered, err := merge.Buffer(shard)
	if err != nil {
		_ = db.AddError(err)
		return nil
	}
	return buffered
}

// streamable reports whether n results can stay open at once on pool: a
// transaction (or a single connection) holds one result at a time, and a
// pool with a connection limit could wait forever for the n-th while it
// holds the others. Otherwise each target's rows are read into memory
// before the next target's query runs.
func streamable(pool gorm.ConnPool, n int) bool {
	pool = unwrapPool(pool)
	db, ok := pool.(*sql.DB)
	return ok && db.Stats().MaxOpenConnections == 0 && n > 0
}
