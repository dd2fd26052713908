package sqlhook_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/DATA-DOG/go-sqlmock"
	"go.uber.org/goleak"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/internal/dialect"
	"github.com/shardkey/shardkey/internal/xa"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// Two-phase commit (WithTwoPhaseCommit) on PostgreSQL and MariaDB pairs:
// ds_0 (user 2, the default data source, holding the decision log) and
// ds_1 (user 1), each with t_order; ds_0 also has t_note.

// tpBackends are txBackends' PostgreSQL and MariaDB pairs.
func tpBackends(t *testing.T, tag string) []txBackend {
	t.Helper()
	var out []txBackend
	for _, b := range txBackends(t, "tp"+tag) {
		if b.name != "sqlite" {
			out = append(out, b)
		}
	}
	return out
}

// tpOpen opens b's data sources through sqlhook with two-phase commit.
// When the test ends, after the *sql.DB is closed, no prepared branch of
// its transactions may be left on either data source (those found are
// rolled back, so that they cannot break the next run).
func tpOpen(t *testing.T, b txBackend, opts ...sqlhook.Option) *sql.DB {
	t.Helper()
	t.Cleanup(func() { noBranchesLeft(t, b) })
	return b.open(t, append([]sqlhook.Option{sqlhook.WithTwoPhaseCommit()}, opts...)...)
}

// stages records the coordinator's stages (WithTwoPhaseHook), and fails
// at one when told to.
type stages struct {
	mu     sync.Mutex
	seen   []xa.Stage
	failAt xa.Stage
}

var errInjected = errors.New("injected failure")

func (s *stages) hook(st xa.Stage, gtrid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, st)
	if st == s.failAt {
		return errInjected
	}
	return nil
}

func (s *stages) got() []xa.Stage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]xa.Stage(nil), s.seen...)
}

// noBranchesLeft reports, and rolls back, prepared branches left on b's
// data sources: on PostgreSQL every one in the test's databases, on
// MariaDB (whose XA RECOVER lists the whole server's) those of the
// decision log in ds_0's database.
func noBranchesLeft(t *testing.T, b txBackend) {
	t.Helper()
	var dbs [2]*sql.DB
	for i := range dbs {
		db, err := sql.Open(b.driver, b.dsn[i])
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[i] = db
	}
	if b.driver == "pgx" {
		for i, db := range dbs {
			for _, gid := range strings64(t, db, `SELECT gid FROM pg_prepared_xacts WHERE database = current_database()`) {
				t.Errorf("ds_%d: branch %s left prepared", i, gid)
				if _, err := db.Exec(`ROLLBACK PREPARED '` + gid + `'`); err != nil {
					t.Errorf("ROLLBACK PREPARED %s: %v", gid, err)
				}
			}
		}
		return
	}
	prefix := branchPrefix(t, dbs)
	if prefix == "" {
		return // no decision log: nothing was prepared
	}
	rows, err := dbs[0].Query(`XA RECOVER`)
	if err != nil {
		t.Fatal(err)
	}
	var xids []string
	for rows.Next() {
		var format, glen, blen int64
		var data []byte
		if err := rows.Scan(&format, &glen, &blen, &data); err != nil {
			t.Fatal(err)
		}
		if format != xa.FormatID || int64(len(data)) != glen+blen || !strings.HasPrefix(string(data[:glen]), prefix) {
			continue
		}
		t.Errorf("XA branch %s/%s left prepared", data[:glen], data[glen:])
		xids = append(xids, fmt.Sprintf("X'%s',X'%s',%d", hex.EncodeToString(data[:glen]), hex.EncodeToString(data[glen:]), format))
	}
	rows.Close()
	for _, xid := range xids {
		if _, err := dbs[0].Exec(`XA ROLLBACK ` + xid); err != nil {
			t.Errorf("XA ROLLBACK %s: %v", xid, err)
		}
	}
}

