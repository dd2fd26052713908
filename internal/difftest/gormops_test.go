package difftest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// Order is t_order; its items are a has-many association.
type Order struct {
	OrderID int64   `gorm:"column:order_id;primaryKey;autoIncrement:false"`
	UserID  int64   `gorm:"column:user_id"`
	Status  *string `gorm:"column:status"`
	Amount  *int64  `gorm:"column:amount"`
	Note    string  `gorm:"column:note"`
	Items   []Item  `gorm:"foreignKey:OrderID;references:OrderID"`
}

func (Order) TableName() string { return "t_order" }

// OrderPatch is a change set of another type than the model.
type OrderPatch struct {
	UserID int64
	Status *string
	Amount *int64
}

// Item is t_item.
type Item struct {
	ItemID  int64  `gorm:"column:item_id;primaryKey;autoIncrement:false"`
	OrderID *int64 `gorm:"column:order_id"`
	UserID  int64  `gorm:"column:user_id"`
	Qty     *int64 `gorm:"column:qty"`
}

func (Item) TableName() string { return "t_item" }

// Dict is the broadcast table t_dict.
type Dict struct {
	K string  `gorm:"column:k;primaryKey"`
	V *string `gorm:"column:v"`
	N *int64  `gorm:"column:n"`
}

func (Dict) TableName() string { return "t_dict" }

// gormClient writes through GORM with gormplugin: strict and with
// WithScatter; the oracle is GORM without the plugin.
type gormClient struct {
	w                       *world
	strict, scatter, oracle *gorm.DB
}

func (b backend) dialector(dsn string) gorm.Dialector {
	switch b.name {
	case "postgres":
		return postgres.Open(dsn)
	case "mariadb":
		return mysql.Open(dsn)
	}
	return sqlite.Open(dsn)
}

func newGormClient(t testing.TB, w *world) *gormClient {
	t.Helper()
	open := func(dsn string) *gorm.DB {
		db, err := gorm.Open(w.b.dialector(dsn), &gorm.Config{Logger: logger.Discard})
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
	ds1, err := open(w.b.dsn[1]).DB()
	if err != nil {
		t.Fatal(err)
	}
	plugged := func(opts ...gormplugin.Option) *gorm.DB {
		db := open(w.b.dsn[0])
		pool0, _ := db.DB()
		r, err := shardconf.NewRouter(w.b.config(t))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, gormplugin.WithRules(r),
			gormplugin.WithDataSources(map[string]gorm.ConnPool{"ds_0": pool0, "ds_1": ds1}))
		if err := db.Use(gormplugin.New(nil, opts...)); err != nil {
			t.Fatal(err)
		}
		return db
	}
	return &gormClient{w: w, strict: plugged(), scatter: plugged(gormplugin.WithScatter()), oracle: open(w.b.oracle)}
}

// tape carries the keys shardkey generated to the oracle: in record
// mode it reads every registered key after the call, in replay mode it
// sets them before.
type tape struct {
	replay bool
	keys   []int64
	next   int
	ptrs   []*int64
	maps   []map[string]any
}

func (tp *tape) key(p *int64) {
	if tp.replay {
		if tp.next < len(tp.keys) {
			*p = tp.keys[tp.next]
		}
		tp.next++
		return
	}
	tp.ptrs = append(tp.ptrs, p)
	tp.maps = append(tp.maps, nil)
}

// mapKey registers m["order_id"] of a map create.
func (tp *tape) mapKey(m map[string]any) {
	if tp.replay {
		if tp.next < len(tp.keys) {
			m["order_id"] = tp.keys[tp.next]
		}
		tp.next++
		return
	}
	tp.ptrs = append(tp.ptrs, nil)
	tp.maps = append(tp.maps, m)
}

