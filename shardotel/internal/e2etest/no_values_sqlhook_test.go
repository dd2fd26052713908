package e2etest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/shardotel"
	"github.com/shardkey/shardkey/sqlhook"
)

// runSQLHookValued runs, through a sqlhook connector with obs on two
// SQLite files, statements carrying the secret values as literals and as
// bound arguments: writes, reads, a duplicate key the database refuses,
// and a sharding key change and a missing sharding key sqlhook refuses
// (its errors quote the statement). It returns the errors the caller saw.
func runSQLHookValued(t *testing.T, ctx context.Context, obs *shardotel.Observer) []error {
	t.Helper()
	dir := t.TempDir()
	cfg, err := shardconf.Parse(fmt.Appendf(nil, `
dataSources:
  ds_0: {driver: sqlite, dsn: %q}
  ds_1: {driver: sqlite, dsn: %q}
rules:
- !SHARDING
  tables:
    t_valued:
      actualDataNodes: ds_${0..1}.t_valued_${0..1}
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
	t.Cleanup(func() { db.Close() })
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`CREATE TABLE t_valued (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, note TEXT)`)
	mustExec(`INSERT INTO t_valued (order_id, user_id, note) VALUES (?, ?, ?)`, 1, secretUser, secretNote)
	mustExec(`INSERT INTO t_valued (order_id, user_id, note) VALUES (2, 2, '` + secretNote + `')`)
	var note string
	if err := db.QueryRowContext(ctx, `SELECT note FROM t_valued WHERE user_id = `+secretUserTxt+` AND order_id = 1`).Scan(&note); err != nil || note != secretNote {
		t.Fatalf("read %q, %v", note, err)
	}
	var failed []error
	for _, q := range []string{
		`INSERT INTO t_valued (order_id, user_id, note) VALUES (1, ` + secretUserTxt + `, '` + secretNote + `')`, // duplicate key
		`UPDATE t_valued SET user_id = ` + secretUserTxt + ` WHERE user_id = 2 AND order_id = 2`,                 // sharding key change
		`INSERT INTO t_valued (order_id, note) VALUES (3, '` + secretNote + `')`,                                 // no sharding key
	} {
		_, err := db.ExecContext(ctx, q)
		if err == nil {
			t.Fatalf("%s was accepted", q)
		}
		failed = append(failed, err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE t_valued SET note = ? WHERE user_id = ? AND order_id = 1`, secretNote+"2", secretUser); err != nil {
		t.Fatal(err)
	}
	return failed
}

// TestSQLHookTelemetryCarriesNoStatementValues: through sqlhook, whose
// errors quote the statement with its literals, spans (names, status,
// attributes, events) and metric attributes carry no value a statement
// bound or wrote, and no statement text; the errors the caller got did
// quote them. With WithErrorText the exception messages are the texts.
func TestSQLHookTelemetryCarriesNoStatementValues(t *testing.T) {
	for _, withText := range []bool{false, true} {
		t.Run(fmt.Sprintf("WithErrorText=%v", withText), func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			t.Cleanup(func() { mp.Shutdown(context.Background()); tp.Shutdown(context.Background()) })
			opts := []shardotel.Option{shardotel.WithMeterProvider(mp), shardotel.WithTracerProvider(tp)}
			if withText {
				opts = append(opts, shardotel.WithErrorText())
			}
			obs, err := shardotel.NewObserver(opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx, handler := tp.Tracer("test").Start(context.Background(), "handler")
			failed := runSQLHookValued(t, ctx, obs)
			handler.End()

			quoted := 0
			for _, err := range failed {
				if strings.Contains(err.Error(), secretUserTxt) || strings.Contains(err.Error(), secretNote) {
					quoted++
				}
			}
			if quoted == 0 {
				t.Fatalf("no error quotes a value (%q): the test shows nothing", failed)
			}

			secrets := []string{secretUserTxt, secretNote, "t_valued (order_id", "SET user_id"}
			var texts []string // every text telemetry carries, with where it is
			for _, s := range spans.Ended() {
				where := "span " + s.Name()
				texts = append(texts, where+" name: "+s.Name(), where+" status: "+s.Status().Description)
				for _, kv := range s.Attributes() {
					texts = append(texts, where+" attribute "+string(kv.Key)+": "+kv.Value.String())
				}
				for _, e := range s.Events() {
					texts = append(texts, where+" event: "+e.Name)
					for _, kv := range e.Attributes {
						texts = append(texts, where+" event "+e.Name+" attribute "+string(kv.Key)+": "+kv.Value.String())
					}
				}
			}
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					switch d := m.Data.(type) {
					case metricdata.Sum[int64]:
						for _, p := range d.DataPoints {
							texts = append(texts, "metric "+m.Name+": "+render(p.Attributes))
						}
					case metricdata.Histogram[float64]:
						for _, p := range d.DataPoints {
							texts = append(texts, "metric "+m.Name+": "+render(p.Attributes))
						}
					case metricdata.Histogram[int64]:
						for _, p := range d.DataPoints {
							texts = append(texts, "metric "+m.Name+": "+render(p.Attributes))
						}
					}
				}
			}

			exceptions, leaked := 0, 0
			for _, text := range texts {
				if strings.Contains(text, " event exception attribute exception.message: ") {
					exceptions++
				}
				for _, x := range secrets {
					if strings.Contains(text, x) {
						leaked++
						if !withText {
							t.Errorf("%s (carries %q)", text, x)
						}
						break
					}
				}
			}
			if exceptions < 4 { // the duplicate key's statement and target, two refusals
				t.Errorf("%d exception events, want the duplicate key's and the refusals'", exceptions)
			}
			if withText && leaked == 0 {
				t.Error("WithErrorText: no exception message carries the error's text")
			}
		})
	}
}
