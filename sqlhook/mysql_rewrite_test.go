package sqlhook

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// mysqlRulesYAML: the rules of route_test.go on two MySQL data sources
// whose DSNs name databases app_0 and app_1.
const mysqlRulesYAML = `
dataSources:
  ds_0: {driver: mysql, dsn: "root@tcp(127.0.0.1:3306)/app_0?parseTime=true"}
  ds_1: {driver: mysql, dsn: "root:p%2Fw@tcp(127.0.0.1:3306)/app_1"}
` + shardingRulesYAML

func mysqlTestHook(t testing.TB, rules string, opts ...Option) *hook {
	t.Helper()
	return hookFromRules(t, rules, MySQL, opts...)
}

type mysqlCase struct {
	sql  string
	args []any
	want string // per unit "ds: sql [args]" lines, as show prints them
}

// generatedKey is a SNOWFLAKE key in show's output.
var (
	generatedKey  = regexp.MustCompile(`\[\d{15,}\]`)
	physicalIndex = regexp.MustCompile("(`t_order_)[01]`")
)

func runMySQLCases(t *testing.T, h *hook, cases []mysqlCase) {
	t.Helper()
	for _, c := range cases {
		r, err := h.route(c.sql, args(c.args...))
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		got := show(r)
		if generatedKey.MatchString(got) {
			// The table of a generated key depends on the key.
			got = physicalIndex.ReplaceAllString(generatedKey.ReplaceAllString(got, "[KEY]"), "${1}N`")
		}
		if got != c.want {
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

// mysqlRefused checks that each statement is refused with want before
// anything is routed.
func mysqlRefused(t *testing.T, h *hook, want error, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		r, err := h.route(q, args(int64(1), int64(2), int64(3)))
		if !errors.Is(err, want) {
			got := ""
			if r != nil {
				got = show(r)
			}
			t.Errorf("%s: %v %s, want %v", q, err, got, want)
		}
	}
}

// INSERT rows are cut from the statement's own bytes: a split INSERT
// writes each target its rows as written, a row whose key is generated
// gets a placeholder for it, and what follows the rows (ON DUPLICATE KEY
// UPDATE) goes with them. A single row needing no key is sent as written,
// INSERT ... SET included.
func TestMySQLInsertRowsKeepTheirBytes(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "INSERT INTO t_order (user_id, order_id, note) VALUES (1, 2, 'a'),(0, 3, x'28'),\n (1, 5, 0x28)",
			want: "ds_1: INSERT INTO `t_order_0` (user_id, order_id, note) VALUES (1, 2, 'a')\n" +
				"ds_0: INSERT INTO `t_order_1` (user_id, order_id, note) VALUES (0, 3, x'28')\n" +
				"ds_1: INSERT INTO `t_order_1` (user_id, order_id, note) VALUES (1, 5, 0x28)\n"},
		{sql: "INSERT INTO t_order (user_id, order_id, note) VALUES (1, 2, 'a'),(1, 4, b'1')",
			want: "ds_1: INSERT INTO `t_order_0` (user_id, order_id, note) VALUES (1, 2, 'a'), (1, 4, b'1')\n"},
		{sql: "INSERT INTO t_order (user_id, note) VALUES (?, CONCAT('x', ?, \"t_order\")), (?, /* c */ 'b')", args: []any{int64(1), "a", int64(2)},
			want: "ds_1: INSERT INTO `t_order_N` (user_id, note, `order_id`) VALUES (?, CONCAT('x', ?, \"t_order\"), ?) [1] [a] [KEY]\n" +
				"ds_0: INSERT INTO `t_order_N` (user_id, note, `order_id`) VALUES (?, /* c */ 'b', ?) [2] [KEY]\n"},
		{sql: "INSERT INTO t_order (user_id, order_id, note) VALUES (1, 2, 'x' -- one\n),\n(0, 3, # two\n'y')",
			want: "ds_1: INSERT INTO `t_order_0` (user_id, order_id, note) VALUES (1, 2, 'x' -- one\n)\n" +
				"ds_0: INSERT INTO `t_order_1` (user_id, order_id, note) VALUES (0, 3, # two\n'y')\n"},
		{sql: "INSERT INTO t_order SET user_id = 1, note = 'a' -- c\n",
			want: "ds_1: INSERT INTO `t_order_N` (user_id, note, `order_id`) VALUES (1, 'a' -- c\n, ?) [KEY]\n"},
		{sql: "INSERT /* c */ IGNORE INTO `t_order` (user_id, order_id, note) VALUES (1, NULL, 'a') ON DUPLICATE KEY UPDATE note = 'z', t_order.code = VALUES(code) + 0x10",
			want: "ds_1: INSERT /* c */ IGNORE INTO `t_order_N` (user_id, order_id, note) VALUES (1, ?, 'a') ON DUPLICATE KEY UPDATE note = 'z', `t_order_N`.code = VALUES(code) + 0x10 [KEY]\n"},
		{sql: "INSERT INTO t_order (user_id, order_id, note) VALUE (?, ?, 'it''s') ON DUPLICATE KEY UPDATE note = ?;", args: []any{int64(0), int64(2), "n"},
			want: "ds_0: INSERT INTO `t_order_0` (user_id, order_id, note) VALUE (?, ?, 'it''s') ON DUPLICATE KEY UPDATE note = ?; [0] [2] [n]\n"},
		{sql: "INSERT INTO t_order SET user_id = ?, order_id = 3, note = x'41' ON DUPLICATE KEY UPDATE note = 'b'", args: []any{int64(1)},
			want: "ds_1: INSERT INTO `t_order_1` SET user_id = ?, order_id = 3, note = x'41' ON DUPLICATE KEY UPDATE note = 'b' [1]\n"},
		{sql: "INSERT INTO t_order SET user_id = ?, `note` = 'a' ON DUPLICATE KEY UPDATE note = ?", args: []any{int64(1), "b"},
			want: "ds_1: INSERT INTO `t_order_N` (user_id, `note`, `order_id`) VALUES (?, 'a', ?) ON DUPLICATE KEY UPDATE note = ? [1] [KEY] [b]\n"},
		{sql: "INSERT INTO t_order SET user_id = 0, order_id = DEFAULT, note = 'a'",
			want: "ds_0: INSERT INTO `t_order_N` (user_id, order_id, note) VALUES (0, ?, 'a') [KEY]\n"},
		{sql: "REPLACE INTO t_order (user_id, order_id) VALUES (1, 2)",
			want: "ds_1: REPLACE INTO `t_order_0` (user_id, order_id) VALUES (1, 2)\n"},
		{sql: "REPLACE t_order SET user_id = 1, order_id = 3",
			want: "ds_1: REPLACE `t_order_1` SET user_id = 1, order_id = 3\n"},
		{sql: "INSERT INTO t_dict (k, v) VALUES ('a', 0x28)",
			want: "ds_0: INSERT INTO `t_dict` (k, v) VALUES ('a', 0x28)\nds_1: INSERT INTO `t_dict` (k, v) VALUES ('a', 0x28)\n"},
	})
	mysqlRefused(t, h, ErrUnsupported,
		"INSERT INTO t_order (user_id, order_id) SELECT user_id, order_id FROM t_user",
		"INSERT INTO t_order VALUES (1, 2)",
		"INSERT INTO t_order (user_id, order_id) VALUES (1, 2) ON DUPLICATE KEY UPDATE user_id = 3",
	)
}

