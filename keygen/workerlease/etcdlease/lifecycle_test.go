package etcdlease

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
)

// Close may be called twice, from several goroutines, while renewals run:
// every call returns the same result, and the ids are released.
func TestCloseTwiceAndConcurrentlyWithRenewals(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, fastLease)
	var leases []keygen.Lease
	for range 8 {
		l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 1023})
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		leases = append(leases, l)
	}
	waitFor(t, 5*time.Second, "renewals", func() bool { return leases[7].(keygen.LeaseStats).Renewals() > 0 })
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(leases))
	for _, l := range leases {
		for range 4 {
			wg.Go(func() { errs <- l.Close() })
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	for _, l := range leases {
		if err := l.Close(); err != nil {
			t.Errorf("Close again: %v", err)
		}
		if v := l.ValidUntil(); v > time.Now().UnixNano() {
			t.Errorf("valid until %v after Close", time.Unix(0, v))
		}
	}
	slots, err := src.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, sl := range slots {
		if sl.Held {
			t.Errorf("still held after Close: %+v", sl)
		}
	}
}

// A client closed under a live lease: renewals fail, the validity runs
// out and is not moved again, Close reports the failure, Acquire on the
// closed client fails fast, and no goroutine is left (TestMain).
func TestClosedClientStopsTheHolderAndRefusesAcquire(t *testing.T) {
	cli := etcdClient(t, dbtest.Etcd(t))
	ns := testNamespace(t, sharedEtcd(t))
	var logs syncBuffer
	cfg := fastLease
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	src := newSource(t, cli, ns, cfg)
	l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	end := l.ValidUntil()
	cli.Close()
	waitFor(t, 2*fastLease.TTL, "the validity to end", func() bool { return time.Now().UnixNano() >= l.ValidUntil() })
	time.Sleep(time.Second)
	if v := l.ValidUntil(); v > time.Now().UnixNano() || v > end+int64(fastLease.TTL) {
		t.Fatalf("validity moved to %v with the client closed", time.Unix(0, v))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	if _, err := src.Acquire(ctx, keygen.WorkerInfo{MaxWorker: 0}); err == nil {
		t.Fatal("Acquire on a closed client succeeded")
	} else if time.Since(began) > time.Second {
		t.Errorf("Acquire on a closed client took %v: %v", time.Since(began), err)
	}
	if err := l.Close(); err == nil {
		t.Error("Close on a closed client reported no failure")
	}
	// The renewal failures logged after the validity ended say so.
	failures := 0
	for line := range strings.Lines(logs.String()) {
		var rec struct {
			Msg      string        `json:"msg"`
			ValidFor time.Duration `json:"valid_for"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || !strings.Contains(rec.Msg, "renewal failed") {
			continue
		}
		failures++
		if rec.ValidFor < 0 || rec.ValidFor > fastLease.TTL {
			t.Errorf("renewal failure logged valid_for %v (TTL %v)", rec.ValidFor, fastLease.TTL)
		}
	}
	if failures == 0 {
		t.Error("no renewal failure logged with the client closed")
	}
}

// syncBuffer is a bytes.Buffer safe for the renewal goroutine's logs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An Acquire whose context ends at any point of the claim leaves no held
// key behind (its lease is revoked), however far the claim got.
func TestCancelledAcquireLeavesNothingHeld(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, Config{TTL: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := src.Acquire(ctx, keygen.WorkerInfo{MaxWorker: 0}); err == nil {
		t.Fatal("Acquire with a cancelled context succeeded")
	}
	var held []keygen.Lease
	failed := 0
	for i := range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%40)*100*time.Microsecond)
		l, err := src.Acquire(ctx, keygen.WorkerInfo{MaxWorker: 1023})
		cancel()
		if err != nil {
			failed++
			continue
		}
		held = append(held, l)
	}
	slots, err := src.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sl := range slots {
		if sl.Held {
			n++
		}
	}
	if n != len(held) {
		t.Errorf("%d ids held, %d Acquire calls succeeded (%d failed): a cancelled claim left its key", n, len(held), failed)
	}
	t.Logf("%d claims succeeded, %d ended by their context", len(held), failed)
	for _, l := range held {
		l.Close()
	}
}
