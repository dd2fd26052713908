package e2etest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/shardotel"
)

// Example_prometheus wires shardotel to a Prometheus exporter: a
// SNOWFLAKE generator's figures (its worker id leased for a minute) and a
// few routed statements, then the shardkey_* lines of the metrics page
// (histogram buckets and the duration sums, which are timings, left out).
func Example_prometheus() {
	ctx := context.Background()
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		fmt.Println(err)
		return
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(ctx)

	// Keys: a SNOWFLAKE whose worker id is leased until a minute from its
	// clock's start (a fake clock, for a stable page).
	clock := keygentest.NewClock(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC))
	lease := &minuteLease{until: clock.Now().Add(time.Minute).UnixNano()}
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"},
		keygen.WithClock(clock), keygen.WithWorkerSource(lease))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gen.(interface{ Close() error }).Close()
	reg, err := shardotel.RegisterGenerator(gen.(keygen.StatsReporter),
		shardotel.WithMeterProvider(mp), shardotel.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Unregister()
	for range 1000 {
		if _, err := gen.NextID(ctx); err != nil {
			fmt.Println(err)
			return
		}
	}
	clock.Add(15 * time.Second)

	// Statements, reported as sqlhook reports them: a scatter over four
	// tables merging 12 rows, two single-table inserts, a refusal, plan-cache
	// lookups and a two-phase commit.
	obs, err := shardotel.NewObserver(shardotel.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	scatter := observe.Statement{Component: "sqlhook", Operation: "select", Tables: []string{"t_order"},
		Targets: 4, Sources: 1, Fanout: observe.FanoutAll}
	sctx := obs.StatementStart(ctx, scatter)
	for i := range 4 {
		t := observe.Target{DataSource: "ds_0", Tables: []string{fmt.Sprintf("t_order_%d", i)}}
		obs.TargetEnd(obs.TargetStart(sctx, t), t, nil)
	}
	obs.StatementEnd(sctx, scatter, observe.StatementEnd{Rows: 12, Merged: true, Duration: 3 * time.Millisecond})
	insert := observe.Statement{Component: "sqlhook", Operation: "insert", Tables: []string{"t_order"},
		Targets: 1, Sources: 1, Fanout: observe.FanoutOne}
	for range 2 {
		ictx := obs.StatementStart(ctx, insert)
		obs.StatementEnd(ictx, insert, observe.StatementEnd{Duration: time.Millisecond})
	}
	obs.Refused(ctx, observe.Refusal{Component: "sqlhook", Reason: observe.ReasonMissingShardingKey,
		Err: errors.New("missing sharding key")})
	obs.PlanCache(ctx, false)
	obs.PlanCache(ctx, true)
	obs.PlanCache(ctx, true)
	obs.TwoPhase(ctx, observe.TwoPhase{Component: "sqlhook", Outcome: observe.OutcomeCommitted,
		Branches: 2, Duration: 4 * time.Millisecond})

	// The metrics page, as Prometheus scrapes it.
	srv := httptest.NewServer(promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "shardkey_") || strings.Contains(line, "_bucket{") ||
			strings.HasPrefix(line, "shardkey_route_duration_seconds_sum") ||
			strings.HasPrefix(line, "shardkey_two_phase_duration_seconds_sum") {
			continue
		}
		fmt.Println(line)
	}
	// Output:
	// shardkey_keygen_clock_back_steps_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_clock_waits_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_keys_issued_total{shardkey_keygen_type="SNOWFLAKE"} 1000
	// shardkey_keygen_lease_refusals_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_lease_remaining_seconds{shardkey_keygen_type="SNOWFLAKE"} 45
	// shardkey_keygen_lease_renewal_failures_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_lease_renewals_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_sequence_waits_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_route_duration_seconds_count{db_operation_name="insert",shardkey_component="sqlhook",shardkey_fanout="one"} 2
	// shardkey_route_duration_seconds_count{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="all"} 1
	// shardkey_route_merged_rows_total{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="all"} 12
	// shardkey_route_plan_cache_lookups_total{shardkey_plan_cache_result="hit"} 2
	// shardkey_route_plan_cache_lookups_total{shardkey_plan_cache_result="miss"} 1
	// shardkey_route_refusals_total{shardkey_component="sqlhook",shardkey_refusal_reason="missing_sharding_key"} 1
	// shardkey_route_statements_total{db_operation_name="insert",shardkey_component="sqlhook",shardkey_fanout="one"} 2
	// shardkey_route_statements_total{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="all"} 1
	// shardkey_route_targets_sum{db_operation_name="insert",shardkey_component="sqlhook",shardkey_fanout="one"} 2
	// shardkey_route_targets_count{db_operation_name="insert",shardkey_component="sqlhook",shardkey_fanout="one"} 2
	// shardkey_route_targets_sum{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="all"} 4
	// shardkey_route_targets_count{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="all"} 1
	// shardkey_two_phase_duration_seconds_count{shardkey_component="sqlhook",shardkey_two_phase_outcome="committed"} 1
	// shardkey_two_phase_transactions_total{shardkey_component="sqlhook",shardkey_two_phase_outcome="committed"} 1
}

// minuteLease is a worker-id lease valid up to a fixed time (a real one,
// from package workerlease or its siblings, renews itself).
type minuteLease struct{ until int64 }

func (l *minuteLease) Acquire(context.Context, keygen.WorkerInfo) (keygen.Lease, error) {
	return l, nil
}
func (l *minuteLease) Worker() int64          { return 1 }
func (l *minuteLease) LastUsed() time.Time    { return time.Time{} }
func (l *minuteLease) ValidUntil() int64      { return l.until }
func (l *minuteLease) Track(func() time.Time) {}
func (l *minuteLease) Close() error           { return nil }
