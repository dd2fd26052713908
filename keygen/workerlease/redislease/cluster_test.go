package redislease

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardkey/shardkey/keygen"
)

// TestClaimsWorkOnRedisCluster: on a three-primary Redis Cluster (private
// servers, no replicas) the scripts run in the namespace's slot (its keys
// share one hash tag): claims through a ClusterClient get distinct ids,
// renew and release; namespaces land on different primaries.
func TestClaimsWorkOnRedisCluster(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		if os.Getenv("SHARDKEY_REQUIRE_DB") == "1" {
			t.Fatalf("redis-cli is required (SHARDKEY_REQUIRE_DB=1): %v", err)
		}
		t.Skipf("redis-cli not found: %v", err)
	}
	var addrs []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if port > 55535 { // the cluster bus listens on port+10000
			t.Skipf("port %d leaves no room for the cluster bus", port)
		}
		r := &redisServer{t: t, port: port, dir: t.TempDir(), args: []string{"redis-server", "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes-" + strconv.Itoa(port) + ".conf"}}
		if p, err := exec.LookPath("redis-server"); err == nil {
			r.args[0] = p
		} else {
			t.Skipf("redis-server not found: %v", err)
		}
		r.start()
		t.Cleanup(r.kill)
		addrs = append(addrs, r.addr())
	}
	out, err := exec.Command(cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: 3})
	defer cc.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := cc.ClusterInfo(context.Background()).Result()
		if err == nil && len(info) > 0 && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ok: %v %s", err, info)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, ns := range []string{"a", "b", "c", "d"} {
		s := newSource(t, cc, Config{Namespace: ns, TTL: 300 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var leases []*Lease
		for range 3 {
			l, err := s.acquire(ctx, keygen.WorkerInfo{MaxWorker: 2})
			if err != nil {
				t.Fatalf("namespace %s: %v", ns, err)
			}
			leases = append(leases, l)
		}
		if _, err := s.acquire(ctx, keygen.WorkerInfo{MaxWorker: 2}); !errors.Is(err, ErrNoFreeWorker) {
			t.Fatalf("namespace %s, fourth claim of 3 ids: %v", ns, err)
		}
		waitFor(t, 3*time.Second, "renewals", func() bool { return leases[2].Renewals() > 1 })
		seen := map[int64]bool{}
		for _, l := range leases {
			if seen[l.Worker()] || l.Lost() {
				t.Fatalf("namespace %s: worker %d twice or lost", ns, l.Worker())
			}
			seen[l.Worker()] = true
			if err := l.Close(); err != nil {
				t.Fatalf("namespace %s: Close: %v", ns, err)
			}
		}
		slot, err := cc.ClusterKeySlot(context.Background(), s.idsKey()).Result()
		t.Logf("namespace %s: slot %d %v", ns, slot, err)
	}
}
