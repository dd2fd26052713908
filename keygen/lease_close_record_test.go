package keygen_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// stallingLease lets the test hold one key between the generator's lease
// check and its reservation: ValidUntil, once armed, reports the check to
// the test and waits for it before answering "valid". Close records what
// Track says is the worker id's last use, as a renewing lease stores it
// for the next holder.
type stallingLease struct {
	armed    atomic.Bool
	checking chan struct{}
	resume   chan struct{}
	once     sync.Once

	track    atomic.Pointer[func() time.Time]
	recorded atomic.Pointer[time.Time]
}

func newStallingLease() *stallingLease {
	return &stallingLease{checking: make(chan struct{}), resume: make(chan struct{})}
}

func (l *stallingLease) Worker() int64       { return 3 }
func (l *stallingLease) LastUsed() time.Time { return time.Time{} }
func (l *stallingLease) Track(f func() time.Time) {
	l.track.Store(&f)
}
func (l *stallingLease) ValidUntil() int64 {
	if l.armed.Load() {
		l.once.Do(func() {
			close(l.checking)
			<-l.resume
		})
	}
	return math.MaxInt64
}
func (l *stallingLease) Close() error {
	last := (*l.track.Load())()
	l.recorded.Store(&last)
	return nil
}

type leaseOf struct{ l keygen.Lease }

func (s leaseOf) Acquire(context.Context, keygen.WorkerInfo) (keygen.Lease, error) { return s.l, nil }

// TestKeyInFlightAtCloseIsCoveredByTheRecordedLastUse: a key whose lease
// check passed before Close, reserved after Close read the last use it
// records for the next holder, is refused: otherwise the next holder of
// the worker id, starting after the recorded time, could issue it again.
func TestKeyInFlightAtCloseIsCoveredByTheRecordedLastUse(t *testing.T) {
	for _, typ := range []string{"SNOWFLAKE", "LEAF_SNOWFLAKE"} {
		t.Run(typ, func(t *testing.T) {
			clock := keygentest.NewClock(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC))
			lease := newStallingLease()
			gen, err := keygen.NewID(typ, keygen.Props{"worker-id": "auto"}, keygen.WithClock(clock), keygen.WithWorkerSource(leaseOf{lease}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gen.NextID(context.Background()); err != nil {
				t.Fatal(err)
			}
			clock.Add(5 * time.Millisecond) // the key in flight starts a later tick
			lease.armed.Store(true)
			type result struct {
				id  int64
				err error
			}
			done := make(chan result, 1)
			go func() {
				id, err := gen.NextID(context.Background())
				done <- result{id, err}
			}()
			<-lease.checking
			if err := gen.(interface{ Close() error }).Close(); err != nil {
				t.Fatal(err)
			}
			close(lease.resume)
			r := <-done
			recorded := *lease.recorded.Load()
			if r.err == nil {
				layout, _ := keygen.LayoutFor(typ, keygen.Props{})
				p, _ := layout.Decompose(r.id)
				if p.Time.After(recorded) {
					t.Fatalf("key %d of %v issued after Close recorded the last use %v: the next holder may issue it again", r.id, p.Time, recorded)
				}
				return
			}
			if !errors.Is(r.err, keygen.ErrLeaseLost) {
				t.Fatalf("NextID = %v, want a key at or before %v or ErrLeaseLost", r.err, recorded)
			}
		})
	}
}
