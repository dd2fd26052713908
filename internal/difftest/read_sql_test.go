package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// sqlItem is one projected expression.
type sqlItem struct {
	text  string
	kind  colKind
	alias string
}

// sqlKey is one ORDER BY term: spelled as text; proj is the projected
// item it names (-1: an expression not projected).
type sqlKey struct {
	text  string
	proj  int
	expr  string // the expression, for the oracle's full read
	kind  colKind
	desc  bool
	nulls string // "", "FIRST", "LAST"
}

// sqlQuery is a generated SELECT on t_read.
type sqlQuery struct {
	db            string
	star          bool
	distinct      bool
	items         []sqlItem
	where         []cell // AND-ed
	group         []string
	having        *cell
	order         []sqlKey
	limit, off    int // -1: none
	limitArg      bool
	commaLimit    bool // LIMIT off, n
	numbered      bool // SQLite: placeholders spelled ?NNN
	prepared      bool // run through Prepare
	inTx          bool // run in a read-only transaction
	questionMarks bool // placeholders left as ? (GORM's Raw spells them)
	usesDefText   bool // the merge compares label: run without WithBinaryCollation
}

// sqlReadGen generates SELECTs through sqlhook.
type sqlReadGen struct {
	w *readWorld
}

func (g *sqlReadGen) build(rng *rand.Rand) readCase {
	if rng.IntN(12) == 0 {
		return g.genTricky(rng)
	}
	q := genQuery(rng, g.w.b.name)
	return g.caseOf(q)
}

// kinds is the kind of every result column.
func (q *sqlQuery) kinds() []colKind {
	var out []colKind
	if q.star {
		for _, c := range readCols {
			out = append(out, c.kind)
		}
	}
	for _, it := range q.items {
		out = append(out, keyKind(q.db, it.kind, readColNamed(it.text).name == ""))
	}
	return out
}

// render spells the query; full: without LIMIT/OFFSET and with the ORDER
// BY keys appended to the projection.
func (q *sqlQuery) render(full bool) (string, []any) {
	var c cell
	c.add("SELECT ")
	if q.distinct {
		c.add("DISTINCT ")
	}
	c.add(strings.Join(q.projection(full), ", ") + " FROM t_read")
	for i, w := range q.where {
		if i == 0 {
			c.add(" WHERE ")
		} else {
			c.add(" AND ")
		}
		c.addCell(w)
	}
	if len(q.group) > 0 {
		c.add(" GROUP BY " + strings.Join(q.group, ", "))
	}
	if q.having != nil {
		c.add(" HAVING ")
		c.addCell(*q.having)
	}
	for i, k := range q.order {
		if i == 0 {
			c.add(" ORDER BY ")
		} else {
			c.add(", ")
		}
		c.add(k.text)
		if k.desc {
			c.add(" DESC")
		}
		if k.nulls != "" {
			c.add(" NULLS " + k.nulls)
		}
	}
	if !full {
		q.renderLimit(&c)
	}
	switch {
	case q.questionMarks:
		return c.text, c.args
	case q.db == "postgres":
		return numbered(c.text, "$"), c.args
	case q.numbered:
		return numbered(c.text, "?"), c.args
	}
	return c.text, c.args
}

// projection is the select list; full: the ORDER BY keys appended as
// dr_k0, dr_k1...
func (q *sqlQuery) projection(full bool) []string {
	var proj []string
	if q.star {
		proj = append(proj, "*")
	}
	for _, it := range q.items {
		if it.alias != "" {
			proj = append(proj, it.text+" AS "+it.alias)
		} else {
			proj = append(proj, it.text)
		}
	}
	if full {
		for i, k := range q.order {
			proj = append(proj, fmt.Sprintf("%s AS dr_k%d", k.expr, i))
		}
	}
	return proj
}

