package redislease

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

func slogTo(b *strings.Builder) *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// TestFencingTokensIncreaseAcrossRestartsWithoutPersistence: a server
// restarted empty (no RDB, no AOF) forgets its fencing counter; tokens of
// claims after each restart are still larger than every token before, and
// the claims wait out the quarantine.
func TestFencingTokensIncreaseAcrossRestartsWithoutPersistence(t *testing.T) {
	r := privateRedis(t)
	cfg := Config{TTL: 200 * time.Millisecond, Prefix: prefix(t)}
	var last int64
	for i := range 3 {
		s := newSource(t, client(t, r.addr()), cfg)
		began := time.Now()
		for range 5 {
			l := acquire(t, s, keygen.WorkerInfo{MaxWorker: 1023})
			if l.Fence() <= last {
				t.Fatalf("after %d restarts: fencing token %d, not above %d", i, l.Fence(), last)
			}
			last = l.Fence()
			if i > 0 && l.claimedAt.Sub(began) < 0 {
				t.Fatal("claimed before the claim began")
			}
		}
		r.restart()
	}
}
