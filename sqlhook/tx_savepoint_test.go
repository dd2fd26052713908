package sqlhook_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// txRules: t_order on two data sources by user_id (one table each);
// everything else is on the default data source, ds_0.
const txRules = `
dataSources:
  ds_0: {driver: %s, dsn: %q}
  ds_1: {driver: %s, dsn: %q}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`

// txBackend is one database kind with two databases as ds_0 and ds_1,
// each holding t_order; ds_0 also holds the unsharded t_note.
type txBackend struct {
	name, driver string
	dsn          [2]string
	dollar       bool
}

// txBackends creates fresh databases named after tag on PostgreSQL,
// MariaDB and SQLite.
func txBackends(t *testing.T, tag string) []txBackend {
	t.Helper()
	dir := t.TempDir()
	bs := []txBackend{
		{name: "postgres", driver: "pgx", dollar: true,
			dsn: [2]string{dbtest.Postgres(t, "txs_"+tag+"_0"), dbtest.Postgres(t, "txs_"+tag+"_1")}},
		{name: "mariadb", driver: "mysql",
			dsn: [2]string{dbtest.MySQL(t, "txs_"+tag+"_0"), dbtest.MySQL(t, "txs_"+tag+"_1")}},
		{name: "sqlite", driver: "sqlite",
			dsn: [2]string{filepath.Join(dir, "ds0.db"), filepath.Join(dir, "ds1.db")}},
	}
	for _, b := range bs {
		for i := range 2 {
			d := b.direct(t, i)
			mustExecDB(t, d, `CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(40))`)
			if i == 0 {
				mustExecDB(t, d, `CREATE TABLE t_note (id BIGINT PRIMARY KEY, v VARCHAR(40))`)
			}
		}
	}
	return bs
}

