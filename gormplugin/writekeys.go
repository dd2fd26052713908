package gormplugin

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// Primary keys of rows being written, looked for in the other tables of
// their logic table when the key alone does not route the row.

// primaryKey reads a row's primary key; ok is false when a part is zero.
func primaryKey(stmt *gorm.Statement, rv reflect.Value) ([]any, bool) {
	var key []any
	for _, f := range stmt.Schema.PrimaryFields {
		v, zero := f.ValueOf(stmt.Context, rv)
		if zero {
			return nil, false
		}
		key = append(key, v)
	}
	return key, true
}

// keyDetermines reports whether a primary key alone routes table's rows
// to one target: then a key can only ever be in that table. Deliberately
// without the statement's hints: a hint places this statement's rows, but
// another statement's hint may have put the key elsewhere.
func (p *Plugin) keyDetermines(table string, pkCols []string, key []any) bool {
	conds := make([]shardconf.Cond, len(pkCols))
	for i, c := range pkCols {
		conds[i] = shardconf.Eq(c, key[i])
	}
	ts, err := p.rules.Route(table, conds...)
	return err == nil && len(ts) == 1
}

// keyElsewhere looks for rows with any of keys (primary-key values, in
// the schema's primary-key order) in table's targets other than at, and
// returns the first target holding one. Targets in at's data source are
// read through the statement's connection (its transaction, if any),
// others through their data source's pool.
func (p *Plugin) keyElsewhere(db *gorm.DB, table string, at shardconf.Target, pkCols []string, keys [][]any) (*shardconf.Target, error) {
	stmt := db.Statement
	var todo [][]any
	for _, k := range keys {
		if !p.keyDetermines(table, pkCols, k) {
			todo = append(todo, k)
		}
	}
	if len(todo) == 0 {
		return nil, nil
	}
	all, err := p.rules.Targets(table)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		if t == at {
			continue
		}
		pool := stmt.ConnPool
		tx := tpOf(stmt.ConnPool)
		_, twoPhasePool := stmt.ConnPool.(*tpPool)
		// A statement over several data sources (WithTwoPhaseCommit) is on
		// one of them only: every data source is then looked up by name.
		if t.DataSource != at.DataSource || tx != nil || twoPhasePool {
			if pool, err = p.poolFor(db, t.DataSource); err != nil {
				return nil, err
			}
			// In a two-phase transaction, a data source it has written is
			// read through its branch, which sees those rows. One it has
			// not reached is read through its pool: a branch begun only to
			// read would have to be prepared and committed too.
			if tx != nil && tx.existing(t.DataSource) != nil {
				pool = &tpConn{tx: tx, ds: t.DataSource}
			}
		}
		found, err := p.holdsKey(db, pool, t, pkCols, todo)
		if err != nil {
			return nil, fmt.Errorf("gormplugin: looking for the primary key of a row of %s in %s: %w", table, t, err)
		}
		if found {
			return &t, nil
		}
	}
	return nil, nil
}

// holdsKey reports whether physical table t holds a row with one of keys.
func (p *Plugin) holdsKey(db *gorm.DB, pool gorm.ConnPool, t shardconf.Target, cols []string, keys [][]any) (bool, error) {
	ctx := db.Statement.Context
	if ctx == nil {
		ctx = context.Background()
	}
	s := db.Session(&gorm.Session{NewDB: true, Context: ctx})
	s.Statement.ConnPool = pool
	// Marked as already on its physical table: routing leaves it alone.
	q := s.Set(migrateTargetKey, t).Table(t.Table)
	var or []clause.Expression
	for _, k := range keys {
		and := make([]clause.Expression, len(cols))
		for i, c := range cols {
			and[i] = clause.Eq{Column: clause.Column{Name: c}, Value: k[i]}
		}
		or = append(or, clause.And(and...))
	}
	var n int64
	err := q.Where(clause.Or(or...)).Limit(1).Count(&n).Error
	return n > 0, err
}

// rowKeys reads the primary key of every row a create inserts, in the
// order rowValues reads the rows; nil where a part is zero or missing.
// The key columns are the schema's primary key or, for a map without a
// model, the column the table's key generator fills.
func (p *Plugin) rowKeys(db *gorm.DB, table string) (cols []string, keys [][]any) {
	stmt := db.Statement
	if stmt.Schema != nil {
		cols = stmt.Schema.PrimaryFieldDBNames
	} else if c, _, ok := p.rules.KeyGenerator(table); ok {
		cols = []string{c}
	}
	if len(cols) == 0 {
		return nil, nil
	}
	rv := stmt.ReflectValue
	for (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		for i := 0; i < rv.Len(); i++ {
			keys = append(keys, rowKey(stmt, cols, rv.Index(i)))
		}
		return cols, keys
	}
	return cols, [][]any{rowKey(stmt, cols, rv)}
}

