package difftest

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
)

// ReadRow is t_read as a GORM model.
type ReadRow struct {
	ID     int64      `gorm:"column:id;primaryKey;autoIncrement:false"`
	UserID int64      `gorm:"column:user_id"`
	K      int64      `gorm:"column:k"`
	Big    *int64     `gorm:"column:big"`
	Amount *string    `gorm:"column:amount"`
	Score  *float64   `gorm:"column:score"`
	Name   *string    `gorm:"column:name"`
	Label  *string    `gorm:"column:label"`
	Qty    *int64     `gorm:"column:qty"`
	Ts     *time.Time `gorm:"column:ts"`
	Flag   *bool      `gorm:"column:flag"`
}

func (ReadRow) TableName() string { return "t_read" }

// ReadAgg receives grouped and aggregate reads.
type ReadAgg struct {
	G1    *string `gorm:"column:g1"`
	G2    *string `gorm:"column:g2"`
	Cnt   int64   `gorm:"column:cnt"`
	Total *string `gorm:"column:total"`
	Lo    *string `gorm:"column:lo"`
	Hi    *string `gorm:"column:hi"`
	Mean  *string `gorm:"column:mean"`
	Dist  int64   `gorm:"column:dist"`
}

// gormReadGen generates GORM query-builder calls through gormplugin; the
// oracle is the same call through GORM alone. A call naming label runs
// without WithBinaryCollation (label does not compare bytewise), any
// other with it, a quarter of them in GORM's PrepareStmt mode.
type gormReadGen struct {
	w                      *readWorld
	bin, def, prep, oracle *gorm.DB // prep: bin with PrepareStmt
	overHook               bool     // GORM on sqlhook: Raw reads too
}

// newGormOverHookGen reads through GORM opened on sqlhook's *sql.DB (the
// way to run raw SQL on sharded tables under GORM): the builder's SQL and
// Raw both go through sqlhook.
func newGormOverHookGen(t testing.TB, w *readWorld) *gormReadGen {
	t.Helper()
	over := func(conn *sql.DB, prepare bool) *gorm.DB {
		var d gorm.Dialector
		switch w.b.name {
		case "postgres":
			d = postgres.New(postgres.Config{Conn: conn})
		case "mariadb":
			d = mysql.New(mysql.Config{Conn: conn, SkipInitializeWithVersion: true})
		default:
			d = sqlite.Dialector{Conn: conn}
		}
		db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard, PrepareStmt: prepare})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	g := newGormReadGen(t, w)
	g.overHook = true
	g.bin, g.def, g.prep = over(w.binHook, false), over(w.defHook, false), over(w.binHook, true)
	return g
}

func newGormReadGen(t testing.TB, w *readWorld) *gormReadGen {
	t.Helper()
	open := func(dsn string, prepare bool) *gorm.DB {
		db, err := gorm.Open(w.b.dialector(dsn), &gorm.Config{Logger: logger.Discard, PrepareStmt: prepare})
		if err != nil {
			t.Fatal(err)
		}
		pool, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		pool.SetMaxOpenConns(4)
		t.Cleanup(func() { pool.Close() })
		return db
	}
	plugged := func(prepare bool, opts ...gormplugin.Option) *gorm.DB {
		shard := open(w.b.dsn[0], prepare)
		pool0, _ := shard.DB()
		ds1, err := open(w.b.dsn[1], false).DB()
		if err != nil {
			t.Fatal(err)
		}
		r, err := shardconf.NewRouter(w.b.readConfig(t))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, gormplugin.WithRules(r), gormplugin.WithScatter(),
			gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": ds1}))
		if err := shard.Use(gormplugin.New(nil, opts...)); err != nil {
			t.Fatal(err)
		}
		return shard
	}
	return &gormReadGen{w: w, bin: plugged(false, gormplugin.WithBinaryCollation()), def: plugged(false),
		prep: plugged(true, gormplugin.WithBinaryCollation()), oracle: open(w.b.oracle, false)}
}

// gormCond is a Where or Having with its arguments, or a condition
// GORM builds from a map or a struct (cond).
type gormCond struct {
	text string
	args []any
	cond any
}

// genGormCond draws a condition on the sharding columns as GORM users
// write them: named arguments, slices for IN, maps and structs.
func genGormCond(rng *rand.Rand) gormCond {
	u, v, k := int64(1+rng.IntN(9)), int64(rng.IntN(10)), int64(1+rng.IntN(3))
	switch rng.IntN(5) {
	case 0:
		return gormCond{text: "user_id = @u", args: []any{sql.Named("u", u)}}
	case 1:
		return gormCond{text: "user_id IN ?", args: []any{[]int64{u, v}}}
	case 2:
		return gormCond{text: "k = ? AND user_id = ?", args: []any{k, u}}
	case 3:
		return gormCond{cond: map[string]any{"user_id": u}}
	}
	return gormCond{cond: &ReadRow{UserID: u, K: k}} // zero fields are no condition
}

