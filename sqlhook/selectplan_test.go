package sqlhook

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// firstTarget routes q and returns the SQL and arguments of its first
// unit, and how many units it has.
func firstTarget(t *testing.T, d Dialect, q string) (string, int, error) {
	t.Helper()
	r, err := testHook(t, d).route(q, nil)
	if err != nil {
		return "", 0, err
	}
	u := r.units[0]
	s := u.sql
	for _, a := range u.args {
		s += fmt.Sprintf(" [%v]", a.Value)
	}
	return s, len(r.units), nil
}

const twoTargets = `WHERE user_id = 1 AND order_id IN (2, 3)`

func TestPerTargetSQLOfMergedSelects(t *testing.T) {
	for _, c := range []struct {
		d         Dialect
		q, want   string
		oneTarget bool
	}{
		// Grouped: AVG's SUM and COUNT and HAVING's and ORDER BY's
		// aggregates hidden; HAVING evaluated after merging; no LIMIT.
		{PostgreSQL, `SELECT status, COUNT(*), AVG(amount) FROM t_order ` + twoTargets + ` GROUP BY status HAVING SUM(amount) > 3 ORDER BY MAX(order_id) DESC LIMIT 2`,
			`SELECT status, COUNT(*), AVG(amount), (SUM(amount)) AS shardkey_hidden_0, (COUNT(amount)) AS shardkey_hidden_1, (SUM(amount)) AS shardkey_hidden_2, (MAX(order_id)) AS shardkey_hidden_3 FROM "t_order_0" AS t_order ` + twoTargets + ` GROUP BY status  ORDER BY MAX(order_id) DESC LIMIT $1 [<nil>]`, false},
		// COUNT(DISTINCT x): each target's distinct values, by a GROUP BY.
		{PostgreSQL, `SELECT COUNT(DISTINCT status), COUNT(*) FROM t_order ` + twoTargets,
			`SELECT COUNT(DISTINCT status), COUNT(*), (status) AS shardkey_hidden_0 FROM "t_order_0" AS t_order ` + twoTargets + ` GROUP BY status`, false},
		{PostgreSQL, `SELECT user_id, SUM(DISTINCT amount) FROM t_order ` + twoTargets + ` GROUP BY user_id`,
			`SELECT user_id, SUM(DISTINCT amount), (amount) AS shardkey_hidden_0 FROM "t_order_0" AS t_order ` + twoTargets + ` GROUP BY user_id, amount`, false},
		// Streaming: the sort key not selected is hidden; LIMIT n+m.
		{PostgreSQL, `SELECT order_id FROM t_order ` + twoTargets + ` ORDER BY amount DESC NULLS LAST LIMIT 3 OFFSET 2`,
			`SELECT order_id, (amount) AS shardkey_hidden_0 FROM "t_order_0" AS t_order ` + twoTargets + ` ORDER BY amount DESC NULLS LAST LIMIT $1 OFFSET 0 [5]`, false},
		{PostgreSQL, `SELECT order_id FROM t_order ` + twoTargets + ` ORDER BY order_id USING >, 1`,
			`SELECT order_id FROM "t_order_0" AS t_order ` + twoTargets + ` ORDER BY order_id USING >, 1`, false},
		// DISTINCT needs every row.
		{PostgreSQL, `SELECT DISTINCT status FROM t_order ` + twoTargets + ` LIMIT 2`,
			`SELECT DISTINCT status FROM "t_order_0" AS t_order ` + twoTargets + ` LIMIT $1 [<nil>]`, false},
		// One target: the statement as written.
		{PostgreSQL, `SELECT status, AVG(amount) FROM t_order WHERE user_id = 1 AND order_id = 2 GROUP BY status HAVING COUNT(*) > 1 ORDER BY 2 LIMIT 1`,
			`SELECT status, AVG(amount) FROM "t_order_0" AS t_order WHERE user_id = 1 AND order_id = 2 GROUP BY status HAVING COUNT(*) > 1 ORDER BY 2 LIMIT 1`, true},
		{MySQL, "SELECT status, COUNT(*) AS n FROM t_order " + twoTargets + " GROUP BY status, amount HAVING n > 1 ORDER BY t_order.amount LIMIT 2, 3",
			"SELECT status, COUNT(*) AS n, (amount) AS shardkey_hidden_0, (`t_order_0`.amount) AS shardkey_hidden_1 FROM `t_order_0` " + twoTargets + " GROUP BY status, amount  ORDER BY `t_order_0`.amount LIMIT 0, ? [18446744073709551615]", false},
		{MySQL, "SELECT COUNT(*), SUM(amount) FROM t_order " + twoTargets,
			"SELECT COUNT(*), SUM(amount) FROM `t_order_0` " + twoTargets, false},
		{MySQL, "SELECT COUNT(DISTINCT status, note) FROM t_order " + twoTargets + " /* end */",
			"SELECT COUNT(DISTINCT status, note), (status) AS shardkey_hidden_0, (note) AS shardkey_hidden_1 FROM `t_order_0` " + twoTargets + " GROUP BY status, note /* end */", false},
		// SQLite: MIN, MAX and COUNT bound the partial sums of SUM and AVG.
		{SQLite, `SELECT SUM(amount) FROM t_order ` + twoTargets,
			`SELECT SUM(amount), (MIN(amount)) AS shardkey_hidden_0, (MAX(amount)) AS shardkey_hidden_1, (COUNT(amount)) AS shardkey_hidden_2 FROM "t_order_0" AS t_order ` + twoTargets, false},
		// An expression over aggregates: its aggregates are hidden and
		// merged, the expression computed after merging.
		{PostgreSQL, `SELECT COUNT(*) * 2, SUM(amount) - MIN(amount) FROM t_order ` + twoTargets,
			`SELECT COUNT(*) * 2, SUM(amount) - MIN(amount), (COUNT(*)) AS shardkey_hidden_0, (SUM(amount)) AS shardkey_hidden_1, (MIN(amount)) AS shardkey_hidden_2 FROM "t_order_0" AS t_order ` + twoTargets, false},
		// HAVING over an expression of aggregates: a hidden column written
		// from its parts.
		{MySQL, "SELECT status FROM t_order " + twoTargets + " GROUP BY status HAVING SUM(amount) / COUNT(*) > -1",
			"SELECT status, (SUM(amount)) AS shardkey_hidden_0, (COUNT(*)) AS shardkey_hidden_1, ((SUM(amount) / COUNT(*))) AS shardkey_hidden_2 FROM `t_order_0` " + twoTargets + " GROUP BY status ", false},
		{MySQL, "SELECT IFNULL(MAX(amount), -1) FROM t_order " + twoTargets,
			"SELECT IFNULL(MAX(amount), -1), (MAX(amount)) AS shardkey_hidden_0 FROM `t_order_0` " + twoTargets, false},
		{SQLite, `SELECT AVG(amount) AS a FROM t_order ` + twoTargets + ` -- c`,
			`SELECT AVG(amount) AS a, (MIN(amount)) AS shardkey_hidden_0, (MAX(amount)) AS shardkey_hidden_1, (COUNT(amount)) AS shardkey_hidden_2, (SUM(amount)) AS shardkey_hidden_3, (COUNT(amount)) AS shardkey_hidden_4 FROM "t_order_0" AS t_order ` + twoTargets + ` -- c`, false},
		{SQLite, `SELECT order_id FROM t_order ` + twoTargets + ` ORDER BY amount NULLS FIRST LIMIT 4`,
			`SELECT order_id, (+(amount)) AS shardkey_hidden_0 FROM "t_order_0" AS t_order ` + twoTargets + ` ORDER BY amount NULLS FIRST LIMIT ? [4]`, false},
		// SQLite: keys that are columns are read raw, through +(x), which
		// has no declared type the driver would parse a time by.
		{SQLite, `SELECT DISTINCT status, amount + 1 FROM t_order ` + twoTargets + ` ORDER BY 1`,
			`SELECT DISTINCT status, amount + 1, (+(status)) AS shardkey_hidden_0 FROM "t_order_0" AS t_order ` + twoTargets + ` ORDER BY 1`, false},
		{SQLite, `SELECT t.status, COUNT(*) FROM t_order t ` + twoTargets + ` GROUP BY t.status, note`,
			`SELECT t.status, COUNT(*), (+(t.status)) AS shardkey_hidden_0, (+(note)) AS shardkey_hidden_1 FROM "t_order_0" t ` + twoTargets + ` GROUP BY t.status, note`, false},
	} {
		got, n, err := firstTarget(t, c.d, c.q)
		switch {
		case err != nil:
			t.Errorf("%v %s: %v", c.d, c.q, err)
		case got != c.want:
			t.Errorf("%v %s:\n got %s\nwant %s", c.d, c.q, got, c.want)
		case (n == 1) != c.oneTarget:
			t.Errorf("%v %s: %d units", c.d, c.q, n)
		}
	}
}

