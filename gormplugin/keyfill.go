package gormplugin

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/shardkey/shardkey/keygen"
)

// The struct tag that opts models out of key fill and fields into it.
const (
	// TagKey is the struct tag key the plugin reads.
	TagKey = "shardkey"
	// TagOptOut on a model's primary key field (`shardkey:"-"`) leaves the
	// model to GORM: its key is not filled and stays auto-increment. On the
	// column a rule's keyGenerateStrategy names, it stops the plugin from
	// filling that column for the model.
	TagOptOut = "-"
	// TagOptIn on a field that is not the primary key (`shardkey:"key"`)
	// makes the plugin fill it on create.
	TagOptIn = "key"
)

// Callback names, in GORM's callback registry.
const (
	prepareCallback = "shardkey:prepare"
	assignCallback  = "shardkey:assign_key"
)

// keyedModels holds the plugin's per-model key-fill decisions and the set
// of GORM schemas it has adjusted. Its zero value is ready to use (plugin.go
// embeds it by value).
type keyedModels struct {
	// mu serializes the one-time adjustment of cached *schema.Schema
	// values; prepared (a *schema.Schema set) is read without it, and its
	// Store after an adjustment is what orders the adjustment before every
	// later reader.
	mu       sync.Mutex
	prepared sync.Map // *schema.Schema -> struct{}
	plans    sync.Map // planKey -> *keyPlan

	// logic maps the physical tables of sharded rules (lower case) back to
	// their logic table, so that db.Table("t_order_1") fills keys as
	// t_order does. It is written once by registerKeyFill, before any
	// statement runs; so is ambiguous, the physical names of several logic
	// tables.
	logic     map[string]string
	ambiguous map[string]bool

	// intKeys caches whether the plugin's own generator issues int64 keys
	// (probeIntKeys), once known; guarded by probeMu (not mu, which
	// prepareSchema holds while it builds a plan).
	probeMu      sync.Mutex
	intKeys      bool
	intKeysKnown bool
}

type planKey struct {
	schema *schema.Schema
	table  string
}

// keyPlan says which fields of a model (or, without a model, which map
// column) to fill for one table, and with which generator.
type keyPlan struct {
	gen    keygen.Generator
	ids    keygen.IDGenerator // gen as int64 keys (keygen.AsIDGenerator), when an integer field needs them
	fields []*schema.Field
	column string // schema-less statements: the rule's key column
	err    error  // reported when a create needs the plan
}

func (k *keyPlan) empty() bool { return k.err == nil && len(k.fields) == 0 && k.column == "" }

// registerKeyFill registers the key-fill callbacks and wraps the migrator.
func (p *Plugin) registerKeyFill(db *gorm.DB) error {
	if p.rules != nil {
		p.keyed.logic = map[string]string{}
		ambiguous := map[string]bool{}
		for _, t := range p.rules.Tables() {
			if !p.rules.IsSharded(t) {
				continue
			}
			targets, err := p.rules.Targets(t)
			if err != nil {
				continue
			}
			for _, tg := range targets {
				phys := strings.ToLower(tg.Table) // SQLite and MySQL names may be spelled in any case
				if l, ok := p.keyed.logic[phys]; ok && l != t {
					ambiguous[phys] = true
				}
				p.keyed.logic[phys] = t
			}
		}
		for phys := range ambiguous {
			delete(p.keyed.logic, phys)
		}
		p.keyed.ambiguous = ambiguous
	}

	cb := db.Callback()
	if err := cb.Create().Before("*").Register(prepareCallback, p.prepare); err != nil {
		return err
	}
	if err := cb.Query().Before("*").Register(prepareCallback, p.prepare); err != nil {
		return err
	}
	if err := cb.Update().Before("*").Register(prepareCallback, p.prepare); err != nil {
		return err
	}
	if err := cb.Delete().Before("*").Register(prepareCallback, p.prepare); err != nil {
		return err
	}
	if err := cb.Row().Before("*").Register(prepareCallback, p.prepare); err != nil {
		return err
	}
	if err := cb.Raw().Before("*").Register(prepareCallback, p.prepare); err != nil {
		return err
	}
	// Just before gorm:create builds the INSERT, after
	// gorm:save_before_associations: belongs-to parents are saved first,
	// each in a nested Create that runs this chain and gets its key, so a
	// parent's key is issued before its child's. gorm:before_create hooks
	// run earlier and may set keys themselves; a key they set is kept.
	// Has-one/has-many children are saved after gorm:create, with the
	// parent's key in their foreign keys.
	if err := cb.Create().Before("gorm:create").Register(assignCallback, p.assignKeys); err != nil {
		return err
	}
	p.wrapMigrator(db)
	return nil
}

