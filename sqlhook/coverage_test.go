package sqlhook

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// Statements that name a logic or broadcast table (t_order, t_order_item,
// t_user sharded; t_dict broadcast) somewhere the plan does not route:
// each would run unchanged on the default data source, so each must be
// refused at compile time with ErrUnsupported.
var refusedOutsidePlan = []string{
	// Several statements in one text.
	`SELECT 1; DROP TABLE IF EXISTS t_dict`,
	`DROP TABLE IF EXISTS t_dict; SELECT 1`,
	`SELECT 1; UPDATE t_dict SET v = 'x'`,
	`SELECT 1; SELECT * FROM t_order WHERE user_id = 1 AND order_id = 1`,
	// Procedural bodies.
	`DO $$ BEGIN UPDATE t_dict SET v = '1'; END $$`,
	`DO $body$ BEGIN EXECUTE 'DELETE FROM "T_DICT"'; END $body$`,
	`DO $$ BEGIN EXECUTE E'UPDATE \x74_dict SET v = 1'; END $$`,
	`DO E'BEGIN UPDATE \x74_dict SET v = 1; END'`,
	`DO LANGUAGE plpgsql 'BEGIN DELETE FROM t_order; END'`,
	`CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'UPDATE t_dict SET v = 1'`,
	`CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t_order; END $$`,
	`CREATE OR REPLACE PROCEDURE p() LANGUAGE plpgsql AS $$ BEGIN TRUNCATE t_dict; END $$`,
	`CREATE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC UPDATE t_dict SET v = '1'; END`,
	`CREATE FUNCTION f() RETURNS SETOF t_order LANGUAGE sql AS 'SELECT 1'`,
	`CREATE TRIGGER trg AFTER INSERT ON t_order FOR EACH ROW EXECUTE FUNCTION f()`,
	// Statements that copy, explain, lock or describe a logic table.
	`SELECT * INTO t_copy FROM t_order WHERE user_id = 1 AND order_id = 1`,
	`SELECT k INTO TEMP t_copy FROM t_dict`,
	`CREATE TABLE t_copy AS SELECT * FROM t_order WHERE user_id = 1 AND order_id = 1`,
	`CREATE TABLE t_copy (LIKE t_order)`,
	`CREATE TABLE t_child (id int REFERENCES t_dict (k))`,
	`CREATE TABLE t_order_item (id int REFERENCES t_order (order_id))`,
	`ALTER TABLE t_dict ADD FOREIGN KEY (k) REFERENCES t_order (order_id)`,
	`COPY t_order FROM STDIN`,
	`COPY (SELECT * FROM t_dict) TO STDOUT`,
	`EXPLAIN ANALYZE SELECT * FROM t_order WHERE user_id = 1 AND order_id = 1`,
	`EXPLAIN DELETE FROM t_dict`,
	`PREPARE p AS SELECT * FROM t_order WHERE user_id = $1`,
	`PREPARE p AS DELETE FROM t_dict`,
	`LOCK TABLE t_order`,
	`VACUUM t_dict`,
	`ANALYZE t_order`,
	`CLUSTER t_order USING t_order_pkey`,
	`REINDEX TABLE t_dict`,
	`COMMENT ON TABLE t_order IS 'orders'`,
	`SECURITY LABEL ON TABLE t_dict IS 'x'`,
	`GRANT SELECT ON t_order TO PUBLIC`,
	`REVOKE ALL ON TABLE t_dict FROM PUBLIC`,
	`ALTER TABLE t_order RENAME TO t_old`,
	`ALTER TABLE t_x RENAME TO t_order`,
	`ALTER TABLE t_order RENAME COLUMN user_id TO uid`,
	`ALTER TABLE t_order RENAME CONSTRAINT c TO d`,
	`ALTER INDEX t_order RENAME TO i`,
	`CREATE VIEW v AS SELECT * FROM t_dict`,
	`CREATE MATERIALIZED VIEW v AS SELECT * FROM t_order`,
	`CREATE RULE r AS ON INSERT TO t_x DO ALSO DELETE FROM t_dict`,
	`CREATE POLICY p ON t_order USING (true)`,
	`CREATE SEQUENCE s OWNED BY t_order.order_id`,
	`DROP VIEW t_dict`,
	`DROP INDEX t_order`,
	`DROP TABLE t_x, t_dict`,
	`TRUNCATE t_x, t_dict`,
	`CREATE INDEX i ON t_x (a); CREATE INDEX j ON t_dict (k)`,
	// Table positions the plan does not route.
	`INSERT INTO t_x SELECT * FROM t_order`,
	`UPDATE t_x SET a = (SELECT max(v) FROM t_dict)`,
	`DELETE FROM t_x WHERE a IN (SELECT k FROM t_dict)`,
	`SELECT * FROM t_x WHERE EXISTS (SELECT 1 FROM t_order)`,
	`WITH t_order AS (SELECT 1) SELECT * FROM t_order`,
	`SELECT * FROM t_x UNION SELECT * FROM t_dict`,
	`SELECT * FROM t_order WHERE user_id = 1 AND order_id = 1 AND EXISTS (SELECT 1 FROM t_order)`,
	`MERGE INTO t_dict d USING t_x x ON d.k = x.k WHEN MATCHED THEN DELETE`,
	// Strings the server reads as a table name or as SQL.
	`SELECT query_to_xml('select * from t_order', true, false, '')`,
	`SELECT table_to_xml('t_dict', true, false, '')`,
	`SELECT pg_relation_size('t_order')`,
	`SELECT 't_order'::regclass`,
	`SELECT CAST('public.t_dict' AS regclass)`,
	`SELECT * FROM t_x WHERE oid = 't_dict'::text::regclass`,
	`SELECT query_to_xml(E'select * from \x74_order', true, false, '')`,
	`SELECT query_to_xml(U&'select * from t\005forder', true, false, '')`,
	// Names spelled so the plan does not see them as the logic table.
	`SELECT * FROM U&"t\005forder" WHERE user_id = 1 AND order_id = 1`,
	`SELECT * FROM U&"t!005fdict" UESCAPE '!'`,
	`DELETE FROM u&"t\005fdict"`,
	`SELECT * FROM shardkey_ds0.public.t_order WHERE user_id = 1 AND order_id = 1`,
	`DROP TABLE shardkey_ds0.public.t_dict`,
	`SELECT NULL::t_order`,
	`SELECT ROW(1, 2)::t_dict`,
	`SELECT * FROM t_order.t_x`,
	`SELECT * FROM t_order o WHERE user_id = 1 AND order_id = 1 FOR UPDATE OF t_order`,
	`SELECT * FROM t_x WHERE a = 1 FOR UPDATE OF t_order`,
	`COMMENT ON COLUMN t_order.status IS 'x'`,
	`DECLARE c CURSOR FOR SELECT * FROM t_order`,
	`CREATE TABLE t_x () INHERITS (t_order)`,
	`CREATE TABLE t_x PARTITION OF t_order FOR VALUES IN (1)`,
	`SELECT * FROM t_order TABLESAMPLE SYSTEM (10)`,
	`CREATE SCHEMA t_order`,
	`COPY t_x FROM PROGRAM 'psql -c "DELETE FROM t_dict"'`,
	// With standard_conforming_strings off, the server reads the second
	// quote as escaped and the DELETE as code.
	`SELECT '\', ' ; DELETE FROM t_dict; --'`,
	`SELECT '\', ' ; DELETE FROM U&"t\005fdict"; --'`,
}

