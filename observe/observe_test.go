package observe_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardconf"
)

func TestRouteReasonNamesEachShardconfSentinel(t *testing.T) {
	for err, want := range map[error]observe.Reason{
		shardconf.ErrMissingShardingKey:                       observe.ReasonMissingShardingKey,
		shardconf.ErrShardingKeyChange:                        observe.ReasonShardingKeyChange,
		shardconf.ErrUnusedHint:                               observe.ReasonHint,
		shardconf.ErrUnknownTable:                             observe.ReasonUnknownTable,
		shardconf.ErrNoRoute:                                  observe.ReasonNoRoute,
		fmt.Errorf("wrapped: %w", shardconf.ErrNoRoute):       observe.ReasonNoRoute,
		fmt.Errorf("something else"):                          observe.ReasonOther,
		&shardconf.RouteError{Err: shardconf.ErrUnknownTable}: observe.ReasonUnknownTable,
	} {
		if got := observe.RouteReason(err); got != want {
			t.Errorf("RouteReason(%v) = %q, want %q", err, got, want)
		}
	}
}

func TestFanoutStringsAreStable(t *testing.T) {
	for f, want := range map[observe.Fanout]string{observe.FanoutOne: "one", observe.FanoutSome: "some", observe.FanoutAll: "all", 0: "unknown"} {
		if got := f.String(); got != want {
			t.Errorf("Fanout(%d).String() = %q, want %q", f, got, want)
		}
	}
}

// An Observer that embeds Base and counts refusals only.
type refusalCounter struct {
	observe.Base
	n int
}

func (c *refusalCounter) Refused(context.Context, observe.Refusal) { c.n++ }

func ExampleBase() {
	c := &refusalCounter{}
	var o observe.Observer = c
	ctx := o.StatementStart(context.Background(), observe.Statement{Operation: "select", Fanout: observe.FanoutAll})
	o.Refused(ctx, observe.Refusal{Reason: observe.ReasonUnsupported})
	fmt.Println(c.n)
	// Output: 1
}
