package sqlhook_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// hintBoundRules binds t_order, placed by hints, to t_item, placed by
// its order_id: a row of t_item need not be at the position of its order.
const hintBoundRules = `
dataSources:
  ds_0: {driver: %[1]s, dsn: %[2]q}
  ds_1: {driver: %[1]s, dsn: %[3]q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy: {hint: {shardingAlgorithmName: db_hint}}
      tableStrategy: {hint: {shardingAlgorithmName: tbl_hint}}
    t_item:
      actualDataNodes: ds_${0..1}.t_item_${0..1}
      databaseStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: db_inline}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tbl_inline}}
  bindingTables: ["t_order,t_item"]
  shardingAlgorithms:
    db_hint: {type: HINT_INLINE, props: {algorithm-expression: "ds_${value %% 2}"}}
    tbl_hint: {type: HINT_INLINE, props: {algorithm-expression: "t_order_${value %% 2}"}}
    db_inline: {type: INLINE, props: {algorithm-expression: "ds_${order_id %% 2}"}}
    tbl_inline: {type: INLINE, props: {algorithm-expression: "t_item_${order_id.intdiv(2) %% 2}"}}
`

// A JOIN pairs a binding partner by position with the driving table's
// target. A table placed by hints bound to one placed by its columns has
// no such pairing (order 4 hinted into ds_1.t_order_0, its item placed by
// order_id in ds_0.t_item_0): the JOIN is refused instead of reading
// ds_1.t_item_0 and missing the item, whichever table drives it.
func TestHintTableBoundToAColumnRoutedTableRefusesTheJoin(t *testing.T) {
	for _, b := range hintBackends(t, "sqlhook_hint_boundcol") {
		t.Run(b.name, func(t *testing.T) {
			cfg, err := shardconf.Parse(fmt.Appendf(nil, hintBoundRules, b.driver, b.dsn[0], b.dsn[1]))
			if err != nil {
				t.Fatal(err)
			}
			db, err := sqlhook.Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, ddl := range []string{
				`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, status VARCHAR(16))`,
				`CREATE TABLE t_item (item_id BIGINT PRIMARY KEY, order_id BIGINT NOT NULL)`,
			} {
				if _, err := db.Exec(ddl); err != nil {
					t.Fatalf("%s: %v", ddl, err)
				}
			}
			hint := shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Database: []any{1}, Table: []any{0}})
			if _, err := db.ExecContext(hint, `INSERT INTO t_order (order_id, status) VALUES (4, 'o')`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`INSERT INTO t_item (item_id, order_id) VALUES (40, 4)`); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`SELECT i.item_id FROM t_order o JOIN t_item i ON i.order_id = o.order_id`,
				`SELECT i.item_id FROM t_item i JOIN t_order o ON i.order_id = o.order_id WHERE i.order_id = 4`,
			} {
				rows, err := db.QueryContext(hint, q)
				if err == nil {
					var got []int64
					for rows.Next() {
						var k int64
						rows.Scan(&k)
						got = append(got, k)
					}
					rows.Close()
					t.Errorf("%s: read %v, want ErrUnsupported (item 40 is not beside its order)", q, got)
					continue
				}
				if !errors.Is(err, sqlhook.ErrUnsupported) {
					t.Errorf("%s: %v, want ErrUnsupported", q, err)
				}
			}
			// Each table alone routes as before.
			var n int
			if err := db.QueryRowContext(hint, `SELECT count(*) FROM t_order`).Scan(&n); err != nil || n != 1 {
				t.Errorf("hinted t_order: %d, %v; want 1 row", n, err)
			}
			if err := db.QueryRow(`SELECT count(*) FROM t_item WHERE order_id = 4`).Scan(&n); err != nil || n != 1 {
				t.Errorf("t_item by order_id: %d, %v; want 1 row", n, err)
			}
		})
	}
}
