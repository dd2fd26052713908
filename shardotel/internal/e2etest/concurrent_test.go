package e2etest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/libtnb/sqlite"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/shardotel"
)

type sharedOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Amount int
}

// One shardotel Observer shared by many goroutines writing, reading and
// refused at once: every statement is counted once, by operation and
// fan-out (attribute sets made on first use while others record), every
// refusal once, a span ends per statement, and nothing races (-race).
func TestOneObserverSharedByManyGoroutinesCountsEachStatementOnce(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { mp.Shutdown(context.Background()); tp.Shutdown(context.Background()) })
	obs, err := shardotel.NewObserver(shardotel.WithMeterProvider(mp), shardotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	dsn := "file:" + t.TempDir() + "/shared.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true})
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
    shared_orders:
      actualDataNodes: ds.shared_orders_${0..3}
      tableStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
  shardingAlgorithms:
    by_user: {type: MOD, props: {sharding-count: 4}}
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
	if err := db.AutoMigrate(&sharedOrder{}); err != nil {
		t.Fatal(err)
	}
	var before metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &before); err != nil {
		t.Fatal(err)
	}
	startSpans := len(spans.Ended())

	const workers, rounds = 16, 10
	var stmts, refusals atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				id := int64(w*rounds + i + 1)
				if err := db.Create(&sharedOrder{ID: id, UserID: id, Amount: i}).Error; err != nil {
					t.Errorf("create: %v", err)
					return
				}
				stmts.Add(1)
				var got []sharedOrder
				if err := db.Where("user_id IN ?", []int64{id, id + 1}).Find(&got).Error; err != nil {
					t.Errorf("find: %v", err)
					return
				}
				stmts.Add(1)
				if err := db.Model(&sharedOrder{}).Where("user_id = ? AND id = ?", id, id).Update("user_id", id+1).Error; err == nil {
					t.Errorf("sharding key change of %d accepted", id)
				}
				refusals.Add(1)
			}
		}()
	}
	wg.Wait()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	total := func(rm metricdata.ResourceMetrics, name string) int64 {
		var n int64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != name {
					continue
				}
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					n += dp.Value
				}
			}
		}
		return n
	}
	if got := total(rm, "shardkey.route.statements") - total(before, "shardkey.route.statements"); got != stmts.Load() {
		t.Errorf("statements counted %d, ran %d", got, stmts.Load())
	}
	if got := total(rm, "shardkey.route.refusals") - total(before, "shardkey.route.refusals"); got != refusals.Load() {
		t.Errorf("refusals counted %d, refused %d", got, refusals.Load())
	}
	statementSpans := 0
	for _, s := range spans.Ended()[startSpans:] {
		if attrOf(s, "shardkey.targets") != "" {
			statementSpans++
		}
	}
	if int64(statementSpans) != stmts.Load() {
		t.Errorf("%d statement spans, %d statements", statementSpans, stmts.Load())
	}
	t.Logf("%d statements, %d refusals", stmts.Load(), refusals.Load())
}
