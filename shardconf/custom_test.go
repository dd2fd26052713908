package shardconf_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/shardconf"
)

// The registry is process-wide and has no unregister: every test registers
// its own names, unique even under -count N.
var customSeq atomic.Int64

func uniqueAlgoName(prefix string) string {
	return fmt.Sprintf("%s_%d", prefix, customSeq.Add(1))
}

// decadeAlgo routes an integer v to targets[(v/10) % len(targets)]: unlike
// MOD, so that a test cannot pass by routing through a built-in. It
// records every value it is given.
type decadeAlgo struct {
	mu   sync.Mutex
	seen []shardconf.ShardingValue
}

func (a *decadeAlgo) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	a.mu.Lock()
	a.seen = append(a.seen, v)
	a.mu.Unlock()
	n, ok := v.Value.(int64)
	if !ok {
		return "", fmt.Errorf("want an int64, got %T", v.Value)
	}
	return targets[(n/10)%int64(len(targets))], nil
}

// registerDecade registers a fresh decadeAlgo under a unique name and
// returns the name and the instance every factory call hands out.
func registerDecade(t *testing.T) (string, *decadeAlgo) {
	t.Helper()
	name, a := uniqueAlgoName("DECADE"), &decadeAlgo{}
	if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return a, nil }); err != nil {
		t.Fatal(err)
	}
	return name, a
}

// customRules shards t_order into ds_0..1 by user_id and t_order_0..3 by
// order_id, both with algorithm type typ (props as a YAML flow map).
func customRules(typ, props string) string {
	return fmt.Sprintf(`
dataSources:
  ds_0: {driver: sqlite, dsn: "file:a.db"}
  ds_1: {driver: sqlite, dsn: "file:b.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..3}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}}
  shardingAlgorithms:
    by_user: {type: %[1]s, props: %[2]s}
    by_order: {type: %[1]s, props: %[2]s}
`, typ, props)
}

func customRouter(t *testing.T, rules string) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	return r
}

// customLoadErr is the NewRouter error for rules (Parse must succeed).
func customLoadErr(t *testing.T, rules string) error {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	_, err = shardconf.NewRouter(cfg)
	if err == nil {
		t.Fatal("NewRouter succeeded, want an error")
	}
	return err
}

func targetList(ts []shardconf.Target) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, " ")
}

func TestRegisteredAlgorithmRoutesByItsOwnRuleInYAML(t *testing.T) {
	name, _ := registerDecade(t)
	r := customRouter(t, customRules(strings.ToLower(name), "{}")) // type: is case-insensitive
	cases := []struct {
		conds []shardconf.Cond
		want  string
	}{
		{[]shardconf.Cond{shardconf.Eq("user_id", 15), shardconf.Eq("order_id", 23)}, "ds_1.t_order_2"},
		{[]shardconf.Cond{shardconf.Eq("user_id", 0), shardconf.Eq("order_id", 39)}, "ds_0.t_order_3"},
		{[]shardconf.Cond{shardconf.Eq("user_id", 20), shardconf.In("order_id", 5, 13, 41)}, "ds_0.t_order_0 ds_0.t_order_1"},
	}
	for _, c := range cases {
		got, err := r.Route("t_order", c.conds...)
		if err != nil || targetList(got) != c.want {
			t.Errorf("Route(%v) = %s, %v; want %s", c.conds, targetList(got), err, c.want)
		}
	}
	got, err := r.Scatter("t_order", shardconf.Eq("order_id", 11))
	if want := "ds_0.t_order_1 ds_1.t_order_1"; err != nil || targetList(got) != want {
		t.Errorf("Scatter = %s, %v; want %s", targetList(got), err, want)
	}
	if _, err := r.Route("t_order", shardconf.Eq("order_id", 11)); !errors.Is(err, shardconf.ErrMissingShardingKey) {
		t.Errorf("Route without user_id: err = %v, want ErrMissingShardingKey", err)
	}
}

