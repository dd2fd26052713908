package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
	_ "github.com/shardkey/shardkey/sqlhook/sqlite" // registers sqlhook's SQLite compiler
)

// A table routed by hint (ShardingSphere's hint: strategy and HINT_INLINE)
// is placed by the values of shardconf.WithHint in the context of each
// statement: the SQL holds nothing that routes it, and without a hint the
// statement is refused before it runs.
func Example_hints() {
	dir, _ := os.MkdirTemp("", "sqlhook-hint-example-")
	defer os.RemoveAll(dir)
	cfg, err := shardconf.Parse([]byte(`
dataSources:
  ds_0: {driver: sqlite, dsn: "ds_0.db"}
  ds_1: {driver: sqlite, dsn: "ds_1.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        hint: {shardingAlgorithmName: tenant_db}
      tableStrategy:
        hint: {shardingAlgorithmName: tenant_table}
  shardingAlgorithms:
    tenant_db: {type: HINT_INLINE, props: {algorithm-expression: "ds_${value % 2}"}}
    tenant_table: {type: HINT_INLINE, props: {algorithm-expression: "t_order_${value % 2}"}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range cfg.DataSources { // the files go to a temporary directory
		cfg.DataSources[i].DSN = filepath.Join(dir, cfg.DataSources[i].DSN)
	}
	db, err := sqlhook.Open(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	bg := context.Background()
	if _, err := db.ExecContext(bg, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, status TEXT)`); err != nil {
		fmt.Println(err)
		return
	}

	// Tenant 3: ds_1, t_order_1.
	tenant3 := shardconf.WithHint(bg, "t_order", shardconf.Hint{Database: []any{3}, Table: []any{3}})
	if _, err := db.ExecContext(tenant3, `INSERT INTO t_order (order_id, status) VALUES (?, ?)`, 1, "new"); err != nil {
		fmt.Println(err)
		return
	}
	var status string
	err = db.QueryRowContext(tenant3, `SELECT status FROM t_order WHERE order_id = ?`, 1).Scan(&status)
	fmt.Println(status, err)

	direct, _ := sql.Open("sqlite", filepath.Join(dir, "ds_1.db"))
	defer direct.Close()
	var n int
	direct.QueryRowContext(bg, `SELECT COUNT(*) FROM t_order_1`).Scan(&n)
	fmt.Println("rows in ds_1.t_order_1:", n)

	_, err = db.ExecContext(bg, `UPDATE t_order SET status = 'paid' WHERE order_id = ?`, 1)
	fmt.Println(errors.Is(err, shardconf.ErrMissingShardingKey))
	// Output:
	// new <nil>
	// rows in ds_1.t_order_1: 1
	// true
}
