package zklease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/shardkey/shardkey/keygen"
)

// Acquire claims the worker id of this ip:port under /snowflake/{Name}:
// it opens a ZooKeeper session, takes the ip:port's lock (waiting while
// another live process holds it), reuses the ip:port's forever node or
// creates one as Leaf does, refuses when the clock is behind the node's
// timestamp, and reports the time to the node every ReportInterval until
// the lease is closed or lost. With CacheFile set and ZooKeeper
// unreachable, the file's worker id is used instead, without a lock (see
// the package documentation).
func (s *Source) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	if info.MaxWorker < 0 {
		return nil, fmt.Errorf("zklease: negative MaxWorker %d", info.MaxWorker)
	}
	clock := info.Clock
	if clock == nil {
		clock = wallClock{}
	}
	logger := s.log(info.Logger)
	s.mu.Lock()
	if s.holding {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: this Source already holds the worker id of %s for another generator (one lease per ip:port; give each generator a Source with its own Port)",
			ErrHeld, s.Addr())
	}
	s.holding = true
	s.mu.Unlock()
	l, err := s.claim(ctx, info, clock, logger)
	if err == nil {
		return l, nil
	}
	if s.cacheFile != "" && errors.Is(err, ErrUnreachable) && ctx.Err() == nil {
		var fl keygen.Lease
		if fl, err = s.fromCache(ctx, info, clock, logger, err); err == nil {
			return fl, nil
		}
	}
	s.released()
	return nil, err
}

// released marks the Source's lease closed.
func (s *Source) released() {
	s.mu.Lock()
	s.holding = false
	s.mu.Unlock()
}

