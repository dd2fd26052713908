package shardotel_test

import (
	"testing"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardotel"
)

// TestSpansNameTheSystemTheEventCarriesOverWithDBSystem: a connector's
// statements and targets name their database system themselves, so one
// Observer serving PostgreSQL and MySQL connectors labels each span with
// its own; WithDBSystem fills in only where an event names none.
func TestSpansNameTheSystemTheEventCarriesOverWithDBSystem(t *testing.T) {
	te := newTelemetry(t, nil)
	o := te.observer(t, shardotel.WithDBSystem("sqlite"))
	for _, system := range []string{"postgresql", "mysql", ""} {
		s := observe.Statement{Component: "sqlhook", System: system, Operation: "insert", Tables: []string{"t_order"},
			Targets: 1, Sources: 1, Fanout: observe.FanoutOne}
		sctx := o.StatementStart(ctx, s)
		tg := observe.Target{DataSource: "ds_0", System: system, Tables: []string{"t_order_1"}}
		o.TargetEnd(o.TargetStart(sctx, tg), tg, nil)
		o.StatementEnd(sctx, s, observe.StatementEnd{})
	}
	var got []string
	for _, sp := range te.spans.Ended() {
		got = append(got, sp.Name()+"="+spanAttrs(sp)["db.system.name"])
	}
	want := []string{"insert t_order_1=postgresql", "insert t_order=postgresql", "insert t_order_1=mysql",
		"insert t_order=mysql", "insert t_order_1=sqlite", "insert t_order=sqlite"}
	if len(got) != len(want) {
		t.Fatalf("spans %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d: %s, want %s", i, got[i], want[i])
		}
	}
}
