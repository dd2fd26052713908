package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/sqlhook"
)

// sqlClient writes through sqlhook: strict (no scatter) or with
// WithScatter, one *sql.DB each, over the same data sources.
type sqlClient struct {
	w                      *world
	strict, scatter, multi *sql.DB // multi: WithMultiSourceTx
}

func newSQLClient(t testing.TB, w *world) *sqlClient {
	t.Helper()
	open := func(opts ...sqlhook.Option) *sql.DB {
		db, err := sqlhook.Open(w.b.config(t), opts...)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(4)
		t.Cleanup(func() { db.Close() })
		return db
	}
	return &sqlClient{w: w, strict: open(), scatter: open(sqlhook.WithScatter()), multi: open(sqlhook.WithMultiSourceTx())}
}

// cell is a piece of SQL with ? placeholders and their arguments.
type cell struct {
	text string
	args []any
}

func (c *cell) add(text string, args ...any) {
	c.text += text
	c.args = append(c.args, args...)
}

func (c *cell) addCell(o cell) { c.add(o.text, o.args...) }

// stmt is one statement of a step. Its text names the tables {T}
// (t_order) and {D} (t_dict), spelled by shardR and oracleR.
type stmt struct {
	shardR, oracleR *strings.Replacer
	physical        string // names this physical table instead of t_order
	placementOnly   bool   // the oracle copies the shards' t_order afterwards
	sharded         cell
	// oracle builds the oracle's statement from the keys shardkey generated
	// for tagged rows; nil: the same statement.
	oracle func(keys []int64) cell
	tags   []string // notes of the rows inserted without a key, in order
}

// sqlGen builds the statements of one step.
type sqlGen struct {
	h    *harness
	b    backend
	rng  *rand.Rand
	step int
	rows int // rows inserted so far in the step (for notes)
}

// final spells ? as $n on PostgreSQL, outside quoted literals.
func (g *sqlGen) final(s string) string {
	if !g.b.dollar {
		return s
	}
	var out strings.Builder
	n, quoted := 0, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == '?' && !quoted:
			n++
			fmt.Fprintf(&out, "$%d", n)
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}

// num spells a sharding value: a placeholder with some Go type that
// carries the number, or a literal in some form.
func (g *sqlGen) num(v int64) cell {
	rng := g.rng
	if rng.IntN(3) == 0 { // literal
		switch {
		case rng.IntN(4) == 0:
			return cell{text: "'" + strconv.FormatInt(v, 10) + "'"}
		case g.b.mysql && v >= 0 && rng.IntN(3) == 0:
			return cell{text: fmt.Sprintf("0x%X", v)}
		}
		return cell{text: strconv.FormatInt(v, 10)}
	}
	var a any = v
	switch rng.IntN(10) {
	case 0:
		a = pick(rng, numberTexts(v))
	case 5:
		if g.b.driver != "sqlite" { // SQLite stores []byte as a BLOB, not a number
			a = []byte(strconv.FormatInt(v, 10))
		}
	case 6:
		a = sql.NullInt64{Int64: v, Valid: true}
	case 7:
		if v > -1<<53 && v < 1<<53 && !g.b.dollar { // pgx does not send a float for a bigint
			a = float64(v)
		}
	case 1:
		if v >= 0 {
			a = uint64(v)
		}
	case 2:
		a = int(v)
	case 3:
		if v >= math32min && v <= math32max {
			a = int32(v)
		}
	case 4:
		a = keygen.ID(v)
	}
	return cell{text: "?", args: []any{a}}
}

const math32min, math32max = -1 << 31, 1<<31 - 1

// numberTexts are strings every database reads as the integer v.
func numberTexts(v int64) []string {
	t := strconv.FormatInt(v, 10)
	out := []string{t}
	if v >= 0 {
		out = append(out, "+"+t, "00"+t)
	}
	return out
}

// val spells a non-sharding value (string, int64 or nil).
func (g *sqlGen) val(v any) cell {
	if g.rng.IntN(4) == 0 {
		switch x := v.(type) {
		case nil:
			return cell{text: "NULL"}
		case string:
			return cell{text: "'" + x + "'"}
		case int64:
			if g.b.mysql && x >= 0 && g.rng.IntN(2) == 0 {
				return cell{text: fmt.Sprintf("0x%02X", x)} // a number here, as MySQL reads it
			}
			return cell{text: strconv.FormatInt(x, 10)}
		}
	}
	return cell{text: "?", args: []any{v}}
}

