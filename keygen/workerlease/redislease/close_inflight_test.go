package redislease

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// pausingSource hands out its source's leases wrapped so that one
// ValidUntil, once armed, stops after reading the validity: the key
// being issued has passed the lease check and not yet been taken, as a
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

// snowflakeNoVibration is a SNOWFLAKE generator with its own sequence
// state (as in another process), its worker id from src, the given clock,
// and every tick's sequence starting at 0: two of them issuing at the same
// tick with the same worker id issue the same key.
func snowflakeNoVibration(t *testing.T, src keygen.WorkerSource, clock keygen.Clock) (closingGenerator, error) {
	t.Helper()
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"max-vibration-offset": "0"},
		keygen.WithWorkerSource(src), keygen.WithSequenceScope(keygen.NewSequenceScope()), keygen.WithClock(clock))
	if err != nil {
		return nil, err
	}
	cg := g.(closingGenerator)
	t.Cleanup(func() { cg.Close() })
	return cg, nil
}

// TestCloseDuringAnInFlightKeyCoversItsTime: a generator's Close may run
// while another goroutine is between the lease check and taking its key
// (an application closing at shutdown while requests still run). The
// release must cover that key's time, or the id's next holder issues the
// same key.
func TestCloseDuringAnInFlightKeyCoversItsTime(t *testing.T) {
	c := sharedClient(t)
	cfg := Config{Prefix: prefix(t), TTL: time.Second}
	// A namespace in service: a new one's first claim gets a LastUsed
	// floor of about now, after t0.
	inServiceSince(t, c, newSource(t, c, cfg), time.Hour)
	t0 := time.Now().Truncate(time.Millisecond)
	clockA := keygentest.NewClock(t0)
	srcA := &pausingSource{src: &onlyWorker{s: newSource(t, c, cfg), max: 0}}
	gA, err := snowflakeNoVibration(t, srcA, clockA)
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	if _, err := gA.NextID(context.Background()); err != nil {
		t.Fatalf("A's first key: %v", err)
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
	if err := gA.Close(); err != nil {
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

	// The next holder, in another process whose clock reads what A's did.
	gB, err := snowflakeNoVibration(t, &onlyWorker{s: newSource(t, c, cfg), max: 0}, keygentest.NewClock(pA.Time))
	if err != nil {
		t.Fatalf("generator B: %v", err)
	}
	keyB, err := gB.NextID(context.Background())
	if err != nil {
		t.Fatalf("B's first key: %v", err)
	}
	if pB, _ := gB.(keygen.Decomposer).Decompose(keyB); !pB.Time.After(pA.Time) {
		t.Errorf("B's first key at %v is not after A's key in flight at Close (%v)", pB.Time, pA.Time)
	}
	if keyA == keyB {
		t.Errorf("key %d issued twice: by A while it closed and by the id's next holder", keyA)
	}
}
