package zklease_test

import (
	"context"
	"fmt"
	"io"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// A service joining a Leaf fleet: its worker id is the sequence of its
// node under /snowflake/orders/forever, and LEAF_SNOWFLAKE issues keys in
// Leaf's layout with it. It needs a ZooKeeper server, so it has no output
// to check.
func Example() {
	src, err := zklease.New(zklease.Config{
		Servers: []string{"127.0.0.1:2181"},
		Name:    "orders", // Leaf's leaf.name
		Port:    "8080",   // with the host's IP: this process's node, ip:8080-NNNNNNNNNN
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	gen, err := keygen.NewID("LEAF_SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
	if err != nil {
		fmt.Println(err) // ZooKeeper unreachable, the clock behind the node, ...
		return
	}
	defer gen.(io.Closer).Close() // writes the last time used and releases the lock

	id, err := gen.NextID(context.Background())
	if err != nil {
		fmt.Println(err) // keygen.ErrLeaseLost once the session is gone
		return
	}
	p, _ := gen.(keygen.Decomposer).Decompose(id)
	fmt.Println("worker", p.Worker)
}

// List shows the worker ids of a name: which address holds which id, when
// it last reported, and whether a live zklease process holds its lock.
func ExampleList() {
	workers, err := zklease.List(context.Background(), zklease.Config{Servers: []string{"127.0.0.1:2181"}, Name: "orders"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range workers {
		fmt.Println(w.ID, w.Addr, w.Timestamp, w.Held, w.Holder)
	}
}
