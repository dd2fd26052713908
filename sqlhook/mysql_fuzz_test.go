package sqlhook

import (
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/model"
	"github.com/shardkey/shardkey/sqlhook/internal/mysqlsql"
)

// FuzzMySQLRewriteKeepsMeaning: every MySQL statement routed parses and
// names no sharded logic table; one routed to one target without
// generated values is the caller's statement with only table names
// changed. TiDB's tree of what is sent, with each physical name read
// back as its logic table, restores to the same text as the caller's tree
// with qualifiers of logic tables dropped.
func FuzzMySQLRewriteKeepsMeaning(f *testing.F) {
	for _, s := range []string{
		"SELECT id FROM t_order WHERE user_id = ? AND order_id = ? AND note = 0x28 LOCK IN SHARE MODE",
		"SELECT /*+ MAX_EXECUTION_TIME(1) */ t_order.*, 't_order' FROM app_0.t_order WHERE t_order.user_id = 1 AND order_id = 2 FOR UPDATE NOWAIT",
		"INSERT INTO t_order (user_id, order_id, note) VALUES (1, 2, x'28'), (1, 4, b'1') ON DUPLICATE KEY UPDATE note = VALUES(note)",
		"INSERT INTO t_order SET user_id = ?, order_id = 3, note = 'a\\'b'",
		"UPDATE t_order o JOIN t_order_item i ON o.order_id = i.order_id SET i.note = \"x\" WHERE o.user_id = 1 AND o.order_id = 2 -- c",
		"DELETE FROM `app_1`.`T_ORDER` WHERE user_id = 1 AND order_id = 2 ORDER BY id LIMIT 1 # t_order",
		"SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 LIMIT ?, ?",
		"SELECT count(*) FROM t_order WHERE user_id = 1 AND order_id IN (2, 4) AND EXISTS (SELECT 1 FROM t_x WHERE t_x.a = t_order.order_id)",
		"REPLACE INTO t_dict (k, v) VALUES ('a', _utf8mb4'b' COLLATE utf8mb4_bin)",
		"CREATE TABLE t_user (id BIGINT PRIMARY KEY, t_user INT DEFAULT 0x10) COMMENT 't_user'",
	} {
		f.Add(s)
	}
	h := mysqlTestHook(f, mysqlRulesYAML, WithPlanCacheSize(0))
	phys := map[string]string{}
	for _, logic := range []string{"t_order", "t_order_item", "t_user", "t_dict"} {
		phys[logic] = logic
		if ts, err := h.Router.Targets(logic); err == nil {
			for _, t := range ts {
				phys[t.Table] = logic
			}
		}
	}
	f.Fuzz(func(t *testing.T, sql string) {
		n := strings.Count(sql, "?")
		vs := make([]any, n)
		for i := range vs {
			vs[i] = int64(i*3 + 1)
		}
		r, err := h.route(sql, args(vs...))
		if err != nil || r.passthrough {
			return
		}
		// Every statement sent parses and names no sharded logic table.
		for _, u := range r.units {
			out, err := mysqlsql.ParseOne(u.sql)
			if err != nil {
				t.Fatalf("%q routed to %q, which does not parse: %v", sql, u.sql, err)
			}
			for _, tn := range mysqlsql.CollectSlots(out).Tables {
				if h.Router.IsSharded(tn.Name.O) {
					t.Fatalf("%q routed to %q, which names logic table %s", sql, u.sql, tn.Name.O)
				}
			}
		}
		if len(r.units) != 1 || len(r.units[0].args) != n {
			return
		}
		in, err := mysqlsql.ParseOne(sql)
		if err != nil {
			t.Fatalf("%q routed but does not parse: %v", sql, err)
		}
		out, err := mysqlsql.ParseOne(r.units[0].sql)
		if err != nil {
			t.Fatalf("%q routed to %q, which does not parse: %v", sql, r.units[0].sql, err)
		}
		physical := false // the caller names a physical table itself
		want := canonicalMySQL(t, in, func(name string) (string, bool) {
			if h.Router.IsSharded(name) || h.Router.IsBroadcast(name) {
				return strings.ToLower(name), true
			}
			if _, ok := phys[strings.ToLower(name)]; ok {
				physical = true
			}
			return name, false
		})
		if physical {
			return
		}
		got := canonicalMySQL(t, out, func(name string) (string, bool) {
			l, ok := phys[name]
			return l, ok
		})
		if got != want {
			t.Fatalf("%q routed to %q:\n got %s\nwant %s", sql, r.units[0].sql, got, want)
		}
	})
}

// canonicalMySQL restores stmt after renaming table names and qualifiers
// by logic (which says whether a name is a logic table's and its
// spelling), dropping the database qualifier of those names.
func canonicalMySQL(t *testing.T, stmt ast.StmtNode, logic func(string) (string, bool)) string {
	s := mysqlsql.CollectSlots(stmt)
	rename := func(schema, name *model.CIStr) {
		if l, ok := logic(name.O); ok {
			*name, *schema = model.NewCIStr(l), model.NewCIStr("")
		}
	}
	for _, tn := range s.Tables {
		rename(&tn.Schema, &tn.Name)
	}
	for _, c := range s.Cols {
		if c.Table.O != "" {
			rename(&c.Schema, &c.Table)
		}
	}
	for _, w := range s.Stars {
		if w.Table.O != "" {
			rename(&w.Schema, &w.Table)
		}
	}
	var b strings.Builder
	if err := stmt.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		t.Fatalf("restore: %v", err)
	}
	return b.String()
}