func TestRegisteredAlgorithmGetsTableColumnAndItsStrategyTargets(t *testing.T) {
	name := uniqueAlgoName("TARGETS")
	var mu sync.Mutex
	got := map[string][]string{}
	err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
		return algoFunc(func(targets []string, v shardconf.ShardingValue) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			got[v.Table+"."+v.Column] = append([]string(nil), targets...)
			return targets[0], nil
		}), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := customRouter(t, customRules(name, "{}"))
	if _, err := r.Route("T_ORDER", shardconf.Eq("User_ID", 1), shardconf.Eq("order_id", 2)); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"t_order.user_id": {"ds_0", "ds_1"},
		"t_order.order_id": {"t_order_0", "t_order_1", "t_order_2", "t_order_3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("algorithm saw %v, want %v", got, want)
	}
}

// algoFunc adapts a function to ShardingAlgorithm.
type algoFunc func(targets []string, v shardconf.ShardingValue) (string, error)

func (f algoFunc) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	return f(targets, v)
}

func TestRegisteredAlgorithmSeesValuesNormalisedAsTheRouterDoes(t *testing.T) {
	name := uniqueAlgoName("SEEN")
	var mu sync.Mutex
	seen := map[string]any{} // by column
	if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
		return algoFunc(func(targets []string, v shardconf.ShardingValue) (string, error) {
			mu.Lock()
			seen[v.Column] = v.Value
			mu.Unlock()
			return targets[0], nil
		}), nil
	}); err != nil {
		t.Fatal(err)
	}
	r := customRouter(t, customRules(name, "{}"))
	ts := time.Date(2024, 2, 1, 3, 30, 0, 0, time.FixedZone("X", 8*3600))
	type myInt int16
	cases := []struct {
		in   any
		want any
	}{
		{7, int64(7)}, {uint8(7), int64(7)}, {myInt(-7), int64(-7)}, {keygen.ID(1 << 40), int64(1 << 40)},
		{big.NewInt(7), int64(7)}, {json.Number("7.0"), int64(7)}, {7.0, int64(7)}, {sql.NullInt64{Int64: 7, Valid: true}, int64(7)},
		{uint64(1 << 63), uint64(1 << 63)}, {"7", "7"}, {[]byte("abc"), "abc"}, {ts, ts},
		{int8(-8), int64(-8)}, {int32(-32), int64(-32)}, {uint16(16), int64(16)}, {uint32(1 << 31), int64(1 << 31)},
		{uint(7), int64(7)}, {float32(7), int64(7)}, {json.Number("18446744073709551615"), uint64(1<<64 - 1)},
		{new(big.Int).SetUint64(1<<64 - 1), uint64(1<<64 - 1)}, {uint64(math.MaxInt64), int64(math.MaxInt64)},
		{sql.NullString{String: "x", Valid: true}, "x"}, {ts.In(time.UTC), ts.In(time.UTC)},
	}
	for _, c := range cases {
		if _, err := r.Route("t_order", shardconf.Eq("user_id", 0), shardconf.Eq("order_id", c.in)); err != nil {
			t.Errorf("Route(%T %v): %v", c.in, c.in, err)
			continue
		}
		mu.Lock()
		got := seen["order_id"]
		mu.Unlock()
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%T %v reached the algorithm as %T %v, want %T %v", c.in, c.in, got, got, c.want, c.want)
		}
	}
	for _, bad := range []any{nil, 1.5, (*int)(nil), sql.NullInt64{}, sql.NullString{}, json.Number("1e30"), new(big.Int).Lsh(big.NewInt(1), 64), float32(0.5)} {
		mu.Lock()
		delete(seen, "order_id")
		mu.Unlock()
		_, err := r.Route("t_order", shardconf.Eq("user_id", 0), shardconf.Eq("order_id", bad))
		mu.Lock()
		_, reached := seen["order_id"]
		mu.Unlock()
		if err == nil || reached {
			t.Errorf("Route(order_id = %v): err = %v, reached the algorithm: %v; a NULL or a fraction must be refused before it", bad, err, reached)
		}
	}
}

