package redislease

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// onlyWorker is a WorkerSource that asks its Source for worker ids up to
// max only, so that a second generator competes for the first one's id,
// and keeps the last lease it got.
type onlyWorker struct {
	s   *Source
	max int64

	mu    sync.Mutex
	lease *Lease
}

func (o *onlyWorker) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	info.MaxWorker = o.max
	l, err := o.s.acquire(ctx, info)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.lease = l
	o.mu.Unlock()
	return l, nil
}

func (o *onlyWorker) last() *Lease {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lease
}

// keyLog records the keys generators issued, failing the test on a key
// issued twice.
type keyLog struct {
	t    testing.TB
	mu   sync.Mutex
	seen map[int64]string
}

func newKeyLog(t testing.TB) *keyLog { return &keyLog{t: t, seen: map[int64]string{}} }

func (k *keyLog) add(who string, id int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if prev, ok := k.seen[id]; ok {
		k.t.Errorf("key %d issued twice: by %s and by %s", id, prev, who)
	}
	k.seen[id] = who
}

// TestClaimantsGetDistinctIDs: 64 generators built at once on one
// namespace get 64 distinct worker ids and distinct fencing tokens, their
// keys never repeat, and closing them releases every id.
func TestClaimantsGetDistinctIDs(t *testing.T) {
	c := sharedClient(t)
	pre := prefix(t)
	const n = 64
	var (
		wg    sync.WaitGroup
		keys  = newKeyLog(t)
		mu    sync.Mutex
		srcs  []*onlyWorker
		gens  []closingGenerator
		start = make(chan struct{})
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each claimant has a Source of its own, as separate processes do.
			src := &onlyWorker{s: newSource(t, c, Config{Prefix: pre, TTL: 2 * time.Second}), max: 1023}
			<-start
			g, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
			if err != nil {
				t.Errorf("NewID: %v", err)
				return
			}
			cg := g.(closingGenerator)
			mu.Lock()
			srcs, gens = append(srcs, src), append(gens, cg)
			mu.Unlock()
			for j := 0; j < 200; j++ {
				id, err := cg.NextID(context.Background())
				if err != nil {
					t.Errorf("NextID: %v", err)
					return
				}
				keys.add(src.last().Owner(), id)
			}
		}()
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		for _, g := range gens {
			g.Close()
		}
		t.FailNow()
	}
	workers, fences := map[int64]bool{}, map[int64]bool{}
	for _, src := range srcs {
		l := src.last()
		if workers[l.Worker()] {
			t.Errorf("worker id %d claimed twice", l.Worker())
		}
		if fences[l.Fence()] {
			t.Errorf("fencing token %d issued twice", l.Fence())
		}
		workers[l.Worker()], fences[l.Fence()] = true, true
	}
	for w := int64(0); w < n; w++ {
		if !workers[w] {
			t.Errorf("worker %d not claimed: the lowest free ids are taken first", w)
		}
	}
	if len(keys.seen) != n*200 {
		t.Errorf("%d keys, want %d", len(keys.seen), n*200)
	}
	s := newSource(t, c, Config{Prefix: pre})
	slots, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != n {
		t.Fatalf("List: %d slots, want %d", len(slots), n)
	}
	for i, sl := range slots {
		if sl.Worker != int64(i) || !sl.Held || sl.Owner == "" || sl.TTL <= 0 || sl.TTL > 2*time.Second || sl.Fence == 0 {
			t.Errorf("slot %d while held: %+v", i, sl)
		}
	}
	for _, g := range gens {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	slots, err = List(context.Background(), Config{Client: c, Prefix: pre})
	if err != nil {
		t.Fatal(err)
	}
	for _, sl := range slots {
		if sl.Held || sl.Owner != "" || sl.TTL != 0 || sl.LastUsed.IsZero() {
			t.Errorf("slot after Close: %+v", sl)
		}
	}
}

