package difftest

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/shardkey/shardkey/shardconf"
)

var flagHintTenant = flag.Bool("difftest.hinttenant", false,
	"also UPDATE t_hint's tenant to one whose hint routes elsewhere, under the old tenant's hint (see doc.go)")

// xexec is one statement of a step on t_hint or t_algo and the context
// shardkey runs it with (its hints); the oracle runs it without.
type xexec struct {
	ctx  context.Context
	hint string // the hint, for the description
	c    cell
}

// xplan is a step: one statement, a prepared statement run several times
// (each with its own context), or a transaction.
type xplan struct {
	kind     string
	execs    []xexec
	prepared bool
	tx       bool
	commit   bool
	// query: the statement is a SELECT of one integer column; its rows'
	// count and sum stand for rows affected
	query bool
	// begin is the context of PrepareContext or BeginTx: a hint there
	// (for some other tenant) must route nothing
	begin context.Context
	// done counts the executions of a prepared statement shardkey ran
	// before one failed: they stay done, so they are the step
	done *int
}

func (c *sqlClient) buildExtra(h *harness, rng *rand.Rand, step int) op {
	g := &sqlGen{h: h, b: c.w.b, rng: rng, step: step}
	db, handle := c.strict, "strict"
	if rng.IntN(3) == 0 {
		db, handle = c.scatter, "scatter"
	}
	var p xplan
	if rng.IntN(2) == 0 {
		p = g.hintPlan()
		if p.tx && rng.IntN(2) == 0 {
			db, handle = c.multi, "multi-source tx"
		}
	} else {
		p = g.algoPlan()
	}
	return c.xop(g, db, handle, p)
}

// hinted is ctx with a hint for one tenant, in some Go type.
func (g *sqlGen) hinted(tenant int64) (context.Context, string) {
	v := hintValue(g.rng, tenant)
	ctx := shardconf.WithHint(context.Background(), "t_hint", shardconf.Hint{Database: []any{v}, Table: []any{v}})
	return ctx, fmt.Sprintf("hint t_hint %s", argText(v))
}

func (g *sqlGen) hintInsert(rows []hintRow) cell {
	c := cell{}
	c.add("INSERT INTO t_hint (id, tenant, v, n) VALUES ")
	for i, r := range rows {
		if i > 0 {
			c.add(", ")
		}
		c.add("(")
		c.addCell(g.num(r.id))
		c.add(", ")
		c.addCell(g.val(r.tenant))
		c.add(", ")
		c.addCell(g.val(pick(g.rng, statuses)))
		c.add(", ")
		c.addCell(g.val(pick(g.rng, amounts)))
		c.add(")")
	}
	return c
}

func (g *sqlGen) hintSet() cell {
	c := cell{}
	c.add("UPDATE t_hint SET v = ")
	c.addCell(g.val(pick(g.rng, statuses)))
	if g.rng.IntN(2) == 0 {
		c.add(", n = n + 1")
	}
	return c
}

// tenantList is "tenant IN (?, ?)" over ts.
func (g *sqlGen) tenantList(ts []int64) cell {
	c := cell{}
	c.add("tenant IN (")
	for i, t := range ts {
		if i > 0 {
			c.add(", ")
		}
		c.addCell(g.val(t))
	}
	c.add(")")
	return c
}