func TestRegisteredAlgorithmAnswerOutsideItsTargetsIsErrAlgorithmResult(t *testing.T) {
	for _, answer := range []string{"t_order_9", "", "T_ORDER_1", "ds_0"} {
		name := uniqueAlgoName("WRONG")
		if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
			return algoFunc(func(targets []string, v shardconf.ShardingValue) (string, error) {
				if v.Column == "user_id" {
					return targets[0], nil
				}
				return answer, nil
			}), nil
		}); err != nil {
			t.Fatal(err)
		}
		r := customRouter(t, customRules(name, "{}"))
		ts, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Eq("order_id", 2))
		if !errors.Is(err, shardconf.ErrAlgorithmResult) || !strings.Contains(err.Error(), name) || ts != nil {
			t.Errorf("answer %q: Route = %v, %v; want ErrAlgorithmResult naming %s", answer, ts, err, name)
		}
	}
}

var errTenantUnknown = errors.New("tenant unknown")

func TestRegisteredAlgorithmErrorFailsTheStatementAndKeepsItsSentinel(t *testing.T) {
	name := uniqueAlgoName("FAILS")
	if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
		return algoFunc(func(targets []string, v shardconf.ShardingValue) (string, error) {
			if v.Value == int64(404) {
				return "", fmt.Errorf("%w: no partition for %v (%w)", shardconf.ErrNoRoute, v.Value, errTenantUnknown)
			}
			return targets[0], nil
		}), nil
	}); err != nil {
		t.Fatal(err)
	}
	r := customRouter(t, customRules(name, "{}"))
	_, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.In("order_id", 1, 404))
	if !errors.Is(err, shardconf.ErrNoRoute) || !errors.Is(err, errTenantUnknown) ||
		!strings.Contains(err.Error(), "t_order") || !strings.Contains(err.Error(), name) {
		t.Errorf("err = %v; want ErrNoRoute and the algorithm's own error, naming the table and %s", err, name)
	}
}

func TestRangeOnRegisteredAlgorithmWithoutDoRangeShardingIsErrRangeNotSupported(t *testing.T) {
	name, _ := registerDecade(t)
	r := customRouter(t, customRules(name, "{}"))
	for _, c := range []shardconf.Cond{shardconf.Between("order_id", 1, 15), shardconf.Gt("order_id", 3), shardconf.Le("order_id", 3)} {
		for _, route := range []func(string, ...shardconf.Cond) ([]shardconf.Target, error){r.Route, r.Scatter} {
			ts, err := route("t_order", shardconf.Eq("user_id", 1), c)
			if !errors.Is(err, shardconf.ErrRangeNotSupported) || !strings.Contains(err.Error(), shardconf.PropAllowRangeQuery) || ts != nil {
				t.Errorf("%v: %v, %v; want ErrRangeNotSupported mentioning %s", c, ts, err, shardconf.PropAllowRangeQuery)
			}
		}
	}
}

func TestRangeOnRegisteredAlgorithmWithAllowRangeQueryGoesToEveryTarget(t *testing.T) {
	name, _ := registerDecade(t)
	r := customRouter(t, customRules(name, "{allow-range-query: TRUE}"))
	got, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Between("order_id", 1, 15))
	if want := "ds_0.t_order_0 ds_0.t_order_1 ds_0.t_order_2 ds_0.t_order_3"; err != nil || targetList(got) != want {
		t.Errorf("Route = %s, %v; want %s", targetList(got), err, want)
	}
	// An equality on the same column still narrows the range's targets.
	got, err = r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Gt("order_id", 1), shardconf.Eq("order_id", 21))
	if want := "ds_0.t_order_2"; err != nil || targetList(got) != want {
		t.Errorf("Route = %s, %v; want %s", targetList(got), err, want)
	}
	r = customRouter(t, customRules(name, "{allow-range-query: false}"))
	if _, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Lt("order_id", 9)); !errors.Is(err, shardconf.ErrRangeNotSupported) {
		t.Errorf("allow-range-query: false: err = %v, want ErrRangeNotSupported", err)
	}
}

func TestAllowRangeQueryThatIsNotABooleanIsALoadErrorAtTheAlgorithm(t *testing.T) {
	name, _ := registerDecade(t)
	err := customLoadErr(t, customRules(name, "{allow-range-query: yes please}"))
	var ce *shardconf.ConfigError
	if !errors.As(err, &ce) || ce.Line != 13 || !strings.Contains(ce.Path, "shardingAlgorithms.by_user") ||
		!strings.Contains(err.Error(), "allow-range-query") {
		t.Errorf("err = %v; want a ConfigError at line 13, shardingAlgorithms.by_user, naming allow-range-query", err)
	}
}