// insRow is one row of an INSERT into t_order; key nil: generated.
type insRow struct {
	key    *int64
	user   cell // spelled
	status any
	amount any
	note   string
}

func (g *sqlGen) newRow(key *int64, user int64) insRow {
	g.rows++
	return insRow{key: key, user: g.num(user), status: pick(g.rng, statuses), amount: pick(g.rng, amounts),
		note: fmt.Sprintf("s%d_%d", g.step, g.rows)}
}

// insert builds INSERT INTO t_order ... VALUES ... suffix. Rows with a
// nil key leave it to the key generator: all of them omit the column, or
// give NULL/DEFAULT/a nil argument in it.
func (g *sqlGen) insert(verb string, rows []insRow, suffix string) stmt {
	omit := true
	for _, r := range rows {
		if r.key != nil {
			omit = false
		}
	}
	if omit && g.rng.IntN(3) == 0 {
		omit = false
	}
	nullKey := func() cell {
		switch g.rng.IntN(3) {
		case 0:
			return cell{text: "NULL"}
		case 1:
			if !g.b.mysql && g.b.driver != "sqlite" {
				return cell{text: "DEFAULT"}
			}
		}
		return cell{text: "?", args: []any{nil}}
	}
	var keyCells []cell
	for _, r := range rows {
		if r.key != nil {
			keyCells = append(keyCells, g.num(*r.key))
		} else {
			keyCells = append(keyCells, nullKey())
		}
	}
	others := make([]cell, len(rows))
	for i, r := range rows {
		c := cell{}
		c.addCell(r.user)
		c.add(", ")
		c.addCell(g.val(r.status))
		c.add(", ")
		c.addCell(g.val(r.amount))
		c.add(", ?", r.note)
		others[i] = c
	}
	build := func(keys []cell, withKey bool) cell {
		c := cell{}
		if withKey {
			c.add(verb + " {T} (order_id, user_id, status, amount, note) VALUES ")
		} else {
			c.add(verb + " {T} (user_id, status, amount, note) VALUES ")
		}
		for i := range rows {
			if i > 0 {
				c.add(", ")
			}
			c.add("(")
			if withKey {
				c.addCell(keys[i])
				c.add(", ")
			}
			c.addCell(others[i])
			c.add(")")
		}
		c.add(suffix)
		return c
	}
	s := stmt{sharded: build(keyCells, !omit)}
	var tagged []int
	for i, r := range rows {
		if r.key == nil {
			s.tags = append(s.tags, r.note)
			tagged = append(tagged, i)
		}
	}
	if len(tagged) > 0 {
		s.oracle = func(keys []int64) cell {
			kc := append([]cell(nil), keyCells...)
			for j, i := range tagged {
				kc[i] = cell{text: "?", args: []any{keys[j]}}
			}
			return build(kc, true)
		}
	}
	return s
}