// issueUntilStopped issues keys from g into keys until stop is closed,
// returning the wall time of its last successful key and of its first
// ErrLeaseLost.
func issueUntilStopped(t testing.TB, g closingGenerator, who string, keys *keyLog, stop <-chan struct{}) (lastOK, firstLost func() time.Time) {
	var (
		mu       sync.Mutex
		ok, lost time.Time
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			id, err := g.NextID(context.Background())
			now := time.Now()
			switch {
			case err == nil:
				keys.add(who, id)
				mu.Lock()
				ok = now
				mu.Unlock()
			case errors.Is(err, keygen.ErrLeaseLost):
				mu.Lock()
				if lost.IsZero() {
					lost = now
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
			default:
				t.Errorf("%s: NextID: %v", who, err)
				return
			}
		}
	}()
	t.Cleanup(func() { <-done })
	get := func(p *time.Time) func() time.Time {
		return func() time.Time { mu.Lock(); defer mu.Unlock(); return *p }
	}
	return get(&ok), get(&lost)
}

// otherProcess is the wall clock, as a Clock of its own: generators of one
// worker id on one clock in a process share their state (and so could not
// repeat each other's keys); on two clocks they are as two processes.
type otherProcess struct{}

func (otherProcess) Now() time.Time        { return time.Now() }
func (otherProcess) Sleep(d time.Duration) { time.Sleep(d) }

