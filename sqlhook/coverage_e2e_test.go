package sqlhook_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// Statements naming a logic or broadcast table where the routed plan has
// no table position, per backend: each is refused before anything runs,
// and every physical table (both copies of the broadcast table t_dict
// included) is left as it was.
var covRefused = map[string][]string{
	"postgres": {
		`SELECT 1; DROP TABLE IF EXISTS t_dict`,
		`DROP TABLE IF EXISTS t_dict; SELECT 1`,
		`DO $$ BEGIN UPDATE t_dict SET v = 'x'; END $$`,
		`DO $$ BEGIN EXECUTE 'DELETE FROM "T_DICT"'; END $$`,
		`DO E'BEGIN UPDATE \x74_dict SET v = ''x''; END'`,
		`CREATE FUNCTION f_dict() RETURNS void LANGUAGE sql AS 'UPDATE t_dict SET v = ''x'''`,
		`CREATE PROCEDURE p_dict() LANGUAGE sql BEGIN ATOMIC UPDATE t_dict SET v = 'x'; END`,
		`SELECT * INTO t_copy FROM t_order`,
		`SELECT * INTO t_copy FROM t_order WHERE user_id = 1 AND order_id = 10`,
		`CREATE TABLE t_copy AS SELECT * FROM t_order`,
		`CREATE VIEW v_dict AS SELECT * FROM t_dict`,
		`CREATE RULE r_x AS ON UPDATE TO t_x DO ALSO DELETE FROM t_dict`,
		`CREATE TRIGGER trg AFTER INSERT ON t_dict FOR EACH ROW EXECUTE FUNCTION f()`,
		`ALTER TABLE t_dict RENAME TO t_old`,
		`EXPLAIN ANALYZE DELETE FROM t_dict`,
		`PREPARE p AS DELETE FROM t_dict`,
		`INSERT INTO t_x SELECT k || 'c', v FROM t_dict`,
		`DELETE FROM t_x WHERE k IN (SELECT k FROM t_dict)`,
		`WITH d AS (DELETE FROM t_dict RETURNING k) SELECT * FROM d`,
		`TRUNCATE t_x, t_dict`,
		`DROP VIEW IF EXISTS t_dict`,
		`DELETE FROM U&"t\005fdict"`,
		`DELETE FROM U&"t!005fdict" UESCAPE '!'`,
		`DROP TABLE shardkey_cov_refused_0.public.t_dict`,
		`SELECT query_to_xml('SELECT * FROM t_order', true, false, '')`,
		`COMMENT ON TABLE t_dict IS 'x'`,
		`MERGE INTO t_dict d USING t_x x ON d.k = x.k WHEN MATCHED THEN DELETE`,
	},
	"mariadb": {
		`SELECT 1; DROP TABLE IF EXISTS t_dict`,
		`CREATE TABLE t_copy AS SELECT * FROM t_order`,
		`CREATE TABLE t_copy SELECT * FROM t_dict`,
		`CREATE TABLE t_copy LIKE t_dict`,
		`CREATE VIEW v_dict AS SELECT * FROM t_dict`,
		`INSERT INTO t_x SELECT CONCAT(k, 'c'), v FROM t_dict`,
		`DELETE FROM t_x WHERE k IN (SELECT k FROM t_dict)`,
		`RENAME TABLE t_dict TO t_old`,
		`CREATE TRIGGER trg AFTER INSERT ON t_x FOR EACH ROW UPDATE t_dict SET v = 'x'`,
		`CREATE PROCEDURE p_dict() BEGIN UPDATE t_dict SET v = 'x'; END`,
		`PREPARE s FROM 'DELETE FROM t_dict'`,
	},
	"sqlite": {
		"SELECT 1; DROP TABLE IF EXISTS `t_dict`",
		"SELECT 1; DELETE FROM [t_dict]",
		`CREATE TABLE t_copy AS SELECT * FROM t_order`,
		`CREATE VIEW v_dict AS SELECT * FROM t_dict`,
		`CREATE TRIGGER trg AFTER INSERT ON t_x BEGIN DELETE FROM t_dict; END`,
		`ALTER TABLE t_dict RENAME TO t_old`,
		`INSERT INTO t_x SELECT k || 'c', v FROM t_dict`,
		`DELETE FROM t_x WHERE k IN (SELECT k FROM t_dict)`,
		`REPLACE INTO t_dict (k, v) VALUES ('a', 'x')`,
		`INSERT OR REPLACE INTO t_dict (k, v) VALUES ('a', 'x')`,
		`DELETE FROM 't_dict'`,
		`SELECT E'\'; DROP TABLE t_dict; --'`,
	},
}

