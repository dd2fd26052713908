package etcdlease

import (
	"context"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Compacting etcd's history (and defragmenting) under live holders
// changes nothing: claims compare create revisions of keys that exist
// now, never old revisions. A private server, because compaction is
// server-wide.
func TestCompactionKeepsHoldersAndClaims(t *testing.T) {
	etcd := startPrivateEtcd(t)
	cli := etcdClient(t, etcd.addr)
	ns := testNamespace(t, cli)
	src := newSource(t, cli, ns, fastLease)
	info := keygen.WorkerInfo{Type: "SNOWFLAKE", MaxWorker: 3}
	a, err := src.Acquire(context.Background(), info)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	defer a.Close()
	b, err := src.Acquire(context.Background(), info)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := b.Close(); err != nil { // a record, and a deleted held key, in the history
		t.Fatal(err)
	}
	for range 3 {
		resp, err := cli.Get(context.Background(), "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Compact(context.Background(), resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
			t.Fatalf("compact: %v", err)
		}
		if _, err := cli.Defragment(context.Background(), etcd.addr); err != nil {
			t.Fatalf("defragment: %v", err)
		}
		time.Sleep(fastLease.TTL)
	}
	if v := a.ValidUntil(); v <= time.Now().UnixNano() {
		t.Fatalf("holder no longer valid after compactions (until %v, renewals %d, failures %d)",
			time.Unix(0, v), a.(keygen.LeaseStats).Renewals(), a.(keygen.LeaseStats).Failures())
	}
	c, err := src.Acquire(context.Background(), info)
	if err != nil || c.Worker() != 1 {
		t.Fatalf("claim after compactions: %v (want the released id 1)", err)
	}
	defer c.Close()
	if _, err := src.List(context.Background()); err != nil {
		t.Fatalf("List after compactions: %v", err)
	}
}