// renderLimit spells LIMIT/OFFSET: literals or placeholders, and LIMIT
// off, n where the database has it.
func (q *sqlQuery) renderLimit(c *cell) {
	if q.limit >= 0 {
		switch {
		case q.commaLimit && q.limitArg:
			c.add(" LIMIT ?, ?", int64(max(q.off, 0)), int64(q.limit))
		case q.commaLimit:
			c.add(fmt.Sprintf(" LIMIT %d, %d", max(q.off, 0), q.limit))
		case q.limitArg:
			c.add(" LIMIT ?", int64(q.limit))
			if q.off >= 0 {
				c.add(" OFFSET ?", int64(q.off))
			}
		default:
			c.add(fmt.Sprintf(" LIMIT %d", q.limit))
			if q.off >= 0 {
				c.add(fmt.Sprintf(" OFFSET %d", q.off))
			}
		}
	}
}

// numbered spells each ? outside quoted literals as mark followed by its
// number ($n on PostgreSQL, ?NNN on SQLite).
func numbered(s, mark string) string {
	var out strings.Builder
	n, quoted := 0, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == '?' && !quoted:
			n++
			fmt.Fprintf(&out, "%s%d", mark, n)
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}

func describe(text string, args []any) string {
	if len(args) == 0 {
		return text
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = showVal(a)
	}
	return text + "  -- args: " + strings.Join(parts, ", ")
}

func queryOn(db *sql.DB, text string, args []any) func() (*readResult, error) {
	return func() (*readResult, error) {
		rs, err := db.Query(text, args...)
		if err != nil {
			return nil, err
		}
		return scanAll(rs)
	}
}

// queryInTx runs the statement in a read-only transaction, rolled back.
func queryInTx(db *sql.DB, text string, args []any) func() (*readResult, error) {
	return func() (*readResult, error) {
		tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		defer tx.Rollback()
		rs, err := tx.Query(text, args...)
		if err != nil {
			return nil, err
		}
		return scanAll(rs)
	}
}

// preparedOn runs the statement through Prepare and Stmt.Query, the
// other path database/sql takes.
func preparedOn(db *sql.DB, text string, args []any) func() (*readResult, error) {
	return func() (*readResult, error) {
		st, err := db.Prepare(text)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		rs, err := st.Query(args...)
		if err != nil {
			return nil, err
		}
		return scanAll(rs)
	}
}

func (g *sqlReadGen) caseOf(q *sqlQuery) readCase {
	text, args := q.render(false)
	hook := g.w.binHook
	if q.usesDefText {
		hook = g.w.defHook
	}
	fam := "sql.select"
	switch {
	case len(q.group) > 0:
		fam = "sql.group"
	case q.isAgg():
		fam = "sql.aggregate"
	case q.distinct:
		fam = "sql.distinct"
	case len(q.order) > 0:
		fam = "sql.order"
	}
	run, how := queryOn, ""
	switch {
	case q.inTx && !q.usesDefText:
		run, how, hook = queryInTx, "in a transaction: ", g.w.txHook
	case q.prepared:
		run, how = preparedOn, "prepared: "
	}
	rc := readCase{family: fam, desc: how + describe(text, args), kinds: q.kinds(),
		shard: run(hook, text, args), oracle: queryOn(g.w.oracle, text, args),
		ordered: len(q.order) > 0, win: window{max(q.off, 0), q.limit}}
	for _, k := range q.order {
		rc.kinds = append(rc.kinds, keyKind(q.db, k.kind, readColNamed(k.expr).name == ""))
	}
	if len(q.order) > 0 || q.limit >= 0 {
		ft, fa := q.render(true)
		rc.full = queryOn(g.w.oracle, ft, fa)
	}
	rc.shrink = func() []readCase {
		var out []readCase
		for _, s := range q.smaller() {
			out = append(out, g.caseOf(s))
		}
		return out
	}
	return rc
}

func (q *sqlQuery) isAgg() bool {
	for _, it := range q.items {
		if strings.Contains(it.text, "(") && isAggText(it.text) {
			return true
		}
	}
	return false
}