// where builds a WHERE condition on t_order of the given shape around the
// row p; shapes without one of the sharding columns need scatter.
func (g *sqlGen) where(shape string, p pair) cell {
	rng := g.rng
	c := cell{}
	eq := func(col string, v int64) {
		c.add(col + " = ")
		c.addCell(g.num(v))
	}
	switch shape {
	case "key":
		if rng.IntN(2) == 0 {
			eq("user_id", p.user)
			c.add(" AND ")
			eq("order_id", p.key)
		} else {
			eq("order_id", p.key)
			c.add(" AND ")
			eq("user_id", p.user)
		}
	case "in":
		c.add("user_id IN (")
		c.addCell(g.num(p.user))
		c.add(", ")
		c.addCell(g.num(sameDSUser(rng, p.user)))
		c.add(") AND order_id IN (")
		c.addCell(g.num(p.key))
		for i := rng.IntN(3); i > 0; i-- {
			c.add(", ")
			c.addCell(g.num(explicitKey(rng)))
		}
		c.add(")")
	case "range":
		eq("user_id", p.user)
		lo := min(p.key, int64(rng.IntN(30)))
		hi := lo + int64(rng.IntN(12))
		if rng.IntN(2) == 0 {
			c.add(" AND order_id BETWEEN ")
			c.addCell(g.num(lo))
			c.add(" AND ")
			c.addCell(g.num(hi))
		} else {
			c.add(" AND order_id >= ")
			c.addCell(g.num(lo))
			c.add(" AND order_id < ")
			c.addCell(g.num(hi))
		}
	case "or":
		q := g.h.existing(rng, "t_order")
		c.add("(")
		eq("user_id", p.user)
		c.add(" AND ")
		eq("order_id", p.key)
		c.add(") OR (")
		eq("user_id", q.user)
		c.add(" AND ")
		eq("order_id", q.key)
		c.add(")")
	case "user":
		eq("user_id", p.user)
	case "order":
		eq("order_id", p.key)
	case "user+status":
		eq("user_id", p.user)
		c.add(" AND status = ")
		c.addCell(g.val(pick(rng, statuses[:3])))
	case "any": // PostgreSQL: = ANY($1) with an array
		eq("user_id", p.user)
		c.add(" AND order_id = ANY(?)", []int64{p.key, explicitKey(rng)})
	case "tuple":
		q := g.h.existing(rng, "t_order")
		c.add("(user_id, order_id) IN ((")
		c.addCell(g.num(p.user))
		c.add(", ")
		c.addCell(g.num(p.key))
		c.add("), (")
		c.addCell(g.num(q.user))
		c.add(", ")
		c.addCell(g.num(q.key))
		c.add("))")
	case "precedence": // AND binds tighter: every target
		eq("user_id", p.user)
		c.add(" AND ")
		eq("order_id", p.key)
		c.add(" OR status = ")
		c.addCell(g.val(pick(rng, statuses[:3])))
	case "not":
		eq("user_id", p.user)
		c.add(" AND NOT (")
		eq("order_id", p.key)
		c.add(")")
	case "expr": // values the router cannot read: they only widen
		c.add(fmt.Sprintf("user_id = %d + 0 AND order_id = ", p.user))
		c.addCell(g.num(p.key))
	case "contradiction":
		eq("user_id", p.user)
		c.add(" AND ")
		eq("order_id", p.key)
		c.add(" AND ")
		eq("order_id", explicitKey(rng))
	case "isnull":
		c.add("user_id IS NULL AND ")
		eq("order_id", p.key)
	case "qualified":
		c.add("{T}.user_id = ")
		c.addCell(g.num(p.user))
		c.add(" AND {T}.order_id = ")
		c.addCell(g.num(p.key))
	case "rangeuser": // a range on the database column: every data source
		c.add("user_id >= ")
		c.addCell(g.num(p.user))
		c.add(" AND ")
		eq("order_id", p.key)
	default: // "none"
		c.add("status = ")
		c.addCell(g.val(pick(rng, statuses[:3])))
	}
	return c
}

var whereShapes = []string{"key", "key", "key", "in", "range", "or", "user", "order", "user+status", "none",
	"any", "tuple", "precedence", "not", "expr", "contradiction", "isnull", "qualified", "rangeuser"}

// shape draws a WHERE shape this dialect can spell.
func (g *sqlGen) shape() string {
	for {
		s := pick(g.rng, whereShapes)
		if s == "any" && !g.b.dollar {
			continue
		}
		return s
	}
}

// set builds an UPDATE's SET list of non-sharding columns.
func (g *sqlGen) set() cell {
	c := cell{}
	n := 1 + g.rng.IntN(2)
	for i, col := range []string{"status", "amount"}[:n] {
		if i > 0 {
			c.add(", ")
		}
		switch {
		case col == "amount" && g.rng.IntN(2) == 0:
			c.add("amount = amount + 1")
		case col == "amount":
			c.add("amount = ")
			c.addCell(g.val(pick(g.rng, amounts)))
		default:
			c.add("status = ")
			c.addCell(g.val(pick(g.rng, statuses)))
		}
	}
	return c
}

func (c *sqlClient) build(h *harness, rng *rand.Rand, step int) op {
	g := &sqlGen{h: h, b: c.w.b, rng: rng, step: step}
	db := c.strict
	handle := "strict"
	if rng.IntN(3) == 0 {
		db, handle = c.scatter, "scatter"
	}
	if rng.IntN(10) == 0 {
		if rng.IntN(2) == 0 {
			db, handle = c.multi, "multi-source tx"
		}
		return c.txOp(g, db, handle)
	}
	kind, s := g.statement()
	return c.single(g, db, handle, kind, s)
}