// claimWhenFree builds a generator on src (which offers only the first
// generator's worker id), retrying while the id is held, and returns it.
func claimWhenFree(t testing.TB, src *onlyWorker, d time.Duration, opts ...keygen.Option) closingGenerator {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		g, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, append(opts, keygen.WithWorkerSource(src))...)
		if err == nil {
			cg := g.(closingGenerator)
			t.Cleanup(func() { cg.Close() })
			return cg
		}
		if !errors.Is(err, ErrNoFreeWorker) {
			t.Fatalf("second claimant: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("second claimant: no claim within %v: %v", d, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestNetworkCutStopsKeysBeforeAnotherProcessClaims: a generator cut off
// from Redis issues keys until its validity ends and then returns
// ErrLeaseLost; a second claimant, which reaches Redis, gets the worker id
// only after the first generator's last key, and once the network is back
// the first lease, taken over, never issues again. No key repeats.
func TestNetworkCutStopsKeysBeforeAnotherProcessClaims(t *testing.T) {
	addr := dbtest.Redis(t)
	p := dbtest.StartProxy(t, addr)
	pre := prefix(t)
	const ttl = time.Second
	cfg := Config{Prefix: pre, TTL: ttl}
	srcA := &onlyWorker{s: newSource(t, client(t, p.Addr()), cfg), max: 0}
	srcB := &onlyWorker{s: newSource(t, client(t, addr), cfg), max: 0}
	gA := claimWhenFree(t, srcA, 10*time.Second)
	keys := newKeyLog(t)
	stop := make(chan struct{})
	defer close(stop)
	lastA, lostA := issueUntilStopped(t, gA, "A", keys, stop)
	time.Sleep(ttl / 2) // a renewal or so before the cut
	p.Cut()
	cut := time.Now()
	gB := claimWhenFree(t, srcB, 10*time.Second, keygen.WithClock(otherProcess{}))
	claimed := srcB.last().claimedAt
	if lostA().IsZero() {
		t.Fatal("the second claimant got the id while the first generator had not yet returned ErrLeaseLost")
	}
	if l := lastA(); !l.Before(claimed.Add(time.Millisecond)) {
		t.Fatalf("the first generator issued a key at %v, after the second claimed the id at %v (server clock)", l, claimed)
	}
	if d := lostA().Sub(cut); d > ttl {
		t.Errorf("keys issued %v after the cut, beyond the %v lease", d, ttl)
	}
	t.Logf("cut → first ErrLeaseLost %v; cut → second claim %v (TTL %v)", lostA().Sub(cut), claimed.Sub(cut), ttl)
	lastB, _ := issueUntilStopped(t, gB, "B", keys, stop)
	p.Resume()
	lease := srcA.last()
	waitFor(t, 5*time.Second, "the first lease to find its key taken", lease.Lost)
	renewals := lease.Renewals()
	time.Sleep(3 * srcA.s.renew)
	if lease.Renewals() != renewals || lease.ValidUntil() != math.MinInt64 {
		t.Errorf("a taken-over lease renewed again: %d → %d renewals, valid until %d", renewals, lease.Renewals(), lease.ValidUntil())
	}
	if l := lastA(); !l.Before(claimed.Add(time.Millisecond)) {
		t.Errorf("the first generator issued a key at %v after the network came back", l)
	}
	if lastB().IsZero() {
		t.Error("the second generator issued nothing")
	}
	if st := gA.(keygen.StatsReporter).Stats(); st.LeaseFailures == 0 || st.LeaseRefusals == 0 {
		t.Errorf("first generator's stats %+v", st)
	}
}

// TestServerRestartStopsKeysBeforeAnotherProcessClaims: a Redis server
// without persistence is killed and started again, forgetting every lease.
// The generator holding a worker id stops (ErrLeaseLost) and never
// resumes; a second claimant trying at once gets the id only after the
// quarantine, which ends after the first generator's last key; its fencing
// token is larger. No key repeats.
func TestServerRestartStopsKeysBeforeAnotherProcessClaims(t *testing.T) {
	r := privateRedis(t)
	const ttl = time.Second
	cfg := Config{TTL: ttl, Prefix: prefix(t)}
	srcA := &onlyWorker{s: newSource(t, client(t, r.addr()), cfg), max: 0}
	srcB := &onlyWorker{s: newSource(t, client(t, r.addr()), cfg), max: 0}
	gA := claimWhenFree(t, srcA, 10*time.Second) // waits for the new server's quarantine
	keys := newKeyLog(t)
	stop := make(chan struct{})
	defer close(stop)
	lastA, lostA := issueUntilStopped(t, gA, "A", keys, stop)
	time.Sleep(ttl / 2)
	r.restart()
	restarted := time.Now()
	gB := claimWhenFree(t, srcB, 10*time.Second, keygen.WithClock(otherProcess{}))
	claimed := srcB.last().claimedAt
	if lostA().IsZero() {
		t.Fatal("the second claimant got the id while the first generator had not yet returned ErrLeaseLost")
	}
	if l := lastA(); !l.Before(claimed.Add(time.Millisecond)) {
		t.Fatalf("the first generator issued a key at %v, after the second claimed the id at %v (server clock)", l, claimed)
	}
	if q := srcB.s.quarantine(); claimed.Sub(restarted) < q-time.Second {
		t.Errorf("claimed %v after the restart, before the %v quarantine", claimed.Sub(restarted), q)
	}
	t.Logf("restart → first ErrLeaseLost %v; restart → second claim %v (TTL %v)", lostA().Sub(restarted), claimed.Sub(restarted), ttl)
	if fa, fb := srcA.last().Fence(), srcB.last().Fence(); fb <= fa {
		t.Errorf("fencing token after the restart %d, not above %d before it", fb, fa)
	}
	if lb := srcB.last().LastUsed(); lb.Before(lastA()) {
		t.Errorf("LastUsed after the restart %v, before the first generator's last key at %v", lb, lastA())
	}
	issueUntilStopped(t, gB, "B", keys, stop)
	time.Sleep(3 * srcA.s.renew)
	if !srcA.last().Lost() {
		t.Error("the first lease is not lost after the restart")
	}
	if l := lastA(); !l.Before(claimed.Add(time.Millisecond)) {
		t.Errorf("the first generator issued a key at %v after the restart", l)
	}
}

// TestRestartWithClockBehindLastUse: a worker id released after keys at
// time T is refused to a generator whose clock reads well before T (a
// restart with the clock set back); within the tolerance the generator
// waits past T.
func TestRestartWithClockBehindLastUse(t *testing.T) {
	// One id only: a free id used later than the server's clock is
	// claimed last when others are free (TestIDUsedAheadOfTheClockDoesNotBlockNewGenerators).
	s := &onlyWorker{s: newSource(t, sharedClient(t), Config{TTL: time.Second}), max: 0}
	now := time.Now()
	late := keygentest.NewClock(now.Add(10 * time.Second))
	g := generatorOn(t, s, keygen.WithClock(late))
	last, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := workerOf(t, g, last)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithClock(keygentest.NewClock(now)), keygen.WithWorkerSource(s))
	var cb *keygen.ClockBackwardsError
	if !errors.As(err, &cb) {
		t.Fatalf("a clock 10 s behind the worker's last use: %v, want *keygen.ClockBackwardsError", err)
	}
	near := keygentest.NewClock(now.Add(10*time.Second - 5*time.Millisecond))
	g2 := generatorOn(t, s, keygen.WithClock(near))
	id, err := g2.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if workerOf(t, g2, id) != w {
		t.Fatalf("worker %d, want the released %d", workerOf(t, g2, id), w)
	}
	if id <= last {
		t.Fatalf("key %d at or before the last one %d of worker %d", id, last, w)
	}
	if len(near.Sleeps()) == 0 {
		t.Error("the generator did not wait for its clock")
	}
}

// TestCloseReleasesWithLastUse: Close deletes the key and records the last
// issued time, which the next holder of the id gets as LastUsed.
func TestCloseReleasesWithLastUse(t *testing.T) {
	c := sharedClient(t)
	s := newSource(t, c, Config{TTL: time.Second})
	src := &onlyWorker{s: s, max: 1023}
	clock := keygentest.NewClock(time.Now().Add(time.Hour))
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithClock(clock), keygen.WithWorkerSource(src))
	if err != nil {
		t.Fatal(err)
	}
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lease := src.last()
	if err := g.(closingGenerator).Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(context.Background(), lease.Key()).Result(); err != nil || n != 0 {
		t.Fatalf("key %s after Close: exists %d, %v", lease.Key(), n, err)
	}
	sl := slot(t, s, lease.Worker())
	// The generator reports the end of its last issued millisecond.
	if d := sl.LastUsed.Sub(clock.Now()); sl.Held || sl.Owner != "" || d < -time.Millisecond || d > time.Millisecond || sl.Fence != lease.Fence() {
		t.Fatalf("slot after Close %+v, want released with last use about %v (key %d)", sl, clock.Now(), id)
	}
	wantLast := sl.LastUsed
	// Only this id: with others free, an id used later than the server's
	// clock is claimed last.
	next := acquire(t, s, keygen.WorkerInfo{MaxWorker: 0})
	if next.Worker() != lease.Worker() || !next.LastUsed().Equal(wantLast) || next.Fence() <= lease.Fence() {
		t.Fatalf("next claim: worker %d, last used %v, fence %d; want worker %d, %v, above %d",
			next.Worker(), next.LastUsed(), next.Fence(), lease.Worker(), wantLast, lease.Fence())
	}
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	if err := next.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if next.ValidUntil() != math.MinInt64 {
		t.Error("a closed lease is still valid")
	}
}

