package gormplugin

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

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
	if t := tpOf(tx.Statement.ConnPool); t != nil {
		return t.savePoint(tx.Statement.Context, name) // on every branch (twophase_tx.go)
	}
	if sp, ok := d.Dialector.(gorm.SavePointerDialectorInterface); ok {
		return sp.SavePoint(tx, name)
	}
	return gorm.ErrUnsupportedDriver
}

// RollbackTo forwards gorm.SavePointerDialectorInterface.
func (d *keyDialector) RollbackTo(tx *gorm.DB, name string) error {
	if t := tpOf(tx.Statement.ConnPool); t != nil {
		return t.rollbackTo(tx.Statement.Context, name)
	}
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
	logic   string
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
			if err := m.refuseHint(stmt.Table); err != nil {
				return nil, nil, err
			}
			targets, err := m.p.rules.Targets(stmt.Table)
			if err != nil {
				return nil, nil, fmt.Errorf("gormplugin: migrate %s: %w", stmt.Table, err)
			}
			spread = append(spread, migrateItem{value: v, logic: stmt.Table, targets: targets})
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
			m.physIndexes(tx, it.value, it.logic, t.Table) // explicit index names made the table's own
			if err := op(tx.Migrator(), it.value); err != nil {
				return fmt.Errorf("gormplugin: %s %s: %w", verb, t, err)
			}
		}
	}
	return nil
}

// The Migrator's table, column and index operations on a sharded or
// broadcast model (or its logic table's name) act on every physical
// table, each in its data source. A question ("has") is answered yes
// only when every physical table says yes: a set of tables migrated
// half way has not got the column. Operations that would describe one
// table (ColumnTypes, GetIndexes, TableType) or rename the logic table
// are refused: ask db.Table("<physical table>").Migrator() instead.

// spreadOf returns the physical tables of value's table when the rules
// spread it, and the logic table's name.
func (m keyMigrator) spreadOf(value any) (string, []shardconf.Target, error) {
	if migratingTarget(m.db) || m.p.rules == nil {
		return "", nil, nil
	}
	table, ok := value.(string)
	if !ok {
		stmt := &gorm.Statement{DB: m.db}
		if m.db.Statement != nil {
			stmt.Table = m.db.Statement.Table
		}
		if err := stmt.ParseWithSpecialTableName(value, stmt.Table); err != nil {
			return "", nil, err
		}
		table = stmt.Table
	}
	if !m.p.rules.IsSharded(table) && !m.p.rules.IsBroadcast(table) {
		return "", nil, nil
	}
	if err := m.refuseHint(table); err != nil {
		return "", nil, err
	}
	ts, err := m.p.rules.Targets(table)
	if err != nil {
		return "", nil, fmt.Errorf("gormplugin: migrator on %s: %w", table, err)
	}
	return table, ts, nil
}

// refuseHint refuses DDL whose context carries a hint reaching table: DDL
// runs on every physical table, so the hint could only be ignored, and a
// hint is never silently ignored (sqlhook refuses it alike).
func (m keyMigrator) refuseHint(table string) error {
	if m.db.Statement == nil || !shardconf.HintReaches(m.db.Statement.Context, table) {
		return nil
	}
	return fmt.Errorf("%w: DDL on %s runs on every physical table; the context's hint (shardconf.WithHint) cannot narrow it: run it without one",
		ErrUnsupported, table)
}

// onEach runs op on every physical table of value's table; spread is
// false when the rules do not spread it (op has not run).
func (m keyMigrator) onEach(verb string, value any, op func(mg gorm.Migrator, v any, pi physIndexes) error) (spread bool, err error) {
	logic, ts, err := m.spreadOf(value)
	if err != nil || ts == nil {
		return false, err
	}
	for _, t := range ts {
		tx, err := m.on(t)
		if err != nil {
			return true, err
		}
		v := value
		if _, ok := value.(string); ok {
			v = t.Table
		}
		pi := m.physIndexes(tx, value, logic, t.Table)
		if err := op(tx.Migrator(), v, pi); err != nil {
			return true, fmt.Errorf("gormplugin: %s %s: %w", verb, t, err)
		}
	}
	return true, nil
}