// statement draws one statement and how its tables are spelled.
func (g *sqlGen) statement() (string, stmt) {
	kind, s := g.statementText()
	if s.physical != "" {
		s.shardR = strings.NewReplacer("{T}", s.physical, "{D}", "t_dict")
		s.oracleR = strings.NewReplacer("{T}", "t_order", "{D}", "t_dict")
		return kind, s
	}
	var sp string
	s.shardR, s.oracleR, sp = g.spelling()
	if sp != "" {
		kind += "." + sp
	}
	return kind, s
}

// spelling spells the table names: plain mostly; quoted, qualified by
// schema or database, or in upper case now and then. The oracle gets
// the same text where its database reads it the same way.
func (g *sqlGen) spelling() (shard, oracle *strings.Replacer, kind string) {
	plain := strings.NewReplacer("{T}", "t_order", "{D}", "t_dict")
	if g.rng.IntN(4) != 0 {
		return plain, plain, ""
	}
	spell := func(f func(string) string) *strings.Replacer {
		return strings.NewReplacer("{T}", f("t_order"), "{D}", f("t_dict"))
	}
	switch {
	case g.b.mysql:
		db := g.b.dbName[g.rng.IntN(2)]
		switch g.rng.IntN(3) {
		case 0:
			return spell(func(t string) string { return "`" + t + "`" }), plain, "quoted"
		case 1:
			return spell(func(t string) string { return db + "." + t }), plain, "qualified"
		}
		return spell(func(t string) string { return "`" + db + "`.`" + t + "`" }), plain, "qualified"
	case g.b.dollar:
		var sp *strings.Replacer
		switch g.rng.IntN(4) {
		case 0:
			sp, kind = spell(func(t string) string { return `"` + t + `"` }), "quoted"
		case 1:
			sp, kind = spell(func(t string) string { return "public." + t }), "qualified"
		case 2:
			sp, kind = spell(func(t string) string { return `public."` + t + `"` }), "qualified"
		default:
			sp, kind = spell(strings.ToUpper), "upper"
		}
		return sp, sp, kind
	}
	var sp *strings.Replacer
	switch g.rng.IntN(4) {
	case 0:
		sp, kind = spell(func(t string) string { return `"` + t + `"` }), "quoted"
	case 1:
		sp, kind = spell(func(t string) string { return "main." + t }), "qualified"
	case 2:
		sp, kind = spell(func(t string) string { return "`" + t + "`" }), "quoted"
	default:
		sp, kind = spell(strings.ToUpper), "upper"
	}
	return sp, sp, kind
}

// statementText draws one statement.
func (g *sqlGen) statementText() (string, stmt) {
	rng := g.rng
	switch n := rng.IntN(100); {
	case n < 10: // single-row insert, explicit key
		k := explicitKey(rng)
		return "sql.insert1", g.insert("INSERT INTO", []insRow{g.newRow(&k, userIn(rng, ownerDS(k)))}, "")
	case n < 16: // single-row insert, generated key
		return "sql.insert1.genkey", g.insert("INSERT INTO", []insRow{g.newRow(nil, pick(rng, smallUsers))}, "")
	case n < 22: // multi-row insert, fresh explicit keys (never a duplicate: a split INSERT is not atomic)
		var rows []insRow
		for i := range 2 + rng.IntN(3) {
			k := int64(1_000_000 + g.step*10 + i)
			rows = append(rows, g.newRow(&k, userIn(rng, ownerDS(k))))
		}
		return "sql.insertN", g.insert("INSERT INTO", rows, "")
	case n < 27: // multi-row insert, generated keys, users of both data sources
		var rows []insRow
		for range 2 + rng.IntN(3) {
			rows = append(rows, g.newRow(nil, pick(rng, smallUsers)))
		}
		return "sql.insertN.genkey", g.insert("INSERT INTO", rows, "")
	case n < 31:
		return g.badInsert()
	case n < 43:
		return g.upsert()
	case n < 60:
		p := g.h.existing(rng, "t_order")
		shape := g.shape()
		c := cell{}
		c.add("UPDATE {T} SET ")
		c.addCell(g.set())
		c.add(" WHERE ")
		c.addCell(g.where(shape, p))
		return "sql.update." + shape, stmt{sharded: c}
	case n < 66:
		return g.updateShardingColumn()
	case n < 70:
		return g.special()
	case n < 80:
		p := g.h.existing(rng, "t_order")
		shape := g.shape()
		c := cell{}
		c.add("DELETE FROM {T} WHERE ")
		c.addCell(g.where(shape, p))
		return "sql.delete." + shape, stmt{sharded: c}
	default:
		return g.dict()
	}
}

