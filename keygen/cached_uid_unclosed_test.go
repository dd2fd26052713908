package keygen_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// TestCachedUIDDroppedUnclosedIsClosedWhenCollected: a CACHED_UID its
// holder drops without Close (a constructor that failed after building it,
// a router that never closes its generators) is closed once garbage
// collected: its filler stops and its claim on its space ends, so a UID of
// its worker is built once the clock has passed the seconds it filled.
func TestCachedUIDDroppedUnclosedIsClosedWhenCollected(t *testing.T) {
	running := goleak.IgnoreCurrent()
	scope := keygen.NewSequenceScope()
	clk := keygentest.NewClock(t0)
	opts := []keygen.Option{keygen.WithClock(clk), keygen.WithSequenceScope(scope)}
	func() {
		g, err := keygen.NewID("CACHED_UID", keygen.Props{"worker-id": "12", "sequence-bits": "2", "boost-power": "1"}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.NextID(context.Background()); err != nil {
			t.Fatal(err)
		}
	}()
	clk.Add(time.Hour)
	for deadline := time.Now().Add(30 * time.Second); ; {
		runtime.GC()
		_, err := keygen.NewID("UID", keygen.Props{"worker-id": "12", "sequence-bits": "2"}, opts...)
		if err == nil {
			break
		}
		if !errors.Is(err, keygen.ErrIDSpaceInUse) || time.Now().After(deadline) {
			t.Fatalf("a UID beside the dropped CACHED_UID: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	goleak.VerifyNone(t, running)
}
