package keygen_test

import (
	"errors"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

const jsMaxSafe = 1<<53 - 1

func TestJSLayoutAndBackupOnBusySecond(t *testing.T) {
	g, clk := newFake(t, "SNOWFLAKE_JS", keygen.Props{"worker-id": "3"})
	// Three seconds' worth of sequence while the clock stands still: the
	// primary's second, the backup's, then the backup borrows the next one.
	ids := make([]int64, 3*65536+5)
	if err := g.NextIDs(ctx, ids); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if id > jsMaxSafe || id < 0 {
			t.Fatalf("id %d = %d exceeds 2^53-1", i, id)
		}
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("id %d = %d not above %d", i, id, ids[i-1])
		}
	}
	sec := t0.Truncate(time.Second)
	for _, c := range []struct {
		i      int
		backup bool
		time   time.Time
		seq    int64
	}{
		{0, false, sec, 0}, {65535, false, sec, 65535}, // primary 3
		{65536, true, sec, 0}, {2*65536 - 1, true, sec, 65535}, // backup 3+16, same second
		{2 * 65536, true, sec.Add(time.Second), 0},     // borrowed next second
		{3 * 65536, true, sec.Add(2 * time.Second), 0}, // after waiting for the clock
	} {
		p := decompose(t, g, ids[c.i])
		if p.Backup != c.backup || p.Worker != 3 || !p.Time.Equal(c.time) || p.Sequence != c.seq {
			t.Errorf("id %d: %+v, want backup=%v time=%v seq=%d", c.i, p, c.backup, c.time, c.seq)
		}
	}
	if raw := ids[65536] >> 16 & 31; raw != 3+16 {
		t.Errorf("backup worker field = %d, want primary+16 = 19", raw)
	}
	// Borrowing is bounded: the third second was reached by sleeping, and
	// running out of sequence never failed.
	if s := clk.Sleeps(); len(s) != 1 || s[0] <= 0 || s[0] > time.Second {
		t.Fatalf("sleeps = %v, want one wait of at most a second", s)
	}
	// The clock reaches the borrowed second: the backup keeps it (the
	// primary never returns to a second the backup has used)...
	clk.Set(sec.Add(2 * time.Second))
	if p := decompose(t, g, next(t, g)); !p.Backup {
		t.Fatalf("primary returned to a second the backup used: %+v", p)
	}
	// ...and the next fresh second is the primary's again.
	clk.Set(sec.Add(3 * time.Second))
	if p := decompose(t, g, next(t, g)); p.Backup || p.Sequence != 0 {
		t.Fatalf("fresh second: %+v", p)
	}
}

func TestJSClockBackwards(t *testing.T) {
	g, clk := newFake(t, "SNOWFLAKE_JS", keygen.Props{"worker-id": "15"})
	a := next(t, g)
	clk.Add(-800 * time.Millisecond) // within the 1 s tolerance: backup takes over
	b := next(t, g)
	pb := decompose(t, g, b)
	if b <= a || !pb.Backup || pb.Worker != 15 {
		t.Fatalf("after a step back: %d (%+v), previous %d", b, pb, a)
	}
	clk.Add(-5 * time.Second) // beyond tolerance
	_, err := g.NextID(ctx)
	var cb *keygen.ClockBackwardsError
	if !errors.As(err, &cb) || !errors.Is(err, keygen.ErrClockBackwards) || cb.Tolerance != time.Second {
		t.Fatalf("err = %v", err)
	}
	if len(clk.Sleeps()) != 0 {
		t.Fatalf("unexpected sleeps %v", clk.Sleeps())
	}
}

func TestJSWorkerRange(t *testing.T) {
	_, err := keygen.NewID("snowflake_js", keygen.Props{"worker-id": "16"})
	var pe *keygen.PropError
	if !errors.As(err, &pe) || pe.Key != "worker-id" || pe.Value != "16" || pe.Allowed != "an integer 0..15" {
		t.Fatalf("err = %v", err)
	}
}

func TestUIDBaiduProps(t *testing.T) {
	g, _ := newFake(t, "UID", keygen.Props{"workerId": "9", "timeBits": "30", "workerBits": "20", "seqBits": "13",
		"epochStr": "2020-01-01"})
	l := g.(interface{ Layout() keygen.Layout }).Layout()
	if l.TimeBits != 30 || l.WorkerBits != 20 || l.SequenceBits != 13 || l.Unit != time.Second || l.Epoch.Year() != 2020 {
		t.Fatalf("layout = %v", l)
	}
	want := (t0.Unix()-time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix())<<33 | 9<<13
	if id := next(t, g); id != want {
		t.Fatalf("id = %d, want %d", id, want)
	}
}

func TestUIDDefaultsAndClock(t *testing.T) {
	g, clk := newFake(t, "UID", keygen.Props{"worker-id": "1"})
	l := g.(interface{ Layout() keygen.Layout }).Layout()
	if l.TimeBits != 31 || l.WorkerBits != 19 || l.SequenceBits != 13 || l.RunsOut().Format(time.DateOnly) != "2084-06-07" {
		t.Fatalf("default layout = %v, runs out %v", l, l.RunsOut())
	}
	ids := make([]int64, 8192+1) // one second's sequence, then wait for the next second
	if err := g.NextIDs(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if p := decompose(t, g, ids[8192]); p.Sequence != 0 || !p.Time.Equal(t0.Truncate(time.Second).Add(time.Second)) {
		t.Fatalf("after the second's sequence: %+v", p)
	}
	if s := clk.Sleeps(); len(s) != 1 {
		t.Fatalf("sleeps = %v", s)
	}
	clk.Add(-2 * time.Second) // Baidu refuses any backwards step
	if _, err := g.NextID(ctx); !errors.Is(err, keygen.ErrClockBackwards) {
		t.Fatalf("err = %v", err)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-([47])[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUUID(t *testing.T) {
	clk := keygentest.NewClock(t0)
	for _, v := range []string{"4", "7"} {
		g, err := keygen.New("uuid", keygen.Props{"version": v}, keygen.WithClock(clk))
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for i := 0; i < 5000; i++ {
			k, err := g.NextKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s := k.(string)
			if m := uuidRE.FindStringSubmatch(s); m == nil || m[1] != v {
				t.Fatalf("version %s key %q", v, s)
			}
			keys = append(keys, s)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(keys)))) != len(keys) {
			t.Fatalf("version %s: duplicate keys", v)
		}
		if v == "7" {
			if !slices.IsSorted(keys) {
				t.Fatal("version 7 keys from one generator must increase")
			}
			if ms := keys[0][:8] + keys[0][9:13]; ms != "019cb8b81e7b" {
				t.Fatalf("version 7 time prefix %s, want t0's milliseconds 019cb8b81e7b", ms)
			}
		}
	}
	if _, err := keygen.NewID("UUID", nil); !errors.Is(err, keygen.ErrNotInt64) {
		t.Fatalf("NewID(UUID) err = %v", err)
	}
	if _, err := keygen.New("UUID", keygen.Props{"version": "5"}); !errors.Is(err, keygen.ErrInvalidProps) {
		t.Fatalf("version 5 err = %v", err)
	}
}
