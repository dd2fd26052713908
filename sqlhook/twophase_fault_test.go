package sqlhook_test

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// tpRules is testdata/rules/twophase_accounts.yaml: t_account on ds_0
// (even ids) and ds_1 (odd ids). A fmt format: driver, DSN, driver, DSN.
var tpRules = tpReadTestdata("rules/twophase_accounts.yaml")

// tpLogTable is the decision log's default table, which these tests use.
const tpLogTable = "shardkey_xa_log"

// tpPair is two physical databases of one kind serving as ds_0 and ds_1,
// each holding t_account(id, balance).
type tpPair struct {
	name, driver string
	dsn          [2]string // direct, not through a proxy
	db           [2]string // database names (ds_0's holds the decision log)
}

// tpPostgresPair and tpMariaDBPair create fresh databases named after tag
// and this process, dropped when the test ends: two processes running
// these tests at once (two people's go test) never share a database, and
// a process's prepared branches never block another's.
func tpPostgresPair(t testing.TB, tag string) tpPair {
	t.Helper()
	p := tpPair{name: "postgres", driver: "pgx"}
	for i := range 2 {
		name := fmt.Sprintf("tp_%s_%d_%d", tag, os.Getpid(), i)
		p.dsn[i] = dbtest.Postgres(t, name)
		p.db[i] = "shardkey_" + name
		tpDropOnCleanup(t, "pgx", tpEnv("SHARDKEY_PG_DSN", dbtest.DefaultPostgresDSN), `DROP DATABASE IF EXISTS `+p.db[i]+` WITH (FORCE)`)
	}
	p.setup(t)
	return p
}

func tpMariaDBPair(t testing.TB, tag string) tpPair {
	t.Helper()
	p := tpPair{name: "mariadb", driver: "mysql"}
	for i := range 2 {
		name := fmt.Sprintf("tp_%s_%d_%d", tag, os.Getpid(), i)
		p.dsn[i] = dbtest.MySQL(t, name)
		p.db[i] = "shardkey_" + name
		tpDropOnCleanup(t, "mysql", tpEnv("SHARDKEY_MYSQL_DSN", dbtest.DefaultMySQLDSN), `DROP DATABASE IF EXISTS `+p.db[i])
	}
	p.setup(t)
	return p
}

