package shardconf_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// classBasedRules shards t_order into t_order_0..3 (one data source) with
// a CLASS_BASED algorithm of the given props (a YAML flow map), used by a
// strategy of the given kind: "standard", "complex" or "hint".
func classBasedRules(kind, props string) string {
	strategy := map[string]string{
		"standard": `{standard: {shardingColumn: order_id, shardingAlgorithmName: by_class}}`,
		"complex":  `{complex: {shardingColumns: "order_id,user_id", shardingAlgorithmName: by_class}}`,
		"hint":     `{hint: {shardingAlgorithmName: by_class}}`,
	}[kind]
	return fmt.Sprintf(`
dataSources:
  ds_0: {driver: sqlite, dsn: "file:a.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order_${0..3}
      tableStrategy: %s
  shardingAlgorithms:
    by_class:
      type: CLASS_BASED
      props: %s
`, strategy, props)
}

// suffixMod4 is ShardingSphere's ClassBasedStandardShardingAlgorithmFixture
// in Go: the target ending in value % 4; every target for a range.
type suffixMod4 struct{}

func (suffixMod4) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	n, ok := v.Value.(int64)
	if !ok {
		return "", fmt.Errorf("want an integer, got %T", v.Value)
	}
	for _, t := range targets {
		if strings.HasSuffix(t, fmt.Sprint(n%4)) {
			return t, nil
		}
	}
	return "", nil
}

func (suffixMod4) DoRangeSharding(targets []string, _ shardconf.RangeShardingValue) ([]string, error) {
	return targets, nil
}

