package keygen_test

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// TestCachedUIDLayoutFor: CACHED_UID keys decode with the layout
// LayoutFor gives for the generator's props, ring props included.
func TestCachedUIDLayoutFor(t *testing.T) {
	props := keygen.Props{"worker-id": "9", "boost-power": "2", "padding-factor": "40", "rejection-policy": "error"}
	at := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	g, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(keygentest.NewClock(at)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.(interface{ Close() error }).Close()
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l, err := keygen.LayoutFor("CACHED_UID", props)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Decompose(id)
	if err != nil || p.Worker != 9 || !p.Time.Equal(at) {
		t.Fatalf("decoded %+v, %v; want worker 9 at %s", p, err, at)
	}
	if _, err := keygen.LayoutFor("CACHED_UID", keygen.Props{"boost-power": "x"}); err != nil {
		t.Errorf("ring props are not part of the layout, yet: %v", err)
	}
}

// TestCachedUIDSameWorkerInOneProcess: CACHED_UID generators of one clock,
// layout and worker id — two alive at once, or one rebuilt after Close —
// never fill the same second, although each fills seconds ahead of the
// clock.
func TestCachedUIDSameWorkerInOneProcess(t *testing.T) {
	clock := keygentest.NewClock(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC))
	props := keygen.Props{"worker-id": "4", "sequence-bits": "8", "worker-bits": "22", "boost-power": "1"}
	seen := map[int64]bool{}
	draw := func(g keygen.IDGenerator, n int) {
		for range n {
			id, err := g.NextID(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] {
				t.Fatalf("key %d issued twice", id)
			}
			seen[id] = true
		}
	}
	a, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	b, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	draw(a, 2000)
	draw(b, 2000)
	a.(interface{ Close() error }).Close()
	c, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	draw(c, 2000)
	draw(b, 1000)
	b.(interface{ Close() error }).Close()
	c.(interface{ Close() error }).Close()
}

// TestCachedUIDTimeOverflow: a filler that reaches the layout's last second
// stops there; the IDs of the last seconds are all handed out, then NextID
// returns a TimeOverflowError (both rejection policies), never a wrapped
// or negative ID.
func TestCachedUIDTimeOverflow(t *testing.T) {
	for _, policy := range []string{"wait", "error"} {
		t.Run(policy, func(t *testing.T) {
			props := keygen.Props{"sequence-bits": "4", "boost-power": "1", "time-bits": "30", "worker-id": "auto",
				"rejection-policy": policy}
			l, err := keygen.LayoutFor("CACHED_UID", props)
			if err != nil {
				t.Fatal(err)
			}
			last := l.RunsOut().Add(-time.Second) // the start of the last second that fits
			lease := newTestLease(5)
			lease.lastUsed = last.Add(-3 * time.Second) // so the filler starts 2 s before the end
			g, _ := newCachedUID(t, props, keygen.WithWorkerSource(lease))
			ids := make([]int64, 3*16) // the last three seconds, 16 IDs each
			// With rejection-policy=error an empty ring is an error until the
			// filler has run: retry it.
			next := func(c context.Context) (int64, error) {
				for {
					id, err := g.NextID(c)
					if policy != "error" || !errors.Is(err, keygen.ErrUIDBufferEmpty) || c.Err() != nil {
						return id, err
					}
					time.Sleep(time.Millisecond)
				}
			}
			for i := range ids {
				if ids[i], err = next(ctx); err != nil {
					t.Fatalf("ID %d: %v", i, err)
				}
				p, err := l.Decompose(ids[i])
				if err != nil || ids[i] <= 0 || (i > 0 && ids[i] <= ids[i-1]) {
					t.Fatalf("ID %d = %d (%+v, %v)", i, ids[i], p, err)
				}
				if want := l.MaxTimestamp() - 2 + int64(i/16); p.Timestamp != want || p.Sequence != int64(i%16) {
					t.Fatalf("ID %d: second %d sequence %d, want %d, %d", i, p.Timestamp, p.Sequence, want, i%16)
				}
			}
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			id, err := next(c)
			var te *keygen.TimeOverflowError
			if !errors.As(err, &te) || !errors.Is(err, keygen.ErrTimeOverflow) {
				t.Fatalf("NextID past the layout = %d, %v; want a TimeOverflowError", id, err)
			}
			if _, err := next(c); !errors.Is(err, keygen.ErrTimeOverflow) {
				t.Fatalf("again: %v", err)
			}
		})
	}
}

// TestCachedUIDWithUID: UID and CACHED_UID of one worker and layout issue
// from the same (second, sequence) space, and CACHED_UID fills seconds
// ahead of the clock; New refuses one while the other is in use, and a
// UID is accepted again once the clock has passed what CACHED_UID filled.
func TestCachedUIDWithUID(t *testing.T) {
	clock := keygentest.NewClock(time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC))
	props := keygen.Props{"worker-id": "11", "worker-bits": "21", "sequence-bits": "10"}
	uid, err := keygen.NewID("UID", props, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uid.NextID(ctx); err != nil {
		t.Fatal(err)
	}
	if g, err := keygen.NewID("CACHED_UID", props, keygen.WithClock(clock)); !errors.Is(err, keygen.ErrIDSpaceInUse) {
		if err == nil {
			g.(io.Closer).Close()
		}
		t.Fatalf("CACHED_UID beside a live UID: %v, want ErrIDSpaceInUse", err)
	}
	runtime.KeepAlive(uid)

	// Another worker is another space.
	other := keygen.Props{"worker-id": "12", "worker-bits": "21", "sequence-bits": "10"}
	g, err := keygen.NewID("CACHED_UID", other, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	g.(io.Closer).Close()

	// A CACHED_UID open or ahead of the clock refuses a UID.
	props2 := keygen.Props{"worker-id": "13", "worker-bits": "21", "sequence-bits": "10"}
	cu, err := keygen.NewID("CACHED_UID", props2, keygen.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for range 5000 { // about 5 seconds of the 1024-per-second layout
		id, err := cu.NextID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[id] = true
	}
	if _, err := keygen.NewID("UID", props2, keygen.WithClock(clock)); !errors.Is(err, keygen.ErrIDSpaceInUse) {
		t.Fatalf("UID beside an open CACHED_UID: %v, want ErrIDSpaceInUse", err)
	}
	cu.(io.Closer).Close()
	if _, err := keygen.NewID("UID", props2, keygen.WithClock(clock)); !errors.Is(err, keygen.ErrIDSpaceInUse) {
		t.Fatalf("UID while the closed CACHED_UID's seconds are ahead of the clock: %v, want ErrIDSpaceInUse", err)
	}
	clock.Add(time.Minute)
	uid2, err := keygen.NewID("UID", props2, keygen.WithClock(clock))
	if err != nil {
		t.Fatalf("UID after the clock passed the filled seconds: %v", err)
	}
	for range 2000 {
		id, err := uid2.NextID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("UID repeated CACHED_UID's key %d", id)
		}
	}
}
