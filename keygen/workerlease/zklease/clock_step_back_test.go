package zklease_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// steppedClock is the wall clock moved by an offset the test sets: an
// injected clock that an operator or a time source steps.
type steppedClock struct{ offset atomic.Int64 }

func (c *steppedClock) Now() time.Time        { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *steppedClock) Sleep(d time.Duration) { time.Sleep(d) }

// TestClockStepBackWhileCutOffStopsKeysBeforeAnotherTakesTheID: a holder
// cut off from ZooKeeper whose clock then steps back must still stop
// issuing before its session expires and a process with its ip:port takes
// the id: its validity may not stretch by the step.
func TestClockStepBackWhileCutOffStopsKeysBeforeAnotherTakesTheID(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	proxy := dbtest.StartProxy(t, server)
	cfg := zklease.Config{Name: name, Addr: "10.9.9.9:8080", SessionTimeout: testSessionTimeout}
	cfg1 := cfg
	cfg1.Servers = []string{proxy.Addr()}
	clock := &steppedClock{}
	g1, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(newSource(t, cfg1)), keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g1.(interface{ Close() error }).Close() })
	time.Sleep(1500 * time.Millisecond) // some reports go through
	if st := g1.(keygen.StatsReporter).Stats(); st.LeaseRenewals == 0 {
		t.Fatalf("no report in 1.5s: %+v", st)
	}
	proxy.Cut()
	cut := time.Now()
	clock.offset.Store(int64(-10 * time.Minute))
	// g1 issued nothing before the step (its generator has no reason to
	// refuse the earlier clock): only the lease can stop it.
	is := startIssuer(g1)
	defer is.end()

	cfg2 := cfg
	cfg2.Servers = []string{server}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l2, err := newSource(t, cfg2).Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
	if err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	t.Cleanup(func() { l2.Close() })
	time.Sleep(200 * time.Millisecond)
	t.Logf("cut and step at 0: first ErrLeaseLost at %v; the id taken over at %v", is.lost().Sub(cut), taken.Sub(cut))
	if lost := is.lost(); lost.IsZero() || !lost.Before(taken) {
		t.Fatalf("the holder cut off with its clock stepped back 10 min still issued when its id was taken over (first refusal %v)", lost)
	}
}
