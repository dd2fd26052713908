package gormplugin

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/shardkey/shardkey/internal/merge"
)

// Merged rows reach GORM as a real *sql.Rows (or *sql.Row), so that
// GORM's scanning converts every value into structs, maps, Pluck
// destinations and sql.Scanners exactly as database/sql converts a
// single table's rows. The *sql.Rows comes from an in-process
// database/sql driver whose only query hands back a driver.Rows left for
// it under a one-time name.

var (
	handoff    sync.Map // name -> driver.Rows not yet taken
	handoffSeq atomic.Uint64
	mergedDB   = sync.OnceValue(func() *sql.DB { return sql.OpenDB(handoffConnector{}) })
)

var errNoHandoff = errors.New("gormplugin: merged rows already taken")

// sqlRows turns rows into a *sql.Rows; closing it closes rows.
func sqlRows(ctx context.Context, rows driver.Rows) (*sql.Rows, error) {
	name := leave(rows)
	r, err := mergedDB().QueryContext(ctx, name)
	if err != nil {
		if v, ok := handoff.LoadAndDelete(name); ok {
			closeUntaken(v.(driver.Rows), err)
		}
		return nil, err
	}
	return r, nil
}

// sqlRow turns rows into a *sql.Row holding their first row.
func sqlRow(ctx context.Context, rows driver.Rows) *sql.Row {
	name := leave(rows)
	row := mergedDB().QueryRowContext(ctx, name)
	if v, ok := handoff.LoadAndDelete(name); ok { // the query failed before taking them
		closeUntaken(v.(driver.Rows), row.Err())
	}
	return row
}

// closeUntaken closes rows the handoff query did not take, for err; an
// observed statement ends with err.
func closeUntaken(rows driver.Rows, err error) {
	if o, ok := rows.(*observedRows); ok && o.err == nil {
		o.err = err
	}
	_ = rows.Close()
}

func leave(rows driver.Rows) string {
	name := strconv.FormatUint(handoffSeq.Add(1), 10)
	handoff.Store(name, rows)
	return name
}

type handoffConnector struct{}

func (handoffConnector) Connect(context.Context) (driver.Conn, error) { return handoffConn{}, nil }
func (handoffConnector) Driver() driver.Driver                        { return handoffDriver{} }

type handoffDriver struct{}

func (handoffDriver) Open(string) (driver.Conn, error) { return handoffConn{}, nil }

// handoffConn answers a query by the rows left under its text.
type handoffConn struct{}

var errHandoffOnly = errors.New("gormplugin: the merged-rows connection only hands back merged rows")

func (handoffConn) Prepare(string) (driver.Stmt, error) { return nil, errHandoffOnly }
func (handoffConn) Close() error                        { return nil }
func (handoffConn) Begin() (driver.Tx, error)           { return nil, errHandoffOnly }

func (handoffConn) QueryContext(_ context.Context, query string, _ []driver.NamedValue) (driver.Rows, error) {
	v, ok := handoff.LoadAndDelete(query)
	if !ok {
		return nil, errNoHandoff
	}
	return v.(driver.Rows), nil
}

// refusing wraps the engine's errors with ErrUnsupported (a merge it
// cannot do exactly is a refusal); a target's own error passes as the
// database gave it.
type refusing struct{ *merge.Rows }

func (r refusing) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	var se *merge.ShardError
	if errors.As(err, &se) {
		return se.Err
	}
	return fmt.Errorf("%w: %w", ErrUnsupported, err)
}
