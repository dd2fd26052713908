package sqlhook

import (
	_ "errors"
	_ "strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
)

// mysqlRulesYAML: the rules of route_test.go on two MySQL data sources
// whose DSNs name databases app_0 and app_1.
const mysqlRulesYAML = `
dataSources:
  ds_0: {driver: mysql, dsn: "root@tcp(127.0.0.1:3306)/app_0?parseTime=true"}
  ds_1: {driver: mysql, dsn: "root:p%2Fw@tcp(127.0.0.1:3306)/app_1"}
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

func mysqlTestHook(t testing.TB, rules string, opts ...Option) *hook {
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
	h, err := newHook(r, []string{"ds_0", "ds_1"}, "ds_0", MySQL, buildOptions(opts))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type mysqlCase struct {
	sql  string
	args []any
	want string // per unit "ds: sql [args]" lines, as show prints them
}

func runMySQLCases(t *testing.T, h *hook, cases []mysqlCase) {
	t.Helper()
	for _, c := range cases {
		r, err := h.route(c.sql, args(c.args...))
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if got := show(r); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, got, c.want)
		}
	}
}

// Every byte outside the rewritten table names and placeholders reaches
// the database as written: literals of every kind (0x28 is a number in
// MySQL, x'28' a string), hints, comments and locking clauses.
func TestMySQLRewriteKeepsLiteralsHintsCommentsAndLocks(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	const where = " WHERE user_id = 1 AND order_id = 2"
	var cases []mysqlCase
	for _, tail := range []string{
		" AND note = 0x28",
		" AND note = x'28' AND n2 = X'2829' AND b = b'0101' AND b2 = 0b11 AND b3 = B'1'",
		` AND s = 'it''s \'q\' t_order' AND d = "say ""t_order"" \\" AND n = N'x' AND c = _utf8mb4'é' COLLATE utf8mb4_bin`,
		" AND f = 1.5e3 AND g = .5 AND h = -7 AND i IS NOT NULL AND j = TRUE AND k = DATE '2020-01-02' AND l = TIMESTAMP '2020-01-02 03:04:05'",
		" AND t = CURRENT_DATE - INTERVAL 1 DAY",
		" FOR UPDATE",
		" LOCK IN SHARE MODE",
		" FOR SHARE",
		" FOR UPDATE NOWAIT",
		" FOR SHARE SKIP LOCKED",
		" FOR UPDATE WAIT 5",
		" -- trailing t_order\n",
		" # hash t_order",
		" /* t_order */ ",
	} {
		cases = append(cases, mysqlCase{sql: "SELECT id FROM t_order" + where + tail,
			want: "ds_1: SELECT id FROM `t_order_0`" + where + tail + "\n"})
	}
	cases = append(cases,
		mysqlCase{sql: "/* lead t_order */ SELECT /*+ MAX_EXECUTION_TIME(1000) INDEX(t_order idx_user) */ 't_order' AS `t_order`, t_order.status FROM\n\tt_order -- c\n WHERE t_order.user_id = 1 AND order_id = 2",
			want: "ds_1: /* lead t_order */ SELECT /*+ MAX_EXECUTION_TIME(1000) INDEX(t_order idx_user) */ 't_order' AS `t_order`, `t_order_0`.status FROM\n\t`t_order_0` -- c\n WHERE `t_order_0`.user_id = 1 AND order_id = 2\n"},
		mysqlCase{sql: "SELECT SQL_NO_CACHE HIGH_PRIORITY id FROM t_order FORCE INDEX (idx) WHERE user_id = ? AND order_id = ?", args: []any{int64(0), int64(3)},
			want: "ds_0: SELECT SQL_NO_CACHE HIGH_PRIORITY id FROM `t_order_1` FORCE INDEX (idx) WHERE user_id = ? AND order_id = ? [0] [3]\n"},
		mysqlCase{sql: "DELETE FROM t_order WHERE user_id = ? AND order_id = ? AND note = 0x28", args: []any{int64(1), int64(2)},
			want: "ds_1: DELETE FROM `t_order_0` WHERE user_id = ? AND order_id = ? AND note = 0x28 [1] [2]\n"},
	)
	runMySQLCases(t, h, cases)
}
