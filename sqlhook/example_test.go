package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/shardkey/shardkey/sqlhook/sqlite" // registers sqlhook's SQLite compiler
	_ "modernc.org/sqlite"                          // registers the database/sql driver "sqlite"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// Open routes plain SQL across the data sources of a rule file: DDL on
// the logic table creates every physical table, an INSERT without its key
// gets one from the rule's generator and goes to the table the key
// selects, and a query without the sharding key is refused.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "sqlhook-example-")
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
        standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: INLINE, props: {algorithm-expression: "ds_${user_id % 2}"}}
    by_order: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range cfg.DataSources { // the files go to a temporary directory
		cfg.DataSources[i].DSN = filepath.Join(dir, cfg.DataSources[i].DSN)
	}
	db, err := sqlhook.Open(cfg, sqlhook.WithRouterOptions(shardconf.WithKeyGenProps(keygen.Props{"worker-id": "1"})))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	ctx := context.Background()

	if _, err := db.ExecContext(ctx, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status TEXT)`); err != nil {
		fmt.Println(err)
		return
	}
	var id int64
	// order_id is missing: the rule's SNOWFLAKE fills it, and RETURNING reads it.
	err = db.QueryRowContext(ctx, `INSERT INTO t_order (user_id, status) VALUES (?, ?) RETURNING order_id`, 7, "new").Scan(&id)
	if err != nil {
		fmt.Println(err)
		return
	}
	var status string
	err = db.QueryRowContext(ctx, `SELECT status FROM t_order WHERE user_id = ? AND order_id = ?`, 7, id).Scan(&status)
	fmt.Println(status, err)

	// The row is in ds_1 (user 7) and the table its key selects.
	direct, _ := sql.Open("sqlite", filepath.Join(dir, "ds_1.db"))
	defer direct.Close()
	var n int
	direct.QueryRowContext(ctx, fmt.Sprintf(`SELECT COUNT(*) FROM t_order_%d WHERE order_id = ?`, id%2), id).Scan(&n)
	fmt.Println("rows in ds_1's table for the key:", n)

	_, err = db.QueryContext(ctx, `SELECT status FROM t_order WHERE status = ?`, "new")
	fmt.Println(errors.Is(err, shardconf.ErrMissingShardingKey))
	// Output:
	// new <nil>
	// rows in ds_1's table for the key: 1
	// true
}
