package zklease

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// Defaults of Config.
const (
	// DefaultName is the Leaf name (leaf.name) when Config.Name is empty.
	DefaultName = "shardkey"
	// DefaultServer is the ZooKeeper server when Config.Servers is empty.
	DefaultServer = "127.0.0.1:2181"
	// DefaultPort is the port of the node name when Config.Port is empty.
	DefaultPort = "0"
	// DefaultSessionTimeout is the session timeout asked of ZooKeeper.
	DefaultSessionTimeout = 10 * time.Second
	// LeafReportInterval is how often Leaf reports its time to its node,
	// and the default Config.ReportInterval.
	LeafReportInterval = 3 * time.Second
	// DefaultConnectTimeout bounds the wait for a first session (Leaf's
	// Curator connection timeout).
	DefaultConnectTimeout = 10 * time.Second
)

// Sentinel errors; Acquire's and New's errors wrap them (errors.Is).
var (
	// ErrInvalidConfig: a Config value New cannot use.
	ErrInvalidConfig = errors.New("zklease: invalid config")
	// ErrUnreachable: no ZooKeeper session within ConnectTimeout, or the
	// connection broke while claiming (and no usable cache file).
	ErrUnreachable = errors.New("zklease: ZooKeeper unreachable")
	// ErrHeld: another live process holds the lock of this ip:port, and it
	// was not released before Acquire's context ended.
	ErrHeld = errors.New("zklease: ip:port held by another process")
	// ErrClockBehind: the clock reads earlier than the timestamp stored in
	// the node (or the cache file); Leaf refuses to start then too. The
	// error is a *ClockBehindError.
	ErrClockBehind = errors.New("zklease: clock behind the stored timestamp")
	// ErrWorkerOutOfRange: the node's sequence is above the generator's
	// largest worker id. The id is never truncated.
	ErrWorkerOutOfRange = errors.New("zklease: worker id out of range")
	// ErrCacheFile: the cache file is missing, unreadable, has no
	// positive timestamp or validity, or does not belong to this Name and
	// ip:port.
	ErrCacheFile = errors.New("zklease: cache file unusable")
	// ErrUnreadableNode: a node the claim must read is not in the form
	// Leaf and zklease write it: a forever node's data without ip, port or
	// a positive timestamp; a forever node of this ip:port whose name does
	// not end in ZooKeeper's 10-digit sequence; zklease's holder record
	// with a field missing. Such a node says nothing sure about when its
	// id was last used, so the claim is refused rather than read it as an
	// id never used. The error is a *NodeError.
	ErrUnreadableNode = errors.New("zklease: node not in Leaf's or zklease's form")
	// ErrSharedID: another node under forever names the worker id this
	// ip:port would get (a node made by hand with a copied sequence), so
	// two addresses would hold one id. The error is a *SharedIDError.
	ErrSharedID = errors.New("zklease: worker id named by another node")
)

// NodeError is the error for a node zklease cannot read safely
// (ErrUnreadableNode).
type NodeError struct {
	Node   string // the node's path
	Reason string // what is wrong with it
}

// Error names the node and what is wrong.
func (e *NodeError) Error() string {
	return fmt.Sprintf("zklease: %s: %s; refusing the worker id rather than guess when it was last used", e.Node, e.Reason)
}

// Unwrap makes errors.Is(err, ErrUnreadableNode) hold.
func (e *NodeError) Unwrap() error { return ErrUnreadableNode }

// SharedIDError is the error when other nodes under forever name the
// worker id of the claimed node (ErrSharedID).
type SharedIDError struct {
	Worker int64    // the worker id
	Node   string   // the claimed node's path
	Others []string // the names of the other nodes that Leaf reads as that id
}

// Error names the id and the nodes.
func (e *SharedIDError) Error() string {
	return fmt.Sprintf("zklease: worker %d of %s is also the id Leaf reads from %s beside it; refusing it: two addresses would hold one id (delete the node that is not in use)",
		e.Worker, e.Node, strings.Join(e.Others, ", "))
}

// Unwrap makes errors.Is(err, ErrSharedID) hold.
func (e *SharedIDError) Unwrap() error { return ErrSharedID }

// ClockBehindError is Acquire's error when the clock is behind the last
// timestamp recorded for the worker id.
type ClockBehindError struct {
	Node   string    // the node (or cache file) holding the timestamp
	Stored time.Time // the stored timestamp
	Now    time.Time // the clock's reading
}