func TestMergeRefusesFormsNoMergeAnswers(t *testing.T) {
	for _, c := range []struct {
		d Dialect
		q string
	}{
		{PostgreSQL, `SELECT DISTINCT ON (status) order_id FROM t_order ` + twoTargets},
		{PostgreSQL, `SELECT status, COUNT(*) FROM t_order ` + twoTargets + ` GROUP BY ROLLUP (status)`},
		{PostgreSQL, `SELECT status, COUNT(*) FROM t_order ` + twoTargets + ` GROUP BY GROUPING SETS ((status), ())`},
		{PostgreSQL, `SELECT order_id FROM t_order ` + twoTargets + ` ORDER BY order_id USING ~<~`},
		{PostgreSQL, `SELECT order_id FROM t_order ` + twoTargets + ` ORDER BY order_id FETCH FIRST 2 ROWS WITH TIES`},
		{PostgreSQL, `SELECT order_id, rank() OVER (ORDER BY amount) FROM t_order ` + twoTargets},
		{PostgreSQL, `SELECT COUNT(*) % 2 FROM t_order ` + twoTargets},
		{PostgreSQL, `SELECT COUNT(*) * 2.5e0 FROM t_order ` + twoTargets},
		{PostgreSQL, `SELECT abs(MIN(amount)) FROM t_order ` + twoTargets},
		{PostgreSQL, `SELECT COUNT(*) * amount FROM t_order ` + twoTargets},
		{PostgreSQL, `SELECT order_id FROM t_order ` + twoTargets + ` GROUP BY order_id ORDER BY abs(MAX(amount))`},
		{PostgreSQL, `SELECT COUNT(*) FILTER (WHERE amount > 1) FROM t_order ` + twoTargets},
		{PostgreSQL, `SELECT status FROM t_order ` + twoTargets + ` GROUP BY status HAVING abs(SUM(amount)) > 3`},
		{PostgreSQL, `SELECT status FROM t_order ` + twoTargets + ` GROUP BY status HAVING SUM(amount) > 2.5`},
		{PostgreSQL, `SELECT DISTINCT status FROM t_order ` + twoTargets + ` ORDER BY status, amount`},
		{PostgreSQL, `SELECT * , COUNT(*) FROM t_order ` + twoTargets + ` GROUP BY order_id`},
		{MySQL, `SELECT SUM(amount / 3) FROM t_order ` + twoTargets},
		{MySQL, `SELECT SUM(amount) DIV 2 FROM t_order ` + twoTargets},
		{MySQL, `SELECT status, COUNT(*) FROM t_order ` + twoTargets + ` GROUP BY status WITH ROLLUP`},
		{MySQL, `SELECT GROUP_CONCAT(status) FROM t_order ` + twoTargets},
		{MySQL, `SELECT status, COUNT(*) FROM t_order ` + twoTargets + ` GROUP BY status DESC`},
		{MySQL, `SELECT amount + 1 AS status FROM t_order ` + twoTargets + ` GROUP BY status`},
		{PostgreSQL, `SELECT status AS s, COUNT(*) FROM t_order ` + twoTargets + ` GROUP BY s`},
		{MySQL, `SELECT amount AS a FROM t_order ` + twoTargets + ` ORDER BY a + 1`},
		{SQLite, `SELECT total(amount) FROM t_order ` + twoTargets},
	} {
		_, _, err := firstTarget(t, c.d, c.q)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v %s: %v, want ErrUnsupported", c.d, c.q, err)
		}
	}
}