// UPDATE and DELETE keep ORDER BY and LIMIT as written on one target;
// across several they are refused.
func TestMySQLUpdateDeleteKeepOrderByAndLimit(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "UPDATE LOW_PRIORITY t_order SET note = 'x', code = 0x28 WHERE user_id = ? AND order_id = ? ORDER BY id DESC LIMIT 1", args: []any{int64(1), int64(2)},
			want: "ds_1: UPDATE LOW_PRIORITY `t_order_0` SET note = 'x', code = 0x28 WHERE user_id = ? AND order_id = ? ORDER BY id DESC LIMIT 1 [1] [2]\n"},
		{sql: "DELETE QUICK FROM t_order WHERE user_id = 1 AND order_id = 3 ORDER BY id LIMIT ?", args: []any{int64(4)},
			want: "ds_1: DELETE QUICK FROM `t_order_1` WHERE user_id = 1 AND order_id = 3 ORDER BY id LIMIT ? [4]\n"},
	})
	hs := mysqlTestHook(t, mysqlRulesYAML, WithScatter())
	mysqlRefused(t, hs, ErrUnsupported,
		"UPDATE t_order SET note = 'x' WHERE user_id = 1 ORDER BY id LIMIT 1",
		"DELETE FROM t_order WHERE user_id = 1 LIMIT 1")
}