// claim is Acquire through ZooKeeper.
func (s *Source) claim(ctx context.Context, info keygen.WorkerInfo, clock keygen.Clock, logger *slog.Logger) (*lease, error) {
	sess, err := dial(ctx, s.servers, s.sessionTimeout, s.connectTimeout, logger)
	if err != nil {
		return nil, err
	}
	done := false
	var l *lease
	defer func() {
		if !done {
			if l != nil {
				l.end() // stops the validity's timer
			}
			sess.conn.Close() // ends the session: its lock node goes with it
		}
	}()
	// Operations have no context: closing the connection ends them.
	stop := context.AfterFunc(ctx, sess.conn.Close)
	defer stop()
	fail := func(what string, err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("zklease: %s: %w", what, ctx.Err())
		}
		if connectionError(err) {
			return fmt.Errorf("%w: %s: %v", ErrUnreachable, what, err)
		}
		return fmt.Errorf("zklease: %s: %w", what, err)
	}

	granted := sess.timeout()
	if granted <= 0 {
		return nil, fmt.Errorf("%w: the session timeout the server granted was not seen", ErrUnreachable)
	}
	v := validity(granted)
	addr := s.Addr()
	l = &lease{
		src:      s,
		sess:     sess,
		clock:    clock,
		logger:   logger,
		validity: v,
		interval: s.interval(v),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		base:     time.Now(),
	}
	l.valid.Store(math.MinInt64)

	if err := ensurePath(sess.conn, foreverPath(s.name)); err != nil {
		return nil, fail("create "+foreverPath(s.name), err)
	}
	if err := ensurePath(sess.conn, holderPath(s.name, addr)); err != nil {
		return nil, fail("create "+holderPath(s.name, addr), err)
	}
	if l.lockPath, err = s.lock(ctx, sess.conn, addr); err != nil {
		if errors.Is(err, ErrHeld) {
			return nil, err
		}
		return nil, fail("lock "+addr, err)
	}

	// Under the lock: this ip:port's node, or a new one.
	kids, _, err := sess.conn.Children(foreverPath(s.name))
	if err != nil {
		return nil, fail("list "+foreverPath(s.name), err)
	}
	mine, err := s.nodesOf(addr, kids)
	if err != nil {
		return nil, err
	}
	created := false
	var nodeName string
	if len(mine) == 0 {
		ep := endpoint{IP: s.ip, Port: s.port, Timestamp: clock.Now().UnixMilli()}
		p, err := sess.conn.Create(foreverPath(s.name)+"/"+addr+"-", ep.encode(), zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			return nil, fail("create the node of "+addr, err)
		}
		nodeName, created = p[strings.LastIndexByte(p, '/')+1:], true
	} else {
		// Several nodes of one ip:port (two Leaf starts raced): all are
		// this lock's; use the lowest.
		slices.SortFunc(mine, func(a, b string) int {
			_, x, _ := parseNode(a)
			_, y, _ := parseNode(b)
			return int(x - y)
		})
		nodeName = mine[0]
		if len(mine) > 1 {
			logger.Warn("zklease: several nodes for one ip:port; using the lowest", "name", s.name, "addr", addr, "nodes", mine)
		}
	}
	_, worker, err := parseNode(nodeName)
	if err != nil {
		return nil, err
	}
	l.worker, l.node = worker, foreverPath(s.name)+"/"+nodeName
	if worker > info.MaxWorker {
		if created {
			// Never used: leave no node behind.
			_ = sess.conn.Delete(l.node, -1)
		}
		return nil, fmt.Errorf("%w: node %s is worker %d, above the %s layout's largest worker id %d (ids are never reused by ZooKeeper's sequence; see the package documentation)",
			ErrWorkerOutOfRange, l.node, worker, info.Type, info.MaxWorker)
	}
	if created {
		// A node made by hand may already name the sequence ZooKeeper
		// just gave: list again, with the new node.
		if kids, _, err = sess.conn.Children(foreverPath(s.name)); err != nil {
			return nil, fail("list "+foreverPath(s.name), err)
		}
	}
	if others := othersNaming(worker, nodeName, kids); len(others) > 0 {
		if created {
			_ = sess.conn.Delete(l.node, -1) // never used
		}
		return nil, &SharedIDError{Worker: worker, Node: l.node, Others: others}
	}

	data, stat, err := sess.conn.Get(l.node)
	if err != nil {
		return nil, fail("read "+l.node, err)
	}
	ep, err := decodeEndpoint(data)
	if err != nil {
		return nil, &NodeError{Node: l.node, Reason: err.Error()}
	}
	if !created {
		// Leaf's check: the node's time must not be after the clock's.
		if now := clock.Now(); ep.Timestamp > now.UnixMilli() {
			return nil, &ClockBehindError{Node: l.node, Stored: time.UnixMilli(ep.Timestamp), Now: now}
		}
		recData, _, err := sess.conn.Get(holderPath(s.name, addr))
		if err != nil {
			return nil, fail("read "+holderPath(s.name, addr), err)
		}
		rec, present, err := decodeRecord(recData)
		if err != nil {
			return nil, &NodeError{Node: holderPath(s.name, addr), Reason: err.Error()}
		}
		l.lastUsed = lastUsed(ep.Timestamp, rec, present, worker, stat.Version, v)
	}
	if s.cacheFile != "" {
		// Keys issued through the cache file (ZooKeeper was unreachable)
		// are in the file only: the node and the record never saw them.
		cached, err := s.cachedLastUse(worker, clock)
		if err != nil {
			return nil, err
		}
		if cached.After(l.lastUsed) {
			logger.Info("zklease: the cache file records a later use than ZooKeeper; starting after it", "file", s.cacheFile,
				"name", s.name, "addr", addr, "worker", worker, "zookeeper_last_used", l.lastUsed, "cache_last_used", cached)
			l.lastUsed = cached
		}
	}
	if err := waitPast(ctx, clock, l.lastUsed); err != nil {
		return nil, fmt.Errorf("zklease: wait for the last holder's keys (%v) to pass: %w", l.lastUsed, err)
	}
	l.lastT = ep.Timestamp

	// The first report: the timestamp, and the record of this holder.
	sent := time.Now()
	before := clock.Now().UnixNano()
	t := max(ceilMs(before), l.lastT)
	rec := record{Worker: worker, ValidityMs: durationMs(v), ClosedVersion: -1, Holder: holderName()}
	res, err := sess.conn.Multi(
		&zk.CheckVersionRequest{Path: l.lockPath, Version: -1},
		&zk.SetDataRequest{Path: l.node, Data: endpoint{IP: s.ip, Port: s.port, Timestamp: t}.encode(), Version: -1},
		&zk.SetDataRequest{Path: holderPath(s.name, addr), Data: rec.encode(), Version: -1},
	)
	if err := multiErr(res, err); err != nil {
		return nil, fail("first report to "+l.node, err)
	}
	if !sess.alive() {
		return nil, fmt.Errorf("%w: the session ended while claiming", ErrUnreachable)
	}
	l.lastT, l.version = t, statVersion(res, 1)
	first := l.currentValidity() // a reconnect while claiming may have granted less
	l.setValid(before+int64(first), sent, first)
	if err := l.writeCache(false); err != nil {
		return nil, err
	}
	if !stop() {
		return nil, fmt.Errorf("zklease: acquire: %w", ctx.Err())
	}
	done = true
	expire := l.expire
	sess.onExpire.Store(&expire)
	logger.Info("zklease: worker id claimed", "name", s.name, "addr", addr, "node", l.node, "worker", worker,
		"generator", info.Type, "new_node", created, "last_used", l.lastUsed, "session_timeout", granted, "report_interval", l.interval)
	go l.run()
	return l, nil
}

