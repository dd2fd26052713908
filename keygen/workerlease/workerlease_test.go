package workerlease

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

const (
	shortTTL  = 600 * time.Millisecond
	shortSafe = 600 * time.Millisecond
)

// claimAll claims n leases concurrently, checks their workers are
// distinct and returns them (closed when the test ends).
func claimAll(t *testing.T, s *Source, in keygen.WorkerInfo, n int) []*lease {
	t.Helper()
	leases := make([]*lease, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			l, err := s.Acquire(context.Background(), in)
			if err == nil {
				leases[i] = l.(*lease)
			}
			errs[i] = err
		}()
	}
	close(ready)
	wg.Wait()
	for _, l := range leases {
		if l != nil {
			t.Cleanup(func() { l.Close() })
		}
	}
	seen := map[int64]bool{}
	for i, l := range leases {
		if errs[i] != nil {
			t.Fatalf("claimant %d: %v", i, errs[i])
		}
		if seen[l.Worker()] {
			t.Fatalf("worker %d claimed twice", l.Worker())
		}
		seen[l.Worker()] = true
		if got, want := l.ValidUntil(), start.Add(DefaultTTL-time.Millisecond).UnixNano(); got != want {
			t.Fatalf("ValidUntil = %d, want fake clock + TTL - 1ms = %d", got, want)
		}
	}
	return leases
}

// warmPool opens n connections, so that concurrent claimants start at
// once instead of one connection handshake after another.
func warmPool(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Close()
	}
}

func TestConcurrentClaimsAreDistinct(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		db.SetMaxOpenConns(24)
		db.SetMaxIdleConns(24)
		warmPool(t, db, 24)
		s := newSource(t, db, Config{})
		in, _ := fakeInfo(63)

		// First on an empty namespace (rows are created), then on the
		// released rows (rows are claimed).
		leases := claimAll(t, s, in, 64)
		for _, l := range leases {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
		leases = claimAll(t, s, in, 64)

		_, err := s.Acquire(context.Background(), in)
		if !errors.Is(err, ErrNoFreeWorker) {
			t.Fatalf("65th Acquire: %v, want ErrNoFreeWorker", err)
		}
		if msg := err.Error(); !strings.Contains(msg, s.Namespace()) || !strings.Contains(msg, "all 64 worker ids") {
			t.Fatalf("65th Acquire error %q does not name the namespace and the count", msg)
		}

		// A released id is claimable at once; the others stay held.
		if err := leases[10].Close(); err != nil {
			t.Fatal(err)
		}
		l := acquire(t, s, in)
		if l.Worker() != leases[10].Worker() {
			t.Fatalf("claimed %d after releasing %d", l.Worker(), leases[10].Worker())
		}
	})
}

func TestLargeLayoutCreatesRowsLazily(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		s := newSource(t, db, Config{Table: "shardkey_worker_large"})
		in, _ := fakeInfo(1<<19 - 1)
		for want := int64(0); want < 3; want++ {
			if l := acquire(t, s, in); l.Worker() != want {
				t.Fatalf("claim %d got worker %d", want, l.Worker())
			}
		}
		slots, err := s.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(slots) != 3 {
			t.Fatalf("%d rows for 3 claims", len(slots))
		}
		for _, sl := range slots {
			if !sl.Held || !strings.HasPrefix(sl.Owner, s.Instance()+"/") {
				t.Fatalf("slot %+v is not held by instance %q", sl, s.Instance())
			}
		}
	})
}

func TestRenewalMovesValidityAndRecordsLastUse(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		s := newSource(t, db, Config{TTL: shortTTL})
		in, clock := fakeInfo(1023)
		l := acquire(t, s, in)
		if got, want := l.ValidUntil(), start.Add(shortTTL-time.Millisecond).UnixNano(); got != want {
			t.Fatalf("ValidUntil after claim = %d, want %d", got, want)
		}
		issued := time.UnixMilli(1_900_000_000_000)
		l.Track(func() time.Time { return issued })
		clock.Add(time.Hour)
		want := start.Add(time.Hour + shortTTL - time.Millisecond).UnixNano()
		waitFor(t, 5*time.Second, "a renewal to move ValidUntil to the clock + TTL", func() bool { return l.ValidUntil() == want })
		if got := slot(t, s, l.Worker()).LastUsed; !got.Equal(issued) {
			t.Fatalf("last use in the row = %v, want %v", got, issued)
		}
		if l.Failures() != 0 {
			t.Fatalf("%d failures", l.Failures())
		}
	})
}

