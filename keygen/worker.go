package keygen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ErrLeaseLost: the generator's worker-id lease may have expired (its
// renewal failed for longer than the lease lasts), so another process may
// hold the worker id; the generator issues no key until the lease is
// valid again.
var ErrLeaseLost = errors.New("keygen: worker-id lease lost")

// A WorkerSource hands a generator its worker id. Static ids, an
// environment variable and a StatefulSet ordinal are sources here; a lease
// in a database is in package keygen/workerlease.
type WorkerSource interface {
	// Acquire claims a worker id in [0, info.MaxWorker]. The generator
	// holds the Lease until it is closed.
	Acquire(ctx context.Context, info WorkerInfo) (Lease, error)
}

// WorkerInfo describes the generator asking for a worker id.
type WorkerInfo struct {
	Type      string // the generator's type, e.g. SNOWFLAKE
	MaxWorker int64  // the largest worker id its layout holds
	Clock     Clock  // the generator's clock: lease validity is measured on it
	Logger    *slog.Logger
}

// A Lease is a claimed worker id.
type Lease interface {
	// Worker is the claimed id.
	Worker() int64
	// LastUsed is the latest time a key may have been issued with this
	// worker id before the lease (zero when unknown or never): the
	// generator issues nothing at or before it, waiting up to its clock
	// tolerance and refusing to start beyond it.
	LastUsed() time.Time
	// ValidUntil is the Clock time, in Unix nanoseconds, up to which keys
	// may be issued; math.MaxInt64 for a lease that never expires. The
	// generator reads it on every key, so it must be cheap (an atomic).
	ValidUntil() int64
	// Track gives the lease the generator's latest issued time, which a
	// renewing lease stores with the worker id.
	Track(last func() time.Time)
	// Close releases the worker id.
	Close() error
}

// LeaseStats is implemented by leases that renew.
type LeaseStats interface {
	Renewals() uint64 // successful renewals
	Failures() uint64 // failed renewals
}

// StaticWorker is a worker id fixed by configuration (the worker-id prop).
type StaticWorker int64

// Acquire returns the id, checked against the layout.
func (s StaticWorker) Acquire(_ context.Context, info WorkerInfo) (Lease, error) {
	if int64(s) < 0 || int64(s) > info.MaxWorker {
		return nil, fmt.Errorf("keygen: worker id %d is outside 0..%d", int64(s), info.MaxWorker)
	}
	return staticLease(s), nil
}

// EnvWorker reads the worker id from an environment variable when the
// generator is built. An unset or malformed variable is an error, never 0.
type EnvWorker string

// Acquire parses the variable.
func (e EnvWorker) Acquire(ctx context.Context, info WorkerInfo) (Lease, error) {
	v, ok := os.LookupEnv(string(e))
	if !ok {
		return nil, fmt.Errorf("keygen: worker id variable %s is not set", string(e))
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("keygen: worker id variable %s=%q is not an integer", string(e), v)
	}
	return StaticWorker(n).Acquire(ctx, info)
}

// HostnameOrdinal takes the worker id from the trailing -N of the host
// name, a Kubernetes StatefulSet pod's ordinal (web-3 is worker 3), plus
// Offset (for several StatefulSets sharing one id space). A host name
// without an ordinal is an error.
type HostnameOrdinal struct {
	Offset   int64
	Hostname func() (string, error) // os.Hostname when nil
}

// Acquire parses the host name.
func (h HostnameOrdinal) Acquire(ctx context.Context, info WorkerInfo) (Lease, error) {
	hostname := h.Hostname
	if hostname == nil {
		hostname = os.Hostname
	}
	name, err := hostname()
	if err != nil {
		return nil, fmt.Errorf("keygen: host name: %w", err)
	}
	i := strings.LastIndexByte(name, '-')
	n, perr := strconv.ParseInt(name[i+1:], 10, 64)
	if i < 0 || perr != nil || n < 0 {
		return nil, fmt.Errorf("keygen: host name %q has no StatefulSet ordinal (name-N)", name)
	}
	return StaticWorker(n+h.Offset).Acquire(ctx, info)
}

// staticLease never expires and has no history.
type staticLease int64

func (s staticLease) Worker() int64        { return int64(s) }
func (staticLease) LastUsed() time.Time    { return time.Time{} }
func (staticLease) ValidUntil() int64      { return math.MaxInt64 }
func (staticLease) Track(func() time.Time) {}
func (staticLease) Close() error           { return nil }

// WithWorkerSource gives Snowflake-family generators (SNOWFLAKE,
// SNOWFLAKE_JS, UID, LEAF_SNOWFLAKE) their worker id from src instead of the worker-id
// prop, which must then be absent or "auto". A generator built with a
// source that leases (workerlease) must be closed (io.Closer) to release
// its worker id.
func WithWorkerSource(src WorkerSource) Option { return func(o *Options) { o.WorkerSource = src } }

// acquireTimeout bounds a WorkerSource's Acquire when a generator is built.
const acquireTimeout = 30 * time.Second

