package sqlhook

import (
	"errors"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"github.com/shardkey/shardkey/sqlhook/internal/pgsql"
)

// parses reports whether sql is a statement of dialect d.
func parses(d Dialect, sql string) error {
	switch d {
	case MySQL:
		_, _, err := parser.New().ParseSQL(sql)
		return err
	case SQLite:
		pgText, err := ir.SQLiteToPG(sql)
		if err != nil {
			return err
		}
		sql = pgText
	}
	_, err := pgsql.Parse(sql)
	return err
}

// FuzzRoute feeds the router generated statements: it never panics, and
// either refuses with an error or writes statements that parse.
func FuzzRoute(f *testing.F) {
	seeds := []string{
		"SELECT id FROM t_order WHERE user_id = ? AND order_id = ?",
		"SELECT * FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id WHERE o.user_id = 1 AND o.order_id IN (1, 2, 3) ORDER BY o.id DESC LIMIT 3 OFFSET 1",
		"INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (2, 'b'), (?, ?)",
		"UPDATE t_order SET status = 'x' WHERE user_id = 1 AND order_id BETWEEN 1 AND 5",
		"DELETE FROM t_order WHERE (user_id = 1 AND order_id = 1) OR (user_id = 2 AND order_id = 2)",
		"SELECT count(*), max(id) FROM t_order WHERE user_id > 0",
		"SELECT 't_order' FROM t_dict /* t_order */",
		"CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT, status VARCHAR(8))",
		"INSERT INTO t_dict (k, v) VALUES ('t_order', 'x')",
	}
	for _, s := range seeds {
		for d := range 3 {
			f.Add(s, uint8(d))
		}
	}
	hooks := map[Dialect]*hook{}
	for _, d := range []Dialect{PostgreSQL, MySQL, SQLite} {
		hooks[d] = testHook(f, d, WithScatter(), WithPlanCacheSize(0))
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
		if err != nil {
			var se *StatementError
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *StatementError: %v", err)
			}
			return
		}
		if r.passthrough {
			return
		}
		for _, u := range r.units {
			if err := parses(d, u.sql); err != nil {
				t.Fatalf("%v: %q routed to %q, which does not parse: %v", d, sql, u.sql, err)
			}
		}
	})
}

// numberPlaceholders spells ? as $1, $2, ... for PostgreSQL seeds.
func numberPlaceholders(s string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '?' {
			n++
			b.WriteString("$" + string(rune('0'+n%10)))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
