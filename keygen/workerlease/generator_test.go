package workerlease

// Key-level tests: generators built with keygen.WithWorkerSource on a
// Source, against real PostgreSQL and MariaDB.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

type closingGenerator interface {
	keygen.IDGenerator
	Close() error
}

func leasedGenerator(t testing.TB, s *Source, opts ...keygen.Option) closingGenerator {
	t.Helper()
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, append(opts, keygen.WithWorkerSource(s))...)
	if err != nil {
		t.Fatalf("NewID: %v", err)
	}
	cg, ok := g.(closingGenerator)
	if !ok {
		t.Fatal("a leased generator is not an io.Closer")
	}
	t.Cleanup(func() { cg.Close() })
	return cg
}

func workerOf(t testing.TB, g keygen.IDGenerator, id int64) int64 {
	t.Helper()
	p, err := g.(keygen.Decomposer).Decompose(id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Worker
}

// TestGeneratorsConcurrentNoDuplicates: 64 generators built at once get 64
// distinct worker ids, and their keys, generated concurrently, never repeat.
func TestGeneratorsConcurrentNoDuplicates(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		db := b.open(t, "")
		warmPool(t, db, 16)
		s := newSource(t, db, Config{})
		const n, per = 64, 2000
		gens := make([]closingGenerator, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range gens {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(s))
				if err != nil {
					errs <- err
					return
				}
				gens[i] = g.(closingGenerator)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		keys := make([][]int64, n)
		for i, g := range gens {
			t.Cleanup(func() { g.Close() })
			wg.Add(1)
			go func() {
				defer wg.Done()
				keys[i] = make([]int64, per)
				for k := range keys[i] {
					id, err := g.NextID(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					keys[i][k] = id
				}
			}()
		}
		wg.Wait()
		seen := make(map[int64]bool, n*per)
		workers := map[int64]bool{}
		for i, ks := range keys {
			workers[workerOf(t, gens[i], ks[0])] = true
			for _, id := range ks {
				if seen[id] {
					t.Fatalf("key %d issued twice", id)
				}
				seen[id] = true
			}
		}
		if len(workers) != n {
			t.Fatalf("%d generators got %d distinct workers", n, len(workers))
		}
		for _, g := range gens {
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

const keyHelperCount = "WORKERLEASE_HELPER_KEYS"

// TestKeyHelperProcess is a child of TestGeneratorProcessesNoDuplicates:
// it builds a leased generator, prints its keys, and closes it.
func TestKeyHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" || os.Getenv(keyHelperCount) == "" {
		t.Skip("helper process for TestGeneratorProcessesNoDuplicates")
	}
	n, _ := strconv.Atoi(os.Getenv(keyHelperCount))
	b := backend{driver: os.Getenv(helperDriver), dsn: os.Getenv(helperDSN)}
	s := newSource(t, b.open(t, ""), Config{Namespace: os.Getenv(helperNS), TTL: 2 * time.Second})
	g := leasedGenerator(t, s)
	w := bufio.NewWriter(os.Stdout)
	for range n {
		id, err := g.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(w, id)
	}
	w.Flush()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGeneratorProcessesNoDuplicates: 8 processes, each with its own
// leased generator, issue keys at once; no key repeats. (That 8 processes
// holding leases at once get 8 worker ids is TestEightProcesses.)
func TestGeneratorProcessesNoDuplicates(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		t.Skip("in a helper process")
	}
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		s := newSource(t, b.open(t, ""), Config{})
		const procs, per = 8, 20000
		outs := make([][]int64, procs)
		var wg sync.WaitGroup
		for i := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^TestKeyHelperProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), helperEnv+"=1", keyHelperCount+"="+strconv.Itoa(per),
					helperDriver+"="+b.driver, helperDSN+"="+b.dsn, helperNS+"="+s.Namespace())
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Error(err)
					return
				}
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				outs[i] = readKeys(out)
				if err := cmd.Wait(); err != nil {
					t.Errorf("process %d: %v\n%s", i, err, stderr.String())
				}
			}()
		}
		wg.Wait()
		seen := map[int64]bool{}
		workers := map[int64]bool{}
		l, _ := keygen.LayoutFor("SNOWFLAKE", nil)
		for i, ks := range outs {
			if len(ks) != per {
				t.Fatalf("process %d printed %d keys, want %d", i, len(ks), per)
			}
			p, _ := l.Decompose(ks[0])
			workers[p.Worker] = true
			for _, id := range ks {
				if seen[id] {
					t.Fatalf("key %d issued twice", id)
				}
				seen[id] = true
			}
		}
		// A process that finished early may have released its worker id to
		// a later one: the ids need not all differ, the keys must.
		if len(workers) < 2 {
			t.Errorf("%d processes used only worker ids %v", procs, workers)
		}
	})
}