// branchPrefix is how the GTRIDs of the decision log on MariaDB pools
// dbs (ds_0 holding it) begin, read by a coordinator attached to the log;
// "" when there is no log.
func branchPrefix(t *testing.T, dbs [2]*sql.DB) string {
	t.Helper()
	c, err := xa.New(xa.Config{Interval: -1}, []xa.Source{
		{Name: "ds_0", Dialect: dialect.MySQL, DB: dbs[0]}, {Name: "ds_1", Dialect: dialect.MySQL, DB: dbs[1]}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Attach(context.Background()); errors.Is(err, xa.ErrNoLog) {
		return ""
	} else if err != nil {
		t.Fatal(err)
	}
	return c.BranchPrefix()
}

func strings64(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// A transaction writing on both data sources commits on both, by two-phase
// commit (the coordinator reaches its stages); so it does when
// WithMultiSourceTx is given as well (two-phase commit wins). One reaching
// a single data source commits in one phase, without the coordinator's
// stages.
func TestTwoPhaseCommitIsAtomicAcrossDataSources(t *testing.T) {
	for _, b := range tpBackends(t, "atomic") {
		t.Run(b.name, func(t *testing.T) {
			for i, opts := range [][]sqlhook.Option{nil, {sqlhook.WithMultiSourceTx()}} {
				st := &stages{}
				db := tpOpen(t, b, append(opts, sqlhook.WithTwoPhaseHook(st.hook), snowflakeIDs(t))...)
				id := int64(100 * (i + 1))
				tx, err := db.Begin()
				if err != nil {
					t.Fatal(err)
				}
				b.insertOrder(t, tx, id+1, 1) // ds_1
				b.insertOrder(t, tx, id+2, 2) // ds_0
				if err := tx.Commit(); err != nil {
					t.Fatalf("commit: %v", err)
				}
				if got := st.got(); len(got) == 0 || got[0] != xa.StagePrepared {
					t.Errorf("stages %v: the commit did not go through two-phase commit", got)
				}

				tx, err = db.Begin()
				if err != nil {
					t.Fatal(err)
				}
				before := len(st.got())
				b.insertOrder(t, tx, id+3, 1)
				if err := tx.Commit(); err != nil {
					t.Fatalf("one data source: %v", err)
				}
				if got := st.got(); len(got) != before {
					t.Errorf("a transaction on one data source went through stages %v", got[before:])
				}
			}
			wantOrders(t, b, []int64{102, 202}, []int64{101, 103, 201, 203})
		})
	}
}

// Rollback rolls back every data source the transaction reached.
func TestTwoPhaseRollbackRollsBackEveryBranch(t *testing.T) {
	for _, b := range tpBackends(t, "rollback") {
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1)
			b.insertOrder(t, tx, 2, 2)
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{}, []int64{})
		})
	}
}

// A failure after every branch prepared and before the decision is logged
// rolls back every branch, and the error is not ErrTxInDoubt; the
// connection pool stays usable.
func TestTwoPhaseCommitRollsBackEveryBranchWhenFailingBeforeTheDecision(t *testing.T) {
	for _, b := range tpBackends(t, "beforedecision") {
		t.Run(b.name, func(t *testing.T) {
			st := &stages{failAt: xa.StagePrepared}
			db := tpOpen(t, b, sqlhook.WithTwoPhaseHook(st.hook))
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1)
			b.insertOrder(t, tx, 2, 2)
			err = tx.Commit()
			if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) || !errors.Is(err, errInjected) {
				t.Fatalf("commit: %v, want the injected failure, not in doubt", err)
			}
			wantOrders(t, b, []int64{}, []int64{})
			b.insertOrder(t, db, 3, 1)
			wantOrders(t, b, []int64{}, []int64{3})
		})
	}
}

