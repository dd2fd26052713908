package shardconf_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
)

// cachedUIDRules declares a CACHED_UID key generator for worker 21; with
// algorithm "missing" the rule file is refused after the generator is built.
func cachedUIDRules(algorithm string) []byte {
	return fmt.Appendf(nil, `
dataSources:
  ds_0: {driver: sqlite, dsn: "a.db"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order_${0..1}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: %s}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: uid}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    uid: {type: CACHED_UID, props: {worker-id: 21, worker-bits: 21, sequence-bits: 10}}
`, algorithm)
}

// uidOfWorker21 builds a UID of worker 21 in scope: refused with
// ErrIDSpaceInUse while a CACHED_UID of that worker is open.
func uidOfWorker21(scope *keygen.SequenceScope, clock keygen.Clock) error {
	g, err := keygen.NewID("UID", keygen.Props{"worker-id": "21", "worker-bits": "21", "sequence-bits": "10"},
		keygen.WithSequenceScope(scope), keygen.WithClock(clock))
	if c, ok := g.(io.Closer); ok && err == nil {
		c.Close()
	}
	return err
}

func TestNewRouterErrorClosesTheKeyGeneratorsItBuilt(t *testing.T) {
	scope := keygen.NewSequenceScope()
	clock := keygentest.NewClock(time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC))
	cfg, err := shardconf.Parse(cachedUIDRules("missing"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shardconf.NewRouter(cfg, shardconf.WithKeyGenOptions(keygen.WithSequenceScope(scope), keygen.WithClock(clock))); err == nil {
		t.Fatal("NewRouter accepted a table naming a missing algorithm")
	}
	clock.Add(time.Hour) // past every second the refused router's generator filled
	if err := uidOfWorker21(scope, clock); err != nil {
		t.Fatalf("the refused router's CACHED_UID still holds worker 21: %v", err)
	}
}

func TestRouterCloseFreesItsKeyGenerators(t *testing.T) {
	scope := keygen.NewSequenceScope()
	clock := keygentest.NewClock(time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC))
	cfg, err := shardconf.Parse(cachedUIDRules("mod2"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg, shardconf.WithKeyGenOptions(keygen.WithSequenceScope(scope), keygen.WithClock(clock)))
	if err != nil {
		t.Fatal(err)
	}
	_, gen, _ := r.KeyGenerator("t_order")
	if _, err := gen.NextKey(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := uidOfWorker21(scope, clock); !errors.Is(err, keygen.ErrIDSpaceInUse) {
		t.Fatalf("a UID beside the router's CACHED_UID: %v, want ErrIDSpaceInUse", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := gen.NextKey(context.Background()); err == nil {
		t.Error("the router's generator issued a key after Close")
	}
	clock.Add(time.Hour)
	if err := uidOfWorker21(scope, clock); err != nil {
		t.Fatalf("after Close, worker 21 is still held: %v", err)
	}
}