func tpEnv(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// tpDropOnCleanup drops a test's database when it ends (after the
// cleanups registered later, which roll back its prepared branches).
func tpDropOnCleanup(t testing.TB, driver, admin, drop string) {
	t.Cleanup(func() {
		db, err := sql.Open(driver, admin)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer db.Close()
		if _, err := db.Exec(drop); err != nil {
			t.Errorf("cleanup: %s: %v", drop, err)
		}
	})
}

// tpPairs is both kinds that support two-phase commit.
func tpPairs(t *testing.T, tag string) []tpPair {
	t.Helper()
	return []tpPair{tpPostgresPair(t, tag), tpMariaDBPair(t, tag)}
}

// setup creates t_account in both databases and makes sure no prepared
// branch of this pair outlives the test (a leftover holds locks and keeps
// PostgreSQL from dropping the database).
func (p tpPair) setup(t testing.TB) {
	t.Helper()
	for i := range 2 {
		tpExec(t, p.direct(t, i), `CREATE TABLE t_account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)`)
	}
	t.Cleanup(func() {
		for i := range 2 {
			for _, b := range p.prepared(t, i) {
				if err := p.rollbackBranch(i, b); err != nil {
					t.Errorf("cleanup: roll back %s on ds_%d: %v", b, i, err)
				}
			}
		}
	})
}

// branchPrefix is how every GTRID of this pair's deployment begins
// ("sk1:<logtag>:"), as the engine reads it from the decision log
// (tpLogTable in ds_0) without changing anything: the tests do not
// compute the logtag, whose recipe is the engine's. ok is false while
// there is no log (no deployment has opened yet: no branch can be ours).
func (p tpPair) branchPrefix() (prefix string, ok bool, err error) {
	d := dialect.Postgres
	if p.driver == "mysql" {
		d = dialect.MySQL
	}
	var srcs []xa.Source
	for i := range 2 {
		db, err := p.rawOpen(i)
		if err != nil {
			return "", false, err
		}
		defer db.Close()
		srcs = append(srcs, xa.Source{Name: fmt.Sprintf("ds_%d", i), Dialect: d, DB: db})
	}
	c, err := xa.New(xa.Config{LogTable: tpLogTable, Interval: -1, Logger: slog.New(slog.DiscardHandler)}, srcs)
	if err != nil {
		return "", false, err
	}
	defer c.Close()
	switch err := c.Attach(context.Background()); {
	case errors.Is(err, xa.ErrNoLog):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return c.BranchPrefix(), true, nil
}

// config is the rules with ds_i at dsns[i] (direct or through a proxy).
func (p tpPair) config(t testing.TB, dsns [2]string) *shardconf.Config {
	t.Helper()
	cfg, err := shardconf.Parse(fmt.Appendf(nil, tpRules, p.driver, dsns[0], p.driver, dsns[1]))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// open opens the pair through sqlhook with two-phase commit at dsns.
func (p tpPair) open(t testing.TB, dsns [2]string, opts ...sqlhook.Option) *sql.DB {
	t.Helper()
	// Recovery logs to slog.Default without WithLogger: the tests check
	// the databases instead.
	opts = append([]sqlhook.Option{sqlhook.WithTwoPhaseCommit(), sqlhook.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	db, err := sqlhook.Open(p.config(t, dsns), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// direct opens data source i without sqlhook or proxy.
func (p tpPair) direct(t testing.TB, i int) *sql.DB {
	t.Helper()
	db, err := sql.Open(p.driver, p.dsn[i])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rawOpen opens data source i without t (for cleanups and children).
func (p tpPair) rawOpen(i int) (*sql.DB, error) { return sql.Open(p.driver, p.dsn[i]) }

// tpBranch is a prepared branch as the database lists it.
type tpBranch struct{ gtrid, bqual string }

func (b tpBranch) String() string { return b.gtrid + "/" + b.bqual }

// prepared lists the prepared branches of this pair's deployment in data
// source i: on PostgreSQL those of the database, on MariaDB (whose XA
// RECOVER lists the whole server's) those of shardkey's format whose
// GTRID carries this pair's log tag and whose branch is ds_i.
func (p tpPair) prepared(t testing.TB, i int) []tpBranch {
	t.Helper()
	bs, err := p.listPrepared(i)
	if err != nil {
		t.Fatalf("list prepared branches of ds_%d: %v", i, err)
	}
	return bs
}

func (p tpPair) listPrepared(i int) ([]tpBranch, error) {
	db, err := p.rawOpen(i)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if p.driver == "pgx" {
		return tpPreparedPG(db)
	}
	// XA RECOVER lists the whole server's: keep data source i's.
	prefix, ok, err := p.branchPrefix()
	if err != nil || !ok {
		return nil, err
	}
	all, err := tpPreparedMySQL(db, prefix)
	var bs []tpBranch
	for _, b := range all {
		if b.bqual == fmt.Sprintf("ds_%d", i) {
			bs = append(bs, b)
		}
	}
	return bs, err
}

func tpPreparedPG(db *sql.DB) ([]tpBranch, error) {
	rows, err := db.Query(`SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var bs []tpBranch
	for rows.Next() {
		var gid string
		if err := rows.Scan(&gid); err != nil {
			return nil, err
		}
		cut := strings.LastIndexByte(gid, ':')
		if cut < 0 {
			bs = append(bs, tpBranch{gtrid: gid})
			continue
		}
		bs = append(bs, tpBranch{gtrid: gid[:cut], bqual: gid[cut+1:]})
	}
	return bs, rows.Err()
}

// tpFormatID is the XA formatID of shardkey's MySQL branches ("sk1").
const tpFormatID = 0x736b31

func tpPreparedMySQL(db *sql.DB, prefix string) ([]tpBranch, error) {
	rows, err := db.Query(`XA RECOVER`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var bs []tpBranch
	for rows.Next() {
		var (
			format, gl, bl int
			data           []byte
		)
		if err := rows.Scan(&format, &gl, &bl, &data); err != nil {
			return nil, err
		}
		if format != tpFormatID || gl+bl > len(data) || !strings.HasPrefix(string(data[:gl]), prefix) {
			continue
		}
		bs = append(bs, tpBranch{gtrid: string(data[:gl]), bqual: string(data[gl : gl+bl])})
	}
	return bs, rows.Err()
}

// rollbackBranch rolls back a prepared branch directly.
func (p tpPair) rollbackBranch(i int, b tpBranch) error {
	db, err := p.rawOpen(i)
	if err != nil {
		return err
	}
	defer db.Close()
	if p.driver == "pgx" {
		gid := b.gtrid
		if b.bqual != "" {
			gid += ":" + b.bqual
		}
		_, err = db.Exec(`ROLLBACK PREPARED '` + strings.ReplaceAll(gid, "'", "''") + `'`)
		return err
	}
	_, err = db.Exec(fmt.Sprintf(`XA ROLLBACK X'%x', X'%x', %d`, b.gtrid, b.bqual, tpFormatID))
	return err
}

// branchesOf keeps the branches of gtrid.
func tpBranchesOf(bs []tpBranch, gtrid string) []tpBranch {
	var out []tpBranch
	for _, b := range bs {
		if b.gtrid == gtrid {
			out = append(out, b)
		}
	}
	return out
}

// seed sets the accounts: id → balance, each in its data source.
func (p tpPair) seed(t testing.TB, accounts map[int64]int64) {
	t.Helper()
	for i := range 2 {
		d := p.direct(t, i)
		tpExec(t, d, `DELETE FROM t_account`)
		for id, bal := range accounts {
			if int(id%2) == i {
				tpExec(t, d, p.q(`INSERT INTO t_account (id, balance) VALUES (?, ?)`), id, bal)
			}
		}
	}
}

// balances reads every account directly from both data sources.
func (p tpPair) balances(t testing.TB) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	for i := range 2 {
		rows, err := p.direct(t, i).Query(`SELECT id, balance FROM t_account`)
		if err != nil {
			t.Fatalf("read ds_%d: %v", i, err)
		}
		for rows.Next() {
			var id, bal int64
			if err := rows.Scan(&id, &bal); err != nil {
				t.Fatal(err)
			}
			if int(id%2) != i {
				t.Errorf("account %d is stored in ds_%d", id, i)
			}
			out[id] = bal
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// decision reads gtrid's row of the decision log directly ("" if none).
func (p tpPair) decision(t testing.TB, gtrid string) string {
	t.Helper()
	var outcome string
	err := p.direct(t, 0).QueryRow(p.q(`SELECT outcome FROM `+tpLogTable+` WHERE gtrid = ?`), gtrid).Scan(&outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatalf("read decision of %s: %v", gtrid, err)
	}
	return outcome
}

// q spells ? placeholders as $n for PostgreSQL.
func (p tpPair) q(s string) string {
	if p.driver != "pgx" {
		return s
	}
	out, n := []byte{}, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '?' {
			n++
			out = fmt.Appendf(out, "$%d", n)
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

// awaitNoPrepared waits until neither data source lists a prepared branch
// of this pair, or fails the test after d.
func (p tpPair) awaitNoPrepared(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := append(p.prepared(t, 0), p.prepared(t, 1)...)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, prepared branches are left: %v", d, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tpRecover opens a new sqlhook deployment over the pair whose recovery
// runs often with a short timeout, and waits until it has resolved every
// prepared branch. It stands for the process that restarts after a crash.
func (p tpPair) tpRecover(t testing.TB, timeout time.Duration) {
	t.Helper()
	p.tpRecoverBy(t, 1, timeout)
}

// tpRecoverBy is tpRecover with n deployments recovering at once (several
// processes restarting together).
func (p tpPair) tpRecoverBy(t testing.TB, n int, timeout time.Duration) {
	t.Helper()
	dbs := make([]*sql.DB, n)
	for i := range dbs {
		dbs[i] = p.open(t, p.dsn, sqlhook.WithTwoPhaseRecovery(timeout, 50*time.Millisecond))
		if err := dbs[i].Ping(); err != nil {
			t.Fatalf("recovering deployment: %v", err)
		}
	}
	p.awaitNoPrepared(t, timeout+20*time.Second)
	for _, db := range dbs {
		if err := db.Close(); err != nil {
			t.Errorf("close recovering deployment: %v", err)
		}
	}
}

// The child process: TestTwoPhaseFaultChildProcess runs only when the
// parent sets these variables; it commits a transfer between account 0
// (ds_0) and account 1 (ds_1) and exits with tpChildExit at the stage.
const (
	tpEnvStage  = "SHARDKEY_TP_CHILD_STAGE"
	tpEnvDriver = "SHARDKEY_TP_CHILD_DRIVER"
	tpEnvDSN0   = "SHARDKEY_TP_CHILD_DSN0"
	tpEnvDSN1   = "SHARDKEY_TP_CHILD_DSN1"
	tpChildExit = 3
	// tpEnvReadDS1 makes the child's transaction only read on ds_1
	// (a branch with nothing to commit) and take 10 from account 0.
	tpEnvReadDS1 = "SHARDKEY_TP_CHILD_READ_DS1"
)

// tpWriteDS0ReadDS1 takes 10 from account 0 and reads account 1, in one
// transaction.
func tpWriteDS0ReadDS1(ctx context.Context, p tpPair, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, p.q(`UPDATE t_account SET balance = balance - 10 WHERE id = ?`), 0); err != nil {
		tx.Rollback()
		return err
	}
	var bal int64
	if err := tx.QueryRowContext(ctx, p.q(`SELECT balance FROM t_account WHERE id = ?`), 1).Scan(&bal); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

var tpStages = map[string]xa.Stage{
	"prepared":      xa.StagePrepared,
	"decided":       xa.StageDecided,
	"committed_one": xa.StageCommittedOne,
}

func TestTwoPhaseFaultChildProcess(t *testing.T) {
	name := os.Getenv(tpEnvStage)
	if name == "" {
		t.Skip("runs as the child of TestTwoPhaseFaultProcessKilled")
	}
	stage, ok := tpStages[name]
	if !ok {
		t.Fatalf("unknown stage %q", name)
	}
	p := tpPair{driver: os.Getenv(tpEnvDriver), dsn: [2]string{os.Getenv(tpEnvDSN0), os.Getenv(tpEnvDSN1)}}
	die := func(s xa.Stage, gtrid string) error {
		if s == stage {
			// The parent reads the GTRID from stdout; nothing runs after.
			fmt.Printf("\ngtrid=%s\n", gtrid)
			os.Stdout.Sync()
			os.Exit(tpChildExit)
		}
		return nil
	}
	db := p.open(t, p.dsn, tpHookOption(die), sqlhook.WithTwoPhaseRecovery(time.Hour, -1))
	var err error
	if os.Getenv(tpEnvReadDS1) != "" {
		err = tpWriteDS0ReadDS1(context.Background(), p, db)
	} else {
		err = tpTransfer(context.Background(), p, db, 0, 1, 10)
	}
	t.Fatalf("the transfer returned (%v) instead of the process exiting at stage %s", err, name)
}

// tpTransfer moves amount from account from to account to in one
// transaction through db, updating the lower id first (so that two
// transfers never wait on each other across data sources).
func tpTransfer(ctx context.Context, p tpPair, db *sql.DB, from, to, amount int64) error {
	return tpTransferWith(ctx, p, db, from, to, amount, nil)
}

// tpTransferWith is tpTransfer in a transaction begun with opts; when
// opts is not nil it reads both balances first, so that serializable
// transactions conflict on what they read too.
func tpTransferWith(ctx context.Context, p tpPair, db *sql.DB, from, to, amount int64, opts *sql.TxOptions) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if opts != nil {
		for _, id := range []int64{min(from, to), max(from, to)} {
			var bal int64
			if err := tx.QueryRowContext(ctx, p.q(`SELECT balance FROM t_account WHERE id = ?`), id).Scan(&bal); err != nil {
				tx.Rollback()
				return err
			}
		}
	}
	type upd struct{ id, delta int64 }
	steps := []upd{{from, -amount}, {to, amount}}
	if to < from {
		steps[0], steps[1] = steps[1], steps[0]
	}
	for _, s := range steps {
		res, err := tx.ExecContext(ctx, p.q(`UPDATE t_account SET balance = balance + ? WHERE id = ?`), s.delta, s.id)
		if err == nil {
			var n int64
			if n, err = res.RowsAffected(); err == nil && n != 1 {
				err = fmt.Errorf("account %d: %d rows updated", s.id, n)
			}
		}
		if err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// runChild runs the child at stage over p and returns the GTRID it died in.
func (p tpPair) runChild(t *testing.T, stage string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTwoPhaseFaultChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), tpEnvStage+"="+stage, tpEnvDriver+"="+p.driver,
		tpEnvDSN0+"="+p.dsn[0], tpEnvDSN1+"="+p.dsn[1])
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != tpChildExit {
		t.Fatalf("child at stage %s: %v (want exit status %d); output:\n%s", stage, err, tpChildExit, out)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if g, ok := strings.CutPrefix(sc.Text(), "gtrid="); ok {
			return g
		}
	}
	t.Fatalf("child at stage %s printed no GTRID; output:\n%s", stage, out)
	return ""
}

// TestTwoPhaseFaultProcessKilled kills the coordinating process at each
// stage of the protocol and checks that a new process resolves every
// branch one way: before the decision is logged, rolled back; after,
// committed (also when one branch had committed already).
func TestTwoPhaseFaultProcessKilled(t *testing.T) {
	for _, p := range tpPairs(t, "kill") {
		t.Run(p.name, func(t *testing.T) {
			for _, c := range []struct {
				stage      string
				preparedIn int // branches still prepared when the child dies
				decision   string
				want       map[int64]int64
			}{
				{"prepared", 2, "", map[int64]int64{0: 100, 1: 100}},
				{"decided", 2, "C", map[int64]int64{0: 90, 1: 110}},
				{"committed_one", 1, "C", map[int64]int64{0: 90, 1: 110}},
			} {
				t.Run(c.stage, func(t *testing.T) {
					p.seed(t, map[int64]int64{0: 100, 1: 100})
					gtrid := p.runChild(t, c.stage)
					if want, _, err := p.branchPrefix(); err != nil || !strings.HasPrefix(gtrid, want) {
						t.Errorf("GTRID %q does not begin with %q (the decision log's id; %v)", gtrid, want, err)
					}
					left := tpBranchesOf(append(p.prepared(t, 0), p.prepared(t, 1)...), gtrid)
					if len(left) != c.preparedIn {
						t.Errorf("after the child died: prepared branches %v, want %d", left, c.preparedIn)
					}
					if got := p.decision(t, gtrid); got != c.decision {
						t.Errorf("decision of %s after the child died: %q, want %q", gtrid, got, c.decision)
					}
					p.tpRecover(t, time.Second)
					if got := p.balances(t); !tpSameBalances(got, c.want) {
						t.Errorf("after recovery: balances %v, want %v", got, c.want)
					}
				})
			}
		})
	}
}

func tpSameBalances(a, b map[int64]int64) bool { return maps.Equal(a, b) }

// tpProxied is a pair opened through sqlhook with each data source behind
// its own proxy, and a hook the test can set.
type tpProxied struct {
	tpPair
	proxy [2]*dbtest.Proxy
	via   [2]string
	hook  *tpHookBox
	db    *sql.DB
}

// proxied opens p through sqlhook with each data source behind a proxy;
// mod, if not nil, edits the proxied DSNs.
func (p tpPair) proxied(t *testing.T, mod func(string) string, opts ...sqlhook.Option) *tpProxied {
	t.Helper()
	x := &tpProxied{tpPair: p, hook: &tpHookBox{}}
	for i := range 2 {
		x.via[i], x.proxy[i] = dbtest.ViaProxy(t, p.driver, p.dsn[i])
		if mod != nil {
			x.via[i] = mod(x.via[i])
		}
	}
	opts = append([]sqlhook.Option{tpHookOption(x.hook.call), sqlhook.WithTwoPhaseRecovery(time.Hour, -1)}, opts...)
	x.db = p.open(t, x.via, opts...)
	return x
}

// TestTwoPhaseFaultCutDuringPhaseOneRollsBackEveryBranch takes a data
// source away while its branch prepares (and, in a second case, after it
// prepared and before the decision): the transaction fails without being
// in doubt, and once the data source is back and recovery has run, every
// branch is rolled back.
func TestTwoPhaseFaultCutDuringPhaseOneRollsBackEveryBranch(t *testing.T) {
	for _, p := range tpPairs(t, "cut1") {
		t.Run(p.name, func(t *testing.T) {
			for _, cut := range []int{0, 1} {
				t.Run(fmt.Sprintf("before_prepare_ds_%d", cut), func(t *testing.T) { tpCutBeforePrepare(t, p, cut) })
				t.Run(fmt.Sprintf("prepared_then_ds_%d_cut", cut), func(t *testing.T) { tpCutAfterPrepare(t, p, cut) })
			}
		})
	}
}

// tpCutBeforePrepare cuts data source cut after the transaction's writes,
// before Commit.
func tpCutBeforePrepare(t *testing.T, p tpPair, cut int) {
	p.seed(t, map[int64]int64{0: 100, 1: 100})
	x := p.proxied(t, nil)
	tx, err := x.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tpExec(t, tx, p.q(`UPDATE t_account SET balance = balance - 10 WHERE id = ?`), 0)
	tpExec(t, tx, p.q(`UPDATE t_account SET balance = balance + 10 WHERE id = ?`), 1)
	x.proxy[cut].Cut()
	err = tx.Commit()
	if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) {
		t.Errorf("commit with ds_%d cut: %v, want an error that is not sqlhook.ErrTxInDoubt", cut, err)
	}
	// The other branch, prepared or not, is rolled back at once:
	// nothing waits for recovery.
	if left := append(p.prepared(t, 0), p.prepared(t, 1)...); len(left) > 0 {
		t.Errorf("prepared branches left by a failed prepare: %v", left)
	}
	x.proxy[cut].Resume()
	p.tpRecover(t, time.Second)
	if got, want := p.balances(t), map[int64]int64{0: 100, 1: 100}; !tpSameBalances(got, want) {
		t.Errorf("balances %v, want %v", got, want)
	}
}

// tpCutAfterPrepare cuts data source cut once every branch is prepared,
// and the coordinator gives up before the decision.
func tpCutAfterPrepare(t *testing.T, p tpPair, cut int) {
	p.seed(t, map[int64]int64{0: 100, 1: 100})
	x := p.proxied(t, nil)
	x.hook.set(func(s xa.Stage, gtrid string) error {
		if s != xa.StagePrepared {
			return nil
		}
		x.proxy[cut].Cut()
		return errors.New("injected: coordinator gives up after phase 1")
	})
	err := tpTransfer(context.Background(), p, x.db, 0, 1, 10)
	if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) {
		t.Errorf("commit failing after phase 1 with ds_%d cut: %v, want an error that is not sqlhook.ErrTxInDoubt", cut, err)
	}
	// Only the cut data source's branch is left for recovery; the other
	// was rolled back at once.
	if left := p.prepared(t, cut); len(left) != 1 {
		t.Errorf("prepared branches on the cut ds_%d: %v, want 1", cut, left)
	}
	if left := p.prepared(t, 1-cut); len(left) != 0 {
		t.Errorf("prepared branches on ds_%d: %v, want none", 1-cut, left)
	}
	x.proxy[cut].Resume()
	p.tpRecover(t, time.Second)
	if got, want := p.balances(t), map[int64]int64{0: 100, 1: 100}; !tpSameBalances(got, want) {
		t.Errorf("balances %v, want %v", got, want)
	}
}

// TestTwoPhaseFaultCutDuringPhaseTwoIsInDoubtThenCommitted takes a data
// source away after the decision is logged: Commit reports the
// transaction in doubt (decided), and once the data source is back,
// recovery commits every branch.
func TestTwoPhaseFaultCutDuringPhaseTwoIsInDoubtThenCommitted(t *testing.T) {
	for _, p := range tpPairs(t, "cut2") {
		t.Run(p.name, func(t *testing.T) {
			for _, cut := range []int{0, 1} {
				t.Run(fmt.Sprintf("ds_%d", cut), func(t *testing.T) {
					p.seed(t, map[int64]int64{0: 100, 1: 100})
					x := p.proxied(t, nil)
					x.hook.set(func(s xa.Stage, gtrid string) error {
						if s == xa.StageDecided {
							x.proxy[cut].Cut()
						}
						return nil
					})
					err := tpTransfer(context.Background(), p, x.db, 0, 1, 10)
					var doubt *sqlhook.TxInDoubtError
					if !errors.Is(err, sqlhook.ErrTxInDoubt) || !errors.As(err, &doubt) {
						t.Fatalf("commit with ds_%d cut in phase 2: %v, want a *sqlhook.TxInDoubtError", cut, err)
					}
					if !doubt.Decided || len(doubt.Pending) == 0 || p.decision(t, doubt.GTRID) != "C" {
						t.Errorf("in-doubt error %+v: want Decided, a pending branch, and a C row in the log", doubt)
					}
					if left := p.prepared(t, cut); len(left) != 1 {
						t.Errorf("prepared branches on the cut ds_%d: %v, want 1 (its commit cannot have reached it)", cut, left)
					}
					x.proxy[cut].Resume()
					p.tpRecover(t, time.Second)
					if got, want := p.balances(t), map[int64]int64{0: 90, 1: 110}; !tpSameBalances(got, want) {
						t.Errorf("balances %v, want %v", got, want)
					}
				})
			}
		})
	}
}

// tpHookBox holds the fault hook a test sets while a deployment runs.
type tpHookBox struct {
	mu sync.Mutex
	h  func(xa.Stage, string) error
}

func (b *tpHookBox) set(h func(xa.Stage, string) error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.h = h
}

func (b *tpHookBox) call(s xa.Stage, gtrid string) error {
	b.mu.Lock()
	h := b.h
	b.mu.Unlock()
	if h == nil {
		return nil
	}
	return h(s, gtrid)
}

// tpReadTestdata is a file under testdata, read when the tests start.
func tpReadTestdata(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func tpExec(t testing.TB, db interface {
	Exec(string, ...any) (sql.Result, error)
}, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// tpHookOption sets the fault hook of the deployment's coordinator.
func tpHookOption(h func(xa.Stage, string) error) sqlhook.Option { return sqlhook.WithTwoPhaseHook(h) }

// TestTwoPhaseFaultLogSourceCutBeforeTheDecisionRollsBackEveryBranch
// takes the decision log's data source away after every branch prepared:
// the decision's insert fails before its COMMIT could be sent, so nothing
// was decided and Commit reports the transaction rolled back (not in
// doubt); the branch on the lost data source stays prepared until
// recovery, once the source is back, logs a rollback and rolls it back.
func TestTwoPhaseFaultLogSourceCutBeforeTheDecisionRollsBackEveryBranch(t *testing.T) {
	for _, p := range tpPairs(t, "cutlog") {
		t.Run(p.name, func(t *testing.T) {
			p.seed(t, map[int64]int64{0: 100, 1: 100})
			x := p.proxied(t, nil)
			var gtrid string
			x.hook.set(func(s xa.Stage, g string) error {
				if s == xa.StagePrepared {
					gtrid = g
					x.proxy[0].Cut() // ds_0 holds the log
				}
				return nil
			})
			err := tpTransfer(context.Background(), p, x.db, 0, 1, 10)
			if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Fatalf("commit with the log source cut before the decision: %v, want an error that is not ErrTxInDoubt", err)
			}
			if left := p.prepared(t, 0); len(left) != 1 {
				t.Errorf("prepared branches on the cut ds_0 before recovery: %v, want 1", left)
			}
			if left := p.prepared(t, 1); len(left) != 0 {
				t.Errorf("prepared branches on ds_1 before recovery: %v, want none", left)
			}
			x.proxy[0].Resume()
			p.tpRecover(t, time.Second)
			if got := p.decision(t, gtrid); got != "A" {
				t.Errorf("decision of %s after recovery: %q, want A", gtrid, got)
			}
			if got, want := p.balances(t), map[int64]int64{0: 100, 1: 100}; !tpSameBalances(got, want) {
				t.Errorf("balances %v, want %v", got, want)
			}
		})
	}
}

// TestTwoPhaseFaultRecoveryAbortingASlowCommitWins lets another process's
// recovery, whose timeout is shorter, roll back a transaction whose
// coordinator stalls between phase 1 and the decision: the coordinator
// then finds the rollback decision in the log, and Commit reports the
// transaction rolled back (not in doubt, never committed).
func TestTwoPhaseFaultRecoveryAbortingASlowCommitWins(t *testing.T) {
	for _, p := range tpPairs(t, "slow") {
		t.Run(p.name, func(t *testing.T) {
			p.seed(t, map[int64]int64{0: 100, 1: 100})
			// The stalled coordinator's own timeout is long: only the
			// log's primary key can stop it.
			x := p.proxied(t, nil, sqlhook.WithTwoPhaseRecovery(time.Hour, -1))
			x.hook.set(func(s xa.Stage, gtrid string) error {
				if s != xa.StagePrepared {
					return nil
				}
				// The other process's recovery logs the rollback; on
				// MariaDB it cannot end a branch still attached to this
				// coordinator's live session, so it may leave it.
				other := p.open(t, p.dsn, sqlhook.WithTwoPhaseRecovery(time.Second, 50*time.Millisecond))
				defer other.Close()
				deadline := time.Now().Add(20 * time.Second)
				for p.decision(t, gtrid) != "A" {
					if time.Now().After(deadline) {
						t.Errorf("the other process's recovery logged no rollback of %s", gtrid)
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				return nil
			})
			err := tpTransfer(context.Background(), p, x.db, 0, 1, 10)
			if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Errorf("commit after recovery aborted it: %v, want an error that is not ErrTxInDoubt", err)
			}
			t.Logf("commit: %v", err)
			if got, want := p.balances(t), map[int64]int64{0: 100, 1: 100}; !tpSameBalances(got, want) {
				t.Errorf("balances %v, want %v", got, want)
			}
			if left := append(p.prepared(t, 0), p.prepared(t, 1)...); len(left) > 0 {
				t.Errorf("prepared branches left: %v", left)
			}
		})
	}
}

// TestTwoPhaseFaultCoordinatorFailingAfterTheDecisionIsCommittedByRecovery
// fails the coordinator (an error, the process lives on) after the
// decision and after the first branch commit: Commit reports the
// transaction in doubt and decided, another process's recovery commits
// every branch (on MariaDB too, where a prepared branch attached to a
// live session cannot be ended from another), and the deployment goes on
// committing transactions.
func TestTwoPhaseFaultCoordinatorFailingAfterTheDecisionIsCommittedByRecovery(t *testing.T) {
	for _, p := range tpPairs(t, "hookerr") {
		t.Run(p.name, func(t *testing.T) {
			for _, stage := range []xa.Stage{xa.StageDecided, xa.StageCommittedOne} {
				t.Run(stage.String(), func(t *testing.T) {
					p.seed(t, map[int64]int64{0: 100, 1: 100})
					x := p.proxied(t, nil)
					x.hook.set(func(s xa.Stage, gtrid string) error {
						if s == stage {
							return errors.New("injected coordinator failure")
						}
						return nil
					})
					err := tpTransfer(context.Background(), p, x.db, 0, 1, 10)
					var doubt *sqlhook.TxInDoubtError
					if !errors.As(err, &doubt) || !doubt.Decided {
						t.Fatalf("commit failing at %s: %v, want a decided *TxInDoubtError", stage, err)
					}
					p.tpRecover(t, time.Second)
					if got, want := p.balances(t), map[int64]int64{0: 90, 1: 110}; !tpSameBalances(got, want) {
						t.Errorf("balances after recovery %v, want %v", got, want)
					}
					x.hook.set(nil)
					for range 4 { // more than the pool's connections used so far
						if err := tpTransfer(context.Background(), p, x.db, 1, 0, 10); err != nil {
							t.Fatalf("a transfer after the in-doubt one: %v", err)
						}
					}
					if got, want := p.balances(t), map[int64]int64{0: 130, 1: 70}; !tpSameBalances(got, want) {
						t.Errorf("balances after more transfers %v, want %v", got, want)
					}
				})
			}
		})
	}
}

// TestTwoPhaseFaultProcessKilledWithABranchThatOnlyRead kills the
// coordinating process of a transaction that wrote on ds_0 and only read
// on ds_1 (a prepared branch with nothing to commit, which MariaDB
// forgets oddly once its session is gone): recovery still resolves both
// branches, committing the write after the decision and rolling it back
// before.
func TestTwoPhaseFaultProcessKilledWithABranchThatOnlyRead(t *testing.T) {
	for _, p := range tpPairs(t, "killro") {
		t.Run(p.name, func(t *testing.T) {
			for _, c := range []struct {
				stage      string
				preparedIn int
				want       map[int64]int64
			}{
				{"prepared", 2, map[int64]int64{0: 100, 1: 100}},
				{"decided", 2, map[int64]int64{0: 90, 1: 100}},
				{"committed_one", 1, map[int64]int64{0: 90, 1: 100}},
			} {
				t.Run(c.stage, func(t *testing.T) {
					p.seed(t, map[int64]int64{0: 100, 1: 100})
					gtrid := p.runChild(t, c.stage, tpEnvReadDS1+"=1")
					left := tpBranchesOf(append(p.prepared(t, 0), p.prepared(t, 1)...), gtrid)
					if len(left) != c.preparedIn {
						t.Errorf("after the child died: prepared branches %v, want %d", left, c.preparedIn)
					}
					p.tpRecover(t, time.Second)
					if got := p.balances(t); !tpSameBalances(got, c.want) {
						t.Errorf("after recovery: balances %v, want %v", got, c.want)
					}
				})
			}
		})
	}
}

// TestTwoPhaseFaultPostgresBranchSpoiledBehindSqlhooksBackIsNeverReportedCommitted
// breaks a PostgreSQL branch with statements sqlhook does not see (on the
// raw connection): a failed statement (the branch is aborted, and
// PREPARE TRANSACTION would roll it back while reporting success) or a
// COMMIT (the branch is no longer a transaction, and PREPARE TRANSACTION
// would do nothing). Commit must fail, not report the transaction
// committed, and leave no branch prepared.
func TestTwoPhaseFaultPostgresBranchSpoiledBehindSqlhooksBackIsNeverReportedCommitted(t *testing.T) {
	p := tpPostgresPair(t, "spoiled")
	for _, c := range []struct {
		name, raw string
		want      map[int64]int64 // the raw COMMIT made ds_1's write stay
	}{
		{"failed_statement", `SELECT no_such_column FROM t_account`, map[int64]int64{0: 100, 1: 100}},
		{"commit", `COMMIT`, map[int64]int64{0: 100, 1: 110}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.seed(t, map[int64]int64{0: 100, 1: 100})
			db := p.open(t, p.dsn, sqlhook.WithTwoPhaseRecovery(time.Hour, -1))
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			tpExec(t, tx, p.q(`UPDATE t_account SET balance = balance - 10 WHERE id = ?`), 0)
			tpExec(t, tx, p.q(`UPDATE t_account SET balance = balance + 10 WHERE id = ?`), 1)
			rawErr := conn.Raw(func(dc any) error {
				rc, err := sqlhook.UnwrapDataSource(ctx, dc, "ds_1")
				if err != nil {
					return err
				}
				_, err = rc.(driver.ExecerContext).ExecContext(ctx, c.raw, nil)
				return err
			})
			t.Logf("raw %s: %v", c.raw, rawErr)
			err = tx.Commit()
			if err == nil {
				t.Fatalf("Commit after a raw %q on ds_1 reported the transaction committed", c.raw)
			}
			if errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Errorf("Commit: %v; nothing was decided, want an error that is not ErrTxInDoubt", err)
			}
			if left := append(p.prepared(t, 0), p.prepared(t, 1)...); len(left) > 0 {
				t.Errorf("prepared branches left: %v", left)
			}
			if got := p.balances(t); !tpSameBalances(got, c.want) {
				t.Errorf("balances %v, want %v", got, c.want)
			}
		})
	}
}

// TestTwoPhaseFaultTransactionOpenLongerThanTheTimeoutIsWhole commits a
// transaction that stayed open longer than the recovery timeout. Its age
// is its GTRID's: on MariaDB the GTRID names the branches from XA START,
// so the transaction is older than the timeout at commit, when recovery
// may be rolling prepared branches of that age back, and Commit must roll
// back (not in doubt); on PostgreSQL the GTRID is made at commit, and the
// transaction commits. Either way, all or nothing, as Commit says.
func TestTwoPhaseFaultTransactionOpenLongerThanTheTimeoutIsWhole(t *testing.T) {
	for _, p := range tpPairs(t, "old") {
		t.Run(p.name, func(t *testing.T) {
			p.seed(t, map[int64]int64{0: 100, 1: 100})
			db := p.open(t, p.dsn, sqlhook.WithTwoPhaseRecovery(time.Second, -1))
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			tpExec(t, tx, p.q(`UPDATE t_account SET balance = balance - 10 WHERE id = ?`), 0)
			tpExec(t, tx, p.q(`UPDATE t_account SET balance = balance + 10 WHERE id = ?`), 1)
			time.Sleep(1200 * time.Millisecond)
			err = tx.Commit()
			t.Logf("commit after 1.2s open, timeout 1s: %v", err)
			want := map[int64]int64{0: 90, 1: 110}
			switch {
			case err == nil && p.driver == "mysql":
				t.Errorf("commit of XA branches older than the timeout succeeded; want it rolled back")
			case errors.Is(err, sqlhook.ErrTxInDoubt):
				t.Errorf("commit: %v; nothing was decided, want no ErrTxInDoubt", err)
			case err != nil:
				want = map[int64]int64{0: 100, 1: 100}
			}
			if left := append(p.prepared(t, 0), p.prepared(t, 1)...); len(left) > 0 {
				t.Errorf("prepared branches left: %v", left)
			}
			if got := p.balances(t); !tpSameBalances(got, want) {
				t.Errorf("balances %v, want %v", got, want)
			}
		})
	}
}

// TestTwoPhaseFaultContextCancelledDuringCommitStillFinishesIt cancels
// the transaction's context after the decision is logged: phase 2 must
// not stop half-way, so every branch commits and Commit says so.
func TestTwoPhaseFaultContextCancelledDuringCommitStillFinishesIt(t *testing.T) {
	for _, p := range tpPairs(t, "cancel") {
		t.Run(p.name, func(t *testing.T) {
			for _, stage := range []xa.Stage{xa.StagePrepared, xa.StageDecided, xa.StageCommittedOne} {
				t.Run(stage.String(), func(t *testing.T) {
					p.seed(t, map[int64]int64{0: 100, 1: 100})
					x := p.proxied(t, nil)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					x.hook.set(func(s xa.Stage, gtrid string) error {
						if s == stage {
							cancel()
						}
						return nil
					})
					err := tpTransfer(ctx, p, x.db, 0, 1, 10)
					want := map[int64]int64{0: 90, 1: 110}
					if err != nil {
						// Before the decision a cancelled context may
						// still roll back; never after it.
						if stage != xa.StagePrepared || errors.Is(err, sqlhook.ErrTxInDoubt) {
							t.Fatalf("commit with its context cancelled at %s: %v", stage, err)
						}
						want = map[int64]int64{0: 100, 1: 100}
					}
					if left := append(p.prepared(t, 0), p.prepared(t, 1)...); len(left) > 0 {
						t.Errorf("prepared branches left: %v", left)
					}
					if got := p.balances(t); !tpSameBalances(got, want) {
						t.Errorf("balances %v, want %v (commit: %v)", got, want, err)
					}
				})
			}
		})
	}
}

// TestTwoPhaseFaultConnectionsDroppedInPhaseTwoAreCommittedOnFreshOnes
// drops every connection of a data source after the decision and lets
// new ones in at once: phase 2 finishes the branch whose own connection
// died through a fresh one. Commit reports success only if every branch
// is committed when it returns; in doubt, recovery commits them.
func TestTwoPhaseFaultConnectionsDroppedInPhaseTwoAreCommittedOnFreshOnes(t *testing.T) {
	for _, p := range tpPairs(t, "blip") {
		t.Run(p.name, func(t *testing.T) {
			for _, cut := range []int{0, 1} {
				t.Run(fmt.Sprintf("ds_%d", cut), func(t *testing.T) {
					p.seed(t, map[int64]int64{0: 100, 1: 100})
					x := p.proxied(t, nil)
					x.hook.set(func(s xa.Stage, gtrid string) error {
						if s == xa.StageDecided {
							x.proxy[cut].Cut()
							x.proxy[cut].Resume()
						}
						return nil
					})
					err := tpTransfer(context.Background(), p, x.db, 0, 1, 10)
					t.Logf("commit: %v", err)
					want := map[int64]int64{0: 90, 1: 110}
					switch {
					case err == nil:
						if left := append(p.prepared(t, 0), p.prepared(t, 1)...); len(left) > 0 {
							t.Errorf("Commit returned nil with branches still prepared: %v", left)
						}
						if got := p.balances(t); !tpSameBalances(got, want) {
							t.Errorf("Commit returned nil; balances right after %v, want %v", got, want)
						}
					case errors.Is(err, sqlhook.ErrTxInDoubt):
						p.tpRecover(t, time.Second)
						if got := p.balances(t); !tpSameBalances(got, want) {
							t.Errorf("after recovery: balances %v, want %v", got, want)
						}
					default:
						t.Errorf("commit after the decision: %v, want nil or ErrTxInDoubt", err)
					}
				})
			}
		})
	}
}

// TestTwoPhaseFaultRecoveryWhileADataSourceIsDownKeepsTheDecision leaves a
// decided transaction in doubt with its ds_1 branch unreachable, and lets
// recovery and the log's garbage collection run many times, past the
// timeout, while ds_1 stays down: the commit decision must stay (without
// it, recovery would later roll back a branch whose sibling committed),
// and once ds_1 is back the branch is committed.
func TestTwoPhaseFaultRecoveryWhileADataSourceIsDownKeepsTheDecision(t *testing.T) {
	for _, p := range tpPairs(t, "down") {
		t.Run(p.name, func(t *testing.T) {
			p.seed(t, map[int64]int64{0: 100, 1: 100})
			x := p.proxied(t, nil, sqlhook.WithTwoPhaseRecovery(time.Second, 50*time.Millisecond))
			x.hook.set(func(s xa.Stage, gtrid string) error {
				if s == xa.StageDecided {
					x.proxy[1].Cut()
				}
				return nil
			})
			err := tpTransfer(context.Background(), p, x.db, 0, 1, 10)
			var doubt *sqlhook.TxInDoubtError
			if !errors.As(err, &doubt) || !doubt.Decided {
				t.Fatalf("commit with ds_1 cut after the decision: %v, want a decided *TxInDoubtError", err)
			}
			time.Sleep(2500 * time.Millisecond) // ~50 recovery and GC passes, 2.5 timeouts
			if got := p.decision(t, doubt.GTRID); got != "C" {
				t.Errorf("decision of %s while ds_1 is down: %q, want C", doubt.GTRID, got)
			}
			if left := p.prepared(t, 1); len(left) != 1 {
				t.Errorf("prepared branches on ds_1 while it is down: %v, want 1", left)
			}
			x.proxy[1].Resume()
			p.awaitNoPrepared(t, 20*time.Second)
			if got, want := p.balances(t), map[int64]int64{0: 90, 1: 110}; !tpSameBalances(got, want) {
				t.Errorf("balances %v, want %v", got, want)
			}
			// The same collection drops the row once no branch is left:
			// it did run while ds_1 was down.
			deadline := time.Now().Add(10 * time.Second)
			for p.decision(t, doubt.GTRID) != "" {
				if time.Now().After(deadline) {
					t.Fatalf("the C row of %s is still there 10s after its last branch committed: did garbage collection run?", doubt.GTRID)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestTwoPhaseFaultRecoveryWithoutTheLogLeavesBranchesAlone leaves a
// decided transaction's ds_1 branch prepared (its sibling on ds_0
// committed), then takes the log's data source away and lets recovery
// run past the timeout with ds_1 reachable: unable to read the decision,
// recovery must neither roll the branch back nor decide; once the log is
// back it commits it.
func TestTwoPhaseFaultRecoveryWithoutTheLogLeavesBranchesAlone(t *testing.T) {
	for _, p := range tpPairs(t, "nolog") {
		t.Run(p.name, func(t *testing.T) {
			p.seed(t, map[int64]int64{0: 100, 1: 100})
			x := p.proxied(t, nil, sqlhook.WithTwoPhaseRecovery(time.Second, 50*time.Millisecond))
			x.hook.set(func(s xa.Stage, gtrid string) error {
				if s == xa.StageDecided {
					x.proxy[1].Cut()
				}
				return nil
			})
			err := tpTransfer(context.Background(), p, x.db, 0, 1, 10)
			var doubt *sqlhook.TxInDoubtError
			if !errors.As(err, &doubt) || !doubt.Decided {
				t.Fatalf("commit with ds_1 cut after the decision: %v, want a decided *TxInDoubtError", err)
			}
			x.proxy[0].Cut()
			x.proxy[1].Resume()
			time.Sleep(2500 * time.Millisecond) // recovery every 50ms, 2.5 timeouts
			if left := p.prepared(t, 1); len(left) != 1 {
				t.Fatalf("prepared branches on ds_1 while the log is unreachable: %v, want 1 (left alone)", left)
			}
			x.proxy[0].Resume()
			p.awaitNoPrepared(t, 20*time.Second)
			if got, want := p.balances(t), map[int64]int64{0: 90, 1: 110}; !tpSameBalances(got, want) {
				t.Errorf("balances %v, want %v", got, want)
			}
		})
	}
}

// TestTwoPhaseFaultRecoveryWithoutTheLogNeverRollsBackUndecidedBranches
// kills the coordinator after phase 1 (no decision), then takes the log's
// data source away from a running deployment's recovery, past the
// timeout, with ds_1 reachable: recovery may roll back an undecided
// branch only after logging the rollback, which it cannot, so it leaves
// it; once the log is back it logs A and rolls every branch back.
func TestTwoPhaseFaultRecoveryWithoutTheLogNeverRollsBackUndecidedBranches(t *testing.T) {
	for _, p := range tpPairs(t, "nologa") {
		t.Run(p.name, func(t *testing.T) {
			p.seed(t, map[int64]int64{0: 100, 1: 100})
			x := p.proxied(t, nil, sqlhook.WithTwoPhaseRecovery(time.Second, 50*time.Millisecond))
			gtrid := p.runChild(t, "prepared")
			x.proxy[0].Cut() // before the branches are a timeout old
			time.Sleep(2500 * time.Millisecond)
			if left := tpBranchesOf(p.prepared(t, 1), gtrid); len(left) != 1 {
				t.Fatalf("ds_1 branch of %s while the log is unreachable: %v, want it left prepared", gtrid, left)
			}
			x.proxy[0].Resume()
			p.awaitNoPrepared(t, 20*time.Second)
			if got := p.decision(t, gtrid); got != "A" {
				t.Errorf("decision of %s: %q, want A", gtrid, got)
			}
			if got, want := p.balances(t), map[int64]int64{0: 100, 1: 100}; !tpSameBalances(got, want) {
				t.Errorf("balances %v, want %v", got, want)
			}
		})
	}
}
