package etcdlease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// claimWorker0 builds a generator on src restricted to worker id 0,
// retrying while id 0 is held, and returns it with the wall time just
// before the attempt that claimed it: etcd handled the successful claim
// after that time.
func claimWorker0(t *testing.T, src *Source, within time.Duration) (keygen.IDGenerator, time.Time) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		attempt := time.Now()
		g, err := newGenerator(t, onlyWorker{src: src, max: 0})
		if err == nil {
			return g, attempt
		}
		if !errors.Is(err, ErrNoFreeWorker) {
			t.Fatalf("claim of worker 0: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker 0 still held after %v", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// issueSome returns n keys of g.
func issueSome(t *testing.T, g keygen.IDGenerator, n int) []int64 {
	t.Helper()
	keys := make([]int64, n)
	for i := range keys {
		id, err := g.NextID(context.Background())
		if err != nil {
			t.Fatalf("NextID: %v", err)
		}
		keys[i] = id
	}
	return keys
}

// checkTakeover checks what must hold once B claimed the id A held: A
// refused before B's claim was sent, issued nothing after it first
// refused, and B's keys are later than A's, all distinct.
func checkTakeover(t *testing.T, a *issuer, gA, gB keygen.IDGenerator, claimSent time.Time) {
	t.Helper()
	refused := a.refused()
	if refused.IsZero() || !refused.Before(claimSent) {
		t.Fatalf("another claimant got the id (claim sent %v) before A refused (%v)", claimSent, refused)
	}
	keysB := issueSome(t, gB, 1000)
	a.halt()
	if a.otherErr != nil {
		t.Fatalf("A failed otherwise than ErrLeaseLost: %v", a.otherErr)
	}
	if a.issuedAfterRefusal != 0 {
		t.Fatalf("A issued %d keys after it first refused", a.issuedAfterRefusal)
	}
	if len(a.keys) == 0 {
		t.Fatal("A issued no key")
	}
	lastA := decomposeTime(t, gA, a.keys[len(a.keys)-1])
	firstB := decomposeTime(t, gB, keysB[0])
	if !firstB.After(lastA) {
		t.Fatalf("B's first key at %v is not after A's last at %v", firstB, lastA)
	}
	n := assertDistinct(t, a.keys, keysB)
	t.Logf("A refused %v before B's claim was sent; %d distinct keys; A's last key %v, B's first %v",
		claimSent.Sub(refused), n, lastA.Format(time.TimeOnly+".000"), firstB.Format(time.TimeOnly+".000"))
}

func TestNetworkCutStopsKeysBeforeAnotherClaims(t *testing.T) {
	shared := dbtest.Etcd(t)
	proxy := dbtest.StartProxy(t, shared)
	cliA, cliB := etcdClient(t, proxy.Addr()), etcdClient(t, shared)
	ns := testNamespace(t, cliB)
	cfgA := fastLease
	cfgA.Instance = "process-a"
	gA, err := newGenerator(t, newSource(t, cliA, ns, cfgA))
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	a := startIssuer(gA)
	defer a.halt()
	waitFor(t, 5*time.Second, "A's keys", func() bool { return a.issued() >= 100 })
	// Renewals run meanwhile: A keeps its lease past a TTL.
	time.Sleep(2500 * time.Millisecond)
	if r := a.refused(); !r.IsZero() {
		t.Logf("A refused keys while etcd was reachable (a slow machine?) at %v", r)
	}

	proxy.Cut()
	a.mark()
	cut := time.Now()
	gB, claimSent := claimWorker0(t, newSource(t, cliB, ns, fastLease), 20*time.Second)
	t.Logf("cut at 0; A refused at %v; B's successful claim sent at %v",
		a.refused().Sub(cut), claimSent.Sub(cut))

	// Back on the network, A finds its lease gone and never issues again.
	proxy.Resume()
	time.Sleep(3 * time.Second)
	if _, err := gA.NextID(context.Background()); !errors.Is(err, keygen.ErrLeaseLost) {
		t.Fatalf("A after the network came back: %v, want ErrLeaseLost", err)
	}
	if st := gA.(keygen.StatsReporter).Stats(); st.LeaseFailures == 0 || st.LeaseRefusals == 0 {
		t.Fatalf("A's stats: %+v", st)
	}
	checkTakeover(t, a, gA, gB, claimSent)
}

func TestServerRestartWhileCutOffStopsKeysBeforeAnotherClaims(t *testing.T) {
	etcd := startPrivateEtcd(t)
	proxy := dbtest.StartProxy(t, etcd.addr)
	cliA, cliB := etcdClient(t, proxy.Addr()), etcdClient(t, etcd.addr)
	ns := testNamespace(t, cliB)
	cfgA := fastLease
	cfgA.Instance = "process-a"
	gA, err := newGenerator(t, newSource(t, cliA, ns, cfgA))
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	a := startIssuer(gA)
	defer a.halt()
	waitFor(t, 5*time.Second, "A's keys", func() bool { return a.issued() >= 100 })

	// The server crashes and A is cut off; the server comes back, A stays
	// cut off: the restored lease runs out, then B may claim.
	proxy.Cut()
	a.mark()
	etcd.kill()
	down := time.Now()
	waitFor(t, 5*time.Second, "A's refusal", func() bool { return !a.refused().IsZero() })
	etcd.start()
	up := time.Now()
	gB, claimSent := claimWorker0(t, newSource(t, cliB, ns, fastLease), 30*time.Second)
	t.Logf("server down at 0, up at %v; A refused at %v; B's successful claim sent at %v",
		up.Sub(down), a.refused().Sub(down), claimSent.Sub(down))
	proxy.Resume()
	checkTakeover(t, a, gA, gB, claimSent)
}

func TestServerRestartRefusesThenResumesTheSameLease(t *testing.T) {
	etcd := startPrivateEtcd(t)
	cliA, cliB := etcdClient(t, etcd.addr), etcdClient(t, etcd.addr)
	ns := testNamespace(t, cliB)
	gA, err := newGenerator(t, newSource(t, cliA, ns, fastLease))
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	a := startIssuer(gA)
	defer a.halt()
	waitFor(t, 5*time.Second, "A's keys", func() bool { return a.issued() >= 100 })

	a.mark()
	etcd.kill()
	down := time.Now()
	waitFor(t, 5*time.Second, "A's refusal", func() bool { return !a.refused().IsZero() })
	time.Sleep(time.Second)
	etcd.start()
	// etcd restored the lease with a fresh TTL: A's next keep-alive
	// succeeds and it issues again, while B finds id 0 held.
	before := a.issued()
	waitFor(t, 20*time.Second, "A to issue again", func() bool { return a.issued() > before+100 })
	t.Logf("server down at 0; A refused at %v, issued again at %v", a.refused().Sub(down), time.Since(down))
	if _, err := newGenerator(t, onlyWorker{src: newSource(t, cliB, ns, fastLease), max: 0}); !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("claim of A's id after the restart: %v, want ErrNoFreeWorker", err)
	}
	gB, err := newGenerator(t, newSource(t, cliB, ns, fastLease))
	if err != nil {
		t.Fatalf("generator B: %v", err)
	}
	keysB := issueSome(t, gB, 1000)
	a.halt()
	if st := gA.(keygen.StatsReporter).Stats(); st.LeaseFailures == 0 || st.LeaseRenewals == 0 {
		t.Fatalf("A's stats: %+v", st)
	}
	assertDistinct(t, a.keys, keysB)
}

func TestRestartWithClockBehindRefusesOrWaits(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	now := time.Now()
	// A ran with a clock an hour ahead, then closed.
	ahead := keygentest.NewClock(now.Add(time.Hour))
	gA, err := newGenerator(t, newSource(t, cli, ns, Config{}), keygen.WithClock(ahead))
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	keysA := issueSome(t, gA, 100)
	lastA := decomposeTime(t, gA, keysA[len(keysA)-1])
	if err := closeGen(gA); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// B's clock is behind A's last key by far more than the tolerance: refused.
	_, err = newGenerator(t, onlyWorker{src: newSource(t, cli, ns, Config{}), max: 0}, keygen.WithClock(keygentest.NewClock(now)))
	var back *keygen.ClockBackwardsError
	if !errors.As(err, &back) {
		t.Fatalf("generator with the clock an hour behind the id's last use: %v, want a *keygen.ClockBackwardsError", err)
	}

	// C's clock is 5ms behind, within the 10ms tolerance: it waits, and
	// its keys come after A's. B's refused claim released the id.
	behind := keygentest.NewClock(lastA.Add(-5 * time.Millisecond))
	gC, err := newGenerator(t, onlyWorker{src: newSource(t, cli, ns, Config{}), max: 0}, keygen.WithClock(behind))
	if err != nil {
		t.Fatalf("generator with the clock 5ms behind: %v", err)
	}
	keysC := issueSome(t, gC, 100)
	if first := decomposeTime(t, gC, keysC[0]); !first.After(lastA) {
		t.Fatalf("C's first key at %v is not after A's last at %v", first, lastA)
	}
	if len(behind.Sleeps()) == 0 {
		t.Fatal("C issued without waiting for its clock to pass A's last key")
	}
	assertDistinct(t, keysA, keysC)
}

func TestDeletedKeyLosesLeaseForGoodAndRecordKeepsKeysApart(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	srcA := newSource(t, cli, ns, fastLease)
	gA, err := newGenerator(t, srcA)
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	keysA := issueSome(t, gA, 100)
	// An operator deletes A's held key: id 0 looks free while A still
	// issues. A claimant reads A's recorded validity end as LastUsed, ahead
	// of its clock by more than the tolerance, and refuses to start.
	if _, err := cli.Delete(context.Background(), srcA.heldKey(0)); err != nil {
		t.Fatal(err)
	}
	_, err = newGenerator(t, onlyWorker{src: newSource(t, cli, ns, fastLease), max: 0})
	var back *keygen.ClockBackwardsError
	if !errors.As(err, &back) {
		t.Fatalf("claim of an id whose holder's validity has not ended: %v, want a *keygen.ClockBackwardsError", err)
	}
	// A's next renewal finds its key gone: lost for good, even once the
	// key exists again under another lease.
	waitFor(t, 3*time.Second, "A's refusal", func() bool {
		_, err := gA.NextID(context.Background())
		return errors.Is(err, keygen.ErrLeaseLost)
	})
	// A's recorded validity ends at most TTL-SafeGuard after it refused.
	time.Sleep(fastLease.TTL - fastLease.SafeGuard)
	gB, _ := claimWorker0(t, newSource(t, cli, ns, fastLease), 10*time.Second)
	if first, last := decomposeTime(t, gB, issueSome(t, gB, 1)[0]), decomposeTime(t, gA, keysA[len(keysA)-1]); !first.After(last) {
		t.Fatalf("B's first key at %v is not after A's last at %v", first, last)
	}
	keysB := issueSome(t, gB, 100)
	time.Sleep(time.Second) // renewals of A, were it still trying
	if _, err := gA.NextID(context.Background()); !errors.Is(err, keygen.ErrLeaseLost) {
		t.Fatalf("A after B took the id: %v, want ErrLeaseLost", err)
	}
	assertDistinct(t, keysA, keysB)
}

func TestExpiredHolderLastUsedIsNoEarlierThanItsValidityEnd(t *testing.T) {
	shared := dbtest.Etcd(t)
	proxy := dbtest.StartProxy(t, shared)
	cliA, cliB := etcdClient(t, proxy.Addr()), etcdClient(t, shared)
	ns := testNamespace(t, cliB)
	info := keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0}
	lA, err := newSource(t, cliA, ns, fastLease).Acquire(context.Background(), info)
	if err != nil {
		t.Fatalf("Acquire A: %v", err)
	}
	defer lA.Close()
	waitFor(t, 5*time.Second, "a renewal", func() bool { return lA.(keygen.LeaseStats).Renewals() > 0 })
	proxy.Cut()
	// With no renewal after the cut, A's validity no longer moves.
	time.Sleep(fastLease.TTL - fastLease.SafeGuard)
	endA := lA.ValidUntil()
	srcB := newSource(t, cliB, ns, fastLease)
	deadline := time.Now().Add(20 * time.Second)
	for {
		lB, err := srcB.Acquire(context.Background(), info)
		if err == nil {
			defer lB.Close()
			if lB.LastUsed().Before(time.Unix(0, endA)) {
				t.Fatalf("LastUsed %v is before the expired holder's validity end %v", lB.LastUsed(), time.Unix(0, endA))
			}
			t.Logf("LastUsed %v; A's validity ended %v", lB.LastUsed().Format(time.TimeOnly+".000"),
				time.Unix(0, endA).Format(time.TimeOnly+".000000"))
			break
		}
		if !errors.Is(err, ErrNoFreeWorker) || time.Now().After(deadline) {
			t.Fatalf("Acquire B: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v := lA.ValidUntil(); time.Now().UnixNano() < v {
		t.Fatalf("A still valid (until %v) while B holds its id", time.Unix(0, v))
	}
}
