package coretest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
)

// branches opens transaction branches as sqlhook does and lets a test
// drop their connections, as sqlhook retires them after a failed Commit.
type branches struct {
	t     *testing.T
	mu    sync.Mutex
	conns []mysqlBranchConn
}

type mysqlBranchConn struct {
	conn *sql.Conn
	db   *sql.DB
	id   int64
}

func newBranches(t *testing.T) *branches {
	b := &branches{t: t}
	t.Cleanup(b.drop)
	return b
}

// open opens tx's branch on s (PostgreSQL: a local transaction; MySQL:
// XA START on a connection of its own) and runs stmts in it.
func (bb *branches) open(tx *xa.Tx, s xa.Source, stmts ...string) xa.Branch {
	t := bb.t
	t.Helper()
	ctx := context.Background()
	var b xa.Branch
	if s.Dialect == dialect.Postgres {
		stx, err := s.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stx.Rollback() })
		b = xa.Branch{Source: s.Name,
			Exec: func(ctx context.Context, q string) error { _, err := stx.ExecContext(ctx, q); return err },
			Local: func(commit bool) error {
				if commit {
					return stx.Commit()
				}
				return stx.Rollback()
			}}
	} else {
		conn, err := s.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		bc := mysqlBranchConn{conn: conn, db: s.DB}
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&bc.id); err != nil {
			t.Fatal(err)
		}
		bb.mu.Lock()
		bb.conns = append(bb.conns, bc)
		bb.mu.Unlock()
		b = xa.Branch{Source: s.Name, Exec: func(ctx context.Context, q string) error { _, err := conn.ExecContext(ctx, q); return err }}
		if err := b.Exec(ctx, tx.XAStart(s.Name)); err != nil {
			t.Fatalf("XA START on %s: %v", s.Name, err)
		}
	}
	for _, q := range stmts {
		if err := b.Exec(ctx, q); err != nil {
			t.Fatalf("%s on %s: %v", q, s.Name, err)
		}
	}
	return b
}

// drop discards the MySQL branch connections (never back to the pool)
// and waits until the server has ended their sessions, so that a branch
// they left prepared can be finished from any session.
func (bb *branches) drop() {
	bb.mu.Lock()
	conns := bb.conns
	bb.conns = nil
	bb.mu.Unlock()
	for _, c := range conns {
		_ = c.conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = c.conn.Close()
	}
	for _, c := range conns {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			var n int
			err := c.db.QueryRow("SELECT count(*) FROM information_schema.processlist WHERE id = ?", c.id).Scan(&n)
			if err == nil && n == 0 {
				break
			}
			if time.Now().After(deadline) {
				bb.t.Errorf("MySQL session %d still there 10s after its connection was closed (%v)", c.id, err)
				break
			}
		}
	}
}

// rollbackOurs rolls back, on s's server, every prepared branch whose id
// (as listPrepared spells it) starts with one of prefixes, after the
// branch connections are dropped.
func rollbackOurs(t *testing.T, s xa.Source, prefixes ...string) {
	t.Helper()
	match := func(id string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(id, p) {
				return true
			}
		}
		return false
	}
	if _, err := rollbackPrepared(s, match); err != nil {
		t.Errorf("cleanup of %s: %v", s.Name, err)
	}
}

// gtridPrefix is "sk1:<logtag>:" of gtrid: what every branch id of its
// decision log starts with.
func gtridPrefix(gtrid string) string {
	i := strings.IndexByte(gtrid, ':')
	j := strings.IndexByte(gtrid[i+1:], ':')
	return gtrid[:i+1+j+1]
}