// lastUsed is the latest time keys of the node may carry, for the next
// holder: the node's timestamp when zklease's last holder closed cleanly
// (its final report covered every key), else that timestamp plus how long
// that holder's lease outlived a report; for a node without zklease's
// record of it (Leaf's), plus Leaf's report interval and a second.
func lastUsed(ts int64, rec record, present bool, worker int64, version int32, v time.Duration) time.Time {
	switch {
	case present && rec.Worker == worker && rec.ClosedVersion == version:
		return msTime(ts)
	case present && rec.Worker == worker:
		return msTime(ts + rec.ValidityMs)
	}
	return msTime(ts + max(durationMs(v), leafSlackMs))
}

// nodesOf returns the forever nodes of addr among kids. A node Leaf reads
// as addr's (or whose name starts with addr-) without ZooKeeper's exact
// name is an error: which id the address has, and when it was last used,
// is then not sure.
func (s *Source) nodesOf(addr string, kids []string) ([]string, error) {
	var mine []string
	for _, k := range kids {
		a, _, err := parseNode(k)
		if err == nil {
			if a == addr {
				mine = append(mine, k)
			}
			continue
		}
		if la, _, _ := leafID(k); la == addr || strings.HasPrefix(k, addr+"-") {
			return nil, &NodeError{Node: foreverPath(s.name) + "/" + k,
				Reason: "a node of " + addr + " whose name does not end in ZooKeeper's 10-digit sequence"}
		}
	}
	return mine, nil
}

// othersNaming returns the nodes among kids, other than node, that Leaf
// reads as worker id w.
func othersNaming(w int64, node string, kids []string) []string {
	var out []string
	for _, k := range kids {
		if k == node {
			continue
		}
		if _, id, readable := leafID(k); readable && id == w {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// waitPast sleeps on clock until it reads after t.
func waitPast(ctx context.Context, clock keygen.Clock, t time.Time) error {
	for {
		now := clock.Now()
		if t.IsZero() || now.After(t) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		clock.Sleep(min(t.Sub(now)+time.Millisecond, 50*time.Millisecond))
	}
}

// lock takes the lock of addr: an ephemeral sequential node under the
// holder record; the lowest holds it. It waits for earlier ones to go
// until ctx ends (ErrHeld).
func (s *Source) lock(ctx context.Context, conn *zk.Conn, addr string) (string, error) {
	dir := holderPath(s.name, addr)
	p, err := conn.Create(dir+"/"+lockPrefix, []byte(holderName()+" since "+time.Now().UTC().Format(time.RFC3339)),
		zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		return "", err
	}
	mine := p[strings.LastIndexByte(p, '/')+1:]
	for {
		kids, _, err := conn.Children(dir)
		if err != nil {
			return "", err
		}
		locks := lockNodes(kids)
		i := slices.Index(locks, mine)
		if i < 0 {
			return "", fmt.Errorf("zklease: lock node %s vanished", p)
		}
		if i == 0 {
			return p, nil
		}
		prev := dir + "/" + locks[i-1]
		ok, _, ch, err := conn.ExistsW(prev)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			holder, _, _ := conn.Get(prev)
			return "", fmt.Errorf("%w: %s in /snowflake/%s is locked by %s (%s) and was not released before: %w",
				ErrHeld, addr, s.name, locks[i-1], holder, ctx.Err())
		}
	}
}

// lockNodes are the lock nodes among kids, by sequence.
func lockNodes(kids []string) []string {
	var out []string
	for _, k := range kids {
		if strings.HasPrefix(k, lockPrefix) {
			// ZooKeeper's 10 digits only: every process compares the
			// same names the same way.
			if seq := k[len(lockPrefix):]; len(seq) == seqDigits && strings.Trim(seq, "0123456789") == "" {
				out = append(out, k)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(a[len(lockPrefix):], b[len(lockPrefix):]) })
	return out
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

func holderName() string { return hostname() + " pid " + strconv.Itoa(os.Getpid()) }

// wallClock stands in when keygen.WorkerInfo has no clock.
type wallClock struct{}

func (wallClock) Now() time.Time        { return time.Now() }
func (wallClock) Sleep(d time.Duration) { time.Sleep(d) }