// An UPDATE or upsert that moves a row's sharding value to another target
// is refused with shardconf.ErrShardingKeyChange; a value that keeps the
// row where it is runs.
func TestMySQLUpdateRefusesShardingKeyChange(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "UPDATE t_order SET user_id = 5, note = 'x' WHERE user_id = 1 AND order_id = 2",
			want: "ds_1: UPDATE `t_order_0` SET user_id = 5, note = 'x' WHERE user_id = 1 AND order_id = 2\n"},
		{sql: "UPDATE t_order o SET o.user_id = o.user_id, order_id = ? WHERE user_id = 1 AND order_id = 2", args: []any{int64(4)},
			want: "ds_1: UPDATE `t_order_0` o SET o.user_id = o.user_id, order_id = ? WHERE user_id = 1 AND order_id = 2 [4]\n"},
		{sql: "INSERT INTO t_order (user_id, order_id) VALUES (1, 2) ON DUPLICATE KEY UPDATE user_id = VALUES(user_id), order_id = VALUES(order_id), note = 'u'",
			want: "ds_1: INSERT INTO `t_order_0` (user_id, order_id) VALUES (1, 2) ON DUPLICATE KEY UPDATE user_id = VALUES(user_id), order_id = VALUES(order_id), note = 'u'\n"},
		{sql: "INSERT INTO t_order (user_id, order_id) VALUES (1, 2) ON DUPLICATE KEY UPDATE user_id = user_id",
			want: "ds_1: INSERT INTO `t_order_0` (user_id, order_id) VALUES (1, 2) ON DUPLICATE KEY UPDATE user_id = user_id\n"},
	})
	mysqlRefused(t, h, shardconf.ErrShardingKeyChange,
		"UPDATE t_order SET user_id = 4 WHERE user_id = 1 AND order_id = 2",
		"UPDATE t_order SET order_id = ? WHERE user_id = 1 AND order_id = 2", // 1: the other table
		"UPDATE t_order SET user_id = user_id + 2 WHERE user_id = 1 AND order_id = 2",
		"UPDATE t_order JOIN t_order_item i ON 1 SET i.user_id = 3 WHERE t_order.user_id = 1 AND t_order.order_id = 2",
		"INSERT INTO t_order (user_id, order_id) VALUES (1, 2) ON DUPLICATE KEY UPDATE user_id = 3",
		"INSERT INTO t_order (user_id, order_id) VALUES (1, 2) ON DUPLICATE KEY UPDATE user_id = VALUES(user_id)",
	)
}

// Multi-table UPDATE of binding tables takes same-index tables, qualifiers
// included; multi-table DELETE is refused.
func TestMySQLMultiTableWrites(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "UPDATE t_order o JOIN t_order_item i ON o.order_id = i.order_id SET i.note = 'x' WHERE o.user_id = 1 AND o.order_id = 2",
			want: "ds_1: UPDATE `t_order_0` o JOIN `t_order_item_0` i ON o.order_id = i.order_id SET i.note = 'x' WHERE o.user_id = 1 AND o.order_id = 2\n"},
		{sql: "UPDATE t_order, `t_order_item` SET t_order_item.note = 'x' WHERE t_order.order_id = `t_order_item`.order_id AND t_order.user_id = 0 AND t_order.order_id = 3",
			want: "ds_0: UPDATE `t_order_1`, `t_order_item_1` SET `t_order_item_1`.note = 'x' WHERE `t_order_1`.order_id = `t_order_item_1`.order_id AND `t_order_1`.user_id = 0 AND `t_order_1`.order_id = 3\n"},
	})
	mysqlRefused(t, h, ErrUnsupported,
		"DELETE o FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id WHERE o.user_id = 1 AND o.order_id = 2",
		"DELETE FROM t_order USING t_order JOIN t_user WHERE t_order.user_id = 1",
		"UPDATE t_order JOIN t_dict ON 1 SET t_dict.v = 'x' WHERE t_order.user_id = 1 AND t_order.order_id = 2",
		"UPDATE t_order JOIN t_user ON 1 SET note = 'x' WHERE t_order.user_id = 1 AND t_order.order_id = 2",
	)
}