func isAggText(s string) bool {
	for _, f := range []string{"COUNT(", "SUM(", "MIN(", "MAX(", "AVG("} {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// smaller is the query with one part dropped, each way that keeps it
// valid.
func (q *sqlQuery) smaller() []*sqlQuery {
	var out []*sqlQuery
	cp := func() *sqlQuery {
		c := *q
		c.items = slices.Clone(q.items)
		c.where = slices.Clone(q.where)
		c.order = slices.Clone(q.order)
		return &c
	}
	for i := range q.where {
		c := cp()
		c.where = slices.Delete(c.where, i, i+1)
		out = append(out, c)
	}
	if q.having != nil {
		c := cp()
		c.having = nil
		out = append(out, c)
	}
	if q.off >= 0 {
		c := cp()
		c.off = -1
		c.commaLimit = false
		out = append(out, c)
	}
	if q.limit >= 0 {
		c := cp()
		c.limit, c.off, c.commaLimit = -1, -1, false
		out = append(out, c)
	}
	if len(q.order) > 1 {
		for i := range q.order {
			c := cp()
			c.order = slices.Delete(c.order, i, i+1)
			out = append(out, c)
		}
	}
	// an item no ORDER BY key names by position and no GROUP BY needs
	if len(q.items) > 1 && !q.distinct {
		for i := range q.items {
			if q.namedByKey(i) || (len(q.group) > 0 && !isAggText(q.items[i].text)) {
				continue
			}
			c := cp()
			c.items = slices.Delete(c.items, i, i+1)
			for j := range c.order {
				if c.order[j].proj > i {
					c.order[j].proj--
				}
			}
			out = append(out, c)
		}
	}
	return out
}

func (q *sqlQuery) namedByKey(i int) bool {
	off := 0
	if q.star {
		off = len(readCols)
	}
	for _, k := range q.order {
		if k.proj == off+i {
			return true
		}
	}
	return false
}

// genQuery draws one SELECT.
func genQuery(rng *rand.Rand, db string) *sqlQuery {
	q := &sqlQuery{db: db, limit: -1, off: -1}
	for range rng.IntN(4) {
		q.where = append(q.where, genPred(rng, db, 0))
	}
	switch r := rng.IntN(10); {
	case r < 4:
		genGrouped(rng, q)
	default:
		genPlain(rng, q)
	}
	q.usesDefText = q.comparesLabel()
	q.numbered = db == "sqlite" && rng.IntN(4) == 0
	q.prepared = rng.IntN(4) == 0
	q.inTx = rng.IntN(6) == 0
	return q
}

// comparesLabel reports whether merging the query's rows may compare
// label values: it orders or groups by them, aggregates them, or
// DISTINCT covers them. Projected or filtered only, label is never
// compared across shards, and WithBinaryCollation (which says every text
// the merge compares is binary) stays true.
func (q *sqlQuery) comparesLabel() bool {
	has := func(s string) bool { return strings.Contains(s, "label") }
	for _, k := range q.order {
		if has(k.text) || has(k.expr) {
			return true
		}
	}
	for _, g := range q.group {
		if has(g) {
			return true
		}
	}
	if q.having != nil && has(q.having.text) {
		return true
	}
	for _, it := range q.items {
		if has(it.text) && (q.distinct || isAggText(it.text)) {
			return true
		}
	}
	return q.distinct && q.star
}

// numCols can be summed and averaged.
var numCols = []string{"qty", "amount", "score", "big", "k", "user_id", "id"}

// summable is numCols but big on SQLite: its integer SUM fails when a
// partial sum overflows, and its AVG adds in floating point where
// 9223372036854775807 + 42 loses the 42, both depending on the order rows
// are added in, so the shards may answer otherwise than one table (in its
// order) does, and both be right.
func summable(db string) []string {
	if db == "sqlite" {
		return slices.DeleteFunc(slices.Clone(numCols), func(c string) bool { return c == "big" })
	}
	return numCols
}

func genPlain(rng *rand.Rand, q *sqlQuery) {
	q.distinct = rng.IntN(6) == 0
	if rng.IntN(5) == 0 && !q.distinct {
		q.star = true
	} else {
		for i := range 1 + rng.IntN(4) {
			q.items = append(q.items, genItem(rng, q.db, i))
		}
	}
	if rng.IntN(3) > 0 {
		genOrder(rng, q, nil)
	}
	genLimit(rng, q)
}

// genItem is a column or an expression, sometimes with an alias.
func genItem(rng *rand.Rand, db string, i int) sqlItem {
	var it sqlItem
	if rng.IntN(3) > 0 {
		c := pick(rng, readCols)
		it = sqlItem{text: c.name, kind: c.kind}
	} else {
		it = pick(rng, exprItems(db))
	}
	if rng.IntN(4) == 0 {
		it.alias = fmt.Sprintf("c%d", i)
	}
	return it
}

func exprItems(db string) []sqlItem {
	concat := "name || '-'"
	if db == "mariadb" {
		concat = "CONCAT(name, '-')"
	}
	items := []sqlItem{
		{text: "qty + 1", kind: kInt}, {text: "k * 10 + user_id", kind: kInt}, {text: "amount * 2", kind: kDecimal},
		{text: "COALESCE(qty, -1)", kind: kInt}, {text: "score * 2", kind: kFloat}, {text: "LOWER(name)", kind: kTextBin},
		{text: "id % 7", kind: kInt}, {text: concat, kind: kTextBin}, {text: "-qty", kind: kInt},
	}
	if db == "postgres" { // values that are not text but arrive as text
		items = append(items, sqlItem{text: "ts - TIMESTAMP '2023-06-01 00:00:00'"}, sqlItem{text: "amount::money"})
	}
	return items
}

// genGrouped draws an aggregate query, with or without GROUP BY.
func genGrouped(rng *rand.Rand, q *sqlQuery) {
	groupable := []string{"user_id", "k", "qty", "name", "label", "flag", "ts", "big", "amount", "qty % 3", "LOWER(name)", "k * 2"}
	if rng.IntN(4) > 0 {
		for range 1 + rng.IntN(2) {
			g := pick(rng, groupable)
			if !slices.Contains(q.group, g) {
				q.group = append(q.group, g)
			}
		}
	}
	for i, g := range q.group {
		if rng.IntN(5) > 0 {
			q.items = append(q.items, sqlItem{text: g, kind: groupKind(g)})
			if rng.IntN(5) == 0 {
				q.items[len(q.items)-1].alias = fmt.Sprintf("g%d", i)
			}
		}
	}
	var aggs []sqlItem
	for i := range 1 + rng.IntN(3) {
		a := genAgg(rng, q.db)
		if rng.IntN(3) == 0 {
			a.alias = fmt.Sprintf("a%d", i)
		}
		aggs = append(aggs, a)
	}
	q.items = append(q.items, aggs...)
	if len(q.group) == 0 {
		return
	}
	if rng.IntN(3) == 0 {
		h := genHaving(rng, q.db)
		if rng.IntN(3) == 0 {
			h = genKeyHaving(rng, q.group)
		}
		q.having = &h
	}
	if rng.IntN(3) > 0 {
		extra := []sqlKey{}
		a := genAgg(rng, q.db)
		extra = append(extra, sqlKey{text: a.text, expr: a.text, proj: -1, kind: a.kind})
		genOrder(rng, q, extra)
	}
	genLimit(rng, q)
}

// aggInExpr is an aggregate inside an expression, a function or a cast.
func aggInExpr(rng *rand.Rand, db string) sqlItem {
	if rng.IntN(4) == 0 { // functions and casts over aggregates
		cast := map[string]string{"postgres": "SUM(qty)::bigint", "mariadb": "CAST(SUM(qty) AS SIGNED)",
			"sqlite": "CAST(SUM(qty) AS INTEGER)"}[db]
		return pick(rng, []sqlItem{{text: cast, kind: kInt}, {text: "ROUND(AVG(qty), 2)", kind: kDecimal},
			{text: "ABS(MIN(big))", kind: kInt}, {text: "MAX(qty) % 5", kind: kInt}})
	}
	return pick(rng, []sqlItem{{text: "COUNT(*) * 2", kind: kInt}, {text: "SUM(qty) - MIN(qty)", kind: kDecimal},
		{text: "MAX(qty) + 1", kind: kInt}, {text: "SUM(amount) / COUNT(*)", kind: kDecimal}, {text: "COALESCE(MAX(qty), -1)", kind: kInt}})
}

// aggOfExpr is an aggregate of an expression (on PostgreSQL now and then
// of intervals and money, values that arrive as text).
func aggOfExpr(rng *rand.Rand, db string) sqlItem {
	if db == "postgres" && rng.IntN(3) == 0 {
		return pick(rng, []sqlItem{{text: "MIN(ts - TIMESTAMP '2023-06-01 00:00:00')"}, {text: "MAX(amount::money)"},
			{text: "SUM(amount::money)"}, {text: "MAX(ts - TIMESTAMP '2023-06-01 00:00:00')"}})
	}
	return pick(rng, []sqlItem{{text: "SUM(qty / 3)", kind: kDecimal}, {text: "SUM(amount * k)", kind: kDecimal},
		{text: "MAX(qty + 1)", kind: kInt}, {text: "AVG(score * 2)", kind: kFloat}, {text: "MIN(amount - 1)", kind: kDecimal},
		{text: "AVG(qty * 1.5)", kind: kDecimal}, {text: "COUNT(qty + k)", kind: kInt}})
}

// groupKind is the kind of a GROUP BY column or expression.
func groupKind(g string) colKind {
	switch g {
	case "LOWER(name)":
		return kTextBin
	case "qty % 3", "k * 2":
		return kInt
	}
	return readColNamed(g).kind
}

func genAgg(rng *rand.Rand, db string) sqlItem {
	minmax := []string{"qty", "amount", "score", "big", "name", "label", "ts", "id", "user_id"}
	if db != "postgres" {
		minmax = append(minmax, "flag")
	}
	switch rng.IntN(10) {
	case 9:
		return aggInExpr(rng, db)
	case 8:
		return aggOfExpr(rng, db)
	case 0:
		return sqlItem{text: "COUNT(*)", kind: kInt}
	case 1:
		c := pick(rng, readCols)
		return sqlItem{text: "COUNT(" + c.name + ")", kind: kInt}
	case 2:
		if rng.IntN(3) == 0 {
			if db == "mariadb" && rng.IntN(3) == 0 {
				return sqlItem{text: "COUNT(DISTINCT k, qty)", kind: kInt}
			}
			return pick(rng, []sqlItem{{text: "SUM(DISTINCT qty)", kind: kDecimal}, {text: "AVG(DISTINCT amount)", kind: kDecimal}})
		}
		c := pick(rng, []string{"qty", "name", "label", "user_id", "amount", "flag", "k"})
		return sqlItem{text: "COUNT(DISTINCT " + c + ")", kind: kInt}
	case 3, 4:
		c := pick(rng, summable(db))
		k := readColNamed(c).kind
		if k == kInt {
			k = kDecimal
		}
		return sqlItem{text: "SUM(" + c + ")", kind: k}
	case 5:
		c := pick(rng, summable(db))
		k := kDecimal
		if c == "score" {
			k = kFloat
		}
		return sqlItem{text: "AVG(" + c + ")", kind: k}
	default:
		c := pick(rng, minmax)
		f := "MIN"
		if rng.IntN(2) == 0 {
			f = "MAX"
		}
		return sqlItem{text: f + "(" + c + ")", kind: readColNamed(c).kind}
	}
}

func genHaving(rng *rand.Rand, db string) cell {
	var c cell
	switch rng.IntN(5) {
	case 0:
		c.add("COUNT(*) > ?", int64(rng.IntN(8)))
	case 1:
		c.add(fmt.Sprintf("SUM(qty) >= %d", rng.IntN(60)))
	case 2:
		c.add("MIN(qty) IS NOT NULL")
	case 3:
		c.add(fmt.Sprintf("MAX(id) < %d", 50+rng.IntN(250)))
	default:
		c.add(fmt.Sprintf("AVG(qty) > %d OR COUNT(*) = 1", rng.IntN(8)))
	}
	return c
}

// genKeyHaving is a HAVING condition on a GROUP BY key: a number, a text
// compared under its collation, a time, IN.
func genKeyHaving(rng *rand.Rand, group []string) cell {
	var c cell
	g := pick(rng, group)
	switch groupKind(g) {
	case kInt, kDecimal:
		c.add(g+pick(rng, []string{" > ?", " <= ?", " IN (?, ?)"}), int64(rng.IntN(6)), int64(rng.IntN(6)))
		c.args = c.args[:strings.Count(c.text, "?")]
	case kTextBin, kTextDef:
		c.add(g + pick(rng, []string{" > 'a'", " < 'b '", " IN ('a', 'X', 'bob')", " IS NOT NULL"}))
	case kTime:
		c.add(g+" >= ?", pick(rng, readTimes))
	default:
		c.add(g + " IS NOT NULL")
	}
	if rng.IntN(3) == 0 {
		c.add(" AND COUNT(*) > 1")
	}
	return c
}

// genOrder draws ORDER BY keys: projected items by position, alias or
// text, other columns and expressions (not for DISTINCT), and extra
// (aggregates of a grouped query).
func genOrder(rng *rand.Rand, q *sqlQuery, extra []sqlKey) {
	cands, nproj := orderCands(rng, q, extra)
	if len(cands) == 0 {
		return
	}
	for range 1 + rng.IntN(3) {
		k := pick(rng, cands)
		if nproj > 0 && rng.IntN(5) < 3 {
			k = cands[rng.IntN(nproj)]
		}
		q.order = append(q.order, dressKey(rng, q, k))
	}
	// ORDER BY ... id: a total order now and then, id often projected
	if len(q.group) == 0 && !q.distinct && rng.IntN(3) == 0 {
		k := sqlKey{text: "id", expr: "id", proj: -1, kind: kInt, desc: rng.IntN(2) == 0}
		if !q.star && rng.IntN(2) == 0 {
			q.items = append(q.items, sqlItem{text: "id", kind: kInt})
			k.proj = len(q.items) - 1
		}
		q.order = append(q.order, k)
	}
}

// orderCands is what may be ordered by, the projected items first
// (nproj of them).
func orderCands(rng *rand.Rand, q *sqlQuery, extra []sqlKey) (cands []sqlKey, nproj int) {
	off := 0
	if q.star {
		for i, c := range readCols {
			cands = append(cands, sqlKey{text: c.name, expr: c.name, proj: i, kind: c.kind})
		}
		off = len(readCols)
	}
	for i, it := range q.items {
		k := sqlKey{text: it.text, expr: it.text, proj: off + i, kind: it.kind}
		switch r := rng.IntN(4); {
		case r == 0:
			k.text = strconv.Itoa(off + i + 1)
		case r == 1 && it.alias != "":
			k.text = it.alias
		}
		cands = append(cands, k)
	}
	if !q.distinct {
		if len(q.group) == 0 {
			for _, c := range readCols {
				cands = append(cands, sqlKey{text: c.name, expr: c.name, proj: -1, kind: c.kind})
			}
			e := pick(rng, exprItems(q.db))
			cands = append(cands, sqlKey{text: e.text, expr: e.text, proj: -1, kind: e.kind})
		} else {
			for _, g := range q.group {
				cands = append(cands, sqlKey{text: g, expr: g, proj: -1, kind: groupKind(g)})
			}
		}
		cands = append(cands, extra...)
	}
	return cands, off + len(q.items)
}

// dressKey gives a key its direction, NULLS FIRST/LAST or USING, and
// now and then an explicit binary COLLATE.
func dressKey(rng *rand.Rand, q *sqlQuery, k sqlKey) sqlKey {
	k.desc = rng.IntN(2) == 0
	switch {
	case q.db == "postgres" && rng.IntN(12) == 0 && !strings.ContainsAny(k.text, "0123456789"):
		k.text += pick(rng, []string{" USING <", " USING >"})
		k.desc = false // USING > is the descending order: the key text says it
	case q.db != "mariadb" && rng.IntN(3) == 0:
		k.nulls = pick(rng, []string{"FIRST", "LAST"})
	}
	if k.text == "label" && !q.distinct && rng.IntN(3) == 0 {
		// an explicit binary collation on the key: mergeable without the option
		k.text = "label COLLATE " + binaryCollation(q.db)
		k.expr, k.kind = k.text, kTextBin
	}
	return k
}

func genLimit(rng *rand.Rand, q *sqlQuery) {
	p := 5
	if len(q.order) > 0 {
		p = 2
	}
	if rng.IntN(p) != 0 {
		return
	}
	q.limit = rng.IntN(20)
	if rng.IntN(3) == 0 {
		q.off = rng.IntN(30)
		q.commaLimit = q.db != "postgres" && rng.IntN(3) == 0
	}
	q.limitArg = rng.IntN(3) == 0
}

// genPred draws a condition on sharding and other columns.
func genPred(rng *rand.Rand, db string, depth int) cell {
	var c cell
	switch r := rng.IntN(16); {
	case r == 0 && depth < 2:
		c.add("NOT (")
		c.addCell(genPred(rng, db, depth+1))
		c.add(")")
	case r == 1 && depth < 2:
		c.add("(")
		c.addCell(genPred(rng, db, depth+1))
		c.add(" OR ")
		c.addCell(genPred(rng, db, depth+1))
		c.add(")")
	case r <= 8:
		c.addCell(genKeyPred(rng, r))
	default:
		c.addCell(genOtherPred(rng, r))
	}
	return c
}

// genKeyPred is a condition on a sharding column or the primary key.
func genKeyPred(rng *rand.Rand, r int) cell {
	var c cell
	num := func(v int64) {
		if rng.IntN(2) == 0 {
			c.add("?", v)
		} else {
			c.add(strconv.FormatInt(v, 10))
		}
	}
	user := func() int64 { // a stored user now and then one no row has
		if rng.IntN(8) == 0 {
			return pick(rng, []int64{10, -5})
		}
		return pick(rng, readUsers)
	}
	switch {
	case r <= 3:
		c.add("user_id = ")
		num(user())
	case r == 4:
		c.add("user_id IN (")
		for i := range 1 + rng.IntN(3) {
			if i > 0 {
				c.add(", ")
			}
			num(user())
		}
		c.add(")")
	case r == 5:
		a := user()
		c.add("user_id BETWEEN ")
		num(a)
		c.add(" AND ")
		num(a + int64(rng.IntN(4)))
	case r == 6:
		c.add(pick(rng, []string{"user_id > ", "user_id <= ", "k < ", "k >= "}))
		num(int64(rng.IntN(6)))
	case r == 7:
		c.add(pick(rng, []string{"k = ", "k <> "}))
		num(int64(rng.IntN(4)))
	default:
		c.add("id BETWEEN ")
		a := int64(rng.IntN(300))
		num(a)
		c.add(" AND ")
		num(a + int64(rng.IntN(100)))
	}
	return c
}

// genOtherPred is a condition on the other columns.
func genOtherPred(rng *rand.Rand, r int) cell {
	var c cell
	switch {
	case r == 9:
		c.add(pick(rng, []string{"qty", "name", "label", "amount", "score", "ts", "flag", "big"}))
		c.add(pick(rng, []string{" IS NULL", " IS NOT NULL"}))
	case r == 10:
		c.add(pick(rng, []string{"qty > ?", "qty <= ?", "qty = ?"}), int64(rng.IntN(12)))
	case r == 11:
		c.add("name = ?", pick(rng, readNames[:11]))
	case r == 12:
		c.add(pick(rng, []string{"label = 'x'", "label IN ('bob', 'y')", "name > 'a'", "name IN ('a', 'B', '')"}))
	case r == 13:
		c.add(pick(rng, []string{"amount > 1.5", "amount <= 0", "score < 1", "score >= 2.5", "big > 0", "big < -1"}))
	case r == 14:
		c.add(pick(rng, []string{"flag", "NOT flag"}))
	default:
		c.add("ts >= ?", pick(rng, readTimes))
	}
	return c
}

// binaryCollation names the database's binary collation.
func binaryCollation(db string) string {
	switch db {
	case "postgres":
		return `"C"`
	case "mariadb":
		return "utf8mb4_bin"
	}
	return "BINARY"
}

// keyKind is how a result column or ORDER BY key compares: SQLite
// computes decimal expressions and aggregates in floating point, rounded
// by the order it reads rows in.
func keyKind(db string, k colKind, computed bool) colKind {
	if db == "sqlite" && computed && k == kDecimal {
		return kFloat
	}
	return k
}