// A failure after the decision is logged is ErrTxInDoubt, a
// *TxInDoubtError that says the commit was decided; recovery then commits
// every branch.
func TestTwoPhaseCommitAfterTheDecisionIsInDoubtAndRecoveryCommits(t *testing.T) {
	for _, b := range tpBackends(t, "afterdecision") {
		t.Run(b.name, func(t *testing.T) {
			st := &stages{failAt: xa.StageDecided}
			// The timeout is short: recovery finishes a MySQL branch only
			// once its transaction is older than it.
			db := tpOpen(t, b, sqlhook.WithTwoPhaseHook(st.hook), sqlhook.WithTwoPhaseRecovery(time.Second, 100*time.Millisecond))
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1)
			b.insertOrder(t, tx, 2, 2)
			err = tx.Commit()
			var ide *sqlhook.TxInDoubtError
			if !errors.Is(err, sqlhook.ErrTxInDoubt) || !errors.As(err, &ide) || !ide.Decided {
				t.Fatalf("commit: %v, want a decided *TxInDoubtError", err)
			}
			ds0, ds1 := b.direct(t, 0), b.direct(t, 1)
			const q = `SELECT order_id FROM t_order ORDER BY order_id`
			deadline := time.Now().Add(20 * time.Second)
			for len(int64s(t, ds0, q))+len(int64s(t, ds1, q)) < 2 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			wantOrders(t, b, []int64{2}, []int64{1})
		})
	}
}

// On PostgreSQL a prepare that fails (a deferred unique constraint is
// checked by PREPARE TRANSACTION) rolls back every branch; the error is
// not ErrTxInDoubt.
func TestTwoPhaseCommitRollsBackEveryBranchWhenOnePrepareFails(t *testing.T) {
	for _, b := range tpBackends(t, "preparefails") {
		if b.name != "postgres" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			mustExecDB(t, b.direct(t, 1), `ALTER TABLE t_order ADD CONSTRAINT t_order_status_u UNIQUE (status) DEFERRABLE INITIALLY DEFERRED`)
			db := tpOpen(t, b)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 2, 2) // ds_0
			b.insertOrder(t, tx, 1, 1) // ds_1, status 'x'
			b.insertOrder(t, tx, 3, 1) // ds_1, status 'x' again: fails at prepare
			err = tx.Commit()
			if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Fatalf("commit: %v, want a failure that is not in doubt", err)
			}
			if !strings.Contains(err.Error(), "t_order_status_u") {
				t.Errorf("commit: %v, want the constraint named", err)
			}
			wantOrders(t, b, []int64{}, []int64{})
		})
	}
}

