package dbtest

import (
	"net"
	"testing"
	"time"
)

// Default addresses of the coordination servers the worker-id sources
// use; SHARDKEY_ZK_ADDR, SHARDKEY_ETCD_ADDR and SHARDKEY_REDIS_ADDR
// override them.
const (
	DefaultZooKeeperAddr = "127.0.0.1:2181"
	DefaultEtcdAddr      = "127.0.0.1:2379"
	DefaultRedisAddr     = "127.0.0.1:6379"
)

// ZooKeeper returns the ZooKeeper server's host:port, skipping t (failing
// it with SHARDKEY_REQUIRE_DB=1) when nothing answers there.
func ZooKeeper(t testing.TB) string {
	t.Helper()
	return server(t, "ZooKeeper", env("SHARDKEY_ZK_ADDR", DefaultZooKeeperAddr))
}

// Etcd returns the etcd server's host:port (its client URL without the
// scheme), as ZooKeeper does.
func Etcd(t testing.TB) string {
	t.Helper()
	return server(t, "etcd", env("SHARDKEY_ETCD_ADDR", DefaultEtcdAddr))
}

// Redis returns the Redis server's host:port, as ZooKeeper does.
func Redis(t testing.TB) string {
	t.Helper()
	return server(t, "Redis", env("SHARDKEY_REDIS_ADDR", DefaultRedisAddr))
}

// server checks that addr accepts TCP connections. Under -short it skips t.
func server(t testing.TB, what, addr string) string {
	t.Helper()
	SkipShort(t, what)
	var err error
	for i := 0; i < 3; i++ {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(200 * time.Millisecond)
	}
	unavailable(t, what+" at "+addr, err)
	return ""
}