// done records the registered keys (record mode).
func (tp *tape) done() {
	if tp.replay {
		return
	}
	for i, p := range tp.ptrs {
		if p != nil {
			tp.keys = append(tp.keys, *p)
			continue
		}
		k, _ := toInt64(tp.maps[i]["order_id"])
		tp.keys = append(tp.keys, k)
	}
	tp.ptrs, tp.maps = nil, nil
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint64:
		return int64(x), true
	case keygen.ID:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// gormRun is one GORM operation; oracle says which side runs it.
type gormRun func(db *gorm.DB, tp *tape, oracle bool) ([]int64, error)

type gormGen struct {
	h    *harness
	rng  *rand.Rand
	step int
	n    int // rows made so far in the step
}

func (g *gormGen) note() string {
	g.n++
	return fmt.Sprintf("g%d_%d", g.step, g.n)
}

// num carries a sharding value in some Go type.
func (g *gormGen) num(v int64) any {
	switch g.rng.IntN(6) {
	case 0:
		return strconv.FormatInt(v, 10)
	case 1:
		if v >= 0 {
			return uint64(v)
		}
	case 2:
		return keygen.ID(v)
	case 3:
		return int(v)
	}
	return v
}

func (g *gormGen) status() *string {
	if s, ok := pick(g.rng, statuses).(string); ok {
		return &s
	}
	return nil
}

func (g *gormGen) amount() *int64 {
	if a, ok := pick(g.rng, amounts).(int64); ok {
		return &a
	}
	return nil
}

func (c *gormClient) build(h *harness, rng *rand.Rand, step int) op {
	g := &gormGen{h: h, rng: rng, step: step}
	db, handle := c.strict, "strict"
	if rng.IntN(3) == 0 {
		db, handle = c.scatter, "scatter"
	}
	var kind, desc string
	var run gormRun
	if rng.IntN(10) == 0 {
		kind, desc, run = g.tx()
	} else {
		kind, desc, run = g.operation()
	}
	tp := &tape{}
	if strings.Contains(kind, ".physical.") {
		// a physical table named by hand: which rows it should reach is
		// not the logic table's answer, only placement is checked
		return op{kind: kind, desc: handle + ": " + desc, placementOnly: true,
			shard: func() ([]int64, error) { return run(db, tp, false) },
			oracle: func() ([]int64, error) {
				return nil, c.w.syncOracle(h.mid, "t_order")
			}}
	}
	return op{
		kind: kind, desc: handle + ": " + desc,
		shard: func() ([]int64, error) {
			rows, err := run(db, tp, false)
			tp.done()
			return rows, err
		},
		oracle: func() ([]int64, error) {
			tp.replay, tp.next = true, 0
			return run(c.oracle, tp, true)
		},
	}
}

func result(r *gorm.DB) ([]int64, error) { return []int64{r.RowsAffected}, r.Error }

// tx: a db.Transaction of one to three operations, committed or rolled
// back; now and then the middle ones run in a nested Transaction (a
// SAVEPOINT) that commits or rolls back on its own.
func (g *gormGen) tx() (string, string, gormRun) {
	var runs []gormRun
	var descs []string
	n := 1 + g.rng.IntN(3)
	nested := -1
	if g.rng.IntN(3) == 0 {
		nested = g.rng.IntN(n)
	}
	innerCommit := g.rng.IntN(2) == 0
	kind := "gorm.tx"
	for i := range n {
		k, d, r := g.operation()
		for strings.Contains(k, ".physical.") || g.h.skipped(k) { // checked on their own only
			k, d, r = g.operation()
		}
		if i == nested {
			inner := r
			end := "rollback"
			if innerCommit {
				end = "commit"
			}
			kind += ".nested." + end
			d = "tx.Transaction(func(tx) { " + d + " }) // " + end
			r = func(db *gorm.DB, tp *tape, oracle bool) ([]int64, error) {
				var rows []int64
				err := db.Transaction(func(tx *gorm.DB) error {
					var err error
					if rows, err = inner(tx, tp, oracle); err != nil {
						return err
					}
					if !innerCommit {
						return errRolledBack
					}
					return nil
				})
				if errors.Is(err, errRolledBack) {
					err = nil // rolled back to the savepoint; the outer goes on
				}
				return rows, err
			}
		}
		runs = append(runs, r)
		descs = append(descs, d)
	}
	commit := g.rng.IntN(4) != 0
	end := "commit"
	if !commit {
		end = "rollback"
	}
	desc := "db.Transaction(func(tx) {\n  " + strings.Join(descs, "\n  ") + "\n}) // " + end
	return kind + "." + end, desc, func(db *gorm.DB, tp *tape, oracle bool) ([]int64, error) {
		var rows []int64
		err := db.Transaction(func(tx *gorm.DB) error {
			for _, r := range runs {
				n, err := r(tx, tp, oracle)
				if err != nil {
					return err
				}
				rows = append(rows, n...)
			}
			if !commit {
				return errRolledBack
			}
			return nil
		})
		return rows, err
	}
}

// where is a WHERE of some shape around p.
func (g *gormGen) where(shape string, p pair) (func(*gorm.DB) *gorm.DB, string) {
	rng := g.rng
	u, k := g.num(p.user), g.num(p.key)
	switch shape {
	case "key":
		return func(db *gorm.DB) *gorm.DB { return db.Where("user_id = ? AND order_id = ?", u, k) },
			fmt.Sprintf("Where(\"user_id = ? AND order_id = ?\", %s, %s)", argText(u), argText(k))
	case "struct":
		return func(db *gorm.DB) *gorm.DB { return db.Where(&Order{UserID: p.user, OrderID: p.key}) },
			fmt.Sprintf("Where(&Order{UserID: %d, OrderID: %d})", p.user, p.key)
	case "map":
		return func(db *gorm.DB) *gorm.DB { return db.Where(map[string]any{"user_id": u, "order_id": k}) },
			fmt.Sprintf("Where(map{user_id: %s, order_id: %s})", argText(u), argText(k))
	case "clause":
		return func(db *gorm.DB) *gorm.DB {
				return db.Clauses(clause.Where{Exprs: []clause.Expression{
					clause.Eq{Column: clause.Column{Name: "user_id"}, Value: u},
					clause.Eq{Column: clause.Column{Name: "order_id"}, Value: k}}})
			},
			fmt.Sprintf("Clauses(clause.Where{Eq user_id %s, Eq order_id %s})", argText(u), argText(k))
	case "in":
		us := []any{u, g.num(sameDSUser(rng, p.user))}
		ks := []any{k, g.num(explicitKey(rng))}
		return func(db *gorm.DB) *gorm.DB { return db.Where("user_id IN ? AND order_id IN ?", us, ks) },
			fmt.Sprintf("Where(\"user_id IN ? AND order_id IN ?\", %s, %s)", argText(us), argText(ks))
	case "range":
		lo := min(p.key, int64(rng.IntN(30)))
		hi := lo + int64(rng.IntN(12))
		return func(db *gorm.DB) *gorm.DB { return db.Where("user_id = ? AND order_id BETWEEN ? AND ?", u, lo, hi) },
			fmt.Sprintf("Where(\"user_id = ? AND order_id BETWEEN ? AND ?\", %s, %d, %d)", argText(u), lo, hi)
	case "or":
		q := g.h.existing(rng, "t_order")
		return func(db *gorm.DB) *gorm.DB {
				return db.Where("user_id = ? AND order_id = ?", u, k).Or("user_id = ? AND order_id = ?", q.user, q.key)
			},
			fmt.Sprintf("Where(\"user_id = ? AND order_id = ?\", %s, %s).Or(\"user_id = ? AND order_id = ?\", %d, %d)", argText(u), argText(k), q.user, q.key)
	case "user":
		return func(db *gorm.DB) *gorm.DB { return db.Where("user_id = ?", u) },
			fmt.Sprintf("Where(\"user_id = ?\", %s)", argText(u))
	case "order":
		return func(db *gorm.DB) *gorm.DB { return db.Where("order_id = ?", k) },
			fmt.Sprintf("Where(\"order_id = ?\", %s)", argText(k))
	}
	s := pick(rng, statuses[:3])
	return func(db *gorm.DB) *gorm.DB { return db.Where("status = ?", s) }, fmt.Sprintf("Where(\"status = ?\", %s)", argText(s))
}

var gormWhereShapes = []string{"key", "key", "struct", "map", "clause", "in", "range", "or", "user", "order", "none"}

// argText spells an argument with its Go type, as a test would write it.
func argText(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = argText(e)
		}
		return "[]any{" + strings.Join(parts, ", ") + "}"
	case *string:
		return ptrText(x)
	case *int64:
		return ptrText(x)
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

func ptrText[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("&%v", *p)
}

func orderText(o Order) string {
	return fmt.Sprintf("Order{OrderID: %d, UserID: %d, Status: %s, Amount: %s, Note: %q}", o.OrderID, o.UserID,
		ptrText(o.Status), ptrText(o.Amount), o.Note)
}

// newOrder is a row with an explicit key of the small domain (its
// owner's data source) or a generated one (key 0).
func (g *gormGen) newOrder(generated bool) Order {
	o := Order{Status: g.status(), Amount: g.amount(), Note: g.note()}
	if generated {
		o.UserID = pick(g.rng, smallUsers)
		return o
	}
	o.OrderID = explicitKey(g.rng)
	o.UserID = userIn(g.rng, ownerDS(o.OrderID))
	return o
}

// operation draws one GORM call.
func (g *gormGen) operation() (string, string, gormRun) {
	rng := g.rng
	switch n := rng.IntN(100); {
	case n < 8:
		return g.create()
	case n < 14:
		return g.createMany()
	case n < 17:
		return g.createMap()
	case n < 20:
		return g.createTable()
	case n < 30:
		return g.save()
	case n < 50:
		return g.update()
	case n < 60:
		return g.delete()
	case n < 70:
		return g.upsert()
	case n < 76:
		return g.firstOrCreate()
	case n < 90:
		return g.association()
	default:
		return g.dict()
	}
}

func (g *gormGen) create() (string, string, gormRun) {
	generated := g.rng.IntN(2) == 0
	proto := g.newOrder(generated)
	kind := "gorm.create1"
	if generated {
		kind += ".genkey"
	}
	return kind, "Create(&" + orderText(proto) + ")", func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
		o := proto
		tp.key(&o.OrderID)
		return result(db.Create(&o))
	}
}