// hintStatement is one statement on t_hint under the hint of the rows it
// is about.
func (g *sqlGen) hintStatement() (string, xexec) {
	rng := g.rng
	switch n := rng.IntN(100); {
	case n < 20:
		r := g.h.insertHint(rng)
		ctx, d := g.hinted(tenantFor(rng, r.id)) // the row's tenant or the other of its table
		return "insert1", xexec{ctx, d, g.hintInsert([]hintRow{r})}
	case n < 30: // several rows of one table's tenants
		cls := int64(rng.IntN(6))
		var rows []hintRow
		for _, id := range g.h.freshHintIDs(rng, 2+rng.IntN(2), cls) {
			rows = append(rows, hintRow{id: id, tenant: tenantFor(rng, id)})
		}
		ctx, d := g.hinted(pick(rng, tenantsOfClass(cls)))
		return "insertN", xexec{ctx, d, g.hintInsert(rows)}
	case n < 50:
		r := g.h.existingHint(rng)
		c := g.hintSet()
		c.add(" WHERE id = ")
		c.addCell(g.num(r.id))
		ctx, d := g.hinted(tenantFor(rng, r.id))
		return "update.id", xexec{ctx, d, c}
	case n < 60:
		t := int64(rng.IntN(hintTenants))
		c := g.hintSet()
		c.add(" WHERE tenant = ")
		c.addCell(g.val(t))
		ctx, d := g.hinted(t)
		return "update.tenant", xexec{ctx, d, c}
	case n < 72: // several hint values: the union of their tables
		ts := someTenants(rng)
		c := g.hintSet()
		c.add(" WHERE ")
		c.addCell(g.tenantList(ts))
		return "update.multi", xexec{tenantsHint(context.Background(), ts), fmt.Sprintf("hint t_hint %v", ts), c}
	case n < 80:
		r := g.h.existingHint(rng)
		c := cell{}
		c.add("DELETE FROM t_hint WHERE id = ")
		c.addCell(g.num(r.id))
		ctx, d := g.hinted(tenantFor(rng, r.id))
		return "delete.id", xexec{ctx, d, c}
	case n < 86:
		ts := someTenants(rng)
		c := cell{}
		c.add("DELETE FROM t_hint WHERE ")
		c.addCell(g.tenantList(ts))
		c.add(" AND id < ")
		c.addCell(g.num(int64(rng.IntN(40))))
		return "delete.multi", xexec{tenantsHint(context.Background(), ts), fmt.Sprintf("hint t_hint %v", ts), c}
	default:
		r := g.h.existingHint(rng)
		r.tenant = tenantFor(rng, r.id)
		c := g.hintInsert([]hintRow{r})
		if g.b.mysql {
			c.add(" ON DUPLICATE KEY UPDATE v = VALUES(v), n = n + 1")
		} else {
			c.add(" ON CONFLICT (id) DO UPDATE SET v = excluded.v, n = t_hint.n + 1")
		}
		ctx, d := g.hinted(tenantFor(rng, r.id))
		return "upsert", xexec{ctx, d, c}
	}
}

// hintPlan draws a step on t_hint: a statement under its hint, or one
// that must be refused, a prepared statement run under several hints, a
// transaction.
func (g *sqlGen) hintPlan() xplan {
	rng := g.rng
	switch n := rng.IntN(100); {
	case n < 55:
		k, e := g.hintStatement()
		return xplan{kind: "sql.hint." + k, execs: []xexec{e}}
	case n < 63: // no hint: ErrMissingShardingKey (with scatter an UPDATE/DELETE goes everywhere)
		k, e := g.hintStatement()
		e.ctx, e.hint = context.Background(), "no hint"
		return xplan{kind: "sql.hint.nohint." + k, execs: []xexec{e}}
	case n < 66: // a read under several hint values: the union of their tables
		ts := someTenants(rng)
		c := cell{}
		c.add("SELECT id FROM t_hint WHERE ")
		c.addCell(g.tenantList(ts))
		return xplan{kind: "sql.hint.select.multi", query: true,
			execs: []xexec{{tenantsHint(context.Background(), ts), fmt.Sprintf("hint t_hint %v", ts), c}}}
	case n < 70:
		return g.unusedHint()
	case n < 76:
		return g.setTenant()
	case n < 86:
		return g.hintPrepared()
	case n < 94:
		p := xplan{kind: "sql.hint.tx", tx: true, commit: rng.IntN(4) != 0}
		if rng.IntN(2) == 0 {
			p.begin, _ = g.hinted(int64(rng.IntN(hintTenants)))
		}
		for range 1 + rng.IntN(3) {
			_, e := g.hintStatement()
			p.execs = append(p.execs, e)
		}
		if !p.commit {
			p.kind += ".rollback"
		}
		return p
	default: // the data source from an AllTables hint, the table from t_hint's own
		r := g.h.insertHint(rng)
		t := tenantFor(rng, r.id)
		r.tenant = t
		ctx := shardconf.WithHint(context.Background(), shardconf.AllTables, shardconf.Hint{Database: []any{t}})
		ctx = shardconf.WithHint(ctx, "t_hint", shardconf.Hint{Table: []any{t}})
		return xplan{kind: "sql.hint.alltables", execs: []xexec{{ctx, fmt.Sprintf("hint * db %d, t_hint table %d", t, t), g.hintInsert([]hintRow{r})}}}
	}
}

