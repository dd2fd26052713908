package workerlease

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/XSAM/otelsql"

	"github.com/shardkey/shardkey/keygen"
)

// TestLeasesWorkOverAnOtelsqlWrappedDriverWithTheDialectSet: on a *sql.DB
// opened through otelsql, New and NewDisposable refuse to guess the
// dialect (ErrUnknownDialect naming the field to set) and, with it set,
// lease distinct worker ids whose generators issue keys, and release them.
func TestLeasesWorkOverAnOtelsqlWrappedDriverWithTheDialectSet(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		db, err := otelsql.Open(b.driver, b.dsn)
		if err != nil {
			t.Fatalf("otelsql.Open(%s): %v", b.driver, err)
		}
		t.Cleanup(func() { db.Close() })
		d := PostgreSQL
		if b.driver == "mysql" {
			d = MySQL
		}

		ns := namespace(t)
		if _, err := New(ctx, Config{DB: db, Namespace: ns}); !errors.Is(err, ErrUnknownDialect) || !strings.Contains(err.Error(), "set Config.Dialect") {
			t.Fatalf("New without Dialect: %v; want ErrUnknownDialect naming Config.Dialect", err)
		}
		table := "wn_" + strings.ToLower(randomHex(4))
		if _, err := NewDisposable(ctx, DisposableConfig{DB: db, Table: table}); !errors.Is(err, ErrUnknownDialect) {
			t.Fatalf("NewDisposable without Dialect: %v; want ErrUnknownDialect", err)
		}

		s := newSource(t, db, Config{Namespace: ns, Dialect: d})
		g1, g2 := leasedGenerator(t, s), leasedGenerator(t, s)
		id1, err1 := g1.NextID(ctx)
		id2, err2 := g2.NextID(ctx)
		if err1 != nil || err2 != nil {
			t.Fatalf("NextID: %v, %v", err1, err2)
		}
		w1, w2 := workerOf(t, g1, id1), workerOf(t, g2, id2)
		if w1 == w2 {
			t.Fatalf("two leases got worker id %d", w1)
		}
		if err := g1.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		slots, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held := map[int64]bool{}
		for _, sl := range slots {
			held[sl.Worker] = sl.Held
		}
		if len(slots) != 2 || held[w1] || !held[w2] {
			t.Fatalf("after closing worker %d of %d and %d: slots %+v; want it released and the other held", w1, w1, w2, slots)
		}

		disp, err := NewDisposable(ctx, DisposableConfig{DB: db, Dialect: d, Table: table})
		if err != nil {
			t.Fatalf("NewDisposable: %v", err)
		}
		t.Cleanup(func() { db.Exec("DROP TABLE " + table) })
		props := keygen.Props{"worker-id": "auto"}
		u1, err1 := keygen.NewID("UID", props, keygen.WithWorkerSource(disp))
		u2, err2 := keygen.NewID("UID", props, keygen.WithWorkerSource(disp))
		if err1 != nil || err2 != nil {
			t.Fatalf("UID on a disposable source: %v, %v", err1, err2)
		}
		k1, err1 := u1.NextID(ctx)
		k2, err2 := u2.NextID(ctx)
		if err1 != nil || err2 != nil {
			t.Fatalf("UID NextID: %v, %v", err1, err2)
		}
		if workerOf(t, u1, k1) == workerOf(t, u2, k2) {
			t.Fatalf("two disposable starts got worker id %d", workerOf(t, u1, k1))
		}
	})
}