// createMany: Create of a slice or CreateInBatches, fresh explicit keys
// or generated ones, users of one data source or of both.
func (g *gormGen) createMany() (string, string, gormRun) {
	rng := g.rng
	generated := rng.IntN(2) == 0
	ds := rng.IntN(2)
	mixed := rng.IntN(3) == 0
	var protos []Order
	var texts []string
	next := int64(1_000_000 + g.step*100)
	for range 2 + rng.IntN(3) {
		o := Order{Status: g.status(), Amount: g.amount(), Note: g.note()}
		if mixed {
			ds = rng.IntN(2)
		}
		if !generated {
			// a fresh key of the row's data source (never a duplicate)
			for ownerDS(next) != ds {
				next++
			}
			o.OrderID = next
			next++
		}
		o.UserID = userIn(rng, ds)
		protos = append(protos, o)
		texts = append(texts, orderText(o))
	}
	batches := rng.IntN(2) == 0
	kind := "gorm.createN"
	call := "Create(&[]Order{%s})"
	if batches {
		kind, call = "gorm.createInBatches", "CreateInBatches(&[]Order{%s}, 2)"
	}
	if generated {
		kind += ".genkey"
	}
	return kind, fmt.Sprintf(call, strings.Join(texts, ", ")), func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
		rows := append([]Order(nil), protos...)
		for i := range rows {
			tp.key(&rows[i].OrderID)
		}
		if batches {
			return result(db.CreateInBatches(&rows, 2))
		}
		return result(db.Create(&rows))
	}
}

