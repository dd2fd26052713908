package redislease

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardkey/shardkey/keygen"

	"github.com/shardkey/shardkey/internal/leaseclock"
)

// Defaults and limits of Config.
const (
	// DefaultPrefix is the start of every key name.
	DefaultPrefix = "shardkey:worker"
	// DefaultNamespace is the id space used when Config.Namespace is empty.
	DefaultNamespace = "default"
	// DefaultTTL is how long a claim or renewal keeps a worker id.
	DefaultTTL = 10 * time.Second
	// MinTTL is the shortest TTL accepted.
	MinTTL = 100 * time.Millisecond
	// MaxNameLen bounds Prefix, Namespace and Instance, in bytes.
	MaxNameLen = 200
)

// ErrNoFreeWorker is wrapped by Acquire's error when every worker id of the
// namespace is held.
var ErrNoFreeWorker = errors.New("redislease: no free worker id")

// ErrEvictingServer is wrapped by Acquire's error when the server's
// maxmemory-policy is an allkeys-* policy: such a server may evict the
// records that prove a worker id is held, so no id is claimed on it.
var ErrEvictingServer = errors.New("redislease: the Redis server evicts keys without expiry (maxmemory-policy allkeys-*)")

// ErrQuarantine is wrapped by Acquire's error (a *QuarantineError) when the
// namespace's state may be incomplete (the server restarted, or its data
// came from a snapshot or a failover) and the context ends before the
// quarantine does.
var ErrQuarantine = errors.New("redislease: namespace in quarantine after a possible loss of Redis data")

// QuarantineError says how long claims in a namespace wait: until every
// lease granted before the server's state was lost has run out.
type QuarantineError struct {
	Namespace string
	// Wait is how much longer the quarantine lasts, by the server's clock,
	// when the claim was tried.
	Wait time.Duration
}

func (e *QuarantineError) Error() string {
	return fmt.Sprintf("redislease: namespace %q: claims wait %v more for leases from before a possible loss of Redis data to run out",
		e.Namespace, e.Wait)
}

// Unwrap makes errors.Is(err, ErrQuarantine) true.
func (e *QuarantineError) Unwrap() error { return ErrQuarantine }

// Config configures a Source. Only Client is required; every other field
// defaults when zero.
type Config struct {
	// Client talks to the Redis server holding the leases; the Source does
	// not close it. A *redis.Client of github.com/redis/go-redis/v9 to a
	// single server is what the package promises safety for (see the
	// package documentation for Cluster, Sentinel and replicas). Short
	// ReadTimeout/WriteTimeout, or ContextTimeoutEnabled, let renewals
	// notice a silent network faster; safety never depends on them.
	Client redis.Scripter
	// Prefix starts every key name; default "shardkey:worker". It must not
	// hold '{' or '}': the package puts Prefix and Namespace in a hash tag.
	Prefix string
	// Namespace separates id spaces sharing a server (one per service,
	// say); default "default". No '{', '}' or ':'.
	Namespace string
	// Instance names this process in the holder keys; default host name,
	// process id and a random suffix. Each lease appends its own random
	// token, so instances need not be unique for safety, only for reading.
	Instance string
	// TTL is how long a claim or renewal keeps the worker id in Redis
	// (the key's PX). Default 10s, at least MinTTL; rounded up to a whole
	// millisecond. Every process of a namespace should use the same TTL:
	// after a loss of Redis data a claimant waits its own TTL for the
	// older leases to run out.
	TTL time.Duration
	// RenewInterval is how often a lease renews; default TTL/3. It must be
	// shorter than TTL - SafeGuard, the validity a renewal gives.
	RenewInterval time.Duration
	// SafeGuard is taken off every validity: a lease may issue keys until
	// the generator's clock reading taken before the claim or renewal was
	// sent, plus TTL, minus SafeGuard. It absorbs clock-rate differences
	// between the generator's host and the server. Default TTL/10, at
	// least a millisecond, less than TTL/2.
	SafeGuard time.Duration
	// Logger receives claims and releases at info, renewal failures at
	// warn and lost leases at error. When nil the generator's logger
	// (keygen.WorkerInfo.Logger) is used, and when that is nil too nothing
	// is logged. Nothing logged holds a password: the package never sees
	// the client's options.
	Logger *slog.Logger
}

// Source is a keygen.WorkerSource leasing worker ids from Redis. It is safe
// for concurrent use; every Acquire gets a distinct lease.
type Source struct {
	client    redis.Scripter
	prefix    string
	namespace string
	instance  string
	base      string // {prefix:namespace}
	ttl       time.Duration
	renew     time.Duration
	safeGuard time.Duration
	logger    *slog.Logger
}

var _ keygen.WorkerSource = (*Source)(nil)

