package zklease

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// cacheRecord is the cache file: Leaf's workerID.properties (its one key,
// workerID) with zklease's keys beside it, which Leaf's Properties.load
// ignores.
type cacheRecord struct {
	Worker     int64  // workerID
	Timestamp  int64  // the last timestamp reported to the node, Unix ms
	Name       string // Leaf's name
	Addr       string // ip:port
	Closed     bool   // written by a clean Close: Timestamp covers every key
	ValidityMs int64  // the lease's validity past a report
}

func (r cacheRecord) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# zklease: Leaf's worker id cache for /snowflake/%s, ip:port %s\n", r.Name, r.Addr)
	fmt.Fprintf(&b, "workerID=%d\n", r.Worker)
	fmt.Fprintf(&b, "timestamp=%d\n", r.Timestamp)
	fmt.Fprintf(&b, "name=%s\n", escapeProp(r.Name))
	fmt.Fprintf(&b, "address=%s\n", escapeProp(r.Addr))
	fmt.Fprintf(&b, "closed=%t\n", r.Closed)
	fmt.Fprintf(&b, "validityMs=%d\n", r.ValidityMs)
	return b.Bytes()
}

// escapeProp escapes what a properties value cannot hold as it is: ':'
// and '=' are fine in values, backslashes are not.
func escapeProp(v string) string { return strings.ReplaceAll(v, `\`, `\\`) }

// decodeCache reads the keys zklease writes; every one is required, the
// timestamp and validity positive.
func decodeCache(b []byte) (cacheRecord, error) {
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return cacheRecord{}, fmt.Errorf("line %q is not key=value", line)
		}
		kv[strings.TrimSpace(k)] = strings.ReplaceAll(strings.TrimSpace(v), `\\`, `\`)
	}
	var r cacheRecord
	var err error
	num := func(k string) int64 {
		n, perr := strconv.ParseInt(kv[k], 10, 64)
		if perr != nil && err == nil {
			err = fmt.Errorf("%s=%q is not an integer (a file Leaf wrote has no timestamp: zklease does not use it)", k, kv[k])
		}
		return n
	}
	r.Worker, r.Timestamp, r.ValidityMs = num("workerID"), num("timestamp"), num("validityMs")
	r.Name, r.Addr = kv["name"], kv["address"]
	closed, cerr := strconv.ParseBool(kv["closed"])
	if cerr != nil && err == nil {
		err = fmt.Errorf("closed=%q is not a boolean", kv["closed"])
	}
	r.Closed = closed
	switch {
	case err != nil:
	case r.Timestamp <= 0:
		// Read as is, 0 would be an id never used.
		err = fmt.Errorf("timestamp=%d is not a positive time", r.Timestamp)
	case r.ValidityMs <= 0:
		err = fmt.Errorf("validityMs=%d is not a positive duration", r.ValidityMs)
	case r.Worker < 0:
		err = fmt.Errorf("workerID=%d is negative", r.Worker)
	}
	return r, err
}

// writeCache replaces the file atomically: a synced temporary file renamed
// over it, then the directory synced, so a crash leaves the old record or
// the new one, never a torn one.
func writeCache(path string, r cacheRecord) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("zklease: cache file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".workerID-*")
	if err != nil {
		return fmt.Errorf("zklease: cache file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(r.encode()); err != nil {
		tmp.Close()
		return fmt.Errorf("zklease: cache file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("zklease: cache file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("zklease: cache file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("zklease: cache file: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // not every file system syncs directories
		d.Close()
	}
	return nil
}

// lastUse is the latest time keys issued under the record may carry: its
// timestamp after a clean Close, else the timestamp plus the lease's
// validity (at least Leaf's report interval and a second).
func (r cacheRecord) lastUse() time.Time {
	if r.Closed {
		return msTime(r.Timestamp)
	}
	return msTime(r.Timestamp + max(r.ValidityMs, leafSlackMs))
}

// cachedLastUse is, for a claim through ZooKeeper, the last use the cache
// file records for this Name, ip:port and worker: keys a cache lease
// issued while ZooKeeper was unreachable are recorded there only. The
// zero time when the file does not exist or is another's; a file zklease
// cannot read (Leaf's own, workerID alone) is ignored, since a cache lease
// only starts from, and only writes, a record it reads. A clock behind the
// file's timestamp is refused, as behind the node's.
func (s *Source) cachedLastUse(worker int64, clock keygen.Clock) (time.Time, error) {
	b, err := os.ReadFile(s.cacheFile)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %v", ErrCacheFile, err)
	}
	rec, err := decodeCache(b)
	if err != nil || rec.Name != s.name || rec.Addr != s.Addr() || rec.Worker != worker {
		return time.Time{}, nil
	}
	if now := clock.Now(); rec.Timestamp > now.UnixMilli() {
		return time.Time{}, &ClockBehindError{Node: s.cacheFile, Stored: time.UnixMilli(rec.Timestamp), Now: now}
	}
	return rec.lastUse(), nil
}

// fromCache is Leaf's fallback: the worker id the cache file recorded for
// this Name and ip:port, without a lock. zkErr is why ZooKeeper failed.
// Before it returns, the file is rewritten as not closed with the current
// time, so that a crash of this lease leaves the next holder (through the
// file or ZooKeeper) waiting out the validity past it.
func (s *Source) fromCache(ctx context.Context, info keygen.WorkerInfo, clock keygen.Clock, logger *slog.Logger, zkErr error) (keygen.Lease, error) {
	b, err := os.ReadFile(s.cacheFile)
	if err != nil {
		return nil, fmt.Errorf("%w; %w: %v", zkErr, ErrCacheFile, err)
	}
	rec, err := decodeCache(b)
	if err != nil {
		return nil, fmt.Errorf("%w; %w: %s: %v", zkErr, ErrCacheFile, s.cacheFile, err)
	}
	if rec.Name != s.name || rec.Addr != s.Addr() {
		return nil, fmt.Errorf("%w; %w: %s is for /snowflake/%s %s, not /snowflake/%s %s",
			zkErr, ErrCacheFile, s.cacheFile, rec.Name, rec.Addr, s.name, s.Addr())
	}
	if rec.Worker < 0 || rec.Worker > info.MaxWorker {
		return nil, fmt.Errorf("%w: cache file %s has worker %d, outside the %s layout's 0..%d",
			ErrWorkerOutOfRange, s.cacheFile, rec.Worker, info.Type, info.MaxWorker)
	}
	if now := clock.Now(); rec.Timestamp > now.UnixMilli() {
		return nil, &ClockBehindError{Node: s.cacheFile, Stored: time.UnixMilli(rec.Timestamp), Now: now}
	}
	last := rec.lastUse()
	if err := waitPast(ctx, clock, last); err != nil {
		return nil, fmt.Errorf("zklease: wait for the cached last use (%v) to pass: %w", last, err)
	}
	l := &cacheLease{src: s, worker: rec.Worker, rec: rec, last: last, clock: clock, logger: logger,
		interval: s.interval(time.Duration(rec.ValidityMs) * time.Millisecond),
		stop:     make(chan struct{}), done: make(chan struct{})}
	if err := l.write(false); err != nil {
		return nil, fmt.Errorf("%w; %w: %v", zkErr, ErrCacheFile, err)
	}
	l.valid.Store(math.MaxInt64)
	logger.Warn("zklease: ZooKeeper unreachable; using the cache file's worker id WITHOUT a lock", "file", s.cacheFile,
		"name", s.name, "addr", s.Addr(), "worker", rec.Worker, "last_used", last, "err", zkErr)
	go l.run()
	return l, nil
}

// cacheLease is a worker id from the cache file: no lock, no expiry (as
// Leaf's fallback). Every report interval it writes the time (and the
// generator's last issued time) to the file as not closed; Close writes
// the last issued time as a clean end. A write that fails stops the keys
// until one succeeds: keys the file does not cover would be unknown to the
// next holder.
type cacheLease struct {
	src      *Source
	worker   int64
	last     time.Time
	clock    keygen.Clock
	logger   *slog.Logger
	interval time.Duration
	valid    atomic.Int64 // ValidUntil: math.MaxInt64, or math.MinInt64 while the file is behind

	mu    sync.Mutex // orders the writes of the file
	rec   cacheRecord
	track func() time.Time

	stop chan struct{}
	done chan struct{}
	once sync.Once
	err  error
}

func (l *cacheLease) Worker() int64       { return l.worker }
func (l *cacheLease) LastUsed() time.Time { return l.last }
func (l *cacheLease) ValidUntil() int64   { return l.valid.Load() }

func (l *cacheLease) Track(last func() time.Time) {
	l.mu.Lock()
	l.track = last
	l.mu.Unlock()
}

// write records the latest of now, the generator's last issued time and
// the last recorded time in the file.
func (l *cacheLease) write(closed bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := max(ceilMs(l.clock.Now().UnixNano()), l.rec.Timestamp)
	if l.track != nil {
		if last := l.track(); !last.IsZero() {
			t = max(t, ceilMs(last.UnixNano()))
		}
	}
	rec := l.rec
	rec.Timestamp, rec.Closed = t, closed
	if err := writeCache(l.src.cacheFile, rec); err != nil {
		return err
	}
	l.rec = rec
	return nil
}

// run writes the file every interval until Close.
func (l *cacheLease) run() {
	defer close(l.done)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if err := l.write(false); err != nil {
			if l.valid.Swap(math.MinInt64) != math.MinInt64 {
				l.logger.Error("zklease: cache file not updated; keys stop until it is", "file", l.src.cacheFile,
					"worker", l.Worker(), "err", err)
			}
			continue
		}
		if l.valid.Swap(math.MaxInt64) == math.MinInt64 {
			l.logger.Info("zklease: cache file updated again; keys resume", "file", l.src.cacheFile, "worker", l.Worker())
		}
	}
}

// Close stops the writes and records the latest issued time (or now) in
// the file as a clean end. The generator must have stopped issuing keys.
func (l *cacheLease) Close() error {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		l.valid.Store(math.MinInt64)
		l.err = l.write(true)
		l.src.released()
	})
	return l.err
}