// A logic table qualified by the database of a data source holding it (or
// of the default data source) is that logic table: the qualifier is
// dropped (in table references and column qualifiers), so each target's
// connection finds the physical table in its own database. Any other
// database is refused, and so is every qualifier when the data sources'
// databases are unknown.
func TestMySQLQualifiedNamesAreResolvedAgainstDataSources(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "SELECT * FROM app_0.t_order WHERE user_id = 1 AND order_id = 3",
			want: "ds_1: SELECT * FROM `t_order_1` WHERE user_id = 1 AND order_id = 3\n"},
		{sql: "SELECT app_0.t_order.note, t_order.*, `app_1`.`T_ORDER`.id FROM `app_1` . `T_ORDER` WHERE app_0.t_order.user_id = 1 AND order_id = 3",
			want: "ds_1: SELECT `t_order_1`.note, `t_order_1`.*, `t_order_1`.id FROM `t_order_1` WHERE `t_order_1`.user_id = 1 AND order_id = 3\n"},
		{sql: "INSERT INTO app_0.t_order (app_0.t_order.user_id, order_id) VALUES (1, 2), (0, 2)",
			want: "ds_1: INSERT INTO `t_order_0` (`t_order_0`.user_id, order_id) VALUES (1, 2)\nds_0: INSERT INTO `t_order_0` (`t_order_0`.user_id, order_id) VALUES (0, 2)\n"},
		{sql: "UPDATE app_1.t_order o SET o.note = 'x' WHERE o.user_id = 0 AND o.order_id = 2",
			want: "ds_0: UPDATE `t_order_0` o SET o.note = 'x' WHERE o.user_id = 0 AND o.order_id = 2\n"},
		{sql: "DELETE FROM app_0.t_dict WHERE k = 'a'",
			want: "ds_0: DELETE FROM `t_dict` WHERE k = 'a'\nds_1: DELETE FROM `t_dict` WHERE k = 'a'\n"},
		{sql: "SELECT * FROM t_order JOIN other.t_x ON 1 WHERE user_id = 1 AND order_id = 2",
			want: "ds_1: SELECT * FROM `t_order_0` JOIN other.t_x ON 1 WHERE user_id = 1 AND order_id = 2\n"},
		{sql: "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 FOR UPDATE OF t_order",
			want: "ds_1: SELECT * FROM `t_order_0` WHERE user_id = 1 AND order_id = 2 FOR UPDATE OF `t_order_0`\n"},
		{sql: "SELECT * FROM app_0.t_user WHERE user_id = 1",
			want: "ds_0: SELECT * FROM `t_user_1` WHERE user_id = 1\n"},
	})
	mysqlRefused(t, h, ErrUnsupported,
		"SELECT * FROM other.t_order WHERE user_id = 1 AND order_id = 3",
		"SELECT * FROM APP_0.t_order WHERE user_id = 1 AND order_id = 3", // another database where names are case-sensitive
		"INSERT INTO app_2.t_order (user_id, order_id) VALUES (1, 2)",
		"SELECT other.t_order.note FROM t_order WHERE user_id = 1 AND order_id = 3",
		"SELECT other.t_order.* FROM t_order WHERE user_id = 1 AND order_id = 3",
		"UPDATE t_order SET note = 'x' WHERE other.t_order.user_id = 1 AND order_id = 3",
		"DROP TABLE other.t_user",
		// t_user is only in ds_0: app_1 may hold an unrelated t_user.
		"SELECT * FROM app_1.t_user WHERE user_id = 1",
	)
	unknown := testHook(t, MySQL) // its data sources are SQLite files
	mysqlRefused(t, unknown, ErrUnsupported, "SELECT * FROM app_0.t_order WHERE user_id = 1 AND order_id = 3")
}