// On PostgreSQL a statement that failed on one branch aborts the whole
// transaction: Commit rolls back both (PREPARE TRANSACTION of the aborted
// branch would roll it back without an error) and says ErrTxAborted.
func TestTwoPhaseFailedStatementRollsBackEveryBranch(t *testing.T) {
	for _, b := range tpBackends(t, "stmtfails") {
		if b.name != "postgres" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 2, 2)
			b.insertOrder(t, tx, 1, 1)
			if _, err := tx.Exec(b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'dup')`), 1, 1); err == nil {
				t.Fatal("duplicate key inserted")
			}
			err = tx.Commit()
			if !errors.Is(err, sqlhook.ErrTxAborted) || errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Fatalf("commit: %v, want ErrTxAborted", err)
			}
			wantOrders(t, b, []int64{}, []int64{})
		})
	}
}

// A data source lost before the commit (its connections cut) fails the
// prepare: every branch rolls back and the error is not ErrTxInDoubt.
func TestTwoPhaseCommitRollsBackEveryBranchWhenADataSourceIsLost(t *testing.T) {
	for _, b := range tpBackends(t, "lost") {
		t.Run(b.name, func(t *testing.T) {
			var p *dbtest.Proxy
			b.dsn[1], p = dbtest.ViaProxy(t, b.driver, b.dsn[1])
			db := tpOpen(t, b)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 2, 2)
			b.insertOrder(t, tx, 1, 1)
			p.Cut()
			err = tx.Commit()
			p.Resume()
			if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) {
				t.Fatalf("commit: %v, want a failure that is not in doubt", err)
			}
			wantOrders(t, b, []int64{}, []int64{})
		})
	}
}

// Savepoints work across the branches: a data source joining after a
// SAVEPOINT gets it, ROLLBACK TO undoes the work of both, and what
// follows commits on both (on MariaDB inside XA branches).
func TestTwoPhaseSavepointsAcrossBranches(t *testing.T) {
	for _, b := range tpBackends(t, "savepoints") {
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 2, 2) // ds_0 begins
			mustTx(t, tx, `SAVEPOINT sp`)
			b.insertOrder(t, tx, 4, 2)
			b.insertOrder(t, tx, 1, 1) // ds_1 joins: SAVEPOINT sp replayed
			mustTx(t, tx, `ROLLBACK TO SAVEPOINT sp`)
			b.insertOrder(t, tx, 3, 1)
			mustTx(t, tx, `RELEASE SAVEPOINT sp`)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{2}, []int64{3})
		})
	}
}

// BeginTx's options hold under two-phase commit: an isolation level
// (MariaDB: SET TRANSACTION before XA START) and read-only (each data
// source begins a local read-only transaction; writing fails).
func TestTwoPhaseBeginTxOptions(t *testing.T) {
	ctx := context.Background()
	for _, b := range tpBackends(t, "options") {
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			if tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSnapshot}); err == nil {
				tx.Rollback() // pgx takes it as REPEATABLE READ
				if b.name == "mariadb" {
					t.Fatal("BeginTx accepted an isolation level MariaDB does not have")
				}
			}
			tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1)
			b.insertOrder(t, tx, 2, 2)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{2}, []int64{1})

			// Reaching only ds_1, not the default data source (where
			// options other than the defaults are checked at BeginTx).
			tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 5, 1)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{2}, []int64{1, 5})
			mustExecDB(t, b.direct(t, 1), `DELETE FROM t_order WHERE order_id = 5`)

			for _, write := range []bool{false, true} {
				tx, err = db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				var n int
				for _, u := range []int64{1, 2} {
					if err := tx.QueryRowContext(ctx, b.q(`SELECT count(*) FROM t_order WHERE user_id = ?`), u).Scan(&n); err != nil || n != 1 {
						t.Fatalf("user %d: %d orders, %v", u, n, err)
					}
				}
				if write {
					if _, err := tx.ExecContext(ctx, b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'ro')`), 3, 1); err == nil {
						t.Error("a read-only transaction wrote")
					}
				}
				if write && b.name == "postgres" {
					err = tx.Rollback() // the failed INSERT aborted it
				} else {
					err = tx.Commit()
				}
				if err != nil {
					t.Fatalf("read-only transaction (write %v): %v", write, err)
				}
			}
			wantOrders(t, b, []int64{2}, []int64{1})
		})
	}
}

// GORM over a sqlhook *sql.DB: a Transaction across data sources commits
// on both, and one whose function fails rolls back on both.
func TestTwoPhaseGormTransactionAcrossDataSources(t *testing.T) {
	for _, b := range tpBackends(t, "gorm") {
		t.Run(b.name, func(t *testing.T) {
			st := &stages{}
			g := gormOver(t, b, tpOpen(t, b, sqlhook.WithTwoPhaseHook(st.hook)))
			err := g.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&gormOrder{OrderID: 1, UserID: 1, Status: "a"}).Error; err != nil {
					return err
				}
				return tx.Create(&gormOrder{OrderID: 2, UserID: 2, Status: "b"}).Error
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := st.got(); len(got) == 0 {
				t.Error("GORM's commit did not go through two-phase commit")
			}
			err = g.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&gormOrder{OrderID: 3, UserID: 1, Status: "c"}).Error; err != nil {
					return err
				}
				if err := tx.Create(&gormOrder{OrderID: 4, UserID: 2, Status: "d"}).Error; err != nil {
					return err
				}
				return errUndo
			})
			if !errors.Is(err, errUndo) {
				t.Fatalf("Transaction: %v, want errUndo", err)
			}
			wantOrders(t, b, []int64{2}, []int64{1})
		})
	}
}

