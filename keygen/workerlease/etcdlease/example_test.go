package etcdlease_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/workerlease/etcdlease"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A SNOWFLAKE generator whose worker id is leased from etcd; closing the
// generator releases the id. (It needs an etcd server: no output is
// checked.)
func Example() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close() // after the generator: its Close releases the id through cli

	src, err := etcdlease.New(etcdlease.Config{Client: cli, Namespace: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{}, keygen.WithWorkerSource(src))
	if err != nil {
		log.Fatal(err) // wraps etcdlease.ErrNoFreeWorker when every id is held
	}
	defer gen.(io.Closer).Close()

	id, err := gen.NextID(context.Background())
	if err != nil {
		log.Fatal(err) // keygen.ErrLeaseLost while etcd cannot renew the lease
	}
	fmt.Println(id > 0)
}

// List shows the ids of a namespace, as `shardkey workers` does.
func ExampleSource_List() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	src, err := etcdlease.New(etcdlease.Config{Client: cli, Namespace: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	slots, err := src.List(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range slots {
		fmt.Println(s.Worker, s.Held, s.Owner, s.TTL, s.LastUsed.Format(time.RFC3339Nano))
	}
}
