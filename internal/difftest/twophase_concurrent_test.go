package difftest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/shardconf"
)

// TestTwoPhaseConcurrentTransfersApplyExactlyTheCommittedOnes: workers
// move amounts between accounts (t_order rows on both data sources) in
// concurrent two-phase transactions, through sqlhook and gormplugin, while
// their own recovery runs every 100ms; some roll back, some fail at an xa
// stage, some stall at one for about the recovery timeout (so that
// recovery and the coordinator race for the decision). Afterwards, and
// after recovery, every account holds its opening amount plus exactly the
// transfers whose Commit returned nil or that recovery committed (an
// in-doubt one decided for commit, or undecided and not aborted), and no
// branch is left prepared. Additions commute, so no serial order is
// needed: a transfer half applied, or applied and reported failed, or
// reported committed and lost, shows as a wrong amount.
func TestTwoPhaseConcurrentTransfersApplyExactlyTheCommittedOnes(t *testing.T) {
	dbtest.SkipShort(t, "randomized two-phase commit")
	for _, name := range tpDBs() {
		for _, client := range []string{"sqlhook", "gorm"} {
			t.Run(name+"/"+client, func(t *testing.T) {
				r := newTPRunWith(t, name, client, "d2pcc_", tpConcurrentRecovery)
				r.transfers(4, max(tpTxs(t)/4, 5))
			})
		}
	}
}

// tpConcurrentRecovery: the clients' own recovery runs every 100ms.
const tpConcurrentRecovery = 100 * time.Millisecond

const (
	tpAccounts = 12
	tpOpening  = 1000
)

// tpTransfer is one transfer and what became of it.
type tpTransfer struct {
	from, to, amount int64
	applied          bool
	undecided        string // the GTRID of an in-doubt, undecided commit
}

func (r *tpRun) transfers(workers, each int) {
	t := r.t
	ctx := context.Background()
	for k := int64(1); k <= tpAccounts; k++ {
		r.w.exec(t, r.w.dsOf(r.target(k)), fmt.Sprintf("INSERT INTO %s (order_id, user_id, amount) VALUES (%d, %d, %d)",
			r.target(k).Table, k, tpUser(k), tpOpening))
	}
	t.Logf("seed %d, %d workers × %d transfers (replay: -difftest.seed=%d; timing varies)", r.seed, workers, each, r.seed)
	var mu sync.Mutex
	var done []tpTransfer
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(r.seed, uint64(w)+0x2fc))
			for range each {
				tr, out := r.transfer(ctx, rng)
				mu.Lock()
				done = append(done, tr)
				outcomes[out]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("outcomes: %v", outcomes)
	r.settleTransfers(ctx, done)
}

// target is where account k is stored: ds_<user MOD 2>.t_order_<k MOD 3>.
func (r *tpRun) target(k int64) shardconf.Target {
	return shardconf.Target{DataSource: fmt.Sprintf("ds_%d", tpDS(k)), Table: fmt.Sprintf("t_order_%d", k%3)}
}

// transfer runs one transfer in a transaction of its own.
func (r *tpRun) transfer(ctx context.Context, rng *rand.Rand) (tpTransfer, string) {
	a, b := 1+rng.Int64N(tpAccounts), 1+rng.Int64N(tpAccounts-1)
	if b >= a {
		b++
	}
	tr := tpTransfer{from: a, to: b, amount: 1 + rng.Int64N(50)}
	g := &tpGen{}
	// rows locked in key order: no deadlock across data sources, which
	// neither database could see
	if a < b {
		g.addAmount("debit", -tr.amount, a)
		g.addAmount("credit", tr.amount, b)
	} else {
		g.addAmount("credit", tr.amount, b)
		g.addAmount("debit", -tr.amount, a)
	}
	commit := rng.IntN(5) != 0
	hooks := &tpHooks{break_: -1}
	switch f := rng.IntN(20); {
	case f < 2:
		hooks.break_ = []xa.Stage{xa.StagePrepared, xa.StageDecided, xa.StageCommittedOne}[rng.IntN(3)]
	case f < 4:
		hooks.break_ = []xa.Stage{xa.StagePrepared, xa.StageDecided}[rng.IntN(2)]
		d := tpTimeout - 300*time.Millisecond + time.Duration(rng.IntN(600))*time.Millisecond
		hooks.kill = func() { time.Sleep(d) }
	}
	txCtx := tpWithHook(ctx, hooks.hook)
	tx, err := r.client.begin(txCtx, sql.LevelDefault)
	if err != nil {
		return tr, "begin failed"
	}
	dialect := &sqlGen{b: r.w.b}
	for _, it := range g.items {
		if _, err := tx.exec(txCtx, it, dialect.final(it.sql.text)); err != nil {
			tx.rollback()
			return tr, "statement failed: " + tpReason(err)
		}
	}
	if !commit {
		tx.rollback()
		return tr, "rolled back"
	}
	err = tx.commit()
	var doubt *xa.InDoubtError
	out := "commit failed"
	switch {
	case err == nil:
		tr.applied, out = true, "committed"
	case errors.As(err, &doubt) && doubt.Decided:
		tr.applied, out = true, "in doubt, decided"
	case errors.As(err, &doubt):
		tr.undecided, out = doubt.GTRID, "in doubt, undecided"
	}
	if hooks.broke {
		out += fmt.Sprintf(" (%s at %s)", map[bool]string{true: "stalled", false: "failed"}[hooks.kill != nil], hooks.break_)
	}
	return tr, out
}

// settleTransfers ends what is left prepared and compares every account
// with its opening amount plus the transfers applied.
func (r *tpRun) settleTransfers(ctx context.Context, done []tpTransfer) {
	t := r.t
	deadline := time.Now().Add(10 * tpTimeout)
	for {
		r.rec.Recover(ctx)
		left, err := r.prepared(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prepared branches left after recovery: %v", left)
		}
		time.Sleep(tpTimeout / 4)
	}
	want := map[int64]int64{}
	for k := int64(1); k <= tpAccounts; k++ {
		want[k] = tpOpening
	}
	applied := 0
	for _, tr := range done {
		if tr.undecided != "" {
			out, err := r.decision(ctx, tr.undecided)
			if err != nil {
				t.Fatal(err)
			}
			tr.applied = out != "A"
		}
		if tr.applied {
			applied++
			want[tr.from] -= tr.amount
			want[tr.to] += tr.amount
		}
	}
	s, err := r.w.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	for _, tg := range r.w.physical["t_order"] {
		for _, row := range s.phys[tg]["t_order"] {
			k, _ := strconv.ParseInt(row[0], 10, 64)
			a, _ := strconv.ParseInt(row[3], 10, 64)
			if _, dup := got[k]; dup {
				t.Errorf("account %d stored twice", k)
			}
			got[k] = a
		}
	}
	t.Logf("%d transfers, %d applied", len(done), applied)
	for k := int64(1); k <= tpAccounts; k++ {
		if got[k] != want[k] {
			t.Errorf("account %d (ds_%d) holds %d; its opening amount and the transfers applied make %d", k, tpDS(k), got[k], want[k])
		}
	}
}