// TestExpiredHolderLastUsedNotBeforeItsExpiry: an id whose holder stopped
// renewing without releasing it is claimed again only once its key
// expired, with LastUsed no earlier than the end of the last renewal.
func TestExpiredHolderLastUsedNotBeforeItsExpiry(t *testing.T) {
	addr := dbtest.Redis(t)
	p := dbtest.StartProxy(t, addr)
	pre := prefix(t)
	cfg := Config{Prefix: pre, TTL: 500 * time.Millisecond}
	a := acquire(t, newSource(t, client(t, p.Addr()), cfg), keygen.WorkerInfo{MaxWorker: 0})
	waitFor(t, 2*time.Second, "a renewal", func() bool { return a.Renewals() > 0 })
	p.Cut()
	sB := newSource(t, client(t, addr), cfg)
	var b *Lease
	waitFor(t, 5*time.Second, "the id to free", func() bool {
		l, err := sB.acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 0})
		if errors.Is(err, ErrNoFreeWorker) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		b = l
		return true
	})
	t.Cleanup(func() { b.Close() })
	exp := slot(t, sB, 0)
	if now := time.Now().UnixNano(); a.ValidUntil() > now {
		t.Errorf("the cut-off lease is still valid for %v after another claimed its id", time.Duration(a.ValidUntil()-now))
	}
	// The slot now shows b's claim; a's last renewal ended at most TTL
	// before b's claim, and LastUsed must be no earlier than that end.
	if b.LastUsed().Before(b.claimedAt.Add(-cfg.TTL)) || b.LastUsed().After(b.claimedAt) {
		t.Errorf("LastUsed %v, want the dead holder's expiry, between %v and %v", b.LastUsed(), b.claimedAt.Add(-cfg.TTL), b.claimedAt)
	}
	if exp.Owner != b.Owner() {
		t.Errorf("slot owner %q, want %q", exp.Owner, b.Owner())
	}
	p.Resume()
	waitFor(t, 5*time.Second, "the cut-off lease to find its id taken", a.Lost)
	if err := a.Close(); err != nil {
		t.Errorf("Close of a lost lease: %v", err)
	}
	if sl := slot(t, sB, 0); !sl.Held || sl.Owner != b.Owner() {
		t.Errorf("closing the lost lease touched the new holder's key: %+v", sl)
	}
}

