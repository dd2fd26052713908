package sqlhook_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
	"github.com/shardkey/shardkey/sqlhook"
)

// BenchmarkRoutedStatement is sqlhook's own cost per statement through
// database/sql, on a driver that answers at once (no server, no I/O):
// routing a cached plan, running its units and, for a query over
// several targets, merging their rows. point_select reaches one target,
// user_select two (one data source's tables; 2×10 rows merged),
// scatter_select all four (4×10 rows merged), insert one.
func BenchmarkRoutedStatement(b *testing.B) { benchRoutedStatement(b) }

// benchRules: t_order on ds_0 and ds_1, two tables each, by user_id and
// order_id.
const benchRules = `
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..1}
      databaseStrategy:
        standard: {shardingColumn: user_id, shardingAlgorithmName: mod2}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: mod2}
  shardingAlgorithms:
    mod2: {type: MOD, props: {sharding-count: 2}}
`

func benchRoutedStatement(b *testing.B, opts ...sqlhook.Option) {
	cfg, err := shardconf.Parse([]byte(benchRules))
	if err != nil {
		b.Fatal(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		b.Fatal(err)
	}
	db, err := sqlhook.OpenWith(r, map[string]driver.Connector{"ds_0": benchConnector{}, "ds_1": benchConnector{}},
		append([]sqlhook.Option{sqlhook.WithDialect(sqlhook.MySQL), sqlhook.WithScatter()}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(4)
	ctx := context.Background()
	query := func(q string, want int, args ...any) func() error {
		return func() error {
			rows, err := db.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			n := 0
			var id, user int64
			for rows.Next() {
				if err := rows.Scan(&id, &user); err != nil {
					rows.Close()
					return err
				}
				n++
			}
			if err := rows.Close(); err != nil {
				return err
			}
			if n != want {
				return errors.New("wrong number of rows")
			}
			return nil
		}
	}
	for _, c := range []struct {
		name string
		op   func() error
	}{
		{"point_select", query(`SELECT order_id, user_id FROM t_order WHERE user_id = ? AND order_id = ?`, benchRows, 7, 8)},
		{"user_select", query(`SELECT order_id, user_id FROM t_order WHERE user_id = ?`, 2*benchRows, 7)},
		{"scatter_select", query(`SELECT order_id, user_id FROM t_order`, 4*benchRows)},
		{"insert", func() error {
			_, err := db.ExecContext(ctx, `INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)`, 8, 7, "new")
			return err
		}},
	} {
		b.Run("stmt="+c.name, func(b *testing.B) {
			if err := c.op(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchRows is the number of rows each physical query returns.
const benchRows = 10

// benchConnector opens conns that answer every statement at once: an
// Exec affects one row, a Query returns benchRows rows of two integers.
type benchConnector struct{}

func (benchConnector) Connect(context.Context) (driver.Conn, error) { return benchConn{}, nil }
func (benchConnector) Driver() driver.Driver                        { return benchDriver{} }

type benchDriver struct{}

func (benchDriver) Open(string) (driver.Conn, error) { return benchConn{}, nil }

type benchConn struct{}

func (benchConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("bench: no Prepare") }
func (benchConn) Close() error                        { return nil }
func (benchConn) Begin() (driver.Tx, error)           { return nil, errors.New("bench: no transactions") }
func (benchConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	return driver.RowsAffected(1), nil
}
func (benchConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &benchRowsOf{}, nil
}

type benchRowsOf struct{ i int }

func (*benchRowsOf) Columns() []string { return []string{"order_id", "user_id"} }
func (*benchRowsOf) Close() error      { return nil }
func (r *benchRowsOf) Next(dest []driver.Value) error {
	if r.i == benchRows {
		return io.EOF
	}
	r.i++
	dest[0], dest[1] = int64(r.i), int64(7)
	return nil
}