func (c gormCond) apply(tx *gorm.DB) *gorm.DB {
	if c.cond != nil {
		return tx.Where(c.cond)
	}
	return tx.Where(c.text, c.args...)
}

func (c gormCond) String() string {
	switch x := c.cond.(type) {
	case map[string]any:
		return fmt.Sprintf("%v", x)
	case *ReadRow:
		return fmt.Sprintf("&ReadRow{UserID: %d, K: %d}", x.UserID, x.K)
	}
	return fmt.Sprintf("%q%s", c.text, goArgs(c.args))
}

type gormOrder struct {
	col     string
	desc    bool
	collate string // an explicit COLLATE on the key
	column  bool   // given as a clause.OrderByColumn rather than text
}

// text is the Order argument.
func (o gormOrder) text() string {
	t := o.col
	if o.collate != "" {
		t += " COLLATE " + o.collate
	}
	if o.desc {
		t += " DESC"
	}
	return t
}

// gormQ is one generated call chain.
type gormQ struct {
	db       string
	dest     string // rows, first, last, take, count, pluck, agg, aggmaps, maps, batches
	where    []gormCond
	sel      []string // Select columns of the model; nil: every column
	distinct []string
	aggSel   []string // Select of an aggregate read (with aliases)
	kinds    map[string]colKind
	group    []string
	having   *gormCond
	order    []gormOrder
	limit    int
	off      int
	pluck    string
	batch    int
	scan     bool // aggregates read with Scan rather than Find
	prepared bool // through a DB in PrepareStmt mode
}

func (g *gormReadGen) build(rng *rand.Rand) readCase {
	if g.overHook && rng.IntN(4) == 0 {
		return g.rawCase(rng)
	}
	if rng.IntN(16) == 0 {
		return g.trickyCase(rng)
	}
	return g.caseOf(genGormQ(rng, g.w.b.name))
}

func genGormQ(rng *rand.Rand, db string) *gormQ {
	q := &gormQ{db: db, limit: -1, off: -1, kinds: map[string]colKind{}}
	for range rng.IntN(3) {
		if rng.IntN(4) == 0 {
			q.where = append(q.where, genGormCond(rng))
			continue
		}
		p := genPred(rng, db, 1)
		q.where = append(q.where, gormCond{text: p.text, args: p.args})
	}
	q.dest = pick(rng, []string{"rows", "rows", "rows", "first", "last", "take", "count", "pluck", "agg", "agg", "aggmaps",
		"maps", "batches", "distinct", "agg1", "groupcount"})
	q.genDest(rng, db)
	q.prepared = rng.IntN(4) == 0
	for i := range q.order {
		q.order[i].column = rng.IntN(3) == 0
	}
	return q
}

// genDest draws the parts of the call its destination takes.
func (q *gormQ) genDest(rng *rand.Rand, db string) {
	switch q.dest {
	case "rows", "maps":
		if rng.IntN(2) == 0 {
			for _, c := range readCols {
				if rng.IntN(3) == 0 {
					q.sel = append(q.sel, c.name)
				}
			}
		}
		q.genOrder(rng, readCols, 3)
		q.genLimit(rng)
	case "first", "last", "take":
		q.genOrder(rng, readCols, 2)
	case "groupcount":
		q.group = []string{pick(rng, []string{"user_id", "k", "qty", "name", "flag"})}
	case "agg1":
		q.genAgg(rng, db)
		q.group, q.having, q.order, q.limit, q.off = nil, nil, nil, -1, -1
		q.aggSel = slices.DeleteFunc(q.aggSel, func(s string) bool { return strings.Contains(s, " AS g") })
	case "count":
		if rng.IntN(3) == 0 {
			q.distinct = []string{pick(rng, []string{"name", "qty", "user_id", "label"})}
		}
	case "pluck":
		c := pick(rng, readCols)
		q.pluck = c.name
		if rng.IntN(3) == 0 {
			q.distinct = []string{c.name}
		}
		if rng.IntN(2) == 0 {
			q.order = []gormOrder{{col: c.name, desc: rng.IntN(2) == 0}}
			q.genLimit(rng)
		}
	case "distinct":
		for len(q.distinct) == 0 {
			for _, c := range readCols[1:] {
				if rng.IntN(4) == 0 {
					q.distinct = append(q.distinct, c.name)
				}
			}
		}
		var cols []readCol
		for _, d := range q.distinct {
			cols = append(cols, readColNamed(d))
		}
		q.genOrder(rng, cols, 2)
		q.genLimit(rng)
	case "agg", "aggmaps":
		q.genAgg(rng, db)
		q.scan = rng.IntN(2) == 0
	case "batches":
		q.batch = 20 + rng.IntN(60)
	}
}