func TestStatementNamingLogicTableOutsidePlanIsRefusedEndToEnd(t *testing.T) {
	for _, b := range covBackends(t, "refused") {
		t.Run(b.name, func(t *testing.T) {
			w := openCovWorld(t, b)
			before := w.snapshot(t)
			for _, q := range covRefused[b.name] {
				_, err := w.db.Exec(q)
				if !errors.Is(err, sqlhook.ErrUnsupported) && !errors.Is(err, sqlhook.ErrParse) {
					t.Errorf("%s: %v, want ErrUnsupported (or ErrParse for syntax sqlhook cannot read)", q, err)
				}
				sameSnapshot(t, q, before, w.snapshot(t))
			}
		})
	}
}

// An UPDATE or upsert that would move a row to another target is refused
// with ErrShardingKeyChange and changes nothing; one whose new value
// routes where the row already is runs, and the row stays in place.
func TestUpdateRefusesShardingKeyChangeEndToEnd(t *testing.T) {
	for _, b := range covBackends(t, "keychange") {
		t.Run(b.name, func(t *testing.T) {
			w := openCovWorld(t, b)
			before := w.snapshot(t)
			refused := []struct {
				q    string
				args []any
			}{
				// user 1 is on ds_1, user 2 on ds_0; order 10 in t_order_0.
				{`UPDATE t_order SET user_id = ? WHERE user_id = ? AND order_id = ?`, []any{2, 1, 10}},
				{`UPDATE t_order SET order_id = 11 WHERE user_id = 1 AND order_id = 10`, nil},
				{`UPDATE t_order SET user_id = user_id + 1 WHERE user_id = 1 AND order_id = 10`, nil},
				{`UPDATE t_order SET user_id = 3 WHERE user_id IN (1, 2) AND order_id = 10`, nil},
			}
			upsert := `INSERT INTO t_order (order_id, user_id, status) VALUES (10, 1, 'x') ON CONFLICT (order_id) DO UPDATE SET user_id = 2`
			upsertExcluded := `INSERT INTO t_order (order_id, user_id, status) VALUES (12, 3, 'up') ON CONFLICT (order_id) DO UPDATE SET user_id = excluded.user_id, status = excluded.status`
			if b.name == "mariadb" {
				upsert = `INSERT INTO t_order (order_id, user_id, status) VALUES (10, 1, 'x') ON DUPLICATE KEY UPDATE user_id = 2`
				upsertExcluded = `INSERT INTO t_order (order_id, user_id, status) VALUES (12, 3, 'up') ON DUPLICATE KEY UPDATE user_id = VALUES(user_id), order_id = VALUES(order_id), status = VALUES(status)`
			}
			refused = append(refused, struct {
				q    string
				args []any
			}{upsert, nil})
			for _, c := range refused {
				_, err := w.db.Exec(b.q(c.q), c.args...)
				var re *shardconf.RouteError
				if !errors.Is(err, shardconf.ErrShardingKeyChange) || !errors.As(err, &re) || re.Table != "t_order" {
					t.Errorf("%s: %v, want ErrShardingKeyChange naming t_order", c.q, err)
				}
				sameSnapshot(t, c.q, before, w.snapshot(t))
			}
			// user 3 routes to ds_1 like user 1, order 12 to t_order_0 like 10.
			res, err := w.db.Exec(b.q(`UPDATE t_order SET user_id = ?, order_id = 12 WHERE user_id = ? AND order_id = ?`), 3, 1, 10)
			if err != nil {
				t.Fatalf("same-target change: %v", err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Errorf("same-target change: %d rows affected, want 1", n)
			}
			if got := w.rowsOf(t, 1, 0); len(got) != 1 || got[0] != [2]int64{12, 3} {
				t.Errorf("ds_1.t_order_0 holds %v, want [[12 3]]", got)
			}
			if _, err := w.db.Exec(upsertExcluded); err != nil {
				t.Fatalf("upsert from excluded: %v", err)
			}
			var status string
			if err := w.direct[1].QueryRow(`SELECT status FROM t_order_0 WHERE order_id = 12 AND user_id = 3`).Scan(&status); err != nil || status != "up" {
				t.Errorf("upsert from excluded: status %q, %v", status, err)
			}
			if strings.Contains(w.snapshot(t), "t_copy") {
				t.Error("a table was created")
			}
		})
	}
}

// A logic table however it is spelled (any case, quoted, schema-qualified)
// is routed to its physical tables or refused: nothing reaches a table of
// the logic table's own name, which the default data source may still hold
// from before sharding.
func TestQualifiedOrQuotedLogicTableNeverHitsUnshardedTable(t *testing.T) {
	for _, b := range covBackends(t, "spelling") {
		t.Run(b.name, func(t *testing.T) {
			w := openCovWorld(t, b)
			// The pre-sharding table, made directly on the default data source.
			if _, err := w.direct[0].Exec(`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(16))`); err != nil {
				t.Fatal(err)
			}
			routed := []string{
				`INSERT INTO T_ORDER (order_id, user_id, status) VALUES (30, 2, 'a')`,
			}
			if b.name != "mariadb" { // a string to MySQL's grammar, refused
				routed = append(routed, `INSERT INTO "T_ORDER" (order_id, user_id, status) VALUES (32, 2, 'b')`)
			}
			refused := []string{
				`SELECT 1; INSERT INTO t_order (order_id, user_id, status) VALUES (40, 2, 'x')`,
				`INSERT INTO t_x (k, v) SELECT 'z', status FROM t_order`,
			}
			switch b.name {
			case "postgres":
				routed = append(routed,
					`INSERT INTO public.t_order (order_id, user_id, status) VALUES (34, 2, 'c')`,
					`INSERT INTO "public"."T_Order" (order_id, user_id, status) VALUES (36, 2, 'd')`)
				refused = append(refused,
					`INSERT INTO U&"t\005forder" (order_id, user_id, status) VALUES (40, 2, 'x')`,
					`INSERT INTO shardkey_cov_spelling_0.public.t_order (order_id, user_id, status) VALUES (40, 2, 'x')`,
					`DO $$ BEGIN INSERT INTO t_order (order_id, user_id, status) VALUES (40, 2, 'x'); END $$`)
			case "sqlite":
				routed = append(routed,
					`INSERT INTO main.t_order (order_id, user_id, status) VALUES (34, 2, 'c')`,
					"INSERT INTO `T_Order` (order_id, user_id, status) VALUES (36, 2, 'd')",
					`INSERT INTO [t_order] (order_id, user_id, status) VALUES (38, 2, 'e')`)
			case "mariadb":
				routed = append(routed,
					"INSERT INTO `T_Order` (order_id, user_id, status) VALUES (34, 2, 'c')")
				refused = append(refused,
					`INSERT INTO "T_ORDER" (order_id, user_id, status) VALUES (40, 2, 'x')`)
			}
			for _, q := range routed {
				if _, err := w.db.Exec(q); err != nil {
					t.Errorf("%s: %v", q, err)
				}
			}
			for _, q := range refused {
				if _, err := w.db.Exec(q); !errors.Is(err, sqlhook.ErrUnsupported) && !errors.Is(err, sqlhook.ErrParse) {
					t.Errorf("%s: %v, want a refusal", q, err)
				}
			}
			if n := count(t, w.direct[0], "t_order"); n != 0 {
				t.Errorf("the unsharded t_order of the default data source holds %d rows", n)
			}
			// Even order_ids and user 2: ds_0.t_order_0 has 20 and each routed row.
			if got, want := len(w.rowsOf(t, 0, 0)), 1+len(routed); got != want {
				t.Errorf("ds_0.t_order_0 holds %d rows, want %d: %v", got, want, w.rowsOf(t, 0, 0))
			}
		})
	}
}