// Error names the node, both times and the gap.
func (e *ClockBehindError) Error() string {
	return fmt.Sprintf("zklease: clock %s is behind the timestamp %s stored in %s (by %v); refusing the worker id, as Leaf does",
		e.Now.UTC().Format(time.RFC3339Nano), e.Stored.UTC().Format(time.RFC3339Nano), e.Node, e.Stored.Sub(e.Now))
}

// Unwrap makes errors.Is(err, ErrClockBehind) hold.
func (e *ClockBehindError) Unwrap() error { return ErrClockBehind }

// Config configures a Source. Every field has a default; a struct rather
// than options because these are a deployment's settings.
type Config struct {
	// Servers are the ZooKeeper servers (host:port); default
	// 127.0.0.1:2181. Leaf's leaf.snowflake.zk.address, split at commas.
	Servers []string
	// Name is Leaf's leaf.name: nodes live under /snowflake/{Name}/forever.
	// Default "shardkey". No '/'.
	Name string
	// Addr is the node's "ip:port" (Leaf's listen address). When set it
	// replaces IP and Port. A Go process joining a Leaf fleet must not
	// share it with a Leaf process (see the package documentation).
	Addr string
	// IP is the node's ip; default the host's first non-loopback IPv4
	// address, as Leaf picks it. No '-' (Leaf splits node names at '-').
	IP string
	// Port is the node's port (Leaf's leaf.snowflake.port); default "0".
	// Processes on one host need distinct ports: two with the same
	// ip:port share one worker id and its lock, so the second waits for
	// the first (and fails when its context ends).
	Port string
	// SessionTimeout is asked of ZooKeeper; the server may change it and
	// the lease uses the timeout the server granted. A lease stays valid
	// until 3/4 of it past its last successful report. Default 10s.
	SessionTimeout time.Duration
	// ReportInterval is how often the holder writes its time to the node
	// (Leaf's 3s) and renews its validity. Default the smaller of 3s and
	// a third of the lease's validity; at most half of it.
	ReportInterval time.Duration
	// ConnectTimeout bounds the wait for a session in Acquire before
	// ZooKeeper counts as unreachable (then the cache file is used, if
	// any). Default 10s.
	ConnectTimeout time.Duration
	// CacheFile, when set, is Leaf's local fallback: the file records the
	// worker id and the last reported timestamp, and Acquire uses it when
	// ZooKeeper is unreachable. Empty: no file, an unreachable ZooKeeper
	// fails Acquire. LeafCacheFile gives Leaf's own path.
	CacheFile string
	// Logger receives claims and releases at info, report failures at
	// warn and lost leases at error. When nil the generator's logger
	// (keygen.WorkerInfo.Logger) is used; when that is nil too, nothing.
	Logger *slog.Logger
}

// LeafCacheFile is the path Leaf caches its worker id in:
// {tmp}/{name}/leafconf/{port}/workerID.properties. zklease writes Leaf's
// workerID key there and its own keys beside it.
func LeafCacheFile(name, port string) string {
	return filepath.Join(os.TempDir(), name, "leafconf", port, "workerID.properties")
}

// Source is a keygen.WorkerSource taking worker ids from ZooKeeper in
// Meituan Leaf's layout. It is safe for concurrent use and holds one lease
// at a time (its ip:port's): an Acquire while its lease is open fails at
// once with ErrHeld. Each lease has a ZooKeeper session of its own, whose
// life is the lease's.
type Source struct {
	servers        []string
	name           string
	ip, port       string
	sessionTimeout time.Duration
	reportInterval time.Duration // 0: derived from the granted timeout
	connectTimeout time.Duration
	cacheFile      string
	logger         *slog.Logger

	mu      sync.Mutex
	holding bool // a lease of this Source is open
}

var _ keygen.WorkerSource = (*Source)(nil)

// New checks cfg and fills in its defaults. It does not connect.
func New(cfg Config) (*Source, error) { return newSource(cfg, true) }

