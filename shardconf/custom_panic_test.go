package shardconf_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/shardconf"
)

// panicky panics on the value "boom" (any column) and otherwise routes
// to the first target; as a RangeShardingAlgorithm it panics on any range.
type panicky struct{}

func (panicky) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	if v.Value == "boom" {
		panic("boom in DoSharding")
	}
	return targets[0], nil
}

func (panicky) DoRangeSharding([]string, shardconf.RangeShardingValue) ([]string, error) {
	var m map[string]int
	//lint:ignore SA5000 the panic is the point: a runtime error, as a real bug would be
	m["x"]++
	return nil, nil
}

type panickyComplex struct{}

func (panickyComplex) DoSharding(targets []string, vs []shardconf.ShardingValue) (string, error) {
	for _, v := range vs {
		if v.Value == "boom" {
			panic(fmt.Errorf("boom in complex DoSharding"))
		}
	}
	return targets[0], nil
}

// wantPanicErr checks that err wraps ErrAlgorithmPanic and shows the panic.
func wantPanicErr(t *testing.T, what string, err error, shows string) {
	t.Helper()
	if !errors.Is(err, shardconf.ErrAlgorithmPanic) || !strings.Contains(err.Error(), shows) {
		t.Errorf("%s: err = %v; want ErrAlgorithmPanic showing %q", what, err, shows)
	}
}

// routeNoPanic routes, failing the test (not the process) if a panic escapes.
func routeNoPanic(t *testing.T, route func() ([]shardconf.Target, error)) (ts []shardconf.Target, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("a Go algorithm's panic escaped the router: %v", p)
		}
	}()
	return route()
}

func TestGoAlgorithmPanicFailsTheStatementWithErrAlgorithmPanic(t *testing.T) {
	name := uniqueAlgoName("PANICKY")
	if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return panicky{}, nil }); err != nil {
		t.Fatal(err)
	}
	r := customRouter(t, customRules(name, "{}"))
	for _, conds := range [][]shardconf.Cond{
		{shardconf.Eq("user_id", 1), shardconf.Eq("order_id", "boom")},
		{shardconf.Eq("user_id", "boom"), shardconf.Eq("order_id", 1)},
		{shardconf.Eq("user_id", 1), shardconf.In("order_id", 1, "boom", 2)},
	} {
		ts, err := routeNoPanic(t, func() ([]shardconf.Target, error) { return r.Route("t_order", conds...) })
		wantPanicErr(t, fmt.Sprint(conds), err, "boom in DoSharding")
		if ts != nil {
			t.Errorf("%v: a route (%s) beside the error", conds, targetList(ts))
		}
	}
	_, err := routeNoPanic(t, func() ([]shardconf.Target, error) {
		return r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Gt("order_id", 5))
	})
	wantPanicErr(t, "range", err, "assignment to entry in nil map")
	// The algorithm keeps serving after a panic.
	if ts, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Eq("order_id", 2)); err != nil || targetList(ts) != "ds_0.t_order_0" {
		t.Errorf("after a panic: Route = %s, %v", targetList(ts), err)
	}
	// A hint strategy routes hint values through the same DoSharding.
	r = customRouter(t, strings.Replace(classBasedRules("hint", "{}"), "type: CLASS_BASED", "type: "+name, 1))
	ctx := shardconf.WithHint(context.Background(), "t_order", shardconf.Hint{Table: []any{"boom"}})
	_, err = routeNoPanic(t, func() ([]shardconf.Target, error) { return r.RouteContext(ctx, "t_order") })
	wantPanicErr(t, "hint", err, "boom in DoSharding")
}

func TestComplexGoAlgorithmPanicFailsTheStatementWithErrAlgorithmPanic(t *testing.T) {
	name := uniqueAlgoName("PANICKY_COMPLEX")
	if err := shardconf.RegisterComplexAlgorithm(name, func(map[string]string) (shardconf.ComplexShardingAlgorithm, error) {
		return panickyComplex{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r := customRouter(t, strings.Replace(classBasedRules("complex", "{}"), "type: CLASS_BASED", "type: "+name, 1))
	_, err := routeNoPanic(t, func() ([]shardconf.Target, error) {
		return r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.In("order_id", 3, "boom"))
	})
	wantPanicErr(t, "complex", err, "boom in complex DoSharding")
}

func TestGoAlgorithmFactoryPanicIsALoadError(t *testing.T) {
	name := uniqueAlgoName("PANICKY_FACTORY")
	if err := shardconf.RegisterAlgorithm(name, func(props map[string]string) (shardconf.ShardingAlgorithm, error) {
		panic("factory boom")
	}); err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Parse([]byte(customRules(name, "{}")))
	if err != nil {
		t.Fatal(err)
	}
	var r *shardconf.Router
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("a factory's panic escaped NewRouter: %v", p)
			}
		}()
		r, err = shardconf.NewRouter(cfg)
	}()
	wantPanicErr(t, "factory", err, "factory boom")
	var ce *shardconf.ConfigError
	if r != nil || !errors.As(err, &ce) || ce.Line == 0 {
		t.Errorf("NewRouter = %v, %v; want a load error with a line", r, err)
	}
	name = uniqueAlgoName("PANICKY_COMPLEX_FACTORY")
	if err := shardconf.RegisterComplexAlgorithm(name, func(map[string]string) (shardconf.ComplexShardingAlgorithm, error) {
		panic("complex factory boom")
	}); err != nil {
		t.Fatal(err)
	}
	if cfg, err = shardconf.Parse([]byte(strings.Replace(classBasedRules("complex", "{}"), "type: CLASS_BASED", "type: "+name, 1))); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("a complex factory's panic escaped NewRouter: %v", p)
			}
		}()
		_, err = shardconf.NewRouter(cfg)
	}()
	wantPanicErr(t, "complex factory", err, "complex factory boom")
}

func TestGoAlgorithmSeesTimesWithoutAMonotonicReading(t *testing.T) {
	// time.Now() carries a monotonic reading that String() prints
	// ("m=+0.01"): an algorithm hashing fmt.Sprint(v.Value) would place
	// one instant differently on every call.
	name := uniqueAlgoName("SPRINT")
	seen := make(chan string, 8)
	if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
		return algoFunc(func(targets []string, v shardconf.ShardingValue) (string, error) {
			if _, ok := v.Value.(time.Time); ok {
				seen <- fmt.Sprint(v.Value)
			}
			return targets[0], nil
		}), nil
	}); err != nil {
		t.Fatal(err)
	}
	r := customRouter(t, customRules(name, "{}"))
	now := time.Now()
	if _, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Eq("order_id", now)); err != nil {
		t.Fatal(err)
	}
	if got, want := <-seen, now.Round(0).String(); got != want {
		t.Errorf("the algorithm saw %s, want %s", got, want)
	}
}