// workerSource resolves where a generator's worker id comes from: the
// worker-id prop (a number: nil source; "env:NAME": EnvWorker; "hostname":
// HostnameOrdinal; "auto": the WithWorkerSource option), or the option
// alone. It returns props without a non-numeric worker-id.
func workerSource(typ string, props Props, o Options) (Props, WorkerSource, error) {
	var keys []string
	for k := range props {
		if CanonicalPropKey(k) == "worker-id" {
			keys = append(keys, k)
		}
	}
	if len(keys) > 1 {
		// Report a spelling other than the canonical one, whatever the
		// map's order, as readProps does.
		slices.Sort(keys)
		dup := keys[0]
		if dup == "worker-id" {
			dup = keys[1]
		}
		return nil, nil, &PropError{Type: typ, Key: dup, Value: props[dup], Reason: "given twice", Allowed: "one spelling of worker-id"}
	}
	key, val := "", ""
	if len(keys) == 1 {
		key, val = keys[0], strings.TrimSpace(props[keys[0]])
	}
	var src WorkerSource
	switch {
	case key == "":
		src = o.WorkerSource
	case strings.EqualFold(val, "auto"):
		if o.WorkerSource == nil {
			return nil, nil, &PropError{Type: typ, Key: key, Value: val, Reason: "auto needs a worker source",
				Allowed: "a number, env:NAME, hostname, or auto with keygen.WithWorkerSource (e.g. a workerlease.Source)"}
		}
		src = o.WorkerSource
	case strings.HasPrefix(val, "env:"):
		src = EnvWorker(strings.TrimPrefix(val, "env:"))
	case strings.EqualFold(val, "hostname"):
		src = HostnameOrdinal{}
	default:
		if o.WorkerSource != nil {
			return nil, nil, &PropError{Type: typ, Key: key, Value: val, Reason: "a fixed worker id and a worker source",
				Allowed: "absent or auto when keygen.WithWorkerSource is given"}
		}
		return props, nil, nil
	}
	if key != "" {
		rest := make(Props, len(props))
		for k, v := range props {
			if k != key {
				rest[k] = v
			}
		}
		props = rest
	}
	return props, src, nil
}

// acquireLease claims a worker id from src for a generator of typ whose
// layout holds worker ids up to maxWorker.
func acquireLease(src WorkerSource, typ string, maxWorker int64, o Options) (Lease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), acquireTimeout)
	defer cancel()
	lease, err := src.Acquire(ctx, WorkerInfo{Type: typ, MaxWorker: maxWorker, Clock: o.Clock, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("keygen: %s worker id: %w", typ, err)
	}
	if w := lease.Worker(); w < 0 || w > maxWorker {
		lease.Close()
		return nil, fmt.Errorf("keygen: %s worker id %d from the source is outside 0..%d", typ, w, maxWorker)
	}
	return &closingLease{Lease: lease}, nil
}

// closingLease reads as expired once closed. Generators check ValidUntil
// on every key, so after their Close they issue none, even on a lease that
// never expires (a state file's, a disposable id): by then another process
// may hold the id, and a state file has recorded the last use it saw.
type closingLease struct {
	Lease
	closed atomic.Bool
}

func (l *closingLease) ValidUntil() int64 {
	if l.closed.Load() {
		return math.MinInt64
	}
	return l.Lease.ValidUntil()
}

func (l *closingLease) Close() error {
	l.closed.Store(true)
	return l.Lease.Close()
}

// Renewals and Failures are the source lease's LeaseStats, 0 without them.
func (l *closingLease) Renewals() uint64 {
	if s, ok := l.Lease.(LeaseStats); ok {
		return s.Renewals()
	}
	return 0
}

func (l *closingLease) Failures() uint64 {
	if s, ok := l.Lease.(LeaseStats); ok {
		return s.Failures()
	}
	return 0
}

// Stats counts what a generator did. Generators sharing state (same clock,
// layout and worker in one process) share the key and clock counters.
type Stats struct {
	Issued         uint64 // keys issued
	ClockWaits     uint64 // waits for a clock that stepped back within tolerance
	ClockBackSteps uint64 // backward steps beyond tolerance (clock-back flag bumps and refusals)
	SequenceWaits  uint64 // waits for the next tick after a tick's sequence ran out
	LeaseRenewals  uint64 // successful worker-id lease renewals
	LeaseFailures  uint64 // failed renewals
	LeaseRefusals  uint64 // keys refused with ErrLeaseLost

	// LeaseValidUntil is the worker-id lease's Lease.ValidUntil: the time
	// on the generator's Clock, in Unix nanoseconds, up to which keys may
	// be issued. math.MaxInt64 for a lease that never expires (a worker
	// source without renewal), math.MinInt64 once the generator is closed,
	// 0 without a lease (a fixed worker-id prop, SEGMENT). A collector
	// subtracts its clock's now to report the time left; the generator
	// itself reads the lease on every key and needs no help.
	LeaseValidUntil int64
}

// leaseStats fills s's lease fields from a generator's lease, nil for a
// generator without one. Stats is not on the hot path: the type assertion
// and the atomic reads cost a collector, not NextID.
func leaseStats(lease Lease, s *Stats) {
	if lease == nil {
		return
	}
	s.LeaseValidUntil = lease.ValidUntil()
	if ls, ok := lease.(LeaseStats); ok {
		s.LeaseRenewals, s.LeaseFailures = ls.Renewals(), ls.Failures()
	}
}

// StatsReporter is implemented by the Snowflake-family generators and
// SEGMENT. Stats reads counters (atomics, or a short lock) and never
// blocks on I/O, so a metrics collector may call it on every collection.
type StatsReporter interface {
	Stats() Stats
}
