package sqlhook

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
)

// stmt is a prepared statement of a sqlhook conn. Where it runs depends
// on its arguments, so preparing it sends nothing; each execution routes
// it, and the underlying statements it needs are prepared on their data
// sources' conns on first use and kept until Close.
type stmt struct {
	c     *conn
	query string
	// prepared: underlying statements by data source and physical SQL.
	prepared map[stmtKey]driver.Stmt
	gen      int // c.gen when prepared was filled
}

type stmtKey struct{ ds, sql string }

var (
	_ driver.Stmt              = (*stmt)(nil)
	_ driver.StmtExecContext   = (*stmt)(nil)
	_ driver.StmtQueryContext  = (*stmt)(nil)
	_ driver.NamedValueChecker = (*stmt)(nil)
)

// Close closes the underlying statements.
func (s *stmt) Close() error {
	var errs []error
	for k, st := range s.prepared {
		if err := st.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sqlhook: close statement on data source %s: %w", k.ds, err))
		}
	}
	s.prepared = nil
	return errors.Join(errs...)
}

// NumInput is -1: the count is only known per unit, and each unit's is
// checked against its underlying statement.
func (s *stmt) NumInput() int { return -1 }

// Exec runs the statement (legacy form).
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), valuesToNamed(args))
}

// Query runs the query (legacy form).
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), valuesToNamed(args))
}

// ExecContext routes the statement with args and runs its units, inside
// the conn's transaction if there is one.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	r, err := s.c.cn.route(ctx, s.query, args)
	if err != nil {
		return nil, s.c.cn.refuse(ctx, err)
	}
	return s.c.execRouted(ctx, s.query, r, s)
}

// QueryContext routes the query with args, runs its units and merges
// their rows.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	r, err := s.c.cn.route(ctx, s.query, args)
	if err != nil {
		return nil, s.c.cn.refuse(ctx, err)
	}
	return s.c.queryRouted(ctx, s.query, r, s)
}

// CheckNamedValue converts arguments as the default data source's conn
// does. When that conn has no NamedValueChecker it returns driver.ErrSkip,
// on which database/sql applies its default conversion: the same as it
// does for the unwrapped driver, except that a ColumnConverter of the
// driver's statements is not consulted (no statement exists yet).
func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if nvc, ok := s.c.def.(driver.NamedValueChecker); ok {
		return nvc.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// underlying returns the statement for query on data source ds (conn dc),
// preparing it on first use.
func (s *stmt) underlying(ctx context.Context, ds string, dc driver.Conn, query string) (driver.Stmt, error) {
	if s.gen != s.c.gen {
		// The conns they were prepared on were closed by a reconnect.
		s.prepared, s.gen = nil, s.c.gen
	}
	k := stmtKey{ds, query}
	if st, ok := s.prepared[k]; ok {
		return st, nil
	}
	st, err := prepareOn(ctx, dc, query)
	if err != nil {
		return nil, err
	}
	if s.prepared == nil {
		s.prepared = map[stmtKey]driver.Stmt{}
	}
	s.prepared[k] = st
	return st, nil
}