// SQLite cannot prepare a transaction: with two-phase commit a statement
// that would take a transaction to a second SQLite data source is refused
// before it runs (ErrCrossSourceTx and ErrTwoPhaseUnavailable), with
// WithMultiSourceTx too; a transaction on one data source works.
func TestTwoPhaseRefusesSQLiteAcrossDataSources(t *testing.T) {
	dir := t.TempDir()
	b := txBackend{name: "sqlite", driver: "sqlite", dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}}
	for i := range 2 {
		mustExecDB(t, b.direct(t, i), `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(40))`)
	}
	for _, opts := range [][]sqlhook.Option{{sqlhook.WithTwoPhaseCommit()}, {sqlhook.WithTwoPhaseCommit(), sqlhook.WithMultiSourceTx()}} {
		db := b.open(t, opts...)
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		b.insertOrder(t, tx, 2, 2) // ds_0
		_, err = tx.Exec(`INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'x')`)
		if !errors.Is(err, sqlhook.ErrCrossSourceTx) || !errors.Is(err, sqlhook.ErrTwoPhaseUnavailable) {
			t.Fatalf("second data source: %v, want ErrCrossSourceTx and ErrTwoPhaseUnavailable", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		wantOrders(t, b, []int64{2}, []int64{})
		mustExecDB(t, b.direct(t, 0), `DELETE FROM t_order`)
	}
}

// Closing the *sql.DB stops recovery and closes the coordinator's pools:
// no goroutine is left.
func TestTwoPhaseCloseLeavesNoGoroutine(t *testing.T) {
	for _, b := range tpBackends(t, "leak") {
		t.Run(b.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			cfg, err := shardconf.Parse(fmt.Appendf(nil, txRules, b.driver, b.dsn[0], b.driver, b.dsn[1]))
			if err != nil {
				t.Fatal(err)
			}
			db, err := sqlhook.Open(cfg, sqlhook.WithTwoPhaseCommit(), sqlhook.WithTwoPhaseRecovery(0, 10*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1)
			b.insertOrder(t, tx, 2, 2)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // a few recovery rounds
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			goleak.VerifyNone(t, ignore)
			noBranchesLeft(t, b)
		})
	}
}

// snowflakeIDs is WithTwoPhaseKeyGenerator with a SNOWFLAKE generator of
// the test's own.
func snowflakeIDs(t *testing.T) sqlhook.Option {
	g, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "3"}, keygen.WithSequenceScope(keygen.NewSequenceScope()))
	if err != nil {
		t.Fatal(err)
	}
	return sqlhook.WithTwoPhaseKeyGenerator(g)
}

