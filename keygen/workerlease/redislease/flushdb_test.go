package redislease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// TestFlushDBNeverHandsOutAHeldID: FLUSHDB (or FLUSHALL) on a server up
// for longer than the quarantine, while a holder runs: the next claimant
// must not get the id while the holder may still issue keys, or both
// issue the same keys.
func TestFlushDBNeverHandsOutAHeldID(t *testing.T) {
	r := privateRedis(t)
	c := client(t, r.addr())
	const ttl = time.Second
	cfg := Config{Prefix: prefix(t), TTL: ttl}
	// Let the server's uptime pass the quarantine, as on any server in
	// service.
	time.Sleep(ttl + ttl/10 + 3*time.Second)
	srcA := &onlyWorker{s: newSource(t, c, cfg), max: 0}
	gA := claimWhenFree(t, srcA, 10*time.Second)
	keys := newKeyLog(t)
	stop := make(chan struct{})
	lastA, _ := issueUntilStopped(t, gA, "A", keys, stop)
	waitFor(t, 2*time.Second, "A's keys", func() bool { return !lastA().IsZero() })
	if err := c.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	srcB := &onlyWorker{s: newSource(t, client(t, r.addr()), cfg), max: 0}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(acquireWithin{srcB, ctx}),
		keygen.WithClock(otherProcess{}))
	if err == nil {
		claimed := time.Now()
		gB := srcB.last()
		time.Sleep(50 * time.Millisecond)
		close(stop)
		t.Fatalf("after FLUSHDB another process claimed worker %d at once; A issued its last key %v after that claim (A still valid for %v)",
			gB.Worker(), lastA().Sub(claimed), time.Duration(srcA.last().ValidUntil()-time.Now().UnixNano()))
	}
	close(stop)
	t.Logf("claim after FLUSHDB: %v", err)
	if !errors.Is(err, ErrQuarantine) && !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("claim after FLUSHDB: %v, want a refusal (ErrQuarantine or ErrNoFreeWorker)", err)
	}
}

// acquireWithin claims through src with ctx (a deadline shorter than the
// generator's own).
type acquireWithin struct {
	src *onlyWorker
	ctx context.Context
}

func (a acquireWithin) Acquire(_ context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	return a.src.Acquire(a.ctx, info)
}