func mustExecDB(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// q spells ? placeholders as $n for PostgreSQL.
func (b txBackend) q(s string) string {
	if !b.dollar {
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

// open opens both data sources through sqlhook.
func (b txBackend) open(t *testing.T, opts ...sqlhook.Option) *sql.DB {
	t.Helper()
	cfg, err := shardconf.Parse(fmt.Appendf(nil, txRules, b.driver, b.dsn[0], b.driver, b.dsn[1]))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlhook.Open(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// direct opens data source i without sqlhook.
func (b txBackend) direct(t *testing.T, i int) *sql.DB {
	t.Helper()
	db, err := sql.Open(b.driver, b.dsn[i])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// orders lists the order ids stored in ds_i.t_order.
// It opens and closes its own pool: tests poll it.
func (b txBackend) orders(t *testing.T, i int) []int64 {
	t.Helper()
	db, err := sql.Open(b.driver, b.dsn[i])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return int64s(t, db, `SELECT order_id FROM t_order ORDER BY order_id`)
}

func int64s(t *testing.T, db *sql.DB, q string) []int64 {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}

// insertOrder inserts order id of user u through e.
func (b txBackend) insertOrder(t *testing.T, e execer, id, u int64) {
	t.Helper()
	if _, err := e.ExecContext(context.Background(), b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`), id, u); err != nil {
		t.Fatalf("insert order %d of user %d: %v", id, u, err)
	}
}

func wantOrders(t *testing.T, b txBackend, ds0, ds1 []int64) {
	t.Helper()
	if got := b.orders(t, 0); !slices.Equal(got, ds0) {
		t.Errorf("%s ds_0.t_order has %v, want %v", b.name, got, ds0)
	}
	if got := b.orders(t, 1); !slices.Equal(got, ds1) {
		t.Errorf("%s ds_1.t_order has %v, want %v", b.name, got, ds1)
	}
}

func mustTx(t *testing.T, tx *sql.Tx, q string, args ...any) {
	t.Helper()
	if _, err := tx.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// A savepoint as the transaction's first statement is kept until the
// transaction reaches a data source, then set there: ROLLBACK TO undoes
// what followed it, and the transaction still reaches one data source
// only (the one its statements route to, not the default).
func TestSavepointBeforeAnyStatementBehavesAsTheDriver(t *testing.T) {
	for _, b := range txBackends(t, "spfirst") {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			mustTx(t, tx, `SAVEPOINT sp`)
			b.insertOrder(t, tx, 11, 1) // ds_1
			mustTx(t, tx, `ROLLBACK TO SAVEPOINT sp`)
			b.insertOrder(t, tx, 13, 1)
			mustTx(t, tx, `SAVEPOINT sp2`)
			b.insertOrder(t, tx, 15, 1)
			mustTx(t, tx, `RELEASE SAVEPOINT sp2`)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{}, []int64{13, 15})

			// On an unsharded table of the default data source too.
			tx, err = db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			mustTx(t, tx, `SAVEPOINT a`)
			mustTx(t, tx, `SAVEPOINT b`)
			mustTx(t, tx, b.q(`INSERT INTO t_note (id, v) VALUES (?, 'undone')`), 1)
			mustTx(t, tx, `ROLLBACK TO SAVEPOINT a`)
			mustTx(t, tx, b.q(`INSERT INTO t_note (id, v) VALUES (?, 'kept')`), 2)
			if _, err := tx.Exec(`ROLLBACK TO SAVEPOINT b`); err == nil {
				t.Error("ROLLBACK TO a savepoint that an earlier ROLLBACK TO removed succeeded")
			}
			tx.Rollback()
			if got := int64s(t, b.direct(t, 0), `SELECT id FROM t_note`); len(got) != 0 {
				t.Errorf("t_note after rollback: %v", got)
			}

			// A RELEASE or ROLLBACK TO of an unknown savepoint before
			// any data source fails, as it would on the database.
			tx, err = db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(`ROLLBACK TO SAVEPOINT nowhere`); err == nil {
				t.Error("ROLLBACK TO an unknown savepoint succeeded")
			}
			tx.Rollback()
		})
	}
}

// With WithMultiSourceTx, a data source that joins the transaction after
// savepoints were set gets them, with earlier RELEASE and ROLLBACK TO
// applied, so ROLLBACK TO undoes its work too and the outer commit keeps
// only what was not rolled back, on every data source.
func TestLateJoiningDataSourceGetsPendingSavepoints(t *testing.T) {
	for _, b := range txBackends(t, "spjoin") {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t, sqlhook.WithMultiSourceTx())
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 2, 0) // ds_0 only
			mustTx(t, tx, `SAVEPOINT a`)
			mustTx(t, tx, `SAVEPOINT b`)
			mustTx(t, tx, `RELEASE SAVEPOINT b`)
			b.insertOrder(t, tx, 3, 1) // ds_1 joins: gets a (b is released)
			b.insertOrder(t, tx, 4, 0)
			mustTx(t, tx, `ROLLBACK TO SAVEPOINT a`)
			b.insertOrder(t, tx, 5, 1)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{2}, []int64{5})

			// ROLLBACK TO b, released before ds_1 joined, fails on the
			// first data source and runs nowhere: the transaction goes on
			// as on the bare driver (PostgreSQL: aborted until ROLLBACK
			// TO, so Commit rolls back; MariaDB, SQLite: usable).
			tx, err = db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			mustTx(t, tx, `SAVEPOINT a`)
			mustTx(t, tx, `SAVEPOINT b`)
			mustTx(t, tx, `RELEASE SAVEPOINT b`)
			b.insertOrder(t, tx, 6, 1)
			b.insertOrder(t, tx, 7, 0)
			if _, err := tx.Exec(`ROLLBACK TO SAVEPOINT b`); err == nil {
				t.Fatal("ROLLBACK TO a released savepoint succeeded")
			}
			if b.name == "postgres" {
				if err := tx.Commit(); !errors.Is(err, sqlhook.ErrTxAborted) {
					t.Errorf("Commit after a failed ROLLBACK TO: %v, want ErrTxAborted", err)
				}
				wantOrders(t, b, []int64{2}, []int64{5})
				return
			}
			if err := tx.Commit(); err != nil {
				t.Errorf("Commit after a ROLLBACK TO that ran nowhere: %v", err)
			}
			wantOrders(t, b, []int64{2, 7}, []int64{5, 6})
		})
	}
}

// A ROLLBACK TO that succeeds on one data source and fails on another
// leaves them different: the transaction is unusable, Commit is refused
// and everything is rolled back.
func TestFailedRollbackToAbortsTransaction(t *testing.T) {
	ctx := context.Background()
	for _, b := range txBackends(t, "spfail") {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t, sqlhook.WithMultiSourceTx())
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			b.insertOrder(t, tx, 2, 0)
			b.insertOrder(t, tx, 3, 1)
			mustTx(t, tx, `SAVEPOINT sp`)
			b.insertOrder(t, tx, 5, 1)
			// Release sp behind sqlhook's back on ds_1 only.
			err = conn.Raw(func(dc any) error {
				raw, err := sqlhook.UnwrapDataSource(ctx, dc, "ds_1")
				if err != nil {
					return err
				}
				_, err = raw.(driver.ExecerContext).ExecContext(ctx, `RELEASE SAVEPOINT sp`, nil)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(`ROLLBACK TO SAVEPOINT sp`)
			if !errors.Is(err, sqlhook.ErrTxAborted) {
				t.Fatalf("ROLLBACK TO failing on ds_1 only: %v, want ErrTxAborted", err)
			}
			if _, err := tx.Exec(b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`), 7, 0); !errors.Is(err, sqlhook.ErrTxAborted) {
				t.Errorf("statement after the failed ROLLBACK TO: %v, want ErrTxAborted", err)
			}
			if _, err := tx.Exec(`SAVEPOINT again`); !errors.Is(err, sqlhook.ErrTxAborted) {
				t.Errorf("SAVEPOINT after the failed ROLLBACK TO: %v, want ErrTxAborted", err)
			}
			if err := tx.Commit(); !errors.Is(err, sqlhook.ErrTxAborted) {
				t.Errorf("Commit: %v, want ErrTxAborted", err)
			}
			wantOrders(t, b, []int64{}, []int64{})
		})
	}
}

// A multi-row INSERT split across data sources that fails on its second
// unit is never committed in part: later statements fail until ROLLBACK
// TO a savepoint taken before it undoes the first unit's rows, and then
// the transaction goes on and commits.
func TestPartialStatementUndoneByRollbackTo(t *testing.T) {
	for _, b := range txBackends(t, "sppartial") {
		t.Run(b.name, func(t *testing.T) {
			mustExecDB(t, b.direct(t, 1), b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`), 101, 1)
			db := b.open(t, sqlhook.WithMultiSourceTx())
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			mustTx(t, tx, `SAVEPOINT sp`)
			// ds_0's row goes first; ds_1's duplicates order 101.
			_, err = tx.Exec(b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'a'), (?, ?, 'b')`), 50, 0, 101, 1)
			if err == nil {
				t.Fatal("duplicate key on ds_1 not reported")
			}
			if _, err := tx.Exec(b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`), 52, 0); !errors.Is(err, sqlhook.ErrTxAborted) {
				t.Fatalf("statement after a partly run one: %v, want ErrTxAborted", err)
			}
			mustTx(t, tx, `ROLLBACK TO SAVEPOINT sp`)
			b.insertOrder(t, tx, 54, 0)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{54}, []int64{101})
		})
	}
}

// On PostgreSQL a failed statement aborts its data source's transaction
// until ROLLBACK TO; a transaction across data sources does the same as
// a whole, so the other data sources never commit without it.
func TestPostgresFailedStatementAbortsTransactionAcrossDataSources(t *testing.T) {
	b := txBackends(t, "pgabort")[0]
	mustExecDB(t, b.direct(t, 1), b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`), 101, 1)
	db := b.open(t, sqlhook.WithMultiSourceTx())
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	b.insertOrder(t, tx, 50, 0)
	if _, err := tx.Exec(b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'dup')`), 101, 1); err == nil {
		t.Fatal("duplicate key on ds_1 not reported")
	}
	if _, err := tx.Exec(b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`), 52, 0); !errors.Is(err, sqlhook.ErrTxAborted) {
		t.Errorf("statement on ds_0 after a failure on ds_1: %v, want ErrTxAborted", err)
	}
	if err := tx.Commit(); !errors.Is(err, sqlhook.ErrTxAborted) {
		t.Errorf("Commit: %v, want ErrTxAborted", err)
	}
	wantOrders(t, b, []int64{}, []int64{101})
}

// ROLLBACK TO or RELEASE of a savepoint never set fails on the first
// data source and runs nowhere else, so the transaction goes on as on
// the bare driver: usable on MariaDB and SQLite; on PostgreSQL aborted
// until a ROLLBACK TO an existing savepoint, which recovers it.
func TestUnknownSavepointLeavesTransactionAsTheDriver(t *testing.T) {
	for _, b := range txBackends(t, "tadv_spunknown") {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t, sqlhook.WithMultiSourceTx())
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			mustTx(t, tx, `SAVEPOINT a`)
			b.insertOrder(t, tx, 2, 0)
			b.insertOrder(t, tx, 3, 1)
			for _, q := range []string{`ROLLBACK TO SAVEPOINT nosuch`, `RELEASE SAVEPOINT nosuch`} {
				if _, err := tx.Exec(q); err == nil || errors.Is(err, sqlhook.ErrTxAborted) {
					t.Fatalf("%s: %v, want the database's error", q, err)
				}
				if b.name == "postgres" {
					if _, err := tx.Exec(b.q(`INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')`), 7, 1); !errors.Is(err, sqlhook.ErrTxAborted) {
						t.Errorf("PostgreSQL statement after %s: %v, want ErrTxAborted", q, err)
					}
					mustTx(t, tx, `ROLLBACK TO SAVEPOINT a`)
					b.insertOrder(t, tx, 2, 0)
					b.insertOrder(t, tx, 3, 1)
				}
			}
			b.insertOrder(t, tx, 4, 0)
			b.insertOrder(t, tx, 5, 1)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantOrders(t, b, []int64{2, 4}, []int64{3, 5})
		})
	}
}
