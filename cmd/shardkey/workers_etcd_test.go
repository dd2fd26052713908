package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen/workerlease/etcdlease"
)

// TestWorkersListShowsTheIDsEtcdLeasesHold: three ids claimed through
// etcdlease are listed held by their instance, with their etcd lease and
// its time left; once one is closed it is listed free.
func TestWorkersListShowsTheIDsEtcdLeasesHold(t *testing.T) {
	addr := dbtest.Etcd(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the leases close while the client is open.
	t.Cleanup(func() { cli.Close() })
	prefix, ns := "/"+testSpace(t)+"/", "orders"
	src, err := etcdlease.New(etcdlease.Config{Client: cli, Prefix: prefix, Namespace: ns, Instance: "cli-test"})
	if err != nil {
		t.Fatal(err)
	}
	leases := claim(t, src, 3)
	args := []string{"-backend", "etcd", "-endpoints", addr, "-prefix", prefix, "-namespace", ns}

	rows := listWorkers(t, args...)
	if got, want := heldWorkers(rows), leaseWorkers(leases); !slices.Equal(got, want) {
		t.Fatalf("held %v, claimed %v: %+v", got, want, rows)
	}
	for _, l := range leases {
		r := rows[l.Worker()]
		if !strings.HasPrefix(r.Owner, "cli-test/") || r.LeaseID == "" || r.TTLMs <= 0 || r.ExpiresAt == "-" {
			t.Errorf("worker %d: %+v (want owner cli-test/..., an etcd lease, time left)", l.Worker(), r)
		}
	}
	table := listWorkersText(t, args...)
	if !strings.HasPrefix(table, "WORKER") || !strings.Contains(table, "KEY") {
		t.Errorf("table header:\n%s", table)
	}
	for _, l := range leases {
		if f := tableRow(t, table, l.Worker()); f[1] != "true" || !strings.HasPrefix(f[2], "cli-test/") {
			t.Errorf("worker %d: row %q", l.Worker(), f)
		}
	}
	// Another namespace under the same prefix holds none of them.
	if other := listWorkers(t, "-backend", "etcd", "-endpoints", addr, "-prefix", prefix, "-namespace", "other"); len(other) != 0 {
		t.Errorf("namespace other: %+v", other)
	}

	closed := leases[0].Worker()
	if err := leases[0].Close(); err != nil {
		t.Fatal(err)
	}
	rows = listWorkers(t, args...)
	if r, ok := rows[closed]; !ok || r.Held || r.LeaseID != "" {
		t.Errorf("worker %d after Close: %+v, listed %v (want free)", closed, r, ok)
	}
	if got := heldWorkers(rows); len(got) != 2 {
		t.Errorf("held after one Close: %v", got)
	}
}

// TestWorkersListOnUnreachableEtcdIsAnError: a dead endpoint is exit 1
// naming etcd and the endpoint once -timeout passes; -user's password
// never shows.
func TestWorkersListOnUnreachableEtcdIsAnError(t *testing.T) {
	dbtest.SkipShort(t, "etcd")
	dead := deadAddr(t)
	t.Setenv(etcdPasswordEnv, "s3cretEtcd")
	checkUnreachable(t, "etcd at "+dead+":", []string{"s3cretEtcd"}, "-backend", "etcd", "-endpoints", dead, "-user", "app")
	checkUnreachable(t, "etcd at http://"+dead+":", nil, "-backend", "etcd", "-endpoints", "http://"+dead)
}