// unusedHint: a hint for a table routed by a column (or, for every
// table, on a broadcast table's statement): ErrUnusedHint.
func (g *sqlGen) unusedHint() xplan {
	rng := g.rng
	c := cell{}
	switch rng.IntN(3) {
	case 0:
		p := g.h.existing(rng, "t_order")
		c.add("UPDATE t_order SET status = 'h' WHERE ")
		c.addCell(g.where("key", p))
		ctx := shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Database: []any{p.user}, Table: []any{p.key}})
		return xplan{kind: "sql.hint.unused.order", execs: []xexec{{ctx, "hint t_order", c}}}
	case 1:
		k := g.h.existingAlgo(rng)
		c.add("UPDATE t_algo SET v = 'h' WHERE k = ")
		c.addCell(g.num(k))
		ctx := shardconf.WithHint(context.Background(), "t_algo", shardconf.Hint{Table: []any{k}})
		return xplan{kind: "sql.hint.unused.algo", execs: []xexec{{ctx, "hint t_algo", c}}}
	}
	c.add("UPDATE t_dict SET n = n + 1")
	ctx := shardconf.WithHint(context.Background(), shardconf.AllTables, shardconf.Hint{Database: []any{int64(rng.IntN(2))}})
	return xplan{kind: "sql.hint.unused.dict", execs: []xexec{{ctx, "hint * db", c}}}
}

// setTenant: UPDATE t_hint SET tenant under the old tenant's hint, to a
// tenant of the same table (the row stays where its new hint routes) or,
// with -difftest.hinttenant, of another one. shardkey cannot know that
// tenant and the hint go together (a hint strategy has no column), so it
// runs such an UPDATE in place, as ShardingSphere does: the row then sits
// where its new tenant's hint does not route (see doc.go).
func (g *sqlGen) setTenant() xplan {
	rng := g.rng
	r := g.h.existingHint(rng)
	kind, to := "sql.hint.settenant.same", tenantFor(rng, r.id)
	if *flagHintTenant && rng.IntN(2) == 0 {
		kind, to = "sql.hint.settenant.other", otherClassTenant(rng, r.tenant)
	}
	c := cell{}
	c.add("UPDATE t_hint SET tenant = ")
	c.addCell(g.val(to))
	c.add(" WHERE id = ")
	c.addCell(g.num(r.id))
	ctx, d := g.hinted(r.tenant)
	return xplan{kind: kind, execs: []xexec{{ctx, d, c}}}
}

// hintPrepared: one prepared statement executed under a different hint
// each time: an INSERT of fresh rows of several tables, or an UPDATE by id.
func (g *sqlGen) hintPrepared() xplan {
	rng := g.rng
	p := xplan{prepared: true}
	if rng.IntN(2) == 0 {
		p.begin, _ = g.hinted(int64(rng.IntN(hintTenants)))
	}
	if rng.IntN(2) == 0 {
		p.kind = "sql.hint.prepared.insert"
		for _, id := range g.h.freshHintIDs(rng, 2+rng.IntN(2), -1) {
			t := tenantFor(rng, id)
			ctx, d := g.hinted(t)
			p.execs = append(p.execs, xexec{ctx, d, cell{text: "INSERT INTO t_hint (id, tenant, v, n) VALUES (?, ?, ?, ?)",
				args: []any{id, t, pick(rng, statuses), pick(rng, amounts)}}})
		}
		return p
	}
	p.kind = "sql.hint.prepared.update"
	for range 2 + rng.IntN(2) {
		r := g.h.existingHint(rng)
		ctx, d := g.hinted(tenantFor(rng, r.id))
		p.execs = append(p.execs, xexec{ctx, d, cell{text: "UPDATE t_hint SET v = ?, n = n + 1 WHERE id = ?",
			args: []any{pick(rng, statuses), r.id}}})
	}
	return p
}

