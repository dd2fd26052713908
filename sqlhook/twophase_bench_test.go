package sqlhook_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/sqlhook"
)

// BenchmarkTwoPhaseCommit prices atomicity across two PostgreSQL data
// sources on loopback: the same two writes (one row on each) as two
// independent local transactions through plain pgx, as one sqlhook
// transaction committed by two-phase commit, and as one sqlhook
// transaction without it (WithMultiSourceTx: not atomic), which
// separates sqlhook's own cost from the protocol's; two_phase_sql_floor
// sends the protocol's statements by hand (what any two-phase commit
// must send: BEGIN and the write on each, PREPARE TRANSACTION on both at
// once, the decision row, COMMIT PREPARED on both at once), which
// separates the engine's cost from the protocol's. Each reports
// roundtrips/op: the server round trips (ReadyForQuery messages) of one
// operation, all connections together, counted beforehand through a
// proxy so that the timed loop runs direct.
func BenchmarkTwoPhaseCommit(b *testing.B) {
	p := tpPostgresPair(b, "bench")
	p.seed(b, map[int64]int64{0: 0, 1: 0})
	update := p.q(`UPDATE t_account SET balance = balance + ? WHERE id = ?`)
	for _, m := range []struct {
		name  string
		setup func(b *testing.B, dsns [2]string) func() error
	}{
		{"two_local_transactions", func(b *testing.B, dsns [2]string) func() error { return tpBenchLocal(b, dsns, update) }},
		{"two_phase", func(b *testing.B, dsns [2]string) func() error {
			return tpBenchSqlhook(p.open(b, dsns), update)
		}},
		{"two_phase_sql_floor", func(b *testing.B, dsns [2]string) func() error { return tpBenchFloor(b, dsns, update) }},
		{"multi_source_not_atomic", func(b *testing.B, dsns [2]string) func() error {
			db, err := sqlhook.Open(p.config(b, dsns), sqlhook.WithMultiSourceTx())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return tpBenchSqlhook(db, update)
		}},
	} {
		rt := -1.0
		b.Run(m.name, func(b *testing.B) {
			if rt < 0 {
				rt = tpCountRoundTrips(b, p, m.setup)
			}
			op := m.setup(b, p.dsn)
			b.ReportAllocs()
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rt, "roundtrips/op")
		})
	}
	if left := append(p.prepared(b, 0), p.prepared(b, 1)...); len(left) > 0 {
		b.Errorf("prepared branches left after the benchmark: %v", left)
	}
}

// tpBenchLocal: one local transaction per data source, through pgx.
func tpBenchLocal(b *testing.B, dsns [2]string, update string) func() error {
	ctx := context.Background()
	var dbs [2]*sql.DB
	for i, dsn := range dsns {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return func() error {
		for i, db := range dbs {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, update, 1, i); err != nil {
				tx.Rollback()
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
		}
		return nil
	}
}

// tpBenchSqlhook: one sqlhook transaction writing to both data sources.
func tpBenchSqlhook(db *sql.DB, update string) func() error {
	ctx := context.Background()
	return func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for i := range 2 {
			if _, err := tx.ExecContext(ctx, update, 1, i); err != nil {
				tx.Rollback()
				return err
			}
		}
		return tx.Commit()
	}
}

// tpBenchFloor runs two-phase commits by hand on two pinned connections,
// logging each decision in a table of ds_0 shaped like the engine's log.
func tpBenchFloor(b *testing.B, dsns [2]string, update string) func() error {
	ctx := context.Background()
	var dbs [2]*sql.DB
	var conns [2]*sql.Conn
	for i, dsn := range dsns {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		c, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		dbs[i], conns[i] = db, c
	}
	logDB := dbs[0]
	if _, err := logDB.Exec(`CREATE TABLE IF NOT EXISTS tp_bench_log (gtrid VARCHAR(64) PRIMARY KEY, outcome CHAR(1) NOT NULL, branches VARCHAR(1000) NOT NULL, created_at TIMESTAMP NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	both := func(stmt func(i int) string) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, c := range conns {
			wg.Go(func() { _, errs[i] = c.ExecContext(ctx, stmt(i)) })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	n := 0
	return func() error {
		n++
		gtrid := fmt.Sprintf("tpbench:%d:%d", time.Now().UnixNano(), n)
		for i, c := range conns {
			if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
				return err
			}
			if _, err := c.ExecContext(ctx, update, 1, i); err != nil {
				return err
			}
		}
		if err := both(func(i int) string { return fmt.Sprintf("PREPARE TRANSACTION '%s:ds_%d'", gtrid, i) }); err != nil {
			return err
		}
		if _, err := logDB.ExecContext(ctx, `INSERT INTO tp_bench_log (gtrid, outcome, branches, created_at) VALUES ($1, 'C', $2, $3)`,
			gtrid, "ds_0,ds_1", time.Now().UTC()); err != nil {
			return err
		}
		return both(func(i int) string { return fmt.Sprintf("COMMIT PREPARED '%s:ds_%d'", gtrid, i) })
	}
}

// tpCountRoundTrips runs a mode's operation over both data sources behind
// counting proxies and returns the round trips one operation makes, once
// its connections are open.
func tpCountRoundTrips(b *testing.B, p tpPair, setup func(*testing.B, [2]string) func() error) float64 {
	var (
		proxies [2]*tpCountingProxy
		dsns    [2]string
	)
	for i, dsn := range p.dsn {
		u, err := url.Parse(dsn)
		if err != nil {
			b.Fatal(err)
		}
		proxies[i] = tpStartCountingProxy(b, u.Host)
		u.Host = proxies[i].ln.Addr().String()
		dsns[i] = u.String()
	}
	op := setup(b, dsns)
	const warm, ops = 3, 20
	for range warm {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	before := proxies[0].ready.Load() + proxies[1].ready.Load()
	for range ops {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	return float64(proxies[0].ready.Load()+proxies[1].ready.Load()-before) / ops
}

// tpCountingProxy forwards PostgreSQL connections and counts the
// ReadyForQuery messages the server sends: one per round trip.
type tpCountingProxy struct {
	ln     net.Listener
	target string
	ready  atomic.Int64
	wg     sync.WaitGroup
}

func tpStartCountingProxy(b *testing.B, target string) *tpCountingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	x := &tpCountingProxy{ln: ln, target: target}
	x.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			x.wg.Go(func() { x.serve(c) })
		}
	})
	// Registered before the setup's cleanups, so it runs after them.
	b.Cleanup(func() { ln.Close(); x.wg.Wait() })
	return x
}

func (x *tpCountingProxy) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", x.target)
	if err != nil {
		return
	}
	defer up.Close()
	x.wg.Go(func() { io.Copy(up, c); up.Close() })
	// Every server message is a type byte and a length that counts itself
	// (no SSL or GSS negotiation with sslmode=disable).
	head := make([]byte, 5)
	for {
		if _, err := io.ReadFull(up, head); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
		if _, err := io.ReadFull(up, body); err != nil {
			return
		}
		if head[0] == 'Z' {
			x.ready.Add(1)
		}
		if _, err := c.Write(append(head[:5:5], body...)); err != nil {
			return
		}
	}
}
