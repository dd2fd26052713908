package etcdlease

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Claim limits: a listing offers up to claimCandidates free ids, tried in
// order; another listing follows only when competing claimants took them
// all, at most maxClaimRounds times.
const (
	claimCandidates = 16
	maxClaimRounds  = 1000
	maxGrants       = 3 // grants per Acquire, when a slow claim outlives its lease
)

// errLeaseGone is a claim whose own etcd lease ran out before the claim
// was recorded; Acquire grants another and claims again.
var errLeaseGone = errors.New("etcdlease: the lease expired during the claim")

// Acquire claims the lowest free worker id in [0, info.MaxWorker] and
// keeps its etcd lease alive every (TTL-SafeGuard)/3 until the lease is
// closed. An id is free when its held key does not exist: never claimed,
// released by Close, or deleted by etcd when its holder's lease expired.
// Free ids whose record is later than the generator's clock come last
// (see claimID). When every id is held the error wraps ErrNoFreeWorker.
func (s *Source) Acquire(ctx context.Context, info keygen.WorkerInfo) (keygen.Lease, error) {
	if info.MaxWorker < 0 {
		return nil, fmt.Errorf("etcdlease: negative MaxWorker %d", info.MaxWorker)
	}
	if err := s.clientClosed(); err != nil {
		return nil, err
	}
	clock := info.Clock
	if clock == nil {
		clock = wallClock{}
	}
	l := &lease{
		base:   time.Now(),
		src:    s,
		clock:  clock,
		owner:  s.instance + "/" + randomHex(8),
		logger: s.log(info.Logger),
		done:   make(chan struct{}),
	}
	l.valid.Store(expiredValid) // until the claim sets it
	for grant := 1; ; grant++ {
		err := s.claim(ctx, l, info.MaxWorker)
		if err == nil {
			break
		}
		if !errors.Is(err, errLeaseGone) || grant >= maxGrants {
			return nil, err
		}
	}
	l.logger.Info("etcdlease: worker id claimed", "namespace", s.namespace, "worker", l.worker,
		"owner", l.owner, "lease", int64(l.id), "generator", info.Type, "last_used", l.lastUsed, "ttl", s.ttl)
	l.ctx, l.cancel = context.WithCancel(context.Background())
	go l.run()
	return l, nil
}

// claim grants an etcd lease, claims an id with it and records the
// validity's end. On failure the granted lease is revoked (which deletes
// a held key attached to it).
func (s *Source) claim(ctx context.Context, l *lease, maxWorker int64) error {
	started := time.Now()
	before, since := l.clock.Now().UnixNano(), time.Since(l.base)
	g, err := s.cli.Grant(clientv3.WithRequireLeader(ctx), int64(s.ttl/time.Second))
	if err != nil {
		return fmt.Errorf("etcdlease: grant a lease: %w", err)
	}
	l.id, l.started = g.ID, started
	worker, rec, err := s.claimID(ctx, g.ID, l.owner, maxWorker, ceilMs(l.clock.Now().UnixNano()))
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		err = errLeaseGone
	}
	if err != nil {
		s.revoke(g.ID)
		return err
	}
	l.worker = worker
	l.heldKey, l.lastKey = s.heldKey(worker), s.lastKey(worker)
	l.lastUsedMs = rec.used()
	l.lastUsed = msTime(l.lastUsedMs)

	// The validity's end is recorded before any key is issued under it, so
	// a holder that dies leaves the next one a bound on its keys.
	until := before + int64(s.ttl-s.safeGuard)
	ok, err := l.writeRecord(ctx, until)
	if err == nil && !ok {
		err = errLeaseGone // the held key went with the lease
	}
	if err != nil {
		s.revoke(g.ID)
		return fmt.Errorf("etcdlease: record the claim of worker %d: %w", worker, err)
	}
	l.setValid(until, since+s.ttl-s.safeGuard)
	return nil
}

