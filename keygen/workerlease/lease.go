package workerlease

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardkey/shardkey/internal/leaseclock"
	"github.com/shardkey/shardkey/keygen"
)

// maxClaimAttempts bounds Acquire's retries; each retry follows a
// competing claimant's success (or a deadlock the database broke).
const maxClaimAttempts = 1000

// Acquire claims the lowest free worker id in [0, info.MaxWorker] and
// starts renewing it every TTL/3 until the lease is closed. A slot is free
// when it has no row yet, was released by Close, or expired SafeGuard ago.
// When every id is held the error wraps ErrNoFreeWorker.
func (s *Source) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	if info.MaxWorker < 0 {
		return nil, fmt.Errorf("workerlease: negative MaxWorker %d", info.MaxWorker)
	}
	clock := info.Clock
	if clock == nil {
		clock = wallClock{}
	}
	l := &lease{
		src:    s,
		clock:  clock,
		owner:  s.instance + "/" + randomHex(8),
		logger: s.log(info.Logger),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	l.valid.Start(time.Now(), l.expired)
	var err error
	for attempt := 1; ; attempt++ {
		var done bool
		done, err = s.tryClaim(ctx, l, info.MaxWorker)
		if done && err == nil {
			break
		}
		if err != nil && !isDeadlock(err) {
			return nil, err
		}
		if attempt >= maxClaimAttempts {
			return nil, fmt.Errorf("workerlease: namespace %q: no claim after %d attempts (contention)", s.namespace, attempt)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("workerlease: acquire in %q: %w", s.namespace, ctx.Err())
		}
	}
	l.logger.Info("workerlease: worker id claimed", "namespace", s.namespace, "worker", l.worker,
		"owner", l.owner, "generator", info.Type, "last_used", l.lastUsed, "ttl", s.ttl)
	l.ctx, l.cancel = context.WithCancel(context.Background())
	go l.run()
	return l, nil
}

// tryClaim runs one claim transaction. It returns done when the lease is
// claimed, and neither done nor an error when a competing claimant won a
// race and the claim should be tried again.
func (s *Source) tryClaim(ctx context.Context, l *lease, maxWorker int64) (done bool, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return false, fmt.Errorf("workerlease: begin claim: %w", err)
	}
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	ttl, sg := s.ttl.Milliseconds(), s.safeGuard.Milliseconds()

	// A row that is released or expired SafeGuard ago, locked; rows other
	// claimants have locked are skipped.
	var worker, expires, last int64
	err = tx.QueryRowContext(ctx, s.q.candidate, s.namespace, maxWorker, sg).Scan(&worker, &expires, &last)
	switch {
	case err == nil:
		before, sent := l.clock.Now().UnixNano(), time.Now()
		res, err := tx.ExecContext(ctx, s.q.claim, ceilUnixMs(validUntil(before, s.ttl)), l.owner, ttl, s.namespace, worker, sg)
		if err != nil {
			return false, fmt.Errorf("workerlease: claim worker %d: %w", worker, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return false, err // not claimed after all: try again
		}
		if err := tx.Commit(); err != nil {
			return false, fmt.Errorf("workerlease: commit claim of worker %d: %w", worker, err)
		}
		done = true
		l.worker = worker
		l.lastUsedMs = max(last, expires)
		l.lastUsed = msTime(l.lastUsedMs)
		l.setValid(validUntil(before, s.ttl), sent)
		return true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("workerlease: find a free worker id: %w", err)
	}

	// None: create the row of the lowest id that has none, claimed.
	var gap sql.NullInt64
	if err := tx.QueryRowContext(ctx, s.q.gap, s.namespace, maxWorker, s.namespace).Scan(&gap); err != nil {
		return false, fmt.Errorf("workerlease: find an unused worker id: %w", err)
	}
	if !gap.Valid || gap.Int64 > maxWorker {
		return false, fmt.Errorf("%w: namespace %q has all %d worker ids (0..%d) held", ErrNoFreeWorker, s.namespace, maxWorker+1, maxWorker)
	}
	before, sent := l.clock.Now().UnixNano(), time.Now()
	res, err := tx.ExecContext(ctx, s.q.insert, s.namespace, gap.Int64, l.owner, ttl, ceilUnixMs(validUntil(before, s.ttl)))
	if err != nil {
		return false, fmt.Errorf("workerlease: claim new worker %d: %w", gap.Int64, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, err // another claimant created it: try again
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("workerlease: commit claim of worker %d: %w", gap.Int64, err)
	}
	done = true
	l.worker = gap.Int64
	l.setValid(validUntil(before, s.ttl), sent)
	return true, nil
}

// isDeadlock reports a deadlock the database broke by failing this
// transaction (PostgreSQL 40P01, MySQL 1213); the claim is retried.
func isDeadlock(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "deadlock")
}

