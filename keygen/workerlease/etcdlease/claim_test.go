package etcdlease

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestNewChecksConfig(t *testing.T) {
	cli := &clientv3.Client{} // New sends nothing
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no client", Config{}, "Client is nil"},
		{"short TTL", Config{Client: cli, TTL: 500 * time.Millisecond}, "shorter than"},
		{"negative safeguard", Config{Client: cli, SafeGuard: -time.Second}, "negative SafeGuard"},
		{"safeguard as long as TTL", Config{Client: cli, TTL: 2 * time.Second, SafeGuard: 2 * time.Second}, "not shorter than TTL"},
		{"slash in namespace", Config{Client: cli, Namespace: "a/b"}, "namespace"},
		{"long instance", Config{Client: cli, Instance: strings.Repeat("x", MaxInstanceLen+1)}, "instance"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	s, err := New(Config{Client: cli, TTL: 1500 * time.Millisecond})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if s.ttl != 2*time.Second || s.safeGuard != 400*time.Millisecond || s.namespace != DefaultNamespace ||
		s.prefix != DefaultPrefix+DefaultNamespace+"/" || s.Instance() == "" {
		t.Fatalf("defaults: ttl %v safeguard %v prefix %q instance %q", s.ttl, s.safeGuard, s.prefix, s.Instance())
	}
}

func TestFreeIDsAreTheLowestNotHeld(t *testing.T) {
	got := freeIDs([]int64{0, 1, 3, 4, 7}, 9, 4)
	if want := []int64{2, 5, 6, 8}; !equal(got, want) {
		t.Fatalf("freeIDs = %v, want %v", got, want)
	}
	if got := freeIDs([]int64{0, 1}, 1, 4); len(got) != 0 {
		t.Fatalf("freeIDs of a full space = %v", got)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestClaimantsGetDistinctIDs(t *testing.T) {
	const claimants = 64
	clients := []*clientv3.Client{sharedEtcd(t), sharedEtcd(t), sharedEtcd(t), sharedEtcd(t)}
	ns := testNamespace(t, clients[0])
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		leases []keygen.Lease
		errs   []error
	)
	start := make(chan struct{})
	for i := range claimants {
		src := newSource(t, clients[i%len(clients)], ns, Config{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 1023})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			leases = append(leases, l)
		}()
	}
	close(start)
	wg.Wait()
	defer func() {
		for _, l := range leases {
			l.Close()
		}
	}()
	if len(errs) > 0 {
		t.Fatalf("%d claims failed, first: %v", len(errs), errs[0])
	}
	held := map[int64]bool{}
	for _, l := range leases {
		if held[l.Worker()] {
			t.Fatalf("worker id %d given to two claimants", l.Worker())
		}
		held[l.Worker()] = true
	}
	// The lowest free ids: exactly 0..63.
	for w := range int64(claimants) {
		if !held[w] {
			t.Fatalf("worker id %d not claimed; held: %v", w, held)
		}
	}
	slots, err := newSource(t, clients[0], ns, Config{}).List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(slots) != claimants {
		t.Fatalf("List has %d slots, want %d", len(slots), claimants)
	}
	for i, sl := range slots {
		if sl.Worker != int64(i) || !sl.Held || sl.TTL <= 0 || sl.LeaseID == 0 || sl.ValidUntil.IsZero() {
			t.Fatalf("slot %d: %+v", i, sl)
		}
	}
}

func TestAllIDsHeldIsErrNoFreeWorker(t *testing.T) {
	cli := sharedEtcd(t)
	src := newSource(t, cli, testNamespace(t, cli), Config{})
	info := keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 1}
	for range 2 {
		l, err := src.Acquire(context.Background(), info)
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		defer l.Close()
	}
	_, err := src.Acquire(context.Background(), info)
	if !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("third Acquire of 2 ids: %v, want ErrNoFreeWorker", err)
	}
	// The refused claim left no lease or key behind.
	slots, err := src.List(context.Background())
	if err != nil || len(slots) != 2 {
		t.Fatalf("List after refusal: %v %+v", err, slots)
	}
}

func TestCloseReleasesAtOnceWithLastUsed(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	srcA := newSource(t, cli, ns, Config{Instance: "process-a"})
	gA, err := newGenerator(t, srcA)
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	var last int64
	for range 1000 {
		if last, err = gA.NextID(context.Background()); err != nil {
			t.Fatalf("NextID: %v", err)
		}
	}
	lastTime := decomposeTime(t, gA, last)
	if err := closeGen(gA); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closed := time.Now()
	// Released: the next claimant gets id 0 at once, however long the TTL.
	srcB := newSource(t, cli, ns, Config{Instance: "process-b", TTL: time.Minute})
	began := time.Now()
	l, err := srcB.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0})
	if err != nil {
		t.Fatalf("Acquire after Close: %v", err)
	}
	defer l.Close()
	took := time.Since(began)
	if l.Worker() != 0 || took > 10*time.Second {
		t.Fatalf("claim after release: worker %d after %v", l.Worker(), took)
	}
	// Close stores the clock's reading as it ends the validity (a key in
	// flight may still take a time up to it), so LastUsed is the last key
	// or a little later, never later than Close's end.
	if l.LastUsed().Before(lastTime) || l.LastUsed().After(closed.Add(time.Millisecond)) {
		t.Fatalf("LastUsed %v; the last key was at %v, Close ended at %v", l.LastUsed(), lastTime, closed)
	}
	slots, err := srcB.List(context.Background())
	if err != nil || len(slots) != 1 {
		t.Fatalf("List: %v %+v", err, slots)
	}
	if sl := slots[0]; !sl.Held || !strings.HasPrefix(sl.Owner, "process-b/") || sl.TTL <= 0 || sl.TTL > time.Minute {
		t.Fatalf("slot: %+v", sl)
	}
	t.Logf("claimed a released id in %v, LastUsed %v (last key %v)", took, l.LastUsed(), lastTime)
}

func decomposeTime(t testing.TB, g keygen.IDGenerator, id int64) time.Time {
	t.Helper()
	p, err := g.(keygen.Decomposer).Decompose(id)
	if err != nil {
		t.Fatalf("Decompose: %v", err)
	}
	return p.Time
}

func TestRecordUnreadableRefusesClaim(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, Config{})
	if _, err := cli.Put(context.Background(), src.lastKey(0), "not json"); err != nil {
		t.Fatal(err)
	}
	_, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0})
	var re *RecordError
	if !errors.As(err, &re) || re.Key != src.lastKey(0) {
		t.Fatalf("Acquire with a corrupt record: %v, want a *RecordError", err)
	}
	// The failed claim revoked its lease: the held key is gone.
	resp, err := cli.Get(context.Background(), src.heldKey(0))
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("held key after a refused claim: %v %v", err, resp.Kvs)
	}
}
