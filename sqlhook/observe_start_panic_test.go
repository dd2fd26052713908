package sqlhook_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/shardkey/shardkey/observe"
	"github.com/shardkey/shardkey/sqlhook"
)

// startPanicObserver panics in every StatementStart and counts the events
// it receives after that.
type startPanicObserver struct {
	observe.Base
	targets, ends atomic.Int64
}

func (*startPanicObserver) StatementStart(context.Context, observe.Statement) context.Context {
	panic("observer panic in StatementStart")
}
func (o *startPanicObserver) TargetStart(ctx context.Context, _ observe.Target) context.Context {
	o.targets.Add(1)
	return ctx
}
func (o *startPanicObserver) StatementEnd(context.Context, observe.Statement, observe.StatementEnd) {
	o.ends.Add(1)
}

// TestAStatementWhoseStartPanickedReportsNothingMore: once StatementStart
// panicked (recovered), the statement still runs, under the caller's
// context, but the observer gets none of its targets and no StatementEnd
// without a start (an in-flight gauge would go negative).
func TestAStatementWhoseStartPanickedReportsNothingMore(t *testing.T) {
	dir := t.TempDir()
	b := backend{name: "sqlite", driver: "sqlite", dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}}
	o := &startPanicObserver{}
	db, err := sqlhook.Open(b.config(t), sqlhook.WithScatter(), sqlhook.WithObserver(o))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t_order (order_id, user_id) VALUES (1, 1)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t_order`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("count = %d, %v; want 1", n, err)
	}
	if got, ends := o.targets.Load(), o.ends.Load(); got != 0 || ends != 0 {
		t.Fatalf("after StatementStart panicked: %d TargetStart and %d StatementEnd events, want none", got, ends)
	}
}
