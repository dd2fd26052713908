package gormplugin

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/shardkey/shardkey/observe"
)

// containedObserver calls an Observer and recovers its panics, logging
// them and dropping the event. GORM begins and ends its own transaction
// in callbacks, not deferred calls: a panic out of a hook between them
// would leave that transaction open on a pooled connection for good.
type containedObserver struct {
	o      observe.Observer
	logger *slog.Logger
}

var _ observe.Observer = containedObserver{}

func (c containedObserver) contain(method string) {
	if v := recover(); v != nil {
		c.logger.Error("gormplugin: the observer panicked; its event is dropped", "method", method, "panic", fmt.Sprint(v))
	}
}

func (c containedObserver) StatementStart(ctx context.Context, s observe.Statement) (out context.Context) {
	out = ctx
	defer c.contain("StatementStart")
	return c.o.StatementStart(ctx, s)
}

func (c containedObserver) StatementEnd(ctx context.Context, s observe.Statement, end observe.StatementEnd) {
	defer c.contain("StatementEnd")
	c.o.StatementEnd(ctx, s, end)
}

func (c containedObserver) TargetStart(ctx context.Context, t observe.Target) (out context.Context) {
	out = ctx
	defer c.contain("TargetStart")
	return c.o.TargetStart(ctx, t)
}

func (c containedObserver) TargetEnd(ctx context.Context, t observe.Target, err error) {
	defer c.contain("TargetEnd")
	c.o.TargetEnd(ctx, t, err)
}

func (c containedObserver) Refused(ctx context.Context, r observe.Refusal) {
	defer c.contain("Refused")
	c.o.Refused(ctx, r)
}

func (c containedObserver) PlanCache(ctx context.Context, hit bool) {
	defer c.contain("PlanCache")
	c.o.PlanCache(ctx, hit)
}

func (c containedObserver) TwoPhase(ctx context.Context, t observe.TwoPhase) {
	defer c.contain("TwoPhase")
	c.o.TwoPhase(ctx, t)
}
