package e2etest

import (
	"context"
	"testing"

	"github.com/libtnb/sqlite"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/shardotel"
)

type shardedOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
}

// TestGORMStatementsReachOpenTelemetry: statements through gormplugin on
// SQLite are counted with component gormplugin, by operation and fan-out,
// and their spans nest under the caller's span, targets under statements.
func TestGORMStatementsReachOpenTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { mp.Shutdown(context.Background()); tp.Shutdown(context.Background()) })
	obs, err := shardotel.NewObserver(shardotel.WithMeterProvider(mp), shardotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}

	db, err := gorm.Open(sqlite.Open("file:shardotel_gorm?mode=memory&cache=shared"), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if pool, err := db.DB(); err == nil {
		defer pool.Close()
	}
	parsed, err := shardconf.Parse([]byte(`
dataSources:
  ds: {driver: sqlite, dsn: "file:unused"}
rules:
- !SHARDING
  tables:
    sharded_orders:
      actualDataNodes: ds.sharded_orders_${0..3}
      tableStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      keyGenerateStrategy: {column: id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 4}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}
`))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := shardconf.NewRouter(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rules), gormplugin.WithScatter(), gormplugin.WithObserver(obs))); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&shardedOrder{}); err != nil {
		t.Fatal(err)
	}
	ctx, handler := tp.Tracer("test").Start(context.Background(), "handler")
	tx := db.WithContext(ctx)
	if err := tx.Create(&[]shardedOrder{{UserID: 1, Amount: 5}, {UserID: 2, Amount: 7}}).Error; err != nil {
		t.Fatal(err)
	}
	var orders []shardedOrder
	if err := tx.Where("user_id IN ?", []int64{1, 2, 3}).Order("amount").Find(&orders).Error; err != nil || len(orders) != 2 {
		t.Fatalf("read %d orders, %v", len(orders), err)
	}
	var n int64
	if err := tx.Model(&shardedOrder{}).Count(&n).Error; err != nil || n != 2 {
		t.Fatalf("count %d, %v", n, err)
	}
	handler.End()

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
	key := func(op, fanout string) string {
		return render(attribute.NewSet(shardotel.ComponentKey.String("gormplugin"),
			attribute.String("db.operation.name", op), shardotel.FanoutKey.String(fanout)))
	}
	statements := sums(t, ms, "shardkey.route.statements")
	for k, want := range map[string]int64{key("insert", "some"): 1, key("select", "some"): 1, key("select", "all"): 1} {
		if statements[k] < want {
			t.Errorf("statements{%s} = %d, want %d (all: %v)", k, statements[k], want, statements)
		}
	}
	merged := sums(t, ms, "shardkey.route.merged_rows")
	if merged[key("select", "some")] != 2 || merged[key("select", "all")] != 1 {
		t.Errorf("merged rows %v, want 2 for the IN read and 1 for the count", merged)
	}

	ended := spans.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byID[s.SpanContext().SpanID()] = s
	}
	stmts, targets := 0, 0
	for _, s := range ended {
		if s.Name() == "handler" {
			continue
		}
		parent, ok := byID[s.Parent().SpanID()]
		switch {
		case ok && parent.Name() == "handler":
			stmts++
		case ok && parent.Parent().SpanID() == handler.SpanContext().SpanID():
			targets++
			if attrOf(s, "shardkey.data_source") != "ds" {
				t.Errorf("target span %q without its data source", s.Name())
			}
		default:
			t.Errorf("span %q is neither a statement under the handler nor a target under a statement", s.Name())
		}
	}
	// insert (2 tables), select IN (3), count (4).
	if stmts != 3 || targets != 9 {
		t.Errorf("%d statement spans and %d target spans, want 3 and 9", stmts, targets)
	}
}