// createMap: db.Model(&Order{}).Create(map), the key generated or given.
func (g *gormGen) createMap() (string, string, gormRun) {
	generated := g.rng.IntN(2) == 0
	o := g.newOrder(generated)
	u := g.num(o.UserID)
	desc := fmt.Sprintf("Model(&Order{}).Create(map{order_id: %d, user_id: %s, note: %q})", o.OrderID, argText(u), o.Note)
	kind := "gorm.createMap"
	if generated {
		kind += ".genkey"
	}
	return kind, desc, func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
		m := map[string]any{"user_id": u, "note": o.Note}
		if !generated {
			m["order_id"] = o.OrderID
		}
		tp.mapKey(m)
		return result(db.Model(&Order{}).Create(m))
	}
}

// createTable: db.Table("t_order_N").Create(row): the named physical
// table may not be the one the row routes to.
func (g *gormGen) createTable() (string, string, gormRun) {
	o := g.newOrder(g.rng.IntN(3) == 0)
	table := fmt.Sprintf("t_order_%d", g.rng.IntN(3))
	return "gorm.createTable", fmt.Sprintf("Table(%q).Create(&%s)", table, orderText(o)),
		func(db *gorm.DB, tp *tape, oracle bool) ([]int64, error) {
			row := o
			tp.key(&row.OrderID)
			name := table
			if oracle {
				name = "t_order"
			}
			return result(db.Table(name).Create(&row))
		}
}

