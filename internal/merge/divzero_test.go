package merge

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// Computed columns over real shards where the divisor is zero only for
// the whole table (COUNT(x) - MAX(k) is non-zero on every shard):
// PostgreSQL fails the query, MariaDB and SQLite return NULL, which
// COALESCE then replaces, typed as the database types it.
func TestComputedDivisionByZeroOfMergedValuesAsEachDatabase(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 2}, {2, 4}}
	defer func() { shardRanges = saved }()
	rows := [][]any{{0, 5, 1}, {1, 7, 1}, {2, nil, 3}, {3, 2, 3}} // COUNT(x) 3, MAX(k) 3
	pg := dbtest.Postgres(t, "mergeatk_divzero")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, x int, k int)`, rows, "$")
	my := dbtest.MySQL(t, "mergeatk_divzero")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, x int, k int)`, rows, "?")
	lite := "file:" + filepath.Join(t.TempDir(), "z.db")
	fill(t, "sqlite", lite, `CREATE TABLE t (id integer PRIMARY KEY, x integer, k integer)`, rows, "?")
	col := func(c int) *Expr { return &Expr{Op: ExprCol, Col: c} }
	bin := func(op ExprOp, a, b *Expr) *Expr { return &Expr{Op: op, Args: []*Expr{a, b}} }
	div := bin(ExprDiv, col(1), bin(ExprSub, col(2), col(3)))
	for _, d := range []*dialectDB{
		{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg},
		{name: "mariadb", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my},
		{name: "sqlite", dialect: SQLite, drv: driverOf(t, "sqlite", lite), dsn: lite},
	} {
		for _, c := range []struct {
			expr string
			e    *Expr
		}{
			{"SUM(x) / (COUNT(x) - MAX(k))", div},
			{"COALESCE(SUM(x) / (COUNT(x) - MAX(k)), -1)", &Expr{Op: ExprCoalesce, Args: []*Expr{div, {Op: ExprConst, Const: int64(-1)}}}},
		} {
			if d.dialect == MySQL && c.e.Op == ExprCoalesce {
				continue // MySQL divides only as the outermost operation (it rounds there)
			}
			p := Plan{Dialect: d.dialect, Visible: 1, Grouped: true, Limit: -1,
				Aggs:     []Agg{{Col: 1, Func: Sum}, {Col: 2, Func: Count}, {Col: 3, Func: Max}},
				Computed: []Computed{{Col: 0, Expr: c.e}}}
			got, _, err := d.mergeShards(t, "SELECT "+c.expr+", SUM(x), COUNT(x), MAX(k) FROM t WHERE id >= ? AND id < ?", p)
			want, werr := queryAll(d.conn(t, 7), "SELECT "+c.expr+" FROM t")
			if werr != nil {
				if !errors.Is(err, ErrDivisionByZero) {
					t.Errorf("%s %s: database %v; merge %s, %v", d.name, c.expr, werr, show(got), err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", d.name, c.expr, err)
				continue
			}
			sameResult(t, d.name+" "+c.expr, got, want, noFloats)
		}
	}
}