// allOf asks every physical table; ok false when value is not spread.
func (m keyMigrator) allOf(value any, ask func(mg gorm.Migrator, v any, pi physIndexes) bool) (answer, ok bool) {
	answer = true
	spread, err := m.onEach("ask", value, func(mg gorm.Migrator, v any, pi physIndexes) error {
		if !ask(mg, v, pi) {
			answer = false
		}
		return nil
	})
	if err != nil {
		return false, true
	}
	return answer, spread
}

// HasTable reports whether every physical table of a spread model exists.
func (m keyMigrator) HasTable(value any) bool {
	if has, ok := m.allOf(value, func(mg gorm.Migrator, v any, _ physIndexes) bool { return mg.HasTable(v) }); ok {
		return has
	}
	return m.Migrator.HasTable(value)
}

// DropTable drops every physical table of spread models, then the plain
// ones (which spread tables may reference).
func (m keyMigrator) DropTable(values ...any) error {
	var plain []any
	for _, v := range values {
		spread, err := m.onEach("drop table", v, func(mg gorm.Migrator, v any, _ physIndexes) error { return mg.DropTable(v) })
		if err != nil {
			return err
		}
		if !spread {
			plain = append(plain, v)
		}
	}
	if len(plain) == 0 {
		return nil
	}
	return m.Migrator.DropTable(plain...)
}

// RenameTable is refused for a spread table: its physical tables' names
// come from the rules.
func (m keyMigrator) RenameTable(oldName, newName any) error {
	for _, v := range []any{oldName, newName} {
		if logic, ts, err := m.spreadOf(v); err != nil || ts != nil {
			return errors.Join(err, fmt.Errorf("%w: RenameTable of sharded table %s: its physical tables are named by the rules", ErrUnsupported, logic))
		}
	}
	return m.Migrator.RenameTable(oldName, newName)
}

// AddColumn adds the column to every physical table.
func (m keyMigrator) AddColumn(value any, field string) error {
	return m.each("add column", value, func(mg gorm.Migrator, v any, _ physIndexes) error { return mg.AddColumn(v, field) },
		func() error { return m.Migrator.AddColumn(value, field) })
}

// DropColumn drops the column from every physical table.
func (m keyMigrator) DropColumn(value any, name string) error {
	return m.each("drop column", value, func(mg gorm.Migrator, v any, _ physIndexes) error { return mg.DropColumn(v, name) },
		func() error { return m.Migrator.DropColumn(value, name) })
}

// AlterColumn alters the column in every physical table.
func (m keyMigrator) AlterColumn(value any, field string) error {
	return m.each("alter column", value, func(mg gorm.Migrator, v any, _ physIndexes) error { return mg.AlterColumn(v, field) },
		func() error { return m.Migrator.AlterColumn(value, field) })
}

// RenameColumn renames the column in every physical table.
func (m keyMigrator) RenameColumn(value any, oldName, newName string) error {
	return m.each("rename column", value, func(mg gorm.Migrator, v any, _ physIndexes) error { return mg.RenameColumn(v, oldName, newName) },
		func() error { return m.Migrator.RenameColumn(value, oldName, newName) })
}

// HasColumn reports whether every physical table has the column.
func (m keyMigrator) HasColumn(value any, field string) bool {
	if has, ok := m.allOf(value, func(mg gorm.Migrator, v any, _ physIndexes) bool { return mg.HasColumn(v, field) }); ok {
		return has
	}
	return m.Migrator.HasColumn(value, field)
}

// CreateIndex creates the index on every physical table, under that
// table's name for it (physIndexes).
func (m keyMigrator) CreateIndex(value any, name string) error {
	return m.each("create index", value, func(mg gorm.Migrator, v any, pi physIndexes) error { return mg.CreateIndex(v, pi.name(name)) },
		func() error { return m.Migrator.CreateIndex(value, name) })
}