// xop runs a plan through shardkey (each statement with its context) and
// on the oracle (without hints).
func (c *sqlClient) xop(g *sqlGen, db *sql.DB, handle string, p xplan) op {
	var desc strings.Builder
	desc.WriteString(handle + ":")
	switch {
	case p.prepared:
		desc.WriteString(" PREPARE " + g.final(p.execs[0].c.text))
	case p.tx:
		desc.WriteString(" BEGIN")
	}
	if p.begin != nil {
		desc.WriteString(" [a hint for another tenant in its context]")
	}
	for _, e := range p.execs {
		if p.prepared {
			fmt.Fprintf(&desc, "\n  EXECUTE %s [%s]", argsText(e.c.args), e.hint)
		} else {
			fmt.Fprintf(&desc, "\n  %s %s [%s]", g.final(e.c.text), argsText(e.c.args), e.hint)
		}
	}
	if p.tx {
		desc.WriteString(map[bool]string{true: "\nCOMMIT", false: "\nROLLBACK"}[p.commit])
	}
	p.done = new(int)
	*p.done = len(p.execs)
	return op{kind: p.kind, desc: desc.String(),
		shard:  func() ([]int64, error) { return p.run(g, db, true) },
		oracle: func() ([]int64, error) { return p.run(g, c.w.oracle, false) }}
}

func (p xplan) beginCtx(hinted bool) context.Context {
	if hinted && p.begin != nil {
		return p.begin
	}
	return context.Background()
}

// run executes the plan on db; hinted: with each statement's context.
func (p xplan) run(g *sqlGen, db *sql.DB, hinted bool) ([]int64, error) {
	ctxOf := func(e xexec) context.Context {
		if hinted {
			return e.ctx
		}
		return context.Background()
	}
	var rows []int64
	switch {
	case p.prepared:
		st, err := db.PrepareContext(p.beginCtx(hinted), g.final(p.execs[0].c.text))
		if err != nil {
			return nil, err
		}
		defer st.Close()
		for i, e := range p.execs {
			if !hinted && i == *p.done {
				break
			}
			res, err := st.ExecContext(ctxOf(e), e.c.args...)
			if err != nil && hinted && i > 0 {
				*p.done = i
				return rows, nil
			}
			if err != nil {
				return rows, err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return rows, err
			}
			rows = append(rows, n)
		}
		return rows, nil
	case p.tx:
		tx, err := db.BeginTx(p.beginCtx(hinted), nil)
		if err != nil {
			return nil, err
		}
		for _, e := range p.execs {
			n, err := execRows(ctxOf(e), tx, g.final(e.c.text), e.c.args)
			if err != nil {
				tx.Rollback()
				return nil, err
			}
			rows = append(rows, n)
		}
		if !p.commit {
			if err := tx.Rollback(); err != nil {
				return nil, err
			}
			if hinted {
				return nil, errRolledBack
			}
			return rows, nil
		}
		return rows, tx.Commit()
	}
	for _, e := range p.execs {
		if p.query {
			got, err := queryCountSum(ctxOf(e), db, g.final(e.c.text), e.c.args)
			if err != nil {
				return rows, err
			}
			rows = append(rows, got...)
			continue
		}
		n, err := execRows(ctxOf(e), db, g.final(e.c.text), e.c.args)
		if err != nil {
			return rows, err
		}
		rows = append(rows, n)
	}
	return rows, nil
}

// queryCountSum runs a SELECT of one integer column and returns how many
// rows it read and their sum (wrapping), which the oracle's must equal.
func queryCountSum(ctx context.Context, db *sql.DB, text string, args []any) ([]int64, error) {
	rs, err := db.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var n, sum int64
	for rs.Next() {
		var v int64
		if err := rs.Scan(&v); err != nil {
			return nil, err
		}
		n, sum = n+1, sum+v
	}
	return []int64{n, sum}, rs.Err()
}