// TestDeletedKeyStaysHeldUntilItsRecordRunsOut: a holder key deleted
// behind the package's back (an operator, an eviction) does not free the
// id while its record says the lease runs: the next claimant takes
// another id, and the holder, finding its key gone, stops for good.
func TestDeletedKeyStaysHeldUntilItsRecordRunsOut(t *testing.T) {
	c := sharedClient(t)
	s := newSource(t, c, Config{TTL: time.Second})
	a := acquire(t, s, keygen.WorkerInfo{MaxWorker: 1})
	if err := c.Del(context.Background(), a.Key()).Err(); err != nil {
		t.Fatal(err)
	}
	b := acquire(t, s, keygen.WorkerInfo{MaxWorker: 1})
	if b.Worker() == a.Worker() {
		t.Fatalf("worker %d claimed again while its record ran", a.Worker())
	}
	waitFor(t, 3*time.Second, "the holder to find its key gone", a.Lost)
	if a.ValidUntil() != math.MinInt64 {
		t.Error("a lost lease is still valid")
	}
}

// TestLostStateStartsAQuarantine: a namespace whose record names another
// server (restored from a snapshot, or a replica promoted by failover) is
// in quarantine for TTL + SafeGuard: a claim waits or, with too short a
// context, fails with ErrQuarantine; fencing tokens keep increasing.
func TestLostStateStartsAQuarantine(t *testing.T) {
	c := sharedClient(t)
	s := newSource(t, c, Config{TTL: 500 * time.Millisecond})
	a := acquire(t, s, keygen.WorkerInfo{MaxWorker: 1023})
	if err := c.HSet(context.Background(), s.nsKey(), "run", "0123456789abcdef").Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := s.Acquire(ctx, keygen.WorkerInfo{MaxWorker: 1023})
	var qe *QuarantineError
	if !errors.As(err, &qe) || !errors.Is(err, ErrQuarantine) || qe.Wait <= 0 || qe.Wait > s.quarantine() {
		t.Fatalf("claim right after the state was found stale: %v, want a *QuarantineError", err)
	}
	began := time.Now()
	b := acquire(t, s, keygen.WorkerInfo{MaxWorker: 1023})
	if waited := time.Since(began); waited < qe.Wait-50*time.Millisecond {
		t.Errorf("claimed after %v, within the %v quarantine", waited, qe.Wait)
	}
	if b.Fence() <= a.Fence() || b.Worker() == a.Worker() {
		t.Errorf("after the quarantine: worker %d fence %d; before: worker %d fence %d", b.Worker(), b.Fence(), a.Worker(), a.Fence())
	}
}

