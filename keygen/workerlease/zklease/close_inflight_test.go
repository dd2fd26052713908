package zklease_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// pausingSource hands out its source's lease wrapped so that one
// ValidUntil, once armed, stops after reading the validity: the key being
// issued has passed the lease check and not yet been taken, as a
// goroutine preempted there would be.
type pausingSource struct {
	src   keygen.WorkerSource
	lease *pausingLease
}

func (p *pausingSource) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	l, err := p.src.Acquire(ctx, info)
	if err != nil {
		return nil, err
	}
	p.lease = &pausingLease{Lease: l, paused: make(chan struct{}), resume: make(chan struct{})}
	return p.lease, nil
}

type pausingLease struct {
	keygen.Lease
	armed  atomic.Bool
	paused chan struct{}
	resume chan struct{}
}

func (p *pausingLease) ValidUntil() int64 {
	v := p.Lease.ValidUntil()
	if p.armed.CompareAndSwap(true, false) {
		close(p.paused)
		<-p.resume
	}
	return v
}

// TestCloseDuringAnInFlightKeyCoversItsTime: a generator's Close may run
// while another goroutine is between the lease check and taking its key.
// The release must cover that key's time, or the next process of the
// ip:port issues the same key.
func TestCloseDuringAnInFlightKeyCoversItsTime(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	cfg := zklease.Config{Servers: []string{server}, Name: uniqueName(t, server), Addr: "10.14.0.1:1"}
	t0 := time.Now().Truncate(time.Millisecond)
	clockA := keygentest.NewClock(t0)
	srcA := &pausingSource{src: newSource(t, cfg)}
	gA, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(srcA), keygen.WithClock(clockA),
		keygen.WithSequenceScope(keygen.NewSequenceScope()), keygen.WithRandom(func(int64) int64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gA.(io.Closer).Close() })
	if _, err := gA.NextID(context.Background()); err != nil {
		t.Fatal(err)
	}
	clockA.Add(5 * time.Millisecond)
	srcA.lease.armed.Store(true)
	inFlight := make(chan int64, 1)
	go func() {
		id, err := gA.NextID(context.Background())
		if err != nil {
			id = -1
		}
		inFlight <- id
	}()
	<-srcA.lease.paused
	if err := gA.(io.Closer).Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(srcA.lease.resume)
	keyA := <-inFlight
	if keyA < 0 {
		// The generator refused it (keygen checks the lease again after
		// reserving a key): nothing was issued that the release missed.
		t.Log("the key in flight at Close was refused")
		return
	}
	pA, _ := gA.(keygen.Decomposer).Decompose(keyA)
	gB, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(newSource(t, cfg)),
		keygen.WithClock(keygentest.NewClock(pA.Time)), keygen.WithSequenceScope(keygen.NewSequenceScope()),
		keygen.WithRandom(func(int64) int64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gB.(io.Closer).Close() })
	keyB, err := gB.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if keyA == keyB {
		t.Fatalf("key %d issued twice: by A while it closed and by the next process of its ip:port", keyA)
	}
	if pB, _ := gB.(keygen.Decomposer).Decompose(keyB); !pB.Time.After(pA.Time) {
		t.Fatalf("B's first key at %v is not after A's key in flight (%v)", pB.Time, pA.Time)
	}
}
