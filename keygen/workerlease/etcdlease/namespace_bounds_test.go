package etcdlease

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/shardkey/shardkey/keygen"
)

// Namespaces whose names share a prefix ("a", "ab"), and a prefix that
// ends where another source's namespace begins, are separate id spaces:
// no source sees, blocks or frees another's keys.
func TestNamespacesSharingAPrefixAreApart(t *testing.T) {
	cli := sharedEtcd(t)
	base := testNamespace(t, cli) // cleaned up: every source below lives under it
	prefix := testPrefix + base + "/"
	mk := func(p, ns string) *Source {
		s, err := New(Config{Client: cli, Prefix: p, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sources := []*Source{
		mk(prefix, "a"),
		mk(prefix, "ab"),
		mk(prefix+"a/", "held"), // its keys live under a/held/held/ and a/held/last/
		mk(prefix+"a/", "last"),
		mk(prefix+"a/held", "0"), // a/held/0/..., beside "a"'s held key of id 0
	}
	info := keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0}
	for i, s := range sources {
		l, err := s.Acquire(context.Background(), info)
		if err != nil {
			t.Fatalf("source %d (%s): %v", i, s.prefix, err)
		}
		defer l.Close()
		if l.Worker() != 0 {
			t.Fatalf("source %d (%s) got worker %d, want 0", i, s.prefix, l.Worker())
		}
	}
	for i, s := range sources {
		slots, err := s.List(context.Background())
		if err != nil || len(slots) != 1 || !slots[0].Held {
			t.Fatalf("List of source %d (%s): %v %+v", i, s.prefix, err, slots)
		}
		if _, err := s.Acquire(context.Background(), info); !errors.Is(err, ErrNoFreeWorker) {
			t.Fatalf("second claim in source %d: %v, want ErrNoFreeWorker", i, err)
		}
	}
}

// MaxWorker 0 is one id; the largest MaxWorker claims the lowest id;
// a negative one is refused.
func TestMaxWorkerBounds(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, Config{})
	l0, err := src.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 0})
	if err != nil || l0.Worker() != 0 {
		t.Fatalf("MaxWorker 0: %v", err)
	}
	defer l0.Close()
	if _, err := src.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 0}); !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("second claim with MaxWorker 0: %v", err)
	}
	lMax, err := src.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: math.MaxInt64})
	if err != nil || lMax.Worker() != 1 {
		t.Fatalf("MaxWorker MaxInt64: %v", err)
	}
	defer lMax.Close()
	if _, err := src.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: -1}); err == nil {
		t.Fatal("negative MaxWorker accepted")
	}
	// A held key beyond a claimant's MaxWorker does not count against it.
	if _, err := cli.Put(context.Background(), src.heldKey(math.MaxInt64), "by-hand"); err != nil {
		t.Fatal(err)
	}
	l2, err := src.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 2})
	if err != nil || l2.Worker() != 2 {
		t.Fatalf("MaxWorker 2 with ids 0, 1 and MaxInt64 held: %v", err)
	}
	defer l2.Close()
}
