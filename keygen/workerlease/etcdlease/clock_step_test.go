package etcdlease

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// steppedClock is the wall clock moved by an offset the test sets: an
// injected clock that an operator or a time source steps.
type steppedClock struct{ offset atomic.Int64 }

func (c *steppedClock) Now() time.Time        { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *steppedClock) Sleep(d time.Duration) { time.Sleep(d) }
func (c *steppedClock) step(d time.Duration)  { c.offset.Add(int64(d)) }

// readRecord returns the worker id's record as stored.
func readRecord(t *testing.T, src *Source, worker int64) record {
	t.Helper()
	resp, err := src.cli.Get(context.Background(), src.lastKey(worker))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("record of worker %d: %v %v", worker, err, resp)
	}
	var r record
	if err := json.Unmarshal(resp.Kvs[0].Value, &r); err != nil {
		t.Fatalf("record of worker %d: %v", worker, err)
	}
	return r
}

// A holder whose clock steps back keeps issuing under the validity it
// had. The record must still bound every key time that validity allows:
// a later holder (whose clock may have stepped too) issues after the
// record, and the holder itself must not issue past it.
func TestClockStepBackNeverLeavesTheRecordBehindTheValidity(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, fastLease)
	clock := keygentest.NewClock(time.Now())
	l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0, Clock: clock})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	defer l.Close()
	clock.Add(-time.Hour)
	renewed := l.(keygen.LeaseStats).Renewals()
	waitFor(t, 5*time.Second, "two renewals after the step", func() bool {
		return l.(keygen.LeaseStats).Renewals() >= renewed+2
	})
	valid := l.ValidUntil()
	rec := readRecord(t, src, 0)
	if rec.used()*int64(time.Millisecond) < valid {
		t.Fatalf("the record bounds keys at %v, but the holder may issue until %v",
			time.UnixMilli(rec.used()), time.Unix(0, valid))
	}
	// The validity follows the clock that stepped: an hour of keys with no
	// renewal would outlive the etcd lease.
	if left := time.Duration(valid - clock.Now().UnixNano()); left > fastLease.TTL {
		t.Fatalf("after a step back of 1h the holder is valid for %v more by its clock (TTL %v)", left, fastLease.TTL)
	}
}

// A holder cut off from etcd whose clock then steps back must still stop
// issuing before etcd frees its id: its validity may not stretch by the
// step.
func TestClockStepBackWhileCutOffStopsKeysBeforeAnotherClaims(t *testing.T) {
	shared := dbtest.Etcd(t)
	proxy := dbtest.StartProxy(t, shared)
	cliA, cliB := etcdClient(t, proxy.Addr()), etcdClient(t, shared)
	ns := testNamespace(t, cliB)
	clockA := &steppedClock{}
	gA, err := newGenerator(t, onlyWorker{src: newSource(t, cliA, ns, fastLease), max: 0}, keygen.WithClock(clockA))
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	waitFor(t, 5*time.Second, "a renewal", func() bool { return gA.(keygen.StatsReporter).Stats().LeaseRenewals > 0 })
	proxy.Cut()
	cut := time.Now()
	clockA.step(-time.Hour)
	// A issued nothing before the step, so its generator has no reason to
	// refuse the earlier clock: only the lease can stop it.
	a := startIssuer(gA)
	defer a.halt()
	gB, claimSent := claimWorker0(t, newSource(t, cliB, ns, fastLease), 20*time.Second)
	t.Logf("cut and step at 0; A refused at %v; B's claim sent at %v; A issued %d keys",
		a.refused().Sub(cut), claimSent.Sub(cut), a.issued())
	checkTakeover(t, a, gA, gB, claimSent)
}
