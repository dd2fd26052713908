package sqlhook_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/sqlhook"
)

type stuckKey struct{}

// stuckObserver blocks in StatementStart, until release is closed, for
// statements whose context carries stuckKey (telling entered it has).
type stuckObserver struct {
	observe.Base
	entered chan struct{}
	once    sync.Once
	release chan struct{}
}

func (o *stuckObserver) StatementStart(ctx context.Context, _ observe.Statement) context.Context {
	if ctx.Value(stuckKey{}) != nil {
		o.once.Do(func() { close(o.entered) })
		<-o.release
	}
	return ctx
}

// An Observer that blocks holds up only the statement it blocks: sqlhook
// holds no lock shared with other statements while it calls the
// observer, so other goroutines' statements on the same connector, on
// both data sources, run to the end meanwhile. (A deadline of 30 s tells
// a deadlock from a slow machine.)
func TestABlockedObserverHoldsUpOnlyItsOwnStatement(t *testing.T) {
	for _, b := range lifecycleBackends(t, "sqlhook_obsslow") {
		t.Run(b.name, func(t *testing.T) {
			o := &stuckObserver{entered: make(chan struct{}), release: make(chan struct{})}
			db, err := sqlhook.Open(b.config(t), sqlhook.WithScatter(), sqlhook.WithObserver(o))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			if _, err := db.ExecContext(ctx, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				rows, err := db.QueryContext(context.WithValue(ctx, stuckKey{}, true), `SELECT order_id FROM t_order`)
				if err == nil {
					err = rows.Close()
				}
				done <- err
			}()
			<-o.entered
			others, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			for i := range int64(20) {
				if _, err := db.ExecContext(others, b.q(`INSERT INTO t_order (order_id, user_id) VALUES (?, ?)`), i, i); err != nil {
					close(o.release)
					t.Fatalf("statement %d beside a blocked observer: %v", i, err)
				}
			}
			var n int
			if err := db.QueryRowContext(others, `SELECT COUNT(*) FROM t_order`).Scan(&n); err != nil || n != 20 {
				t.Errorf("count beside a blocked observer: %d, %v", n, err)
			}
			close(o.release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}
