package main

import (
	"context"
	"crypto/tls"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/shardkey/shardkey/keygen/workerlease/etcdlease"
)

// etcdPasswordEnv holds the password of -user: a flag's value would show
// in the process list and the shell's history.
const etcdPasswordEnv = "SHARDKEY_ETCD_PASSWORD"

// etcdWorkers lists the worker ids held by etcd leases (package
// keygen/workerlease/etcdlease).
var etcdWorkers = &workerBackend{
	name:  "etcd",
	title: "etcd",
	flags: []workerBackendFlag{
		{"endpoints", "", "etcd client `URLs` or host:port, comma-separated (required; https:// uses TLS with the system's roots)"},
		{"prefix", "", "key `prefix` of the namespaces (default: the worker-id source's, shown above)"},
		{"user", "", "etcd user `name`; its password is read from " + etcdPasswordEnv},
	},
	namespace: true,
	details: `keygen/workerlease/etcdlease: keys under -prefix (default ` + etcdlease.DefaultPrefix + `)
and -namespace, each held by its holder's etcd lease (-endpoints, -prefix,
-namespace; -user, its password in ` + etcdPasswordEnv + `)`,
	example: "  shardkey workers list -backend etcd -endpoints 127.0.0.1:2379 -namespace orders -o json\n",
	check: func(f *workersFlags) error {
		if len(splitList(f.flag("endpoints"))) == 0 {
			return usageErrorf("-backend etcd: -endpoints is required")
		}
		return nil
	},
	addr: func(f *workersFlags) string { return strings.Join(splitList(f.flag("endpoints")), ",") },
	secrets: func(f *workersFlags) []string {
		if f.flag("user") == "" {
			return nil
		}
		return []string{os.Getenv(etcdPasswordEnv)}
	},
	list: listEtcdWorkers,
}

func listEtcdWorkers(ctx context.Context, f *workersFlags) ([]workerRow, error) {
	cfg := clientv3.Config{
		Endpoints: splitList(f.flag("endpoints")),
		Context:   ctx,
		// The client's own log would print retries as JSON on stderr;
		// the error says what failed.
		Logger: zap.NewNop(),
	}
	if timeout, ok := ctx.Deadline(); ok {
		cfg.DialTimeout = time.Until(timeout)
	}
	for _, e := range cfg.Endpoints {
		if strings.HasPrefix(e, "https://") {
			cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	}
	if u := f.flag("user"); u != "" {
		cfg.Username, cfg.Password = u, os.Getenv(etcdPasswordEnv)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	src, err := etcdlease.New(etcdlease.Config{Client: cli, Prefix: f.flag("prefix"), Namespace: *f.namespace})
	if err != nil {
		return nil, err
	}
	slots, err := src.List(ctx)
	if err != nil {
		return nil, err
	}
	listed := time.Now()
	rows := make([]workerRow, 0, len(slots))
	for _, s := range slots {
		r := workerRow{Worker: s.Worker, Owner: s.Owner, Held: s.Held, LastUsed: s.LastUsed,
			TTL: s.TTL, LeaseID: s.LeaseID, ValidUntil: s.ValidUntil}
		// etcd tells the time a lease has left, in whole seconds: the
		// expiry is the listing's time plus that, to the second.
		if s.Held && s.TTL > 0 {
			r.ExpiresAt = listed.Add(s.TTL).Truncate(time.Second)
		}
		rows = append(rows, r)
	}
	return rows, nil
}
