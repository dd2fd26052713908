package etcdlease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardkey/shardkey/internal/leaseclock"
	"github.com/shardkey/shardkey/keygen"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// lease is a claimed worker id whose etcd lease is kept alive until it is
// closed or lost.
type lease struct {
	src     *Source
	clock   keygen.Clock
	owner   string // the token in the held key
	logger  *slog.Logger
	id      clientv3.LeaseID
	started time.Time // wall time before the grant, for scheduling
	worker  int64
	heldKey string
	lastKey string
	// lastUsed is the id's last use by earlier holders; lastUsedMs the
	// same in Unix milliseconds.
	lastUsed   time.Time
	lastUsedMs int64

	valid   atomic.Int64 // ValidUntil; lostValid or expiredValid when not valid
	lost    atomic.Bool
	stats   leaseclock.Counters
	track   leaseclock.Tracker
	failing int // consecutive failed renewals; renewal goroutine only

	// The validity also ends by Go's monotonic clock: base is a reading
	// taken before the first grant, realEnd the validity's end as time
	// since base, and expiry fires there. A generator's clock that steps
	// back would otherwise stretch the validity by the step, past etcd's
	// TTL, while etcd cannot be reached. vmu orders every change of
	// valid, realEnd and expiry: the timer's check and store are one step,
	// so it never undoes a renewal that set the same until meanwhile.
	base    time.Time
	vmu     sync.Mutex
	realEnd atomic.Int64
	expiry  *time.Timer
	// recordedUntilMs is the latest validity end sent to the record; the
	// record never moves back below it (claim, then the renewal goroutine).
	recordedUntilMs int64

	ctx      context.Context // cancelled by Close, ends a renewal in flight
	cancel   context.CancelFunc
	done     chan struct{} // closed when the renewal goroutine ended
	close    sync.Once
	closeErr error
}

// ValidUntil's values when no key may be issued: lost for good (or
// closed), and expired by the monotonic clock until a renewal succeeds.
const (
	lostValid    = math.MinInt64
	expiredValid = math.MinInt64 + 1
)

var (
	_ keygen.Lease      = (*lease)(nil)
	_ keygen.LeaseStats = (*lease)(nil)
)

// Worker, LastUsed, ValidUntil, Renewals and Failures implement
// keygen.Lease and keygen.LeaseStats; see the package documentation.
func (l *lease) Worker() int64       { return l.worker }
func (l *lease) LastUsed() time.Time { return l.lastUsed }
func (l *lease) ValidUntil() int64   { return l.valid.Load() }
func (l *lease) Renewals() uint64    { return l.stats.Renewals() }
func (l *lease) Failures() uint64    { return l.stats.Failures() }

// Track sets the function renewals and Close read the generator's latest
// issued time from; last must be safe to call concurrently with key
// generation.
func (l *lease) Track(last func() time.Time) { l.track.Track(last) }

// trackedMs is the tracked last-issued time in Unix milliseconds, rounded
// up; 0 when unknown.
func (l *lease) trackedMs() int64 { return l.track.Ms() }

// owned is the condition that the id's held key is still this lease's:
// it names the owner token and is attached to the etcd lease.
func (l *lease) owned() []clientv3.Cmp {
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.Value(l.heldKey), "=", l.owner),
		clientv3.Compare(clientv3.LeaseValue(l.heldKey), "=", l.id),
	}
}

// writeRecord stores the id's record with validity end until (Unix
// nanoseconds on the lease's clock) while the held key is still the
// lease's; ok is false when it is not.
//
// The stored end never moves back: a clock that stepped back gives a
// lower until, and keys issued under the earlier, later end must stay
// covered.
func (l *lease) writeRecord(ctx context.Context, until int64) (ok bool, err error) {
	l.recordedUntilMs = max(l.recordedUntilMs, ceilMs(until))
	rec := record{LastMs: max(l.lastUsedMs, l.trackedMs()), UntilMs: l.recordedUntilMs, Owner: l.owner}
	tr, err := l.src.cli.Txn(clientv3.WithRequireLeader(ctx)).If(l.owned()...).Then(clientv3.OpPut(l.lastKey, rec.encode())).Commit()
	if err != nil {
		return false, err
	}
	return tr.Succeeded, nil
}

