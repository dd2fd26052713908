package zklease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
)

// Worker is one node under /snowflake/{Name}/forever, as List reports it.
type Worker struct {
	// ID is the worker id, the node's sequence; for a name not ending in
	// ZooKeeper's 10-digit sequence, the id Leaf reads from it (with Err
	// set), or -1 when Leaf cannot read one.
	ID int64
	// Addr is the ip:port of the node's name.
	Addr string
	// Node is the node's name (ip:port-0000000005).
	Node string
	// Timestamp is the last time reported to the node (zero when its data
	// is not Leaf's endpoint JSON).
	Timestamp time.Time
	// Held says a live zklease process holds the lock of Addr. Leaf
	// processes take no lock: a node reported to within the last few
	// seconds may be held by one (see Timestamp).
	Held bool
	// Holder names that process (host, pid, start), when Held.
	Holder string
	// Closed says zklease's last holder of the node released it cleanly.
	Closed bool
	// Leaf says the node has no zklease record: Leaf made it, or no
	// zklease process has completed a claim of it.
	Leaf bool
	// Err is what makes the node unusable to zklease, nil when it is
	// fine: a *NodeError (ErrUnreadableNode: its name, data or zklease's
	// record of it), or a *SharedIDError (ErrSharedID: other nodes name
	// the same id).
	Err error
}

// List returns the nodes under /snowflake/{cfg.Name}/forever, by worker id,
// through a short session to cfg.Servers; ctx and cfg.ConnectTimeout bound
// it. Only Servers, Name, SessionTimeout, ConnectTimeout and Logger are
// read: the host needs no address of its own.
func List(ctx context.Context, cfg Config) ([]Worker, error) {
	s, err := newSource(cfg, false)
	if err != nil {
		return nil, err
	}
	return s.List(ctx)
}

// Names returns the Leaf names under /snowflake (each a Name List takes),
// sorted; none when /snowflake does not exist. Only Servers,
// SessionTimeout, ConnectTimeout and Logger of cfg are read.
func Names(ctx context.Context, cfg Config) ([]string, error) {
	s, err := newSource(cfg, false)
	if err != nil {
		return nil, err
	}
	sess, err := dial(ctx, s.servers, s.sessionTimeout, s.connectTimeout, s.log(nil))
	if err != nil {
		return nil, err
	}
	defer sess.conn.Close()
	stop := context.AfterFunc(ctx, sess.conn.Close)
	defer stop()
	names, _, err := sess.conn.Children(rootPath)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil, nil
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("zklease: list %s: %w", rootPath, ctx.Err())
	case err != nil:
		return nil, fmt.Errorf("zklease: list %s: %w", rootPath, err)
	}
	slices.Sort(names)
	return names, nil
}

// List returns the nodes under the source's name, as the function List.
func (s *Source) List(ctx context.Context) ([]Worker, error) {
	sess, err := dial(ctx, s.servers, s.sessionTimeout, s.connectTimeout, s.log(nil))
	if err != nil {
		return nil, err
	}
	defer sess.conn.Close()
	stop := context.AfterFunc(ctx, sess.conn.Close)
	defer stop()
	out, err := s.list(sess.conn)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("zklease: list /snowflake/%s: %w", s.name, ctx.Err())
		}
		return nil, fmt.Errorf("zklease: list /snowflake/%s: %w", s.name, err)
	}
	return out, nil
}

func (s *Source) list(conn *zk.Conn) ([]Worker, error) {
	kids, _, err := conn.Children(foreverPath(s.name))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]Worker, 0, len(kids))
	for _, k := range kids {
		node := foreverPath(s.name) + "/" + k
		w := Worker{ID: -1, Node: k}
		addr, id, perr := parseNode(k)
		if perr != nil {
			// Show the id Leaf reads from it, if any: it may be one
			// another node has.
			la, lid, readable := leafID(k)
			w.Addr, w.Err = la, &NodeError{Node: node, Reason: "a name not ending in ZooKeeper's 10-digit sequence (zklease refuses to claim it)"}
			if readable {
				w.ID = lid
			}
			out = append(out, w)
			continue
		}
		w.ID, w.Addr = id, addr
		data, stat, err := conn.Get(node)
		if errors.Is(err, zk.ErrNoNode) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		if ep, derr := decodeEndpoint(data); derr != nil {
			w.Err = &NodeError{Node: node, Reason: derr.Error()}
		} else {
			w.Timestamp = msTime(ep.Timestamp)
		}
		recData, _, err := conn.Get(holderPath(s.name, addr))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
		rec, present, rerr := decodeRecord(recData)
		switch {
		case rerr != nil:
			w.Leaf = true
			if w.Err == nil {
				w.Err = &NodeError{Node: holderPath(s.name, addr), Reason: rerr.Error()}
			}
		case !present || rec.Worker != id:
			w.Leaf = true
		default:
			w.Closed = rec.ClosedVersion == stat.Version
		}
		locks, _, err := conn.Children(holderPath(s.name, addr))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
		if ln := lockNodes(locks); len(ln) > 0 {
			w.Held = true
			if b, _, err := conn.Get(holderPath(s.name, addr) + "/" + ln[0]); err == nil {
				w.Holder = string(b)
			}
		}
		out = append(out, w)
	}
	// Ids that several nodes name (made by hand): each such node says so.
	for i := range out {
		if out[i].ID < 0 || out[i].Err != nil {
			continue
		}
		if others := othersNaming(out[i].ID, out[i].Node, kids); len(others) > 0 {
			out[i].Err = &SharedIDError{Worker: out[i].ID, Node: foreverPath(s.name) + "/" + out[i].Node, Others: others}
		}
	}
	slices.SortStableFunc(out, func(a, b Worker) int {
		switch {
		case a.ID != b.ID:
			return int(a.ID - b.ID)
		case a.Node < b.Node:
			return -1
		case a.Node > b.Node:
			return 1
		}
		return 0
	})
	return out, nil
}
