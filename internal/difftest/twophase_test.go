package difftest

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
)

// The two-phase-commit tester: seeded random transactions through
// sqlhook.WithTwoPhaseCommit over two data sources (and, in the gorm run,
// gormplugin.WithTwoPhaseCommit), on a PostgreSQL pair and a MariaDB
// pair, and the same statements in one transaction on the unsharded
// oracle. A transaction is one to six writes (inserts of one row or of
// rows on both data sources, updates, deletes, a row moved to the other
// data source, an amount transferred between rows, broadcast writes,
// duplicate keys, an UPDATE of the sharding column, reads of counts and
// sums, up to three savepoints rolled back to or released), then COMMIT
// or ROLLBACK (GORM: through Begin or inside db.Transaction); one in
// eight is a single statement outside a transaction, atomic too. Faults: a branch's session killed before Commit or between
// statements; PostgreSQL's deferred trigger refusing an amount at
// PREPARE; the decision log refusing its INSERT; and, through
// xa.WithTestHook on BeginTx's context, an error at xa's prepared, decided
// or first-committed stage, every session of a data source killed at the
// prepared or decided stage, or Commit stalled there for about recovery's
// timeout while recovery runs every 20ms.
//
// After each transaction (and recovery, when its outcome was in doubt):
// the oracle has applied it iff Commit returned nil or recovery committed
// it; an error before the decision is logged is a plain error, after it
// an *InDoubtError{Decided: true} that recovery commits; the union of the
// physical tables equals the oracle row for row (and every row sits where
// it routes, every broadcast copy equals the oracle's); no prepared
// branch is left, as read directly and through xa's List; every accepted
// statement affected as many rows as on the oracle; on PostgreSQL a
// transaction with a failed statement no ROLLBACK TO undid does not
// commit.
//
//	SHARDKEY_REQUIRE_DB=1 go test ./internal/difftest/ -run TestTwoPhaseCommitAgreesWithOracle -v \
//	    -difftest.steps=5000 -difftest.seed=7 -difftest.keepgoing -timeout 0
//
// Without -difftest.steps, SHARDKEY_DIFF2PC_TXS (default tpDefaultTxs)
// gives the transactions per database and client; -difftest.db,
// -difftest.client, -difftest.seed, -difftest.keepgoing and
// -difftest.name work as for the write tester. A failing seed replays
// with the -difftest.seed and -difftest.steps it prints (the kills and
// stalls aside, whose timing may differ); SHARDKEY_DIFF2PC_TRACE=1 logs
// each statement's answer through shardkey.

const (
	tpDefaultTxs = 60
	tpTimeout    = time.Second // xa's Timeout: an undecided branch older than this is aborted by recovery
)

// errInjected is what the test hook returns at the stage it breaks.
var errInjected = errors.New("difftest: injected two-phase-commit fault")

// tpTxs is the number of transactions per run.
func tpTxs(t testing.TB) int {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "difftest.steps" })
	if set {
		return *flagSteps
	}
	if v := os.Getenv("SHARDKEY_DIFF2PC_TXS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SHARDKEY_DIFF2PC_TXS=%q: want a positive number", v)
		}
		return n
	}
	return tpDefaultTxs
}

// tpDBs is the databases -difftest.db asks for that have two-phase
// commit (SQLite has none).
func tpDBs() []string {
	var out []string
	for _, d := range strings.Split(*flagDB, ",") {
		if d == "postgres" || d == "mariadb" {
			out = append(out, d)
		}
	}
	return out
}

func TestTwoPhaseCommitAgreesWithOracle(t *testing.T) {
	dbtest.SkipShort(t, "randomized two-phase commit")
	for _, name := range tpDBs() {
		t.Run(name, func(t *testing.T) {
			for _, client := range []string{"sqlhook", "gorm"} {
				if !strings.Contains(*flagClient, client) {
					continue
				}
				t.Run(client, func(t *testing.T) {
					r := newTPRun(t, name, client)
					r.run(tpTxs(t))
				})
			}
		})
	}
}

// tpClient begins transactions through shardkey.
type tpClient interface {
	begin(ctx context.Context, iso sql.IsolationLevel) (tpShardTx, error) // iso 0: no TxOptions
	// auto runs statements outside a transaction; its commit returns the
	// last statement's error
	auto() tpShardTx
}

type tpShardTx interface {
	exec(ctx context.Context, it tpItem, text string) (int64, error)
	// read runs a read item: a count and a sum ("" for NULL)
	read(ctx context.Context, it tpItem, text string) (int64, string, error)
	commit() error
	rollback() error
}

// tpRun is one database and client.
type tpRun struct {
	t       *testing.T
	w       *world
	client  tpClient
	rec     *xa.Coordinator // recovery and listing, over plain pools
	seed    uint64
	logDB   [2]string // the data sources' database names
	model   tpModel
	stats   tpStats
	divs    int
	hookers bool
	gorm    bool
	// stopLoop ends the recovery loop a stalled Commit started
	stopLoop func()
	lastErr  error // the last statement's error through shardkey
}

type tpStats struct {
	reads, readErrs                                                                               int
	txs, stmts, stmtErrs, committed, rolledBack, commitErrs, inDoubt, recCommitted, recRolledBack int
	faults                                                                                        map[string]int
	errs                                                                                          map[string]int // first failed statement of a transaction, by kind and reason
}

func newTPRun(t *testing.T, name, client string) *tpRun {
	t.Helper()
	return newTPRunWith(t, name, client, "d2pc_", -1)
}