// SQLite respells `x` and [x]; its other statements share PostgreSQL's.
var refusedOutsidePlanSQLite = []string{
	"SELECT 1; DROP TABLE IF EXISTS `t_dict`",
	"SELECT 1; DELETE FROM [t_dict]",
	"CREATE TABLE t_copy AS SELECT * FROM [t_order]",
	"INSERT INTO t_x SELECT * FROM `t_order`",
	"CREATE VIEW v AS SELECT * FROM t_dict",
	"CREATE TRIGGER trg AFTER INSERT ON t_x BEGIN DELETE FROM t_dict; END",
	"SELECT * FROM pragma_table_info('t_order')",
	"PRAGMA table_info(t_order)",
	"ALTER TABLE t_order RENAME TO t_old",
	"DROP VIEW t_dict",
	"SELECT * FROM 't_order' WHERE user_id = 1 AND order_id = 1",
	"REPLACE INTO t_dict (k, v) VALUES ('a', 'b')",
	// SQLite reads E, then the string '\', then the DROP as a statement;
	// PostgreSQL's grammar would read one escape string.
	`SELECT E'\'; DROP TABLE t_dict; --'`,
	`SELECT u&'\'; DROP TABLE t_dict; --'`,
	`SELECT $$; DROP TABLE t_dict; $$`,
}