// save: Save of a new row, of a row given in full, or of a loaded row
// with a changed status, user (same or other data source) or key.
func (g *gormGen) save() (string, string, gormRun) {
	rng := g.rng
	switch rng.IntN(3) {
	case 0:
		o := g.newOrder(rng.IntN(2) == 0)
		kind := "gorm.save.explicit"
		if o.OrderID == 0 {
			kind = "gorm.save.new"
		}
		return kind, "Save(&" + orderText(o) + ")", func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
			row := o
			tp.key(&row.OrderID)
			return result(db.Save(&row))
		}
	}
	if rng.IntN(4) == 0 {
		// Save of a slice: an upsert of every row (UpdateAll)
		var protos []Order
		var texts []string
		for _, p := range distinct([]pair{g.h.existing(rng, "t_order"), g.h.existing(rng, "t_order")}) {
			if p.stored && rng.IntN(4) == 0 {
				// a stored row moved to the other data source: refused (a key
				// not stored yet keeps its owner's data source, see ownerDS)
				p.user = otherDSUser(rng, p.user)
			}
			o := Order{OrderID: p.key, UserID: p.user, Status: g.status(), Amount: g.amount(), Note: g.note()}
			protos = append(protos, o)
			texts = append(texts, orderText(o))
		}
		return "gorm.save.slice", "Save(&[]Order{" + strings.Join(texts, ", ") + "})", func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
			rows := append([]Order(nil), protos...)
			for i := range rows {
				tp.key(&rows[i].OrderID)
			}
			return result(db.Save(&rows))
		}
	}
	p := g.h.existing(rng, "t_order")
	change, kind := "status", "gorm.save.loaded"
	newUser, newKey := p.user, p.key
	switch rng.IntN(5) {
	case 0:
		change, newUser = "user (same data source)", sameDSUser(rng, p.user)
		kind += ".sameds"
	case 1:
		change, newUser = "user (other data source)", otherDSUser(rng, p.user)
		kind += ".otherds"
	case 2:
		change, newKey = "key", otherTableKey(rng, p.key, dsOf(p.user))
		kind += ".key"
	}
	st := g.status()
	desc := fmt.Sprintf("Where(\"user_id = ? AND order_id = ?\", %d, %d).First(&o); o.UserID, o.OrderID, o.Status = %d, %d, %s (%s); Save(&o)",
		p.user, p.key, newUser, newKey, ptrText(st), change)
	return kind, desc, func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
		var o Order
		err := db.Where("user_id = ? AND order_id = ?", p.user, p.key).First(&o).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return []int64{0}, nil
		}
		if err != nil {
			return nil, err
		}
		o.UserID, o.OrderID, o.Status = newUser, newKey, st
		r := db.Save(&o)
		return []int64{1, r.RowsAffected}, r.Error
	}
}