func TestMySQLDSNDatabase(t *testing.T) {
	for dsn, want := range map[string]string{
		"root@tcp(127.0.0.1:3306)/app_0?parseTime=true": "app_0",
		"u:p/w@unix(/tmp/my.sock)/app%2Dx":              "app-x",
		"/app":                                          "app",
		"root@tcp(127.0.0.1:3306)/":                     "",
		"root@tcp(127.0.0.1:3306)/?loc=UTC":             "",
		"nothing":                                       "",
	} {
		got, ok := ir.MySQLDSNDatabase(dsn)
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", dsn, got, ok, want)
		}
	}
}

// Only identifiers the grammar reads as table references or as qualifiers
// of their columns are renamed: the same name as a column, an alias, a
// variable, a function, a string or in a comment stays, quoted or not, in
// any case.
func TestMySQLNamesOutsideTablePositionsStay(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "SELECT t_order, `t_order` AS t_order_item, 't_order' FROM t_order t_x WHERE t_x.user_id = 1 AND t_x.order_id = 2 AND t_order() AND @t_order AND note = \"t_order\"",
			want: "ds_1: SELECT t_order, `t_order` AS t_order_item, 't_order' FROM `t_order_0` t_x WHERE t_x.user_id = 1 AND t_x.order_id = 2 AND t_order() AND @t_order AND note = \"t_order\"\n"},
		{sql: "select * from T_ORDER where USER_ID = 1 and ORDER_ID = 2 and T_Order.note = 'x'",
			want: "ds_1: select * from `t_order_0` where USER_ID = 1 and ORDER_ID = 2 and `t_order_0`.note = 'x'\n"},
		{sql: "SELECT `T_Order`.`user_id` FROM `T_Order` WHERE `user_id` = ? AND `order_id` = ? AND `note` = '?' /* ? */ -- ?\n", args: []any{int64(0), int64(3)},
			want: "ds_0: SELECT `t_order_1`.`user_id` FROM `t_order_1` WHERE `user_id` = ? AND `order_id` = ? AND `note` = '?' /* ? */ -- ?\n [0] [3]\n"},
	})
	// A logic table named like a keyword: where the name is the keyword,
	// it stays.
	hd := mysqlTestHook(t, strings.Replace(mysqlRulesYAML, "    t_user:",
		"    day:\n      actualDataNodes: ds_0.day_${0..1}\n      tableStrategy:\n        standard: {shardingColumn: id, shardingAlgorithmName: mod2}\n    t_user:", 1))
	runMySQLCases(t, hd, []mysqlCase{
		{sql: "SELECT day.id FROM day WHERE day.id = 1 AND t > NOW() - INTERVAL 1 DAY AND DAY(t) = 2",
			want: "ds_0: SELECT `day_1`.id FROM `day_1` WHERE `day_1`.id = 1 AND t > NOW() - INTERVAL 1 DAY AND DAY(t) = 2\n"},
	})
}

