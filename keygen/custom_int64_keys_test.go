package keygen_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// countingKeys is a custom generator with only NextKey: keys from start
// up, as int64, as keygen.ID every third key, and as the string "x" from
// the key numbered stringAt on (0: never).
type countingKeys struct {
	n        atomic.Int64
	start    int64
	stringAt int64
}

func (c *countingKeys) Type() string { return "TEST_COUNTING_KEYS" }

func (c *countingKeys) NextKey(context.Context) (any, error) {
	i := c.n.Add(1)
	switch {
	case c.stringAt > 0 && i >= c.stringAt:
		return "x", nil
	case i%3 == 0:
		return keygen.ID(c.start + i - 1), nil
	}
	return c.start + i - 1, nil
}

// failingKeys is a custom generator whose NextKey fails.
type failingKeys struct{}

var errNoKey = errors.New("no key today")

func (failingKeys) Type() string                         { return "TEST_FAILING_KEYS" }
func (failingKeys) NextKey(context.Context) (any, error) { return nil, errNoKey }

func TestAsIDGeneratorReadsACustomGeneratorsInt64Keys(t *testing.T) {
	ids, ok := keygen.AsIDGenerator(&countingKeys{start: 100})
	if !ok {
		t.Fatal("a custom generator is refused")
	}
	first, err := ids.NextID(ctx)
	if err != nil || first != 100 {
		t.Fatalf("NextID = %d, %v; want 100", first, err)
	}
	dst := make([]int64, 4)
	if err := ids.NextIDs(ctx, dst); err != nil || !slices.Equal(dst, []int64{101, 102, 103, 104}) {
		t.Fatalf("NextIDs = %v, %v; want 101..104 (keygen.ID keys included)", dst, err)
	}
	if ids.Type() != "TEST_COUNTING_KEYS" {
		t.Fatalf("Type = %q", ids.Type())
	}
}

func TestAsIDGeneratorRefusesANonInt64KeyWithErrNotInt64(t *testing.T) {
	ids, _ := keygen.AsIDGenerator(&countingKeys{start: 1, stringAt: 3})
	dst := []int64{-1, -1, -1, -1}
	err := ids.NextIDs(ctx, dst)
	if !errors.Is(err, keygen.ErrNotInt64) {
		t.Fatalf("err = %v, want ErrNotInt64", err)
	}
	// The keys before the refused one are written; the rest is untouched.
	if !slices.Equal(dst, []int64{1, 2, -1, -1}) {
		t.Fatalf("dst = %v, want [1 2 -1 -1]", dst)
	}
	if id, err := ids.NextID(ctx); !errors.Is(err, keygen.ErrNotInt64) || id != 0 {
		t.Fatalf("NextID = %d, %v; want ErrNotInt64", id, err)
	}
}

func TestAsIDGeneratorPassesNextKeyErrorsOn(t *testing.T) {
	ids, _ := keygen.AsIDGenerator(failingKeys{})
	if _, err := ids.NextID(ctx); !errors.Is(err, errNoKey) || errors.Is(err, keygen.ErrNotInt64) {
		t.Fatalf("err = %v, want the generator's own error", err)
	}
}

