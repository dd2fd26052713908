package sqlhook_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/sqlhook"
)

// panickingObserver panics once in method at, when armed.
type panickingObserver struct {
	observe.Base
	at  string
	arm atomic.Bool
}

func (p *panickingObserver) boom(m string) {
	if p.at == m && p.arm.CompareAndSwap(true, false) {
		panic("observer panic in " + m)
	}
}

func (p *panickingObserver) StatementStart(ctx context.Context, _ observe.Statement) context.Context {
	p.boom("StatementStart")
	return ctx
}
func (p *panickingObserver) StatementEnd(context.Context, observe.Statement, observe.StatementEnd) {
	p.boom("StatementEnd")
}
func (p *panickingObserver) TargetStart(ctx context.Context, _ observe.Target) context.Context {
	p.boom("TargetStart")
	return ctx
}
func (p *panickingObserver) TargetEnd(context.Context, observe.Target, error) { p.boom("TargetEnd") }
func (p *panickingObserver) PlanCache(context.Context, bool)                  { p.boom("PlanCache") }

// recovered runs f, turning a panic into an error.
func recovered(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// An Observer that panics must not take a pooled connection with it:
// database/sql returns a query's connection only when the query returns
// or its rows close, so a panic out of QueryContext or Rows.Close leaves
// the connection busy for good, and with SetMaxOpenConns(1) every later
// statement waits forever. (Exec returns its connection in a deferred
// call, so only queries are tried here.)
func TestAPanickingObserverLeavesNoConnectionHeld(t *testing.T) {
	dir := t.TempDir()
	b := backend{name: "sqlite", driver: "sqlite", dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}}
	for _, at := range []string{"PlanCache", "StatementStart", "TargetStart", "TargetEnd", "StatementEnd"} {
		t.Run(at, func(t *testing.T) {
			p := &panickingObserver{at: at}
			db, err := sqlhook.Open(b.config(t), sqlhook.WithScatter(), sqlhook.WithObserver(p))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			ctx := context.Background()
			if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			p.arm.Store(true)
			first := recovered(func() error {
				rows, err := db.QueryContext(ctx, `SELECT order_id FROM t_order`)
				if err != nil {
					return err
				}
				for rows.Next() {
				}
				return rows.Close()
			})
			wait, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			var n int
			if err := db.QueryRowContext(wait, `SELECT COUNT(*) FROM t_order`).Scan(&n); err != nil {
				t.Errorf("after a query whose observer panicked in %s (%v), the next query: %v", at, first, err)
			}
		})
	}
}