// rowKey reads key columns cols of one row, a model struct or a map; nil
// where a part is zero or missing.
func rowKey(stmt *gorm.Statement, cols []string, row reflect.Value) []any {
	for (row.Kind() == reflect.Pointer || row.Kind() == reflect.Interface) && !row.IsNil() {
		row = row.Elem()
	}
	switch row.Kind() {
	case reflect.Struct:
		if stmt.Schema == nil {
			return nil
		}
		k, _ := primaryKey(stmt, row)
		return k
	case reflect.Map:
		m, ok := row.Interface().(map[string]any)
		if !ok {
			return nil
		}
		vals := map[string]any{}
		for k, v := range m {
			if stmt.Schema != nil {
				if f := stmt.Schema.LookUpField(k); f != nil {
					k = f.DBName
				}
			}
			vals[strings.ToLower(unquote(k))] = v
		}
		key := make([]any, len(cols))
		for i, c := range cols {
			v, ok := vals[strings.ToLower(c)]
			if !ok || isZeroAny(v) {
				return nil
			}
			key[i] = v
		}
		return key
	}
	return nil
}

// refuseKeysElsewhere: a create whose caller-set primary key is already
// in another table of the logic table would put the key in two tables
// (its sharding values differ from the stored row's). A plain INSERT is
// refused as the database refuses a duplicate key (gorm.ErrDuplicatedKey);
// an upsert or INSERT ... DO NOTHING, which would update or keep the
// stored row, with shardconf.ErrShardingKeyChange. Generated keys are
// new, and a key that alone routes the row has one possible table, so
// neither is looked for.
func (p *Plugin) refuseKeysElsewhere(db *gorm.DB, table string, r routed, cols []string, explicit [][]any) {
	stmt := db.Statement
	_, upsert := stmt.Clauses["ON CONFLICT"]
	for _, g := range r.groups {
		var keys [][]any
		for _, i := range g.rows {
			if i < len(explicit) && explicit[i] != nil {
				keys = append(keys, explicit[i])
			}
		}
		if len(keys) == 0 {
			continue
		}
		where, err := p.keyElsewhere(db, table, g.target, cols, keys)
		if err != nil {
			p.fail(db, err)
			return
		}
		if where == nil {
			continue
		}
		if !upsert {
			p.fail(db, fmt.Errorf("%w: gormplugin: a row of %s with this primary key is in %s; this row routes to %s", gorm.ErrDuplicatedKey, table, *where, g.target))
			return
		}
		if len(p.rules.ShardingColumns(table)) == 0 {
			// A table placed by hints only: no column moved the row.
			p.fail(db, hintKeyChange(table, keys[0], *where, g.target))
			return
		}
		p.fail(db, keyChange(table, p.movedValue(db, table, cols, g.rows),
			fmt.Sprintf("an upsert of a row whose primary key %v is in %s, while its sharding values route to %s", fmt.Sprint(keys[0]...), *where, g.target)))
		return
	}
}

// movedValue names, for the error, the sharding column that is not part
// of the primary key (the one that moved the row) and the first row's
// value of it.
func (p *Plugin) movedValue(db *gorm.DB, table string, pkCols []string, rowIdx []int) keyAssign {
	shard := p.rules.ShardingColumns(table)
	col := shard[0]
	for _, c := range shard {
		if !slices.ContainsFunc(pkCols, func(k string) bool { return strings.EqualFold(k, c) }) {
			col = c
			break
		}
	}
	a := keyAssign{column: col, value: "?"}
	if rows, err := rowValues(db, []string{col}); err == nil && len(rowIdx) > 0 && rowIdx[0] < len(rows) {
		a.value = rows[rowIdx[0]][col]
	}
	return a
}

// keyInTwoTables refuses a batch that gives one primary key to rows of
// two tables: no database sees both (over two data sources, or tables of
// one not placed by the key), so each would store its row, and the key
// would name two rows. Rows of one table are left to its primary key.
func keyInTwoTables(table string, r routed) error {
	if len(r.groups) < 2 {
		return nil
	}
	seen := map[string]shardconf.Target{}
	for _, g := range r.groups {
		for _, i := range g.rows {
			if i >= len(r.keys) || r.keys[i] == nil {
				continue
			}
			k := fmt.Sprint(r.keys[i]...)
			if at, ok := seen[k]; ok && at != g.target {
				return fmt.Errorf("%w: gormplugin: the batch gives primary key %s to a row of %s in %s and to one in %s", gorm.ErrDuplicatedKey, k, table, at, g.target)
			}
			seen[k] = g.target
		}
	}
	return nil
}
