package gormplugin

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
)

// A refusal's reason is its most specific one: the plugin's refusals wrap
// ErrUnsupported around shardconf's sentinels, ErrTimeLocation and
// ErrTwoPhaseUnavailable, which name what was refused better.
func TestRefusalReasonIsTheMostSpecificSentinel(t *testing.T) {
	p := &Plugin{}
	timeErr := p.checkTime("orders", "created", time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)))
	for _, c := range []struct {
		what string
		err  error
		want observe.Reason
	}{
		{"a time in another location", timeErr, observe.ReasonOther},
		{"a data source without two-phase commit", fmt.Errorf("%w: the transaction is on data source ds_0 and this statement goes to ds_1: %w",
			ErrUnsupported, &xa.UnavailableError{Source: "ds_1", Dialect: dialect.SQLite, Reason: "no two-phase commit"}), observe.ReasonTwoPhaseUnavailable},
		{"a write over two data sources", crossSource(fmt.Errorf("%w: the statement spans data sources ds_0 and ds_1", ErrUnsupported)), observe.ReasonCrossSource},
		{"a key change", keyChange("orders", keyAssign{column: "user_id", value: 2}, "elsewhere"), observe.ReasonShardingKeyChange},
		{"an upsert under another table's hint", hintKeyChange("orders", []any{1}, shardconf.Target{}, shardconf.Target{}), observe.ReasonShardingKeyChange},
		{"a missing sharding key", fmt.Errorf("gormplugin: orders: %w", &shardconf.RouteError{Table: "orders", Column: "user_id", Err: shardconf.ErrMissingShardingKey}), observe.ReasonMissingShardingKey},
		{"a hint for an unsharded table", fmt.Errorf("%w: t is not a sharded table: %w", ErrUnsupported, &shardconf.RouteError{Table: "t", Err: shardconf.ErrUnusedHint}), observe.ReasonHint},
		{"a read no merge answers", fmt.Errorf("%w: count(*) %% 2 over several tables", ErrUnsupported), observe.ReasonUnsupported},
		{"a key found in another table", fmt.Errorf("%w: gormplugin: a row of orders with this primary key is in ds_1.orders_1", gorm.ErrDuplicatedKey), observe.ReasonOther},
		{"a branch that could not begin", errors.New("gormplugin: begin the transaction's branch on data source ds_1: connection refused"), observe.ReasonOther},
	} {
		if c.err == nil {
			t.Fatalf("%s: no error built", c.what)
		}
		if got := refusalReason(c.err); got != c.want {
			t.Errorf("%s (%v): reason %s, want %s", c.what, c.err, got, c.want)
		}
	}
	if cs := crossSource(ErrUnsupported); !errors.Is(cs, ErrUnsupported) || cs.Error() != ErrUnsupported.Error() {
		t.Errorf("a cross-source refusal reads %q and must match ErrUnsupported", cs)
	}
}