// TestEvictingServerIsRefused: a server that may evict keys without expiry
// (maxmemory-policy allkeys-*) could lose the records proving an id is
// held: no id is claimed on it.
func TestEvictingServerIsRefused(t *testing.T) {
	r := privateRedis(t, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
	s := newSource(t, client(t, r.addr()), Config{})
	_, err := s.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 1023})
	if !errors.Is(err, ErrEvictingServer) {
		t.Fatalf("claim on an allkeys-lru server: %v, want ErrEvictingServer", err)
	}
}

// TestAllHeldIsErrNoFreeWorker: with every id of the layout held a claim
// fails with ErrNoFreeWorker instead of waiting.
func TestAllHeldIsErrNoFreeWorker(t *testing.T) {
	s := newSource(t, sharedClient(t), Config{TTL: time.Second})
	for w := int64(0); w < 3; w++ {
		if l := acquire(t, s, keygen.WorkerInfo{MaxWorker: 2}); l.Worker() != w {
			t.Fatalf("claim %d got worker %d", w, l.Worker())
		}
	}
	_, err := s.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 2})
	if !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("fourth claim of 3 ids: %v, want ErrNoFreeWorker", err)
	}
}

// TestConfig: the zero Config but Client is valid; bad values are errors.
func TestConfig(t *testing.T) {
	c := client(t, "127.0.0.1:1") // never dialled
	s, err := New(Config{Client: c})
	if err != nil {
		t.Fatal(err)
	}
	if s.ttl != DefaultTTL || s.renew != DefaultTTL/3 || s.safeGuard != DefaultTTL/10 || s.namespace != DefaultNamespace ||
		s.prefix != DefaultPrefix || s.instance == "" || s.base != "{shardkey:worker:default}" {
		t.Errorf("defaults: %+v", s)
	}
	if s.idKey(7) != "{shardkey:worker:default}:id:7" {
		t.Errorf("key %q", s.idKey(7))
	}
	s, err = New(Config{Client: c, TTL: 1500 * time.Microsecond * 1000})
	if err != nil || s.ttl != 1500*time.Millisecond {
		t.Errorf("TTL 1.5s: %v, %v", s.ttl, err)
	}
	for name, cfg := range map[string]Config{
		"no client":           {},
		"short TTL":           {Client: c, TTL: time.Millisecond},
		"negative safeguard":  {Client: c, SafeGuard: -1},
		"safeguard half TTL":  {Client: c, TTL: time.Second, SafeGuard: 500 * time.Millisecond},
		"negative renew":      {Client: c, RenewInterval: -1},
		"renew too slow":      {Client: c, TTL: time.Second, RenewInterval: 950 * time.Millisecond},
		"brace in namespace":  {Client: c, Namespace: "a{b"},
		"brace in prefix":     {Client: c, Prefix: "p}"},
		"colon in namespace":  {Client: c, Namespace: "a:b"},
		"long namespace":      {Client: c, Namespace: string(make([]byte, MaxNameLen+1))},
		"long instance":       {Client: c, Instance: string(make([]byte, MaxNameLen+1))},
		"renew equal to life": {Client: c, TTL: time.Second, SafeGuard: 100 * time.Millisecond, RenewInterval: 900 * time.Millisecond},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := List(context.Background(), Config{}); err == nil {
		t.Error("List without a client: no error")
	}
	if _, err := s.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: -1}); err == nil {
		t.Error("negative MaxWorker: no error")
	}
}

