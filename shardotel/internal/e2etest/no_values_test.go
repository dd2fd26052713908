package e2etest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/libtnb/sqlite"
	"go.opentelemetry.io/otel/attribute"
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

type valuedOrder struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64
	Note   string
}

// The values statements carry, each spelled so that it cannot occur by
// chance in a name or a figure.
const (
	secretUser    = 987654321
	secretUserTxt = "987654321"
	secretNote    = "s3cr3t-n0te"
	secretPass    = "hunter2-pw"
)

// openValued opens GORM on an in-memory SQLite database (its DSN carries
// a password-like parameter, which must never reach telemetry) with
// gormplugin and obs.
func openValued(t *testing.T, obs *shardotel.Observer) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(sqlite.Open("file:shardotel_values?mode=memory&cache=shared&_auth_pass="+secretPass), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if pool, err := db.DB(); err == nil {
		t.Cleanup(func() { pool.Close() })
	}
	parsed, err := shardconf.Parse([]byte(`
dataSources:
  ds: {driver: sqlite, dsn: "file:unused?password=` + secretPass + `"}
rules:
- !SHARDING
  tables:
    valued_orders:
      actualDataNodes: ds.valued_orders_${0..3}
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
	if err := db.AutoMigrate(&valuedOrder{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// runValued runs statements carrying the secret values: writes, reads,
// a duplicate key the database refuses, a sharding key change and a
// missing sharding key gormplugin refuses.
func runValued(t *testing.T, db *gorm.DB) {
	t.Helper()
	if err := db.Create(&valuedOrder{ID: 1, UserID: secretUser, Note: secretNote}).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&valuedOrder{ID: 1, UserID: secretUser, Note: secretNote}).Error; err == nil {
		t.Fatal("a duplicate key was written")
	}
	var got []valuedOrder
	if err := db.Where("user_id = ? AND note = ?", secretUser, secretNote).Find(&got).Error; err != nil || len(got) != 1 {
		t.Fatalf("read %v, %v", got, err)
	}
	if err := db.Where("note = ?", secretNote).Find(&got).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Model(&valuedOrder{}).Where("user_id = ? AND id = 1", secretUser).Update("note", secretNote+"2").Error; err != nil {
		t.Fatal(err)
	}
	// user 2 lives in valued_orders_2, the secret user in valued_orders_1
	if err := db.Model(&valuedOrder{}).Where("user_id = ? AND id = 1", 2).Update("user_id", secretUser).Error; err == nil {
		t.Error("the sharding key change was accepted")
	}
	if err := db.Where("note = ?", secretNote).Delete(&valuedOrder{}).Error; err == nil {
		t.Log("the DELETE without sharding key was accepted (scatter)")
	}
}

// Metric attributes are of low cardinality: only the documented keys,
// and no value a statement carried; spans (attributes, events, status)
// carry no value a statement bound or wrote, and no password of a DSN.
func TestTelemetryCarriesNoStatementValuesNorPasswords(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { mp.Shutdown(context.Background()); tp.Shutdown(context.Background()) })
	obs, err := shardotel.NewObserver(shardotel.WithMeterProvider(mp), shardotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	db := openValued(t, obs)
	ctx, handler := tp.Tracer("test").Start(context.Background(), "handler")
	runValued(t, db.WithContext(ctx))
	handler.End()

	secrets := []string{secretUserTxt, secretNote, secretPass}
	leaks := func(where, s string) {
		for _, x := range secrets {
			if strings.Contains(s, x) {
				t.Errorf("%s carries %q: %s", where, x, s)
			}
		}
	}

	allowed := []attribute.Key{shardotel.ComponentKey, shardotel.FanoutKey, shardotel.RefusalReasonKey,
		shardotel.PlanCacheResultKey, shardotel.TwoPhaseOutcomeKey, "db.operation.name", "db.system.name", "error.type"}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := 0
	check := func(metric string, set attribute.Set) {
		points++
		for _, kv := range set.ToSlice() {
			if !slices.Contains(allowed, kv.Key) {
				t.Errorf("metric %s: attribute %s=%s is not one of the low-cardinality keys", metric, kv.Key, kv.Value.String())
			}
			leaks("metric "+metric+" attribute "+string(kv.Key), kv.Value.String())
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					check(m.Name, p.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					check(m.Name, p.Attributes)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					check(m.Name, p.Attributes)
				}
			}
		}
	}
	if points == 0 {
		t.Fatal("no metric points")
	}

	ended := spans.Ended()
	if len(ended) < 5 {
		t.Fatalf("%d spans", len(ended))
	}
	exceptions := 0
	for _, s := range ended {
		for _, e := range s.Events() {
			if e.Name == "exception" {
				exceptions++
			}
		}
	}
	if exceptions < 2 { // the duplicate key, the sharding key change
		t.Errorf("%d exception events, want the duplicate key's and the refusal's", exceptions)
	}
	for _, s := range ended {
		where := "span " + s.Name()
		leaks(where+" name", s.Name())
		leaks(where+" status", s.Status().Description)
		for _, kv := range s.Attributes() {
			leaks(where+" attribute "+string(kv.Key), kv.Value.String())
		}
		for _, e := range s.Events() {
			leaks(where+" event "+e.Name, e.Name)
			for _, kv := range e.Attributes {
				leaks(where+" event "+e.Name+" attribute "+string(kv.Key), kv.Value.String())
			}
		}
	}
}