// logicOf maps a physical table of a sharded rule to its logic table.
func (p *Plugin) logicOf(table string) string {
	if l, ok := p.keyed.logic[strings.ToLower(table)]; ok {
		return l
	}
	return table
}

// prepare is the first callback of every chain: it makes sure the
// statement's model has been adjusted (see prepareSchema), so that every
// statement on a model is ordered after that one-time change.
func (p *Plugin) prepare(db *gorm.DB) {
	if s := db.Statement.Schema; s != nil {
		p.prepareSchema(s)
	}
}

// prepareSchema adjusts a cached GORM schema once: every field the plugin
// fills for the schema's own table stops being auto-increment and loses
// its database default. GORM treats an integer primary key as
// auto-increment (schema.go sets HasDefaultValue and AutoIncrement and
// lists it in FieldsWithDefaultDBValue), which would make Create append
// RETURNING "id" and read LastInsertId, and AutoMigrate create a
// bigserial/AUTO_INCREMENT column; without a default the key is an
// ordinary column in the INSERT and in the DDL.
func (p *Plugin) prepareSchema(s *schema.Schema) {
	if _, ok := p.keyed.prepared.Load(s); ok {
		return
	}
	p.keyed.mu.Lock()
	defer p.keyed.mu.Unlock()
	if _, ok := p.keyed.prepared.Load(s); ok {
		return
	}
	plan := p.plan(s, s.Table)
	if plan.err == nil {
		adjust := map[*schema.Field]bool{}
		for _, f := range plan.fields {
			adjust[f] = true
			f.AutoIncrement = false
			f.HasDefaultValue = false
			f.DefaultValueInterface = nil
		}
		if len(adjust) > 0 {
			kept := make([]*schema.Field, 0, len(s.FieldsWithDefaultDBValue))
			for _, f := range s.FieldsWithDefaultDBValue {
				if !adjust[f] {
					kept = append(kept, f)
				}
			}
			s.FieldsWithDefaultDBValue = kept
		}
	}
	p.keyed.prepared.Store(s, struct{}{})
}

