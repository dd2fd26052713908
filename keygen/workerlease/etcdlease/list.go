package etcdlease

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Slot is one worker id of a namespace, as List reports it: an id that is
// held, or one that was held once and has a record.
type Slot struct {
	// Worker is the worker id.
	Worker int64
	// Held says the id's held key exists: a holder's etcd lease has it.
	Held bool
	// Owner is the holder's token (its instance, "/" and a random
	// suffix); for an id not held, the last holder that wrote the record.
	Owner string
	// LeaseID is the holder's etcd lease; 0 when not held.
	LeaseID int64
	// TTL is the time the holder's etcd lease has left, by the etcd
	// leader's clock, when listed; 0 when not held (or when it ran out
	// while listing).
	TTL time.Duration
	// LastUsed is the latest issued time the record holds (written at
	// claims, renewals and release); zero when none.
	LastUsed time.Time
	// ValidUntil is the end of the validity the holder recorded at its
	// last claim or renewal, on the holder's clock; zero once the id was
	// released by Close. A new holder issues nothing at or before the
	// later of LastUsed and ValidUntil.
	ValidUntil time.Time
}

// List returns the namespace's worker ids that are held or have a record,
// by id. Held keys and records are read in one transaction; each held
// id's TTL is then asked of etcd.
func (s *Source) List(ctx context.Context) ([]Slot, error) {
	tr, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.heldPrefix(), clientv3.WithPrefix()),
		clientv3.OpGet(s.lastPrefix(), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return nil, fmt.Errorf("etcdlease: list %q: %w", s.namespace, err)
	}
	slots := map[int64]*Slot{}
	slot := func(w int64) *Slot {
		if sl, ok := slots[w]; ok {
			return sl
		}
		sl := &Slot{Worker: w}
		slots[w] = sl
		return sl
	}
	for _, kv := range tr.Responses[1].GetResponseRange().Kvs {
		w, ok := workerOf(string(kv.Key), s.lastPrefix())
		if !ok {
			continue
		}
		rec, err := decodeRecord(string(kv.Key), []*mvccpb.KeyValue{kv})
		if err != nil {
			return nil, err
		}
		sl := slot(w)
		sl.Owner, sl.LastUsed, sl.ValidUntil = rec.Owner, msTime(rec.LastMs), msTime(rec.UntilMs)
	}
	for _, kv := range tr.Responses[0].GetResponseRange().Kvs {
		w, ok := workerOf(string(kv.Key), s.heldPrefix())
		if !ok {
			continue
		}
		sl := slot(w)
		sl.Held, sl.Owner, sl.LeaseID = true, string(kv.Value), kv.Lease
		if kv.Lease == 0 {
			continue
		}
		ttl, err := s.cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
		switch {
		case err == nil && ttl.TTL > 0:
			sl.TTL = time.Duration(ttl.TTL) * time.Second
		case err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound):
			return nil, fmt.Errorf("etcdlease: list %q: lease of worker %d: %w", s.namespace, w, err)
		}
	}
	out := make([]Slot, 0, len(slots))
	for _, sl := range slots {
		out = append(out, *sl)
	}
	slices.SortFunc(out, func(a, b Slot) int { return cmp.Compare(a.Worker, b.Worker) })
	return out, nil
}
