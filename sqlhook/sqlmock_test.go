package sqlhook_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"
	"time"

	"github.com/DATA-DOG/go-sqlmock"

	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// mockRules: t_order over ds_0/ds_1 by user_id and t_order_0/1 by order_id.
const mockRules = `
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snow}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
  keyGenerators:
    snow: {type: SNOWFLAKE, props: {worker-id: 21, max-vibration-offset: 0}}
`

type dsnConnector struct {
	drv driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

// mockSource is a sqlmock database as a driver.Connector, matching SQL
// exactly.
func mockSource(t *testing.T, name string) (driver.Connector, sqlmock.Sqlmock) {
	t.Helper()
	dsn := t.Name() + "/" + name
	db, mock, err := sqlmock.NewWithDSN(dsn, sqlmock.QueryMatcherOption(sqlmock.QueryMatcherEqual))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if err := mock.ExpectationsWereMet(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
	return dsnConnector{db.Driver(), dsn}, mock
}

func mockRouter(t *testing.T, clock keygen.Clock) *shardconf.Router {
	t.Helper()
	cfg, err := shardconf.Parse([]byte(mockRules))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg, shardconf.WithKeyGenOptions(keygen.WithClock(clock)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mockKeys gives the keys the router's generator issues first: the same
// generator on its own clock set to the same instant.
func mockKeys(t *testing.T, at time.Time, n int) []int64 {
	t.Helper()
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "21", "max-vibration-offset": "0"},
		keygen.WithClock(keygentest.NewClock(at)))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, n)
	if err := gen.NextIDs(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSQLMockExactStatements(t *testing.T) {
	c0, m0 := mockSource(t, "ds_0")
	c1, m1 := mockSource(t, "ds_1")
	at := time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)
	db, err := sqlhook.OpenWith(mockRouter(t, keygentest.NewClock(at)), map[string]driver.Connector{"ds_0": c0, "ds_1": c1},
		sqlhook.WithDialect(sqlhook.PostgreSQL))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()

	// Point SELECT: one table, arguments untouched; keygen.ID and uint32
	// sharding values are normalised for routing only.
	m1.ExpectQuery(`SELECT id FROM "t_order_1" AS t_order WHERE user_id = $1 AND order_id = $2`).
		WithArgs(int64(3), int64(5)).WillReturnRows(sqlmock.NewRows([]string{"id"}).AddRow(5))
	var id int64
	if err := db.QueryRowContext(ctx, `SELECT id FROM t_order WHERE user_id = $1 AND order_id = $2`, uint32(3), keygen.ID(5)).Scan(&id); err != nil || id != 5 {
		t.Fatalf("point select: %d, %v", id, err)
	}

	// A multi-row INSERT across data sources: keys generated in row order
	// (sequence 0, 1, 2 at one instant: tables 0, 1, 0), rows split by
	// target, placeholders renumbered, the key column added.
	keys := mockKeys(t, at, 3)
	m1.ExpectExec(`INSERT INTO "t_order_0" (user_id, status, "order_id") VALUES ($1, $2, $3), ($4, 'c', $5)`).
		WithArgs(int64(1), "a", keys[0], int64(3), keys[2]).WillReturnResult(sqlmock.NewResult(0, 2))
	m0.ExpectExec(`INSERT INTO "t_order_1" (user_id, status, "order_id") VALUES ($1, $2, $3)`).
		WithArgs(int64(2), "b", keys[1]).WillReturnResult(sqlmock.NewResult(0, 1))
	res, err := db.ExecContext(ctx, `INSERT INTO t_order (user_id, status) VALUES ($1, $2), ($3, $4), ($5, 'c')`, 1, "a", 2, "b", 3)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3 {
		t.Errorf("rows affected %d, want 3", n)
	}

	// UPDATE by IN over two tables of one data source: each table gets
	// the statement, rows affected are summed; in a transaction it begins
	// lazily on that data source only.
	m1.ExpectBegin()
	m1.ExpectExec(`UPDATE "t_order_0" AS t_order SET status = $1 WHERE user_id = $2 AND order_id IN ($3, $4)`).
		WithArgs("x", int64(1), int64(10), int64(11)).WillReturnResult(sqlmock.NewResult(0, 1))
	m1.ExpectExec(`UPDATE "t_order_1" AS t_order SET status = $1 WHERE user_id = $2 AND order_id IN ($3, $4)`).
		WithArgs("x", int64(1), int64(10), int64(11)).WillReturnResult(sqlmock.NewResult(0, 1))
	m1.ExpectCommit()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err = tx.ExecContext(ctx, `UPDATE t_order SET status = $1 WHERE user_id = $2 AND order_id IN ($3, $4)`, "x", 1, 10, 11)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("rows affected %d, want 2", n)
	}
	// The second data source is refused and nothing is sent.
	if _, err := tx.ExecContext(ctx, `DELETE FROM t_order WHERE user_id = 2 AND order_id = 2`); !errors.Is(err, sqlhook.ErrCrossSourceTx) {
		t.Errorf("second data source: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestSQLMockRefusesBeforeSending(t *testing.T) {
	c0, _ := mockSource(t, "ds_0")
	c1, _ := mockSource(t, "ds_1")
	db, err := sqlhook.OpenWith(mockRouter(t, keygen.NewSystemClock(nil)), map[string]driver.Connector{"ds_0": c0, "ds_1": c1},
		sqlhook.WithDialect(sqlhook.PostgreSQL))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// No expectations: anything reaching a mock fails the test.
	for _, q := range []string{
		`SELECT * FROM t_order WHERE status = 'x'`,
		`SELECT * FROM t_order WHERE user_id = 1`,
		`DELETE FROM t_order`,
	} {
		if _, err := db.ExecContext(context.Background(), q); !errors.Is(err, shardconf.ErrMissingShardingKey) {
			t.Errorf("%s: %v, want ErrMissingShardingKey", q, err)
		}
	}
	var se *sqlhook.StatementError
	_, err = db.ExecContext(context.Background(), `SELECT * FROM t_order WHERE order_id IN (SELECT 1 FROM t_order)`)
	if !errors.As(err, &se) || !errors.Is(err, sqlhook.ErrUnsupported) {
		t.Errorf("subquery: %v", err)
	}
}
