package merge

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// MariaDB types +, - and * with a BIGINT UNSIGNED operand (MIN of an
// UNSIGNED column) as unsigned and fails the query when the result is
// negative; the merge fails with ErrOverflow there too, where every
// shard's own value was still in range. Unary minus and COALESCE with a
// signed argument are signed, and stay merged.
func TestMySQLUnsignedArithmeticBelowZeroFailsAsMariaDBDoes(t *testing.T) {
	my := dbtest.MySQL(t, "mergeatk_unsigned")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, u bigint unsigned, s bigint)`, [][]any{{0, 1, 1}, {1, 1, 1}}, "?")
	saved := shardRanges
	shardRanges = [][2]int{{0, 1}, {1, 2}}
	defer func() { shardRanges = saved }()
	col := func(c int) *Expr { return &Expr{Op: ExprCol, Col: c} }
	sub := func(a, b *Expr) *Expr { return &Expr{Op: ExprSub, Args: []*Expr{a, b}} }
	for _, c := range []struct {
		expr string
		e    *Expr
		fail bool
	}{
		{"MIN(u) - COUNT(*)", sub(col(1), col(2)), true},
		{"MIN(u) * 3 - COUNT(*) * 2", sub(&Expr{Op: ExprMul, Args: []*Expr{col(1), {Op: ExprConst, Const: int64(3)}}},
			&Expr{Op: ExprMul, Args: []*Expr{col(2), {Op: ExprConst, Const: int64(2)}}}), true},
		{"MIN(s) - COUNT(*)", sub(col(3), col(2)), false},
		{"-MIN(u) - COUNT(*)", sub(&Expr{Op: ExprNeg, Args: []*Expr{col(1)}}, col(2)), false},
		{"COALESCE(MIN(u), NULL) - COUNT(*)", sub(&Expr{Op: ExprCoalesce, Args: []*Expr{col(1), {Op: ExprConst}}}, col(2)), false},
	} {
		for _, prepared := range []bool{false, true} {
			d := &dialectDB{name: "mariadb", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my, prepared: prepared}
			want, werr := queryAll(d.conn(t, 5), "SELECT "+c.expr+" FROM t")
			p := Plan{Dialect: MySQL, Visible: 1, Grouped: true, Limit: -1,
				Aggs:     []Agg{{Col: 1, Func: Min}, {Col: 2, Func: Count}, {Col: 3, Func: Min}},
				Computed: []Computed{{Col: 0, Expr: c.e}}}
			got, _, err := d.mergeShards(t, "SELECT "+c.expr+", MIN(u), COUNT(*), MIN(s) FROM t WHERE id >= ? AND id < ?", p)
			switch {
			case c.fail && (werr == nil || !errors.Is(err, ErrOverflow)):
				t.Errorf("%s: database %v; merge %s, %v: want both to fail", c.expr, werr, show(got), err)
			case !c.fail && (werr != nil || err != nil):
				t.Errorf("%s: database %v; merge %v", c.expr, werr, err)
			case !c.fail:
				sameResult(t, c.expr, got, want, noFloats)
			}
		}
	}
}

// queryAll runs q on c and reads every row, returning the database's
// error (at the query or at a row) instead of failing.
func queryAll(c driver.Conn, q string) ([][]driver.Value, error) {
	r, err := c.(driver.QueryerContext).QueryContext(context.Background(), q, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out [][]driver.Value
	for {
		dest := make([]driver.Value, len(r.Columns()))
		if err := r.Next(dest); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return out, err
		}
		out = append(out, cloneRow(dest))
	}
}
