package gormplugin_test

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// TestLoadedRowWithZeroShardingValueIsUpdatedAndDeleted: a loaded row
// whose sharding value is zero (user 0) is updated and deleted through
// its model: a loaded zero is a sharding value, not "not set". A
// hand-built model whose zero is not the stored value
// (Delete(&Order{ID: id}) of user 1's row) writes nothing: routed by user
// 0 it matches nothing, and the key found in another table refuses it
// (ErrMissingShardingKey).
func TestLoadedRowWithZeroShardingValueIsUpdatedAndDeleted(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			e := openTwoDSNamed(t, be, "gormplugin_zero_"+be, dbRules, nil, []any{&ShardedOrder{}})
			rows := e.seed(t) // users 0..3
			r0 := rows[0]
			if err := e.db.Model(&r0).Update("amount", 55).Error; err != nil {
				t.Fatalf("update of user 0's loaded row: %v", err)
			}
			if got := e.placement(t)[r0.ID]; got.Amount != 55 {
				t.Fatalf("user 0's row after the update: %+v", got)
			}
			before := e.snapshot(t)
			hand := ShardedOrder{ID: rows[1].ID} // user 1's row, user left zero
			if err := e.db.Model(&hand).Update("amount", 77).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
				t.Fatalf("update through a model without its user: %v, want ErrMissingShardingKey", err)
			}
			if err := e.db.Delete(&ShardedOrder{ID: rows[1].ID}).Error; !errors.Is(err, shardconf.ErrMissingShardingKey) {
				t.Fatalf("delete through a model without its user: %v, want ErrMissingShardingKey", err)
			}
			if after := e.snapshot(t); after != before {
				t.Fatalf("refused statements changed the tables:\n%s\n%s", before, after)
			}
			if err := e.db.Delete(&r0).Error; err != nil {
				t.Fatalf("delete of user 0's loaded row: %v", err)
			}
			if p := e.placement(t); len(p) != 3 {
				t.Fatalf("%d rows after deleting user 0's, want 3", len(p))
			} else if _, still := p[r0.ID]; still {
				t.Fatal("user 0's row is still there")
			}
		})
	}
}
