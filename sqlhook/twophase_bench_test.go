package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
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
// separates the engine's cost from the protocol's.
func BenchmarkTwoPhaseCommit(b *testing.B) {
	p := tpPostgresPair(b, "bench")
	p.seed(b, map[int64]int64{0: 0, 1: 0})
	ctx := context.Background()
	update := p.q(`UPDATE t_account SET balance = balance + ? WHERE id = ?`)

	b.Run("two_local_transactions", func(b *testing.B) {
		dbs := [2]*sql.DB{p.direct(b, 0), p.direct(b, 1)}
		b.ReportAllocs()
		for b.Loop() {
			for i, db := range dbs {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.ExecContext(ctx, update, 1, i); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	sqlhookTx := func(db *sql.DB) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				for i := range 2 {
					if _, err := tx.ExecContext(ctx, update, 1, i); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("two_phase", sqlhookTx(p.open(b, p.dsn)))
	b.Run("two_phase_sql_floor", func(b *testing.B) { tpBenchFloor(b, p, update) })
	multi, err := sqlhook.Open(p.config(b, p.dsn), sqlhook.WithMultiSourceTx())
	if err != nil {
		b.Fatal(err)
	}
	defer multi.Close()
	b.Run("multi_source_not_atomic", sqlhookTx(multi))
	if left := append(p.prepared(b, 0), p.prepared(b, 1)...); len(left) > 0 {
		b.Errorf("prepared branches left after the benchmark: %v", left)
	}
}

// tpBenchFloor runs two-phase commits by hand on two pinned connections,
// logging each decision in a table of ds_0 shaped like the engine's log.
func tpBenchFloor(b *testing.B, p tpPair, update string) {
	ctx := context.Background()
	logDB := p.direct(b, 0)
	if _, err := logDB.Exec(`CREATE TABLE IF NOT EXISTS tp_bench_log (gtrid VARCHAR(64) PRIMARY KEY, outcome CHAR(1) NOT NULL, branches VARCHAR(1000) NOT NULL, created_at TIMESTAMP NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	var conns [2]*sql.Conn
	for i := range conns {
		c, err := p.direct(b, i).Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	both := func(stmt func(i int) string) {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, c := range conns {
			wg.Go(func() { _, errs[i] = c.ExecContext(ctx, stmt(i)) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		gtrid := fmt.Sprintf("tpbench:%d:%d", time.Now().UnixNano(), n)
		for i, c := range conns {
			if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
				b.Fatal(err)
			}
			if _, err := c.ExecContext(ctx, update, 1, i); err != nil {
				b.Fatal(err)
			}
		}
		both(func(i int) string { return fmt.Sprintf("PREPARE TRANSACTION '%s:ds_%d'", gtrid, i) })
		if _, err := logDB.ExecContext(ctx, `INSERT INTO tp_bench_log (gtrid, outcome, branches, created_at) VALUES ($1, 'C', $2, $3)`,
			gtrid, "ds_0,ds_1", time.Now().UTC()); err != nil {
			b.Fatal(err)
		}
		both(func(i int) string { return fmt.Sprintf("COMMIT PREPARED '%s:ds_%d'", gtrid, i) })
	}
}
