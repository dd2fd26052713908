package difftest

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// The two-phase-commit tester's transactions: t_order rows whose user is
// fixed by their key (tpUser), so that a key is never stored twice across
// data sources and a duplicate key is a real database error on the shards
// as on the oracle; and t_dict, the broadcast table, whose every write
// reaches both data sources.

const (
	tpKeys   = 400 // order_id 1..tpKeys
	tpPoison = 666 // PostgreSQL: an amount the deferred trigger refuses at PREPARE/COMMIT
)

// tpUser is the user of order k: users 0, 2, 4 are on ds_0 and 1, 3 on
// ds_1, and k MOD 3 picks the table.
func tpUser(k int64) int64 { return k % 5 }

// tpDS is the data source of order k.
func tpDS(k int64) int { return int(tpUser(k) % 2) }

// tpItem is one statement of a transaction: its SQL (placeholders as ?)
// and, for GORM, the call that does the same (nil: tx.Exec of the SQL).
type tpItem struct {
	kind string
	sql  cell
	gorm func(db *gorm.DB) *gorm.DB
	raw  bool // a savepoint statement: no rows affected compared
	// read: a query of a count and a sum, over users (for GORM)
	read  bool
	users []int64
}

func (it tpItem) String() string {
	if len(it.sql.args) == 0 {
		return it.sql.text
	}
	return it.sql.text + " " + argsText(it.sql.args)
}

// tpTx is one transaction: its statements, how it ends and the fault
// injected into it.
type tpTx struct {
	n      int
	items  []tpItem
	commit bool
	fault  tpFault
	victim int // the data source a tpKill fault disconnects
	killAt int // tpKillMid: the statement after which it does
	stall  time.Duration
	iso    sql.IsolationLevel // BeginTx's (0: the default, no option)
	// auto: one statement outside a transaction (a write over several data
	// sources must still be atomic)
	auto bool
}