// newTPRunWith opens a run in databases named prefix..., whose clients'
// own recovery runs every interval (negative: never).
func newTPRunWith(t *testing.T, name, client, prefix string, interval time.Duration) *tpRun {
	t.Helper()
	b := openBackendNamed(t, name, prefix+*flagName+client)
	w := newWorld(t, b)
	r := &tpRun{t: t, w: w, seed: *flagSeed, hookers: tpHookAvailable, stats: tpStats{faults: map[string]int{}, errs: map[string]int{}}}
	r.logDB = tpDBNames(t, w)
	if name == "postgres" {
		r.addTrigger()
	}
	switch client {
	case "sqlhook":
		r.client = newTPSQLClient(t, w, interval)
	case "gorm":
		r.client, r.gorm = newTPGormClient(t, w, interval), true
	}
	r.rec = r.recoverer()
	r.model = tpModel{orders: map[int64]int64{}, dict: map[string]bool{}}
	return r
}

// tpDBNames reads each data source's database name (the log's is ds_0's).
func tpDBNames(t *testing.T, w *world) [2]string {
	var out [2]string
	q := "SELECT current_database()"
	if w.b.mysql {
		q = "SELECT DATABASE()"
	}
	for i, db := range w.ds {
		if err := db.QueryRow(q).Scan(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// addTrigger makes an amount of tpPoison fail at commit on PostgreSQL: a
// deferred constraint trigger on every physical t_order table and on the
// oracle's, so a branch holding such a row fails PREPARE TRANSACTION (a
// one-branch transaction, COMMIT), as the oracle's COMMIT does.
func (r *tpRun) addTrigger() {
	fn := `CREATE FUNCTION tp_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE bad boolean;
BEGIN
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE amount = ` + strconv.Itoa(tpPoison) + `)', TG_TABLE_NAME) INTO bad;
  IF bad THEN RAISE EXCEPTION 'difftest: amount ` + strconv.Itoa(tpPoison) + ` refused at commit'; END IF;
  RETURN NULL;
END $$`
	trig := func(db *sql.DB, table string) {
		r.w.exec(r.t, db, fmt.Sprintf("CREATE CONSTRAINT TRIGGER tp_refuse AFTER INSERT OR UPDATE ON %s "+
			"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tp_refuse()", table))
	}
	for _, db := range []*sql.DB{r.w.ds[0], r.w.ds[1], r.w.oracle} {
		r.w.exec(r.t, db, fn)
	}
	for _, tg := range r.w.physical["t_order"] {
		trig(r.w.dsOf(tg), tg.Table)
	}
	trig(r.w.oracle, "t_order")
}

// recoverer is a coordinator of its own over plain pools of the data
// sources, with the log sqlhook uses: several recoverers are safe.
func (r *tpRun) recoverer() *xa.Coordinator {
	d := dialect.Postgres
	if r.w.b.mysql {
		d = dialect.MySQL
	}
	c, err := xa.New(xa.Config{LogSource: "ds_0", Timeout: tpTimeout, Interval: -1,
		Logger: slog.New(slog.DiscardHandler)},
		[]xa.Source{{Name: "ds_0", Dialect: d, DB: r.w.ds[0]}, {Name: "ds_1", Dialect: d, DB: r.w.ds[1]}})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	return c
}

func (r *tpRun) run(n int) {
	t := r.t
	t.Logf("seed %d, %d transactions (replay: -difftest.seed=%d -difftest.steps=%d)", r.seed, n, r.seed, n)
	start := time.Now()
	for i := range n {
		x := tpBuild(r.seed, i, r.model, tpGen{postgres: !r.w.b.mysql, hooks: r.hookers, noDict: r.gorm})
		if problems := r.runTx(x); len(problems) > 0 {
			r.divs++
			t.Errorf("seed %d, divergence at %s\n  %s\n(replay: go test -run 'TestTwoPhaseCommitAgreesWithOracle/%s' -difftest.seed=%d -difftest.steps=%d)",
				r.seed, x, strings.Join(problems, "\n  "), strings.TrimPrefix(t.Name(), "TestTwoPhaseCommitAgreesWithOracle/"), r.seed, i+1)
			if !*flagKeepGoing {
				break
			}
			r.resync()
		}
	}
	s := r.stats
	t.Logf("%d transactions (%d statements, %d failed; %d reads, %d failed) in %v: %d committed, %d rolled back, %d commits failed, %d in doubt (recovery: %d committed, %d rolled back); faults %v; %d divergences",
		s.txs, s.stmts, s.stmtErrs, s.reads, s.readErrs, time.Since(start).Round(time.Millisecond), s.committed, s.rolledBack, s.commitErrs,
		s.inDoubt, s.recCommitted, s.recRolledBack, s.faults, r.divs)
	if testing.Verbose() {
		for _, k := range slices.Sorted(maps.Keys(s.errs)) {
			t.Logf("  %4d  %s", s.errs[k], k)
		}
	}
}

// resync empties every table and ends every branch after a divergence
// (with -difftest.keepgoing).
func (r *tpRun) resync() {
	ctx := context.Background()
	time.Sleep(tpTimeout)
	if _, err := r.rec.Recover(ctx); err != nil {
		r.t.Logf("recover: %v", err)
	}
	r.w.reset(r.t)
	r.model = tpModel{orders: map[int64]int64{}, dict: map[string]bool{}}
}
