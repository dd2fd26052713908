package sqlhook_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/sqlhook"
)

// Transfers between accounts on different data sources, many at once,
// while the data sources are cut and the coordinator fails at random
// stages: no money is created or lost, every transfer Commit reported
// committed is in the balances, every one it reported failed (and not in
// doubt) is not, and recovery leaves no branch prepared.
func TestTwoPhaseTransferKeepsEveryBalanceUnderFaults(t *testing.T) {
	for _, p := range tpPairs(t, "transfer") {
		t.Run(p.name, func(t *testing.T) { tpTransfers(t, p) })
	}
}

const (
	tpAccounts       = 24 // ids 0..23: even on ds_0, odd on ds_1
	tpInitial        = 1000
	tpWorkers        = 6
	tpRounds         = 3
	tpPerWorkerRound = 20
)

var tpLevels = []sql.IsolationLevel{sql.LevelDefault, sql.LevelRepeatableRead, sql.LevelSerializable}

// tpOutcome is what Commit said of one transfer.
type tpOutcome struct {
	from, to, amount int64
	err              error
}

func tpTransfers(t *testing.T, p tpPair) {
	accounts := map[int64]int64{}
	for id := range int64(tpAccounts) {
		accounts[id] = tpInitial
	}
	p.seed(t, accounts)
	// The deployment's own recovery runs often, as a service's would, so
	// that branches left in doubt release their rows' locks soon.
	x := p.proxied(t, func(dsn string) string { return tpLockTimeout(p.driver, dsn) },
		sqlhook.WithTwoPhaseRecovery(5*time.Second, 100*time.Millisecond))
	// Each stage fails now and then: the coordinator's error path runs
	// beside other transactions' commits.
	x.hook.set(func(s xa.Stage, gtrid string) error {
		if rand.IntN(12) == 0 {
			return fmt.Errorf("injected fault at %s", s)
		}
		return nil
	})
	want := maps.Clone(accounts)
	var tally tpTally
	for round := range tpRounds {
		outs := tpRound(x)
		x.proxy[0].Resume()
		x.proxy[1].Resume()
		p.tpRecover(t, time.Second)
		for _, o := range outs {
			if tally.applied(t, p, o) {
				want[o.from] -= o.amount
				want[o.to] += o.amount
			}
		}
		got := p.balances(t)
		var total int64
		for _, b := range got {
			total += b
		}
		if total != tpAccounts*tpInitial {
			t.Errorf("round %d: total balance %d, want %d", round, total, tpAccounts*tpInitial)
		}
		if !tpSameBalances(got, want) {
			t.Errorf("round %d: balances %v, want %v (from the transfers reported committed)", round, got, want)
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("%s: %d transfers committed, %d failed and rolled back, %d in doubt (%d of them committed by recovery); failures by kind: %v",
		p.name, tally.ok, tally.failed, tally.doubt, tally.doubtCommitted, tally.kinds)
	if tally.ok == 0 || tally.failed == 0 {
		t.Errorf("faults and transfers did not both happen: %+v", tally)
	}
}

// tpTally counts the transfers' outcomes.
type tpTally struct {
	ok, failed, doubt, doubtCommitted int
	kinds                             map[string]int
}

// applied tells, once recovery has run, whether o's transfer must be in
// the balances: committed, or in doubt and committed by recovery.
func (c *tpTally) applied(t *testing.T, p tpPair, o tpOutcome) bool {
	var doubt *sqlhook.TxInDoubtError
	switch {
	case o.err == nil:
		c.ok++
		return true
	case errors.As(o.err, &doubt):
		c.doubt++
		// The log says: a rollback decision ('A', kept) or a commit
		// ('C', or no row once its branches are all committed and the
		// row collected).
		if doubt.Decided || p.decision(t, doubt.GTRID) != "A" {
			c.doubtCommitted++
			return true
		}
		return false
	case errors.Is(o.err, sqlhook.ErrTxInDoubt):
		t.Errorf("transfer error matches ErrTxInDoubt but is no *TxInDoubtError: %v", o.err)
		return false
	}
	c.failed++
	if c.kinds == nil {
		c.kinds = map[string]int{}
	}
	c.kinds[tpErrKind(o.err)]++
	return false
}

// tpRound runs the workers' transfers while a goroutine cuts and resumes
// the data sources' proxies, and returns every transfer's outcome.
func tpRound(x *tpProxied) []tpOutcome {
	var (
		mu   sync.Mutex
		outs []tpOutcome
		wg   sync.WaitGroup
	)
	stop := make(chan struct{})
	var faults sync.WaitGroup
	faults.Go(func() { tpCutNowAndThen(x, stop) })
	for range tpWorkers {
		wg.Go(func() {
			for range tpPerWorkerRound {
				o := tpRandomTransfer(x)
				mu.Lock()
				outs = append(outs, o)
				mu.Unlock()
				if o.err != nil {
					// Back off as a client would, or a cut spends
					// every transfer of the round in a few ms.
					time.Sleep(time.Duration(20+rand.IntN(30)) * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	faults.Wait()
	return outs
}

// tpCutNowAndThen cuts one data source's proxy for a few ms every few
// hundred ms, until stop is closed.
func tpCutNowAndThen(x *tpProxied, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(300+rand.IntN(300)) * time.Millisecond):
		}
		i := rand.IntN(2)
		x.proxy[i].Cut()
		time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
		x.proxy[i].Resume()
	}
}

// tpRandomTransfer moves a random amount between an account of each data
// source, either way; some at stricter isolation, whose serialization
// failures (on PostgreSQL possibly at PREPARE TRANSACTION) must roll back
// every branch too.
func tpRandomTransfer(x *tpProxied) tpOutcome {
	a := 2 * rand.Int64N(tpAccounts/2)
	b := 2*rand.Int64N(tpAccounts/2) + 1
	if rand.IntN(2) == 0 {
		a, b = b, a
	}
	amount := 1 + rand.Int64N(50)
	var opts *sql.TxOptions
	if lvl := tpLevels[rand.IntN(len(tpLevels))]; lvl != sql.LevelDefault {
		opts = &sql.TxOptions{Isolation: lvl}
	}
	err := tpTransferWith(context.Background(), x.tpPair, x.db, a, b, amount, opts)
	return tpOutcome{from: a, to: b, amount: amount, err: err}
}

// tpLockTimeout makes a statement waiting on a row lock fail after a
// second: a branch left prepared until recovery holds its rows' locks,
// and the transfers reaching them must fail rather than wait for it.
func tpLockTimeout(driver, dsn string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	if driver == "pgx" {
		return dsn + sep + "lock_timeout=1000"
	}
	return dsn + sep + "innodb_lock_wait_timeout=1"
}

// tpErrKind shortens an error to what kind of failure it is, for the log.
func tpErrKind(err error) string {
	s := err.Error()
	for _, k := range []string{"injected fault", "lock", "Lock", "deadlock", "serializ", "40001", "refused", "EOF", "broken pipe", "bad connection", "timeout", "connection"} {
		if strings.Contains(s, k) {
			return k
		}
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// tpEnvTransfers makes TestTwoPhaseTransferChildProcess run transfers
// until it is killed.
const tpEnvTransfers = "SHARDKEY_TP_CHILD_TRANSFERS"

// TestTwoPhaseTransferChildProcess is the process the next test kills:
// workers transfer between the data sources until then.
func TestTwoPhaseTransferChildProcess(t *testing.T) {
	if os.Getenv(tpEnvTransfers) == "" {
		t.Skip("runs as the child of TestTwoPhaseTransferSurvivesTheProcessKilledAnywhere")
	}
	p := tpPair{driver: os.Getenv(tpEnvDriver), dsn: [2]string{os.Getenv(tpEnvDSN0), os.Getenv(tpEnvDSN1)}}
	db := p.open(t, p.dsn, sqlhook.WithTwoPhaseRecovery(time.Hour, -1))
	// Each transfer is told on stdout before it commits (T n from to
	// amount) and after (C n committed, R n rolled back, D n 1|0 in
	// doubt and decided or not), so the parent can tell which it must
	// find applied, which not, and which are unknown (cut by the kill).
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		seq int
	)
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	for range tpWorkers {
		wg.Go(func() {
			for {
				a, b := 2*rand.Int64N(tpAccounts/2), 2*rand.Int64N(tpAccounts/2)+1
				if rand.IntN(2) == 0 {
					a, b = b, a
				}
				amount := 1 + rand.Int64N(50)
				mu.Lock()
				seq++
				n := seq
				mu.Unlock()
				say("T %d %d %d %d", n, a, b, amount)
				err := tpTransfer(context.Background(), p, db, a, b, amount)
				var doubt *sqlhook.TxInDoubtError
				switch {
				case err == nil:
					say("C %d", n)
				case errors.As(err, &doubt):
					say("D %d %t", n, doubt.Decided)
				default:
					say("R %d", n)
				}
			}
		})
	}
	wg.Wait()
}

// tpChildLog is what the child said of its transfers.
type tpChildLog struct {
	transfers map[int]tpOutcome
	status    map[int]string // "C", "R", "D true", "D false"; none: cut by the kill
}

func tpParseChild(out string) tpChildLog {
	l := tpChildLog{transfers: map[int]tpOutcome{}, status: map[int]string{}}
	lines := strings.Split(out, "\n")
	for _, line := range lines[:len(lines)-1] { // the last may be cut short
		var (
			n            int
			from, to, am int64
			decided      bool
		)
		switch {
		case strings.HasPrefix(line, "T "):
			if _, err := fmt.Sscanf(line, "T %d %d %d %d", &n, &from, &to, &am); err == nil {
				l.transfers[n] = tpOutcome{from: from, to: to, amount: am}
			}
		case strings.HasPrefix(line, "D "):
			if _, err := fmt.Sscanf(line, "D %d %t", &n, &decided); err == nil {
				l.status[n] = fmt.Sprintf("D %t", decided)
			}
		case strings.HasPrefix(line, "C "), strings.HasPrefix(line, "R "):
			if _, err := fmt.Sscanf(line[2:], "%d", &n); err == nil {
				l.status[n] = line[:1]
			}
		}
	}
	return l
}

// tpExplain checks balances got against before plus the transfers the
// child reported committed (or decided), the difference being made of
// some of the transfers whose outcome it could not report; it returns
// what is wrong, or "".
func tpExplain(before, got map[int64]int64, l tpChildLog) (string, int) {
	want := maps.Clone(before)
	var unknown []tpOutcome
	committed := 0
	for n, tr := range l.transfers {
		switch l.status[n] {
		case "C", "D true":
			committed++
			want[tr.from] -= tr.amount
			want[tr.to] += tr.amount
		case "", "D false":
			unknown = append(unknown, tr)
		}
	}
	if len(unknown) > 16 {
		return "", committed // too many to try every subset: the total is checked alone
	}
	for mask := 0; mask < 1<<len(unknown); mask++ {
		try := maps.Clone(want)
		for i, tr := range unknown {
			if mask&(1<<i) != 0 {
				try[tr.from] -= tr.amount
				try[tr.to] += tr.amount
			}
		}
		if tpSameBalances(try, got) {
			return "", committed
		}
	}
	return fmt.Sprintf("balances %v are not those before %v plus the %d transfers reported committed and some of the %d unknown %v",
		got, before, committed, len(unknown), unknown), committed
}

// TestTwoPhaseTransferSurvivesTheProcessKilledAnywhere kills (SIGKILL) a
// process running concurrent transfers at a random moment, wherever its
// transactions are, and lets three deployments recover at once (as three
// restarting processes would): no money is created or lost, and no branch
// stays prepared.
func TestTwoPhaseTransferSurvivesTheProcessKilledAnywhere(t *testing.T) {
	for _, p := range tpPairs(t, "killany") {
		t.Run(p.name, func(t *testing.T) {
			accounts := map[int64]int64{}
			for id := range int64(tpAccounts) {
				accounts[id] = tpInitial
			}
			p.seed(t, accounts)
			p.open(t, p.dsn).Close() // creates the decision log, as a deployment's first start
			committed := 0
			before := p.balances(t)
			for round := range 4 {
				cmd := exec.Command(os.Args[0], "-test.run=^TestTwoPhaseTransferChildProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), tpEnvTransfers+"=1", tpEnvDriver+"="+p.driver,
					tpEnvDSN0+"="+p.dsn[0], tpEnvDSN1+"="+p.dsn[1])
				var out strings.Builder
				cmd.Stdout = &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(800+rand.IntN(1200)) * time.Millisecond)
				cmd.Process.Kill()
				cmd.Wait()
				left := len(p.prepared(t, 0)) + len(p.prepared(t, 1))
				p.tpRecoverBy(t, 3, time.Second)
				got := p.balances(t)
				var total int64
				for _, b := range got {
					total += b
				}
				wrong, n := tpExplain(before, got, tpParseChild(out.String()))
				committed += n
				t.Logf("round %d: %d transfers reported committed before the kill, %d branches left prepared by it, total after recovery %d", round, n, left, total)
				if total != tpAccounts*tpInitial {
					t.Fatalf("round %d: total balance %d after recovery, want %d", round, total, tpAccounts*tpInitial)
				}
				if wrong != "" {
					t.Fatalf("round %d: %s", round, wrong)
				}
				before = got
			}
			if committed == 0 {
				t.Errorf("no transfer committed before the kills: the test tested nothing")
			}
		})
	}
}
