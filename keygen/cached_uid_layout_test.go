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