// special: an UPDATE through an alias, UPDATE/DELETE with ORDER BY and
// LIMIT (MySQL; each target would apply its own LIMIT), and statements
// naming a physical table instead of the logic one.
func (g *sqlGen) special() (string, stmt) {
	rng := g.rng
	p := g.h.existing(rng, "t_order")
	c := cell{}
	switch rng.IntN(7) {
	case 4: // copies a row under a key of another table: must be refused
		c.add("INSERT INTO {T} (order_id, user_id, status, amount, note) SELECT order_id + 1, user_id, status, amount, note FROM {T} WHERE ")
		c.addCell(g.where("key", p))
		return "sql.insert.select", stmt{sharded: c}
	case 5: // a logic table in a subquery
		c.add("UPDATE {T} SET status = 's' WHERE ")
		c.addCell(g.where("key", p))
		c.add(" AND amount IN (SELECT amount FROM {D})")
		if rng.IntN(2) == 0 || g.b.mysql {
			return "sql.update.subquery", stmt{sharded: c}
		}
		c = cell{}
		c.add("WITH x AS (SELECT order_id FROM {T} WHERE ")
		c.addCell(g.where("key", p))
		c.add(") UPDATE {T} SET status = 'w' WHERE order_id IN (SELECT order_id FROM x) AND user_id = ")
		c.addCell(g.num(p.user))
		return "sql.update.cte", stmt{sharded: c}
	case 6: // REPLACE: MySQL's delete-and-insert upsert (SQLite's too)
		if g.b.dollar {
			break
		}
		k := p.key
		verb := "REPLACE INTO"
		if !g.b.mysql && rng.IntN(2) == 0 {
			verb = "INSERT OR REPLACE INTO"
		}
		return "sql.replace", g.insert(verb, []insRow{g.newRow(&k, sameDSUser(rng, p.user))}, "")
	case 0:
		c.add("UPDATE {T} AS o SET status = ")
		c.addCell(g.val(pick(rng, statuses)))
		c.add(" WHERE o.user_id = ")
		c.addCell(g.num(p.user))
		if rng.IntN(2) == 0 {
			c.add(" AND o.order_id = ")
			c.addCell(g.num(p.key))
		}
		return "sql.update.alias", stmt{sharded: c}
	case 1:
		if g.b.mysql {
			verb := pick(rng, []string{"UPDATE {T} SET amount = 7 WHERE ", "DELETE FROM {T} WHERE "})
			c.add(verb)
			c.addCell(g.where(pick(rng, []string{"user", "key", "in", "none"}), p))
			c.add(fmt.Sprintf(" ORDER BY order_id LIMIT %d", 1+rng.IntN(2)))
			return "sql." + strings.ToLower(verb[:6]) + ".limit", stmt{sharded: c}
		}
	}
	// a physical table: the oracle runs it on t_order
	phys := fmt.Sprintf("t_order_%d", rng.IntN(3))
	var s stmt
	kind := "sql.physical."
	switch rng.IntN(3) {
	case 0:
		k := explicitKey(rng)
		s = g.insert("INSERT INTO", []insRow{g.newRow(&k, userIn(rng, ownerDS(k)))}, "")
		kind += "insert"
	case 1:
		c.add("UPDATE {T} SET status = 'p' WHERE ")
		c.addCell(g.where("key", p))
		s, kind = stmt{sharded: c}, kind+"update"
	default:
		c.add("DELETE FROM {T} WHERE ")
		c.addCell(g.where("key", p))
		s, kind = stmt{sharded: c}, kind+"delete"
	}
	s.physical = phys
	if kind != "sql.physical.insert" {
		// which rows a statement on a physical table should reach is not
		// the logic table's answer: only placement is checked
		s.placementOnly = true
	}
	return kind, s
}