// DropIndex drops the index from every physical table.
func (m keyMigrator) DropIndex(value any, name string) error {
	return m.each("drop index", value, func(mg gorm.Migrator, v any, pi physIndexes) error { return mg.DropIndex(v, pi.name(name)) },
		func() error { return m.Migrator.DropIndex(value, name) })
}

// HasIndex reports whether every physical table has the index.
func (m keyMigrator) HasIndex(value any, name string) bool {
	if has, ok := m.allOf(value, func(mg gorm.Migrator, v any, pi physIndexes) bool { return mg.HasIndex(v, pi.name(name)) }); ok {
		return has
	}
	return m.Migrator.HasIndex(value, name)
}

// RenameIndex renames the index on every physical table.
func (m keyMigrator) RenameIndex(value any, oldName, newName string) error {
	return m.each("rename index", value, func(mg gorm.Migrator, v any, pi physIndexes) error {
		return mg.RenameIndex(v, pi.name(oldName), pi.name(newName))
	}, func() error { return m.Migrator.RenameIndex(value, oldName, newName) })
}

// ColumnTypes is refused for a spread model: each physical table has its
// own.
func (m keyMigrator) ColumnTypes(value any) ([]gorm.ColumnType, error) {
	if err := m.refuseOne("ColumnTypes", value); err != nil {
		return nil, err
	}
	return m.Migrator.ColumnTypes(value)
}

// GetIndexes is refused for a spread model: each physical table has its
// own.
func (m keyMigrator) GetIndexes(value any) ([]gorm.Index, error) {
	if err := m.refuseOne("GetIndexes", value); err != nil {
		return nil, err
	}
	return m.Migrator.GetIndexes(value)
}

// TableType is refused for a spread model: each physical table has its
// own.
func (m keyMigrator) TableType(value any) (gorm.TableType, error) {
	if err := m.refuseOne("TableType", value); err != nil {
		return nil, err
	}
	return m.Migrator.TableType(value)
}

// CreateConstraint, DropConstraint and HasConstraint are refused for a
// spread model: constraint names (a unique constraint's index on
// PostgreSQL, a foreign key's on MySQL) would need one name per table.
func (m keyMigrator) CreateConstraint(value any, name string) error {
	if err := m.refuseOne("CreateConstraint", value); err != nil {
		return err
	}
	return m.Migrator.CreateConstraint(value, name)
}

// DropConstraint: see CreateConstraint.
func (m keyMigrator) DropConstraint(value any, name string) error {
	if err := m.refuseOne("DropConstraint", value); err != nil {
		return err
	}
	return m.Migrator.DropConstraint(value, name)
}

// HasConstraint: see CreateConstraint; false for a spread model.
func (m keyMigrator) HasConstraint(value any, name string) bool {
	if m.refuseOne("HasConstraint", value) != nil {
		return false
	}
	return m.Migrator.HasConstraint(value, name)
}

func (m keyMigrator) refuseOne(what string, value any) error {
	logic, ts, err := m.spreadOf(value)
	if err != nil {
		return err
	}
	if ts != nil {
		return fmt.Errorf("%w: Migrator().%s on sharded table %s; ask a physical table: db.Table(%q).Migrator()", ErrUnsupported, what, logic, ts[0].Table)
	}
	return nil
}

// each runs op on every physical table of a spread value, else plain.
func (m keyMigrator) each(verb string, value any, op func(gorm.Migrator, any, physIndexes) error, plain func() error) error {
	spread, err := m.onEach(verb, value, op)
	if spread || err != nil {
		return err
	}
	return plain()
}

// physIndexes maps the index names a caller gives for a logic table to
// one physical table's: GORM derives index names from the table
// (idx_orders_user_id is idx_orders_1_user_id on orders_1), and on
// PostgreSQL and SQLite, where index names are unique in the whole
// schema, an explicit name is made the physical table's own
// (physIndexName).
type physIndexes struct {
	byLogic map[string]string // the logic schema's index (and field) names
	rename  func(string) string
}