// rangeDecade is decadeAlgo that also routes ranges of integers: it
// returns the targets of every decade the range touches, and records the
// ranges it is asked.
type rangeDecade struct {
	decadeAlgo
	ranges []shardconf.Range
	answer []string // when set, returned as it is
}

func (a *rangeDecade) DoRangeSharding(targets []string, v shardconf.RangeShardingValue) ([]string, error) {
	a.mu.Lock()
	a.ranges = append(a.ranges, v.Range)
	a.mu.Unlock()
	if a.answer != nil {
		return a.answer, nil
	}
	if v.Range.Lower.Unbounded() || v.Range.Upper.Unbounded() {
		return targets, nil
	}
	lo, hi := v.Range.Lower.Value.(int64), v.Range.Upper.Value.(int64)
	if !v.Range.Lower.Inclusive {
		lo++
	}
	if !v.Range.Upper.Inclusive {
		hi--
	}
	var out []string
	for d := lo / 10; d <= hi/10 && d-lo/10 < int64(len(targets)); d++ {
		out = append(out, targets[d%int64(len(targets))])
	}
	return out, nil
}

func registerRangeDecade(t *testing.T) (string, *rangeDecade) {
	t.Helper()
	name, a := uniqueAlgoName("RANGE_DECADE"), &rangeDecade{}
	if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return a, nil }); err != nil {
		t.Fatal(err)
	}
	return name, a
}

func TestRangeShardingAlgorithmRoutesRangesToItsAnswer(t *testing.T) {
	name, a := registerRangeDecade(t)
	r := customRouter(t, customRules(name, "{}"))
	i64 := func(n int64) any { return n }
	cases := []struct {
		conds []shardconf.Cond
		want  string
		rng   shardconf.Range
	}{
		{[]shardconf.Cond{shardconf.Between("order_id", 1, 15)}, "ds_0.t_order_0 ds_0.t_order_1",
			shardconf.Range{Lower: shardconf.Bound{Value: i64(1), Inclusive: true}, Upper: shardconf.Bound{Value: i64(15), Inclusive: true}}},
		{[]shardconf.Cond{shardconf.Gt("order_id", 19), shardconf.Lt("order_id", 30)}, "ds_0.t_order_2",
			shardconf.Range{Lower: shardconf.Bound{Value: i64(19)}, Upper: shardconf.Bound{Value: i64(30)}}},
		// A fraction is an integral bound: >= 9.5 is >= 10, <= 20.5 is <= 20.
		{[]shardconf.Cond{shardconf.Between("order_id", 9.5, 20.5)}, "ds_0.t_order_1 ds_0.t_order_2",
			shardconf.Range{Lower: shardconf.Bound{Value: i64(10), Inclusive: true}, Upper: shardconf.Bound{Value: i64(20), Inclusive: true}}},
		{[]shardconf.Cond{shardconf.Ge("order_id", 5)}, "ds_0.t_order_0 ds_0.t_order_1 ds_0.t_order_2 ds_0.t_order_3",
			shardconf.Range{Lower: shardconf.Bound{Value: i64(5), Inclusive: true}}},
	}
	for _, c := range cases {
		got, err := r.Route("t_order", append([]shardconf.Cond{shardconf.Eq("user_id", 1)}, c.conds...)...)
		if err != nil || targetList(got) != c.want {
			t.Errorf("Route(%v) = %s, %v; want %s", c.conds, targetList(got), err, c.want)
		}
		if last := a.ranges[len(a.ranges)-1]; !reflect.DeepEqual(last, c.rng) {
			t.Errorf("Route(%v): algorithm asked %+v, want %+v", c.conds, last, c.rng)
		}
	}
	if !a.ranges[3].Upper.Unbounded() || a.ranges[3].Lower.Unbounded() {
		t.Errorf("Ge: Unbounded() = %v/%v, want false/true", a.ranges[3].Lower.Unbounded(), a.ranges[3].Upper.Unbounded())
	}
	// An empty answer means no row matches: an empty route, not an error.
	a.answer = []string{}
	if got, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Gt("order_id", 1000)); err != nil || len(got) != 0 {
		t.Errorf("empty answer: Route = %v, %v; want no targets", got, err)
	}
	a.answer = []string{"t_order_1", "t_order_7"}
	if _, err := r.Route("t_order", shardconf.Eq("user_id", 1), shardconf.Gt("order_id", 1)); !errors.Is(err, shardconf.ErrAlgorithmResult) ||
		!strings.Contains(err.Error(), `"t_order_7"`) {
		t.Errorf("unknown target in a range answer: err = %v, want ErrAlgorithmResult naming t_order_7", err)
	}
}