// TestListShowsHoldersOfEveryNamespace: Namespaces finds the namespaces
// under a prefix, and List shows each id's holder, remaining TTL, fencing
// token and last use, for held, released and run-out ids alike.
func TestListShowsHoldersOfEveryNamespace(t *testing.T) {
	c := sharedClient(t)
	pre := prefix(t)
	orders := newSource(t, c, Config{Prefix: pre, Namespace: "orders", TTL: time.Second})
	users := newSource(t, c, Config{Prefix: pre, Namespace: "users", TTL: 200 * time.Millisecond})
	held := acquire(t, orders, keygen.WorkerInfo{MaxWorker: 1023})
	released := acquire(t, orders, keygen.WorkerInfo{MaxWorker: 1023})
	released.Track(func() time.Time { return time.UnixMilli(1_700_000_000_123) })
	if err := released.Close(); err != nil {
		t.Fatal(err)
	}
	// A holder that stops renewing without releasing: its renewal
	// goroutine is ended by hand, as a killed process's would be.
	dead := acquire(t, users, keygen.WorkerInfo{MaxWorker: 1023})
	dead.stopRenewal()
	dead.lost.Store(true) // its Close must not release
	ns, err := Namespaces(context.Background(), c, pre)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 || ns[0] != "orders" || ns[1] != "users" {
		t.Fatalf("Namespaces: %q, want [orders users]", ns)
	}
	slots, err := List(context.Background(), Config{Client: c, Prefix: pre, Namespace: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 2 {
		t.Fatalf("orders: %+v", slots)
	}
	h, r := slots[0], slots[1]
	if h.Worker != held.Worker() || !h.Held || h.Owner != held.Owner() || h.Key != held.Key() || h.Fence != held.Fence() ||
		h.TTL <= 0 || h.TTL > time.Second || h.ExpiresAt.Before(time.Now()) {
		t.Errorf("held slot %+v (lease %s fence %d)", h, held.Owner(), held.Fence())
	}
	if r.Worker != released.Worker() || r.Held || r.Owner != "" || r.TTL != 0 || r.Fence != released.Fence() ||
		!r.LastUsed.Equal(time.UnixMilli(1_700_000_000_123)) {
		t.Errorf("released slot %+v", r)
	}
	waitFor(t, 2*time.Second, "the dead holder's key to expire", func() bool {
		sl := slot(t, users, dead.Worker())
		return !sl.Held
	})
	if sl := slot(t, users, dead.Worker()); sl.Owner != dead.Owner() || sl.TTL != 0 || sl.ExpiresAt.After(time.Now()) {
		t.Errorf("run-out slot %+v, want the dead holder's token %s", sl, dead.Owner())
	}
}

// TestShortCutRenewsAgain: a network cut shorter than the validity costs
// failed renewals only; the next renewal that reaches Redis finds the key
// still the lease's, and the generator never stopped.
func TestShortCutRenewsAgain(t *testing.T) {
	addr := dbtest.Redis(t)
	p := dbtest.StartProxy(t, addr)
	src := &onlyWorker{s: newSource(t, client(t, p.Addr()), Config{TTL: 2 * time.Second}), max: 1023}
	g := claimWhenFree(t, src, 10*time.Second)
	l := src.last()
	p.Cut()
	waitFor(t, 5*time.Second, "a failed renewal", func() bool { return l.Failures() > 0 })
	p.Resume()
	renewed := l.Renewals()
	waitFor(t, 5*time.Second, "a renewal after the cut", func() bool { return l.Renewals() > renewed })
	if l.Lost() {
		t.Fatal("a lease whose key stayed its own is lost")
	}
	if _, err := g.NextID(context.Background()); err != nil {
		t.Fatalf("NextID after the cut: %v", err)
	}
	// (LeaseRefusals is not checked: generators of one worker id in a
	// process share their counters, and earlier tests' ran out.)
	if st := g.(keygen.StatsReporter).Stats(); st.LeaseFailures == 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestRetriedClaimGetsTheSameID: a claim sent again with the same owner
// token (a client retrying after a lost reply) returns the id the first
// try took instead of taking a second one.
func TestRetriedClaimGetsTheSameID(t *testing.T) {
	c := sharedClient(t)
	s := newSource(t, c, Config{TTL: time.Second})
	keys := []string{s.nsKey(), s.fenceKey(), s.idsKey()}
	claim := func() []any {
		t.Helper()
		for {
			res, err := claimScript.Run(context.Background(), c, keys, s.base, "retry-token", s.ttl.Milliseconds(), 1023,
				s.quarantine().Milliseconds(), time.Now().Add(s.ttl).UnixMilli()).Slice()
			if err != nil {
				t.Fatal(err)
			}
			if reply(res, 0) != "wait" {
				return res
			}
			time.Sleep(time.Duration(integer(res, 1)) * time.Millisecond)
		}
	}
	first, again := claim(), claim()
	if reply(first, 0) != "ok" || reply(again, 0) != "ok" || integer(first, 1) != integer(again, 1) ||
		integer(first, 2) != integer(again, 2) || integer(first, 3) != integer(again, 3) {
		t.Fatalf("first claim %v, retried %v", first, again)
	}
	if slots, err := s.List(context.Background()); err != nil || len(slots) != 1 {
		t.Fatalf("after a retried claim: %+v, %v", slots, err)
	}
}

// TestRestartFromAppendOnlyFileStartsAQuarantine: a server restarted with
// its data restored (AOF, fsync on every write) has every lease back, but
// possibly older than it was, and written by another run: claims wait the
// quarantine from the first claim after the restart; the holder whose key
// came back renews and keeps issuing; fencing tokens keep increasing.
func TestRestartFromAppendOnlyFileStartsAQuarantine(t *testing.T) {
	r := privateRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	cfg := Config{TTL: time.Second, Prefix: prefix(t)}
	a := acquire(t, newSource(t, client(t, r.addr()), cfg), keygen.WorkerInfo{MaxWorker: 1})
	r.restart()
	restarted := time.Now()
	sB := newSource(t, client(t, r.addr()), cfg)
	b := acquire(t, sB, keygen.WorkerInfo{MaxWorker: 1})
	if b.Worker() == a.Worker() {
		t.Fatalf("worker %d, restored as held, claimed again", b.Worker())
	}
	if waited := b.claimedAt.Sub(restarted); waited < sB.quarantine()-10*time.Millisecond {
		t.Errorf("claimed %v after the restart, within the %v quarantine", waited, sB.quarantine())
	}
	if b.Fence() <= a.Fence() {
		t.Errorf("fencing token %d after the restart, not above %d", b.Fence(), a.Fence())
	}
	renewed := a.Renewals()
	waitFor(t, 3*time.Second, "the restored holder to renew", func() bool { return a.Renewals() > renewed })
	if a.Lost() || a.ValidUntil() < time.Now().UnixNano() {
		t.Error("the holder whose key was restored lost its lease")
	}
}

// TestTakenOverLeaseNeverRenewsAgain: once a renewal finds the key naming
// another holder the lease is lost for good: it stops renewing, stays
// invalid even if its token comes back, and its Close leaves the key alone.
func TestTakenOverLeaseNeverRenewsAgain(t *testing.T) {
	c := sharedClient(t)
	s := newSource(t, c, Config{TTL: 300 * time.Millisecond})
	l := acquire(t, s, keygen.WorkerInfo{MaxWorker: 0})
	ctx := context.Background()
	if err := c.Set(ctx, l.Key(), "another-holder/0123456789abcdef", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the lease to find its key taken", l.Lost)
	if l.ValidUntil() != math.MinInt64 {
		t.Fatal("a taken-over lease is still valid")
	}
	renewals := l.Renewals()
	// The key names the lease again: still lost, no renewal.
	if err := c.Set(ctx, l.Key(), l.Owner(), time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * s.renew)
	if l.Renewals() != renewals || l.ValidUntil() != math.MinInt64 {
		t.Fatalf("a lost lease renewed again: %d → %d renewals, valid until %d", renewals, l.Renewals(), l.ValidUntil())
	}
	if err := c.Set(ctx, l.Key(), "another-holder/0123456789abcdef", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close of a lost lease: %v", err)
	}
	if v, err := c.Get(ctx, l.Key()).Result(); err != nil || v != "another-holder/0123456789abcdef" {
		t.Fatalf("Close of a lost lease touched the key: %q, %v", v, err)
	}
	c.Del(ctx, l.Key())
}