func TestCloseReleasesWithLastUse(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		s := newSource(t, db, Config{TTL: shortTTL, SafeGuard: shortSafe})
		in, _ := fakeInfo(1023)

		first := acquire(t, s, in)
		if !first.LastUsed().IsZero() {
			t.Fatalf("new slot has LastUsed %v", first.LastUsed())
		}
		issued := time.UnixMilli(1_900_000_000_123)
		first.Track(func() time.Time { return issued })
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		if err := first.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if first.ValidUntil() != math.MinInt64 {
			t.Fatalf("closed lease still valid until %d", first.ValidUntil())
		}
		sl := slot(t, s, first.Worker())
		if sl.Owner != "" || sl.Held || !sl.ExpiresAt.IsZero() {
			t.Fatalf("released slot reads %+v", sl)
		}

		second := acquire(t, s, in)
		if second.Worker() != first.Worker() {
			t.Fatalf("released worker %d, next claim got %d", first.Worker(), second.Worker())
		}
		if !second.LastUsed().Equal(issued) {
			t.Fatalf("LastUsed = %v, want the time tracked at Close %v", second.LastUsed(), issued)
		}

		// A time within a millisecond is rounded up.
		second.Track(func() time.Time { return issued.Add(5*time.Millisecond + 400*time.Microsecond) })
		if err := second.Close(); err != nil {
			t.Fatal(err)
		}
		third := acquire(t, s, in)
		if want := issued.Add(6 * time.Millisecond); third.Worker() != first.Worker() || !third.LastUsed().Equal(want) {
			t.Fatalf("third claim: worker %d LastUsed %v, want %d and %v", third.Worker(), third.LastUsed(), first.Worker(), want)
		}
	})
}

func TestDeadHolderSlotWaitsForSafeGuard(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		s := newSource(t, db, Config{TTL: shortTTL, SafeGuard: shortSafe})
		in, _ := fakeInfo(1023)

		dead := acquire(t, s, in)
		issued := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
		dead.Track(func() time.Time { return issued })
		waitFor(t, 5*time.Second, "a renewal", func() bool { return dead.Renewals() > 0 })
		dead.stopRenewal() // the process dies: no renewal, no release
		expiry := slot(t, s, dead.Worker()).ExpiresAt
		reclaimAt := expiry.Add(shortSafe)

		other := acquire(t, s, in)
		if other.Worker() == dead.Worker() {
			t.Fatalf("worker %d reclaimed right after its holder died", dead.Worker())
		}
		sawExpiredUnclaimable := false
		var got *lease
		for got == nil {
			if time.Since(reclaimAt) > 5*time.Second {
				t.Fatal("dead holder's slot never reclaimed")
			}
			l, err := s.Acquire(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			claimedAt := time.UnixMilli(dbNowMs(t, s))
			if l.Worker() != dead.Worker() {
				if claimedAt.After(expiry.Add(50 * time.Millisecond)) {
					sawExpiredUnclaimable = true
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(25 * time.Millisecond)
				continue
			}
			got = l.(*lease)
			t.Cleanup(func() { got.Close() })
			if claimedAt.Before(reclaimAt) {
				t.Fatalf("reclaimed at %v, before expiry %v + SafeGuard", claimedAt, expiry)
			}
		}
		if !sawExpiredUnclaimable {
			t.Fatal("no claim attempt fell between the expiry and the SafeGuard's end")
		}
		if got.LastUsed().Before(expiry) || got.LastUsed().Before(issued) {
			t.Fatalf("reclaimer's LastUsed %v is before the dead holder's expiry %v", got.LastUsed(), expiry)
		}
		// The dead lease cannot release its old slot from under the new holder.
		if err := dead.Close(); err != nil {
			t.Fatal(err)
		}
		if sl := slot(t, s, got.Worker()); sl.Owner != got.owner || !sl.Held {
			t.Fatalf("slot after the dead lease's Close: %+v", sl)
		}
	})
}