// Executable comments are code to MySQL or MariaDB by the server's version
// (and /*M! */ to MariaDB only), while TiDB's grammar reads every /*! */
// and no /*M! */: what is routed and what runs could differ, so a
// statement on a logic table with one is refused. A logic table's name
// inside one would be run unrenamed. In a string, the same bytes are text.
func TestMySQLRefusesExecutableComments(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	mysqlRefused(t, h, ErrUnsupported,
		"SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 /*!50000 AND note = 'x' */",
		"SELECT /*! SQL_NO_CACHE */ * FROM t_order WHERE user_id = 1 AND order_id = 2",
		"SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 /*M!100000 AND note = 'x' */",
		"SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 /*T![clustered_index] AND 1 */",
		"SELECT * FROM t_user /*! JOIN t_order ON 1 */ WHERE user_id = 1",
		"DELETE FROM t_dict /*!99999 WHERE k = 'a' */",
	)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "SELECT '/*!50000 x */' FROM t_order WHERE user_id = 1 AND order_id = 2 -- /*! */",
			want: "ds_1: SELECT '/*!50000 x */' FROM `t_order_0` WHERE user_id = 1 AND order_id = 2 -- /*! */\n"},
	})
	// A statement that names no logic table is not parsed: it runs as is.
	runMySQLCases(t, h, []mysqlCase{{sql: "SELECT /*!40001 SQL_NO_CACHE */ 1", want: "ds_0: SELECT /*!40001 SQL_NO_CACHE */ 1\n"}})
}

// SQL handed to PREPARE, directly or through a variable, would run
// unrewritten on one data source.
func TestMySQLRefusesTextForPrepareNamingLogicTables(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	mysqlRefused(t, h, ErrUnsupported,
		"PREPARE s FROM 'DELETE FROM t_dict'",
		"SET @q = 'DELETE FROM `t_dict`'",
		"SELECT 1; DROP TABLE IF EXISTS t_dict",
	)
	runMySQLCases(t, h, []mysqlCase{{sql: "SET @q = 't_dicts'", want: "ds_0: SET @q = 't_dicts'\n"}})
}

// LIMIT values are holes: across several targets each gets LIMIT
// limit+offset from offset 0 and the merge applies the rest; on one target
// they stay as written.
func TestMySQLLimitAcrossTargets(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML, WithScatter())
	runMySQLCases(t, h, []mysqlCase{
		{sql: "SELECT * FROM t_order WHERE user_id = 1 ORDER BY order_id LIMIT 5 OFFSET 2 FOR UPDATE",
			want: "ds_1: SELECT *, (order_id) AS shardkey_hidden_0 FROM `t_order_0` WHERE user_id = 1 ORDER BY order_id LIMIT ? OFFSET 0 FOR UPDATE [7]\n" +
				"ds_1: SELECT *, (order_id) AS shardkey_hidden_0 FROM `t_order_1` WHERE user_id = 1 ORDER BY order_id LIMIT ? OFFSET 0 FOR UPDATE [7]\n"},
		{sql: "SELECT * FROM t_order WHERE user_id = ? ORDER BY order_id LIMIT 2 , ? LOCK IN SHARE MODE", args: []any{int64(0), int64(3)},
			want: "ds_0: SELECT *, (order_id) AS shardkey_hidden_0 FROM `t_order_0` WHERE user_id = ? ORDER BY order_id LIMIT 0 , ? LOCK IN SHARE MODE [0] [5]\n" +
				"ds_0: SELECT *, (order_id) AS shardkey_hidden_0 FROM `t_order_1` WHERE user_id = ? ORDER BY order_id LIMIT 0 , ? LOCK IN SHARE MODE [0] [5]\n"},
		{sql: "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 LIMIT ? OFFSET ?", args: []any{int64(3), int64(4)},
			want: "ds_1: SELECT * FROM `t_order_0` WHERE user_id = 1 AND order_id = 2 LIMIT ? OFFSET ? [3] [4]\n"},
		{sql: "SELECT id FROM t_order WHERE user_id = 1 AND order_id IN (SELECT 1 FROM dual LIMIT 1) LIMIT 3",
			want: "ds_1: SELECT id FROM `t_order_0` WHERE user_id = 1 AND order_id IN (SELECT 1 FROM dual LIMIT 1) LIMIT ? [3]\n" +
				"ds_1: SELECT id FROM `t_order_1` WHERE user_id = 1 AND order_id IN (SELECT 1 FROM dual LIMIT 1) LIMIT ? [3]\n"},
	})
	mysqlRefused(t, h, ErrUnsupported, "SELECT * FROM t_order WHERE user_id = 1 INTO OUTFILE '/tmp/x'")
}

