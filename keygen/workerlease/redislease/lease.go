package redislease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardkey/shardkey/internal/leaseclock"
	"github.com/shardkey/shardkey/keygen"
)

// Acquire claims the lowest free worker id in [0, info.MaxWorker] and
// renews it every RenewInterval until the lease is closed. An id is free
// when its key is absent and its record shows it released or run out;
// free ids last used later than the server's clock are claimed last.
// While the namespace is in quarantine (for TTL + SafeGuard after a
// possible loss of Redis data, and after the first use of a namespace,
// which Redis cannot tell from a forgotten one) Acquire waits, or returns
// a *QuarantineError if ctx would end first. When every id is held the error
// wraps ErrNoFreeWorker. The lease returned is a *Lease.
func (s *Source) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	return s.acquire(ctx, info)
}

func (s *Source) acquire(ctx context.Context, info keygen.WorkerInfo) (*Lease, error) {
	if info.MaxWorker < 0 {
		return nil, fmt.Errorf("redislease: negative MaxWorker %d", info.MaxWorker)
	}
	clock := info.Clock
	if clock == nil {
		clock = wallClock{}
	}
	l := &Lease{
		src:    s,
		clock:  clock,
		owner:  s.instance + "/" + randomHex(8),
		logger: s.log(info.Logger),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	l.valid.Start(time.Now(), l.expired)
	keys := []string{s.nsKey(), s.fenceKey(), s.idsKey()}
	logged := false
	for {
		before, sent := l.clock.Now().UnixNano(), time.Now()
		res, err := claimScript.Run(ctx, s.client, keys, s.base, l.owner, s.ttl.Milliseconds(), info.MaxWorker,
			s.quarantine().Milliseconds(), ceilMs(s.validUntil(before))).Slice()
		if err != nil {
			return nil, fmt.Errorf("redislease: claim in %q: %w", s.namespace, err)
		}
		switch reply(res, 0) {
		case "ok":
			l.worker = integer(res, 1)
			l.fence = integer(res, 2)
			l.lastUsed = msTime(integer(res, 3))
			l.claimedAt = msTime(integer(res, 4))
			l.setValid(s.validUntil(before), sent)
		case "wait":
			wait := time.Duration(integer(res, 1)) * time.Millisecond
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
				return nil, &QuarantineError{Namespace: s.namespace, Wait: wait}
			}
			if !logged {
				logged = true
				l.logger.Info("redislease: namespace in quarantine after a possible loss of Redis data; waiting",
					"namespace", s.namespace, "wait", wait)
			}
			t := time.NewTimer(wait + time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("redislease: claim in %q: %w", s.namespace, &QuarantineError{Namespace: s.namespace, Wait: wait})
			case <-t.C:
			}
			continue
		case "full":
			return nil, fmt.Errorf("%w: namespace %q has all %d worker ids (0..%d) held", ErrNoFreeWorker, s.namespace,
				info.MaxWorker+1, info.MaxWorker)
		case "evicts":
			return nil, fmt.Errorf("%w: maxmemory-policy is %s; use noeviction or a volatile-* policy", ErrEvictingServer, reply(res, 1))
		default:
			return nil, fmt.Errorf("redislease: claim in %q: unexpected reply %v", s.namespace, res)
		}
		break
	}
	l.logger.Info("redislease: worker id claimed", "namespace", s.namespace, "worker", l.worker, "owner", l.owner,
		"fence", l.fence, "generator", info.Type, "last_used", l.lastUsed, "ttl", s.ttl)
	l.ctx, l.cancel = context.WithCancel(context.Background())
	go l.run()
	return l, nil
}

// validUntil is the end, on the generator's clock, of a claim or renewal
// sent at clock time before: Redis runs the script after it was sent, so
// its key outlives this by at least SafeGuard.
func (s *Source) validUntil(before int64) int64 {
	return before + int64(s.ttl) - int64(s.safeGuard)
}

// ceilMs is Unix nanoseconds ns in Unix milliseconds, rounded up: the
// recorded validity end covers a key issued within its last millisecond.
func ceilMs(ns int64) int64 {
	ms := ns / int64(time.Millisecond)
	if ns%int64(time.Millisecond) > 0 {
		ms++
	}
	return ms
}

// reply is res[i] as a string, "" when absent or not one.
func reply(res []any, i int) string {
	if i < len(res) {
		if v, ok := res[i].(string); ok {
			return v
		}
	}
	return ""
}

// integer is res[i] as an int64, 0 when absent or not one.
func integer(res []any, i int) int64 {
	if i < len(res) {
		if v, ok := res[i].(int64); ok {
			return v
		}
	}
	return 0
}

type wallClock struct{}

func (wallClock) Now() time.Time        { return time.Now() }
func (wallClock) Sleep(d time.Duration) { time.Sleep(d) }