// update: Updates with the model, another struct type and a map,
// Update, UpdateColumn(s), through db.Model or db.Table, by a WHERE of
// some shape or by a model carrying its key; some assign user_id.
func (g *gormGen) update() (string, string, gormRun) {
	rng := g.rng
	p := g.h.existing(rng, "t_order")
	shape := pick(rng, gormWhereShapes)
	where, wdesc := g.where(shape, p)
	st, am := g.status(), g.amount()
	var setUser *int64
	userNote := ""
	switch rng.IntN(4) {
	case 0:
		u := sameDSUser(rng, p.user)
		setUser, userNote = &u, ".sameds"
	case 1:
		u := otherDSUser(rng, p.user)
		setUser, userNote = &u, ".otherds"
	}
	if st == nil {
		s := "c"
		st = &s
	}
	base := func(db *gorm.DB, _ bool) *gorm.DB { return where(db.Model(&Order{})) }
	basedesc := "Model(&Order{})." + wdesc
	if rng.IntN(4) == 0 {
		base = func(db *gorm.DB, _ bool) *gorm.DB { return where(db.Table("t_order")) }
		basedesc = "Table(\"t_order\")." + wdesc
		shape = "table." + shape
	}
	if rng.IntN(8) == 0 {
		// a physical table named by hand; the oracle's is t_order
		phys := fmt.Sprintf("t_order_%d", rng.IntN(3))
		base = func(db *gorm.DB, oracle bool) *gorm.DB {
			if oracle {
				return where(db.Table("t_order"))
			}
			return where(db.Table(phys))
		}
		basedesc = fmt.Sprintf("Table(%q).", phys) + wdesc
		shape = "physical." + shape
	}
	if rng.IntN(6) == 0 {
		// the model carries the key: GORM adds WHERE order_id only
		base = func(db *gorm.DB, _ bool) *gorm.DB { return db.Model(&Order{OrderID: p.key, UserID: p.user}) }
		basedesc = fmt.Sprintf("Model(&Order{OrderID: %d, UserID: %d})", p.key, p.user)
		shape = "model"
	}
	var kind, desc string
	var call func(db *gorm.DB) *gorm.DB
	switch rng.IntN(6) {
	case 0:
		patch := Order{Status: st, Amount: am}
		if setUser != nil {
			patch.UserID = *setUser
		}
		kind, desc = "gorm.updates.struct", fmt.Sprintf(".Updates(Order{UserID: %d, Status: %s, Amount: %s})", patch.UserID, ptrText(st), ptrText(am))
		call = func(db *gorm.DB) *gorm.DB { return db.Updates(patch) }
	case 1:
		patch := OrderPatch{Status: st, Amount: am}
		if setUser != nil {
			patch.UserID = *setUser
		}
		kind, desc = "gorm.updates.patch", fmt.Sprintf(".Updates(OrderPatch{UserID: %d, Status: %s, Amount: %s})", patch.UserID, ptrText(st), ptrText(am))
		call = func(db *gorm.DB) *gorm.DB { return db.Updates(patch) }
	case 2:
		m := map[string]any{"status": st, "amount": am}
		if setUser != nil {
			m["user_id"] = g.num(*setUser)
		}
		kind, desc = "gorm.updates.map", fmt.Sprintf(".Updates(map{status: %s, amount: %s, user_id: %s})", ptrText(st), ptrText(am), argText(m["user_id"]))
		call = func(db *gorm.DB) *gorm.DB {
			mm := map[string]any{}
			for k, v := range m {
				mm[k] = v
			}
			return db.Updates(mm)
		}
	case 3:
		if setUser != nil {
			u := g.num(*setUser)
			kind, desc = "gorm.update", fmt.Sprintf(".Update(\"user_id\", %s)", argText(u))
			call = func(db *gorm.DB) *gorm.DB { return db.Update("user_id", u) }
		} else {
			kind, desc = "gorm.update", fmt.Sprintf(".Update(\"status\", %s)", ptrText(st))
			call = func(db *gorm.DB) *gorm.DB { return db.Update("status", st) }
		}
	case 4:
		kind, desc = "gorm.updateColumn", ".UpdateColumn(\"amount\", gorm.Expr(\"amount + ?\", 1))"
		call = func(db *gorm.DB) *gorm.DB { return db.UpdateColumn("amount", gorm.Expr("amount + ?", 1)) }
		if setUser != nil {
			u := *setUser
			desc = fmt.Sprintf(".UpdateColumns(map{user_id: %d, amount: amount + 1})", u)
			call = func(db *gorm.DB) *gorm.DB {
				return db.UpdateColumns(map[string]any{"user_id": u, "amount": gorm.Expr("amount + ?", 1)})
			}
		}
	default:
		kind, desc = "gorm.updates.select", fmt.Sprintf(".Select(\"status\", \"amount\").Updates(Order{Status: %s})", ptrText(st))
		call = func(db *gorm.DB) *gorm.DB { return db.Select("status", "amount").Updates(Order{Status: st}) }
		if setUser != nil {
			u := *setUser
			desc = fmt.Sprintf(".Select(\"*\").Omit(\"order_id\", \"note\").Updates(Order{UserID: %d, Status: %s})", u, ptrText(st))
			call = func(db *gorm.DB) *gorm.DB {
				return db.Select("*").Omit("order_id", "note").Updates(Order{UserID: u, Status: st})
			}
		}
	}
	if setUser != nil {
		kind += ".setuser" + userNote
	}
	return kind + "." + shape, basedesc + desc, func(db *gorm.DB, _ *tape, oracle bool) ([]int64, error) {
		return result(call(base(db, oracle)))
	}
}

func (g *gormGen) delete() (string, string, gormRun) {
	rng := g.rng
	p := g.h.existing(rng, "t_order")
	switch rng.IntN(3) {
	case 0:
		return "gorm.delete.model", fmt.Sprintf("Delete(&Order{OrderID: %d, UserID: %d})", p.key, p.user),
			func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
				return result(db.Delete(&Order{OrderID: p.key, UserID: p.user}))
			}
	case 1:
		ks := []int64{p.key, explicitKey(rng)}
		u := g.num(p.user)
		return "gorm.delete.conds", fmt.Sprintf("Delete(&Order{}, \"user_id = ? AND order_id IN ?\", %s, %v)", argText(u), ks),
			func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
				return result(db.Delete(&Order{}, "user_id = ? AND order_id IN ?", u, ks))
			}
	}
	shape := pick(rng, gormWhereShapes)
	where, wdesc := g.where(shape, p)
	if rng.IntN(6) == 0 {
		phys := fmt.Sprintf("t_order_%d", rng.IntN(3))
		return "gorm.delete.physical." + shape, fmt.Sprintf("Table(%q).", phys) + wdesc + ".Delete(&Order{})",
			func(db *gorm.DB, _ *tape, oracle bool) ([]int64, error) {
				name := phys
				if oracle {
					name = "t_order"
				}
				return result(where(db.Table(name)).Delete(&Order{}))
			}
	}
	return "gorm.delete." + shape, wdesc + ".Delete(&Order{})", func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
		return result(where(db).Delete(&Order{}))
	}
}