// wallClock stands in when keygen.WorkerInfo has no clock.
// validUntil is the end of a claim or renewal sent at clock time before:
// the database's expiry is its own now, floored to the millisecond, plus
// ttl, so the holder stops a millisecond early.
func validUntil(before int64, ttl time.Duration) int64 {
	return before + int64(ttl) - int64(time.Millisecond)
}

// ceilUnixMs is Unix nanoseconds ns in Unix milliseconds, rounded up: a
// recorded validity end covers a key issued within its last millisecond.
func ceilUnixMs(ns int64) int64 {
	ms := ns / int64(time.Millisecond)
	if ns%int64(time.Millisecond) > 0 {
		ms++
	}
	return ms
}

// realValidity is how long past its send a claim or renewal lasts on Go's
// monotonic clock: validUntil's ttl less the millisecond.
func realValidity(ttl time.Duration) time.Duration {
	return ttl - time.Millisecond
}

type wallClock struct{}

func (wallClock) Now() time.Time        { return time.Now() }
func (wallClock) Sleep(d time.Duration) { time.Sleep(d) }

// lease is a claimed worker id that renews itself until closed.
type lease struct {
	src      *Source
	clock    keygen.Clock
	owner    string // the owner token in the row
	worker   int64
	lastUsed time.Time
	// lastUsedMs is lastUsed in Unix milliseconds: the id's last use
	// before this claim, which Close's release keeps.
	lastUsedMs int64
	logger     *slog.Logger

	// valid is ValidUntil, leaseclock.Invalid when lost, closed or
	// expired. It also ends on Go's monotonic clock: a generator's clock
	// stepped back would otherwise stretch the validity by the step, past
	// the row's expiry, while the database cannot be reached. It is set
	// by the claim and then only by the renewal goroutine, and expired by
	// Close after that ended.
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
	_ keygen.Lease      = (*lease)(nil)
	_ keygen.LeaseStats = (*lease)(nil)
)

// Worker, LastUsed, ValidUntil, Renewals and Failures implement
// keygen.Lease and keygen.LeaseStats; see the package documentation.
func (l *lease) Worker() int64       { return l.worker }
func (l *lease) LastUsed() time.Time { return l.lastUsed }
func (l *lease) ValidUntil() int64   { return l.valid.Until() }
func (l *lease) Renewals() uint64    { return l.stats.Renewals() }
func (l *lease) Failures() uint64    { return l.stats.Failures() }

// Track sets the function renewals and Close read the generator's latest
// issued time from; it may be called from any goroutine, and last must be
// safe to call concurrently with key generation.
func (l *lease) Track(last func() time.Time) { l.track.Track(last) }

// trackedMs is the tracked last-issued time in Unix milliseconds, rounded
// up so that a key issued within a millisecond is covered; 0 when unknown.
func (l *lease) trackedMs() int64 { return l.track.Ms() }

