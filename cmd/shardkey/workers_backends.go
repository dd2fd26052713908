package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// workerBackend is a coordination server worker ids can be held in, as
// `workers list -backend NAME` reads it. Each lives in its own file
// (workers_zookeeper.go, workers_etcd.go, workers_redis.go); the lease
// table (-backend sql) is workers.go's.
type workerBackend struct {
	name  string // the -backend value
	title string // how help and errors name it
	flags []workerBackendFlag
	// namespace says the backend reads -namespace (shared with -backend
	// sql: one name for one fleet's id space).
	namespace bool
	// all says the backend can find its id spaces: -all lists them all.
	all     bool
	details string // help lines under the backend's name, indented
	example string // help example lines
	// check reports a usage mistake in the backend's flags (exit 2).
	check func(f *workersFlags) error
	// addr is the address errors name, without any password.
	addr func(f *workersFlags) string
	// secrets are the strings errors must never hold (passwords).
	secrets func(f *workersFlags) []string
	// list reads the worker ids the backend holds, claiming nothing.
	list func(ctx context.Context, f *workersFlags) ([]workerRow, error)
}

// workerBackendFlag is a string flag of a coordination server's. One that
// several backends list (-prefix) is defined once: the first one's usage
// and default stand.
type workerBackendFlag struct {
	name, def, usage string
}

// workerBackends are the coordination servers, in the order help lists
// them.
var workerBackends = []*workerBackend{zookeeperWorkers, etcdWorkers, redisWorkers}

func workerBackendNamed(name string) *workerBackend {
	for _, b := range workerBackends {
		if b.name == name {
			return b
		}
	}
	return nil
}

// workerBackendNames are the -backend values: sql, then the
// coordination servers.
func workerBackendNames() []string {
	names := []string{"sql"}
	for _, b := range workerBackends {
		names = append(names, b.name)
	}
	return names
}

// workerBackendTitle is how messages name a -backend value.
func workerBackendTitle(name string) string {
	if b := workerBackendNamed(name); b != nil {
		return b.title
	}
	return name
}

func workerBackendDetails() string {
	var b strings.Builder
	for _, wb := range workerBackends {
		fmt.Fprintf(&b, "  %-10s %s\n", wb.name, strings.ReplaceAll(strings.TrimSpace(wb.details), "\n", "\n             "))
	}
	return b.String()
}

func workerBackendExamples() string {
	var b strings.Builder
	for _, wb := range workerBackends {
		b.WriteString(wb.example)
	}
	return b.String()
}

// flag is the value of one of the backend's flags.
func (f *workersFlags) flag(name string) string { return *f.server[name] }

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// scrub removes the backend's secrets from err's text: a client library
// may quote a URL or a password in its errors.
func (b *workerBackend) scrub(f *workersFlags, err error) error {
	msg := err.Error()
	for _, s := range b.secrets(f) {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// workerRow is one worker id as `workers list` prints it, from any
// backend.
type workerRow struct {
	// Namespace is the id space the row is of, set only by -all (for
	// ZooKeeper, the Leaf name): a NAMESPACE column leads the table then.
	Namespace string
	Worker    int64
	// Owner is the holder: the lease table's owner token, Leaf's ip:port,
	// the etcd or Redis holder's name; "" when none.
	Owner string
	// Held says the id is taken now. A ZooKeeper (Leaf) node is
	// persistent: its id stays its ip:port's for good.
	Held bool
	// ExpiresAt is when the lease runs out unless renewed; zero when the
	// backend keeps no expiry (ZooKeeper) or the id was released.
	ExpiresAt time.Time
	// LastUsed is the last issued time the holder stored; zero when none.
	LastUsed time.Time
	// Key is the ZooKeeper node or the etcd/Redis key holding the id; ""
	// for the lease table.
	Key string

	// JSON only, zero (and left out) where the backend has no such thing.
	TTL        time.Duration // the lease's time left when listed (etcd, Redis)
	LeaseID    int64         // the holder's etcd lease
	Fence      int64         // the fencing token of the id's last claim (Redis)
	ValidUntil time.Time     // the end of the validity the holder recorded (etcd)
	Holder     string        // the zklease process holding the node's lock (ZooKeeper)
	Closed     bool          // zklease's last holder released the node cleanly (ZooKeeper)
	Err        string        // why the node cannot be read (ZooKeeper; Worker is -1)

	// Leaf says a ZooKeeper node has no zklease record: a Leaf process
	// made it, and Leaf takes no lock, so the text's HELD says "leaf", not
	// false. The id stays its ip:port's either way.
	Leaf bool
}

// workerColumns are the table's optional columns.
type workerColumns struct {
	key       bool // KEY, last: the coordination servers
	namespace bool // NAMESPACE, first: -all
}

// printWorkerRows prints rows as a table or as JSON. The lease table's
// listing (no optional column) is the one it always was.
func printWorkerRows(w io.Writer, form string, rows []workerRow, cols workerColumns) error {
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	if form == "json" {
		type row struct {
			Namespace string `json:"namespace,omitempty"`
			Worker    int64  `json:"worker"`
			Owner     string `json:"owner"`
			Held      bool   `json:"held"`
			ExpiresAt string `json:"expires_at"`
			LastUsed  string `json:"last_used"`
			Key       string `json:"key,omitempty"`
			TTLMs     int64  `json:"ttl_ms,omitempty"`
			// etcdctl prints lease ids in hex: the same spelling here.
			LeaseID    string `json:"lease_id,omitempty"`
			Fence      int64  `json:"fence,omitempty"`
			ValidUntil string `json:"valid_until,omitempty"`
			Holder     string `json:"holder,omitempty"`
			Leaf       bool   `json:"leaf,omitempty"`
			Closed     bool   `json:"closed,omitempty"`
			Err        string `json:"error,omitempty"`
		}
		out := make([]row, 0, len(rows))
		for _, r := range rows {
			o := row{Namespace: r.Namespace, Worker: r.Worker, Owner: r.Owner, Held: r.Held, ExpiresAt: stamp(r.ExpiresAt), LastUsed: stamp(r.LastUsed),
				Key: r.Key, TTLMs: r.TTL.Milliseconds(), Fence: r.Fence, Holder: r.Holder, Leaf: r.Leaf, Closed: r.Closed, Err: r.Err}
			if r.LeaseID != 0 {
				o.LeaseID = strconv.FormatInt(r.LeaseID, 16)
			}
			if !r.ValidUntil.IsZero() {
				o.ValidUntil = stamp(r.ValidUntil)
			}
			out = append(out, o)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "WORKER\tHELD\tOWNER\tEXPIRES\tLAST USED"
	if cols.namespace {
		head = "NAMESPACE\t" + head
	}
	if cols.key {
		head += "\tKEY"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		owner := r.Owner
		if owner == "" {
			owner = "-"
		}
		worker, held := strconv.FormatInt(r.Worker, 10), strconv.FormatBool(r.Held)
		if r.Worker < 0 {
			worker = "?" // a node whose name holds no id; -o json says why
		}
		if r.Leaf && !r.Held {
			held = "leaf"
		}
		if cols.namespace {
			fmt.Fprintf(tw, "%s\t", r.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s", worker, held, owner, stamp(r.ExpiresAt), stamp(r.LastUsed))
		if cols.key {
			key := r.Key
			if key == "" {
				key = "-" // etcdlease reports no key
			}
			fmt.Fprintf(tw, "\t%s", key)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