// upsert: Create with clause.OnConflict: DoUpdates of some columns
// (user_id among them now and then), UpdateAll, DoNothing, or an
// assignment of another user.
func (g *gormGen) upsert() (string, string, gormRun) {
	rng := g.rng
	var ps []pair
	for range 1 + rng.IntN(3) {
		p := g.h.existing(rng, "t_order")
		if rng.IntN(3) == 0 {
			p.user = sameDSUser(rng, p.user)
		}
		ps = append(ps, p)
	}
	ps = distinct(ps)
	var protos []Order
	var texts []string
	for _, p := range ps {
		o := Order{OrderID: p.key, UserID: p.user, Status: g.status(), Amount: g.amount(), Note: g.note()}
		protos = append(protos, o)
		texts = append(texts, orderText(o))
	}
	oc := clause.OnConflict{Columns: []clause.Column{{Name: "order_id"}}}
	kind := "gorm.upsert"
	if len(ps) > 1 {
		kind += "N"
	}
	var ocdesc string
	switch rng.IntN(5) {
	case 0:
		oc.DoNothing = true
		kind, ocdesc = kind+".nothing", "DoNothing: true"
	case 1:
		oc.UpdateAll = true
		kind, ocdesc = kind+".all", "UpdateAll: true"
	case 2:
		u := otherDSUser(rng, ps[0].user)
		if rng.IntN(2) == 0 {
			u = ps[0].user
		}
		oc.DoUpdates = clause.Assignments(map[string]any{"user_id": u, "status": "u"})
		kind, ocdesc = kind+".setuser", fmt.Sprintf("DoUpdates: Assignments{user_id: %d, status: u}", u)
	default:
		cols := []string{"status"}
		if rng.IntN(2) == 0 {
			cols = append(cols, "amount")
		}
		if rng.IntN(3) == 0 {
			cols = append(cols, "user_id")
			kind += ".setuser"
		}
		oc.DoUpdates = clause.AssignmentColumns(cols)
		kind += ".update"
		ocdesc = fmt.Sprintf("DoUpdates: AssignmentColumns(%v)", cols)
	}
	desc := fmt.Sprintf("Clauses(clause.OnConflict{Columns: order_id, %s}).Create(&[]Order{%s})", ocdesc, strings.Join(texts, ", "))
	return kind, desc, func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
		rows := append([]Order(nil), protos...)
		for i := range rows {
			tp.key(&rows[i].OrderID) // a zero key is generated, as on any create
		}
		return result(db.Clauses(oc).Create(&rows))
	}
}

// firstOrCreate: by key and user, or by user and note alone (no table
// key: refused without scatter), creating with a generated key.
func (g *gormGen) firstOrCreate() (string, string, gormRun) {
	rng := g.rng
	st := g.status()
	if rng.IntN(3) == 0 {
		u, note := pick(rng, smallUsers), g.note()
		return "gorm.firstOrCreate.genkey", fmt.Sprintf("Where(&Order{UserID: %d, Note: %q}).Attrs(Order{Status: %s}).FirstOrCreate(&o)", u, note, ptrText(st)),
			func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
				// shardkey's key (found or generated) makes the oracle's
				// FirstOrCreate find the same row or create it with that key
				var o Order
				tp.key(&o.OrderID)
				return result(db.Where(&Order{UserID: u, Note: note}).Attrs(Order{Status: st}).FirstOrCreate(&o))
			}
	}
	p := g.h.existing(rng, "t_order")
	note := g.note()
	return "gorm.firstOrCreate", fmt.Sprintf("Where(&Order{OrderID: %d, UserID: %d}).Attrs(Order{Status: %s, Note: %q}).FirstOrCreate(&o)", p.key, p.user, ptrText(st), note),
		func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
			var o Order
			return result(db.Where(&Order{OrderID: p.key, UserID: p.user}).Attrs(Order{Status: st, Note: note}).FirstOrCreate(&o))
		}
}

