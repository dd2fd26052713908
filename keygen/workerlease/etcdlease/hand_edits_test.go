package etcdlease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// An operator revoking a holder's etcd lease (etcdctl lease revoke)
// frees its id at once. The holder's next renewal finds the lease gone
// and stops for good; meanwhile the record keeps a new holder's keys
// after every key the old one may issue.
func TestRevokedLeaseIsLostAndTheRecordKeepsKeysApart(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, fastLease)
	gA, err := newGenerator(t, onlyWorker{src: src, max: 0})
	if err != nil {
		t.Fatalf("generator A: %v", err)
	}
	keysA := issueSome(t, gA, 100)
	slots, err := src.List(context.Background())
	if err != nil || len(slots) != 1 || slots[0].LeaseID == 0 {
		t.Fatalf("List: %v %+v", err, slots)
	}
	validA := gA.(keygen.StatsReporter).Stats().LeaseValidUntil
	if _, err := cli.Revoke(context.Background(), clientv3.LeaseID(slots[0].LeaseID)); err != nil {
		t.Fatal(err)
	}
	lB, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0})
	if err != nil {
		t.Fatalf("claim after the revoke: %v", err)
	}
	defer lB.Close()
	if lB.LastUsed().UnixNano() < validA {
		t.Fatalf("new holder's LastUsed %v is before the revoked holder's validity end %v", lB.LastUsed(), time.Unix(0, validA))
	}
	waitFor(t, 3*time.Second, "A's refusal", func() bool {
		_, err := gA.NextID(context.Background())
		return errors.Is(err, keygen.ErrLeaseLost)
	})
	if last := decomposeTime(t, gA, keysA[len(keysA)-1]); !lB.LastUsed().After(last) {
		t.Fatalf("new holder's LastUsed %v is not after A's last key %v", lB.LastUsed(), last)
	}
}

// A held key put by hand without a lease never expires: the id is never
// claimed (fail closed), and List shows it held with no lease.
func TestHeldKeyWithoutALeaseIsNeverClaimed(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, Config{})
	if _, err := cli.Put(context.Background(), src.heldKey(0), "by-hand"); err != nil {
		t.Fatal(err)
	}
	info := keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 1}
	l, err := src.Acquire(context.Background(), info)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	defer l.Close()
	if l.Worker() != 1 {
		t.Fatalf("claimed worker %d, want 1 (0 is held by hand)", l.Worker())
	}
	if _, err := src.Acquire(context.Background(), info); !errors.Is(err, ErrNoFreeWorker) {
		t.Fatalf("third claim: %v, want ErrNoFreeWorker", err)
	}
	slots, err := src.List(context.Background())
	if err != nil || len(slots) != 2 || !slots[0].Held || slots[0].LeaseID != 0 || slots[0].Owner != "by-hand" {
		t.Fatalf("List: %v %+v", err, slots)
	}
}

// A held key overwritten by hand (a put without the lease) takes the id
// from its holder: the holder's next renewal sees it and stops for good.
func TestHeldKeyOverwrittenByHandLosesTheLease(t *testing.T) {
	cli := sharedEtcd(t)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, fastLease)
	l, err := src.Acquire(context.Background(), keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 0})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	defer l.Close()
	slots, err := src.List(context.Background())
	if err != nil || len(slots) != 1 {
		t.Fatalf("List: %v %+v", err, slots)
	}
	// The same owner token, but no longer on the lease.
	if _, err := cli.Put(context.Background(), src.heldKey(0), slots[0].Owner); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the lease lost", func() bool { return l.ValidUntil() < time.Now().UnixNano() })
	time.Sleep(2 * fastLease.TTL)
	if v := l.ValidUntil(); v > time.Now().UnixNano() {
		t.Fatalf("valid again until %v after its key was taken", time.Unix(0, v))
	}
}