func TestStatementNamingLogicTableOutsidePlanIsRefused(t *testing.T) {
	for _, d := range []Dialect{PostgreSQL, SQLite} {
		h := testHook(t, d)
		qs := refusedOutsidePlan
		if d == SQLite {
			qs = append(refusedOutsidePlanSQLite, qs...)
		}
		for i, q := range qs {
			if d == SQLite && i >= len(refusedOutsidePlanSQLite) && strings.ContainsAny(q, `\&$`) {
				continue // PostgreSQL-only spellings
			}
			_, err := h.plan(context.Background(), q)
			if err == nil {
				t.Errorf("%v %s: compiled, want a refusal", d, q)
				continue
			}
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrParse) {
				t.Errorf("%v %s: %v, want ErrUnsupported or ErrParse", d, q, err)
			}
		}
	}
}

// Names equal to a logic table's that the parse tree shows are not table
// references pass through (or route) unchanged.
func TestLogicNameOutsideTablePositionIsAllowed(t *testing.T) {
	pass := []string{
		`SELECT t_order FROM t_x`,
		`SELECT a AS t_order, b AS "t_dict" FROM t_x`,
		`SELECT * FROM t_x AS t_order WHERE t_order.a = 1`,
		`SELECT t_order.a FROM t_x t_order`,
		`INSERT INTO t_x (t_order) VALUES ('t_order')`,
		`UPDATE t_x SET t_dict = 't_dict drop table t_dict'`,
		`SELECT * FROM t_x WHERE name = 't_order' AND note LIKE '%t_dict%'`,
		`SELECT t_order(1)`,
		`SELECT public.t_order(1)`,
		`SELECT nextval('t_order_order_id_seq')`,
		`SELECT * FROM t_order_0 WHERE user_id = 1`,
		`SAVEPOINT t_order`,
		`CREATE TABLE t_x (t_order int, t_dict text)`,
		`CREATE INDEX i ON t_x (t_order)`,
		`ALTER TABLE t_x ADD CONSTRAINT c CHECK (t_order > 0)`,
		`SELECT 1; SELECT * FROM t_x WHERE name = 't_order'`,
		`SELECT 1; SELECT 2`,
		`DO $$ BEGIN RAISE NOTICE 'hello'; END $$`,
		`DO $$ BEGIN UPDATE t_order_0 SET status = 'x'; END $$`,
		`CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT count(*)::int FROM t_order_1'`,
		`SELECT E'\x41'`,
		`SELECT * FROM t_x WHERE a = E'it''s \\ t_order'`,
		`SELECT coalesce(a, 't_order') FROM t_x`,
		`SELECT 'C:\dir' FROM t_x`,
		`SELECT E'C:\\t_order' FROM t_x`,
		`SELECT count(*) FILTER (WHERE a > 1) FROM t_x`,
		`NOTIFY t_order`,
		`ALTER TABLE t_x RENAME COLUMN t_order TO t_dict`,
	}
	for _, d := range []Dialect{PostgreSQL, SQLite} {
		h := testHook(t, d)
		for _, q := range pass {
			if d == SQLite && strings.ContainsAny(q, `\$`) {
				continue
			}
			p, err := h.plan(context.Background(), q)
			if err != nil {
				t.Errorf("%v %s: %v", d, q, err)
				continue
			}
			if !p.Passthrough {
				t.Errorf("%v %s: routed, want it to pass through", d, q)
			}
		}
	}
}