// A logic table the compiler does not route (inside a subquery, a CTE, a
// UNION, a view, a procedure, or in a statement kind it does not know) is
// refused, never sent unrenamed to the default data source.
func TestMySQLRefusesLogicTablesItDoesNotRoute(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	mysqlRefused(t, h, ErrUnsupported,
		"SELECT * FROM t_x WHERE id IN (SELECT order_id FROM t_order WHERE user_id = 1)",
		"SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 UNION SELECT * FROM t_order WHERE user_id = 1 AND order_id = 3",
		"WITH c AS (SELECT * FROM t_order) SELECT * FROM c",
		"CREATE VIEW v AS SELECT * FROM t_order",
		"CREATE TABLE t_new AS SELECT * FROM t_order",
		"CREATE TABLE t_new LIKE t_order",
		"CREATE PROCEDURE p() BEGIN DELETE FROM t_dict; END",
		"DO (SELECT count(*) FROM t_dict)",
		"EXPLAIN SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2",
		"DESCRIBE t_order",
		"SHOW CREATE TABLE t_order",
		"LOCK TABLES t_order WRITE",
		"RENAME TABLE t_order TO t_x",
		"ALTER TABLE t_order RENAME TO t_x",
		"LOAD DATA INFILE '/tmp/x' INTO TABLE t_order",
		"TABLE t_order",
		"DROP TABLE t_order, t_x",
		"INSERT INTO t_x SELECT * FROM t_dict",
		"UPDATE t_x SET v = (SELECT max(v) FROM t_dict)",
		"SELECT * FROM t_order, t_order WHERE user_id = 1",
		"SELECT * FROM t_order o JOIN t_user u ON o.user_id = u.user_id WHERE o.user_id = 1",
		"SELECT * FROM t_order JOIN t_x AS t_order ON 1 WHERE user_id = 1 AND order_id = 2",
		"SELECT 1; SELECT * FROM t_order",
	)
}

// DDL on a logic table runs on every physical table as written; renaming
// or dropping a sharding column is refused (the rules shard by it).
func TestMySQLDDLRunsOnEveryPhysicalTable(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "ALTER TABLE app_0.t_user ADD COLUMN note VARCHAR(10) DEFAULT 't_user' COMMENT 'x\\'y', RENAME COLUMN a TO b",
			want: "ds_0: ALTER TABLE `t_user_0` ADD COLUMN note VARCHAR(10) DEFAULT 't_user' COMMENT 'x\\'y', RENAME COLUMN a TO b\n" +
				"ds_0: ALTER TABLE `t_user_1` ADD COLUMN note VARCHAR(10) DEFAULT 't_user' COMMENT 'x\\'y', RENAME COLUMN a TO b\n"},
		{sql: "CREATE TABLE IF NOT EXISTS `t_user` (id BIGINT PRIMARY KEY, user_id BIGINT, KEY t_user (user_id)) ENGINE=InnoDB /* t_user */",
			want: "ds_0: CREATE TABLE IF NOT EXISTS `t_user_0` (id BIGINT PRIMARY KEY, user_id BIGINT, KEY t_user (user_id)) ENGINE=InnoDB /* t_user */\n" +
				"ds_0: CREATE TABLE IF NOT EXISTS `t_user_1` (id BIGINT PRIMARY KEY, user_id BIGINT, KEY t_user (user_id)) ENGINE=InnoDB /* t_user */\n"},
	})
	mysqlRefused(t, h, ErrUnsupported,
		"ALTER TABLE t_user RENAME COLUMN user_id TO uid",
		"ALTER TABLE t_user CHANGE COLUMN user_id uid BIGINT",
		"ALTER TABLE t_user DROP COLUMN user_id",
		"ALTER TABLE t_order ADD COLUMN x INT, DROP COLUMN order_id",
	)
	runMySQLCases(t, h, []mysqlCase{
		{sql: "ALTER TABLE t_user CHANGE user_id user_id BIGINT NOT NULL",
			want: "ds_0: ALTER TABLE `t_user_0` CHANGE user_id user_id BIGINT NOT NULL\nds_0: ALTER TABLE `t_user_1` CHANGE user_id user_id BIGINT NOT NULL\n"},
	})
}