// badInsert: rows shardkey must refuse (or the database reject): no
// user_id, a NULL one, one beyond BIGINT.
func (g *sqlGen) badInsert() (string, stmt) {
	rng := g.rng
	k := explicitKey(rng)
	c := cell{}
	switch rng.IntN(4) {
	case 0:
		c.add("INSERT INTO {T} (order_id, status, note) VALUES (")
		c.addCell(g.num(k))
		c.add(", 'a', ?)", fmt.Sprintf("s%d_bad", g.step))
		return "sql.insert.nouser", stmt{sharded: c}
	case 1:
		c.add("INSERT INTO {T} (order_id, user_id, note) VALUES (")
		c.addCell(g.num(k))
		if rng.IntN(2) == 0 {
			c.add(", NULL, 'x')")
		} else {
			c.add(", ?, 'x')", nil)
		}
		return "sql.insert.nulluser", stmt{sharded: c}
	default:
		c.add("INSERT INTO {T} (order_id, user_id, note) VALUES (")
		c.addCell(g.num(k))
		huge := pick(rng, []string{"9223372036854775808", "9223372036854775809", "18446744073709551615"})
		switch rng.IntN(3) {
		case 0:
			u, _ := strconv.ParseUint(huge, 10, 64)
			c.add(", ?, 'x')", u)
		case 1:
			c.add(", ?, 'x')", huge)
		default:
			c.add(", " + huge + ", 'x')")
		}
		return "sql.insert.hugeuser", stmt{sharded: c}
	}
}

// upsert: ON CONFLICT ... DO UPDATE / DO NOTHING, ON DUPLICATE KEY
// UPDATE, INSERT IGNORE, over existing and new keys; the update part
// sometimes assigns a sharding column.
func (g *sqlGen) upsert() (string, stmt) {
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
	var rows []insRow
	for _, p := range ps {
		k := p.key
		rows = append(rows, g.newRow(&k, p.user))
	}
	kind := "sql.upsert"
	if len(rows) > 1 {
		kind += "N"
	}
	if rng.IntN(4) == 0 {
		if g.b.mysql {
			return kind + ".ignore", g.insert("INSERT IGNORE INTO", rows, "")
		}
		target := ""
		if rng.IntN(2) == 0 {
			target = " (order_id)"
		}
		return kind + ".nothing", g.insert("INSERT INTO", rows, " ON CONFLICT"+target+" DO NOTHING")
	}
	excluded := func(col string) string {
		if g.b.mysql {
			return "VALUES(" + col + ")"
		}
		return "excluded." + col
	}
	self := "t_order."
	if g.b.mysql {
		self = ""
	}
	var sets []string
	shard := ""
	for _, a := range []string{"status", "amount", "amountinc", "user", "order"} {
		if rng.IntN(3) != 0 {
			continue
		}
		switch a {
		case "status":
			sets = append(sets, "status = "+excluded("status"))
		case "amount":
			sets = append(sets, "amount = "+excluded("amount"))
		case "amountinc":
			sets = append(sets, "amount = "+self+"amount + 1")
		case "user":
			if rng.IntN(2) == 0 {
				sets = append(sets, "user_id = "+excluded("user_id"))
				shard = ".setuser"
			} else {
				u := otherDSUser(rng, ps[0].user)
				if rng.IntN(2) == 0 {
					u = ps[0].user
				}
				sets = append(sets, "user_id = "+strconv.FormatInt(u, 10))
				shard = ".setuser"
			}
		case "order":
			sets = append(sets, "order_id = "+excluded("order_id"))
			shard += ".setorder"
		}
	}
	if len(sets) == 0 {
		sets = []string{"status = " + excluded("status")}
	}
	suffix := " ON CONFLICT (order_id) DO UPDATE SET " + strings.Join(sets, ", ")
	if g.b.mysql {
		suffix = " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
	}
	return kind + ".update" + shard, g.insert("INSERT INTO", rows, suffix)
}

