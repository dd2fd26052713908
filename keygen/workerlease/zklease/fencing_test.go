package zklease_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// issuer issues keys from a generator until stopped, recording every key
// and the wall time of its first ErrLeaseLost.
type issuer struct {
	g    keygen.IDGenerator
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	keys     []int64
	lostAt   time.Time
	otherErr error
}

func startIssuer(g keygen.IDGenerator) *issuer {
	is := &issuer{g: g, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(is.done)
		for {
			select {
			case <-is.stop:
				return
			default:
			}
			id, err := g.NextID(context.Background())
			is.mu.Lock()
			switch {
			case err == nil:
				is.keys = append(is.keys, id)
			case errors.Is(err, keygen.ErrLeaseLost):
				if is.lostAt.IsZero() {
					is.lostAt = time.Now()
				}
			case is.otherErr == nil:
				is.otherErr = err
			}
			is.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}()
	return is
}

func (is *issuer) end() {
	close(is.stop)
	<-is.done
}

func (is *issuer) lost() time.Time {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.lostAt
}

// leafGen builds LEAF_SNOWFLAKE on src.
func leafGen(t *testing.T, src keygen.WorkerSource) keygen.IDGenerator {
	t.Helper()
	g, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.(io.Closer).Close() })
	return g
}

// checkTakeOver checks what a take-over of one worker id must give: the
// old generator refused keys (ErrLeaseLost) before the new holder got the
// id, the new one has the same id, and no key repeats: every new key is
// above every old one.
func checkTakeOver(t *testing.T, old *issuer, oldWorker int64, taken time.Time, newLease keygen.Lease, g2 keygen.IDGenerator) {
	t.Helper()
	lostAt := old.lost()
	if lostAt.IsZero() || !lostAt.Before(taken) {
		t.Fatalf("the old generator's first ErrLeaseLost at %v, the id taken over at %v: it was still valid", lostAt, taken)
	}
	if _, err := old.g.NextID(context.Background()); !errors.Is(err, keygen.ErrLeaseLost) {
		t.Fatalf("the old generator after the take-over: %v, want ErrLeaseLost", err)
	}
	if newLease.Worker() != oldWorker {
		t.Fatalf("the new holder has worker %d, want the old %d (same ip:port)", newLease.Worker(), oldWorker)
	}
	old.end()
	if old.otherErr != nil {
		t.Fatalf("the old generator failed otherwise: %v", old.otherErr)
	}
	if len(old.keys) == 0 {
		t.Fatal("the old generator issued no key")
	}
	oldMax := slices.Max(old.keys)
	seen := make(map[int64]bool, len(old.keys))
	for _, k := range old.keys {
		seen[k] = true
	}
	for range 1000 {
		id, err := g2.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] || id <= oldMax {
			t.Fatalf("the new holder issued %d; the old one issued up to %d", id, oldMax)
		}
	}
	t.Logf("old generator: %d keys, lost at %v; taken over %v later", len(old.keys), lostAt.Format(time.StampMilli), taken.Sub(lostAt))
}

// TestNetworkCutLosesLeaseBeforeAnotherProcessTakesTheID: a holder cut off
// from ZooKeeper (TCP proxy) stops issuing with ErrLeaseLost before its
// session expires, and a process with the same ip:port that was waiting
// for the lock gets the id only after that, issuing keys above the old
// holder's.
func TestNetworkCutLosesLeaseBeforeAnotherProcessTakesTheID(t *testing.T) {
	server := dbtest.ZooKeeper(t)
	name := uniqueName(t, server)
	proxy := dbtest.StartProxy(t, server)
	cfg := zklease.Config{Name: name, Addr: "10.6.6.6:8080", SessionTimeout: testSessionTimeout}

	cfg1 := cfg
	cfg1.Servers = []string{proxy.Addr()}
	src1 := newSource(t, cfg1)
	g1 := leafGen(t, src1)
	is := startIssuer(g1)
	time.Sleep(1500 * time.Millisecond) // some reports go through
	ws, err := src1.List(context.Background())
	if err != nil || len(ws) != 1 || !ws[0].Held {
		t.Fatalf("List before the cut: %+v %v", ws, err)
	}
	worker := ws[0].ID
	if st := g1.(keygen.StatsReporter).Stats(); st.LeaseRenewals == 0 {
		t.Fatalf("no report renewed the lease in 1.5s (report interval 1s): %+v", st)
	}

	cfg2 := cfg
	cfg2.Servers = []string{server}
	src2 := newSource(t, cfg2)
	type result struct {
		l   keygen.Lease
		at  time.Time
		err error
	}
	got := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		l, err := src2.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
		got <- result{l, time.Now(), err}
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("the second process got %v, %v while the first holds the id", r.l, r.err)
	default:
	}

	cutAt := time.Now()
	proxy.Cut()
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.l.Close() })
	t.Logf("cut at %v; the second process got the id %v after the cut", cutAt.Format(time.StampMilli), r.at.Sub(cutAt))
	if r.at.Sub(cutAt) < testSessionTimeout/2 {
		t.Fatalf("the id was taken over %v after the cut, before the session could have expired", r.at.Sub(cutAt))
	}
	g2 := leafGen(t, constSource{r.l})
	checkTakeOver(t, is, worker, r.at, r.l, g2)
}

