package gormplugin

import (
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/migrator"
	"gorm.io/gorm/schema"

	"github.com/shardkey/shardkey/shardconf"
)

// wrapMigrator replaces db.Dialector with one whose migrator prepares
// keyed models before AutoMigrate and CreateTable read them (so their key
// columns are created as plain integer or text columns, not
// bigserial/AUTO_INCREMENT), and creates the physical tables of sharded
// and broadcast models in their data sources instead of the logic table.
//
// GORM reaches the migrator only through Dialector.Migrator (db.Migrator
// and the migrator's own nested calls), so the dialector is the one place
// to hook it. Every other Dialector method is the original's; the
// optional interfaces GORM looks for on a dialector (savepoints, error
// translation) are forwarded.
func (p *Plugin) wrapMigrator(db *gorm.DB) {
	if d, ok := db.Dialector.(*keyDialector); ok && d.p == p {
		return
	}
	db.Dialector = &keyDialector{Dialector: db.Dialector, p: p}
}

// keyDialector is the dialector wrapper installed by wrapMigrator.
type keyDialector struct {
	gorm.Dialector
	p *Plugin
}

// Unwrap returns the driver's own dialector, for code that type-asserts
// db.Dialector (e.g. to *postgres.Dialector).
func (d *keyDialector) Unwrap() gorm.Dialector { return d.Dialector }

// Migrator returns the driver's migrator, wrapped.
func (d *keyDialector) Migrator(db *gorm.DB) gorm.Migrator {
	return keyMigrator{Migrator: d.Dialector.Migrator(db), db: db, p: d.p}
}

// SavePoint forwards gorm.SavePointerDialectorInterface.
func (d *keyDialector) SavePoint(tx *gorm.DB, name string) error {
	if sp, ok := d.Dialector.(gorm.SavePointerDialectorInterface); ok {
		return sp.SavePoint(tx, name)
	}
	return gorm.ErrUnsupportedDriver
}

// RollbackTo forwards gorm.SavePointerDialectorInterface.
func (d *keyDialector) RollbackTo(tx *gorm.DB, name string) error {
	if sp, ok := d.Dialector.(gorm.SavePointerDialectorInterface); ok {
		return sp.RollbackTo(tx, name)
	}
	return gorm.ErrUnsupportedDriver
}

// Translate forwards gorm.ErrorTranslator.
func (d *keyDialector) Translate(err error) error {
	if t, ok := d.Dialector.(gorm.ErrorTranslator); ok {
		return t.Translate(err)
	}
	return err
}

// keyMigrator is the driver's migrator with AutoMigrate and CreateTable
// taking keyed and sharded models into account.
type keyMigrator struct {
	gorm.Migrator
	db *gorm.DB
	p  *Plugin
}

// BuildIndexOptions forwards migrator.BuildIndexOptionsInterface, which
// GORM's migrator type-asserts on db.Migrator() (migrator.go CreateTable
// and CreateIndex).
func (m keyMigrator) BuildIndexOptions(opts []schema.IndexOption, stmt *gorm.Statement) []any {
	if b, ok := m.Migrator.(migrator.BuildIndexOptionsInterface); ok {
		return b.BuildIndexOptions(opts, stmt)
	}
	return nil
}

// migrateTargetKey marks the sessions on which the migrator works on one
// physical table (a shardconf.Target in Statement.Settings, copied to
// every statement the migrator derives from the session). Statements
// carrying it are already on their physical table and data source: the
// migrator does not spread them again, and routing must leave them alone.
const migrateTargetKey = "shardkey:migrate_target"

// migratingTarget reports whether db is a migrator session on one
// physical table.
func migratingTarget(db *gorm.DB) bool {
	if db == nil || db.Statement == nil {
		return false
	}
	_, ok := db.Statement.Settings.Load(migrateTargetKey)
	return ok
}

// migrateItem is one value given to AutoMigrate/CreateTable.
type migrateItem struct {
	value   any
	targets []shardconf.Target // set for sharded and broadcast tables
}

// split prepares the models among values and sets apart those whose table
// the rules spread over physical tables.
func (m keyMigrator) split(values []any) (plain []any, spread []migrateItem, err error) {
	seen := map[*schema.Schema]bool{}
	onTarget := migratingTarget(m.db)
	for _, v := range values {
		if _, ok := v.(string); ok {
			plain = append(plain, v)
			continue
		}
		stmt := &gorm.Statement{DB: m.db}
		if m.db.Statement != nil {
			stmt.Table = m.db.Statement.Table
		}
		if err := stmt.ParseWithSpecialTableName(v, stmt.Table); err != nil {
			return nil, nil, err
		}
		m.p.prepareTree(stmt.Schema, seen)
		if !onTarget && m.p.rules != nil && (m.p.rules.IsSharded(stmt.Table) || m.p.rules.IsBroadcast(stmt.Table)) {
			targets, err := m.p.rules.Targets(stmt.Table)
			if err != nil {
				return nil, nil, fmt.Errorf("gormplugin: migrate %s: %w", stmt.Table, err)
			}
			spread = append(spread, migrateItem{value: v, targets: targets})
			continue
		}
		plain = append(plain, v)
	}
	return plain, spread, nil
}

// on returns a session on one physical table in its data source.
func (m keyMigrator) on(t shardconf.Target) (*gorm.DB, error) {
	pool, err := m.p.poolFor(m.db, t.DataSource)
	if err != nil {
		return nil, fmt.Errorf("gormplugin: migrate %s: %w", t, err)
	}
	tx := m.db.Session(&gorm.Session{}).Table(t.Table).Set(migrateTargetKey, t)
	tx.Statement.ConnPool = pool
	return tx, nil
}

// AutoMigrate migrates plain models with the driver's migrator (in the
// dependency order GORM computes) and then every physical table of the
// sharded and broadcast models.
func (m keyMigrator) AutoMigrate(values ...any) error {
	return m.apply("migrate", values, gorm.Migrator.AutoMigrate)
}

// CreateTable creates plain models' tables, and every physical table of
// sharded and broadcast models.
func (m keyMigrator) CreateTable(values ...any) error {
	return m.apply("create", values, gorm.Migrator.CreateTable)
}

// apply runs a migrator operation on the plain models at once, then on
// each physical table of the sharded and broadcast ones.
func (m keyMigrator) apply(verb string, values []any, op func(gorm.Migrator, ...any) error) error {
	plain, spread, err := m.split(values)
	if err != nil {
		return err
	}
	if len(plain) > 0 {
		if err := op(m.Migrator, plain...); err != nil {
			return err
		}
	}
	for _, it := range spread {
		for _, t := range it.targets {
			tx, err := m.on(t)
			if err != nil {
				return err
			}
			if err := op(tx.Migrator(), it.value); err != nil {
				return fmt.Errorf("gormplugin: %s %s: %w", verb, t, err)
			}
		}
	}
	return nil
}
