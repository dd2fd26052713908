package sqlhook_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/sqlhook"
)

// A write whose sharding value is NULL (written in the statement or
// bound) is refused before anything runs; its refusal is reported once
// with a reason that says why (no_route: the algorithm places a NULL
// nowhere; missing_sharding_key would do), not "other", which a
// dashboard cannot tell from an unknown failure.
func TestObserverReportsANullShardingValueWithItsReason(t *testing.T) {
	dir := t.TempDir()
	b := backend{name: "sqlite", driver: "sqlite", dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}}
	rec := newRecorder(t)
	db, err := sqlhook.Open(b.config(t), sqlhook.WithObserver(rec))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT, status VARCHAR(64))`); err != nil {
		t.Fatal(err)
	}
	rec.take()
	for _, c := range []struct {
		name, q string
		args    []any
	}{
		{"literal NULL", `INSERT INTO t_order (order_id, user_id) VALUES (1, NULL)`, nil},
		{"bound nil", `INSERT INTO t_order (order_id, user_id) VALUES (?, ?)`, []any{2, nil}},
		{"UPDATE by NULL", `UPDATE t_order SET status = 'x' WHERE user_id = ? AND order_id = 1`, []any{nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := db.ExecContext(ctx, c.q, c.args...)
			var refusals []observe.Refusal
			for _, e := range rec.take() {
				switch e.kind {
				case "refused":
					refusals = append(refusals, e.refusal)
				case "start":
					if err != nil {
						t.Errorf("StatementStart for a statement that failed with %v", err)
					}
				}
			}
			if err == nil {
				if len(refusals) > 0 {
					t.Errorf("accepted, refusals %+v", refusals)
				}
				t.Logf("accepted")
				return
			}
			if len(refusals) != 1 || !errors.Is(err, refusals[0].Err) {
				t.Fatalf("refused with %v; refusals reported %+v", err, refusals)
			}
			if r := refusals[0].Reason; !slices.Contains([]observe.Reason{observe.ReasonNoRoute, observe.ReasonMissingShardingKey}, r) {
				t.Errorf("refused with %v: reason %q, want no_route or missing_sharding_key", err, r)
			}
		})
	}
}
