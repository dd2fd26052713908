package merge

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// Aggregates inside expressions, computed from merged aggregates, equal
// the databases' own values over the whole table.
func TestComputedColumnsEqualTheDatabases(t *testing.T) {
	for _, d := range dialectDBs(t) {
		for _, x := range d.cols {
			exprs := []string{"COUNT(*) * 2", "SUM(%[1]s) / COUNT(*)", "COALESCE(MAX(%[1]s), -1)", "SUM(%[1]s) - MIN(%[1]s)",
				"-SUM(%[1]s)", "MAX(%[1]s) + 1", "MIN(%[1]s) * 3 + COUNT(%[1]s)", "SUM(%[1]s) / 2.5"}
			for i := range exprs {
				exprs[i] = strings.ReplaceAll(exprs[i], "%[1]s", x)
			}
			sel := strings.Join(exprs, ", ")
			want := readAll(t, d.query(t, d.conn(t, 0), "SELECT g, "+sel+" FROM t GROUP BY g ORDER BY g"))
			// Hidden: 9 COUNT(*), 10 SUM(x), 11 MAX(x), 12 MIN(x), 13 COUNT(x).
			col := func(c int) *Expr { return &Expr{Op: ExprCol, Col: c} }
			k := func(v driver.Value) *Expr { return &Expr{Op: ExprConst, Const: v} }
			bin := func(op ExprOp, a, b *Expr) *Expr { return &Expr{Op: op, Args: []*Expr{a, b}} }
			p := Plan{Dialect: d.dialect, Visible: 9, Grouped: true, GroupBy: []int{0},
				Aggs: []Agg{{Col: 9, Func: Count}, {Col: 10, Func: Sum}, {Col: 11, Func: Max}, {Col: 12, Func: Min}, {Col: 13, Func: Count}},
				Computed: []Computed{
					{Col: 1, Expr: bin(ExprMul, col(9), k(int64(2)))},
					{Col: 2, Expr: bin(ExprDiv, col(10), col(9))},
					{Col: 3, Expr: &Expr{Op: ExprCoalesce, Args: []*Expr{col(11), k(int64(-1))}}},
					{Col: 4, Expr: bin(ExprSub, col(10), col(12))},
					{Col: 5, Expr: &Expr{Op: ExprNeg, Args: []*Expr{col(10)}}},
					{Col: 6, Expr: bin(ExprAdd, col(11), k(int64(1)))},
					{Col: 7, Expr: bin(ExprAdd, bin(ExprMul, col(12), k(int64(3))), col(13))},
					{Col: 8, Expr: bin(ExprDiv, col(10), k("2.5"))},
				},
				OrderBy: []Key{{Col: 0}}, Limit: -1}
			q := fmt.Sprintf("SELECT g, %s, COUNT(*), SUM(%[2]s), MAX(%[2]s), MIN(%[2]s), COUNT(%[2]s) FROM t WHERE id >= ? AND id < ? GROUP BY g", sel, x)
			got, r, err := d.mergeShards(t, q, p)
			if err != nil {
				t.Errorf("%s %s: %v", d.name, x, err)
				continue
			}
			sameResult(t, d.name+" computed "+x, got, want, floatColumns(r))
		}
	}
}

func computedPlan(d Dialect, e *Expr) Plan {
	return Plan{Dialect: d, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 1, Func: Sum}, {Col: 2, Func: Sum}},
		Computed: []Computed{{Col: 0, Expr: e}}, Limit: -1}
}

func TestComputedDivisionByZeroFollowsTheDialect(t *testing.T) {
	div := &Expr{Op: ExprDiv, Args: []*Expr{{Op: ExprCol, Col: 1}, {Op: ExprCol, Col: 2}}}
	mk := func(types ...string) *fakeRows {
		return shard([]string{"q", "a", "b"}, types, row(nil, int64(5), int64(0)))
	}
	_, err := runErr(t, computedPlan(PostgreSQL, div), mk("INT8", "INT8", "INT8"))
	if !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("PostgreSQL: %v", err)
	}
	expect(t, run(t, computedPlan(SQLite, div), mk("", "", "")), "[NULL]")
	my := mk("DECIMAL", "BIGINT", "BIGINT")
	my.prec = map[int][2]int64{0: {10, 4}}
	expect(t, run(t, computedPlan(MySQL, div), my), "[NULL]")
}

func TestComputedIntegersOverflowAsTheDialectDoes(t *testing.T) {
	mul := &Expr{Op: ExprMul, Args: []*Expr{{Op: ExprCol, Col: 1}, {Op: ExprCol, Col: 2}}}
	// PostgreSQL: int4 * int4 beyond int4 fails, as the database does.
	_, err := runErr(t, computedPlan(PostgreSQL, mul), shard([]string{"q", "a", "b"}, []string{"INT4", "INT4", "INT4"}, row(int64(1), int64(70000), int64(70000))))
	if !errors.Is(err, ErrOverflow) {
		t.Errorf("PostgreSQL: %v", err)
	}
	// SQLite goes on in floating point.
	expect(t, run(t, computedPlan(SQLite, mul), shard([]string{"q", "a", "b"}, []string{"", "", ""}, row(1.0, int64(1)<<40, int64(1)<<40))), "[f1.2089258196146292e+24]")
}

func TestMySQLDivisionInsideAnExpressionIsRefused(t *testing.T) {
	e := &Expr{Op: ExprAdd, Args: []*Expr{{Op: ExprDiv, Args: []*Expr{{Op: ExprCol, Col: 1}, {Op: ExprCol, Col: 2}}}, {Op: ExprConst, Const: int64(1)}}}
	s := shard([]string{"q", "a", "b"}, []string{"DECIMAL", "BIGINT", "BIGINT"})
	if _, err := runErr(t, computedPlan(MySQL, e), s); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("err %v", err)
	}
}

func TestComputedTypeTheDatabaseDisagreesWithIsRefused(t *testing.T) {
	// The merge computes a decimal; the database said INT8.
	e := &Expr{Op: ExprAdd, Args: []*Expr{{Op: ExprCol, Col: 1}, {Op: ExprConst, Const: "0.5"}}}
	_, err := runErr(t, computedPlan(PostgreSQL, e), shard([]string{"q", "a", "b"}, []string{"INT8", "INT8", "INT8"}, row(int64(1), int64(1), int64(1))))
	if !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("err %v", err)
	}
}

// PostgreSQL types a float argument next to a numeric as numeric: the
// product is exact, as the database computes it.
func TestPostgresFloatArgumentWithANumericIsNumeric(t *testing.T) {
	db, err := sql.Open("pgx", dbtest.Postgres(t, "merge_exprparam"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var want string
	if err := db.QueryRow("SELECT SUM(x) * $1 FROM (VALUES (1.10::numeric), (2.25)) v(x)", 0.1).Scan(&want); err != nil {
		t.Fatal(err)
	}
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Aggs: []Agg{{Col: 1, Func: Sum}},
		Computed: []Computed{{Col: 0, Expr: &Expr{Op: ExprMul, Args: []*Expr{{Op: ExprCol, Col: 1}, {Op: ExprConst, Const: 0.1}}}}}, Limit: -1}
	mk := func(v string) *fakeRows {
		return shard([]string{"p", "s"}, []string{"NUMERIC", "NUMERIC"}, row(nil, v))
	}
	expect(t, run(t, p, mk("1.10"), mk("2.25")), `["`+want+`"]`)
}
