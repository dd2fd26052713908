package e2etest

import (
	"bufio"
	"context"
	"database/sql/driver"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"modernc.org/sqlite"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/shardotel"
	"github.com/shardkey/shardkey/sqlhook"
)

// Example_sqlhookToPrometheus routes statements through sqlhook on two
// SQLite files with a shardotel Observer (DDL on all four tables, four
// INSERTs keyed by the rule's SNOWFLAKE, a count over one user's two
// tables and one over all four, an UPDATE refused), registers that
// SNOWFLAKE generator, and prints the shardkey_* counters of the
// Prometheus page (histograms, which hold timings, left out).
func Example_sqlhookToPrometheus() {
	ctx := context.Background()
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		fmt.Println(err)
		return
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(ctx)
	obs, err := shardotel.NewObserver(shardotel.WithMeterProvider(mp), shardotel.WithDBSystem("sqlite"))
	if err != nil {
		fmt.Println(err)
		return
	}

	dir, _ := os.MkdirTemp("", "shardotel-example-")
	defer os.RemoveAll(dir)
	cfg, err := shardconf.Parse([]byte(`
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 1, max-vibration-offset: 1}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// A sequence scope of its own: generators of one ID space share their
	// counters in a process (keygen.SequenceScope), and this example's
	// count of keys must not include other tests' keys.
	router, err := shardconf.NewRouter(cfg, shardconf.WithKeyGenOptions(keygen.WithSequenceScope(keygen.NewSequenceScope())))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer router.Close()
	_, gen, _ := router.KeyGenerator("t_order")
	reg, err := shardotel.RegisterGenerator(gen.(keygen.StatsReporter), shardotel.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Unregister()

	// OpenWith, with the router built here, so that the generator
	// registered above is the one the INSERTs draw their keys from.
	db, err := sqlhook.OpenWith(router, map[string]driver.Connector{
		"ds_0": sqliteFile(filepath.Join(dir, "ds_0.db")), "ds_1": sqliteFile(filepath.Join(dir, "ds_1.db")),
	}, sqlhook.WithScatter(), sqlhook.WithObserver(obs))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	db.ExecContext(ctx, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)`)
	for user := range 4 {
		db.ExecContext(ctx, `INSERT INTO t_order (user_id) VALUES (?)`, user) // order_id from the SNOWFLAKE
	}
	var n int
	db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_order WHERE user_id = ?`, 1).Scan(&n) // both tables of ds_1
	db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_order`).Scan(&n)                      // all four (WithScatter)
	db.ExecContext(ctx, `UPDATE t_order SET user_id = 2 WHERE user_id = 1`)               // would move rows: refused

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
		if line := sc.Text(); strings.HasPrefix(line, "shardkey_") && strings.Contains(line, "_total{") {
			fmt.Println(line)
		}
	}
	// Output:
	// shardkey_keygen_clock_back_steps_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_clock_waits_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_keys_issued_total{shardkey_keygen_type="SNOWFLAKE"} 4
	// shardkey_keygen_lease_refusals_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_lease_renewal_failures_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_lease_renewals_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_keygen_sequence_waits_total{shardkey_keygen_type="SNOWFLAKE"} 0
	// shardkey_route_merged_rows_total{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="all"} 1
	// shardkey_route_merged_rows_total{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="some"} 1
	// shardkey_route_plan_cache_lookups_total{shardkey_plan_cache_result="hit"} 3
	// shardkey_route_plan_cache_lookups_total{shardkey_plan_cache_result="miss"} 5
	// shardkey_route_refusals_total{shardkey_component="sqlhook",shardkey_refusal_reason="sharding_key_change"} 1
	// shardkey_route_statements_total{db_operation_name="insert",shardkey_component="sqlhook",shardkey_fanout="one"} 4
	// shardkey_route_statements_total{db_operation_name="other",shardkey_component="sqlhook",shardkey_fanout="all"} 1
	// shardkey_route_statements_total{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="all"} 1
	// shardkey_route_statements_total{db_operation_name="select",shardkey_component="sqlhook",shardkey_fanout="some"} 1
}

// sqliteFile connects to a SQLite file through modernc.org/sqlite.
type sqliteFile string

func (f sqliteFile) Connect(context.Context) (driver.Conn, error) {
	return (&sqlite.Driver{}).Open(string(f))
}
func (f sqliteFile) Driver() driver.Driver { return &sqlite.Driver{} }
