package shardconf_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// ShardingSphere's DistSQL documentation writes HINT_INLINE expressions as
// ds_${Integer.valueOf(value) % 2}: hint values set by SQL comments or
// DistSQL arrive as Strings. Through WithHint a string value routes as
// Java routes it; an integer value is a Long, which Integer.valueOf does
// not take, so the statement fails instead of guessing.
func TestHintInlineParsesStringHintValuesAsJava(t *testing.T) {
	const rules = `dataSources:
  ds_0: {}
  ds_1: {}
rules:
- !SHARDING
  tables:
    t_order_item:
      actualDataNodes: ds_${0..1}.t_order_item_${0..1}
      databaseStrategy:
        hint:
          shardingAlgorithmName: database_inline
      tableStrategy:
        hint:
          shardingAlgorithmName: table_inline
  shardingAlgorithms:
    database_inline:
      type: HINT_INLINE
      props:
        algorithm-expression: ds_${Integer.valueOf(value) % 2}
    table_inline:
      type: HINT_INLINE
      props:
        algorithm-expression: t_order_item_${Integer.valueOf(value) % 2}
`
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := shardconf.WithHint(context.Background(), "t_order_item", shardconf.Hint{Database: []any{"3"}, Table: []any{"10"}})
	if got, err := r.RouteContext(ctx, "t_order_item"); err != nil || targets(got) != "ds_1.t_order_item_0" {
		t.Errorf("hint \"3\", \"10\" = %q, %v; want ds_1.t_order_item_0", targets(got), err)
	}
	ctx = shardconf.WithHint(context.Background(), "t_order_item", shardconf.Hint{Database: []any{3}, Table: []any{"10"}})
	if got, err := r.RouteContext(ctx, "t_order_item"); err == nil {
		t.Errorf("hint 3 (an integer) = %q; want an error (Integer.valueOf(Long) does not exist)", targets(got))
	}
	ctx = shardconf.WithHint(context.Background(), "t_order_item", shardconf.Hint{Database: []any{"x"}, Table: []any{"1"}})
	if got, err := r.RouteContext(ctx, "t_order_item"); err == nil || errors.Is(err, shardconf.ErrNoRoute) {
		t.Errorf("hint \"x\" = %q, %v; want the NumberFormatException as an error", targets(got), err)
	}
}
