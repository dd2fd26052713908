package sqlhook

import (
	"errors"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
	"github.com/shardkey/shardkey/sqlhook/internal/pgsql"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// residualLogic checks a statement as it goes to a database: it names no
// logic or broadcast table where the database reads a table (or code), so
// nothing reaches the default data source's unsharded table. It is an
// independent, simpler reading than the coverage check: any RangeVar (but
// the aliases FOR UPDATE OF names), DROP object, type name or option and
// body string that names one.
// routed: the statement was rewritten, so a broadcast table (which keeps
// its name) may be there; only sharded names are looked for.
func residualLogic(h *hook, sql string, routed bool) string {
	tree, err := pgsql.Parse(sql)
	if err != nil {
		return ""
	}
	isLogic := func(name string) bool {
		if routed {
			return h.Router.IsSharded(name)
		}
		return h.IsLogicName(name)
	}
	found := ""
	var walk func(m protoreflect.Message, locking bool)
	walk = func(m protoreflect.Message, locking bool) {
		switch x := m.Interface().(type) {
		case *pg.RangeVar:
			if !locking && isLogic(x.Relname) {
				found = "table " + x.Relname
			}
		case *pg.LockingClause:
			locking = true
		case *pg.DropStmt:
			for _, o := range x.Objects {
				for _, it := range o.GetList().GetItems() {
					if isLogic(it.GetString_().GetSval()) {
						found = "DROP " + it.GetString_().GetSval()
					}
				}
			}
		case *pg.TypeName:
			for _, n := range x.Names {
				if isLogic(n.GetString_().GetSval()) {
					found = "type " + n.GetString_().GetSval()
				}
			}
		case *pg.DefElem:
			if s := x.Arg.GetString_(); s != nil && h.MentionedName(s.Sval) != "" {
				found = "body " + s.Sval
			}
			for _, it := range x.Arg.GetList().GetItems() {
				if s := it.GetString_(); s != nil && h.MentionedName(s.Sval) != "" {
					found = "body " + s.Sval
				}
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsMap():
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message(), locking)
				}
			case fd.Message() != nil:
				walk(v.Message(), locking)
			}
			return true
		})
	}
	walk(tree.ProtoReflect(), false)
	return found
}

// FuzzStatementSentNamesNoLogicTable: whatever text is routed, every
// statement sent (passed through or rewritten) is free of logic table
// names in table positions, DROP lists, types and bodies; everything else
// is refused with a *StatementError.
func FuzzStatementSentNamesNoLogicTable(f *testing.F) {
	seeds := append([]string{
		`SELECT * FROM t_order WHERE user_id = $1 AND order_id = $2`,
		`SELECT t_order.status FROM t_order WHERE t_order.user_id = 1 AND order_id = 1 FOR UPDATE OF t_order`,
		`SELECT * FROM public.t_order o JOIN t_order_item i USING (order_id) WHERE o.user_id = 1 AND o.order_id = 2`,
		`DROP TABLE IF EXISTS "T_DICT"`,
		`UPDATE t_dict SET v = 't_dict' WHERE k = 'a'`,
		`SELECT a AS t_order FROM t_x t_dict WHERE t_dict.a = 't_order'`,
	}, refusedOutsidePlan...)
	seeds = append(seeds, refusedOutsidePlanSQLite...)
	for _, s := range seeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	hooks := map[bool]*hook{false: testHook(f, PostgreSQL, WithScatter(), WithPlanCacheSize(0)),
		true: testHook(f, SQLite, WithScatter(), WithPlanCacheSize(0))}
	f.Fuzz(func(t *testing.T, sql string, sqlite bool) {
		h := hooks[sqlite]
		n := strings.Count(sql, "?") + strings.Count(sql, "$")
		vs := make([]any, n)
		for i := range vs {
			vs[i] = int64(i + 1)
		}
		r, err := h.route(sql, args(vs...))
		if err != nil {
			var se *StatementError
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *StatementError: %v", err)
			}
			return
		}
		if sqlite && (strings.Contains(strings.ToLower(sql), "u&") || strings.ContainsAny(sql, `\$`)) {
			return // PostgreSQL's escapes, which SQLite does not read
		}
		for _, u := range r.units {
			text := u.sql
			if sqlite {
				if text, err = ir.SQLiteToPG(text); err != nil {
					continue
				}
			}
			if what := residualLogic(h, text, !r.passthrough); what != "" {
				t.Fatalf("%q sent %q to %s, which names %s", sql, u.sql, u.ds, what)
			}
		}
	})
}