// run keeps the lease alive until it is closed or lost: every interval
// after a success, sooner after a failure.
func (l *lease) run() {
	defer close(l.done)
	s := l.src
	wait := s.interval - time.Since(l.started)
	retry := max(s.interval/4, 50*time.Millisecond)
	t := time.NewTimer(max(wait, 0))
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		renewed, keep := l.renew()
		if !keep {
			return
		}
		if renewed {
			t.Reset(s.interval)
		} else {
			t.Reset(retry)
		}
	}
}

// renew sends one keep-alive and records the new validity's end; only
// then does the validity move. keep is false when the lease is lost or
// closing, which ends the renewal goroutine.
func (l *lease) renew() (renewed, keep bool) {
	s := l.src
	before, since := l.clock.Now().UnixNano(), time.Since(l.base)
	until := before + int64(s.ttl-s.safeGuard)
	ctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(l.ctx), s.interval)
	defer cancel()
	_, err := s.cli.KeepAliveOnce(ctx, l.id)
	ok := true
	if err == nil {
		ok, err = l.writeRecord(ctx, until)
	}
	switch {
	case l.ctx.Err() != nil:
		return false, false // closing
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		l.lose("etcd no longer has the lease (it expired or was revoked)")
		return false, false
	case err != nil:
		l.stats.Failed()
		l.failing++
		l.logger.Warn("etcdlease: renewal failed; retrying", "namespace", s.namespace, "worker", l.worker,
			"consecutive_failures", l.failing, "valid_for", l.validFor(), "err", err)
		return false, true
	case !ok:
		l.lose("the worker id's key no longer names this lease (deleted, or taken over)")
		return false, false
	}
	l.stats.Renewed()
	if l.failing > 0 {
		l.logger.Info("etcdlease: renewal succeeded again", "namespace", s.namespace, "worker", l.worker,
			"after_failures", l.failing)
		l.failing = 0
	}
	l.setValid(until, since+s.ttl-s.safeGuard)
	return true, true
}

// setValid moves the validity to until on the lease's clock, and to
// realEnd (time since base) on the monotonic clock, unless the lease is
// lost. until may be lower than before when the clock stepped back: the
// latest renewal's reading is the one etcd's TTL started after. A reply
// that came after realEnd (a late one) leaves the validity ended: storing
// until would let a generator whose clock stepped back issue until the
// timer ran.
func (l *lease) setValid(until int64, realEnd time.Duration) {
	l.vmu.Lock()
	defer l.vmu.Unlock()
	if l.valid.Load() == lostValid {
		return
	}
	l.realEnd.Store(int64(realEnd))
	left := realEnd - time.Since(l.base)
	if left <= 0 {
		l.valid.Store(expiredValid)
		if l.expiry != nil {
			l.expiry.Stop()
		}
		return
	}
	l.valid.Store(until)
	if l.expiry == nil {
		l.expiry = time.AfterFunc(left, l.expire)
	} else {
		l.expiry.Reset(left)
	}
}

// expire ends the validity once its end has passed on the monotonic
// clock, whatever the lease's clock reads; a later renewal moves it again.
func (l *lease) expire() {
	l.vmu.Lock()
	cur := l.valid.Load()
	if cur == lostValid || cur == expiredValid || time.Since(l.base) < time.Duration(l.realEnd.Load()) {
		l.vmu.Unlock()
		return
	}
	l.valid.Store(expiredValid)
	l.vmu.Unlock()
	if now := l.clock.Now().UnixNano(); now < cur {
		l.logger.Warn("etcdlease: validity ended by the monotonic clock while the generator's clock reads earlier (stepped back?)",
			"namespace", l.src.namespace, "worker", l.worker, "clock_behind", time.Duration(cur-now))
	}
}