func TestRegisterRefusesBuiltinEmptyNilAndDuplicateNames(t *testing.T) {
	ok := func(map[string]string) (shardconf.ShardingAlgorithm, error) { return &decadeAlgo{}, nil }
	okc := func(map[string]string) (shardconf.ComplexShardingAlgorithm, error) { return nil, nil }
	taken := uniqueAlgoName("Taken")
	if err := shardconf.RegisterAlgorithm(taken, ok); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		err  error
		reg  func() error
	}{
		{"MOD", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterAlgorithm("MOD", ok) }},
		{"inline (any case)", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterAlgorithm("inline", ok) }},
		{"CLASS_BASED", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterAlgorithm("CLASS_BASED", ok) }},
		{"HINT_INLINE", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterAlgorithm("HINT_INLINE", ok) }},
		{"SNOWFLAKE_BITS", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterAlgorithm("SNOWFLAKE_BITS", ok) }},
		{"COMPLEX_INLINE as complex", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterComplexAlgorithm("COMPLEX_INLINE", okc) }},
		{"twice", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterAlgorithm(taken, ok) }},
		{"twice, other case", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterAlgorithm(strings.ToUpper(taken), ok) }},
		{"twice, as complex", shardconf.ErrDuplicateAlgorithm, func() error { return shardconf.RegisterComplexAlgorithm(taken, okc) }},
		{"empty", shardconf.ErrInvalidRegistration, func() error { return shardconf.RegisterAlgorithm("", ok) }},
		{"blank", shardconf.ErrInvalidRegistration, func() error { return shardconf.RegisterAlgorithm("  ", ok) }},
		{"padded", shardconf.ErrInvalidRegistration, func() error { return shardconf.RegisterAlgorithm(" "+uniqueAlgoName("PAD"), ok) }},
		{"nil factory", shardconf.ErrInvalidRegistration, func() error { return shardconf.RegisterAlgorithm(uniqueAlgoName("NIL"), nil) }},
		{"nil complex factory", shardconf.ErrInvalidRegistration, func() error { return shardconf.RegisterComplexAlgorithm(uniqueAlgoName("NIL"), nil) }},
	}
	for _, c := range cases {
		if err := c.reg(); !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
		}
	}
}

var errBadModulus = errors.New("bad modulus")

