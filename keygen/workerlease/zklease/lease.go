package zklease

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/shardkey/shardkey/internal/leaseclock"
	"github.com/shardkey/shardkey/keygen"
)

// lease is a worker id held through a ZooKeeper session: the lock node of
// its ip:port lives as long as the session, and each report renews its
// validity.
type lease struct {
	src      *Source
	sess     *session
	clock    keygen.Clock
	logger   *slog.Logger
	worker   int64
	node     string // the forever node's path
	lockPath string
	lastUsed time.Time
	validity time.Duration // how long past a report's send the lease lasts, as granted at the claim
	interval time.Duration // report interval; the report goroutine's once it runs

	valid atomic.Int64 // ValidUntil; math.MinInt64 when not valid
	lost  atomic.Bool

	// The validity also ends on Go's monotonic clock: base is a reading
	// taken when the claim began, realEnd the end of the latest report's
	// validity as time since base, and expiry fires there. The
	// generator's clock may step back (an injected one); its readings
	// alone would then stretch the validity by the step, past the
	// session's expiry on the server. mu orders the changes of valid.
	base    time.Time
	mu      sync.Mutex
	ended   bool // lost or closed: no report makes the lease valid again
	realEnd time.Duration
	expiry  *time.Timer
	stats   leaseclock.Counters
	track   leaseclock.Tracker

	// Owned by the report goroutine, then by Close once it has ended.
	lastT   int64 // the last timestamp written to the node, ms
	version int32 // the node's data version after that write
	failing int   // consecutive failed reports

	stop     chan struct{}
	done     chan struct{} // closed when the report goroutine ended
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
func (l *lease) ValidUntil() int64   { return l.valid.Load() }
func (l *lease) Renewals() uint64    { return l.stats.Renewals() }
func (l *lease) Failures() uint64    { return l.stats.Failures() }

// Track sets where reports and Close read the generator's latest issued
// time from; last must be safe to call concurrently with key generation.
func (l *lease) Track(last func() time.Time) { l.track.Track(last) }

// trackedMs is the tracked last-issued time in Unix milliseconds, rounded
// up; 0 when unknown.
func (l *lease) trackedMs() int64 { return l.track.Ms() }

// expire ends the lease for good: its session is gone, and with it the
// lock another process may now take.
func (l *lease) expire() {
	if l.lose() {
		l.logger.Error("zklease: ZooKeeper session expired; worker id lease lost", "name", l.src.name,
			"addr", l.src.Addr(), "worker", l.worker)
	}
}

// lose ends the lease for good; it reports whether it was not lost yet.
func (l *lease) lose() bool {
	first := !l.lost.Swap(true)
	l.end()
	return first
}

// end makes the lease invalid for good (lost or closed).
func (l *lease) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	l.valid.Store(math.MinInt64)
	if l.expiry != nil {
		l.expiry.Stop()
	}
}

// setValid renews the validity after a successful report: until on the
// generator's clock, and v past sent (a monotonic reading
// taken before the report was sent) on Go's monotonic clock. until is
// the report's own end, lower than the last one when the clock stepped
// back: the session's expiry runs from this report, not from the clock's
// earlier readings. The node's timestamp never moves back, so keys issued
// under an earlier, later end stay covered for the next holder.
func (l *lease) setValid(until int64, sent time.Time, v time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.realEnd = sent.Sub(l.base) + v
	left := l.realEnd - time.Since(l.base)
	if left <= 0 {
		// The report took longer than the validity: nothing to renew.
		l.valid.Store(math.MinInt64)
		return
	}
	l.valid.Store(until)
	if l.expiry == nil {
		l.expiry = time.AfterFunc(left, l.expireValidity)
	} else {
		l.expiry.Reset(left)
	}
}

// expireValidity ends the validity once its end has passed on the
// monotonic clock, whatever the generator's clock reads; a later
// successful report renews it.
func (l *lease) expireValidity() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || time.Since(l.base) < l.realEnd {
		return // ended, or renewed meanwhile
	}
	cur := l.valid.Swap(math.MinInt64)
	if cur == math.MinInt64 {
		return
	}
	if now := l.clock.Now().UnixNano(); now < cur {
		l.logger.Warn("zklease: no report succeeded within the validity; keys stop until one does (the generator's clock reads before the validity's end: stepped back?)",
			"name", l.src.name, "worker", l.worker, "clock_behind", time.Duration(cur-now))
		return
	}
	l.logger.Warn("zklease: no report succeeded within the validity; keys stop until one does", "name", l.src.name, "worker", l.worker)
}

// validFor is how long the validity lasts on the monotonic clock; 0 or
// less when it has ended.
func (l *lease) validFor() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return 0
	}
	return l.realEnd - time.Since(l.base)
}

// run reports every interval until stopped or lost.
func (l *lease) run() {
	defer close(l.done)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if !l.report() {
			l.sess.conn.Close() // a lost session's successor holds nothing
			return
		}
		if iv := l.src.interval(l.currentValidity()); iv < l.interval {
			l.interval = iv
			t.Reset(iv)
		}
	}
}