// run renews the lease every TTL/3 until stopped or lost.
func (l *lease) run() {
	defer close(l.done)
	t := time.NewTicker(l.src.ttl / 3)
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

// renew extends the lease once. It returns false when the lease is lost
// or closing, which ends the renewal goroutine.
func (l *lease) renew() bool {
	s := l.src
	last := l.trackedMs()
	before, sent := l.clock.Now().UnixNano(), time.Now()
	ctx, cancel := context.WithTimeout(l.ctx, s.ttl)
	defer cancel()
	// last_ms rises to this renewal's validity end on the generator's
	// clock: if the lease runs out without release, the next holder
	// starts after every key this one may issue, even with its clock
	// ahead of the database's.
	n, err := l.exec(ctx, s.q.renew, s.ttl.Milliseconds(), max(last, ceilUnixMs(validUntil(before, s.ttl))),
		s.namespace, l.worker, l.owner)
	if err == nil && n == 0 {
		// MySQL reports a row whose values did not change as unaffected;
		// the row is still ours if it names our token.
		var c int64
		if err = s.db.QueryRowContext(ctx, s.q.owned, s.namespace, l.worker, l.owner).Scan(&c); err == nil {
			n = c
		}
	}
	if l.ctx.Err() != nil {
		return false // closing
	}
	if err != nil {
		l.stats.Failed()
		l.failing++
		l.logger.Warn("workerlease: renewal failed; retrying", "namespace", s.namespace, "worker", l.worker,
			"consecutive_failures", l.failing, "valid_for", l.validFor(), "err", err)
		return true
	}
	if n == 0 {
		l.lost.Store(true)
		l.valid.Expire()
		l.logger.Error("workerlease: worker id taken by another holder; lease lost", "namespace", s.namespace,
			"worker", l.worker, "owner", l.owner)
		return false
	}
	l.stats.Renewed()
	if l.failing > 0 {
		l.logger.Info("workerlease: renewal succeeded again", "namespace", s.namespace, "worker", l.worker,
			"after_failures", l.failing)
		l.failing = 0
	}
	l.setValid(validUntil(before, s.ttl), sent)
	return true
}

// setValid sets the validity to until on the generator's clock and to
// realValidity past sent (a monotonic reading taken before the claim or
// renewal was sent) on the monotonic clock. It is the latest
// successful claim or renewal's end, not the larger of it and the
// previous one: a generator clock stepped back gives a lower until, and
// the row's expiry was set by this renewal, not by the earlier one.
// Called by the claim, then only by the renewal goroutine, which is also
// the only one to mark the lease lost, so a lost lease is never made
// valid again.
func (l *lease) setValid(until int64, sent time.Time) {
	l.valid.Set(until, sent, realValidity(l.src.ttl))
}

// expired is called when the validity, cur on the generator's clock, ended
// on the monotonic clock, whatever the generator's clock reads; a later
// renewal sets it again.
func (l *lease) expired(cur int64) {
	if now := l.clock.Now().UnixNano(); now < cur {
		l.logger.Warn("workerlease: validity ended on the monotonic clock while the generator's clock reads earlier (stepped back?)",
			"namespace", l.src.namespace, "worker", l.worker, "clock_behind", time.Duration(cur-now))
	}
}

// validFor is how long the validity lasts by the generator's clock, for
// logs: 0 once it ended (leaseclock.Invalid minus a reading would overflow).
func (l *lease) validFor() time.Duration {
	v, now := l.valid.Until(), l.clock.Now().UnixNano()
	if v <= now {
		return 0
	}
	return time.Duration(v - now)
}

// exec runs a statement and returns the rows it affected.
func (l *lease) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := l.src.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// stopRenewal ends the renewal goroutine and waits for it.
func (l *lease) stopRenewal() {
	l.stopOnce.Do(func() {
		close(l.stop)
		l.cancel()
		<-l.done
	})
}

// Close stops renewing, ends the lease's validity and releases the worker
// id, recording the tracked last-issued time so the next holder starts
// after it. The generator must have stopped issuing keys. Close is
// idempotent; if the database cannot be reached the slot stays claimed
// until it expires, and the error is returned.
func (l *lease) Close() error {
	l.close.Do(func() {
		l.stopRenewal()
		l.valid.Expire()
		if l.lost.Load() {
			return
		}
		s := l.src
		ctx, cancel := context.WithTimeout(context.Background(), min(max(s.ttl, time.Second), 10*time.Second))
		defer cancel()
		// The claim and renewals raised last_ms to validity ends that the
		// generator, now stopped, did not reach: the release sets it to
		// the last issued time, or the id's last use before this claim.
		last := max(l.trackedMs(), l.lastUsedMs)
		if _, err := l.exec(ctx, s.q.release, last, s.namespace, l.worker, l.owner); err != nil {
			l.closeErr = fmt.Errorf("workerlease: release worker %d in %s: %w", l.worker, s.namespace, err)
			l.logger.Warn("workerlease: release failed; the worker id frees when its lease expires",
				"namespace", s.namespace, "worker", l.worker, "err", err)
			return
		}
		l.logger.Info("workerlease: worker id released", "namespace", s.namespace, "worker", l.worker,
			"last_used", msTime(last))
	})
	return l.closeErr
}
