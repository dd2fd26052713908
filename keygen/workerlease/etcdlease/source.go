package etcdlease

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/shardkey/shardkey/internal/leaseclock"
	"github.com/shardkey/shardkey/keygen"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Defaults and limits of Config.
const (
	// DefaultPrefix is the key prefix every namespace lives under.
	DefaultPrefix = "/shardkey/worker/"
	// DefaultNamespace is the namespace of a Config that names none.
	DefaultNamespace = "default"
	// DefaultTTL is the etcd lease's time to live when Config.TTL is 0.
	DefaultTTL = 10 * time.Second
	// MinTTL is the shortest TTL accepted; etcd itself raises a lease's
	// TTL to its own minimum (2s with the default election timeout), which
	// only makes the server keep the id longer than the holder uses it.
	MinTTL = time.Second
	// MaxNamespaceLen bounds Config.Namespace.
	MaxNamespaceLen = 64
	// MaxInstanceLen bounds Config.Instance.
	MaxInstanceLen = 255
)

// ErrNoFreeWorker is wrapped by Acquire's error when every worker id in
// [0, MaxWorker] of the namespace is held.
var ErrNoFreeWorker = errors.New("etcdlease: no free worker id")

// A RecordError reports a worker id's stored record that cannot be read.
// Acquire refuses the id rather than guess when it was last used.
type RecordError struct {
	Key string // the etcd key of the record
	Err error  // why it cannot be read
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("etcdlease: record %s is unreadable: %v", e.Key, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Config configures a Source. Only Client is required: every other field
// defaults when zero. A struct rather than options: these are a
// deployment's settings, read from its configuration.
type Config struct {
	// Client is the etcd client the Source talks through. The Source
	// neither dials nor closes it: the application builds it once, with
	// the endpoints, TLS and credentials it uses anyway
	// (clientv3.New(clientv3.Config{Endpoints: ...})), and closes it after
	// the generators holding leases are closed.
	Client *clientv3.Client
	// Prefix is the key prefix of every namespace; default
	// DefaultPrefix. A missing trailing "/" is added.
	Prefix string
	// Namespace separates id spaces under the prefix (one per service,
	// say); default "default". At most MaxNamespaceLen bytes, no "/".
	Namespace string
	// Instance names this process in the keys it holds; default host
	// name, process id and a random suffix. Each lease appends its own
	// random token, so instances need not be unique for safety, only for
	// reading. At most MaxInstanceLen bytes.
	Instance string
	// TTL is the etcd lease's time to live, rounded up to whole seconds
	// (etcd counts seconds). Default DefaultTTL, at least MinTTL.
	TTL time.Duration
	// SafeGuard is cut from the end of every validity the holder computes:
	// keys are issued only until the reading taken before a grant or
	// keep-alive was sent, plus TTL, minus SafeGuard. It absorbs
	// clock-rate differences between the generator's clock and the etcd
	// leader's. Default TTL/5; it must be shorter than TTL.
	SafeGuard time.Duration
	// Logger receives claims and releases at info, renewal failures at
	// warn and lost leases at error. When nil the generator's logger
	// (keygen.WorkerInfo.Logger) is used, and when that is nil too nothing
	// is logged.
	Logger *slog.Logger
}

// Source is a keygen.WorkerSource leasing worker ids from etcd. It is safe
// for concurrent use; every Acquire gets a distinct lease.
type Source struct {
	cli       *clientv3.Client
	prefix    string // Prefix + Namespace + "/"
	namespace string
	instance  string
	ttl       time.Duration // whole seconds
	safeGuard time.Duration
	interval  time.Duration // between renewals
	logger    *slog.Logger
}

var _ keygen.WorkerSource = (*Source)(nil)

// New checks cfg and returns a Source. It sends nothing to etcd.
func New(cfg Config) (*Source, error) {
	if cfg.Client == nil {
		return nil, errors.New("etcdlease: Config.Client is nil")
	}
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	if len(ns) > MaxNamespaceLen || strings.Contains(ns, "/") {
		return nil, fmt.Errorf("etcdlease: namespace %q is longer than %d bytes or holds a /", ns, MaxNamespaceLen)
	}
	instance := cfg.Instance
	if instance == "" {
		instance = leaseclock.Instance(200)
	}
	if len(instance) > MaxInstanceLen {
		return nil, fmt.Errorf("etcdlease: instance name is longer than %d bytes", MaxInstanceLen)
	}
	ttl := cfg.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < MinTTL {
		return nil, fmt.Errorf("etcdlease: TTL %v is shorter than %v", ttl, MinTTL)
	}
	ttl = (ttl + time.Second - 1) / time.Second * time.Second
	sg := cfg.SafeGuard
	switch {
	case sg < 0:
		return nil, fmt.Errorf("etcdlease: negative SafeGuard %v", sg)
	case sg == 0:
		sg = ttl / 5
	case sg >= ttl:
		return nil, fmt.Errorf("etcdlease: SafeGuard %v is not shorter than TTL %v", sg, ttl)
	}
	return &Source{
		cli:       cfg.Client,
		prefix:    prefix + ns + "/",
		namespace: ns,
		instance:  instance,
		ttl:       ttl,
		safeGuard: sg,
		// Three renewals fit in a validity: two may fail before it ends.
		interval: (ttl - sg) / 3,
		logger:   cfg.Logger,
	}, nil
}

// Namespace returns the namespace the source leases in.
func (s *Source) Namespace() string { return s.namespace }

// Instance returns the instance name written in held keys.
func (s *Source) Instance() string { return s.instance }

// Keys: <prefix><namespace>/held/<id> exists while the id is held; it is
// attached to the holder's etcd lease and holds its owner token.
// <prefix><namespace>/last/<id> is the id's record (no lease, so it
// outlives its holders).
func (s *Source) heldPrefix() string          { return s.prefix + "held/" }
func (s *Source) lastPrefix() string          { return s.prefix + "last/" }
func (s *Source) heldKey(worker int64) string { return s.heldPrefix() + strconv.FormatInt(worker, 10) }
func (s *Source) lastKey(worker int64) string { return s.lastPrefix() + strconv.FormatInt(worker, 10) }

// workerOf parses the id at the end of key after prefix; only the
// canonical decimal spelling counts (a key this package wrote).
func workerOf(key, prefix string) (int64, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != rest {
		return 0, false
	}
	return n, true
}

// clientClosed reports a client that was closed: its requests would only
// fail, after clientv3's retries (seconds), so Acquire and Close fail at
// once instead.
func (s *Source) clientClosed() error {
	if err := s.cli.Ctx().Err(); err != nil {
		return fmt.Errorf("etcdlease: the etcd client is closed: %w", err)
	}
	return nil
}

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

// wallClock stands in when keygen.WorkerInfo has no clock.
type wallClock struct{}

func (wallClock) Now() time.Time        { return time.Now() }
func (wallClock) Sleep(d time.Duration) { time.Sleep(d) }