// report writes the time to the node, checking in the same transaction
// that the lock node still exists (so the session that made it is alive),
// and renews the validity from the reading taken before sending. It
// returns false when the lease is lost.
func (l *lease) report() bool {
	if l.lost.Load() {
		return false
	}
	sent := time.Now()
	before := l.clock.Now().UnixNano()
	t := max(ceilMs(before), l.trackedMs(), l.lastT)
	if !l.sess.alive() {
		l.expire()
		return false
	}
	res, err := l.sess.conn.Multi(
		&zk.CheckVersionRequest{Path: l.lockPath, Version: -1},
		&zk.SetDataRequest{Path: l.node, Data: endpoint{IP: l.src.ip, Port: l.src.port, Timestamp: t}.encode(), Version: -1},
	)
	err = multiErr(res, err)
	switch {
	case err == nil && l.sess.alive():
	case err == nil || l.sess.expired.Load() || errors.Is(err, zk.ErrSessionExpired):
		l.expire()
		return false
	case errors.Is(err, zk.ErrNoNode):
		// The lock (its session expired) or the node (an operator
		// removed it) is gone.
		if !l.lose() {
			return false
		}
		l.logger.Error("zklease: lock or node gone; worker id lease lost", "name", l.src.name, "addr", l.src.Addr(),
			"worker", l.worker, "node", l.node, "err", err)
		return false
	default:
		l.stats.Failed()
		l.failing++
		l.logger.Warn("zklease: report failed; retrying", "name", l.src.name, "worker", l.worker,
			"consecutive_failures", l.failing, "valid_for", max(l.validFor(), 0), "err", err)
		return true
	}
	l.stats.Renewed()
	l.lastT, l.version = t, statVersion(res, 1)
	if l.failing > 0 {
		l.logger.Info("zklease: report succeeded again", "name", l.src.name, "worker", l.worker, "after_failures", l.failing)
		l.failing = 0
	}
	v := l.currentValidity()
	l.setValid(before+int64(v), sent, v)
	if err := l.writeCache(false); err != nil {
		l.logger.Warn("zklease: cache file not updated", "file", l.src.cacheFile, "err", err)
	}
	return true
}

// currentValidity is the validity a report gives: 3/4 of the smallest
// session timeout a server granted this connection. A reconnect to a
// server whose maxSessionTimeout is lower (a restart with a new
// configuration, another member of the ensemble) renegotiates the
// session's timeout down, and the server then expires it sooner. The
// record keeps the claim's validity, the larger, for the next holder.
func (l *lease) currentValidity() time.Duration {
	if g := validity(l.sess.timeout()); g > 0 && g < l.validity {
		return g
	}
	return l.validity
}

// stopReports ends the report goroutine and waits for it.
func (l *lease) stopReports() {
	l.stopOnce.Do(func() {
		close(l.stop)
		<-l.done
	})
}

// Close stops reporting, ends the lease's validity and releases the lock.
// While the session lives it writes, in one transaction with deleting the
// lock, the final timestamp (covering every key the generator issued) and
// a record that the next holder of this ip:port may start right after it;
// otherwise the next holder adds this lease's validity. The generator must
// have stopped issuing keys. Close is idempotent.
func (l *lease) Close() error {
	l.close.Do(func() {
		l.stopReports()
		l.end()
		defer l.src.released()
		defer l.sess.conn.Close()
		if l.lost.Load() || !l.sess.alive() {
			return
		}
		s := l.src
		t := max(ceilMs(l.clock.Now().UnixNano()), l.trackedMs(), l.lastT)
		rec := record{Worker: l.worker, ValidityMs: durationMs(l.validity), ClosedVersion: l.version + 1, Holder: holderName()}
		res, err := l.sess.conn.Multi(
			&zk.CheckVersionRequest{Path: l.lockPath, Version: -1},
			&zk.SetDataRequest{Path: l.node, Data: endpoint{IP: s.ip, Port: s.port, Timestamp: t}.encode(), Version: l.version},
			&zk.SetDataRequest{Path: holderPath(s.name, s.Addr()), Data: rec.encode(), Version: -1},
			&zk.DeleteRequest{Path: l.lockPath, Version: -1},
		)
		if err := multiErr(res, err); err != nil {
			l.closeErr = fmt.Errorf("zklease: release worker %d (%s): %w", l.worker, l.node, err)
			l.logger.Warn("zklease: clean release failed; the lock goes with the session, and the next holder waits out this lease's validity",
				"name", s.name, "worker", l.worker, "err", err)
			return
		}
		l.lastT = t
		if err := l.writeCache(true); err != nil {
			l.closeErr = err
		}
		l.logger.Info("zklease: worker id released", "name", s.name, "addr", s.Addr(), "worker", l.worker, "last_used", msTime(t))
	})
	return l.closeErr
}

// writeCache records the lease in the cache file, if any.
func (l *lease) writeCache(closed bool) error {
	if l.src.cacheFile == "" {
		return nil
	}
	return writeCache(l.src.cacheFile, cacheRecord{
		Worker: l.worker, Timestamp: l.lastT, Name: l.src.name, Addr: l.src.Addr(),
		Closed: closed, ValidityMs: durationMs(l.validity),
	})
}
