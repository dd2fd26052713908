package etcdlease

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
	paused chan struct{} // closed when the armed ValidUntil stopped
	resume chan struct{} // closed to let it return
}

func (p *pausingLease) ValidUntil() int64 {
	v := p.Lease.ValidUntil()
	if p.armed.CompareAndSwap(true, false) {
		close(p.paused)
		<-p.resume
	}
	return v
}

// snowflakeOn is a SNOWFLAKE generator with its own sequence state (as in
// another process), its worker id from src, the given clock, and every
// tick's sequence starting at 0, so that two generators issuing at the
// same tick with the same worker id issue the same key.
func snowflakeOn(t *testing.T, src keygen.WorkerSource, clock keygen.Clock) (keygen.IDGenerator, error) {
	t.Helper()
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto", "max-vibration-offset": "0"},
		keygen.WithWorkerSource(src), keygen.WithSequenceScope(keygen.NewSequenceScope()), keygen.WithClock(clock))
	if err == nil {
		t.Cleanup(func() { closeGen(g) })
	}
	return g, err
}

// A generator's Close may run while another goroutine is between the
// lease check and taking its key (an application closing at shutdown
// while requests still run). The release must cover that key's time, or
// the next holder of the worker id issues it again.
func TestCloseDuringAnInFlightKeyCoversItsTime(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	t0 := time.Now().Truncate(time.Millisecond)
	clockA := keygentest.NewClock(t0)
	srcA := &pausingSource{src: onlyWorker{src: newSource(t, cli, ns, Config{}), max: 0}}
	gA, err := snowflakeOn(t, srcA, clockA)
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
	if err := closeGen(gA); err != nil {
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
	atA := decomposeTime(t, gA, keyA)

	// The next holder, in another process whose clock reads what A's did.
	gB, err := snowflakeOn(t, onlyWorker{src: newSource(t, cli, ns, Config{}), max: 0}, keygentest.NewClock(atA))
	if err != nil {
		t.Fatalf("generator B: %v", err)
	}
	keyB, err := gB.NextID(context.Background())
	if err != nil {
		t.Fatalf("B's first key: %v", err)
	}
	if atB := decomposeTime(t, gB, keyB); !atB.After(atA) {
		t.Errorf("B's first key at %v is not after A's key in flight at Close (%v)", atB, atA)
	}
	if keyA == keyB {
		t.Errorf("key %d issued twice: by A while it closed and by the id's next holder", keyA)
	}
}

// Whatever the generator does, the release stores a last use no earlier
// than the lease's clock when Close ended the validity: a key whose clock
// reading passed the lease check before Close is covered even if Track
// never saw it.
func TestReleaseCoversTheClockAtClose(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, Config{})
	t0 := time.Now().Truncate(time.Millisecond)
	clock := keygentest.NewClock(t0)
	info := keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0, Clock: clock}
	l, err := src.Acquire(context.Background(), info)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	l.Track(func() time.Time { return t0.Add(-10 * time.Millisecond) })
	clock.Add(5 * time.Millisecond)
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	next, err := src.Acquire(context.Background(), info)
	if err != nil {
		t.Fatalf("Acquire after Close: %v", err)
	}
	defer next.Close()
	if want := t0.Add(5 * time.Millisecond); next.LastUsed().Before(want) {
		t.Fatalf("LastUsed %v after a Close at %v (tracked %v)", next.LastUsed(), want, t0.Add(-10*time.Millisecond))
	}
}
