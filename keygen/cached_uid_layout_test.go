package keygen_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// TestCachedUIDLayoutFor: CACHED_UID keys decode with the layout
// LayoutFor gives for the generator's props, ring props included.
func TestCachedUIDLayoutFor(t *testing.T) {
	props := keygen.Props{"worker-id": "9", "boost-power": "2", "padding-factor": "40", "rejection-policy": "error"}
	at := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	g, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(keygentest.NewClock(at)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.(interface{ Close() error }).Close()
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l, err := keygen.LayoutFor("CACHED_UID", props)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Decompose(id)
	if err != nil || p.Worker != 9 || !p.Time.Equal(at) {
		t.Fatalf("decoded %+v, %v; want worker 9 at %s", p, err, at)
	}
	if _, err := keygen.LayoutFor("CACHED_UID", keygen.Props{"boost-power": "x"}); err != nil {
		t.Errorf("ring props are not part of the layout, yet: %v", err)
	}
}

// TestCachedUIDSameWorkerInOneProcess: CACHED_UID generators of one clock,
// layout and worker id — two alive at once, or one rebuilt after Close —
// never fill the same second, although each fills seconds ahead of the
// clock.
func TestCachedUIDSameWorkerInOneProcess(t *testing.T) {
	clock := keygentest.NewClock(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC))
	props := keygen.Props{"worker-id": "4", "sequence-bits": "8", "worker-bits": "22", "boost-power": "1"}
	seen := map[int64]bool{}
	draw := func(g keygen.IDGenerator, n int) {
		for range n {
			id, err := g.NextID(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] {
				t.Fatalf("key %d issued twice", id)
			}
			seen[id] = true
		}
	}
	a, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	b, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	draw(a, 2000)
	draw(b, 2000)
	a.(interface{ Close() error }).Close()
	c, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	draw(c, 2000)
	draw(b, 1000)
	b.(interface{ Close() error }).Close()
	c.(interface{ Close() error }).Close()
}