func (pi physIndexes) name(n string) string {
	if p, ok := pi.byLogic[n]; ok {
		return p
	}
	if pi.rename != nil {
		return pi.rename(n)
	}
	return n
}

// schemaWideIndexNames reports whether the database's index names are
// unique per schema rather than per table.
func schemaWideIndexNames(db *gorm.DB) bool {
	switch db.Dialector.Name() {
	case "postgres", "sqlite":
		return true
	}
	return false
}

// physIndexName is the name of an explicitly named index on one
// physical table: the logic table's name in it replaced by the physical
// table's, else the physical table's name appended.
func physIndexName(name, logic, phys string) string {
	if strings.Contains(name, logic) {
		return strings.Replace(name, logic, phys, 1)
	}
	return name + "_" + phys
}

// physIndexes prepares value's schema for one physical table (explicit
// index names made its own where the database needs it) and returns the
// name map.
func (m keyMigrator) physIndexes(tx *gorm.DB, value any, logic, phys string) physIndexes {
	pi := physIndexes{byLogic: map[string]string{}}
	// A physical table named as its logic table (a broadcast table's
	// copy) is alone of its name in its database, and its schema is the
	// model's own: its names stay.
	wide := schemaWideIndexNames(m.db) && !strings.EqualFold(logic, phys)
	if wide {
		pi.rename = func(n string) string { return physIndexName(n, logic, phys) }
	}
	if _, ok := value.(string); ok {
		return pi
	}
	ls := &gorm.Statement{DB: m.db}
	ps := &gorm.Statement{DB: tx}
	if ls.ParseWithSpecialTableName(value, logic) != nil || ps.ParseWithSpecialTableName(value, phys) != nil {
		return pi
	}
	if wide {
		ownIndexNames(ps.Schema, logic, phys)
	}
	for _, f := range ls.Schema.Fields {
		pi.byLogic[f.Name] = f.Name
	}
	li, pis := ls.Schema.ParseIndexes(), ps.Schema.ParseIndexes()
	if len(li) == len(pis) {
		for i := range li {
			pi.byLogic[li[i].Name] = pis[i].Name
		}
	}
	return pi
}

var (
	ownNamesMu   sync.Mutex
	ownNamesDone = map[*schema.Schema]bool{}
)

// ownIndexNames rewrites, once, the explicit index names in the gorm
// tags of a physical table's cached schema (GORM caches one schema per
// model and table name, and reads index names from the tags).
func ownIndexNames(s *schema.Schema, logic, phys string) {
	ownNamesMu.Lock()
	defer ownNamesMu.Unlock()
	if ownNamesDone[s] {
		return
	}
	ownNamesDone[s] = true
	for _, f := range s.Fields {
		old := f.Tag.Get("gorm")
		if old == "" {
			continue
		}
		parts := strings.Split(old, ";")
		changed := false
		for i, part := range parts {
			k, v, ok := strings.Cut(part, ":")
			key := strings.ToUpper(strings.TrimSpace(k))
			if !ok || (key != "INDEX" && key != "UNIQUEINDEX") {
				continue
			}
			name, rest, _ := strings.Cut(v, ",")
			if name == "" {
				continue // derived from the table's name: already its own
			}
			parts[i] = k + ":" + physIndexName(name, logic, phys)
			if rest != "" || strings.Contains(v, ",") {
				parts[i] += "," + rest
			}
			changed = true
		}
		if !changed {
			continue
		}
		tag := string(f.Tag)
		if i := strings.Index(tag, `gorm:"`+old+`"`); i >= 0 {
			f.Tag = reflect.StructTag(tag[:i] + `gorm:"` + strings.Join(parts, ";") + `"` + tag[i+len(`gorm:"`+old+`"`):])
		}
	}
}