func readKeys(r io.Reader) []int64 {
	var out []int64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if id, err := strconv.ParseInt(strings.TrimSpace(sc.Text()), 10, 64); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// TestGeneratorFencedWhileDatabaseUnreachable: with the database cut off
// the generator keeps issuing until its lease may have expired, then
// returns ErrLeaseLost; once a renewal succeeds it resumes, and no key
// repeats.
func TestGeneratorFencedWhileDatabaseUnreachable(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		dsn, p := b.viaProxy(t)
		s := newSource(t, b.open(t, dsn), Config{TTL: shortTTL, SafeGuard: time.Minute})
		g := leasedGenerator(t, s)
		ctx := context.Background()
		seen := map[int64]bool{}
		issue := func() error {
			id, err := g.NextID(ctx)
			if err == nil {
				if seen[id] {
					t.Fatalf("key %d issued twice", id)
				}
				seen[id] = true
			}
			return err
		}
		if err := issue(); err != nil {
			t.Fatal(err)
		}
		p.Cut()
		cut := time.Now()
		var lostAt time.Duration
		waitFor(t, 10*time.Second, "ErrLeaseLost", func() bool {
			err := issue()
			if errors.Is(err, keygen.ErrLeaseLost) {
				lostAt = time.Since(cut)
				return true
			}
			if err != nil {
				t.Fatalf("while cut off: %v", err)
			}
			return false
		})
		if lostAt > shortTTL+time.Second {
			t.Errorf("keys issued %v after the cut, beyond the %v lease", lostAt, shortTTL)
		}
		before := len(seen)
		p.Resume()
		waitFor(t, 10*time.Second, "keys again after the database came back", func() bool { return issue() == nil })
		if len(seen) <= before {
			t.Fatal("no key after recovery")
		}
		st := g.(keygen.StatsReporter).Stats()
		if st.LeaseFailures == 0 || st.LeaseRefusals == 0 {
			t.Errorf("stats %+v", st)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestGeneratorRestartBehindLastUse: a worker id released after issuing
// keys at time T is not reused by a generator whose clock reads well
// before T; within the tolerance the generator waits past T.
func TestGeneratorRestartBehindLastUse(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		s := newSource(t, b.open(t, ""), Config{})
		late := keygentest.NewClock(start.Add(10 * time.Second))
		g := leasedGenerator(t, s, keygen.WithClock(late))
		last, err := g.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		w := workerOf(t, g, last)
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		// The slot is free again (a clean release), but its last use is
		// 10 s after this clock: refused.
		_, err = keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"},
			keygen.WithClock(keygentest.NewClock(start)), keygen.WithWorkerSource(s))
		var cb *keygen.ClockBackwardsError
		if !errors.As(err, &cb) {
			t.Fatalf("a clock 10 s behind the worker's last use: %v, want *ClockBackwardsError", err)
		}
		// 5 ms behind, within the default 10 ms tolerance: it waits.
		near := keygentest.NewClock(start.Add(10*time.Second - 5*time.Millisecond))
		g2 := leasedGenerator(t, s, keygen.WithClock(near))
		id, err := g2.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if workerOf(t, g2, id) != w {
			t.Fatalf("worker %d, want the released %d", workerOf(t, g2, id), w)
		}
		if id <= last {
			t.Fatalf("key %d at or before the last one %d of worker %d", id, last, w)
		}
		if len(near.Sleeps()) == 0 {
			t.Error("the generator did not wait for its clock")
		}
		g2.Close()
	})
}

// TestDisposableWorkers: Baidu's mode for UID, a new worker id per start;
// exhaustion is an error, announced before it happens.
func TestDisposableWorkers(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		table := "wn_" + strings.ToLower(randomHex(4))
		db := b.open(t, "")
		t.Cleanup(func() { db.Exec("DROP TABLE " + table) })
		var logs strings.Builder
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		d, err := NewDisposable(context.Background(), DisposableConfig{DB: db, Table: table, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		// A UID layout with 4 worker bits: ids 1..15 (id 0 is never issued).
		props := keygen.Props{"worker-id": "auto", "time-bits": "40", "worker-bits": "4", "sequence-bits": "19"}
		seen := map[int64]bool{}
		workers := map[int64]bool{}
		for range 15 {
			g, err := keygen.NewID("UID", props, keygen.WithWorkerSource(d))
			if err != nil {
				t.Fatal(err)
			}
			id, err := g.NextID(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] {
				t.Fatalf("key %d twice", id)
			}
			seen[id] = true
			workers[workerOf(t, g, id)] = true
		}
		if len(workers) != 15 {
			t.Fatalf("15 starts used %d worker ids", len(workers))
		}
		if !strings.Contains(logs.String(), "running out") {
			t.Errorf("no warning before exhaustion:\n%s", logs.String())
		}
		if n, err := d.Remaining(context.Background(), 15); err != nil || n != 0 {
			t.Errorf("Remaining = %d, %v", n, err)
		}
		if _, err := keygen.NewID("UID", props, keygen.WithWorkerSource(d)); !errors.Is(err, ErrWorkersExhausted) {
			t.Fatalf("16th start: %v, want ErrWorkersExhausted", err)
		}
	})
}

// TestStateFileFallback: a worker id granted while the database was up is
// reused from the file when it is down, after the keys issued before.
func TestStateFileFallback(t *testing.T) {
	checkLeaks(t)
	forEachDB(t, func(t *testing.T, b backend) {
		dsn, p := b.viaProxy(t)
		s := newSource(t, b.open(t, dsn), Config{})
		path := filepath.Join(t.TempDir(), "workerid.json")
		src := StateFile{Source: s, Path: path}
		clock := keygentest.NewClock(start)
		g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(src), keygen.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		first, _ := g.NextID(context.Background())
		w := workerOf(t, g, first)
		clock.Add(time.Second)
		last, _ := g.NextID(context.Background())
		g.(closingGenerator).Close()

		p.Cut()
		if _, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(s)); err == nil {
			t.Fatal("the source alone worked while the database was cut off")
		}
		g2, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "auto"}, keygen.WithWorkerSource(src),
			keygen.WithClock(keygentest.NewClock(start.Add(time.Second))))
		if err != nil {
			t.Fatalf("fallback to the state file: %v", err)
		}
		id, err := g2.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if workerOf(t, g2, id) != w || id <= last {
			t.Fatalf("from the file: key %d (worker %d), last before %d (worker %d)", id, workerOf(t, g2, id), last, w)
		}
		g2.(closingGenerator).Close()
		p.Resume()
	})
}