// FuzzSelectMergeRewriteParses feeds the router SELECTs shaped for
// merging: it never panics, and the SQL each target gets (hidden columns,
// GROUP BY added, HAVING removed) parses in the dialect.
func FuzzSelectMergeRewriteParses(f *testing.F) {
	seeds := []string{
		"SELECT status, COUNT(*), AVG(amount) FROM t_order WHERE user_id > ? GROUP BY status HAVING SUM(amount) > 3 ORDER BY MAX(order_id) DESC LIMIT 2",
		"SELECT COUNT(DISTINCT status), SUM(DISTINCT amount) FROM t_order /* c */ WHERE user_id > 0 -- x\n",
		"SELECT DISTINCT status FROM t_order WHERE user_id > 0 ORDER BY status COLLATE \"C\" NULLS FIRST LIMIT 2 OFFSET 1",
		"SELECT order_id FROM t_order WHERE user_id > 0 ORDER BY amount * 2 DESC, 1 LIMIT 5",
		"SELECT user_id, COUNT(*) * 2 AS c, SUM(amount) / COUNT(*) FROM t_order WHERE user_id > 0 GROUP BY 1 HAVING COUNT(*) IN (1, 2) ORDER BY c",
		"SELECT t_order.status AS s, MIN(t_order.amount) FROM t_order WHERE t_order.user_id > 0 GROUP BY t_order.status ORDER BY MAX(t_order.amount) - 1",
		"SELECT * FROM t_order WHERE user_id > 0 ORDER BY amount, order_id LIMIT 3",
		"SELECT COALESCE(MAX(amount), -1), -MIN(amount) FROM t_order WHERE user_id > 0",
	}
	for _, s := range seeds {
		for d := range 3 {
			f.Add(s, uint8(d))
		}
	}
	hooks := map[Dialect]*hook{}
	for _, d := range []Dialect{PostgreSQL, MySQL, SQLite} {
		hooks[d] = testHook(f, d, WithScatter(), WithPlanCacheSize(0), WithBinaryCollation())
	}
	f.Fuzz(func(t *testing.T, sql string, which uint8) {
		d := []Dialect{PostgreSQL, MySQL, SQLite}[which%3]
		if d == PostgreSQL {
			sql = numberPlaceholders(sql)
		}
		n := strings.Count(sql, "?") + strings.Count(sql, "$")
		vs := make([]any, n)
		for i := range vs {
			vs[i] = int64(i + 1)
		}
		r, err := hooks[d].route(sql, args(vs...))
		if err != nil || r.passthrough {
			return
		}
		for _, u := range r.units {
			if err := parses(d, u.sql); err != nil {
				t.Fatalf("%v: %q routed to %q, which does not parse: %v", d, sql, u.sql, err)
			}
		}
	})
}