func TestAsIDGeneratorKeepsIDGeneratorsAndRefusesUUID(t *testing.T) {
	sf := mustNew(t, "SNOWFLAKE", keygen.Props{"worker-id": "1"})
	if ids, ok := keygen.AsIDGenerator(sf); !ok || ids != sf {
		t.Fatalf("SNOWFLAKE: %v, %v; want the generator itself", ids, ok)
	}
	uuid, err := keygen.New("UUID", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids, ok := keygen.AsIDGenerator(uuid); ok || ids != nil {
		t.Fatalf("UUID: %v, %v; want refused", ids, ok)
	}
	if ids, ok := keygen.AsIDGenerator(nil); ok || ids != nil {
		t.Fatalf("nil: %v, %v; want refused", ids, ok)
	}
}

// registerCounting registers countingKeys once per test binary (-count).
var registerCounting = sync.OnceValue(func() error {
	return keygen.Register("TEST_NEWID_COUNTING_KEYS", func(keygen.Props, keygen.Options) (keygen.Generator, error) {
		return &countingKeys{start: 7}, nil
	})
})

// A type registered with only NextKey is built by NewID, and its int64
// keys come out of NextID; UUID stays ErrNotInt64.
func TestNewIDBuildsARegisteredGeneratorWithInt64Keys(t *testing.T) {
	if err := registerCounting(); err != nil {
		t.Fatal(err)
	}
	g, err := keygen.NewID("TEST_NEWID_COUNTING_KEYS", nil)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := g.NextID(ctx); err != nil || id != 7 {
		t.Fatalf("NextID = %d, %v; want 7", id, err)
	}
	if _, err := keygen.NewID("UUID", nil); !errors.Is(err, keygen.ErrNotInt64) {
		t.Fatalf("NewID(UUID) err = %v, want ErrNotInt64", err)
	}
}

// anyKey is a custom generator whose NextKey returns key.
type anyKey struct{ key any }

func (anyKey) Type() string                           { return "TEST_ANY_KEY" }
func (a anyKey) NextKey(context.Context) (any, error) { return a.key, nil }

// TestAsIDGeneratorRefusesEveryKeyButANonZeroInt64OrID: keys of other
// types (int, uint64 beyond int64 and within it, a pointer, nil with a nil
// error, a float) fail with ErrNotInt64 and come out as 0, never converted;
// a key of 0, which GORM and ent read as no key (their Save inserts again),
// fails with ErrInvalidID and is never stored.
func TestAsIDGeneratorRefusesEveryKeyButANonZeroInt64OrID(t *testing.T) {
	n := int64(5)
	for _, c := range []struct {
		key  any
		want error
	}{
		{5, keygen.ErrNotInt64}, {int32(5), keygen.ErrNotInt64}, {uint64(1 << 63), keygen.ErrNotInt64},
		{uint64(5), keygen.ErrNotInt64}, {&n, keygen.ErrNotInt64}, {nil, keygen.ErrNotInt64}, {5.0, keygen.ErrNotInt64},
		{int64(0), keygen.ErrInvalidID}, {keygen.ID(0), keygen.ErrInvalidID},
		{int64(5), nil}, {keygen.ID(-5), nil},
	} {
		ids, _ := keygen.AsIDGenerator(anyKey{c.key})
		id, err := ids.NextID(ctx)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("key %T(%v): %d, %v; want error %v", c.key, c.key, id, err, c.want)
		}
		if c.want != nil && id != 0 {
			t.Errorf("key %T(%v): id %d with the error", c.key, c.key, id)
		}
		dst := []int64{-1}
		if err := ids.NextIDs(ctx, dst); !errors.Is(err, c.want) || (c.want != nil && dst[0] != -1) {
			t.Errorf("key %T(%v): NextIDs wrote %v, %v", c.key, c.key, dst, err)
		}
	}
}

// nilFactoryType's factory returns neither a generator nor an error.
var registerNilFactory = sync.OnceValue(func() error {
	return keygen.Register("TEST_NIL_FACTORY", func(keygen.Props, keygen.Options) (keygen.Generator, error) { return nil, nil })
})

// TestNewRefusesAFactoryThatReturnsNoGenerator: a custom factory returning
// (nil, nil) is an error from New and NewID, naming the type, not a
// generator that panics at its first key, nor a panic in NewID.
func TestNewRefusesAFactoryThatReturnsNoGenerator(t *testing.T) {
	if err := registerNilFactory(); err != nil {
		t.Fatal(err)
	}
	if g, err := keygen.New("TEST_NIL_FACTORY", nil); err == nil || g != nil {
		t.Fatalf("New = %v, %v; want an error", g, err)
	}
	if g, err := keygen.NewID("test_nil_factory", nil); err == nil || g != nil {
		t.Fatalf("NewID = %v, %v; want an error", g, err)
	}
}