// invalidate ends the validity for good (lost or closed) and stops its
// timer.
func (l *lease) invalidate() {
	l.vmu.Lock()
	defer l.vmu.Unlock()
	l.valid.Store(lostValid)
	if l.expiry != nil {
		l.expiry.Stop()
	}
}

// validFor is how long the validity lasts by the lease's clock, for
// logs: 0 once it ended (expiredValid minus a reading would overflow).
func (l *lease) validFor() time.Duration {
	v, now := l.valid.Load(), l.clock.Now().UnixNano()
	if v <= now {
		return 0
	}
	return time.Duration(v - now)
}

// lose ends the lease for good: the generator stops issuing.
func (l *lease) lose(why string) {
	l.lost.Store(true)
	l.invalidate()
	l.logger.Error("etcdlease: lease lost; the generator stops issuing", "namespace", l.src.namespace,
		"worker", l.worker, "owner", l.owner, "lease", int64(l.id), "reason", why)
}

// Close stops renewing, ends the lease's validity and releases the worker
// id: one transaction stores the tracked last-issued time in the id's
// record and deletes its held key (while still the lease's), then the
// etcd lease is revoked. The generator must have stopped issuing keys.
// Close is idempotent. If etcd cannot be reached the id stays held until
// the etcd lease expires, and the error is returned.
func (l *lease) Close() error {
	l.close.Do(func() {
		l.cancel()
		<-l.done
		l.invalidate()
		if l.lost.Load() {
			return
		}
		s := l.src
		// A key whose clock reading passed the lease check before Close
		// may still be taken after the tracked time was read: the clock,
		// read after the validity ended, covers it.
		last := max(l.lastUsedMs, l.trackedMs(), ceilMs(l.clock.Now().UnixNano()))
		if err := s.clientClosed(); err != nil {
			l.closeErr = fmt.Errorf("etcdlease: release worker %d in %s: %w", l.worker, s.namespace, err)
			l.logger.Warn("etcdlease: release failed; the worker id frees when its lease expires",
				"namespace", s.namespace, "worker", l.worker, "err", l.closeErr)
			return
		}
		timeout := min(max(s.ttl, time.Second), 10*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		rec := record{LastMs: last, Owner: l.owner}
		tr, err := s.cli.Txn(ctx).If(l.owned()...).
			Then(clientv3.OpPut(l.lastKey, rec.encode()), clientv3.OpDelete(l.heldKey)).Commit()
		rctx, rcancel := context.WithTimeout(context.Background(), timeout)
		defer rcancel()
		_, rerr := s.cli.Revoke(rctx, l.id)
		if errors.Is(rerr, rpctypes.ErrLeaseNotFound) {
			rerr = nil
		}
		switch {
		case err != nil && rerr != nil:
			// The id stays held until the etcd lease expires; the record's
			// validity end still bounds the keys issued.
			l.closeErr = fmt.Errorf("etcdlease: release worker %d in %s: %w", l.worker, s.namespace, errors.Join(err, rerr))
			l.logger.Warn("etcdlease: release failed; the worker id frees when its lease expires",
				"namespace", s.namespace, "worker", l.worker, "err", l.closeErr)
		case err == nil && !tr.Succeeded:
			l.logger.Warn("etcdlease: at release the worker id's key no longer named this lease",
				"namespace", s.namespace, "worker", l.worker, "owner", l.owner)
		case err != nil:
			// Revoked: the held key went with the lease; the record keeps
			// the validity end of the last renewal, a later bound.
			l.logger.Info("etcdlease: worker id released by revoking its lease (last use not stored)",
				"namespace", s.namespace, "worker", l.worker, "err", err)
		default:
			if rerr != nil {
				l.logger.Warn("etcdlease: revoking the released lease failed; it expires by itself",
					"namespace", s.namespace, "worker", l.worker, "err", rerr)
			}
			l.logger.Info("etcdlease: worker id released", "namespace", s.namespace, "worker", l.worker,
				"last_used", msTime(last))
		}
	})
	return l.closeErr
}
