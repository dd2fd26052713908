package sqlhook_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// mariaRules: t_order over two MariaDB databases by user_id and two tables
// in each by order_id (generated when missing); t_dict broadcast.
const mariaRules = `
dataSources:
  ds_0: {driver: mysql, dsn: %q}
  ds_1: {driver: mysql, dsn: %q}
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
  broadcastTables: [t_dict]
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snow: {type: SNOWFLAKE, props: {worker-id: 7}}
`

type mariaDB struct {
	db     *sql.DB    // through sqlhook
	direct [2]*sql.DB // each data source, bare
	name   [2]string  // each data source's database
}

// openMaria creates two databases, the physical tables in each, and opens
// them as two data sources through sqlhook.
func openMaria(t *testing.T, prefix string) mariaDB {
	t.Helper()
	var m mariaDB
	var dsn [2]string
	for i := range dsn {
		dsn[i] = dbtest.MySQL(t, fmt.Sprintf("%s_%d", prefix, i))
		cfg, err := mysql.ParseDSN(dsn[i])
		if err != nil {
			t.Fatal(err)
		}
		m.name[i] = cfg.DBName
		d, err := sql.Open("mysql", dsn[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		m.direct[i] = d
		for _, q := range []string{
			"CREATE TABLE t_order_0 (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, code INT, note VARCHAR(20))",
			"CREATE TABLE t_order_1 (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, code INT, note VARCHAR(20))",
			"CREATE TABLE t_dict (k VARCHAR(10) PRIMARY KEY, v VARCHAR(10))",
		} {
			if _, err := d.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, mariaRules, dsn[0], dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	if m.db, err = sqlhook.Open(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.db.Close() })
	return m
}

// rows lists "order_id:user_id:code:note" of every physical t_order table,
// as "ds_i.t_order_j=..." in a fixed order.
func (m mariaDB) rows(t *testing.T) []string {
	t.Helper()
	var out []string
	for i, d := range m.direct {
		for _, tbl := range []string{"t_order_0", "t_order_1"} {
			rs, err := d.Query("SELECT order_id, user_id, COALESCE(code, -1), COALESCE(note, 'NULL') FROM " + tbl + " ORDER BY order_id")
			if err != nil {
				t.Fatal(err)
			}
			for rs.Next() {
				var o, u, c int64
				var n string
				if err := rs.Scan(&o, &u, &c, &n); err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("ds_%d.%s=%d:%d:%d:%s", i, tbl, o, u, c, n))
			}
			rs.Close()
		}
	}
	return out
}

func sameRows(t *testing.T, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("physical rows\n got %q\nwant %q", got, want)
	}
}

// 0x28 is the number 40 to MariaDB; x'28' would be the string "(" and
// match nothing. The DELETE must run as written.
func TestMySQLHexLiteralDeleteMatchesOnMariaDB(t *testing.T) {
	m := openMaria(t, "myb_hex")
	if _, err := m.db.Exec("INSERT INTO t_order (order_id, user_id, code, note) VALUES (2, 1, 0x28, x'28'), (3, 0, 41, 'b\\'c')"); err != nil {
		t.Fatal(err)
	}
	sameRows(t, m.rows(t), "ds_0.t_order_1=3:0:41:b'c", "ds_1.t_order_0=2:1:40:(")
	res, err := m.db.Exec("DELETE FROM t_order WHERE user_id = ? AND order_id = ? AND code = 0x28 /* 40 */", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("DELETE ... code = 0x28 affected %d rows, want 1", n)
	}
	sameRows(t, m.rows(t), "ds_0.t_order_1=3:0:41:b'c")
}

// MariaDB has no FOR SHARE; LOCK IN SHARE MODE, FOR UPDATE NOWAIT and
// SKIP LOCKED must reach it as written.
func TestMySQLLockingClausesRunOnMariaDB(t *testing.T) {
	m := openMaria(t, "myb_lock")
	if _, err := m.db.Exec("INSERT INTO t_order (order_id, user_id, note) VALUES (?, ?, ?)", 5, 1, "x"); err != nil {
		t.Fatal(err)
	}
	tx, err := m.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, lock := range []string{"LOCK IN SHARE MODE", "FOR UPDATE", "FOR UPDATE NOWAIT", "FOR UPDATE SKIP LOCKED", "FOR UPDATE WAIT 1"} {
		var note string
		if err := tx.QueryRow("SELECT note FROM t_order WHERE user_id = ? AND order_id = ? "+lock, 1, 5).Scan(&note); err != nil {
			t.Errorf("%s: %v", lock, err)
		} else if note != "x" {
			t.Errorf("%s: note %q", lock, note)
		}
	}
}

// A name qualified by either data source's database is the logic table:
// the row goes to the database its values route to, and is found there.
// Another database's name is refused before anything runs.
func TestMySQLQualifiedNamesRouteToTheirDataSourceOnMariaDB(t *testing.T) {
	m := openMaria(t, "myb_qual")
	db0, db1 := m.name[0], m.name[1]
	// user 1 routes to ds_1 (database db1), order 3 to t_order_1.
	if _, err := m.db.Exec(fmt.Sprintf("INSERT INTO %s.t_order (order_id, user_id, note) VALUES (?, ?, 'q')", db0), 3, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := m.db.Exec(fmt.Sprintf("INSERT INTO `%s`.`t_order` SET order_id = 4, user_id = 0, note = 'p'", db1)); err != nil {
		t.Fatal(err)
	}
	sameRows(t, m.rows(t), "ds_0.t_order_0=4:0:-1:p", "ds_1.t_order_1=3:1:-1:q")
	var note string
	if err := m.db.QueryRow(fmt.Sprintf("SELECT %s.t_order.note FROM %s.t_order WHERE %s.t_order.user_id = 1 AND order_id = 3", db1, db0, db0)).Scan(&note); err != nil || note != "q" {
		t.Fatalf("qualified SELECT: %q, %v", note, err)
	}
	res, err := m.db.Exec(fmt.Sprintf("UPDATE %s.t_order SET note = 'r' WHERE user_id = ? AND order_id = ?", db0), 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("qualified UPDATE affected %d rows", n)
	}
	// A database that is no data source's: refused, nothing written.
	for _, q := range []string{
		"INSERT INTO mysql.t_order (order_id, user_id) VALUES (5, 1)",
		fmt.Sprintf("DELETE FROM %s_x.t_order WHERE user_id = 1 AND order_id = 3", db0),
		fmt.Sprintf("UPDATE t_order SET note = 'z' WHERE %s_x.t_order.user_id = 1 AND order_id = 3", db1),
	} {
		if _, err := m.db.Exec(q); !errors.Is(err, sqlhook.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", q, err)
		}
	}
	sameRows(t, m.rows(t), "ds_0.t_order_0=4:0:-1:p", "ds_1.t_order_1=3:1:-1:r")
}

// A multi-row INSERT split across data sources writes each row's literals
// as written; ON DUPLICATE KEY UPDATE and REPLACE go with their rows; an
// INSERT ... SET that needs a generated key gets it; UPDATE with ORDER BY
// and LIMIT keeps them.
func TestMySQLInsertSplitKeepsLiteralsOnMariaDB(t *testing.T) {
	m := openMaria(t, "myb_split")
	res, err := m.db.Exec("INSERT INTO t_order (order_id, user_id, code, note) VALUES (2, 1, 0x28, x'41'), /* row 2 */ (3, 0, b'101', 'it''s'),\n (4, 1, 7, \"q\\\"t\" -- tail\n)")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3 {
		t.Errorf("rows affected %d", n)
	}
	sameRows(t, m.rows(t), "ds_0.t_order_1=3:0:5:it's", "ds_1.t_order_0=2:1:40:A", "ds_1.t_order_0=4:1:7:q\"t")
	if _, err := m.db.Exec("INSERT INTO t_order (order_id, user_id, note) VALUES (2, 1, 'dup'), (3, 0, 'dup') ON DUPLICATE KEY UPDATE note = CONCAT(note, '+', VALUES(note)), code = 0x10"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.db.Exec("REPLACE INTO t_order (order_id, user_id, note) VALUES (4, 1, 'r')"); err != nil {
		t.Fatal(err)
	}
	sameRows(t, m.rows(t), "ds_0.t_order_1=3:0:16:it's+dup", "ds_1.t_order_0=2:1:16:A+dup", "ds_1.t_order_0=4:1:-1:r")
	if _, err := m.db.Exec("UPDATE t_order SET note = 'last' WHERE user_id = 1 AND order_id IN (2, 4) ORDER BY order_id DESC LIMIT 1"); err != nil {
		t.Fatal(err)
	}
	sameRows(t, m.rows(t), "ds_0.t_order_1=3:0:16:it's+dup", "ds_1.t_order_0=2:1:16:A+dup", "ds_1.t_order_0=4:1:-1:last")
	// INSERT ... SET without the key: the generated key decides the table.
	if _, err := m.db.Exec("INSERT INTO t_order SET user_id = ?, note = 'gen' -- c\n", 0); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := m.direct[0].QueryRow("SELECT order_id FROM (SELECT order_id, note FROM t_order_0 UNION ALL SELECT order_id, note FROM t_order_1) x WHERE note = 'gen'").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if n := count(t, m.direct[0], fmt.Sprintf("t_order_%d WHERE order_id = %d", id%2, id)); n != 1 {
		t.Errorf("generated key %d is not in ds_0.t_order_%d", id, id%2)
	}
}