// BenchmarkRouteMergedSelect is routing a cached grouped SELECT over two
// targets: binding LIMIT and HAVING and rendering the per-target SQL.
func BenchmarkRouteMergedSelect(b *testing.B) {
	h := testHook(b, PostgreSQL)
	q := `SELECT status, COUNT(*), AVG(amount) FROM t_order ` + twoTargets + ` GROUP BY status HAVING SUM(amount) > $1 ORDER BY MAX(order_id) DESC LIMIT $2`
	a := args(int64(3), int64(10))
	if _, err := h.route(q, a); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.route(q, a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergePlanBind is binding a compiled merge to one execution's
// result columns and arguments.
func BenchmarkMergePlanBind(b *testing.B) {
	h := testHook(b, PostgreSQL)
	r, err := h.route(`SELECT status, COUNT(*), AVG(amount) FROM t_order `+twoTargets+` GROUP BY status HAVING SUM(amount) > $1 ORDER BY MAX(order_id) DESC LIMIT 5`, args(int64(3)))
	if err != nil {
		b.Fatal(err)
	}
	cols := []string{"status", "count", "avg", "h0", "h1", "h2", "h3"}
	units := []driver.Rows{mk(cols, nil), mk(cols, nil)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.merge.plan(units); err != nil {
			b.Fatal(err)
		}
	}
}