func TestFactoryErrorIsALoadErrorWithFileLineAndPath(t *testing.T) {
	name := uniqueAlgoName("PICKY")
	if err := shardconf.RegisterAlgorithm(name, func(props map[string]string) (shardconf.ShardingAlgorithm, error) {
		if props["modulus"] != "4" {
			return nil, fmt.Errorf("prop modulus = %q: %w", props["modulus"], errBadModulus)
		}
		return &decadeAlgo{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cfg, err := shardconf.Parse([]byte(customRules(name, "{modulus: 5}")))
	if err != nil {
		t.Fatal(err)
	}
	cfg.File = "rules.yaml"
	_, err = shardconf.NewRouter(cfg)
	var ce *shardconf.ConfigError
	if !errors.As(err, &ce) || !errors.Is(err, errBadModulus) || !errors.Is(err, shardconf.ErrInvalidConfig) ||
		!strings.HasPrefix(err.Error(), "rules.yaml:13:") || ce.Path != "rules[0].shardingAlgorithms.by_user" ||
		!strings.Contains(err.Error(), `prop modulus = "5"`) {
		t.Errorf("err = %v; want a ConfigError at rules.yaml:13, path rules[0].shardingAlgorithms.by_user, wrapping the factory's error", err)
	}
}

func TestFactoryReturningNoAlgorithmIsALoadError(t *testing.T) {
	name := uniqueAlgoName("NOTHING")
	if err := shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if err := customLoadErr(t, customRules(name, "{}")); !strings.Contains(err.Error(), "returned no algorithm") {
		t.Errorf("err = %v", err)
	}
}

func TestUnregisteredTypeIsALoadError(t *testing.T) {
	name := uniqueAlgoName("NEVER_REGISTERED")
	if err := customLoadErr(t, customRules(name, "{}")); !errors.Is(err, shardconf.ErrInvalidConfig) || !strings.Contains(err.Error(), name) {
		t.Errorf("err = %v; want ErrInvalidConfig naming %s", err, name)
	}
}

func TestFactoryIsCalledOncePerStrategyWithItsOwnCopyOfTheProps(t *testing.T) {
	name := uniqueAlgoName("COUNTED")
	var calls atomic.Int32
	if err := shardconf.RegisterAlgorithm(name, func(props map[string]string) (shardconf.ShardingAlgorithm, error) {
		calls.Add(1)
		props["scribbled"] = "yes" // must not reach the Config
		return &decadeAlgo{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// Two tables with the algorithm as database and table strategy, one
	// more through the default table strategy: 2 + 2 + 1 strategies.
	rules := fmt.Sprintf(`
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..3}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
    t_pay:
      actualDataNodes: ds_${0..1}.t_pay_${0..3}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: by_user}}
    t_user: {actualDataNodes: "ds_0.t_user_${0..3}"}
  defaultTableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: by_order}}
  shardingAlgorithms:
    by_user: {type: %[1]s, props: {k: v}}
    by_order: {type: %[1]s}
`, name)
	cfg, err := shardconf.Parse([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shardconf.NewRouter(cfg); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 5 {
		t.Errorf("factory called %d times, want 5 (one per strategy compiled)", n)
	}
	if _, bad := cfg.Algorithms["by_user"].Props["scribbled"]; bad {
		t.Error("a factory's change to its props reached the Config")
	}
}

func TestRegisteredAlgorithmCannotServeAutoTables(t *testing.T) {
	name, _ := registerDecade(t)
	err := customLoadErr(t, fmt.Sprintf(`
dataSources: {ds_0: {driver: sqlite, dsn: "file:a.db"}}
rules:
- !SHARDING
  autoTables:
    t_auto: {actualDataSources: ds_0, shardingStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: a}}}
  shardingAlgorithms:
    a: {type: %s}
`, name))
	if !strings.Contains(err.Error(), "auto") || !strings.Contains(err.Error(), "shardingAlgorithms.a") {
		t.Errorf("err = %v", err)
	}
}

func TestRegistryIsSafeForConcurrentRegistrationCompilationAndRouting(t *testing.T) {
	name, _ := registerDecade(t)
	r := customRouter(t, customRules(name, "{}"))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 4; g++ {
		wg.Add(3)
		go func() { // registrations
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if err := shardconf.RegisterAlgorithm(uniqueAlgoName("CONC"), func(map[string]string) (shardconf.ShardingAlgorithm, error) {
					return &decadeAlgo{}, nil
				}); err != nil {
					errs <- err
				}
			}
		}()
		go func() { // compilations
			defer wg.Done()
			for i := 0; i < 20; i++ {
				cfg, err := shardconf.Parse([]byte(customRules(name, "{}")))
				if err == nil {
					_, err = shardconf.NewRouter(cfg)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
		go func(g int) { // routing
			defer wg.Done()
			for i := 0; i < 200; i++ {
				ts, err := r.Route("t_order", shardconf.Eq("user_id", g*10), shardconf.Eq("order_id", i))
				if want := fmt.Sprintf("ds_%d.t_order_%d", g%2, (i/10)%4); err != nil || targetList(ts) != want {
					errs <- fmt.Errorf("Route(%d, %d) = %s, %v; want %s", g*10, i, targetList(ts), err, want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
