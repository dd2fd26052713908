package gormplugin

import (
	"fmt"
	"reflect"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// Association writes: refused outside a transaction when they take
// several statements, and run in a transaction of the plugin's own when
// GORM would run them without one.

// refuseAssociationWrite: association mode (Association(...).Append,
// Replace) saves the new rows of a has-one/has-many association and then,
// for Replace, detaches the old ones (their foreign key set to NULL) in a
// second statement, which on a sharded table is refused (a key change,
// or no sharding key). Outside a transaction the first statement would
// have been committed by then, so association writes to a sharded table
// must run in one (db.Transaction), where the refusal rolls both back.
func (p *Plugin) refuseAssociationWrite(db *gorm.DB) error {
	stmt := db.Statement
	if stmt.Schema == nil || !changesAreModel(stmt) || len(stmt.Selects) == 0 {
		return nil
	}
	if _, inTx := stmt.ConnPool.(gorm.TxCommitter); inTx {
		return nil
	}
	for _, name := range stmt.Selects {
		rel, ok := stmt.Schema.Relationships.Relations[name]
		if !ok || rel.FieldSchema == nil {
			continue
		}
		if rel.Type != schema.HasOne && rel.Type != schema.HasMany {
			continue
		}
		if p.rules.IsSharded(rel.FieldSchema.Table) || p.rules.IsBroadcast(rel.FieldSchema.Table) {
			return fmt.Errorf("%w: association %s of %s writes sharded table %s in several statements; run Append/Replace inside db.Transaction (a refusal then rolls back every statement)", ErrUnsupported, name, stmt.Schema.Table, rel.FieldSchema.Table)
		}
	}
	return nil
}

// ownTxKey marks a statement run in a transaction the plugin began (see
// beginOwnTx); its value is the pool to return to afterwards.
const ownTxKey = "shardkey:own_tx"

// beginOwnTx: with SkipDefaultTransaction GORM runs a create or update
// and its association saves without a transaction, so a refusal of a
// later statement (an association saved first, then the row refused)
// would leave the earlier ones written. A routed write that saves
// associations, outside a transaction, runs in one the plugin begins on
// the routed data source and ends after GORM's last callback
// (endOwnTx): committed, or rolled back on any error.
//
// A write over several data sources (WithTwoPhaseCommit) runs in one too.
func (p *Plugin) beginOwnTx(db *gorm.DB, create bool) {
	if db.Error != nil || !db.Config.SkipDefaultTransaction || db.DryRun {
		return
	}
	if r, _ := routedOf(db); !r.spans && !p.savesShardedAssociations(db.Statement, create) {
		return
	}
	if _, inTx := db.Statement.ConnPool.(gorm.TxCommitter); inTx {
		return
	}
	r, _ := routedOf(db)
	was := db.Statement.ConnPool
	tx := db.Session(&gorm.Session{NewDB: true}).Begin()
	if tx.Error != nil {
		p.fail(db, tx.Error)
		return
	}
	db.Statement.ConnPool = tx.Statement.ConnPool
	db.InstanceSet(ownTxKey, was)
	if len(r.targets) > 0 && !r.multiSource && tpOf(db.Statement.ConnPool) == nil {
		p.txSources.Store(db.Statement.ConnPool, r.targets[0].DataSource)
	}
}

// endOwnTx commits or rolls back the transaction beginOwnTx began.
func (p *Plugin) endOwnTx(db *gorm.DB) {
	v, ok := db.InstanceGet(ownTxKey)
	if !ok {
		return
	}
	tx, ok := db.Statement.ConnPool.(gorm.TxCommitter)
	if !ok {
		return
	}
	p.txSources.Delete(db.Statement.ConnPool)
	var err error
	if db.Error != nil {
		err = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	if err != nil && db.Error == nil {
		_ = db.AddError(err)
	}
	if was, ok := v.(gorm.ConnPool); ok {
		db.Statement.ConnPool = was
	}
}

// savesShardedAssociations reports whether GORM will save associations
// of the rows a create or update writes (a relationship field that is set
// and not left out by Select/Omit), the row's table or the association's
// being sharded or broadcast.
func (p *Plugin) savesShardedAssociations(stmt *gorm.Statement, create bool) bool {
	if stmt.Schema == nil || len(stmt.Schema.Relationships.Relations) == 0 {
		return false
	}
	sharded := func(t string) bool { return p.rules.IsSharded(t) || p.rules.IsBroadcast(t) || p.logicOf(t) != t }
	selected, restricted := stmt.SelectAndOmitColumns(create, !create)
	rows := createRows(stmt)
	if !create {
		rows = nil
		if mv := reflect.Indirect(reflect.ValueOf(stmt.Model)); mv.Kind() == reflect.Struct {
			rows = []reflect.Value{mv}
		}
	}
	for _, rel := range stmt.Schema.Relationships.Relations {
		if rel.Field == nil || rel.Field.Schema != stmt.Schema {
			// GORM's back-reference to a parent's has-one/has-many
			// ("_Parent_Field"): its field is the parent's, not this row's.
			continue
		}
		if v, ok := selected[rel.Name]; (ok && !v) || (!ok && restricted) {
			continue
		}
		if rel.FieldSchema == nil || !sharded(stmt.Table) && !sharded(rel.FieldSchema.Table) {
			continue
		}
		for _, row := range rows {
			if row.Kind() == reflect.Struct {
				if _, zero := rel.Field.ValueOf(stmt.Context, row); !zero {
					return true
				}
			}
		}
	}
	return false
}