// The spellings of a logic table in table position that are routed: any
// case, quoted or not, schema-qualified (the schema is kept), comments
// between the parts.
func TestLogicTableSpellingsAreRouted(t *testing.T) {
	h := testHook(t, PostgreSQL)
	cases := []struct{ q, want string }{
		{`SELECT * FROM "T_ORDER" WHERE user_id = 1 AND order_id = 1`,
			`ds_1: SELECT * FROM "t_order_1" AS "T_ORDER" WHERE user_id = 1 AND order_id = 1` + "\n"},
		{`SELECT * FROM T_Order WHERE user_id = 1 AND order_id = 1`,
			`ds_1: SELECT * FROM "t_order_1" AS T_Order WHERE user_id = 1 AND order_id = 1` + "\n"},
		{`SELECT * FROM public.t_order WHERE user_id = 1 AND order_id = 1`,
			`ds_1: SELECT * FROM public."t_order_1" AS t_order WHERE user_id = 1 AND order_id = 1` + "\n"},
		{`SELECT * FROM app /* c */ . "t_order" o WHERE o.user_id = 1 AND o.order_id = 1`,
			`ds_1: SELECT * FROM app /* c */ . "t_order_1" o WHERE o.user_id = 1 AND o.order_id = 1` + "\n"},
		{`SELECT t_order.status FROM t_order WHERE t_order.user_id = 1 AND order_id = 1`,
			`ds_1: SELECT t_order.status FROM "t_order_1" AS t_order WHERE t_order.user_id = 1 AND order_id = 1` + "\n"},
		{`SELECT * FROM t_order WHERE user_id = 1 AND order_id = 1 FOR UPDATE OF t_order`,
			`ds_1: SELECT * FROM "t_order_1" AS t_order WHERE user_id = 1 AND order_id = 1 FOR UPDATE OF t_order` + "\n"},
		{`TABLE t_dict`, `ds_0: TABLE "t_dict"` + "\n"},
		{`ALTER TABLE t_user RENAME COLUMN note TO remark`,
			`ds_0: ALTER TABLE "t_user_0" RENAME COLUMN note TO remark` + "\n" + `ds_0: ALTER TABLE "t_user_1" RENAME COLUMN note TO remark` + "\n"},
		{`ALTER TABLE t_user ADD FOREIGN KEY (k) REFERENCES t_dict (k)`,
			`ds_0: ALTER TABLE "t_user_0" ADD FOREIGN KEY (k) REFERENCES t_dict (k)` + "\n" + `ds_0: ALTER TABLE "t_user_1" ADD FOREIGN KEY (k) REFERENCES t_dict (k)` + "\n"},
		{`DROP TABLE IF EXISTS public."T_DICT"`,
			`ds_0: DROP TABLE IF EXISTS public."t_dict"` + "\n" + `ds_1: DROP TABLE IF EXISTS public."t_dict"` + "\n"},
	}
	for _, c := range cases {
		r := mustRoute(t, h, c.q)
		if got := show(r); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
}

// The fast path that skips parsing must find every text that could name
// a logic table: any case, quoted names, and (PostgreSQL) escapes.
func TestMentionsLogicIsSoundOverApproximation(t *testing.T) {
	h := testHook(t, PostgreSQL)
	for _, q := range []string{
		`select * from T_ORDER`, `select * from "t_dict"`, `SELECT * FROM U&"t\005fdict"`,
		`SELECT query_to_xml(E'select * from \x74_dict', true, false, '')`,
	} {
		if !h.MentionsLogic(q) && !h.mayEscapeNames(q) {
			t.Errorf("%s: the fast path would skip parsing", q)
		}
	}
	// MySQL's dynamic SQL can spell a name with escapes, hex or a
	// variable: its compiler must see every PREPARE and EXECUTE.
	my := testHook(t, MySQL)
	for _, q := range []string{`PREPARE s FROM 'DELETE FROM t_\dict'`, `PREPARE s FROM 0x44454c455445`, `execute immediate @q`} {
		if !my.MentionsLogic(q) && !my.mayEscapeNames(q) {
			t.Errorf("MySQL %s: the fast path would skip parsing", q)
		}
	}
	// A name with a quote character is found written with it doubled.
	if got := ir.Spellings([]string{`a"b`}); !strings.Contains(strings.Join(got, " "), `a""b`) {
		t.Errorf("spellings(a\"b) = %q", got)
	}
	// A text PostgreSQL cannot parse, parsed only for its escapes, still
	// goes to the server (which reports its own syntax error).
	if p, err := h.plan(context.Background(), `SELEC E'\x41'`); err != nil || !p.Passthrough {
		t.Errorf("unparsable text without a logic name: %v, %+v", err, p)
	}
}

// A syntax error in a statement that names a logic table is reported when
// the statement is compiled (Prepare), not when it runs.
func TestCompileReportsParseErrorOfLogicStatement(t *testing.T) {
	for _, d := range []Dialect{PostgreSQL, SQLite, MySQL} {
		h := testHook(t, d)
		if _, err := h.plan(context.Background(), `SELEC * FROM t_order`); !errors.Is(err, ErrParse) {
			t.Errorf("%v: %v, want ErrParse", d, err)
		}
		// The grammars stop reading at a NUL byte; the text after it
		// would go unchecked.
		if _, err := h.plan(context.Background(), "SELECT 1\x00; DROP TABLE t_dict"); !errors.Is(err, ErrParse) {
			t.Errorf("%v: NUL byte: %v, want ErrParse", d, err)
		}
	}
}

func TestUpdateRefusesShardingKeyChange(t *testing.T) {
	h := testHook(t, PostgreSQL)
	// user_id picks the data source (mod 2), order_id the table (mod 2).
	refused := []struct {
		q    string
		args []any
		col  string
	}{
		{`UPDATE t_order SET user_id = $1 WHERE user_id = $2 AND order_id = $3`, []any{2, 1, 5}, "user_id"},
		{`UPDATE t_order SET user_id = 2 WHERE user_id = 1 AND order_id = 5`, nil, "user_id"},
		{`UPDATE t_order SET order_id = 6 WHERE user_id = 1 AND order_id = 5`, nil, "order_id"},
		{`UPDATE t_order o SET (status, user_id) = ('x', $1) WHERE o.user_id = $2 AND o.order_id = $3`, []any{4, 1, 5}, "user_id"},
		{`UPDATE t_order SET user_id = user_id + 2 WHERE user_id = 1 AND order_id = 5`, nil, "user_id"},
		{`UPDATE t_order SET user_id = DEFAULT WHERE user_id = 1 AND order_id = 5`, nil, "user_id"},
		{`UPDATE t_order SET user_id = (SELECT 3) WHERE user_id = 1 AND order_id = 5`, nil, "user_id"},
		{`UPDATE t_order SET user_id = 3 WHERE user_id IN (1, 2) AND order_id = 5`, nil, "user_id"},
		{`UPDATE t_order SET user_id = 3 WHERE (user_id = 1 OR user_id = 3) AND order_id = 5 OR user_id = 2 AND order_id = 5`, nil, "user_id"},
		{`INSERT INTO t_order (order_id, user_id) VALUES (5, 1) ON CONFLICT (order_id) DO UPDATE SET user_id = 3`, nil, "user_id"},
		{`INSERT INTO t_order (order_id, user_id) VALUES (5, 1) ON CONFLICT (order_id) DO UPDATE SET user_id = excluded.user_id + 0`, nil, "user_id"},
		{`INSERT INTO t_order (order_id, user_id) VALUES (5, 1) ON CONFLICT ON CONSTRAINT t_order_pkey DO UPDATE SET user_id = excluded.user_id`, nil, "user_id"},
		{`INSERT INTO t_order (order_id, user_id, status) VALUES (5, 1, 'a') ON CONFLICT (status) DO UPDATE SET user_id = excluded.user_id`, nil, "user_id"},
		{`INSERT INTO t_order (order_id, user_id) VALUES (5, 1) ON CONFLICT (order_id) DO UPDATE SET user_id = excluded.order_id`, nil, "user_id"},
	}
	for _, c := range refused {
		_, err := h.route(c.q, args(c.args...))
		var re *shardconf.RouteError
		switch {
		case !errors.Is(err, shardconf.ErrShardingKeyChange) || !errors.Is(err, ErrUnsupported):
			t.Errorf("%s %v: %v, want ErrShardingKeyChange and ErrUnsupported", c.q, c.args, err)
		case !errors.As(err, &re) || re.Table != "t_order" || re.Column != c.col:
			t.Errorf("%s: %v, want a RouteError naming t_order.%s", c.q, err, c.col)
		}
	}
	allowed := []struct {
		q    string
		args []any
		want string
	}{
		{`UPDATE t_order SET user_id = $1 WHERE user_id = $2 AND order_id = $3`, []any{3, 1, 5},
			"ds_1: UPDATE \"t_order_1\" AS t_order SET user_id = $1 WHERE user_id = $2 AND order_id = $3 [3] [1] [5]\n"},
		{`UPDATE t_order SET user_id = user_id, order_id = t_order.order_id WHERE user_id = 1 AND order_id = 5`, nil,
			"ds_1: UPDATE \"t_order_1\" AS t_order SET user_id = user_id, order_id = t_order.order_id WHERE user_id = 1 AND order_id = 5\n"},
		{`UPDATE t_order SET order_id = 7, user_id = $1::bigint WHERE user_id = 1 AND order_id = 5`, []any{int64(1)},
			"ds_1: UPDATE \"t_order_1\" AS t_order SET order_id = 7, user_id = $1::bigint WHERE user_id = 1 AND order_id = 5 [1]\n"},
		{`UPDATE t_order SET user_id = 1 WHERE user_id = 1 AND order_id = 5 AND user_id = 2`, nil, ""},
		{`INSERT INTO t_order (order_id, user_id) VALUES (5, 1) ON CONFLICT (order_id) DO UPDATE SET user_id = excluded.user_id`, nil,
			"ds_1: INSERT INTO \"t_order_1\" AS t_order (order_id, user_id) VALUES (5, 1) ON CONFLICT (order_id) DO UPDATE SET user_id = excluded.user_id\n"},
		{`INSERT INTO t_order AS o (order_id, user_id) VALUES (5, 1) ON CONFLICT (status) DO UPDATE SET "USER_ID" = "excluded"."user_id", order_id = EXCLUDED.order_id`, nil,
			"ds_1: INSERT INTO \"t_order_1\" AS o (order_id, user_id) VALUES (5, 1) ON CONFLICT (status) DO UPDATE SET \"USER_ID\" = \"excluded\".\"user_id\", order_id = EXCLUDED.order_id\n"},
		{`INSERT INTO t_order AS o (order_id, user_id) VALUES (5, 1) ON CONFLICT ON CONSTRAINT pk DO UPDATE SET user_id = o.user_id`, nil,
			"ds_1: INSERT INTO \"t_order_1\" AS o (order_id, user_id) VALUES (5, 1) ON CONFLICT ON CONSTRAINT pk DO UPDATE SET user_id = o.user_id\n"},
	}
	for _, c := range allowed {
		r, err := h.route(c.q, args(c.args...))
		if err != nil {
			t.Errorf("%s %v: %v", c.q, c.args, err)
			continue
		}
		if c.want != "" && show(r) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.q, show(r), c.want)
		}
	}
}

