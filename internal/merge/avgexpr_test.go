package merge

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// MariaDB computes AVG(x) * 3 from the average with 9 digits past its
// scale (1.333333333 * 3 = 4.0000), which no shard returns: the merge
// refuses arithmetic on a DECIMAL AVG there, and merges the AVG alone,
// negated or in COALESCE (returned at its scale). PostgreSQL's average is
// the numeric it shows, so arithmetic on it merges.
func TestArithmeticOnMySQLDecimalAvgIsRefusedAsItKeepsHiddenDigits(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 2}, {2, 3}}
	defer func() { shardRanges = saved }()
	rows := [][]any{{0, 1}, {1, 1}, {2, 2}}
	my := dbtest.MySQL(t, "mergeatk_avgexpr")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, x int)`, rows, "?")
	pg := dbtest.Postgres(t, "mergeatk_avgexpr")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, x int)`, rows, "$")
	avg := &Expr{Op: ExprCol, Col: 1}
	three := &Expr{Op: ExprConst, Const: int64(3)}
	for _, d := range []*dialectDB{
		{name: "mariadb", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my},
		{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg},
	} {
		for _, c := range []struct {
			expr    string
			e       *Expr
			refused bool
		}{
			{"AVG(x) * 3", &Expr{Op: ExprMul, Args: []*Expr{avg, three}}, d.dialect == MySQL},
			{"COALESCE(AVG(x), 0) * 3", &Expr{Op: ExprMul, Args: []*Expr{{Op: ExprCoalesce, Args: []*Expr{avg, {Op: ExprConst, Const: int64(0)}}}, three}}, d.dialect == MySQL},
			{"COALESCE(AVG(x), 0)", &Expr{Op: ExprCoalesce, Args: []*Expr{avg, {Op: ExprConst, Const: int64(0)}}}, false},
			{"-AVG(x)", &Expr{Op: ExprNeg, Args: []*Expr{avg}}, false},
		} {
			p := Plan{Dialect: d.dialect, Visible: 1, Grouped: true, Limit: -1,
				Aggs:     []Agg{{Col: 1, Func: Avg, Args: []int{2, 3}}},
				Computed: []Computed{{Col: 0, Expr: c.e}}}
			got, _, err := d.mergeShards(t, "SELECT "+c.expr+", AVG(x), SUM(x), COUNT(x) FROM t WHERE id >= ? AND id < ?", p)
			if c.refused {
				if !errors.Is(err, ErrUnsupportedType) {
					t.Errorf("%s %s: %s, %v: want refused", d.name, c.expr, show(got), err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", d.name, c.expr, err)
				continue
			}
			sameResult(t, d.name+" "+c.expr, got, readAll(t, d.query(t, d.conn(t, 7), "SELECT "+c.expr+" FROM t")), noFloats)
		}
	}
}
