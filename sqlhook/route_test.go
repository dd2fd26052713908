package sqlhook

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
)

// rulesYAML: t_order sharded over two data sources by user_id and over
// two tables each by order_id (MOD), t_order_item bound to it, t_dict
// broadcast, order_id generated; two SQLite data sources.
const rulesYAML = `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:a"}
  ds_1: {driver: sqlite, dsn: "file:b"}
` + shardingRulesYAML

// shardingRulesYAML is the rules of rulesYAML without data sources.
const shardingRulesYAML = `
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snow}
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
    t_user:
      actualDataNodes: ds_0.t_user_${0..1}
      tableStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
  bindingTables: ["t_order,t_order_item"]
  broadcastTables: [t_dict]
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snow: {type: SNOWFLAKE, props: {worker-id: 3}}
`

func testHook(t testing.TB, d Dialect, opts ...Option) *hook {
	t.Helper()
	return hookFromRules(t, rulesYAML, d, opts...)
}

// hookFromRules compiles a hook over data sources ds_0 and ds_1 (ds_0 the
// default) with a fake clock for the key generators.
func hookFromRules(t testing.TB, rules string, d Dialect, opts ...Option) *hook {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	clock := keygentest.NewClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	r, err := shardconf.NewRouter(cfg, shardconf.WithKeyGenOptions(keygen.WithClock(clock)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := newHook(r, []string{"ds_0", "ds_1"}, "ds_0", d, buildOptions(opts))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func args(vs ...any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(vs))
	for i, v := range vs {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

func show(r *routed) string {
	var b strings.Builder
	for _, u := range r.units {
		fmt.Fprintf(&b, "%s: %s", u.ds, u.sql)
		for _, a := range u.args {
			fmt.Fprintf(&b, " [%v]", a.Value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestRouteCore(t *testing.T) {
	cases := []struct {
		d    Dialect
		sql  string
		args []any
		want string
	}{
		{PostgreSQL, `SELECT id, status FROM t_order WHERE user_id = $1 AND order_id = $2`, []any{int64(1), int64(3)},
			"ds_1: SELECT id, status FROM \"t_order_1\" AS t_order WHERE user_id = $1 AND order_id = $2 [1] [3]\n"},
		{PostgreSQL, `SELECT 't_order' AS t_order, /* t_order */ o.id FROM t_order o WHERE o.user_id = $1 AND o.order_id IN ($2, $3)`, []any{int64(2), int64(4), int64(5)},
			"ds_0: SELECT 't_order' AS t_order, /* t_order */ o.id FROM \"t_order_0\" o WHERE o.user_id = $1 AND o.order_id IN ($2, $3) [2] [4] [5]\n" +
				"ds_0: SELECT 't_order' AS t_order, /* t_order */ o.id FROM \"t_order_1\" o WHERE o.user_id = $1 AND o.order_id IN ($2, $3) [2] [4] [5]\n"},
		{MySQL, "SELECT id FROM t_order WHERE user_id = ? AND order_id = ?", []any{int64(1), int64(3)},
			"ds_1: SELECT id FROM `t_order_1` WHERE user_id = ? AND order_id = ? [1] [3]\n"},
		{SQLite, "SELECT `id` FROM `t_order` WHERE user_id = ? AND order_id = ?", []any{int64(1), int64(3)},
			"ds_1: SELECT \"id\" FROM \"t_order_1\" AS \"t_order\" WHERE user_id = ? AND order_id = ? [1] [3]\n"},
		{PostgreSQL, `INSERT INTO t_order (user_id, status) VALUES ($1, $2), ($3, 'x')`, []any{int64(1), "a", int64(2)},
			"ds_1: INSERT INTO \"t_order_N\" (user_id, status, \"order_id\") VALUES ($1, $2, $3) [1] [a] [KEY0]\n" +
				"ds_0: INSERT INTO \"t_order_N\" (user_id, status, \"order_id\") VALUES ($1, 'x', $2) [2] [KEY1]\n"},
		{MySQL, "INSERT INTO t_order (user_id, order_id, status) VALUES (?, ?, ?)", []any{int64(1), int64(7), "a"},
			"ds_1: INSERT INTO `t_order_1` (user_id, order_id, status) VALUES (?, ?, ?) [1] [7] [a]\n"},
		{PostgreSQL, `SELECT count(*) FROM t_order WHERE user_id = 1`, nil,
			"ds_1: SELECT count(*) FROM \"t_order_0\" AS t_order WHERE user_id = 1\n" +
				"ds_1: SELECT count(*) FROM \"t_order_1\" AS t_order WHERE user_id = 1\n"},
		{PostgreSQL, `SELECT * FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id WHERE o.user_id = $1 AND o.order_id = $2 ORDER BY o.id LIMIT 5`, []any{int64(1), int64(2)},
			"ds_1: SELECT * FROM \"t_order_0\" o JOIN \"t_order_item_0\" i ON o.order_id = i.order_id WHERE o.user_id = $1 AND o.order_id = $2 ORDER BY o.id LIMIT 5 [1] [2]\n"},
		{PostgreSQL, `SELECT * FROM t_order WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, []any{int64(1), int64(10), int64(5)},
			"ds_1: SELECT *, (id) AS shardkey_hidden_0 FROM \"t_order_0\" AS t_order WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET 0 [1] [15]\n" +
				"ds_1: SELECT *, (id) AS shardkey_hidden_0 FROM \"t_order_1\" AS t_order WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET 0 [1] [15]\n"},
		{MySQL, "SELECT * FROM t_order WHERE user_id = ? ORDER BY id LIMIT ?, ?", []any{int64(1), int64(5), int64(10)},
			"ds_1: SELECT *, (id) AS shardkey_hidden_0 FROM `t_order_0` WHERE user_id = ? ORDER BY id LIMIT 0, ? [1] [15]\n" +
				"ds_1: SELECT *, (id) AS shardkey_hidden_0 FROM `t_order_1` WHERE user_id = ? ORDER BY id LIMIT 0, ? [1] [15]\n"},
		{PostgreSQL, `UPDATE t_dict SET v = $1 WHERE k = $2`, []any{"a", "b"},
			"ds_0: UPDATE \"t_dict\" AS t_dict SET v = $1 WHERE k = $2 [a] [b]\n" +
				"ds_1: UPDATE \"t_dict\" AS t_dict SET v = $1 WHERE k = $2 [a] [b]\n"},
		{PostgreSQL, `CREATE INDEX idx_user ON t_user (name)`, nil,
			"ds_0: CREATE INDEX \"idx_user_t_user_0\" ON \"t_user_0\" (name)\n" +
				"ds_0: CREATE INDEX \"idx_user_t_user_1\" ON \"t_user_1\" (name)\n"},
		{PostgreSQL, `SELECT 1`, nil, "ds_0: SELECT 1\n"},
	}
	for _, c := range cases {
		h := testHook(t, c.d, WithScatter())
		r, err := h.route(c.sql, args(c.args...))
		if err != nil {
			t.Errorf("%v %s: %v", c.d, c.sql, err)
			continue
		}
		got := show(r)
		// Generated keys vary; name them.
		n := 0
		for _, u := range r.units {
			for _, a := range u.args {
				if id, ok := a.Value.(int64); ok && id > 1<<22 {
					got = strings.Replace(got, fmt.Sprintf("[%d]", id), fmt.Sprintf("[KEY%d]", n), 1)
					n++
					// The key chooses the table: check, then hide it.
					tbl := fmt.Sprintf("t_order_%d\"", id%2)
					if !strings.Contains(u.sql, tbl) {
						t.Errorf("key %d in %s", id, u.sql)
					}
					got = strings.Replace(got, tbl, "t_order_N\"", 1)
				}
			}
		}
		if got != c.want {
			t.Errorf("%v %s:\n got %s\nwant %s", c.d, c.sql, got, c.want)
		}
	}
}

func TestRouteRefusals(t *testing.T) {
	cases := []struct {
		d    Dialect
		sql  string
		args []any
		want error
	}{
		{PostgreSQL, `SELECT * FROM t_order WHERE status = $1`, []any{"x"}, shardconf.ErrMissingShardingKey},
		{PostgreSQL, `SELECT * FROM t_order WHERE user_id = 1 AND order_id IN (SELECT order_id FROM t_order_item)`, nil, ErrUnsupported},
		{PostgreSQL, `SELECT * FROM t_order o JOIN t_user u ON o.user_id = u.user_id WHERE o.user_id = 1 AND o.order_id = 1`, nil, ErrUnsupported},
		{PostgreSQL, `UPDATE t_order SET user_id = 2 WHERE user_id = 1 AND order_id = 1`, nil, ErrUnsupported},
		{PostgreSQL, `SELECT string_agg(x, ',') FROM t_order WHERE user_id = 1 AND order_id IN (1, 2)`, nil, ErrUnsupported},
		{MySQL, "SELECT * FROM t_order WHERE status = ?", []any{"x"}, shardconf.ErrMissingShardingKey},
		{MySQL, "SELECT * FROM t_order WHERE user_id = 1 UNION SELECT * FROM t_order WHERE user_id = 2", nil, ErrUnsupported},
		{PostgreSQL, `SELEC * FROM t_order`, nil, ErrParse},
	}
	for _, c := range cases {
		h := testHook(t, c.d)
		_, err := h.route(c.sql, args(c.args...))
		if !errors.Is(err, c.want) {
			t.Errorf("%v %s: got %v, want %v", c.d, c.sql, err, c.want)
		}
	}
}

var _ = reflect.TypeOf

func TestRouteRewritesOnlyTableIdentifiers(t *testing.T) {
	cases := []struct {
		d    Dialect
		sql  string
		args []any
		want string
	}{
		// A logic table's name in a literal, a comment, a dollar-quoted string,
		// a column alias and a column name stays; hints survive.
		{PostgreSQL, `/*+ IndexScan(t_order) */ SELECT $$t_order$$, 't_order' t_order, t_order.user_id AS "t_order" -- t_order
FROM t_order WHERE t_order.user_id = 1 AND t_order.order_id = 2`, nil,
			"ds_1: /*+ IndexScan(t_order) */ SELECT $$t_order$$, 't_order' t_order, t_order.user_id AS \"t_order\" -- t_order\nFROM \"t_order_0\" AS t_order WHERE t_order.user_id = 1 AND t_order.order_id = 2\n"},
		{MySQL, "/* lead t_order */ SELECT /*+ MAX_EXECUTION_TIME(1000) */ 't_order' AS `t_order`, t_order.status FROM t_order WHERE t_order.user_id = 1 AND order_id = 2", nil,
			"ds_1: /* lead t_order */ SELECT /*+ MAX_EXECUTION_TIME(1000) */ 't_order' AS `t_order`, `t_order_0`.status FROM `t_order_0` WHERE `t_order_0`.user_id = 1 AND order_id = 2\n"},
		{SQLite, "SELECT 't_order', `t_order`.`id` FROM `t_order` WHERE `user_id` = ? AND [order_id] = ?", []any{int64(3), int64(5)},
			"ds_1: SELECT 't_order', \"t_order\".\"id\" FROM \"t_order_1\" AS \"t_order\" WHERE \"user_id\" = ? AND \"order_id\" = ? [3] [5]\n"},
		// Quoted and schema-qualified names.
		{PostgreSQL, `SELECT * FROM public."t_order" x WHERE x.user_id = 0 AND x.order_id = 1`, nil,
			"ds_0: SELECT * FROM public.\"t_order_1\" x WHERE x.user_id = 0 AND x.order_id = 1\n"},
		// Values never reach the SQL text.
		{PostgreSQL, `SELECT * FROM t_order WHERE status = $1 AND user_id = $2 AND order_id = $3`, []any{"x'; DROP TABLE t_order_0; --", "1", int64(1)},
			"ds_1: SELECT * FROM \"t_order_1\" AS t_order WHERE status = $1 AND user_id = $2 AND order_id = $3 [x'; DROP TABLE t_order_0; --] [1] [1]\n"},
		// OR routes to the union; = ANY($1) spreads the list.
		{PostgreSQL, `SELECT id FROM t_order WHERE (user_id = 0 AND order_id = 0) OR (user_id = 1 AND order_id = 1)`, nil,
			"ds_0: SELECT id FROM \"t_order_0\" AS t_order WHERE (user_id = 0 AND order_id = 0) OR (user_id = 1 AND order_id = 1)\n" +
				"ds_1: SELECT id FROM \"t_order_1\" AS t_order WHERE (user_id = 0 AND order_id = 0) OR (user_id = 1 AND order_id = 1)\n"},
		{PostgreSQL, `SELECT id FROM t_order WHERE user_id = 4 AND order_id = ANY($1)`, []any{[]int64{2, 4}},
			"ds_0: SELECT id FROM \"t_order_0\" AS t_order WHERE user_id = 4 AND order_id = ANY($1) [[2 4]]\n"},
		{MySQL, "SELECT id FROM t_order WHERE user_id BETWEEN 2 AND 2 AND order_id IN (?, ?)", []any{uint32(1), "3"},
			"ds_0: SELECT id FROM `t_order_1` WHERE user_id BETWEEN 2 AND 2 AND order_id IN (?, ?) [1] [3]\n"},
		// Broadcast: reads go to the default data source, writes everywhere.
		{MySQL, "SELECT v FROM t_dict WHERE k = ?", []any{"a"},
			"ds_0: SELECT v FROM `t_dict` WHERE k = ? [a]\n"},
		{SQLite, "INSERT INTO t_dict (k, v) VALUES (?, ?)", []any{"a", "b"},
			"ds_0: INSERT INTO \"t_dict\" (k, v) VALUES (?, ?) [a] [b]\n" +
				"ds_1: INSERT INTO \"t_dict\" (k, v) VALUES (?, ?) [a] [b]\n"},
		// RETURNING and ON CONFLICT on one target; a given key is kept.
		{SQLite, "INSERT INTO `t_order` (`order_id`, `user_id`, `status`) VALUES (?, ?, ?) ON CONFLICT (order_id) DO UPDATE SET status = excluded.status RETURNING `order_id`", []any{int64(9), int64(2), "x"},
			"ds_0: INSERT INTO \"t_order_1\" AS \"t_order\" (\"order_id\", \"user_id\", \"status\") VALUES (?, ?, ?) ON CONFLICT (order_id) DO UPDATE SET status = excluded.status RETURNING \"order_id\" [9] [2] [x]\n"},
		{MySQL, "INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE status = VALUES(status)", []any{int64(9), int64(2), "x"},
			"ds_0: INSERT INTO `t_order_1` (order_id, user_id, status) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE status = VALUES(status) [9] [2] [x]\n"},
		{MySQL, "INSERT INTO t_order SET order_id = ?, user_id = ?", []any{int64(8), int64(3)},
			"ds_1: INSERT INTO `t_order_0` SET order_id = ?, user_id = ? [8] [3]\n"},
		// DDL reaches every physical table.
		{MySQL, "CREATE TABLE t_order_item (order_id BIGINT PRIMARY KEY, user_id BIGINT)", nil,
			"ds_0: CREATE TABLE `t_order_item_0` (order_id BIGINT PRIMARY KEY, user_id BIGINT)\n" +
				"ds_0: CREATE TABLE `t_order_item_1` (order_id BIGINT PRIMARY KEY, user_id BIGINT)\n" +
				"ds_1: CREATE TABLE `t_order_item_0` (order_id BIGINT PRIMARY KEY, user_id BIGINT)\n" +
				"ds_1: CREATE TABLE `t_order_item_1` (order_id BIGINT PRIMARY KEY, user_id BIGINT)\n"},
		{PostgreSQL, `DROP TABLE IF EXISTS t_user`, nil,
			"ds_0: DROP TABLE IF EXISTS \"t_user_0\"\nds_0: DROP TABLE IF EXISTS \"t_user_1\"\n"},
		// Contradictions still answer with the right shape.
		{PostgreSQL, `SELECT id FROM t_user WHERE user_id = 1 AND user_id = 2`, nil,
			"ds_0: SELECT id FROM \"t_user_0\" AS t_user WHERE user_id = 1 AND user_id = 2\n"},
	}
	for _, c := range cases {
		h := testHook(t, c.d)
		r, err := h.route(c.sql, args(c.args...))
		if err != nil {
			t.Errorf("%v %s: %v", c.d, c.sql, err)
			continue
		}
		if got := show(r); got != c.want {
			t.Errorf("%v %s:\n got %s\nwant %s", c.d, c.sql, got, c.want)
		}
	}
}

func TestRouteFillsNullKeyArguments(t *testing.T) {
	h := testHook(t, PostgreSQL)
	r, err := h.route(`INSERT INTO t_order (order_id, user_id) VALUES ($1, $2), (NULL, $3), (DEFAULT, 0)`, args(nil, int64(1), int64(1)))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	rows := 0
	for _, u := range r.units {
		rows += strings.Count(u.sql, "(") - 1
		for _, a := range u.args {
			if a.Value == nil {
				t.Errorf("a NULL argument reached %s", u.sql)
			}
		}
		if strings.Contains(u.sql, "NULL") || strings.Contains(u.sql, "DEFAULT") {
			t.Errorf("key literal kept: %s", u.sql)
		}
		// The first placeholder of each row is its key.
		for _, a := range u.args {
			if id, ok := a.Value.(int64); ok && id > 1<<22 {
				if seen[id] {
					t.Errorf("key %d issued twice", id)
				}
				seen[id] = true
				if !strings.Contains(u.sql, fmt.Sprintf("t_order_%d\"", id%2)) {
					t.Errorf("key %d routed to %s", id, u.sql)
				}
			}
		}
	}
	if len(seen) != 3 || rows != 3 {
		t.Errorf("keys %v rows %d:\n%s", seen, rows, show(r))
	}
}