// updateShardingColumn: UPDATE ... SET user_id or order_id: to the value
// the row has (allowed), to a value routing to the same target, or to
// one routing elsewhere (refused).
func (g *sqlGen) updateShardingColumn() (string, stmt) {
	rng := g.rng
	p := g.h.existing(rng, "t_order")
	shape := pick(rng, []string{"key", "key", "in", "range", "user"})
	c := cell{}
	c.add("UPDATE {T} SET ")
	kind := "sql.update.setuser"
	switch rng.IntN(6) {
	case 0:
		c.add("user_id = ")
		c.addCell(g.num(p.user))
		kind += ".same"
	case 1:
		c.add("user_id = ")
		c.addCell(g.num(sameDSUser(rng, p.user)))
		kind += ".sameds"
	case 2:
		c.add("user_id = ")
		c.addCell(g.num(otherDSUser(rng, p.user)))
		kind += ".otherds"
	case 3:
		c.add("user_id = NULL")
		kind += ".null"
	case 4:
		kind = "sql.update.setorder"
		c.add("order_id = ")
		if rng.IntN(2) == 0 {
			c.addCell(g.num(p.key))
			kind += ".same"
		} else {
			c.addCell(g.num(otherTableKey(rng, p.key, dsOf(p.user))))
			kind += ".other"
		}
	default:
		c.add("user_id = user_id")
		kind += ".self"
	}
	if rng.IntN(2) == 0 {
		c.add(", status = ")
		c.addCell(g.val(pick(rng, statuses)))
	}
	c.add(" WHERE ")
	c.addCell(g.where(shape, p))
	return kind + "." + shape, stmt{sharded: c}
}

// dict: writes to the broadcast table.
func (g *sqlGen) dict() (string, stmt) {
	rng := g.rng
	k := string(rune('a' + rng.IntN(6)))
	v := pick(rng, []any{"x", "y", nil})
	n := pick(rng, []any{int64(0), int64(1), nil})
	c := cell{}
	switch rng.IntN(5) {
	case 0:
		c.add("INSERT INTO {D} (k, v, n) VALUES (?, ", k)
		c.addCell(g.val(v))
		c.add(", ")
		c.addCell(g.val(n))
		c.add(")")
		return "sql.dict.insert", stmt{sharded: c}
	case 1:
		c.add("INSERT INTO {D} (k, v, n) VALUES (?, ", k)
		c.addCell(g.val(v))
		c.add(", ")
		c.addCell(g.val(n))
		if g.b.mysql {
			c.add(") ON DUPLICATE KEY UPDATE v = VALUES(v), n = n + 1")
		} else {
			c.add(") ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = t_dict.n + 1")
		}
		return "sql.dict.upsert", stmt{sharded: c}
	case 2:
		c.add("UPDATE {D} SET v = ")
		c.addCell(g.val(v))
		c.add(" WHERE k = ?", k)
		return "sql.dict.update", stmt{sharded: c}
	case 3:
		c.add("UPDATE {D} SET n = n + 1")
		return "sql.dict.updateall", stmt{sharded: c}
	default:
		c.add("DELETE FROM {D} WHERE k IN (?, ?)", k, string(rune('a'+rng.IntN(6))))
		return "sql.dict.delete", stmt{sharded: c}
	}
}

func (s stmt) describe(g *sqlGen) string {
	return fmt.Sprintf("%s %s", g.final(s.shardR.Replace(s.sharded.text)), argsText(s.sharded.args))
}

// text is the statement as shardkey gets it.
func (s stmt) text(g *sqlGen) string { return g.final(s.shardR.Replace(s.sharded.text)) }

