package main

import (
	"context"
	"time"

	"github.com/shardkey/shardkey/keygen/workerlease/zklease"
)

// zookeeperWorkers lists the worker ids of a Leaf fleet in ZooKeeper
// (package keygen/workerlease/zklease).
var zookeeperWorkers = &workerBackend{
	name:  "zookeeper",
	title: "ZooKeeper",
	flags: []workerBackendFlag{
		{"servers", "", "ZooKeeper `host:port`, comma-separated (required)"},
		{"name", zklease.DefaultName, "Leaf's leaf.name: the ids are the nodes under /snowflake/`NAME`/forever"},
	},
	details: `Meituan Leaf's layout (package keygen/workerlease/zklease): the persistent
sequential nodes /snowflake/{-name}/forever/{ip}:{port}-{sequence}, the sequence
being the worker id, which stays its ip:port's for good (-servers, -name). HELD
says a zklease process holds the node's lock now; Leaf processes take none ("leaf"),
LAST USED is the time a holder last reported to the node`,
	example: "  shardkey workers list -backend zookeeper -servers 127.0.0.1:2181 -name leaf-app\n",
	check: func(f *workersFlags) error {
		if len(splitList(f.flag("servers"))) == 0 {
			return usageErrorf("-backend zookeeper: -servers is required")
		}
		return nil
	},
	addr:    func(f *workersFlags) string { return f.flag("servers") },
	secrets: func(*workersFlags) []string { return nil },
	list:    listZooKeeperWorkers,
}

func listZooKeeperWorkers(ctx context.Context, f *workersFlags) ([]workerRow, error) {
	cfg := zklease.Config{
		Servers: splitList(f.flag("servers")),
		Name:    f.flag("name"),
		// List never writes its own node; an address keeps New from
		// looking for the host's IP, which listing does not need.
		Addr: "127.0.0.1:0",
	}
	if deadline, ok := ctx.Deadline(); ok {
		cfg.ConnectTimeout = max(time.Until(deadline), time.Millisecond)
	}
	workers, err := zklease.List(ctx, cfg)
	if err != nil {
		return nil, err
	}
	dir := "/snowflake/" + cfg.Name + "/forever/"
	rows := make([]workerRow, 0, len(workers))
	for _, w := range workers {
		r := workerRow{Worker: w.ID, Owner: w.Addr, Held: w.Held, LastUsed: w.Timestamp, Key: dir + w.Node,
			Holder: w.Holder, Leaf: w.Leaf, Closed: w.Closed}
		if w.Err != nil {
			r.Err = w.Err.Error()
		}
		rows = append(rows, r)
	}
	return rows, nil
}
