package merge

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// PostgreSQL's real op real is a real, rounded at every step:
// MAX(a) + MAX(b) + MAX(c) over 2^24, 1, 1 is 16777216, not the double's
// 16777218. Real with anything else is double precision.
func TestPostgresRealArithmeticRoundsAtEveryStep(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 1}, {1, 2}, {2, 3}}
	defer func() { shardRanges = saved }()
	rows := [][]any{{0, 16777216.0, nil, nil}, {1, nil, 1.0, nil}, {2, nil, nil, 1.0}}
	pg := dbtest.Postgres(t, "mergeatk_real")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, a real, b real, c real)`, rows, "$")
	d := &dialectDB{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg}
	col := func(c int) *Expr { return &Expr{Op: ExprCol, Col: c} }
	bin := func(op ExprOp, a, b *Expr) *Expr { return &Expr{Op: op, Args: []*Expr{a, b}} }
	for _, c := range []struct {
		expr string
		e    *Expr
	}{
		{"MAX(a) + MAX(b) + MAX(c)", bin(ExprAdd, bin(ExprAdd, col(1), col(2)), col(3))},
		{"MAX(a) + MAX(b) - MAX(c)", bin(ExprSub, bin(ExprAdd, col(1), col(2)), col(3))},
		{"-(MAX(a) + MAX(b)) * 2", bin(ExprMul, &Expr{Op: ExprNeg, Args: []*Expr{bin(ExprAdd, col(1), col(2))}}, &Expr{Op: ExprConst, Const: int64(2)})},
		{"(MAX(a) + MAX(b)) / MAX(c)", bin(ExprDiv, bin(ExprAdd, col(1), col(2)), col(3))},
		{"MAX(a) * 1.0000001", bin(ExprMul, col(1), &Expr{Op: ExprConst, Const: "1.0000001"})},
	} {
		p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Limit: -1,
			Aggs:     []Agg{{Col: 1, Func: Max}, {Col: 2, Func: Max}, {Col: 3, Func: Max}},
			Computed: []Computed{{Col: 0, Expr: c.e}}}
		got, _, err := d.mergeShards(t, "SELECT "+c.expr+", MAX(a), MAX(b), MAX(c) FROM t WHERE id >= ? AND id < ?", p)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		sameResult(t, c.expr, got, readAll(t, d.query(t, d.conn(t, 7), "SELECT "+c.expr+" FROM t")), noFloats)
	}
}

// PostgreSQL's sum(real) adds in real: over 2^24, 1, 1 read in that
// order it is 16777216. The merge adds the shards' sums in real too.
func TestPostgresSumOfRealAddsInReal(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 1}, {1, 2}, {2, 3}}
	defer func() { shardRanges = saved }()
	rows := [][]any{{0, 16777216.0}, {1, 1.0}, {2, 1.0}}
	pg := dbtest.Postgres(t, "mergeatk_sumreal")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, a real)`, rows, "$")
	d := &dialectDB{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg}
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Limit: -1, Aggs: []Agg{{Col: 0, Func: Sum}}}
	got, _, err := d.mergeShards(t, "SELECT SUM(a) FROM t WHERE id >= ? AND id < ?", p)
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, "SUM(a)", got, readAll(t, d.query(t, d.conn(t, 7), "SELECT SUM(a) FROM t")), noFloats)
}

// sum(DISTINCT real) adds the sorted distinct values in real too:
// -2^25 + 1 rounds back to -2^25 before + 2.
func TestPostgresSumOfDistinctRealsAddsInReal(t *testing.T) {
	mk := func(vs ...float64) *fakeRows {
		s := shard([]string{"sum", "a"}, []string{"FLOAT4", "FLOAT4"})
		for _, v := range vs {
			s.rows = append(s.rows, row(v, v))
		}
		return s
	}
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Limit: -1, Aggs: []Agg{{Col: 0, Func: SumDistinct, Args: []int{1}}}}
	if got := run(t, p, mk(2, -33554432), mk(1, 2)); got[0][0] != float64(-33554430) { // PostgreSQL's answer
		t.Errorf("got %v, want -33554430", got[0][0])
	}
}

// A float argument compared with a real is a real to PostgreSQL:
// HAVING MAX(a) > $1 with a = 0.1 (real) and $1 = 0.1 is false, though
// the real 0.1 is above the double 0.1.
func TestPostgresFloatArgumentComparedWithARealIsAReal(t *testing.T) {
	pg := dbtest.Postgres(t, "mergeatk_realarg")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, g int, a real)`, [][]any{{0, 1, 0.1}, {1, 2, 0.2}}, "$")
	db, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, op := range []struct {
		sql string
		cmp CmpOp
	}{{">", Gt}, {"=", Eq}, {"<", Lt}} {
		var want []int64
		rows, err := db.Query("SELECT g FROM t GROUP BY g HAVING MAX(a) "+op.sql+" $1 ORDER BY g", 0.1)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var g int64
			if err := rows.Scan(&g); err != nil {
				t.Fatal(err)
			}
			want = append(want, g)
		}
		rows.Close()
		d := &dialectDB{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg}
		p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, GroupBy: []int{0}, Aggs: []Agg{{Col: 1, Func: Max}},
			Having:  &Cond{Op: Compare, Cmp: op.cmp, L: Operand{Col: 1}, R: Operand{Const: 0.1, IsConst: true}},
			OrderBy: []Key{{Col: 0}}, Limit: -1}
		got, _, err := d.mergeShards(t, "SELECT g, MAX(a) FROM t WHERE id >= ? AND id < ? GROUP BY g", p)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(show(got)) != fmt.Sprint(show(int64Rows(want))) {
			t.Errorf("MAX(a) %s 0.1: got %s, want %v", op.sql, show(got), want)
		}
	}
}