func (q *gormQ) genOrder(rng *rand.Rand, cols []readCol, n int) {
	if rng.IntN(3) == 0 {
		return
	}
	for range 1 + rng.IntN(n) {
		o := gormOrder{col: pick(rng, cols).name, desc: rng.IntN(2) == 0}
		if o.col == "label" && q.distinct == nil && rng.IntN(3) == 0 {
			o.collate = binaryCollation(q.db)
		}
		q.order = append(q.order, o)
	}
}

func (q *gormQ) genLimit(rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		return
	}
	q.limit = rng.IntN(15)
	if rng.IntN(2) == 0 {
		q.off = rng.IntN(20)
	}
}

// genAgg draws Select(aggregates).Group().Having().Order() into ReadAgg
// or maps.
func (q *gormQ) genAgg(rng *rand.Rand, db string) {
	groupable := []string{"user_id", "k", "qty", "name", "label", "flag"}
	var keys []string
	for i := range rng.IntN(3) {
		g := pick(rng, groupable)
		if slices.Contains(q.group, g) {
			continue
		}
		q.group = append(q.group, g)
		alias := fmt.Sprintf("g%d", i+1)
		q.aggSel = append(q.aggSel, g+" AS "+alias)
		q.kinds[alias] = readColNamed(g).kind
		keys = append(keys, alias)
	}
	q.aggSel = append(q.aggSel, "COUNT(*) AS cnt")
	q.kinds["cnt"] = kInt
	keys = append(keys, "cnt")
	add := func(expr, alias string, k colKind) {
		q.aggSel = append(q.aggSel, expr+" AS "+alias)
		q.kinds[alias] = k
		keys = append(keys, alias)
	}
	if rng.IntN(2) == 0 {
		c := pick(rng, summable(db))
		add("SUM("+c+")", "total", map[bool]colKind{true: kFloat, false: kDecimal}[c == "score"])
	}
	minmax := []string{"qty", "amount", "score", "name", "label", "ts", "id"}
	if rng.IntN(2) == 0 {
		c := pick(rng, minmax)
		add("MIN("+c+")", "lo", readColNamed(c).kind)
	}
	if rng.IntN(2) == 0 {
		c := pick(rng, minmax)
		add("MAX("+c+")", "hi", readColNamed(c).kind)
	}
	if rng.IntN(3) == 0 {
		c := pick(rng, summable(db))
		add("AVG("+c+")", "mean", map[bool]colKind{true: kFloat, false: kDecimal}[c == "score"])
	}
	switch rng.IntN(6) {
	case 0, 1:
		add("COUNT(DISTINCT "+pick(rng, []string{"qty", "name", "user_id", "label"})+")", "dist", kInt)
	case 2: // aggregates inside an expression
		add(pick(rng, []string{"COUNT(*) * 2", "COALESCE(SUM(qty) - MIN(qty), 0)", "COALESCE(MAX(qty), -1) + 1"}), "dist", kInt)
	}
	if len(q.group) == 0 {
		return
	}
	if rng.IntN(3) == 0 {
		h := genHaving(rng, db)
		q.having = &gormCond{text: h.text, args: h.args}
	}
	if rng.IntN(3) > 0 {
		for range 1 + rng.IntN(2) {
			q.order = append(q.order, gormOrder{col: pick(rng, keys), desc: rng.IntN(2) == 0})
		}
		q.genLimit(rng)
	}
}

// chain applies everything but the finisher; full: no Limit/Offset, and
// the Select widened by the order columns.
func (q *gormQ) chain(db *gorm.DB, full bool) *gorm.DB {
	tx := db.Model(&ReadRow{})
	for _, w := range q.where {
		tx = w.apply(tx)
	}
	if q.aggSel != nil {
		tx = tx.Select(strings.Join(q.aggSel, ", "))
	} else if q.sel != nil {
		sel := q.sel
		if full {
			sel = q.widened()
		}
		tx = tx.Select(sel)
	}
	if q.distinct != nil && q.dest != "pluck" {
		args := make([]any, len(q.distinct))
		for i, d := range q.distinct {
			args[i] = d
		}
		tx = tx.Distinct(args...)
	}
	if len(q.group) > 0 {
		tx = tx.Group(strings.Join(q.group, ", "))
	}
	if q.having != nil {
		tx = tx.Having(q.having.text, q.having.args...)
	}
	for _, o := range q.order {
		if o.column && o.collate == "" {
			tx = tx.Order(clause.OrderByColumn{Column: clause.Column{Name: o.col}, Desc: o.desc})
			continue
		}
		tx = tx.Order(o.text())
	}
	if !full {
		if q.limit >= 0 {
			tx = tx.Limit(q.limit)
		}
		if q.off >= 0 {
			tx = tx.Offset(q.off)
		}
	}
	return tx
}

