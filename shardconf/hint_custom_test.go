package shardconf_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// tenantHint is a Go hint algorithm: the target whose name ends in
// "_<tenant % len(targets)>". It records the values it was given.
type tenantHint struct {
	mu   sync.Mutex
	seen []shardconf.ShardingValue
}

func (a *tenantHint) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	a.mu.Lock()
	a.seen = append(a.seen, v)
	a.mu.Unlock()
	n, ok := v.Value.(int64)
	if !ok {
		return "", fmt.Errorf("tenant %v is not an integer", v.Value)
	}
	if n == 99 {
		return "elsewhere", nil // not a target: the router must refuse it
	}
	suffix := fmt.Sprintf("_%d", n%int64(len(targets)))
	for _, t := range targets {
		if strings.HasSuffix(t, suffix) {
			return t, nil
		}
	}
	return "", shardconf.ErrNoRoute
}

var (
	tenantHintOnce sync.Once
	tenantHintAlgo = &tenantHint{}
)

func registerTenantHint(t *testing.T) {
	tenantHintOnce.Do(func() {
		f := func(map[string]string) (shardconf.ShardingAlgorithm, error) { return tenantHintAlgo, nil }
		for _, name := range []string{"HINT_TEST_TENANT", "org.example.hint.TenantHintAlgorithm"} {
			if err := shardconf.RegisterAlgorithm(name, f); err != nil {
				t.Fatal(err)
			}
		}
	})
}

const customHintRules = `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:c0.db"}
  ds_1: {driver: sqlite, dsn: "file:c1.db"}
  ds_2: {driver: sqlite, dsn: "file:c2.db"}
rules:
- !SHARDING
  tables:
    t_event:
      actualDataNodes: ds_${0..2}.t_event
      databaseStrategy: {hint: {shardingAlgorithmName: tenant}}
  shardingAlgorithms:
    tenant: {type: HINT_TEST_TENANT}
`

// A Go algorithm registered with RegisterAlgorithm serves a hint strategy:
// each hint value, normalised, reaches DoSharding with the logic table and
// no column; several values route to the union.
func TestGoAlgorithmRoutesHintValues(t *testing.T) {
	registerTenantHint(t)
	r := hintRouter(t, customHintRules)
	checkRouteContext(t, r, hinted("t_event", shardconf.Hint{Database: vals(int8(4))}), "t_event", false, nil, "ds_1.t_event", nil)
	checkRouteContext(t, r, hinted("t_event", shardconf.Hint{Database: vals(0, 5)}), "t_event", false, nil, "ds_0.t_event ds_2.t_event", nil)
	tenantHintAlgo.mu.Lock()
	first := tenantHintAlgo.seen[0]
	tenantHintAlgo.mu.Unlock()
	if first != (shardconf.ShardingValue{Table: "t_event", Column: "", Value: int64(4)}) {
		t.Errorf("DoSharding got %+v, want {t_event, \"\", int64(4)}", first)
	}
	// A result that is not a target is an error, never a route.
	if _, err := r.RouteContext(hinted("t_event", shardconf.Hint{Database: vals(99)}), "t_event"); err == nil || !errors.Is(err, shardconf.ErrAlgorithmResult) {
		t.Errorf("non-target result: err = %v, want ErrAlgorithmResult", err)
	}
	// The algorithm's own error fails the statement.
	if _, err := r.RouteContext(hinted("t_event", shardconf.Hint{Database: vals("acme")}), "t_event"); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("algorithm error: err = %v", err)
	}
}

// A Java team's CLASS_BASED hint algorithm loads once its class name is
// registered in Go.
func TestClassBasedHintAlgorithmResolvesToTheRegisteredGoAlgorithm(t *testing.T) {
	registerTenantHint(t)
	rules := strings.Replace(customHintRules, "tenant: {type: HINT_TEST_TENANT}",
		"tenant: {type: CLASS_BASED, props: {strategy: HINT, algorithmClassName: org.example.hint.TenantHintAlgorithm}}", 1)
	r := hintRouter(t, rules)
	checkRouteContext(t, r, hinted("t_event", shardconf.Hint{Database: vals(7)}), "t_event", false, nil, "ds_1.t_event", nil)
	errs := configErrors(t, strings.Replace(rules, "strategy: HINT", "strategy: STANDARD", 1))
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), "set strategy: HINT") {
		t.Errorf("CLASS_BASED STANDARD in a hint strategy: %v", errs)
	}
}

// ShardingSphere 5.0.0-alpha wrote hint: {algorithmClassName: C}; it loads
// once C is registered in Go.
func TestAlphaHintClassNameResolvesToTheRegisteredGoAlgorithm(t *testing.T) {
	registerTenantHint(t)
	rules := strings.Replace(customHintRules, "databaseStrategy: {hint: {shardingAlgorithmName: tenant}}",
		"databaseStrategy: {hint: {algorithmClassName: org.example.hint.TenantHintAlgorithm}}", 1)
	r := hintRouter(t, rules)
	checkRouteContext(t, r, hinted("t_event", shardconf.Hint{Database: vals(2)}), "t_event", false, nil, "ds_2.t_event", nil)
}

// A 4.x file's hint strategies name Java classes: each loads once its
// class name is registered in Go, and a class without a Go algorithm is a
// load error at its line.
func TestShardingSphere4HintStrategyResolvesToTheRegisteredGoAlgorithm(t *testing.T) {
	registerTenantHint(t)
	const rules = `
dataSources:
  ds_0: {driver: sqlite, dsn: "file:f0.db"}
  ds_1: {driver: sqlite, dsn: "file:f1.db"}
  ds_2: {driver: sqlite, dsn: "file:f2.db"}
shardingRule:
  tables:
    t_event:
      actualDataNodes: ds_${0..2}.t_event
      databaseStrategy:
        hint:
          algorithmClassName: org.example.hint.TenantHintAlgorithm
`
	r := hintRouter(t, rules)
	checkRouteContext(t, r, hinted("t_event", shardconf.Hint{Database: vals(4)}), "t_event", false, nil, "ds_1.t_event", nil)
	errs := configErrors(t, strings.Replace(rules, "org.example.hint.TenantHintAlgorithm", "org.example.Missing", 1))
	if len(errs) != 1 || errs[0].Line != 12 || !strings.Contains(errs[0].Error(), "org.example.Missing") {
		t.Errorf("unregistered 4.x hint class: %v", errs)
	}
}
