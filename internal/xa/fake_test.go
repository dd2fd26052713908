package xa

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
)

// A fake database/sql driver: the core's tests may import no real one.
// Every statement goes to a responder, which returns columns and rows (a
// query) or an error.

type fakeResult struct {
	cols []string
	rows [][]driver.Value
}

type responder func(query string, args []driver.NamedValue) (fakeResult, error)

// fakeDB opens a pool whose every statement r answers, and logs them.
type fakeDB struct {
	mu     sync.Mutex
	log    []string
	r      responder
	commit func() error // a transaction's COMMIT; nil succeeds
}

func (f *fakeDB) open() *sql.DB { return sql.OpenDB(fakeConnector{f}) }

func (f *fakeDB) count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, q := range f.log {
		if strings.HasPrefix(q, prefix) {
			n++
		}
	}
	return n
}

func (f *fakeDB) answer(q string, args []driver.NamedValue) (fakeResult, error) {
	f.mu.Lock()
	f.log = append(f.log, q)
	f.mu.Unlock()
	return f.r(q, args)
}

type fakeConnector struct{ f *fakeDB }

func (c fakeConnector) Connect(context.Context) (driver.Conn, error) { return fakeConn(c), nil }
func (c fakeConnector) Driver() driver.Driver                        { return fakeDriver{} }

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("fake: open through the connector")
}

type fakeConn struct{ f *fakeDB }

func (c fakeConn) Prepare(q string) (driver.Stmt, error) { return fakeStmt{c.f, q}, nil }
func (c fakeConn) Close() error                          { return nil }
func (c fakeConn) Begin() (driver.Tx, error)             { return fakeTx(c), nil }

// fakeTx is a transaction the responder never hears of; its COMMIT does
// what fakeDB.commit says.
type fakeTx struct{ f *fakeDB }

func (t fakeTx) Commit() error {
	if t.f.commit != nil {
		return t.f.commit()
	}
	return nil
}
func (fakeTx) Rollback() error { return nil }

func (c fakeConn) QueryContext(_ context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	res, err := c.f.answer(q, args)
	if err != nil {
		return nil, err
	}
	return &fakeRows{res: res}, nil
}

func (c fakeConn) ExecContext(_ context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if _, err := c.f.answer(q, args); err != nil {
		return nil, err
	}
	return driver.RowsAffected(1), nil
}

type fakeStmt struct {
	f *fakeDB
	q string
}

func (s fakeStmt) Close() error  { return nil }
func (s fakeStmt) NumInput() int { return -1 }
func (s fakeStmt) Exec([]driver.Value) (driver.Result, error) {
	return nil, errors.New("fake: use ExecContext")
}
func (s fakeStmt) Query([]driver.Value) (driver.Rows, error) {
	return nil, errors.New("fake: use QueryContext")
}

type fakeRows struct {
	res fakeResult
	i   int
}

func (r *fakeRows) Columns() []string { return r.res.cols }
func (r *fakeRows) Close() error      { return nil }
func (r *fakeRows) Next(dst []driver.Value) error {
	if r.i >= len(r.res.rows) {
		return io.EOF
	}
	copy(dst, r.res.rows[r.i])
	r.i++
	return nil
}

// fakeLogID is the log id every fake log holds.
const fakeLogID = "0123456789abcdef"

// fakeServer answers what Start and Recover ask of an empty server with
// max_prepared_transactions = maxPrepared (PostgreSQL).
func fakeServer(maxPrepared string) responder {
	one := func(col string, v driver.Value) fakeResult {
		return fakeResult{cols: []string{col}, rows: [][]driver.Value{{v}}}
	}
	return func(q string, _ []driver.NamedValue) (fakeResult, error) {
		switch {
		case strings.HasPrefix(q, "SELECT pg_catalog.current_database(), pg_catalog.current_schema()"):
			return fakeResult{cols: []string{"d", "s"}, rows: [][]driver.Value{{"app", "public"}}}, nil
		case strings.HasPrefix(q, "SELECT DATABASE()"):
			return one("d", "app"), nil
		case strings.HasPrefix(q, "SELECT pg_catalog.current_setting('max_prepared_transactions')"):
			return one("m", maxPrepared), nil
		case strings.HasPrefix(q, "SELECT gid FROM pg_catalog.pg_prepared_xacts"):
			return fakeResult{cols: []string{"gid"}}, nil
		case q == pgLogLocation:
			return fakeResult{cols: []string{"d", "s", "t"}, rows: [][]driver.Value{{"app", "public", "shardkey_xa_log"}}}, nil
		case q == mysqlLocation:
			return one("d", "app"), nil
		case q == mysqlDurability:
			return fakeResult{cols: []string{"f", "b", "s"}, rows: [][]driver.Value{{"1", "0", "0"}}}, nil
		case q == "XA RECOVER":
			return fakeResult{cols: []string{"formatID", "gtrid_length", "bqual_length", "data"}}, nil
		case strings.HasPrefix(q, "SELECT branches FROM") && strings.Contains(q, "outcome = 'I'"):
			return one("id", fakeLogID), nil
		case strings.HasPrefix(q, "SELECT count(*) FROM"):
			return one("n", int64(0)), nil
		case strings.HasPrefix(q, "SELECT gtrid, branches FROM"):
			return fakeResult{cols: []string{"gtrid", "branches"}}, nil
		case strings.HasPrefix(q, "CREATE TABLE IF NOT EXISTS"), strings.HasPrefix(q, "DELETE FROM"), strings.HasPrefix(q, "INSERT INTO"),
			strings.HasPrefix(q, "WITH durable AS"):
			return fakeResult{}, nil
		}
		return fakeResult{}, errors.New("fake: unexpected statement " + q)
	}
}