// A PostgreSQL data source whose max_prepared_transactions is 0 cannot
// prepare: Open refuses it with an error matching ErrTwoPhaseUnavailable
// that names the data source and the setting, and leaves no goroutine
// behind. (The server here allows prepared transactions: ds_1's
// connections answer the setting's query with 0, as a server left at the
// default does, and pass everything else on.)
func TestTwoPhaseOpenRefusesPostgresWithoutPreparedTransactions(t *testing.T) {
	dsn := [2]string{dbtest.Postgres(t, "sqlhook_tp_noprep_0"), dbtest.Postgres(t, "sqlhook_tp_noprep_1")}
	cfg, err := shardconf.Parse(fmt.Appendf(nil, txRules, "pgx", dsn[0], "pgx", dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ignore := goleak.IgnoreCurrent()
	sources := map[string]driver.Connector{"ds_0": pgxConnector(t, dsn[0]), "ds_1": noPreparedConnector{pgxConnector(t, dsn[1])}}
	db, err := sqlhook.OpenWith(r, sources, sqlhook.WithTwoPhaseCommit())
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a data source that cannot prepare")
	}
	if !errors.Is(err, sqlhook.ErrTwoPhaseUnavailable) || !strings.Contains(err.Error(), `"ds_1"`) ||
		!strings.Contains(err.Error(), "max_prepared_transactions") {
		t.Fatalf("Open: %v, want ErrTwoPhaseUnavailable naming ds_1 and max_prepared_transactions", err)
	}
	goleak.VerifyNone(t, ignore)
}

// pgxConnector is the pgx driver's connector for dsn.
func pgxConnector(t *testing.T, dsn string) driver.Connector {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Driver().(driver.DriverContext).OpenConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noPreparedConnector's connections report max_prepared_transactions = 0.
type noPreparedConnector struct{ driver.Connector }

func (c noPreparedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return noPreparedConn{dc}, nil
}

type noPreparedConn struct{ driver.Conn }

func (c noPreparedConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	if strings.Contains(q, "max_prepared_transactions") {
		return &settingRows{v: "0"}, nil
	}
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (c noPreparedConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (c noPreparedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

// settingRows is one row of one text column.
type settingRows struct {
	v    string
	done bool
}

func (r *settingRows) Columns() []string { return []string{"current_setting"} }
func (r *settingRows) Close() error      { return nil }
func (r *settingRows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done, dest[0] = true, r.v
	return nil
}

// On PostgreSQL a branch whose transaction failed where sqlhook cannot
// see it (a statement on the raw connection UnwrapDataSource gives) is
// not reported committed: PREPARE TRANSACTION of a failed transaction
// rolls it back without an error, and the coordinator, finding nothing
// prepared, rolls back every branch; the error is not ErrTxInDoubt.
func TestTwoPhaseBranchFailedOnTheRawConnectionIsNotCommitted(t *testing.T) {
	ctx := context.Background()
	for _, b := range tpBackends(t, "rawfail") {
		if b.name != "postgres" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 2, 2)
			b.insertOrder(t, tx, 1, 1)
			err = conn.Raw(func(dc any) error {
				pc, err := sqlhook.UnwrapDataSource(ctx, dc, "ds_1")
				if err != nil {
					return err
				}
				_, err = pc.(driver.ExecerContext).ExecContext(ctx, `SELECT 1/0`, nil)
				return err
			})
			if err == nil {
				t.Fatal("SELECT 1/0 succeeded")
			}
			err = tx.Commit()
			if err == nil || errors.Is(err, sqlhook.ErrTxInDoubt) || !strings.Contains(err.Error(), "rolled back") {
				t.Fatalf("commit: %v, want a rollback that is not in doubt", err)
			}
			wantOrders(t, b, []int64{}, []int64{})
		})
	}
}

// A bad two-phase commit option is OpenWith's error (ErrDataSource),
// before anything is sent, and leaves no goroutine behind.
func TestTwoPhaseBadOptionsAreOpenErrors(t *testing.T) {
	sources := map[string]driver.Connector{}
	for _, ds := range []string{"ds_0", "ds_1"} {
		dsn := t.Name() + "/" + ds
		db, mock, err := sqlmock.NewWithDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			db.Close()
			if err := mock.ExpectationsWereMet(); err != nil {
				t.Error(err)
			}
		})
		sources[ds] = dsnConnector{db.Driver(), dsn}
	}
	ignore := goleak.IgnoreCurrent()
	for _, opt := range []sqlhook.Option{
		sqlhook.WithTwoPhaseLog("ds_9", ""),
		sqlhook.WithTwoPhaseLog("", "no such-table"),
		sqlhook.WithTwoPhaseRecovery(time.Millisecond, 0),
	} {
		db, err := sqlhook.OpenWith(mockRouter(t, keygentest.NewClock(time.Now())), sources,
			sqlhook.WithDialect(sqlhook.PostgreSQL), sqlhook.WithTwoPhaseCommit(), opt)
		if err == nil {
			db.Close()
			t.Error("OpenWith accepted a bad two-phase commit option")
			continue
		}
		if !errors.Is(err, sqlhook.ErrDataSource) {
			t.Errorf("OpenWith: %v, want ErrDataSource", err)
		}
	}
	goleak.VerifyNone(t, ignore)
}