// prepareTree prepares s and every schema reachable through its
// relationships (the models AutoMigrate adds on its own).
func (p *Plugin) prepareTree(s *schema.Schema, seen map[*schema.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	p.prepareSchema(s)
	var walk func(rels *schema.Relationships)
	walk = func(rels *schema.Relationships) {
		if rels == nil {
			return
		}
		for _, r := range rels.Relations {
			p.prepareTree(r.FieldSchema, seen)
			if r.JoinTable != nil {
				p.prepareTree(r.JoinTable, seen)
			}
		}
		for _, e := range rels.EmbeddedRelations {
			walk(e)
		}
	}
	walk(&s.Relationships)
}

// plan returns the (cached) key-fill plan of model s (nil for statements
// without a model) on table.
func (p *Plugin) plan(s *schema.Schema, table string) *keyPlan {
	key := planKey{s, table}
	if v, ok := p.keyed.plans.Load(key); ok {
		return v.(*keyPlan)
	}
	v, _ := p.keyed.plans.LoadOrStore(key, p.buildPlan(s, table))
	return v.(*keyPlan)
}

func (p *Plugin) buildPlan(s *schema.Schema, table string) *keyPlan {
	plan := &keyPlan{}
	logic := p.logicOf(table)
	ruleColumn := ""
	if p.rules != nil && logic != "" {
		if col, gen, ok := p.rules.KeyGenerator(logic); ok {
			plan.gen, ruleColumn = gen, col
		}
	}
	if ruleColumn == "" {
		plan.gen = p.gen
	}
	plan.ids, _ = plan.gen.(keygen.IDGenerator)

	if s == nil {
		plan.column = ruleColumn
		return plan
	}
	optIns, err := optInFields(s)
	if err == nil {
		err = p.claimKeyField(plan, s, logic, ruleColumn)
	}
	if err != nil {
		plan.err = err
		return plan
	}
	for _, f := range optIns {
		plan.add(f)
	}
	plan.err = plan.checkFields(s, logic)
	return plan
}

// optInFields is the fields of s tagged TagOptIn; an unknown tag is an
// error.
func optInFields(s *schema.Schema) ([]*schema.Field, error) {
	var optIns []*schema.Field
	for _, f := range s.Fields {
		if f.DBName == "" {
			continue
		}
		switch tag := strings.TrimSpace(f.Tag.Get(TagKey)); tag {
		case "", TagOptOut:
		case TagOptIn:
			optIns = append(optIns, f)
		default:
			return nil, fmt.Errorf("gormplugin: %s.%s: unknown %s tag %q (want %q or %q)",
				s.Name, f.Name, TagKey, tag, TagOptIn, TagOptOut)
		}
	}
	return optIns, nil
}

// claimKeyField adds the field the plan fills without a tag: the rule's
// key column, else a single primary key the plugin's own generator can
// fill (an integer one when its keys are int64, a string one when they are
// not IDs), unless the field opted out.
func (p *Plugin) claimKeyField(plan *keyPlan, s *schema.Schema, logic, ruleColumn string) error {
	if ruleColumn != "" {
		f := s.LookUpField(ruleColumn)
		if f == nil {
			return fmt.Errorf("gormplugin: table %s: key column %q of its keyGenerateStrategy is not a field of %s",
				logic, ruleColumn, s.Name)
		}
		if !optedOut(f) {
			plan.add(f)
		}
		return nil
	}
	if plan.gen == nil || len(s.PrimaryFields) != 1 {
		return nil
	}
	f := s.PrimaryFields[0]
	if optedOut(f) || !f.Creatable {
		return nil
	}
	k := kindOf(f)
	claim := plan.ids == nil && k == kindString
	if k.integer() {
		ok, err := p.probeIntKeys(plan.gen)
		if err != nil {
			return err
		}
		claim = ok && plan.intKeys()
	}
	if claim {
		plan.add(f)
	}
	return nil
}

// add adds f to the fields the plan fills, once.
func (k *keyPlan) add(f *schema.Field) {
	if !slices.Contains(k.fields, f) {
		k.fields = append(k.fields, f)
	}
}

// checkFields reports a field the plan cannot fill: any, without a
// generator; one whose type the generator's keys do not fit.
func (k *keyPlan) checkFields(s *schema.Schema, logic string) error {
	if len(k.fields) > 0 && k.gen == nil {
		return fmt.Errorf("gormplugin: %s.%s has the %s:%q tag but table %s has no key generator (give New props or WithGenerator)",
			s.Name, k.fields[0].Name, TagKey, TagOptIn, logic)
	}
	for _, f := range k.fields {
		kind := kindOf(f)
		if kind == kindOther || (kind.integer() && !k.intKeys()) {
			return fmt.Errorf("gormplugin: %s.%s: a %s key generator cannot fill a field of type %s",
				s.Name, f.Name, k.gen.Type(), f.FieldType)
		}
	}
	return nil
}

// intKeys reports whether the plan's generator can fill integer fields,
// setting ids if it was not yet set: an IDGenerator, or a custom generator
// whose NextKey returns int64 (a key of another type fails the create with
// keygen.ErrNotInt64). UUID's string keys cannot.
func (k *keyPlan) intKeys() bool {
	if k.ids == nil {
		k.ids, _ = keygen.AsIDGenerator(k.gen)
	}
	return k.ids != nil
}

// probeIntKeys reports whether gen, the plugin's own generator, issues
// int64 keys, so that it claims a model's integer primary key without a tag
// or rule. Built-in generators say so by their type; a custom one
// (keygen.Register) is asked for one key, which is then skipped: a custom
// generator of string keys given plugin-wide leaves integer primary keys
// to the database, as before custom int64 keys were filled. Only a known
// answer is cached; a failed probe fails the create.
func (p *Plugin) probeIntKeys(gen keygen.Generator) (bool, error) {
	if _, native := gen.(keygen.IDGenerator); native {
		return true, nil
	}
	if _, ok := keygen.AsIDGenerator(gen); !ok {
		return false, nil
	}
	p.keyed.probeMu.Lock()
	defer p.keyed.probeMu.Unlock()
	if p.keyed.intKeysKnown {
		return p.keyed.intKeys, nil
	}
	key, err := gen.NextKey(context.Background())
	if err != nil {
		return false, fmt.Errorf("gormplugin: asking the %s key generator for a key to learn its type: %w", gen.Type(), err)
	}
	switch key.(type) {
	case int64, keygen.ID:
		p.keyed.intKeys = true
	}
	p.keyed.intKeysKnown = true
	return p.keyed.intKeys, nil
}

func optedOut(f *schema.Field) bool { return strings.TrimSpace(f.Tag.Get(TagKey)) == TagOptOut }

type fieldKind int

const (
	kindOther fieldKind = iota
	kindInt
	kindUint
	kindString
)

func (k fieldKind) integer() bool { return k == kindInt || k == kindUint }

// kindOf classifies a field by what a key can be stored in: 64-bit
// integers (int64, keygen.ID, uint64, and int/uint on 64-bit platforms),
// strings, or pointers to them.
func kindOf(f *schema.Field) fieldKind {
	switch f.IndirectFieldType.Kind() {
	case reflect.Int64:
		return kindInt
	case reflect.Int:
		if strconv.IntSize == 64 {
			return kindInt
		}
	case reflect.Uint64:
		return kindUint
	case reflect.Uint:
		if strconv.IntSize == 64 {
			return kindUint
		}
	case reflect.String:
		return kindString
	}
	return kindOther
}

// fillSliceIDs fills the zero int64 keys of a slice of rows in one pass,
// from one NextIDs call per key field that reserves a key for every row
// (keys left unused by rows that had one leave gaps, which is harmless).
func (p *Plugin) fillSliceIDs(ctx context.Context, plan *keyPlan, rv reflect.Value) error {
	n := rv.Len()
	ids := make([]int64, n)
	for _, f := range plan.fields {
		reserved := false
		k := 0
		for i := 0; i < n; i++ {
			r := rv.Index(i)
			for r.Kind() == reflect.Ptr || r.Kind() == reflect.Interface {
				if r.IsNil() {
					break // GORM's to reject
				}
				r = r.Elem()
			}
			if r.Kind() != reflect.Struct {
				continue
			}
			v := f.ReflectValueOf(ctx, r)
			if !isZeroKey(v) {
				continue
			}
			if !reserved {
				if err := plan.ids.NextIDs(ctx, ids); err != nil {
					return fmt.Errorf("gormplugin: generate %s.%s: %w", f.Schema.Name, f.Name, err)
				}
				reserved = true
			}
			if !v.CanSet() {
				return fmt.Errorf("gormplugin: cannot set %s.%s: create with a pointer (db.Create(&v)): %w",
					f.Schema.Name, f.Name, gorm.ErrInvalidValue)
			}
			if err := setIntKey(v, ids[k]); err != nil {
				return fmt.Errorf("gormplugin: %s.%s: %w", f.Schema.Name, f.Name, err)
			}
			k++
		}
	}
	return nil
}

// setIntKey is setKey for an int64 key, without boxing it.
func setIntKey(v reflect.Value, id int64) error {
	for v.Kind() == reflect.Ptr {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		v.SetInt(id)
		return nil
	case reflect.Uint, reflect.Uint64:
		if id < 0 {
			return fmt.Errorf("%w: negative key %d", errKeyType, id)
		}
		v.SetUint(uint64(id))
		return nil
	case reflect.String:
		v.SetString(strconv.FormatInt(id, 10))
		return nil
	}
	return fmt.Errorf("%w: int64 key for a %s field", errKeyType, v.Type())
}

// fillKeysNow fills the keys of the rows a create statement is about to
// insert, at once: routing calls it before GORM's chain reaches
// shardkey:assign_key, because it routes rows by their keys. Keys it sets
// are kept by the later callback (a non-zero key is never replaced).
func (p *Plugin) fillKeysNow(db *gorm.DB) { p.assignKeys(db) }

// assignKeys fills zero keys of the rows being created (shardkey:assign_key).
func (p *Plugin) assignKeys(db *gorm.DB) {
	if db.Error != nil {
		return
	}
	stmt := db.Statement
	if stmt.Schema != nil {
		p.prepareSchema(stmt.Schema) // normally done by shardkey:prepare
	}
	plan := p.plan(stmt.Schema, stmt.Table)
	if plan.empty() {
		return
	}
	if plan.err != nil {
		db.AddError(plan.err)
		return
	}
	ctx := stmt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	var err error
	switch dest := stmt.Dest.(type) {
	case map[string]any:
		err = p.fillMaps(ctx, plan, stmt.Schema, []map[string]any{dest})
	case *map[string]any:
		if *dest == nil {
			*dest = map[string]any{}
		}
		err = p.fillMaps(ctx, plan, stmt.Schema, []map[string]any{*dest})
	case []map[string]any:
		err = p.fillMaps(ctx, plan, stmt.Schema, dest)
	case *[]map[string]any:
		err = p.fillMaps(ctx, plan, stmt.Schema, *dest)
	default:
		if len(plan.fields) == 0 {
			return
		}
		err = p.fillModels(ctx, plan, stmt.ReflectValue)
	}
	if err != nil {
		db.AddError(err)
	}
}

// fillModels fills the keys of a model struct or of a slice or array of
// them (or of pointers to them).
func (p *Plugin) fillModels(ctx context.Context, plan *keyPlan, rv reflect.Value) error {
	switch rv.Kind() {
	case reflect.Struct:
		return p.fillRows(ctx, plan, []reflect.Value{rv})
	case reflect.Slice, reflect.Array:
		if plan.ids != nil {
			// int64 keys: two passes over the rows, no per-row slices.
			return p.fillSliceIDs(ctx, plan, rv)
		}
		rows := make([]reflect.Value, 0, rv.Len())
		for i := 0; i < rv.Len(); i++ {
			row := rv.Index(i)
			for row.Kind() == reflect.Ptr || row.Kind() == reflect.Interface {
				if row.IsNil() {
					break
				}
				row = row.Elem()
			}
			if row.Kind() == reflect.Struct {
				rows = append(rows, row)
			}
			// Anything else (a nil element) is GORM's to reject.
		}
		return p.fillRows(ctx, plan, rows)
	}
	return nil
}

// fillRows fills each keyed field that is zero in rows, one generator
// batch per field.
func (p *Plugin) fillRows(ctx context.Context, plan *keyPlan, rows []reflect.Value) error {
	for _, f := range plan.fields {
		targets := make([]reflect.Value, 0, len(rows))
		for _, row := range rows {
			v := f.ReflectValueOf(ctx, row)
			if isZeroKey(v) {
				if !v.CanSet() {
					return fmt.Errorf("gormplugin: cannot set %s.%s: create with a pointer (db.Create(&v)): %w",
						f.Schema.Name, f.Name, gorm.ErrInvalidValue)
				}
				targets = append(targets, v)
			}
		}
		if len(targets) == 0 {
			continue
		}
		if plan.ids != nil && len(targets) > 1 {
			// A batch of int64 keys: one NextIDs, set without boxing each key.
			ids := make([]int64, len(targets))
			if err := plan.ids.NextIDs(ctx, ids); err != nil {
				return fmt.Errorf("gormplugin: generate %s.%s: %w", f.Schema.Name, f.Name, err)
			}
			for i, v := range targets {
				if err := setKey(v, ids[i]); err != nil {
					return fmt.Errorf("gormplugin: %s.%s: %w", f.Schema.Name, f.Name, err)
				}
			}
			continue
		}
		keys, err := p.generate(ctx, plan, len(targets))
		if err != nil {
			return fmt.Errorf("gormplugin: generate %s.%s: %w", f.Schema.Name, f.Name, err)
		}
		for i, v := range targets {
			if err := setKey(v, keys[i]); err != nil {
				return fmt.Errorf("gormplugin: %s.%s: %w", f.Schema.Name, f.Name, err)
			}
		}
	}
	return nil
}

// fillMaps fills keys of map creates (db.Model(&T{}).Create(map...)) and
// writes them back into the maps, as values of the field's Go type.
func (p *Plugin) fillMaps(ctx context.Context, plan *keyPlan, s *schema.Schema, maps []map[string]any) error {
	type column struct {
		field *schema.Field // nil without a model
		name  string
	}
	var cols []column
	for _, f := range plan.fields {
		cols = append(cols, column{f, f.DBName})
	}
	if len(cols) == 0 && plan.column != "" {
		cols = append(cols, column{nil, plan.column})
	}
	for _, c := range cols {
		var (
			missing []map[string]any
			keys    []string
		)
		for _, m := range maps {
			if m == nil {
				continue
			}
			k, v, found := mapEntry(m, s, c.field, c.name)
			if found && !isZeroAny(v) {
				continue
			}
			missing = append(missing, m)
			keys = append(keys, k)
		}
		if len(missing) == 0 {
			continue
		}
		gen, err := p.generate(ctx, plan, len(missing))
		if err != nil {
			return fmt.Errorf("gormplugin: generate %s: %w", c.name, err)
		}
		for i, m := range missing {
			v := gen[i]
			if c.field != nil {
				fv := reflect.New(c.field.FieldType).Elem()
				if err := setKey(fv, v); err != nil {
					return fmt.Errorf("gormplugin: %s.%s: %w", c.field.Schema.Name, c.field.Name, err)
				}
				m[keys[i]] = fv.Interface()
			} else {
				m[keys[i]] = v
			}
		}
	}
	return nil
}

// mapEntry finds the entry of m that names field (by field name or column
// name, as GORM's ConvertMapToValuesForCreate resolves keys), else the
// column name to add.
func mapEntry(m map[string]any, s *schema.Schema, field *schema.Field, column string) (key string, value any, found bool) {
	if v, ok := m[column]; ok {
		return column, v, true
	}
	if field != nil {
		if v, ok := m[field.Name]; ok {
			return field.Name, v, true
		}
		for k, v := range m {
			if s != nil && s.LookUpField(k) == field {
				return k, v, true
			}
		}
	}
	return column, nil, false
}

// generate returns n keys: int64 values from one NextIDs call when the
// generator issues IDs, else n NextKey values.
func (p *Plugin) generate(ctx context.Context, plan *keyPlan, n int) ([]any, error) {
	out := make([]any, n)
	if plan.ids != nil {
		if n == 1 {
			id, err := plan.ids.NextID(ctx)
			if err != nil {
				return nil, err
			}
			out[0] = id
			return out, nil
		}
		ids := make([]int64, n)
		if err := plan.ids.NextIDs(ctx, ids); err != nil {
			return nil, err
		}
		for i, id := range ids {
			out[i] = id
		}
		return out, nil
	}
	for i := range out {
		k, err := plan.gen.NextKey(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = k
	}
	return out, nil
}

var errKeyType = errors.New("key does not fit the field")

// setKey stores key (int64 from an IDGenerator, or whatever NextKey
// returned) in v, allocating pointers.
func setKey(v reflect.Value, key any) error {
	for v.Kind() == reflect.Ptr {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch k := key.(type) {
	case int64:
		switch v.Kind() {
		case reflect.Int, reflect.Int64:
			v.SetInt(k)
			return nil
		case reflect.Uint, reflect.Uint64:
			if k < 0 {
				return fmt.Errorf("%w: negative key %d", errKeyType, k)
			}
			v.SetUint(uint64(k))
			return nil
		case reflect.String:
			v.SetString(strconv.FormatInt(k, 10))
			return nil
		}
	case keygen.ID:
		return setKey(v, int64(k))
	case int:
		return setKey(v, int64(k))
	case string:
		if v.Kind() == reflect.String {
			v.SetString(k)
			return nil
		}
	}
	return fmt.Errorf("%w: %T key for a %s field", errKeyType, key, v.Type())
}

// isZeroKey reports whether a key field holds no key (nil or zero).
func isZeroKey(v reflect.Value) bool {
	for v.Kind() == reflect.Ptr {
		if v.IsNil() {
			return true
		}
		v = v.Elem()
	}
	return v.IsZero()
}

func isZeroAny(x any) bool {
	if x == nil {
		return true
	}
	return isZeroKey(reflect.ValueOf(x))
}
