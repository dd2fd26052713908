package coretest_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/keygen"
)

// TestSegmentDatabaseStoppedAndBack: the database goes away mid-run (a
// proxy cuts every connection and refuses new ones). The generator hands
// out its buffered keys, then ErrSegmentUnavailable within each caller's
// deadline; once the database is back it fetches new ranges and the keys
// continue, above every key issued before, none repeated, and the table's
// max_id covers them all.
func TestSegmentDatabaseStoppedAndBack(t *testing.T) {
	for _, d := range segDBs {
		t.Run(d.name, func(t *testing.T) {
			opt := goleak.IgnoreCurrent()
			t.Cleanup(func() { goleak.VerifyNone(t, opt) }) // after the proxy's cleanup
			server := d.dsn(t, "segment_stopped")
			direct := openSegDB(t, d, server)
			defer direct.Close()
			dsn, proxy := dbtest.ViaProxy(t, d.driver, server)
			db := openSegDB(t, d, dsn)
			defer db.Close()
			g := newSegment(t, db, keygen.Props{"biz-tag": "stop", "step": "500", "min-step": "500", "max-step": "500",
				"prefetch-threshold": "0.5"})
			defer g.(io.Closer).Close()
			ctx := context.Background()
			seen := map[int64]bool{}
			var last int64
			take := func(c context.Context) error {
				id, err := g.NextID(c)
				if err != nil {
					return err
				}
				if id <= last || seen[id] {
					t.Fatalf("key %d after %d (seen before: %v)", id, last, seen[id])
				}
				seen[id], last = true, id
				return nil
			}
			for range 300 { // past the threshold: the second range is fetched
				if err := take(ctx); err != nil {
					t.Fatal(err)
				}
			}
			sr := g.(keygen.StatsReporter)
			for deadline := time.Now().Add(10 * time.Second); sr.Stats().LeaseRenewals < 2; {
				if time.Now().After(deadline) {
					t.Fatal("prefetch did not complete")
				}
				time.Sleep(5 * time.Millisecond)
			}

			proxy.Cut()
			buffered := 0
			for {
				c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				err := take(c)
				cancel()
				if err != nil {
					if !errors.Is(err, keygen.ErrSegmentUnavailable) {
						t.Fatalf("with the database gone: %v, want ErrSegmentUnavailable", err)
					}
					break
				}
				if buffered++; buffered > 1000 {
					t.Fatal("more keys than two ranges hold with the database gone")
				}
			}
			if buffered < 700 { // 200 left of the first range, 500 prefetched
				t.Errorf("%d buffered keys handed out with the database gone, want 700", buffered)
			}

			proxy.Resume()
			c, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			for range 2000 { // four more ranges
				if err := take(c); err != nil {
					t.Fatalf("after the database came back: %v", err)
				}
			}
			if m := maxID(t, direct, d, "stop"); m <= last {
				t.Errorf("max_id %d does not cover the last key %d", m, last)
			}
			if s := sr.Stats(); s.LeaseFailures == 0 || s.Issued != uint64(len(seen)) {
				t.Errorf("stats %+v; want failures counted and %d issued", s, len(seen))
			}
		})
	}
}
