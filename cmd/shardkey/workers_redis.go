package main

import (
	"context"
	"net/url"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/shardkey/shardkey/keygen/workerlease/redislease"
)

// redisPasswordEnv holds the Redis password when -addr is host:port (a
// redis:// URL may hold it instead): a flag's value would show in the
// process list and the shell's history.
const redisPasswordEnv = "SHARDKEY_REDIS_PASSWORD"

// redisWorkers lists the worker ids held in Redis (package
// keygen/workerlease/redislease).
var redisWorkers = &workerBackend{
	name:  "redis",
	title: "Redis",
	flags: []workerBackendFlag{
		{"addr", "", "Redis `host:port` or redis://[user:password@]host:port[/db] (rediss:// for TLS) (required; the password is never printed)"},
		{"prefix", "", ""}, // etcd's entry gives the usage
	},
	namespace: true,
	all:       true,
	details: `keygen/workerlease/redislease: keys under -prefix (default ` + redislease.DefaultPrefix + `)
and -namespace, held while they live (-addr, -prefix, -namespace, or -all for
every namespace, found by SCAN; a password in a redis:// URL or ` + redisPasswordEnv + `)`,
	example: "  shardkey workers list -backend redis -addr 127.0.0.1:6379 -namespace orders\n" +
		"  " + redisPasswordEnv + "=... shardkey workers list -backend redis -addr redis://10.0.0.9:6379/2\n",
	check: func(f *workersFlags) error {
		if f.flag("addr") == "" {
			return usageErrorf("-backend redis: -addr is required")
		}
		// The parser's message quotes the URL, password and all: not
		// repeated.
		if _, err := redisOptions(f.flag("addr")); err != nil {
			return usageErrorf("-backend redis: -addr is not host:port or a Redis URL (redis://[user:password@]host:port[/db])")
		}
		return nil
	},
	addr: func(f *workersFlags) string {
		if u, err := url.Parse(f.flag("addr")); err == nil && strings.Contains(f.flag("addr"), "://") {
			return u.Redacted() // the password as xxxxx
		}
		return f.flag("addr")
	},
	secrets: func(f *workersFlags) []string {
		s := []string{os.Getenv(redisPasswordEnv)}
		if u, err := url.Parse(f.flag("addr")); err == nil && u.User != nil {
			pw, _ := u.User.Password()
			s = append(s, f.flag("addr"), pw)
		}
		return s
	},
	list: listRedisWorkers,
}

// go-redis logs dial failures on its own to stderr, through one logger
// for the whole process; the error list returns says the same once.
func init() { redis.SetLogger(quietRedisLog{}) }

type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

// redisOptions reads -addr: a redis:// (rediss://, unix://) URL as
// go-redis parses it, or a bare host:port.
func redisOptions(addr string) (*redis.Options, error) {
	if strings.Contains(addr, "://") {
		return redis.ParseURL(addr)
	}
	return &redis.Options{Addr: addr}, nil
}

func listRedisWorkers(ctx context.Context, f *workersFlags) ([]workerRow, error) {
	opt, err := redisOptions(f.flag("addr"))
	if err != nil {
		return nil, err
	}
	if opt.Password == "" {
		opt.Password = os.Getenv(redisPasswordEnv)
	}
	// The command's -timeout bounds dialing and every reply; one try, so
	// an unreachable server is reported once it has not answered.
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1
	c := redis.NewClient(opt)
	defer c.Close()
	namespaces := []string{*f.namespace}
	if *f.all {
		if namespaces, err = redislease.Namespaces(ctx, c, f.flag("prefix")); err != nil {
			return nil, err
		}
	}
	var rows []workerRow
	for _, ns := range namespaces {
		slots, err := redislease.List(ctx, redislease.Config{Client: c, Prefix: f.flag("prefix"), Namespace: ns})
		if err != nil {
			return nil, err
		}
		for _, s := range slots {
			r := workerRow{Worker: s.Worker, Owner: s.Owner, Held: s.Held, ExpiresAt: s.ExpiresAt,
				LastUsed: s.LastUsed, Key: s.Key, TTL: s.TTL, Fence: s.Fence}
			if *f.all {
				r.Namespace = ns
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}