// Lease is a worker id claimed in Redis; Source.Acquire returns one as a
// keygen.Lease. It renews itself until closed or lost.
type Lease struct {
	src      *Source
	clock    keygen.Clock
	owner    string
	worker   int64
	fence    int64
	lastUsed time.Time
	// claimedAt is the server's clock when the claim ran.
	claimedAt time.Time
	logger    *slog.Logger

	// valid is ValidUntil, leaseclock.Invalid when lost, closed or
	// expired. It also ends on Go's monotonic clock: a generator's clock
	// stepped back would otherwise stretch the validity by the step, past
	// the key's PX, while Redis cannot be reached. It is set by the claim
	// and then only by the renewal goroutine, and expired by Close after
	// that ended.
	valid   leaseclock.Validity
	lost    atomic.Bool
	stats   leaseclock.Counters
	track   leaseclock.Tracker
	failing int // consecutive failed renewals; renewal goroutine only

	ctx      context.Context // cancelled by Close, ends a renewal in flight
	cancel   context.CancelFunc
	stop     chan struct{}
	done     chan struct{} // closed when the renewal goroutine ended
	stopOnce sync.Once
	close    sync.Once
	closeErr error
}

var (
	_ keygen.Lease      = (*Lease)(nil)
	_ keygen.LeaseStats = (*Lease)(nil)
)

// Worker is the claimed worker id.
func (l *Lease) Worker() int64 { return l.worker }

// LastUsed is the latest time a key may have been issued with the worker id
// before this lease, by the record in Redis: the previous holder's last
// reported issued time, or, when it ran out without releasing the id, no
// earlier than when its lease could have run out, on Redis's clock and on
// the holder's own (the validity end its claim or renewals recorded, which
// is later when its clock ran ahead of the server's). After a
// possible loss of Redis data it is no earlier than the loss plus TTL.
func (l *Lease) LastUsed() time.Time { return l.lastUsed }

// ValidUntil is the generator-clock time, in Unix nanoseconds, up to which
// keys may be issued: the reading taken before the last successful claim or
// renewal was sent, plus TTL, minus SafeGuard. It is math.MinInt64 once
// lost or closed, and also once TTL - SafeGuard has passed on Go's
// monotonic clock since that claim or renewal was sent, whatever the
// generator's clock reads (until a later renewal succeeds).
func (l *Lease) ValidUntil() int64 { return l.valid.Until() }

// Fence is the fencing token of the claim: issued by INCR in the
// namespace, larger for every later claim of any worker id of the
// namespace, also after a loss of Redis data (the counter then restarts
// above the server's clock in microseconds). A store that remembers the
// largest token it saw can refuse writes from an older holder.
func (l *Lease) Fence() int64 { return l.fence }

// Owner is the lease's owner token, the value of its key: the source's
// instance name, "/" and a random suffix drawn for this lease.
func (l *Lease) Owner() string { return l.owner }

// Key is the Redis key holding the worker id.
func (l *Lease) Key() string { return l.src.idKey(l.worker) }

// Lost reports that a renewal found the key gone or another holder's: the
// lease never renews again.
func (l *Lease) Lost() bool { return l.lost.Load() }

// Renewals counts successful renewals (keygen.LeaseStats).
func (l *Lease) Renewals() uint64 { return l.stats.Renewals() }

// Failures counts renewals that failed to reach Redis (keygen.LeaseStats).
func (l *Lease) Failures() uint64 { return l.stats.Failures() }

// Track sets the function renewals and Close read the generator's latest
// issued time from; last must be safe to call concurrently with key
// generation.
func (l *Lease) Track(last func() time.Time) { l.track.Track(last) }

// trackedMs is the tracked last-issued time in Unix milliseconds, rounded
// up so that a key issued within a millisecond is covered; 0 when unknown.
func (l *Lease) trackedMs() int64 { return l.track.Ms() }

// run renews the lease every RenewInterval until stopped or lost.
func (l *Lease) run() {
	defer close(l.done)
	t := time.NewTicker(l.src.renew)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if !l.renew() {
			return
		}
	}
}

