package e2etest

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	_ "github.com/shardkey/shardkey/sqlhook/sqlite" // sqlhook's SQLite compiler
	_ "modernc.org/sqlite"                          // the database/sql driver "sqlite"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/shardotel"
	"github.com/shardkey/shardkey/sqlhook"
)

// TestSQLHookStatementsReachOpenTelemetry: statements run through a
// sqlhook connector on two SQLite files are counted by operation and
// fan-out, with their targets, merged rows, refusals and plan-cache
// lookups; each has a span under the caller's with its targets' spans as
// children, and a failing one marks its spans.
func TestSQLHookStatementsReachOpenTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { mp.Shutdown(context.Background()); tp.Shutdown(context.Background()) })
	obs, err := shardotel.NewObserver(shardotel.WithMeterProvider(mp), shardotel.WithTracerProvider(tp), shardotel.WithDBSystem("sqlite"))
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
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
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg, sqlhook.WithScatter(), sqlhook.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	ctx, handler := tp.Tracer("test").Start(context.Background(), "handler")
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)`)
	mustExec(`INSERT INTO t_order (order_id, user_id) VALUES (1, 7), (2, 7), (3, 8)`)
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_order WHERE user_id = 7`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("count: %d, %v", n, err)
	}
	for range 2 {
		var user int
		if err := db.QueryRowContext(ctx, `SELECT user_id FROM t_order WHERE user_id = ? AND order_id = ?`, 7, 1).Scan(&user); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT order_id FROM t_order ORDER BY order_id`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for rows.Next() {
		var id int
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	if fmt.Sprint(ids) != "[1 2 3]" {
		t.Fatalf("scatter read %v", ids)
	}
	if _, err := db.ExecContext(ctx, `UPDATE t_order SET user_id = 8 WHERE user_id = 7 AND order_id = 1`); err == nil {
		t.Fatal("an UPDATE moving a row between shards was not refused")
	}
	if _, err := db.ExecContext(ctx, `UPDATE t_order SET no_such_column = 1 WHERE user_id = 7 AND order_id = 1`); err == nil {
		t.Fatal("an UPDATE of a missing column succeeded")
	}
	handler.End()

	// Metrics.
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	ms := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			ms[m.Name] = m
		}
	}
	key := func(op, fanout string, extra ...attribute.KeyValue) string {
		return render(attribute.NewSet(append([]attribute.KeyValue{shardotel.ComponentKey.String("sqlhook"),
			attribute.String("db.operation.name", op), shardotel.FanoutKey.String(fanout)}, extra...)...))
	}
	statements := sums(t, ms, "shardkey.route.statements")
	for k, want := range map[string]int64{
		key("other", "all"): 1, key("insert", "some"): 1, key("select", "some"): 1, key("select", "one"): 2,
		key("select", "all"): 1, key("update", "one"): 1,
	} {
		if statements[k] != want {
			t.Errorf("statements{%s} = %d, want %d (all: %v)", k, statements[k], want, statements)
		}
	}
	targets := map[string]int64{}
	if h, ok := ms["shardkey.route.targets"].Data.(metricdata.Histogram[int64]); ok {
		for _, dp := range h.DataPoints {
			targets[render(dp.Attributes)] = dp.Sum
		}
	}
	for k, want := range map[string]int64{key("other", "all"): 4, key("insert", "some"): 3, key("select", "some"): 2, key("select", "all"): 4} {
		if targets[k] != want {
			t.Errorf("targets{%s} sum %d, want %d", k, targets[k], want)
		}
	}
	merged := sums(t, ms, "shardkey.route.merged_rows")
	if merged[key("select", "some")] != 1 || merged[key("select", "all")] != 3 {
		t.Errorf("merged rows %v, want 1 for the count and 3 for the scatter", merged)
	}
	refusals := sums(t, ms, "shardkey.route.refusals")
	if k := render(attribute.NewSet(shardotel.ComponentKey.String("sqlhook"), shardotel.RefusalReasonKey.String("sharding_key_change"))); refusals[k] != 1 {
		t.Errorf("refusals %v, want one sharding_key_change", refusals)
	}
	var lookups int64
	for _, v := range sums(t, ms, "shardkey.route.plan_cache.lookups") {
		lookups += v
	}
	if lookups == 0 {
		t.Error("no plan-cache lookup reported")
	}
	failed := false
	if h, ok := ms["shardkey.route.duration"].Data.(metricdata.Histogram[float64]); ok {
		for _, dp := range h.DataPoints {
			if v, ok := dp.Attributes.Value("error.type"); ok && v.AsString() != "" && strings.Contains(render(dp.Attributes), "update") {
				failed = true
			}
		}
	}
	if !failed {
		t.Error("the failed UPDATE's duration carries no error.type")
	}

	// Traces.
	ended := spans.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byID[s.SpanContext().SpanID()] = s
	}
	statementsSeen, targetsSeen := 0, 0
	for _, s := range ended {
		parent, ok := byID[s.Parent().SpanID()]
		switch {
		case s.Name() == "handler":
		case ok && parent.Name() == "handler":
			statementsSeen++
			if s.SpanKind() != trace.SpanKindClient || !strings.HasPrefix(s.Name(), attrOf(s, "db.operation.name")) {
				t.Errorf("statement span %q: kind %v, operation %q", s.Name(), s.SpanKind(), attrOf(s, "db.operation.name"))
			}
			if attrOf(s, "db.system.name") != "sqlite" || attrOf(s, "shardkey.logic_tables") == "" {
				t.Errorf("statement span %q attributes %v", s.Name(), s.Attributes())
			}
		case ok && parent.Parent().SpanID() == handler.SpanContext().SpanID():
			targetsSeen++
			if ds := attrOf(s, "shardkey.data_source"); ds != "ds_0" && ds != "ds_1" {
				t.Errorf("target span %q: data source %q", s.Name(), ds)
			}
		default:
			t.Errorf("span %q is neither a statement under the handler nor a target under a statement", s.Name())
		}
	}
	// create (4 targets), insert (3), count (2), two point reads (1 each),
	// scatter (4), the failed update (1); the refused one has no span.
	if statementsSeen != 7 || targetsSeen != 16 {
		t.Errorf("%d statement spans and %d target spans, want 7 and 16", statementsSeen, targetsSeen)
	}
	var failedSpans []string
	for _, s := range ended {
		if s.Status().Code == codes.Error {
			failedSpans = append(failedSpans, s.Name())
		}
	}
	slices.Sort(failedSpans)
	if fmt.Sprint(failedSpans) != "[update t_order update t_order_1]" {
		t.Errorf("spans marked failed %q, want the UPDATE's statement and target spans", failedSpans)
	}
}
