package sqlhook_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// An INSERT, REPLACE or INSERT ... SET naming a physical table lands in
// that table on the data source its row routes to (ds_1 for user 1, not
// the default ds_0); a row routing to another table, or an UPDATE of a
// physical table's sharding column, is refused and writes nothing.
func TestMySQLPhysicalTableWriteLandsWhereRowRoutesOnMariaDB(t *testing.T) {
	m := openMaria(t, "mfix_phys")
	for _, q := range []string{
		"INSERT INTO t_order_1 (order_id, user_id, note) VALUES (3, 1, 'a')",
		"REPLACE INTO t_order_1 (order_id, user_id, note) VALUES (5, 1, 'b')",
		"INSERT INTO t_order_0 SET order_id = 4, user_id = 1, note = 'c'",
		"INSERT INTO t_order_0 (order_id, user_id, note) VALUES (2, 0, 'd') ON DUPLICATE KEY UPDATE note = 'e'",
	} {
		if _, err := m.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	want := []string{"ds_0.t_order_0=2:0:-1:d", "ds_1.t_order_0=4:1:-1:c", "ds_1.t_order_1=3:1:-1:a", "ds_1.t_order_1=5:1:-1:b"}
	sameRows(t, m.rows(t), want...)
	for _, q := range []string{
		"INSERT INTO t_order_0 (order_id, user_id, note) VALUES (7, 1, 'x')",
		"INSERT INTO t_order_1 (order_id, user_id, note) VALUES (9, 0, 'x'), (8, 0, 'y')",
		"REPLACE INTO t_order_0 SET order_id = 1, user_id = 0",
	} {
		if _, err := m.db.Exec(q); !errors.Is(err, sqlhook.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", q, err)
		}
	}
	if _, err := m.db.Exec("UPDATE t_order_0 SET user_id = 1 WHERE order_id = 2"); !errors.Is(err, shardconf.ErrShardingKeyChange) {
		t.Errorf("UPDATE of a physical table's sharding column: %v, want ErrShardingKeyChange", err)
	}
	sameRows(t, m.rows(t), want...)
}

// openMariaOne opens t_order sharded by user_id over two tables of one
// MariaDB database, with t_dict broadcast: with one data source, SQL-level
// prepared statements are session state sqlhook lets through.
func openMariaOne(t *testing.T, name string) (db, direct *sql.DB) {
	t.Helper()
	dsn := dbtest.MySQL(t, name)
	direct, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	for _, q := range []string{
		"CREATE TABLE t_order_0 (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)",
		"CREATE TABLE t_order_1 (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)",
		"CREATE TABLE t_dict (k VARCHAR(10) PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO t_dict VALUES ('a', 'b')",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, `
dataSources:
  ds_0: {driver: mysql, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order_${0..1}
      tableStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
  broadcastTables: [t_dict]
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`, dsn))
	if err != nil {
		t.Fatal(err)
	}
	if db, err = sqlhook.Open(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, direct
}

// PREPARE and EXECUTE IMMEDIATE with text naming a logic, broadcast or
// physical table once MariaDB reads its escapes, or text given as hex or a
// variable, are refused before anything runs: t_dict keeps its row and no
// row lands in a physical table unrouted. Text naming none runs.
func TestMySQLPrepareOfHiddenTableRefusedOnMariaDB(t *testing.T) {
	db, direct := openMariaOne(t, "mfix_prep")
	ctx := t.Context()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SET @q = CONCAT('DELETE FROM t_', 'dict')`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`PREPARE s FROM 'DELETE FROM t_\dict'`,
		`PREPARE s FROM 'DELETE FROM ' 't_dict'`,
		`PREPARE s FROM 0x44454c4554452046524f4d20745f64696374`,
		`PREPARE s FROM @q`,
		`EXECUTE IMMEDIATE 'DELETE FROM t_\dict'`,
		`EXECUTE IMMEDIATE 'INSERT INTO t_order_0 VALUES (1, 1)'`,
		`EXECUTE IMMEDIATE @q`,
		`EXECUTE IMMEDIATE CONCAT('DELETE FROM t_', 'dict')`,
	} {
		if _, err := conn.ExecContext(ctx, q); !errors.Is(err, sqlhook.ErrUnsupported) || errors.Is(err, sqlhook.ErrSessionState) {
			t.Errorf("%s: %v, want ErrUnsupported", q, err)
		}
	}
	var n int
	if err := direct.QueryRow("SELECT (SELECT COUNT(*) FROM t_dict) * 10 + (SELECT COUNT(*) FROM t_order_0)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("t_dict rows * 10 + t_order_0 rows = %d, want 10 (nothing run)", n)
	}
	for _, q := range []string{`PREPARE s FROM 'SELECT 1'`, `EXECUTE s`, `EXECUTE IMMEDIATE 'SELECT 2'`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Errorf("%s (names no logic table): %v", q, err)
		}
	}
}