func argsText(args []any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = argText(a)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// execer is *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func execRows(ctx context.Context, db execer, text string, args []any) (int64, error) {
	res, err := db.ExecContext(ctx, text, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// oracleStmt resolves a statement's generated keys from what shardkey
// stored (h.mid) and returns the oracle's statement.
func (g *sqlGen) oracleStmt(s stmt) (string, []any, error) {
	if s.oracle == nil {
		return g.final(s.oracleR.Replace(s.sharded.text)), s.sharded.args, nil
	}
	var keys []int64
	for _, tag := range s.tags {
		k, err := g.h.generatedKey(tag)
		if err != nil {
			return "", nil, err
		}
		keys = append(keys, k)
	}
	c := s.oracle(keys)
	return g.final(s.oracleR.Replace(c.text)), c.args, nil
}

// generatedKey finds the key of the t_order row shardkey inserted with
// the given note.
func (h *harness) generatedKey(note string) (int64, error) {
	var found []string
	for _, tg := range h.w.physical["t_order"] {
		for _, r := range h.mid.phys[tg]["t_order"] {
			if r[4] == note {
				found = append(found, r[0])
			}
		}
	}
	switch len(found) {
	case 0:
		// rolled back to a savepoint, or lost: the oracle inserts it with
		// a key no row has, so a lost row shows as a difference
		h.lost++
		return -1<<62 - h.lost, nil
	case 1:
	default:
		return 0, fmt.Errorf("the row inserted with note %q is stored %d times in the shards", note, len(found))
	}
	return strconv.ParseInt(found[0], 10, 64)
}

func (c *sqlClient) single(g *sqlGen, db *sql.DB, handle, kind string, s stmt) op {
	ctx := context.Background()
	return op{
		kind: kind, desc: handle + ": " + s.describe(g),
		shard: func() ([]int64, error) {
			n, err := execRows(ctx, db, s.text(g), s.sharded.args)
			return []int64{n}, err
		},
		oracle: func() ([]int64, error) {
			if s.placementOnly {
				return nil, c.w.syncOracle(g.h.mid, "t_order")
			}
			text, args, err := g.oracleStmt(s)
			if err != nil {
				return nil, err
			}
			n, err := execRows(ctx, c.w.oracle, text, args)
			return []int64{n}, err
		},
		placementOnly: s.placementOnly,
	}
}

// txItem is a statement of a transaction or a savepoint command.
type txItem struct {
	s   *stmt
	raw string
}

// txOp: a transaction of one to three statements, with a savepoint
// rolled back to or released now and then, committed or rolled back; any
// error rolls it back.
func (c *sqlClient) txOp(g *sqlGen, db *sql.DB, handle string) op {
	ctx := context.Background()
	var items []txItem
	n := 1 + g.rng.IntN(3)
	sp := -1
	if g.rng.IntN(2) == 0 {
		sp = g.rng.IntN(n)
	}
	spEnd := pick(g.rng, []string{"ROLLBACK TO SAVEPOINT sp1", "RELEASE SAVEPOINT sp1"})
	kind := "sql.tx"
	for i := range n {
		if i == sp {
			items = append(items, txItem{raw: "SAVEPOINT sp1"})
			kind += ".savepoint"
		}
		k, s := g.statement()
		for s.placementOnly || g.h.skipped(k) { // checked on their own only
			k, s = g.statement()
		}
		items = append(items, txItem{s: &s})
		if sp >= 0 && i == n-1 || (sp >= 0 && i > sp && g.rng.IntN(2) == 0) {
			items = append(items, txItem{raw: spEnd})
			if strings.HasPrefix(spEnd, "ROLLBACK") {
				kind += ".rollbackto"
			}
			sp = -1
		}
	}
	commit := g.rng.IntN(4) != 0
	var desc strings.Builder
	fmt.Fprintf(&desc, "%s: BEGIN", handle)
	for _, it := range items {
		if it.s == nil {
			fmt.Fprintf(&desc, "\n%s", it.raw)
		} else {
			fmt.Fprintf(&desc, "\n%s", it.s.describe(g))
		}
	}
	end := "COMMIT"
	if !commit {
		end = "ROLLBACK"
	}
	fmt.Fprintf(&desc, "\n%s", end)
	if handle == "multi-source tx" {
		kind += ".multi"
	}
	run := func(tx *sql.Tx, oracle bool) ([]int64, error) {
		var rows []int64
		for _, it := range items {
			text, args := it.raw, []any(nil)
			if it.s != nil && oracle {
				var err error
				if text, args, err = g.oracleStmt(*it.s); err != nil {
					return nil, err
				}
			} else if it.s != nil {
				text, args = it.s.text(g), it.s.sharded.args
			}
			n, err := execRows(ctx, tx, text, args)
			if err != nil {
				return nil, err
			}
			if it.s != nil {
				rows = append(rows, n)
			}
		}
		return rows, nil
	}
	return op{
		kind: kind + "." + strings.ToLower(end), desc: desc.String(),
		shard: func() ([]int64, error) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return nil, err
			}
			rows, err := run(tx, false)
			if err != nil {
				if rerr := tx.Rollback(); rerr != nil {
					return nil, fmt.Errorf("%w; rollback: %v", err, rerr)
				}
				return nil, err
			}
			if !commit {
				if err := tx.Rollback(); err != nil {
					return nil, err
				}
				return nil, errRolledBack
			}
			return rows, tx.Commit()
		},
		oracle: func() ([]int64, error) {
			tx, err := c.w.oracle.BeginTx(ctx, nil)
			if err != nil {
				return nil, err
			}
			defer tx.Rollback()
			rows, err := run(tx, true)
			if err != nil {
				return nil, err
			}
			return rows, tx.Commit()
		},
	}
}