// renew extends the lease once. It returns false when the lease is lost or
// closing, which ends the renewal goroutine.
func (l *Lease) renew() bool {
	s := l.src
	last := l.trackedMs()
	before, sent := l.clock.Now().UnixNano(), time.Now()
	ctx, cancel := context.WithTimeout(l.ctx, s.renew)
	defer cancel()
	n, err := renewScript.Run(ctx, s.client, []string{s.idKey(l.worker), s.recKey(l.worker)},
		l.owner, s.ttl.Milliseconds(), last, ceilMs(s.validUntil(before))).Int64()
	if l.ctx.Err() != nil {
		return false // closing
	}
	if err != nil {
		l.stats.Failed()
		l.failing++
		l.logger.Warn("redislease: renewal failed; retrying", "namespace", s.namespace, "worker", l.worker,
			"consecutive_failures", l.failing, "valid_for", l.validFor(), "err", err)
		return true
	}
	if n == -1 {
		l.lost.Store(true)
		l.valid.Expire()
		l.logger.Error("redislease: the server's maxmemory-policy is now allkeys-*, which may evict the worker id's key and record; lease lost",
			"namespace", s.namespace, "worker", l.worker, "owner", l.owner)
		return false
	}
	if n == 0 {
		l.lost.Store(true)
		l.valid.Expire()
		l.logger.Error("redislease: worker id key gone or taken by another holder; lease lost", "namespace", s.namespace,
			"worker", l.worker, "owner", l.owner)
		return false
	}
	l.stats.Renewed()
	if l.failing > 0 {
		l.logger.Info("redislease: renewal succeeded again", "namespace", s.namespace, "worker", l.worker,
			"after_failures", l.failing)
		l.failing = 0
	}
	l.setValid(s.validUntil(before), sent)
	return true
}

// setValid sets the validity to until on the generator's clock and to
// TTL - SafeGuard past sent (a monotonic reading taken before the request
// was sent) on the monotonic clock. It is the latest
// successful request's end, not the larger of it and the previous one: a
// generator clock stepped back gives a lower until, and the key's PX
// started after this request, not after the earlier one. Called by the
// claim, then only by the renewal goroutine, which is also the only one
// to mark the lease lost, so a lost lease is never made valid again.
func (l *Lease) setValid(until int64, sent time.Time) {
	l.valid.Set(until, sent, l.src.ttl-l.src.safeGuard)
}

// expired is called when the validity, cur on the generator's clock, ended
// on the monotonic clock, whatever the generator's clock reads; a later
// renewal sets it again.
func (l *Lease) expired(cur int64) {
	if now := l.clock.Now().UnixNano(); now < cur {
		l.logger.Warn("redislease: validity ended on the monotonic clock while the generator's clock reads earlier (stepped back?)",
			"namespace", l.src.namespace, "worker", l.worker, "clock_behind", time.Duration(cur-now))
	}
}

// validFor is how long the validity lasts by the generator's clock, for
// logs: 0 once it ended (leaseclock.Invalid minus a reading would overflow).
func (l *Lease) validFor() time.Duration {
	v, now := l.valid.Until(), l.clock.Now().UnixNano()
	if v <= now {
		return 0
	}
	return time.Duration(v - now)
}

// stopRenewal ends the renewal goroutine and waits for it.
func (l *Lease) stopRenewal() {
	l.stopOnce.Do(func() {
		close(l.stop)
		l.cancel()
		<-l.done
	})
}

// ErrNotHeld is wrapped by Close's error when the lease's key was no longer
// its own (it ran out, or was taken over): nothing was released.
var ErrNotHeld = errors.New("redislease: worker id no longer held by the lease")

// Close stops renewing, ends the lease's validity and releases the worker
// id, recording the tracked last-issued time so the next holder starts
// after it. The generator must have stopped issuing keys. Close is
// idempotent. If Redis cannot be reached the id stays claimed until its key
// expires, and the error is returned; a lease already lost closes without
// error, and one whose key was no longer its own returns ErrNotHeld. Close
// first waits for a renewal in flight: go-redis applies a context's
// deadline to the network only with Options.ContextTimeoutEnabled, so
// without it that wait can last the client's ReadTimeout times its tries.
func (l *Lease) Close() error {
	l.close.Do(func() {
		l.stopRenewal()
		l.valid.Expire()
		if l.lost.Load() {
			return
		}
		s := l.src
		ctx, cancel := context.WithTimeout(context.Background(), min(max(s.ttl, time.Second), 10*time.Second))
		defer cancel()
		last := l.trackedMs()
		n, err := releaseScript.Run(ctx, s.client, []string{s.idKey(l.worker), s.recKey(l.worker)}, l.owner, last).Int64()
		switch {
		case err != nil:
			l.closeErr = fmt.Errorf("redislease: release worker %d in %q: %w", l.worker, s.namespace, err)
			l.logger.Warn("redislease: release failed; the worker id frees when its key expires",
				"namespace", s.namespace, "worker", l.worker, "err", err)
		case n == 0:
			l.closeErr = fmt.Errorf("%w: worker %d in %q", ErrNotHeld, l.worker, s.namespace)
			l.logger.Warn("redislease: worker id was no longer held at release", "namespace", s.namespace, "worker", l.worker)
		default:
			l.logger.Info("redislease: worker id released", "namespace", s.namespace, "worker", l.worker,
				"last_used", msTime(last))
		}
	})
	return l.closeErr
}
