package zklease

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// session is one ZooKeeper connection and what zklease learns about its
// session that the client does not expose: the timeout the server granted
// (read from the connect response on the wire) and whether it expired.
type session struct {
	conn    *zk.Conn
	granted atomic.Int64 // smallest session timeout granted, ns; 0 until known
	expired atomic.Bool  // the server expired a session of this connection
	first   atomic.Int64 // the first session id, 0 until known
	// onExpire, once set, is called when the server expires the session.
	onExpire atomic.Pointer[func()]
	ready    chan struct{}
	once     sync.Once
}

// dial opens a connection to servers asking for timeout and waits, up to
// wait or ctx, for its first session. The caller closes it.
func dial(ctx context.Context, servers []string, timeout, wait time.Duration, logger *slog.Logger) (*session, error) {
	s := &session{ready: make(chan struct{})}
	conn, _, err := zk.Connect(servers, timeout,
		zk.WithDialer(s.dialer),
		zk.WithLogger(zkLogger{logger}),
		zk.WithLogInfo(false),
		zk.WithEventCallback(s.event),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	s.conn = conn
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.ready:
		// The session's id is read here, not in the callback, which may
		// run before Connect has returned the connection.
		s.first.Store(conn.SessionID())
		return s, nil
	case <-t.C:
		conn.Close()
		return nil, fmt.Errorf("%w: no session with %v within %v", ErrUnreachable, servers, wait)
	case <-ctx.Done():
		conn.Close()
		return nil, fmt.Errorf("%w: no session with %v: %w", ErrUnreachable, servers, ctx.Err())
	}
}

func (s *session) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		s.once.Do(func() { close(s.ready) })
	case zk.StateExpired:
		s.expired.Store(true)
		if f := s.onExpire.Load(); f != nil {
			(*f)()
		}
	}
}

// alive reports that the connection still runs its first session.
func (s *session) alive() bool {
	return !s.expired.Load() && s.conn.SessionID() == s.first.Load() && s.first.Load() != 0
}

// timeout is the session timeout the server granted, 0 when not seen.
func (s *session) timeout() time.Duration { return time.Duration(s.granted.Load()) }

// dialer wraps each TCP connection to read the server's connect response.
func (s *session) dialer(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &grantConn{Conn: c, s: s}, nil
}

// grantConn watches the first frame the server sends, the connect
// response: length (4 bytes), protocol version (4), timeout (4, ms),
// session id (8). The client keeps the timeout to itself, and the lease's
// validity must follow the server's timeout, not the one asked for.
type grantConn struct {
	net.Conn
	s    *session
	head [20]byte
	n    int
}

func (c *grantConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.n < len(c.head) && n > 0 {
		k := copy(c.head[c.n:], p[:n])
		c.n += k
		if c.n == len(c.head) {
			ms := int32(binary.BigEndian.Uint32(c.head[8:12]))
			sid := int64(binary.BigEndian.Uint64(c.head[12:20]))
			if sid != 0 && ms > 0 {
				g := int64(time.Duration(ms) * time.Millisecond)
				for {
					cur := c.s.granted.Load()
					if (cur != 0 && cur <= g) || c.s.granted.CompareAndSwap(cur, g) {
						break
					}
				}
			}
		}
	}
	return n, err
}

// zkLogger sends the client's messages to slog at debug level.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	if z.l != nil && z.l.Enabled(context.Background(), slog.LevelDebug) {
		z.l.Debug("zklease: zk client: " + fmt.Sprintf(format, args...))
	}
}

// connectionError reports errors that mean ZooKeeper could not be talked
// to, as opposed to answers (a node exists, a version conflict).
func connectionError(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, ErrUnreachable)
}

// ensurePath creates the persistent nodes of path that are missing.
func ensurePath(conn *zk.Conn, path string) error {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		p := path[:i]
		ok, _, err := conn.Exists(p)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// multiErr is the error of a failed Multi: the failing op's (the others
// carry ZooKeeper's runtime-inconsistency code, which the client does not
// name), else the request's.
func multiErr(res []zk.MultiResponse, err error) error {
	var other error
	for _, r := range res {
		switch {
		case r.Error == nil:
		case errors.Is(r.Error, zk.ErrNoNode), errors.Is(r.Error, zk.ErrBadVersion),
			errors.Is(r.Error, zk.ErrNodeExists), errors.Is(r.Error, zk.ErrNotEmpty):
			return r.Error
		case other == nil:
			other = r.Error
		}
	}
	if err != nil {
		return err
	}
	return other
}

// statVersion is the data version op i of a Multi left, or -2 (which no
// node has: a clean close then fails its version check and ends unclean)
// when the response carries none.
func statVersion(res []zk.MultiResponse, i int) int32 {
	if i < len(res) && res[i].Stat != nil {
		return res[i].Stat.Version
	}
	return -2
}