func TestRenewalFindingSlotTakenLosesLeaseForGood(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		s := newSource(t, db, Config{TTL: shortTTL})
		in, _ := fakeInfo(1023)
		l := acquire(t, s, in)
		waitFor(t, 5*time.Second, "a renewal", func() bool { return l.Renewals() > 0 })

		setOwner := fmt.Sprintf("UPDATE %s SET owner = 'intruder' WHERE namespace = '%s' AND worker_id = %d",
			DefaultTable, s.Namespace(), l.Worker())
		if _, err := db.Exec(setOwner); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "the lease to be lost", func() bool { return l.lost.Load() })
		if l.ValidUntil() != math.MinInt64 {
			t.Fatalf("lost lease valid until %d", l.ValidUntil())
		}
		<-l.done // the renewal goroutine ended

		// Even with the row naming it again, the lease stays lost.
		restore := fmt.Sprintf("UPDATE %s SET owner = '%s' WHERE namespace = '%s' AND worker_id = %d",
			DefaultTable, l.owner, s.Namespace(), l.Worker())
		if _, err := db.Exec(restore); err != nil {
			t.Fatal(err)
		}
		renewals := l.Renewals()
		time.Sleep(2 * shortTTL / 3)
		if l.Renewals() != renewals || l.ValidUntil() != math.MinInt64 {
			t.Fatalf("lost lease renewed: %d renewals, valid until %d", l.Renewals(), l.ValidUntil())
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestReleaseRevokesSafely(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		s := newSource(t, db, Config{TTL: shortTTL, SafeGuard: shortSafe})
		in, _ := fakeInfo(1023)
		holder := acquire(t, s, in)
		before := slot(t, s, holder.Worker())

		if err := s.Release(context.Background(), holder.Worker()); err != nil {
			t.Fatal(err)
		}
		sl := slot(t, s, holder.Worker())
		if sl.Owner != "" || sl.Held || sl.LastUsed.Before(before.ExpiresAt) {
			t.Fatalf("revoked slot reads %+v (expiry before: %v)", sl, before.ExpiresAt)
		}
		waitFor(t, 5*time.Second, "the holder to lose its lease", func() bool { return holder.lost.Load() })

		next := acquire(t, s, in)
		if next.Worker() == holder.Worker() {
			t.Fatal("revoked slot claimed before its holder's lease ran out")
		}
		if err := s.Release(context.Background(), 1<<40); err == nil {
			t.Fatal("Release of a worker without a slot succeeded")
		}
		if err := s.Release(context.Background(), holder.Worker()); err != nil {
			t.Fatalf("second Release: %v", err)
		}
	})
}

func TestDatabaseUnreachableThenBack(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		dsn, p := b.viaProxy(t)
		// A SafeGuard long enough that nobody may reclaim the slot while
		// the test runs, however slow the machine.
		ns := namespace(t)
		cfg := Config{Namespace: ns, TTL: shortTTL, SafeGuard: time.Minute}
		direct := newSource(t, b.open(t, ""), cfg)
		s := newSource(t, b.open(t, dsn), cfg)
		in := info(realClock{}, 1023)
		l := acquire(t, s, in)
		waitFor(t, 5*time.Second, "a renewal", func() bool { return l.Renewals() > 0 })

		p.Cut()
		waitFor(t, 5*time.Second, "renewals to fail", func() bool { return l.Failures() >= 2 })
		frozen := l.ValidUntil()
		waitFor(t, 5*time.Second, "the lease to run out", func() bool { return time.Now().UnixNano() > l.ValidUntil() })
		// It may end early (math.MinInt64: the monotonic end), never move on.
		if v := l.ValidUntil(); v != frozen && v != math.MinInt64 {
			t.Fatalf("ValidUntil moved from %d to %d while the database was unreachable", frozen, v)
		}
		// Nobody else may take the slot meanwhile: it is expired, not free.
		other := acquire(t, direct, in)
		if other.Worker() == l.Worker() {
			t.Fatalf("worker %d claimed by another while its holder was cut off", l.Worker())
		}

		p.Resume()
		renewals := l.Renewals()
		waitFor(t, 10*time.Second, "a renewal after the database came back", func() bool {
			return l.Renewals() > renewals && l.ValidUntil() > time.Now().UnixNano()
		})
		if l.Failures() == 0 || l.lost.Load() {
			t.Fatalf("failures %d, lost %v", l.Failures(), l.lost.Load())
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if sl := slot(t, direct, l.Worker()); sl.Owner != "" {
			t.Fatalf("slot not released: %+v", sl)
		}
	})
}

const (
	helperEnv    = "WORKERLEASE_HELPER"
	helperDriver = "WORKERLEASE_HELPER_DRIVER"
	helperDSN    = "WORKERLEASE_HELPER_DSN"
	helperNS     = "WORKERLEASE_HELPER_NAMESPACE"
)