// An INSERT into a physical table named directly is routed by its rows:
// each must route to a table of that name (it then goes to that table's
// data source, not the default one); an UPDATE of a physical table may not
// assign a sharding column, which sqlhook cannot check there.
func TestPhysicalTableWriteNeverMisplacesRow(t *testing.T) {
	for _, d := range []Dialect{PostgreSQL, SQLite} {
		h := testHook(t, d)
		r := mustRoute(t, h, `INSERT INTO t_order_1 (user_id, order_id, status) VALUES (1, 3, 'a')`)
		if len(r.units) != 1 || r.units[0].ds != "ds_1" || !strings.Contains(r.units[0].sql, `"t_order_1"`) {
			t.Errorf("%v: physical insert routed as %s", d, show(r))
		}
		for _, q := range []string{
			`INSERT INTO t_order_0 (user_id, order_id, status) VALUES (1, 3, 'a')`,
			`INSERT INTO t_order_1 (user_id, order_id) VALUES (1, 3), (2, 4)`,
		} {
			if _, err := h.route(q, nil); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%v %s: %v, want ErrUnsupported", d, q, err)
			}
		}
		if _, err := h.route(`UPDATE t_order_0 SET user_id = 2 WHERE order_id = 4`, nil); !errors.Is(err, shardconf.ErrShardingKeyChange) {
			t.Errorf("%v: UPDATE of a physical table's sharding column: %v", d, err)
		}
	}
}