// New checks cfg and returns a Source. It does not talk to the server.
func New(cfg Config) (*Source, error) {
	if cfg.Client == nil {
		return nil, errors.New("redislease: Config.Client is nil")
	}
	s := &Source{
		client:    cfg.Client,
		prefix:    cfg.Prefix,
		namespace: cfg.Namespace,
		instance:  cfg.Instance,
		ttl:       cfg.TTL,
		renew:     cfg.RenewInterval,
		safeGuard: cfg.SafeGuard,
		logger:    cfg.Logger,
	}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	if s.namespace == "" {
		s.namespace = DefaultNamespace
	}
	if s.instance == "" {
		s.instance = leaseclock.Instance(150)
	}
	for _, f := range []struct{ name, v string }{{"Prefix", s.prefix}, {"Namespace", s.namespace}, {"Instance", s.instance}} {
		if len(f.v) > MaxNameLen {
			return nil, fmt.Errorf("redislease: Config.%s is longer than %d bytes", f.name, MaxNameLen)
		}
		if f.name != "Instance" && strings.ContainsAny(f.v, "{}") {
			return nil, fmt.Errorf("redislease: Config.%s %q holds '{' or '}' (it goes in a hash tag)", f.name, f.v)
		}
		if f.name == "Namespace" && strings.Contains(f.v, ":") {
			// The key's hash tag is {Prefix:Namespace}: a namespace
			// without ':' is what follows its last ':'.
			return nil, fmt.Errorf("redislease: Config.Namespace %q holds ':'", f.v)
		}
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.ttl < MinTTL {
		return nil, fmt.Errorf("redislease: TTL %v is shorter than %v", s.ttl, MinTTL)
	}
	// PX counts whole milliseconds: round up, so Redis never frees an id
	// earlier than the holder believes it valid.
	s.ttl = (s.ttl + time.Millisecond - 1) / time.Millisecond * time.Millisecond
	switch {
	case s.safeGuard < 0:
		return nil, fmt.Errorf("redislease: negative SafeGuard %v", s.safeGuard)
	case s.safeGuard == 0:
		s.safeGuard = max(s.ttl/10, time.Millisecond)
	case s.safeGuard < time.Millisecond:
		s.safeGuard = time.Millisecond
	}
	if s.safeGuard >= s.ttl/2 {
		return nil, fmt.Errorf("redislease: SafeGuard %v is not less than half the TTL %v", s.safeGuard, s.ttl)
	}
	switch {
	case s.renew < 0:
		return nil, fmt.Errorf("redislease: negative RenewInterval %v", s.renew)
	case s.renew == 0:
		s.renew = s.ttl / 3
	}
	if s.renew >= s.ttl-s.safeGuard {
		return nil, fmt.Errorf("redislease: RenewInterval %v is not shorter than TTL - SafeGuard (%v), the validity a renewal gives",
			s.renew, s.ttl-s.safeGuard)
	}
	s.base = "{" + s.prefix + ":" + s.namespace + "}"
	return s, nil
}

// Namespace returns the namespace the source leases in.
func (s *Source) Namespace() string { return s.namespace }

// Instance returns the instance name that starts this source's owner
// tokens.
func (s *Source) Instance() string { return s.instance }

// TTL returns the lease duration in effect (Config.TTL after defaults and
// rounding).
func (s *Source) TTL() time.Duration { return s.ttl }

// key names of the namespace; see scripts.go.
func (s *Source) nsKey() string              { return s.base + ":ns" }
func (s *Source) fenceKey() string           { return s.base + ":fence" }
func (s *Source) idsKey() string             { return s.base + ":ids" }
func (s *Source) idKey(w int64) string       { return idKey(s.base, w) }
func (s *Source) recKey(w int64) string      { return s.base + ":rec:" + strconv.FormatInt(w, 10) }
func idKey(base string, w int64) string      { return base + ":id:" + strconv.FormatInt(w, 10) }
func baseOf(prefix, namespace string) string { return "{" + prefix + ":" + namespace + "}" }

// quarantine is how long after a possible loss of the namespace's state
// claims wait: the longest a lease granted before it can still be valid,
// plus SafeGuard for clock-rate differences.
func (s *Source) quarantine() time.Duration { return s.ttl + s.safeGuard }

func (s *Source) log(fallback *slog.Logger) *slog.Logger {
	switch {
	case s.logger != nil:
		return s.logger
	case fallback != nil:
		return fallback
	}
	return discard
}

var discard = slog.New(slog.DiscardHandler)

// randomHex returns 2n random hex digits (owner tokens' suffixes).
var randomHex = leaseclock.RandomHex

// msTime converts Unix milliseconds to a time; 0 or less is the zero time.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