// TestHelperProcess is a child of TestEightProcesses: it claims a worker
// id, prints it and holds it until its standard input closes.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestEightProcesses")
	}
	db, err := sql.Open(os.Getenv(helperDriver), os.Getenv(helperDSN))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := New(ctx, Config{DB: db, Namespace: os.Getenv(helperNS), TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Acquire(ctx, info(realClock{}, 63))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("worker %d\n", l.Worker())
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-ctx.Done():
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestEightProcesses(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		t.Skip("in a helper process")
	}
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		s := newSource(t, db, Config{})
		const n = 8
		type child struct {
			cmd    *exec.Cmd
			stdin  io.WriteCloser
			stderr strings.Builder
			worker chan string
		}
		children := make([]*child, n)
		for i := range children {
			c := &child{worker: make(chan string, 1)}
			c.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
			c.cmd.Env = append(os.Environ(), helperEnv+"=1", helperDriver+"="+b.driver, helperDSN+"="+b.dsn, helperNS+"="+s.Namespace())
			c.cmd.Stderr = &c.stderr
			var err error
			if c.stdin, err = c.cmd.StdinPipe(); err != nil {
				t.Fatal(err)
			}
			out, err := c.cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			children[i] = c
			go func() {
				sc := bufio.NewScanner(out)
				var line string
				for sc.Scan() {
					if w, ok := strings.CutPrefix(sc.Text(), "worker "); ok && line == "" {
						line = w
						c.worker <- w
					}
				}
				if line == "" {
					close(c.worker)
				}
			}()
		}
		stopAll := func() {
			for _, c := range children {
				c.stdin.Close()
			}
			for _, c := range children {
				c.cmd.Wait()
			}
		}
		defer stopAll()

		seen := map[int64]bool{}
		timeout := time.After(15 * time.Second)
		for i, c := range children {
			select {
			case w, ok := <-c.worker:
				if !ok {
					t.Fatalf("child %d printed no worker id; stderr:\n%s", i, c.stderr.String())
				}
				id, err := strconv.ParseInt(w, 10, 64)
				if err != nil {
					t.Fatalf("child %d printed %q", i, w)
				}
				if seen[id] {
					t.Fatalf("worker %d held by two processes at once", id)
				}
				seen[id] = true
			case <-timeout:
				t.Fatalf("child %d printed no worker id in time", i)
			}
		}
		slots, err := s.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		owners := map[string]bool{}
		for _, sl := range slots {
			if sl.Held {
				owners[sl.Owner] = true
			}
		}
		if len(seen) != n || len(owners) != n {
			t.Fatalf("%d distinct workers and %d held slots with distinct owners, want %d", len(seen), len(owners), n)
		}

		stopAll()
		for i, c := range children {
			if !c.cmd.ProcessState.Success() {
				t.Fatalf("child %d: %v; stderr:\n%s", i, c.cmd.ProcessState, c.stderr.String())
			}
		}
		slots, err = s.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, sl := range slots {
			if sl.Owner != "" {
				t.Fatalf("slot %d still owned after its process closed: %+v", sl.Worker, sl)
			}
		}
	})
}

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) { return nil, errors.New("fake driver") }

func init() { sql.Register("workerlease-fake", fakeDriver{}) }

func TestConfig(t *testing.T) {
	checkLeaks(t)
	fake, err := sql.Open("workerlease-fake", "")
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ctx := context.Background()
	if _, err := New(ctx, Config{}); err == nil {
		t.Error("nil DB accepted")
	}
	if _, err := New(ctx, Config{DB: fake}); err == nil || !strings.Contains(err.Error(), "set Config.Dialect") {
		t.Errorf("undetectable driver: %v", err)
	}
	for _, cfg := range []Config{
		{Table: "drop table x; --"},
		{Table: "a.b.c"},
		{Namespace: strings.Repeat("n", MaxNamespaceLen+1)},
		{Instance: strings.Repeat("i", MaxInstanceLen+1)},
		{TTL: MinTTL - 1},
		{SafeGuard: -1},
		{Dialect: 7},
	} {
		cfg.DB = fake
		if cfg.Dialect == Detect {
			cfg.Dialect = PostgreSQL
		}
		if _, err := New(ctx, cfg); err == nil || strings.Contains(err.Error(), "fake driver") {
			t.Errorf("%+v: %v, want a validation error", cfg, err)
		}
	}
	// A valid config gets as far as the database.
	if _, err := New(ctx, Config{DB: fake, Dialect: MySQL}); err == nil || !strings.Contains(err.Error(), "fake driver") {
		t.Errorf("valid config: %v", err)
	}
	for driverName, want := range map[string]Dialect{"pgx": PostgreSQL, "mysql": MySQL} {
		db, err := sql.Open(driverName, "")
		if err != nil {
			t.Fatal(err)
		}
		if d, err := detectDialect(db); d != want || err != nil {
			t.Errorf("%s detected as %v, %v", driverName, d, err)
		}
		db.Close()
	}
	for d, want := range map[Dialect]string{Detect: "detect", PostgreSQL: "PostgreSQL", MySQL: "MySQL", 9: "Dialect(9)"} {
		if d.String() != want {
			t.Errorf("%d.String() = %q", int(d), d.String())
		}
	}
}

func TestDollarParams(t *testing.T) {
	if got := dollarParams("a = ? AND b = ?"); got != "a = $1 AND b = $2" {
		t.Fatal(got)
	}
}
