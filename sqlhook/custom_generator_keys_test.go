package sqlhook

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// fixedKeyGen is a custom generator (keygen.Register) without NextID whose
// NextKey returns the same key each time.
type fixedKeyGen struct{ key any }

func (g fixedKeyGen) Type() string                         { return "SQLHOOK_FIXED" }
func (g fixedKeyGen) NextKey(context.Context) (any, error) { return g.key, nil }

var registerFixedKeyGens = sync.OnceValue(func() error {
	for name, key := range map[string]any{"SQLHOOK_ZERO_KEY": int64(0), "SQLHOOK_NIL_KEY": nil, "SQLHOOK_SEVEN_KEY": int64(7)} {
		key := key
		if err := keygen.Register(name, func(keygen.Props, keygen.Options) (keygen.Generator, error) {
			return fixedKeyGen{key}, nil
		}); err != nil {
			return err
		}
	}
	return nil
})

const fixedKeyRules = `
rules:
- !SHARDING
  tables:
    t_fixed:
      actualDataNodes: ds_0.t_fixed_${0..1}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: m}}
      keyGenerateStrategy: {column: id, keyGeneratorName: g}
  shardingAlgorithms:
    m: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    g: {type: %s}
`

// A generated key the integrations would read as no key (0), or a NULL,
// is never inserted: the INSERT fails before anything runs.
func TestInsertRefusesAGeneratedKeyThatIsZeroOrNull(t *testing.T) {
	if err := registerFixedKeyGens(); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"SQLHOOK_ZERO_KEY", "SQLHOOK_NIL_KEY"} {
		h := hookFromRules(t, fmt.Sprintf(fixedKeyRules, typ), SQLite)
		_, err := h.route("INSERT INTO t_fixed (name) VALUES ('a')", nil)
		if !errors.Is(err, keygen.ErrInvalidID) {
			t.Errorf("%s: err = %v, want keygen.ErrInvalidID", typ, err)
		}
	}
	h := hookFromRules(t, fmt.Sprintf(fixedKeyRules, "SQLHOOK_SEVEN_KEY"), SQLite)
	if _, err := h.route("INSERT INTO t_fixed (name) VALUES ('a')", nil); err != nil {
		t.Errorf("a non-zero int64 key: %v", err)
	}
}