// newSource is New; without needAddr (listing) an empty IP stays empty
// instead of being resolved from the host's interfaces.
func newSource(cfg Config, needAddr bool) (*Source, error) {
	s := &Source{
		servers:        cfg.Servers,
		name:           cfg.Name,
		ip:             cfg.IP,
		port:           cfg.Port,
		sessionTimeout: cfg.SessionTimeout,
		reportInterval: cfg.ReportInterval,
		connectTimeout: cfg.ConnectTimeout,
		cacheFile:      cfg.CacheFile,
		logger:         cfg.Logger,
	}
	if len(s.servers) == 0 {
		s.servers = []string{DefaultServer}
	}
	for _, srv := range s.servers {
		if strings.TrimSpace(srv) == "" {
			return nil, fmt.Errorf("%w: an empty server in Servers", ErrInvalidConfig)
		}
	}
	if s.name == "" {
		s.name = DefaultName
	}
	if err := checkNodeName("Name", s.name); err != nil {
		return nil, err
	}
	if cfg.Addr != "" {
		i := strings.LastIndexByte(cfg.Addr, ':')
		if i <= 0 || i == len(cfg.Addr)-1 {
			return nil, fmt.Errorf("%w: Addr %q is not ip:port", ErrInvalidConfig, cfg.Addr)
		}
		s.ip, s.port = cfg.Addr[:i], cfg.Addr[i+1:]
	}
	if s.ip == "" && !needAddr {
		s.ip = "0.0.0.0" // never written: listing uses no address
	}
	if s.ip == "" {
		ip, err := hostIP()
		if err != nil {
			return nil, err
		}
		s.ip = ip
	}
	if s.port == "" {
		s.port = DefaultPort
	}
	for field, v := range map[string]string{"IP": s.ip, "Port": s.port} {
		if err := checkNodeName(field, v); err != nil {
			return nil, err
		}
		if strings.ContainsRune(v, '-') {
			// Leaf reads a node name as ip:port "-" sequence by splitting
			// at every '-': one more would break every Leaf process of the
			// name, not only this one.
			return nil, fmt.Errorf("%w: %s %q contains '-', which Leaf's node names cannot hold", ErrInvalidConfig, field, v)
		}
	}
	if s.sessionTimeout == 0 {
		s.sessionTimeout = DefaultSessionTimeout
	}
	if s.sessionTimeout < 100*time.Millisecond {
		return nil, fmt.Errorf("%w: SessionTimeout %v is shorter than 100ms", ErrInvalidConfig, s.sessionTimeout)
	}
	if s.reportInterval < 0 {
		return nil, fmt.Errorf("%w: negative ReportInterval %v", ErrInvalidConfig, s.reportInterval)
	}
	if s.reportInterval > validity(s.sessionTimeout)/2 {
		return nil, fmt.Errorf("%w: ReportInterval %v is longer than half the lease's validity %v (3/4 of SessionTimeout %v)",
			ErrInvalidConfig, s.reportInterval, validity(s.sessionTimeout), s.sessionTimeout)
	}
	if s.connectTimeout == 0 {
		s.connectTimeout = DefaultConnectTimeout
	}
	if s.connectTimeout < 0 {
		return nil, fmt.Errorf("%w: negative ConnectTimeout %v", ErrInvalidConfig, s.connectTimeout)
	}
	return s, nil
}

// checkNodeName refuses what cannot be one ZooKeeper path element.
func checkNodeName(field, v string) error {
	if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/\x00") {
		return fmt.Errorf("%w: %s %q cannot be a ZooKeeper node name", ErrInvalidConfig, field, v)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: %s %q has a control character", ErrInvalidConfig, field, v)
		}
	}
	return nil
}

// hostIP is the first up, non-loopback IPv4 address of the host, as Leaf's
// Utils.getIp picks one.
func hostIP() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", fmt.Errorf("%w: no IP given and the interfaces cannot be read: %v", ErrInvalidConfig, err)
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				return n.IP.To4().String(), nil
			}
		}
	}
	return "", fmt.Errorf("%w: no IP given and the host has no non-loopback IPv4 address", ErrInvalidConfig)
}

// Name returns the Leaf name the source claims under.
func (s *Source) Name() string { return s.name }

// Addr returns the ip:port of the source's node.
func (s *Source) Addr() string { return s.ip + ":" + s.port }

// validity is how long after a successful report sent at time t the lease
// stays valid: 3/4 of the session timeout the server granted. The server
// expires the session no earlier than the full timeout after it received
// the report (which it did after t); the quarter absorbs clock-rate
// differences and the generator's last reading. It is cut down to whole
// milliseconds, the unit it is stored in for the next holder, so that what
// the holder keeps and what the next holder adds are the same.
func validity(sessionTimeout time.Duration) time.Duration {
	return (sessionTimeout * 3 / 4).Truncate(time.Millisecond)
}

// interval is the report interval for a lease of validity v.
func (s *Source) interval(v time.Duration) time.Duration {
	if s.reportInterval > 0 && s.reportInterval <= v/2 {
		return s.reportInterval
	}
	return min(LeafReportInterval, v/3)
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