// A transaction may not name the decision log's table on the log's data
// source (ds_0): a lock its branch took there, held once prepared, would
// keep every decision, its own included, from being logged, for good.
// The statement is refused before it is sent (ErrUnsupported), and the
// transaction goes on; outside a transaction the table can be read.
func TestTwoPhaseTransactionCannotUseTheDecisionLog(t *testing.T) {
	for _, b := range tpBackends(t, "uselog") {
		t.Run(b.name, func(t *testing.T) {
			db := tpOpen(t, b)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 1, 1)
			for _, q := range []string{
				`LOCK TABLE shardkey_xa_log IN EXCLUSIVE MODE`,
				`DELETE FROM Shardkey_XA_Log WHERE created_at < '2000-01-01'`,
				`SELECT gtrid FROM "shardkey_xa_log" FOR UPDATE`,
			} {
				if b.name == "mariadb" {
					q = strings.ReplaceAll(q, `"`, "`")
				}
				if _, err := tx.Exec(q); !errors.Is(err, sqlhook.ErrUnsupported) {
					t.Errorf("%s: %v, want ErrUnsupported", q, err)
				}
			}
			b.insertOrder(t, tx, 2, 2)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{2}, []int64{1})
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM shardkey_xa_log WHERE outcome = 'X'`).Scan(&n); err != nil {
				t.Errorf("reading the log outside a transaction: %v", err)
			}
		})
	}
}

// A write outside a transaction reaching several data sources runs in a
// two-phase transaction of its own: it is stored whole, or not at all
// when any of its parts fails, whichever data source that part is on.
func TestTwoPhaseStatementOutsideATransactionIsAtomicAcrossDataSources(t *testing.T) {
	for _, b := range tpBackends(t, "implicit") {
		t.Run(b.name, func(t *testing.T) {
			st := &stages{}
			db := tpOpen(t, b, sqlhook.WithTwoPhaseHook(st.hook))
			insert := b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'new'), (?, ?, 'new')`)
			if _, err := db.Exec(insert, 1, 1, 2, 2); err != nil {
				t.Fatalf("insert across data sources: %v", err)
			}
			if got := st.got(); len(got) == 0 || got[0] != xa.StagePrepared {
				t.Errorf("stages %v: the statement did not commit by two-phase commit", got)
			}
			// The duplicate is on ds_1 (user 1), then on ds_0 (user 2):
			// whichever part fails, the other's new row is not kept.
			for _, dup := range [][4]any{{3, 2, 1, 1}, {4, 1, 2, 2}} {
				if _, err := db.Exec(insert, dup[:]...); err == nil {
					t.Fatalf("rows %v: a duplicate key was inserted", dup)
				} else if errors.Is(err, sqlhook.ErrTxInDoubt) {
					t.Fatalf("rows %v: %v, want a plain failure", dup, err)
				}
			}
			res, err := db.Exec(b.q(`UPDATE t_order SET status = 'paid' WHERE user_id IN (?, ?)`), 1, 2)
			if err != nil {
				t.Fatalf("update across data sources: %v", err)
			}
			if n, _ := res.RowsAffected(); n != 2 {
				t.Errorf("update: %d rows affected, want 2", n)
			}
			wantOrders(t, b, []int64{2}, []int64{1})
		})
	}
}
