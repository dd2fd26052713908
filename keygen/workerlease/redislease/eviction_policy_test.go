package redislease

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// TestEvictionPolicySwitchedAfterTheClaimLosesTheLease: a server switched
// to an allkeys-* maxmemory-policy after the claim may evict the held key
// and its record at any time; the next renewal must end the lease as lost
// (not valid, never renewed again) rather than keep issuing on it.
func TestEvictionPolicySwitchedAfterTheClaimLosesTheLease(t *testing.T) {
	r := privateRedis(t)
	c := client(t, r.addr())
	s := newSource(t, c, Config{TTL: 300 * time.Millisecond})
	inServiceSince(t, c, s, time.Hour)
	l := acquire(t, s, keygen.WorkerInfo{MaxWorker: 3})
	waitFor(t, 5*time.Second, "a renewal", func() bool { return l.Renewals() > 0 })
	if err := c.ConfigSet(context.Background(), "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the lease lost", l.Lost)
	if v := l.ValidUntil(); v != math.MinInt64 {
		t.Fatalf("lost lease: ValidUntil = %d, want math.MinInt64", v)
	}
	renewals := l.Renewals()
	time.Sleep(3 * s.renew)
	if got := l.Renewals(); got != renewals {
		t.Fatalf("a lost lease renewed again: %d renewals, then %d", renewals, got)
	}
}