// claimID claims the lowest id in [0, maxWorker] whose held key does not
// exist, by a transaction that creates the key only if it has no create
// revision, and returns the id's record read in the same transaction.
//
// Free ids whose record says they were used after nowMs (the claimant's
// clock) come last, soonest usable first: a holder whose clock ran ahead
// leaves such a record, and a claimant taking that id would have to wait
// or refuse to start while other ids are free. An unreadable record counts
// as used last; its id is claimed only when nothing else is free (and the
// claim is then refused with a *RecordError).
func (s *Source) claimID(ctx context.Context, id clientv3.LeaseID, owner string, maxWorker, nowMs int64) (int64, record, error) {
	ctx = clientv3.WithRequireLeader(ctx)
	for range maxClaimRounds {
		resp, err := s.cli.Txn(ctx).Then(
			clientv3.OpGet(s.heldPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly()),
			clientv3.OpGet(s.lastPrefix(), clientv3.WithPrefix()),
		).Commit()
		if err != nil {
			return 0, record{}, fmt.Errorf("etcdlease: list held worker ids in %q: %w", s.namespace, err)
		}
		isHeld := map[int64]bool{}
		avoid := []int64{}
		for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
			if w, ok := workerOf(string(kv.Key), s.heldPrefix()); ok && w <= maxWorker {
				isHeld[w] = true
				avoid = append(avoid, w)
			}
		}
		type later struct{ w, used int64 }
		var ahead []later
		for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
			w, ok := workerOf(string(kv.Key), s.lastPrefix())
			if !ok || w > maxWorker || isHeld[w] {
				continue
			}
			used := int64(math.MaxInt64)
			if rec, err := decodeRecord(string(kv.Key), []*mvccpb.KeyValue{kv}); err == nil {
				used = rec.used()
			}
			if used > nowMs {
				ahead = append(ahead, later{w, used})
				avoid = append(avoid, w)
			}
		}
		slices.Sort(avoid)
		candidates := freeIDs(avoid, maxWorker, claimCandidates)
		slices.SortFunc(ahead, func(a, b later) int { return cmp.Or(cmp.Compare(a.used, b.used), cmp.Compare(a.w, b.w)) })
		for _, a := range ahead {
			candidates = append(candidates, a.w)
		}
		if len(candidates) == 0 {
			return 0, record{}, fmt.Errorf("%w: namespace %q has all %d worker ids (0..%d) held",
				ErrNoFreeWorker, s.namespace, maxWorker+1, maxWorker)
		}
		for _, w := range candidates {
			key, last := s.heldKey(w), s.lastKey(w)
			tr, err := s.cli.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, owner, clientv3.WithLease(id)), clientv3.OpGet(last)).
				Commit()
			if err != nil {
				return 0, record{}, fmt.Errorf("etcdlease: claim worker %d in %q: %w", w, s.namespace, err)
			}
			if !tr.Succeeded {
				continue // another claimant holds it now
			}
			rec, err := decodeRecord(last, tr.Responses[1].GetResponseRange().Kvs)
			return w, rec, err
		}
	}
	return 0, record{}, fmt.Errorf("etcdlease: namespace %q: no claim after %d listings (contention)", s.namespace, maxClaimRounds)
}

// freeIDs returns up to n ids in [0, maxWorker], lowest first, that are
// not in held (sorted).
func freeIDs(held []int64, maxWorker int64, n int) []int64 {
	var out []int64
	i := 0
	for w := int64(0); w <= maxWorker && len(out) < n; w++ {
		for i < len(held) && held[i] < w {
			i++
		}
		if i < len(held) && held[i] == w {
			continue
		}
		out = append(out, w)
		if w == math.MaxInt64 {
			break
		}
	}
	return out
}

// revoke ends an etcd lease, best effort: a lease it cannot reach expires
// by itself after TTL, taking its keys with it.
func (s *Source) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), min(s.ttl, 5*time.Second))
	defer cancel()
	_, _ = s.cli.Revoke(ctx, id)
}
