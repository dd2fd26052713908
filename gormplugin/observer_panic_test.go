package gormplugin_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/observe"
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

func recovered(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// An Observer that panics during a Create must not leave GORM's default
// transaction open: GORM begins it and commits or rolls it back in
// callbacks, not deferred calls, so a panic out of a hook between them
// skips the end, and the connection stays in a transaction that is never
// ended (its locks held, the pool short of a connection). With one
// connection per pool the next statement then waits until its deadline.
// (Not run on MariaDB: there the transaction left open holds a metadata
// lock, and the next test's DROP DATABASE waits for it for good.)
func TestAPanickingObserverLeavesNoTransactionOpen(t *testing.T) {
	for _, be := range []string{"sqlite", "postgres"} {
		for _, at := range []string{"StatementStart", "TargetStart", "TargetEnd", "StatementEnd"} {
			t.Run(be+"/"+at, func(t *testing.T) {
				p := &panickingObserver{at: at}
				e := openTwoDS(t, be, "obspanic", dbRules, nil, []any{&ShardedOrder{}}, gormplugin.WithObserver(p), gormplugin.WithScatter())
				p0, _ := e.db.DB()
				p1, _ := e.db1.DB()
				p0.SetMaxOpenConns(1)
				p1.SetMaxOpenConns(1)
				p.arm.Store(true)
				first := recovered(func() error { return e.db.Create(&ShardedOrder{ID: 11, UserID: 1, Amount: 3}).Error })
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				var n int64
				if err := e.db.WithContext(ctx).Model(&ShardedOrder{}).Where("user_id = ?", 1).Count(&n).Error; err != nil {
					t.Fatalf("after a Create whose observer panicked in %s (%v), a read: %v", at, first, err)
				}
				if err := e.db.WithContext(ctx).Create(&ShardedOrder{ID: 13, UserID: 1, Amount: 4}).Error; err != nil {
					t.Fatalf("after a Create whose observer panicked in %s (%v), a write: %v", at, first, err)
				}
			})
		}
	}
}