// registerClass registers suffixMod4 under a unique Java-style class name,
// recording the props each factory call gets.
func registerClass(t *testing.T) (class string, props *[]map[string]string) {
	t.Helper()
	class = uniqueAlgoName("org.example.sharding.SuffixMod4")
	var mu sync.Mutex
	props = &[]map[string]string{}
	if err := shardconf.RegisterAlgorithm(class, func(p map[string]string) (shardconf.ShardingAlgorithm, error) {
		mu.Lock()
		*props = append(*props, p)
		mu.Unlock()
		return suffixMod4{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return class, props
}

// ShardingSphere: ClassBasedShardingAlgorithmTest.assertPreciseDoSharding
// and assertRangeDoSharding.
func TestClassBasedStandardRoutesThroughTheGoAlgorithmRegisteredUnderItsClassName(t *testing.T) {
	class, props := registerClass(t)
	r := customRouter(t, classBasedRules("standard", fmt.Sprintf("{strategy: standard, algorithmClassName: %s, extra: x}", class)))
	got, err := r.Route("t_order", shardconf.Eq("order_id", 0))
	if want := "ds_0.t_order_0"; err != nil || targetList(got) != want {
		t.Errorf("Route(order_id = 0) = %s, %v; want %s", targetList(got), err, want)
	}
	got, err = r.Route("t_order", shardconf.Eq("order_id", 7))
	if want := "ds_0.t_order_3"; err != nil || targetList(got) != want {
		t.Errorf("Route(order_id = 7) = %s, %v; want %s", targetList(got), err, want)
	}
	got, err = r.Route("t_order", shardconf.Between("order_id", 2, 15))
	if err != nil || len(got) != 4 {
		t.Errorf("Route(BETWEEN 2 AND 15) = %s, %v; want the 4 tables", targetList(got), err)
	}
	want := []map[string]string{{"strategy": "standard", "algorithmClassName": class, "extra": "x"}}
	if !reflect.DeepEqual(*props, want) {
		t.Errorf("factory got props %v, want every prop as written %v", *props, want)
	}
}

func TestClassBasedClassNameMatchesTheRegistrationCaseInsensitively(t *testing.T) {
	class, _ := registerClass(t)
	r := customRouter(t, classBasedRules("standard", fmt.Sprintf("{strategy: STANDARD, algorithmClassName: %s}", strings.ToLower(class))))
	if got, err := r.Route("t_order", shardconf.Eq("order_id", 5)); err != nil || targetList(got) != "ds_0.t_order_1" {
		t.Errorf("Route = %s, %v", targetList(got), err)
	}
}

// ShardingSphere: ClassBasedShardingAlgorithmTest.assertInitWithUndefinedClass
// (ClassNotFoundException there; here a load error saying how to register).
func TestClassBasedNamingAnUnregisteredClassIsALoadErrorSayingHowToRegister(t *testing.T) {
	class := uniqueAlgoName("org.example.Unregistered")
	cfg, err := shardconf.Parse([]byte(classBasedRules("standard", fmt.Sprintf("{strategy: STANDARD, algorithmClassName: %s}", class))))
	if err != nil {
		t.Fatal(err)
	}
	cfg.File = "rules.yaml"
	_, err = shardconf.NewRouter(cfg)
	var ce *shardconf.ConfigError
	if !errors.As(err, &ce) || !errors.Is(err, shardconf.ErrAlgorithmNotRegistered) ||
		!strings.HasPrefix(err.Error(), "rules.yaml:11:") || ce.Path != "rules[0].shardingAlgorithms.by_class" ||
		!strings.Contains(err.Error(), fmt.Sprintf("shardconf.RegisterAlgorithm(%q, factory)", class)) {
		t.Errorf("err = %v; want ErrAlgorithmNotRegistered at rules.yaml:11, shardingAlgorithms.by_class, "+
			"telling to call shardconf.RegisterAlgorithm(%q, factory)", err, class)
	}
	cfg, _ = shardconf.Parse([]byte(classBasedRules("complex", fmt.Sprintf("{strategy: COMPLEX, algorithmClassName: %s}", class))))
	if _, err = shardconf.NewRouter(cfg); !errors.Is(err, shardconf.ErrAlgorithmNotRegistered) ||
		!strings.Contains(err.Error(), "shardconf.RegisterComplexAlgorithm(") {
		t.Errorf("complex: err = %v; want ErrAlgorithmNotRegistered telling to call RegisterComplexAlgorithm", err)
	}
}

// ShardingSphere: ClassBasedShardingAlgorithmTest.assertInitWithNullStrategy,
// assertInitWithWrongStrategy, assertInitWithNullClass,
// assertInitWithEmptyClassName and assertInitWithMismatchStrategy.
func TestClassBasedBadPropsAreLoadErrorsAtTheAlgorithm(t *testing.T) {
	class, _ := registerClass(t)
	complexClass := uniqueAlgoName("org.example.Complex")
	if err := shardconf.RegisterComplexAlgorithm(complexClass, func(map[string]string) (shardconf.ComplexShardingAlgorithm, error) {
		return sumComplex{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, kind, props, want string
	}{
		{"no strategy", "standard", fmt.Sprintf("{algorithmClassName: %s}", class), `prop "strategy": required`},
		{"wrong strategy", "standard", fmt.Sprintf("{strategy: wrong, algorithmClassName: %s}", class), "want STANDARD, COMPLEX or HINT"},
		{"no class", "standard", "{strategy: standard}", `prop "algorithmClassName"`},
		{"empty class", "standard", `{strategy: standard, algorithmClassName: ""}`, `prop "algorithmClassName"`},
		{"complex class as STANDARD", "standard", fmt.Sprintf("{strategy: STANDARD, algorithmClassName: %s}", complexClass), "registered with RegisterComplexAlgorithm"},
		{"standard class as COMPLEX", "complex", fmt.Sprintf("{strategy: COMPLEX, algorithmClassName: %s}", class), "registered with RegisterAlgorithm"},
		{"STANDARD in a complex strategy", "complex", fmt.Sprintf("{strategy: STANDARD, algorithmClassName: %s}", class), "set strategy: COMPLEX"},
		{"COMPLEX in a standard strategy", "standard", fmt.Sprintf("{strategy: COMPLEX, algorithmClassName: %s}", complexClass), "set strategy: STANDARD"},
		{"HINT in a standard strategy", "standard", fmt.Sprintf("{strategy: HINT, algorithmClassName: %s}", class), "set strategy: STANDARD"},
		{"STANDARD in a hint strategy", "hint", fmt.Sprintf("{strategy: STANDARD, algorithmClassName: %s}", class), "strategy"},
	}
	for _, c := range cases {
		err := customLoadErr(t, classBasedRules(c.kind, c.props))
		var ce *shardconf.ConfigError
		if !errors.As(err, &ce) || ce.Line != 11 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want a ConfigError at line 11 containing %q", c.name, err, c.want)
		}
	}
}

// sumComplex routes (order_id, user_id) to t_order_{(order_id+user_id) % 4},
// checking it gets the columns in shardingColumns order.
type sumComplex struct{}

func (sumComplex) DoSharding(targets []string, vs []shardconf.ShardingValue) (string, error) {
	if len(vs) != 2 || vs[0].Column != "order_id" || vs[1].Column != "user_id" || vs[0].Table != "t_order" {
		return "", fmt.Errorf("unexpected values %+v", vs)
	}
	a, _ := vs[0].Value.(int64)
	b, _ := vs[1].Value.(int64)
	return fmt.Sprintf("t_order_%d", (a+b)%4), nil
}

// ShardingSphere: ClassBasedShardingAlgorithmTest.assertComplexKeysDoSharding
// (its fixture returns every target; a Go complex algorithm decides one
// combination of values at a time).
func TestClassBasedComplexRoutesEveryCombinationThroughTheRegisteredComplexAlgorithm(t *testing.T) {
	class := uniqueAlgoName("org.example.SumComplex")
	if err := shardconf.RegisterComplexAlgorithm(class, func(map[string]string) (shardconf.ComplexShardingAlgorithm, error) {
		return sumComplex{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r := customRouter(t, classBasedRules("complex", fmt.Sprintf("{strategy: complex, algorithmClassName: %s}", class)))
	checkRoute := func(want string, conds ...shardconf.Cond) {
		t.Helper()
		got, err := r.Route("t_order", conds...)
		if err != nil || targetList(got) != want {
			t.Errorf("Route(%v) = %s, %v; want %s", conds, targetList(got), err, want)
		}
	}
	checkRoute("ds_0.t_order_3", shardconf.Eq("user_id", 1), shardconf.Eq("order_id", 2))
	checkRoute("ds_0.t_order_0 ds_0.t_order_1 ds_0.t_order_3", shardconf.In("user_id", 1, 2), shardconf.In("order_id", 10, 11))
	if _, err := r.Route("t_order", shardconf.Eq("user_id", 1)); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("one column missing: err = %v, want ErrMissingShardingKey", err)
	}
	if ts, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Gt("order_id", 2)); !errors.Is(err, shardconf.ErrRangeNotSupported) ||
		!strings.Contains(err.Error(), shardconf.PropAllowRangeQuery) {
		t.Errorf("range without allow-range-query: Route = %s, %v; want ErrRangeNotSupported naming %s", targetList(ts), err, shardconf.PropAllowRangeQuery)
	}
	// Scatter is the caller's explicit opt-in to every target.
	if ts, err := r.Scatter("t_order", shardconf.Eq("user_id", 1), shardconf.Gt("order_id", 2)); err != nil || len(ts) != 4 {
		t.Errorf("Scatter with a range = %s, %v; want the 4 tables", targetList(ts), err)
	}
	r = customRouter(t, classBasedRules("complex", fmt.Sprintf("{strategy: COMPLEX, algorithmClassName: %s, allow-range-query: true}", class)))
	checkRoute("ds_0.t_order_0 ds_0.t_order_1 ds_0.t_order_2 ds_0.t_order_3", shardconf.Eq("user_id", 1), shardconf.Gt("order_id", 2))
}

func TestRegisteredComplexAlgorithmByTypeAndItsWrongAnswerIsErrAlgorithmResult(t *testing.T) {
	name := uniqueAlgoName("SUM")
	if err := shardconf.RegisterComplexAlgorithm(name, func(map[string]string) (shardconf.ComplexShardingAlgorithm, error) {
		return sumComplex{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	rules := strings.Replace(classBasedRules("complex", "{}"), "type: CLASS_BASED", "type: "+name, 1)
	r := customRouter(t, rules)
	if got, err := r.Route("t_order", shardconf.Eq("user_id", 5), shardconf.Eq("order_id", 5)); err != nil || targetList(got) != "ds_0.t_order_2" {
		t.Errorf("Route = %s, %v; want ds_0.t_order_2", targetList(got), err)
	}
	// -1 % 4 is -1 in Go: t_order_-1 is no target.
	_, err := r.Route("t_order", shardconf.Eq("user_id", -2), shardconf.Eq("order_id", 1))
	if !errors.Is(err, shardconf.ErrAlgorithmResult) || !strings.Contains(err.Error(), `"t_order_-1"`) || !strings.Contains(err.Error(), name) {
		t.Errorf("err = %v; want ErrAlgorithmResult naming t_order_-1 and %s", err, name)
	}
	// A registered complex type is not a standard one.
	rules = strings.Replace(classBasedRules("standard", "{}"), "type: CLASS_BASED", "type: "+name, 1)
	if err := customLoadErr(t, rules); !strings.Contains(err.Error(), "not a standard sharding algorithm") {
		t.Errorf("complex type in a standard strategy: err = %v", err)
	}
}

// hintSuffix is ShardingSphere's ClassBasedHintShardingAlgorithmFixture in Go,
// one hint value at a time: the target whose suffix is the value.
type hintSuffix struct {
	mu      sync.Mutex
	columns []string
}

func (h *hintSuffix) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	h.mu.Lock()
	h.columns = append(h.columns, v.Column)
	h.mu.Unlock()
	return fmt.Sprintf("t_order_%v", v.Value), nil
}

// ShardingSphere: ClassBasedShardingAlgorithmTest.assertHintDoSharding (its
// fixture returns every target; here the hint values 0..3 name them all).
func TestClassBasedHintRoutesHintValuesThroughTheRegisteredStandardAlgorithm(t *testing.T) {
	class, h := uniqueAlgoName("org.example.HintSuffix"), &hintSuffix{}
	if err := shardconf.RegisterAlgorithm(class, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return h, nil }); err != nil {
		t.Fatal(err)
	}
	r := customRouter(t, classBasedRules("hint", fmt.Sprintf("{strategy: HINT, algorithmClassName: %s}", class)))
	ctx := shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Table: []any{0, 1, 2, 3}})
	got, err := r.RouteContext(ctx, "t_order")
	if err != nil || len(got) != 4 {
		t.Errorf("RouteContext(hint 0..3) = %s, %v; want the 4 tables", targetList(got), err)
	}
	ctx = shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Table: []any{uint16(2)}})
	if got, err := r.RouteContext(ctx, "t_order"); err != nil || targetList(got) != "ds_0.t_order_2" {
		t.Errorf("RouteContext(hint 2) = %s, %v; want ds_0.t_order_2", targetList(got), err)
	}
	ctx = shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Table: []any{9}})
	if _, err := r.RouteContext(ctx, "t_order"); !errors.Is(err, shardconf.ErrAlgorithmResult) {
		t.Errorf("RouteContext(hint 9): err = %v, want ErrAlgorithmResult", err)
	}
	if _, err := r.Route("t_order"); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("Route without a hint: err = %v, want ErrMissingShardingKey", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.columns {
		if c != "" {
			t.Errorf("a hint value reached the algorithm with Column %q, want \"\"", c)
		}
	}
}

func TestRegisteredTypeServesAHintStrategyDirectly(t *testing.T) {
	name, h := uniqueAlgoName("HINT_SUFFIX"), &hintSuffix{}
	if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return h, nil }); err != nil {
		t.Fatal(err)
	}
	rules := strings.Replace(classBasedRules("hint", "{}"), "type: CLASS_BASED", "type: "+name, 1)
	r := customRouter(t, rules)
	ctx := shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Table: []any{"1", 3}})
	if got, err := r.RouteContext(ctx, "t_order"); err != nil || targetList(got) != "ds_0.t_order_1 ds_0.t_order_3" {
		t.Errorf("RouteContext = %s, %v; want ds_0.t_order_1 ds_0.t_order_3", targetList(got), err)
	}
}