// association: Create with items, Association("Items") Append, Replace,
// Delete, Clear on an order given by its key and user.
func (g *gormGen) association() (string, string, gormRun) {
	rng := g.rng
	p := g.h.existing(rng, "t_order")
	newItem := func() Item {
		q := int64(rng.IntN(5))
		u := sameDSUser(rng, p.user)
		if rng.IntN(4) == 0 {
			u = pick(rng, smallUsers)
		}
		return Item{UserID: u, Qty: &q}
	}
	itemText := func(it Item) string { return fmt.Sprintf("Item{UserID: %d, Qty: %s}", it.UserID, ptrText(it.Qty)) }
	parentText := fmt.Sprintf("Model(&Order{OrderID: %d, UserID: %d}).Association(\"Items\")", p.key, p.user)
	parent := func() *Order { return &Order{OrderID: p.key, UserID: p.user} }
	// Append and Replace write in several statements: the plugin wants
	// them in a transaction (so that a refusal rolls every one back)
	inTx := rng.IntN(2) == 0
	assoc := func(db *gorm.DB, f func(a *gorm.Association) error) error {
		if !inTx {
			return f(db.Model(parent()).Association("Items"))
		}
		return db.Transaction(func(tx *gorm.DB) error { return f(tx.Model(parent()).Association("Items")) })
	}
	txNote := ""
	if inTx {
		parentText, txNote = "Transaction: "+parentText, ".tx"
	}
	switch rng.IntN(6) {
	case 0, 1:
		o := g.newOrder(rng.IntN(2) == 0)
		items := []Item{newItem(), newItem()}
		return "gorm.assoc.createWithItems", fmt.Sprintf("Create(&%s with Items %s, %s)", orderText(o), itemText(items[0]), itemText(items[1])),
			func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
				row := o
				row.Items = append([]Item(nil), items...)
				tp.key(&row.OrderID)
				for i := range row.Items {
					tp.key(&row.Items[i].ItemID)
				}
				return result(db.Create(&row))
			}
	case 2:
		it := newItem()
		return "gorm.assoc.append" + txNote, parentText + ".Append(&" + itemText(it) + ")", func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
			x := it
			tp.key(&x.ItemID)
			return nil, assoc(db, func(a *gorm.Association) error { return a.Append(&x) })
		}
	case 3:
		it := newItem()
		return "gorm.assoc.replace" + txNote, parentText + ".Replace(&" + itemText(it) + ")", func(db *gorm.DB, tp *tape, _ bool) ([]int64, error) {
			x := it
			tp.key(&x.ItemID)
			return nil, assoc(db, func(a *gorm.Association) error { return a.Replace(&x) })
		}
	case 4:
		q := g.h.existing(rng, "t_item")
		return "gorm.assoc.delete" + txNote, parentText + fmt.Sprintf(".Delete(&Item{ItemID: %d, UserID: %d})", q.key, q.user),
			func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
				return nil, assoc(db, func(a *gorm.Association) error { return a.Delete(&Item{ItemID: q.key, UserID: q.user}) })
			}
	}
	return "gorm.assoc.clear" + txNote, parentText + ".Clear()", func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
		return nil, assoc(db, func(a *gorm.Association) error { return a.Clear() })
	}
}

// dict: writes to the broadcast table.
func (g *gormGen) dict() (string, string, gormRun) {
	rng := g.rng
	k := string(rune('a' + rng.IntN(6)))
	v := pick(rng, []any{"x", "y", nil})
	var vp *string
	if s, ok := v.(string); ok {
		vp = &s
	}
	n := g.amount()
	d := Dict{K: k, V: vp, N: n}
	text := fmt.Sprintf("Dict{K: %q, V: %s, N: %s}", k, ptrText(vp), ptrText(n))
	switch rng.IntN(5) {
	case 0:
		return "gorm.dict.create", "Create(&" + text + ")", func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
			x := d
			return result(db.Create(&x))
		}
	case 1:
		return "gorm.dict.save", "Save(&" + text + ")", func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
			x := d
			return result(db.Save(&x))
		}
	case 2:
		return "gorm.dict.updates", fmt.Sprintf("Model(&Dict{}).Where(\"k = ?\", %q).Updates(map{v: %s})", k, ptrText(vp)),
			func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
				return result(db.Model(&Dict{}).Where("k = ?", k).Updates(map[string]any{"v": vp}))
			}
	case 3:
		return "gorm.dict.upsert", "Clauses(clause.OnConflict{UpdateAll: true}).Create(&" + text + ")",
			func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
				x := d
				return result(db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&x))
			}
	}
	return "gorm.dict.delete", fmt.Sprintf("Delete(&Dict{K: %q})", k), func(db *gorm.DB, _ *tape, _ bool) ([]int64, error) {
		return result(db.Delete(&Dict{K: k}))
	}
}
