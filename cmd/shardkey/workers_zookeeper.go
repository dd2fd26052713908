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
	details: `keygen/workerlease/zklease, Meituan Leaf's layout: the nodes
/snowflake/{-name}/forever/{ip}:{port}-{sequence}, the sequence being the worker
id, for good that ip:port's (-servers, -name, or -all for every name). HELD is a
zklease process's lock on the node; Leaf processes take none: their nodes show
"leaf", and LAST USED is their last report to the node`,
	example: "  shardkey workers list -backend zookeeper -servers 127.0.0.1:2181 -name leaf-app\n" +
		"  shardkey workers list -backend zookeeper -servers zk1:2181,zk2:2181,zk3:2181 -all -o json\n",
	check: func(f *workersFlags) error {
		if len(splitList(f.flag("servers"))) == 0 {
			return usageErrorf("-backend zookeeper: -servers is required")
		}
		return nil
	},
	all:     true,
	addr:    func(f *workersFlags) string { return f.flag("servers") },
	secrets: func(*workersFlags) []string { return nil },
	list:    listZooKeeperWorkers,
}

func listZooKeeperWorkers(ctx context.Context, f *workersFlags) ([]workerRow, error) {
	cfg := zklease.Config{
		Servers: splitList(f.flag("servers")),
		Name:    f.flag("name"),
	}
	if deadline, ok := ctx.Deadline(); ok {
		cfg.ConnectTimeout = max(time.Until(deadline), time.Millisecond)
	}
	names := []string{cfg.Name}
	if *f.all {
		var err error
		if names, err = zklease.Names(ctx, cfg); err != nil {
			return nil, err
		}
	}
	var rows []workerRow
	for _, name := range names {
		cfg.Name = name
		workers, err := zklease.List(ctx, cfg)
		if err != nil {
			return nil, err
		}
		dir := "/snowflake/" + name + "/forever/"
		for _, w := range workers {
			r := workerRow{Worker: w.ID, Owner: w.Addr, Held: w.Held, LastUsed: w.Timestamp, Key: dir + w.Node,
				Holder: w.Holder, Leaf: w.Leaf, Closed: w.Closed}
			if *f.all {
				r.Namespace = name
			}
			if w.Err != nil {
				r.Err = w.Err.Error()
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}