func (x tpTx) String() string {
	var b strings.Builder
	if x.auto {
		fmt.Fprintf(&b, "tx %d: outside a transaction:\n    %s", x.n, x.items[0])
		if x.fault != tpNoFault {
			fmt.Fprintf(&b, " (fault: %s)", x.fault)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "tx %d: BEGIN", x.n)
	if x.iso != sql.LevelDefault {
		fmt.Fprintf(&b, " (isolation %s)", x.iso)
	}
	for _, it := range x.items {
		fmt.Fprintf(&b, "\n    %s", it)
	}
	end := "ROLLBACK"
	if x.commit {
		end = "COMMIT"
	}
	fmt.Fprintf(&b, "\n    %s", end)
	if x.fault != tpNoFault {
		fmt.Fprintf(&b, " (fault: %s", x.fault)
		if x.fault == tpKill || x.fault == tpKillMid || x.fault == tpKillAtPrepared || x.fault == tpKillAtDecided {
			fmt.Fprintf(&b, " ds_%d", x.victim)
		}
		if x.fault == tpKillMid {
			fmt.Fprintf(&b, " after statement %d", x.killAt+1)
		}
		if x.fault == tpSlowAtPrepared || x.fault == tpSlowAtDecided {
			fmt.Fprintf(&b, " %v", x.stall)
		}
		b.WriteString(")")
	}
	return b.String()
}

// tpFault is what goes wrong at commit.
type tpFault int

const (
	tpNoFault tpFault = iota
	tpKill            // a branch's session is killed before Commit
	tpHookPrepared
	tpHookDecided
	tpHookCommittedOne
	tpKillMid  // a branch's session is killed after statement killAt
	tpLogFails // the decision log refuses the INSERT (a trigger)
	// a data source's sessions (the branch's and pooled ones) are killed
	// at a stage of xa's Commit
	tpKillAtPrepared
	tpKillAtDecided
	// xa's Commit stalls at a stage for about recovery's timeout while
	// recovery runs over and over: the coordinator and recovery race for
	// the decision
	tpSlowAtPrepared
	tpSlowAtDecided
	// recovery runs flat out from the decision on, racing phase 2 for
	// the branches (a branch another session is committing is "busy")
	tpRaceAtDecided
)

func (f tpFault) String() string {
	return [...]string{"none", "kill", "hook:prepared", "hook:decided", "hook:committed-one", "kill:mid", "log-fails", "kill:at-prepared", "kill:at-decided", "slow:at-prepared", "slow:at-decided", "race:at-decided"}[f]
}

// tpModel is what the generator knows of the rows: the oracle's keys and
// amounts after the previous transaction.
type tpModel struct {
	orders map[int64]int64 // order_id -> amount (0 for NULL)
	dict   map[string]bool
}

// tpGen draws one transaction.
type tpGen struct {
	rng      *rand.Rand
	m        tpModel
	postgres bool
	hooks    bool // the xa test hook is reachable
	// noDict: GORM through gormplugin, which refuses writes to a
	// broadcast table with several copies, and RELEASE SAVEPOINT
	noDict bool
	items  []tpItem
	added  map[int64]bool // keys inserted in this transaction
}

func (g *tpGen) existing() (int64, bool) {
	if len(g.m.orders) == 0 {
		return 0, false
	}
	keys := make([]int64, 0, len(g.m.orders))
	for k := range g.m.orders {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return pick(g.rng, keys), true
}

// fresh is a key neither stored nor inserted in this transaction, on data
// source ds (-1: any); one time in eight a stored key (a duplicate).
func (g *tpGen) fresh(ds int) int64 {
	if g.rng.IntN(8) == 0 {
		if k, ok := g.existing(); ok && (ds < 0 || tpDS(k) == ds) {
			return k
		}
	}
	for range 50 {
		k := 1 + g.rng.Int64N(tpKeys)
		if _, ok := g.m.orders[k]; !ok && !g.added[k] && (ds < 0 || tpDS(k) == ds) {
			return k
		}
	}
	return 1 + g.rng.Int64N(tpKeys)
}

// some is a key, stored or (one time in five) not.
func (g *tpGen) some() int64 {
	if k, ok := g.existing(); ok && g.rng.IntN(5) != 0 {
		return k
	}
	return 1 + g.rng.Int64N(tpKeys)
}

func (g *tpGen) add(kind string, text string, args ...any) {
	g.items = append(g.items, tpItem{kind: kind, sql: cell{text: text, args: args}})
}

// addGorm adds a statement and the GORM call that runs it.
func (g *tpGen) addGorm(kind string, call func(db *gorm.DB) *gorm.DB, text string, args ...any) {
	g.items = append(g.items, tpItem{kind: kind, sql: cell{text: text, args: args}, gorm: call})
}

func (g *tpGen) amount() int64 {
	if g.postgres && g.rng.IntN(40) == 0 {
		return tpPoison
	}
	return g.rng.Int64N(1000)
}

func (g *tpGen) insert(keys ...int64) {
	var vals []string
	var args []any
	var orders []Order
	for _, k := range keys {
		g.added[k] = true
		vals = append(vals, "(?, ?, ?, ?, ?)")
		st, am, note := pick(g.rng, []string{"new", "paid", "held"}), g.amount(), "n"+strconv.FormatInt(k, 10)
		args = append(args, k, tpUser(k), st, am, note)
		orders = append(orders, Order{OrderID: k, UserID: tpUser(k), Status: &st, Amount: &am, Note: note})
	}
	kind := "insert"
	if len(keys) > 1 {
		kind = "insert.rows"
	}
	g.addGorm(kind, func(db *gorm.DB) *gorm.DB { o := slices.Clone(orders); return db.Create(&o) },
		"INSERT INTO t_order (order_id, user_id, status, amount, note) VALUES "+strings.Join(vals, ", "), args...)
}

// statement draws one or two statements (a move and a transfer are two).
func (g *tpGen) statement() {
	if g.rng.IntN(6) == 0 {
		g.extra()
		return
	}
	switch g.rng.IntN(12) {
	case 0, 1:
		g.insert(g.fresh(-1))
	case 2:
		// rows on both data sources in one statement
		g.insert(g.fresh(0), g.fresh(1))
	case 3, 4:
		k, d, st := g.some(), g.rng.Int64N(50)-25, pick(g.rng, []string{"paid", "held", "void"})
		g.addGorm("update", func(db *gorm.DB) *gorm.DB {
			return db.Model(&Order{}).Where("order_id = ? AND user_id = ?", k, tpUser(k)).
				Updates(map[string]any{"amount": gorm.Expr("amount + ?", d), "status": st})
		}, "UPDATE t_order SET amount = amount + ?, status = ? WHERE order_id = ? AND user_id = ?", d, st, k, tpUser(k))
	case 5:
		note, u1, u2 := fmt.Sprintf("u%d", g.rng.IntN(100)), g.rng.Int64N(5), g.rng.Int64N(5)
		g.addGorm("update.users", func(db *gorm.DB) *gorm.DB {
			return db.Model(&Order{}).Where("user_id IN ?", []int64{u1, u2}).Update("note", note)
		}, "UPDATE t_order SET note = ? WHERE user_id IN (?, ?)", note, u1, u2)
	case 6:
		g.deleteOrder("delete", g.some())
	case 7:
		u, a := g.rng.Int64N(5), 700+g.rng.Int64N(300)
		g.addGorm("delete.user", func(db *gorm.DB) *gorm.DB {
			return db.Where("user_id = ? AND amount > ?", u, a).Delete(&Order{})
		}, "DELETE FROM t_order WHERE user_id = ? AND amount > ?", u, a)
	case 8:
		// a row moves to the other data source: deleted there, inserted
		// here under a key of the other side
		k, ok := g.existing()
		if !ok {
			g.insert(g.fresh(-1))
			return
		}
		to := g.fresh(1 - tpDS(k))
		g.deleteOrder("move.delete", k)
		g.added[to] = true
		st, am, note := "moved", g.m.orders[k], "from"+strconv.FormatInt(k, 10)
		g.addGorm("move.insert", func(db *gorm.DB) *gorm.DB {
			return db.Create(&Order{OrderID: to, UserID: tpUser(to), Status: &st, Amount: &am, Note: note})
		}, "INSERT INTO t_order (order_id, user_id, status, amount, note) VALUES (?, ?, ?, ?, ?)",
			to, tpUser(to), st, am, note)
	case 9:
		// money moves between two rows, usually on both data sources
		a, b := g.some(), g.some()
		x := 1 + g.rng.Int64N(20)
		g.addAmount("transfer.debit", -x, a)
		g.addAmount("transfer.credit", x, b)
	case 10:
		if g.noDict {
			g.insert(g.fresh(-1))
			return
		}
		g.dict()
	default:
		k, a := g.some(), g.amount()
		g.addGorm("update.amount", func(db *gorm.DB) *gorm.DB {
			return db.Model(&Order{}).Where("order_id = ? AND user_id = ?", k, tpUser(k)).Update("amount", a)
		}, "UPDATE t_order SET amount = ? WHERE order_id = ? AND user_id = ?", a, k, tpUser(k))
	}
}

// extra draws a read (counts and sums over users, which must see the
// transaction's own writes on every branch) or an UPDATE of the sharding
// column (to another data source: refused, and the transaction with it;
// within the data source: allowed).
func (g *tpGen) extra() {
	users := []int64{g.rng.Int64N(5), g.rng.Int64N(5)}
	if g.rng.IntN(3) != 0 {
		g.items = append(g.items, tpItem{kind: "read", read: true, users: users,
			sql: cell{text: "SELECT count(*), sum(amount) FROM t_order WHERE user_id IN (?, ?)", args: []any{users[0], users[1]}}})
		return
	}
	k := g.some()
	to := tpUser(k) + 2*(1+g.rng.Int64N(2)) - 2*g.rng.Int64N(3) // same parity: same data source
	if g.rng.IntN(2) == 0 {
		to = tpUser(k) + 1 // the other data source
	}
	g.addGorm("update.user", func(db *gorm.DB) *gorm.DB {
		return db.Model(&Order{}).Where("order_id = ? AND user_id = ?", k, tpUser(k)).Update("user_id", to)
	}, "UPDATE t_order SET user_id = ? WHERE order_id = ? AND user_id = ?", to, k, tpUser(k))
}

// savepoint now and then adds a savepoint statement valid after stack
// (the savepoints in force): SAVEPOINT of a new name (up to three), ROLLBACK
// TO one in force (those set after it end), RELEASE one (it and those after
// it end; not through GORM, which has no RELEASE).
func (g *tpGen) savepoint(stack *[]string) {
	if g.rng.IntN(4) != 0 {
		return
	}
	st := *stack
	add := func(text string) {
		g.items = append(g.items, tpItem{kind: "savepoint", raw: true, sql: cell{text: text}})
	}
	switch op := g.rng.IntN(3); {
	case op == 0 && len(st) < 3 || len(st) == 0:
		for _, name := range []string{"sp1", "sp2", "sp3"} {
			if !slices.Contains(st, name) {
				add("SAVEPOINT " + name)
				*stack = append(st, name)
				return
			}
		}
	case op == 1 || g.noDict:
		i := g.rng.IntN(len(st))
		add("ROLLBACK TO SAVEPOINT " + st[i])
		*stack = st[:i+1]
	default:
		i := g.rng.IntN(len(st))
		add("RELEASE SAVEPOINT " + st[i])
		*stack = st[:i]
	}
}

// dict draws a write of the broadcast table: every copy, both data
// sources.
func (g *tpGen) dict() {
	d := fmt.Sprintf("d%d", g.rng.IntN(8))
	switch g.rng.IntN(3) {
	case 0:
		v, n := "v", g.rng.Int64N(9)
		g.addGorm("dict.insert", func(db *gorm.DB) *gorm.DB { return db.Create(&Dict{K: d, V: &v, N: &n}) },
			"INSERT INTO t_dict (k, v, n) VALUES (?, ?, ?)", d, v, n)
	case 1:
		v := fmt.Sprintf("v%d", g.rng.IntN(9))
		g.addGorm("dict.update", func(db *gorm.DB) *gorm.DB {
			return db.Model(&Dict{}).Where("k = ?", d).Updates(map[string]any{"n": gorm.Expr("n + 1"), "v": v})
		}, "UPDATE t_dict SET n = n + 1, v = ? WHERE k = ?", v, d)
	default:
		g.addGorm("dict.delete", func(db *gorm.DB) *gorm.DB { return db.Where("k = ?", d).Delete(&Dict{}) },
			"DELETE FROM t_dict WHERE k = ?", d)
	}
}

func (g *tpGen) deleteOrder(kind string, k int64) {
	g.addGorm(kind, func(db *gorm.DB) *gorm.DB {
		return db.Where("order_id = ? AND user_id = ?", k, tpUser(k)).Delete(&Order{})
	}, "DELETE FROM t_order WHERE order_id = ? AND user_id = ?", k, tpUser(k))
}

// addAmount adds d to order k's amount.
func (g *tpGen) addAmount(kind string, d, k int64) {
	g.addGorm(kind, func(db *gorm.DB) *gorm.DB {
		return db.Model(&Order{}).Where("order_id = ? AND user_id = ?", k, tpUser(k)).Update("amount", gorm.Expr("amount + ?", d))
	}, "UPDATE t_order SET amount = amount + ? WHERE order_id = ? AND user_id = ?", d, k, tpUser(k))
}

// tpBuild draws transaction n from its own random source and the model.
func tpBuild(seed uint64, n int, m tpModel, o tpGen) tpTx {
	g := &tpGen{rng: rand.New(rand.NewPCG(seed, uint64(n)*0x9e3779b97f4a7c15+2)), m: m, postgres: o.postgres,
		hooks: o.hooks, noDict: o.noDict, added: map[int64]bool{}}
	count := 1 + g.rng.IntN(6)
	var stack []string // savepoints in force, oldest first
	for range count {
		g.savepoint(&stack)
		g.statement()
	}
	g.savepoint(&stack)
	x := tpTx{n: n, items: g.items, commit: g.rng.IntN(4) != 0, victim: g.rng.IntN(2), killAt: g.rng.IntN(len(g.items))}
	// a refusing log costs recovery's timeout (1s) per transaction: rare
	switch f := g.rng.IntN(32); {
	case f < 4:
		x.fault = tpKill
	case f < 6:
		x.fault = tpKillMid
	case f < 7:
		x.fault = tpLogFails
	case f < 13 && g.hooks:
		x.fault = []tpFault{tpHookPrepared, tpHookDecided, tpHookCommittedOne}[(f-7)/2]
	case f < 17 && g.hooks:
		x.fault = []tpFault{tpKillAtPrepared, tpKillAtDecided}[(f-13)/2]
	case f < 18 && g.hooks:
		x.fault = []tpFault{tpSlowAtPrepared, tpSlowAtDecided}[g.rng.IntN(2)]
	case f < 20 && g.hooks:
		x.fault = tpRaceAtDecided
	}
	if g.rng.IntN(3) == 0 {
		x.iso = pick(g.rng, []sql.IsolationLevel{sql.LevelReadCommitted, sql.LevelRepeatableRead, sql.LevelSerializable})
	}
	if g.rng.IntN(8) == 0 {
		x.auto, x.commit, x.iso = true, true, sql.LevelDefault
		x.items = slices.DeleteFunc(x.items, func(it tpItem) bool { return it.raw })[:1]
		if x.fault == tpKill || x.fault == tpKillMid || x.fault == tpLogFails {
			x.fault = tpNoFault
		}
	}
	// around the timeout: before it, at it, after it
	x.stall = tpTimeout - 300*time.Millisecond + time.Duration(g.rng.IntN(600))*time.Millisecond
	return x
}