// TestServerRestartLosesLeaseBeforeAnotherProcessTakesTheID: a private
// ZooKeeper is killed under a holder: the holder's generator stops with
// ErrLeaseLost; the server comes back, the holder cannot reach it (the
// proxy stays cut), and a process with the same ip:port gets the id only
// when the server has expired the old session, issuing keys above the old
// holder's.
func TestServerRestartLosesLeaseBeforeAnotherProcessTakesTheID(t *testing.T) {
	z := startPrivateZK(t)
	name := uniqueName(t, z.addr)
	proxy := dbtest.StartProxy(t, z.addr)
	const timeout = 3 * time.Second
	cfg := zklease.Config{Name: name, Addr: "10.7.7.7:8080", SessionTimeout: timeout}

	cfg1 := cfg
	cfg1.Servers = []string{proxy.Addr()}
	src1 := newSource(t, cfg1)
	g1 := leafGen(t, src1)
	is := startIssuer(g1)
	time.Sleep(time.Second)
	ws, err := src1.List(context.Background())
	if err != nil || len(ws) != 1 || !ws[0].Held {
		t.Fatalf("List before the restart: %+v %v", ws, err)
	}
	worker := ws[0].ID

	killedAt := time.Now()
	z.stop()
	deadline := time.Now().Add(3 * timeout)
	for is.lost().IsZero() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if is.lost().IsZero() {
		t.Fatalf("the generator still issued keys %v after the server was killed", time.Since(killedAt))
	}
	t.Logf("server killed; ErrLeaseLost %v later", is.lost().Sub(killedAt))
	proxy.Cut() // the old holder stays away: its session must expire
	z.restart()

	cfg2 := cfg
	cfg2.Servers = []string{z.addr}
	src2 := newSource(t, cfg2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l2, err := src2.Acquire(ctx, keygen.WorkerInfo{Type: "LEAF_SNOWFLAKE", MaxWorker: leafMax})
	if err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	t.Cleanup(func() { l2.Close() })
	g2 := leafGen(t, constSource{l2})
	checkTakeOver(t, is, worker, taken, l2, g2)
}

// TestServerRestartWithinTheSessionKeepsTheLease: a server back before the
// session expired finds the holder's session and lock again; the
// generator resumes (after ErrLeaseLost if the outage outlasted the
// lease's validity), never with another process holding the id.
func TestServerRestartWithinTheSessionKeepsTheLease(t *testing.T) {
	z := startPrivateZK(t)
	name := uniqueName(t, z.addr)
	src := newSource(t, zklease.Config{Servers: []string{z.addr}, Name: name, Addr: "10.8.8.8:1", SessionTimeout: 8 * time.Second})
	g := leafGen(t, src)
	if _, err := g.NextID(context.Background()); err != nil {
		t.Fatal(err)
	}
	z.stop()
	z.restart()
	deadline := time.Now().Add(20 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if _, err = g.NextID(context.Background()); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("after a restart within the session: %v", err)
	}
	ws, err := src.List(context.Background())
	if err != nil || len(ws) != 1 || !ws[0].Held {
		t.Fatalf("List after the restart: %+v %v", ws, err)
	}
}

// constSource hands out one lease already acquired.
type constSource struct{ l keygen.Lease }

func (c constSource) Acquire(context.Context, keygen.WorkerInfo) (keygen.Lease, error) {
	return nopClose{c.l}, nil
}

// nopClose leaves closing to the test's cleanup.
type nopClose struct{ keygen.Lease }

func (nopClose) Close() error { return nil }

// TestValidityFollowsTheSessionTimeoutTheServerGranted: a session timeout
// above the server's maximum (20 ticks: 10 s on the private server) is
// cut by the server; the lease's validity follows the granted 10 s (7.5 s),
// never the 30 s asked for, since the server expires the session by its own.
func TestValidityFollowsTheSessionTimeoutTheServerGranted(t *testing.T) {
	z := startPrivateZK(t)
	name := uniqueName(t, z.addr)
	src := newSource(t, zklease.Config{Servers: []string{z.addr}, Name: name, Addr: "10.12.0.1:1", SessionTimeout: 30 * time.Second})
	before := time.Now()
	l := acquire(t, src)
	after := time.Now()
	if time.Duration(l.ValidUntil()-after.UnixNano()) > 7500*time.Millisecond || time.Duration(l.ValidUntil()-before.UnixNano()) < 5*time.Second {
		t.Fatalf("valid until %v after a claim between %v and %v, want 3/4 of the granted 10s past the claim",
			time.Unix(0, l.ValidUntil()).Format(time.StampMilli), before.Format(time.StampMilli), after.Format(time.StampMilli))
	}
}
