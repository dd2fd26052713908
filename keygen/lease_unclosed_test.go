package keygen_test

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// renewingSource hands out worker ids on leases that, like workerlease's,
// renew in a goroutine of their own until closed, holding what the
// generator gave Track.
type renewingSource struct{ closed atomic.Int64 }

func (s *renewingSource) Acquire(_ context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	l := &renewingLease{src: s, stop: make(chan struct{})}
	go l.renew()
	return l, nil
}

type renewingLease struct {
	src   *renewingSource
	mu    sync.Mutex
	track func() time.Time
	stop  chan struct{}
	once  sync.Once
}

func (l *renewingLease) renew() {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			if l.track != nil {
				l.track()
			}
			l.mu.Unlock()
		}
	}
}

func (l *renewingLease) Worker() int64       { return 3 }
func (l *renewingLease) LastUsed() time.Time { return time.Time{} }
func (l *renewingLease) ValidUntil() int64   { return math.MaxInt64 }
func (l *renewingLease) Track(f func() time.Time) {
	l.mu.Lock()
	l.track = f
	l.mu.Unlock()
}
func (l *renewingLease) Close() error {
	l.once.Do(func() { close(l.stop); l.src.closed.Add(1) })
	return nil
}

// TestLeasedGeneratorDroppedUnclosedReleasesItsWorker: a generator whose
// worker id comes from a renewing lease and that its holder drops without
// Close closes the lease once garbage collected, instead of the lease's
// renewals keeping the generator, and the worker id, for ever.
func TestLeasedGeneratorDroppedUnclosedReleasesItsWorker(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "UID", "SNOWFLAKE_JS"} {
		t.Run(typ, func(t *testing.T) {
			src := &renewingSource{}
			func() {
				g, err := keygen.NewID(typ, keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(src),
					keygen.WithSequenceScope(keygen.NewSequenceScope()))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := g.NextID(context.Background()); err != nil {
					t.Fatal(err)
				}
			}()
			for deadline := time.Now().Add(30 * time.Second); src.closed.Load() == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the dropped generator's lease is still open after 30 s")
				}
				runtime.GC()
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
