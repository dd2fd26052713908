package redislease_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/redislease"
)

// A service that scales up and down leases its worker id from the Redis
// server it already runs. (This example needs a Redis server, so it is
// compiled but not run; the package's tests run the same calls.)
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	src, err := redislease.New(redislease.Config{Client: rdb, Namespace: "orders", TTL: 20 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	// The generator takes the lowest free worker id, renews it every
	// TTL/3 and stops issuing (keygen.ErrLeaseLost) before its key can
	// expire in Redis if it cannot.
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
	if errors.Is(err, redislease.ErrQuarantine) {
		log.Fatal("Redis restarted or lost data moments ago; try again in a few seconds: ", err)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer g.(io.Closer).Close() // releases the worker id

	id, err := g.NextID(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	log.Println(id)
}

// An operator lists the worker ids of a namespace, as `shardkey workers`
// does.
func ExampleList() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	slots, err := redislease.List(context.Background(), redislease.Config{Client: rdb, Namespace: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range slots {
		fmt.Printf("worker %d held=%v owner=%s ttl=%v fence=%d last=%v\n",
			s.Worker, s.Held, s.Owner, s.TTL, s.Fence, s.LastUsed)
	}
}

// A caller that claims a lease itself (not through a generator) reads its
// fencing token and key.
func ExampleLease_Fence() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	src, err := redislease.New(redislease.Config{Client: rdb})
	if err != nil {
		log.Fatal(err)
	}
	l, err := src.Acquire(context.Background(), keygen.WorkerInfo{MaxWorker: 1023})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	lease := l.(*redislease.Lease)
	fmt.Println(lease.Worker(), lease.Fence(), lease.Key())
}

// The zero Config but for its client is a working one: New checks it and
// fills in the defaults without talking to the server.
func ExampleConfig() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}) // not dialled here
	defer rdb.Close()
	src, err := redislease.New(redislease.Config{Client: rdb})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(src.Namespace(), src.TTL())

	_, err = redislease.New(redislease.Config{Client: rdb, TTL: time.Second, RenewInterval: time.Second})
	fmt.Println(err)
	// Output:
	// default 10s
	// redislease: RenewInterval 1s is not shorter than TTL - SafeGuard (900ms), the validity a renewal gives
}