func (q *gormQ) widened() []string {
	sel := slices.Clone(q.sel)
	for _, o := range q.order {
		if !slices.Contains(sel, o.col) {
			sel = append(sel, o.col)
		}
	}
	return sel
}

// describe spells the call as Go.
func (q *gormQ) describe() string {
	var b strings.Builder
	b.WriteString("db.Model(&ReadRow{})")
	for _, w := range q.where {
		fmt.Fprintf(&b, ".Where(%s)", w)
	}
	if q.aggSel != nil {
		fmt.Fprintf(&b, ".Select(%q)", strings.Join(q.aggSel, ", "))
	} else if q.sel != nil {
		fmt.Fprintf(&b, ".Select(%q)", q.sel)
	}
	if q.distinct != nil && q.dest != "pluck" {
		fmt.Fprintf(&b, ".Distinct(%q)", q.distinct)
	}
	if len(q.group) > 0 {
		fmt.Fprintf(&b, ".Group(%q)", strings.Join(q.group, ", "))
	}
	if q.having != nil {
		fmt.Fprintf(&b, ".Having(%q%s)", q.having.text, goArgs(q.having.args))
	}
	for _, o := range q.order {
		if o.column && o.collate == "" {
			fmt.Fprintf(&b, ".Order(clause.OrderByColumn{Column: clause.Column{Name: %q}, Desc: %v})", o.col, o.desc)
			continue
		}
		fmt.Fprintf(&b, ".Order(%q)", o.text())
	}
	if q.limit >= 0 {
		fmt.Fprintf(&b, ".Limit(%d)", q.limit)
	}
	if q.off >= 0 {
		fmt.Fprintf(&b, ".Offset(%d)", q.off)
	}
	switch q.dest {
	case "rows", "distinct":
		b.WriteString(".Find(&[]ReadRow{})")
	case "maps":
		b.WriteString(".Find(&[]map[string]any{})")
	case "first", "last", "take":
		fmt.Fprintf(&b, ".%s%s(&ReadRow{})", strings.ToUpper(q.dest[:1]), q.dest[1:])
	case "count", "groupcount":
		b.WriteString(".Count(&n)")
	case "agg1":
		b.WriteString(".Scan(&ReadAgg{})")
	case "pluck":
		if q.distinct != nil {
			b.WriteString(".Distinct()")
		}
		fmt.Fprintf(&b, ".Pluck(%q, &[]sql.NullString{})", q.pluck)
	case "agg":
		if q.scan {
			b.WriteString(".Scan(&[]ReadAgg{})")
		} else {
			b.WriteString(".Find(&[]ReadAgg{})")
		}
	case "aggmaps":
		b.WriteString(".Find(&[]map[string]any{})")
	case "batches":
		fmt.Fprintf(&b, ".FindInBatches(&[]ReadRow{}, %d, collect)", q.batch)
	}
	return b.String()
}

func goArgs(args []any) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(", " + showVal(a))
	}
	return b.String()
}

// fieldNames are ReadRow's columns in field order.
var fieldNames = func() []string {
	var out []string
	for _, c := range readCols {
		out = append(out, c.name)
	}
	return out
}()

// structRows turns structs into rows: every field, in order.
func structRows(v reflect.Value, mask func(i int) bool) [][]any {
	var out [][]any
	for i := 0; i < v.Len(); i++ {
		out = append(out, structRow(v.Index(i), mask))
	}
	return out
}

func structRow(s reflect.Value, mask func(i int) bool) []any {
	s = reflect.Indirect(s)
	r := make([]any, s.NumField())
	for j := range r {
		f := s.Field(j)
		if mask != nil && mask(j) {
			f = reflect.Zero(f.Type())
		}
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		}
		r[j] = f.Interface()
	}
	return r
}

// mapRows turns maps into rows in the order of their sorted keys.
func mapRows(ms []map[string]any) ([]string, [][]any) {
	keySet := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			keySet[k] = true
		}
	}
	var cols []string
	for k := range keySet {
		cols = append(cols, k)
	}
	sort.Strings(cols)
	var rows [][]any
	for _, m := range ms {
		r := make([]any, len(cols))
		for i, c := range cols {
			r[i] = deref(m[c])
		}
		rows = append(rows, r)
	}
	return cols, rows
}

func deref(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		return rv.Elem().Interface()
	}
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}
