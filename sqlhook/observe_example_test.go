package sqlhook_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// printer is an Observer that prints routed statements and refusals
// (observe.Base does nothing for the other events). A real one counts and
// traces instead: package shardotel does that with OpenTelemetry.
type printer struct{ observe.Base }

func (printer) StatementEnd(_ context.Context, s observe.Statement, e observe.StatementEnd) {
	fmt.Printf("%s %s: %d targets on %d data sources (%s), merged %v, %d rows, error %v\n",
		s.Operation, strings.Join(s.Tables, ","), s.Targets, s.Sources, s.Fanout, e.Merged, e.Rows, e.Err)
}

func (printer) Refused(_ context.Context, r observe.Refusal) {
	fmt.Printf("refused (%s)\n", r.Reason)
}

// WithObserver reports each routed statement when it ends (a query's
// when its rows close) with its fan-out and the rows a merge returned,
// and each refusal with its reason: here DDL reaching all four tables, an
// INSERT whose rows go to three, a count over one user's two tables
// merged into one row, and an UPDATE refused because it would move a row.
func ExampleWithObserver() {
	dir, _ := os.MkdirTemp("", "sqlhook-observer-")
	defer os.RemoveAll(dir)
	cfg, err := shardconf.Parse(fmt.Appendf(nil, `
dataSources:
  ds_0: {driver: sqlite, dsn: %q}
  ds_1: {driver: sqlite, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`, filepath.Join(dir, "ds_0.db"), filepath.Join(dir, "ds_1.db")))
	if err != nil {
		fmt.Println(err)
		return
	}
	db, err := sqlhook.Open(cfg, sqlhook.WithScatter(), sqlhook.WithObserver(printer{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	ctx := context.Background()
	db.ExecContext(ctx, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)`)
	db.ExecContext(ctx, `INSERT INTO t_order (order_id, user_id) VALUES (1, 7), (2, 7), (3, 8)`)
	var n int
	db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_order WHERE user_id = 7`).Scan(&n)
	db.ExecContext(ctx, `UPDATE t_order SET user_id = 8 WHERE user_id = 7 AND order_id = 1`) // would move the row
	// Output:
	// other t_order: 4 targets on 2 data sources (all), merged false, 0 rows, error <nil>
	// insert t_order: 3 targets on 2 data sources (some), merged false, 0 rows, error <nil>
	// select t_order: 2 targets on 1 data sources (some), merged true, 1 rows, error <nil>
	// refused (sharding_key_change)
}
