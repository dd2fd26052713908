package merge

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// A float SUM or AVG whose shards' sums fit but whose total leaves
// double precision's range: PostgreSQL fails the query (value out of
// range), MariaDB returns 0, SQLite returns Inf. The merge fails with
// ErrOverflow on the first two (a refusal where MariaDB's 0 depends on its
// order of adding) and gives SQLite's Inf; an infinity among the values
// (PostgreSQL) is no overflow and sums to Infinity.
func TestFloatSumBeyondDoubleRangeFailsAsPostgreSQLDoes(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 1}, {1, 2}, {2, 3}}
	defer func() { shardRanges = saved }()
	rows := [][]any{{0, 1e308, 3e38}, {1, 1e308, 3e38}, {2, nil, nil}}
	pg := dbtest.Postgres(t, "mergeatk_floatrange")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, f float8, r real)`, rows, "$")
	my := dbtest.MySQL(t, "mergeatk_floatrange")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, f double, r double)`, rows, "?")
	lite := "file:" + filepath.Join(t.TempDir(), "f.db")
	fill(t, "sqlite", lite, `CREATE TABLE t (id integer PRIMARY KEY, f double, r double)`, rows, "?")
	dbs := []*dialectDB{
		{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg},
		{name: "mariadb", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my},
		{name: "sqlite", dialect: SQLite, drv: driverOf(t, "sqlite", lite), dsn: lite},
	}
	for _, d := range dbs {
		for _, x := range []string{"f", "r"} {
			p := Plan{Dialect: d.dialect, Visible: 2, Grouped: true, Limit: -1,
				Aggs: []Agg{{Col: 0, Func: Sum}, {Col: 1, Func: Avg, Args: []int{2, 3}}}}
			sel := "SUM(%[1]s), AVG(%[1]s)"
			if x == "r" { // PostgreSQL's sum(real) is a real (AVG of it is refused)
				if d.dialect != PostgreSQL {
					continue
				}
				p.Visible, p.Aggs, sel = 1, p.Aggs[:1], "SUM(%[1]s)"
			}
			got, _, err := d.mergeShards(t, sprintf("SELECT "+sel+", SUM(%[1]s), COUNT(%[1]s) FROM t WHERE id >= ? AND id < ?", x), p)
			want, werr := queryAll(d.conn(t, 7), sprintf("SELECT "+sel+" FROM t", x))
			switch d.dialect {
			case SQLite:
				if err != nil || werr != nil {
					t.Fatalf("%s %s: %v, %v", d.name, x, err, werr)
				}
				sameResult(t, d.name+" "+x, got, want, noFloats)
			case PostgreSQL:
				if werr == nil || !errors.Is(err, ErrOverflow) {
					t.Errorf("%s %s: database %s, %v; merge %s, %v", d.name, x, show(want), werr, show(got), err)
				}
			default:
				if !errors.Is(err, ErrOverflow) {
					t.Errorf("%s %s: database %s, %v; merge %s, %v", d.name, x, show(want), werr, show(got), err)
				}
			}
		}
	}
	// PostgreSQL: an infinity among the values is summed, not an overflow.
	d := dbs[0]
	if _, err := queryAll(d.conn(t, 7), "UPDATE t SET f = 'Infinity' WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	p := Plan{Dialect: PostgreSQL, Visible: 1, Grouped: true, Limit: -1, Aggs: []Agg{{Col: 0, Func: Sum}}}
	got, _, err := d.mergeShards(t, "SELECT SUM(f) FROM t WHERE id >= ? AND id < ? AND id <> 1", p)
	want, werr := queryAll(d.conn(t, 7), "SELECT SUM(f) FROM t WHERE id <> 1")
	if err != nil || werr != nil {
		t.Fatalf("%v, %v", err, werr)
	}
	sameResult(t, "sum with Infinity", got, want, noFloats)
}

// MAX(f) + MAX(g) where each shard holds one of the two maxima: every
// shard's value is finite, the whole table's is beyond double precision,
// which PostgreSQL and MariaDB fail on; so does the merge. PostgreSQL
// also fails a product that underflows to zero.
func TestComputedFloatBeyondDoubleRangeFailsAsTheDatabasesDo(t *testing.T) {
	saved := shardRanges
	shardRanges = [][2]int{{0, 1}, {1, 2}}
	defer func() { shardRanges = saved }()
	rows := [][]any{{0, 1e308, 0.0, 1e-200, 1.0}, {1, 0.0, 1e308, 1.0, 1e-200}}
	pg := dbtest.Postgres(t, "mergeatk_floatexpr")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, f float8, g float8, a float8, b float8)`, rows, "$")
	my := dbtest.MySQL(t, "mergeatk_floatexpr")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, f double, g double, a double, b double)`, rows, "?")
	col := func(c int) *Expr { return &Expr{Op: ExprCol, Col: c} }
	for _, d := range []*dialectDB{
		{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg},
		{name: "mariadb", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my},
	} {
		for _, c := range []struct {
			expr string
			op   ExprOp
		}{{"MAX(f) + MAX(g)", ExprAdd}, {"MIN(a) * MIN(b)", ExprMul}} {
			args := []int{1, 2}
			if c.op == ExprMul {
				args = []int{3, 4}
			}
			fn := Max
			if c.op == ExprMul {
				fn = Min
			}
			p := Plan{Dialect: d.dialect, Visible: 1, Grouped: true, Limit: -1,
				Aggs:     []Agg{{Col: 1, Func: fn}, {Col: 2, Func: fn}, {Col: 3, Func: fn}, {Col: 4, Func: fn}},
				Computed: []Computed{{Col: 0, Expr: &Expr{Op: c.op, Args: []*Expr{col(args[0]), col(args[1])}}}}}
			agg := map[ExprOp]string{ExprAdd: "MAX", ExprMul: "MIN"}[c.op]
			got, _, err := d.mergeShards(t, sprintf("SELECT %s, %[2]s(f), %[2]s(g), %[2]s(a), %[2]s(b) FROM t WHERE id >= ? AND id < ?", c.expr, agg), p)
			want, werr := queryAll(d.conn(t, 7), "SELECT "+c.expr+" FROM t")
			if werr != nil {
				if !errors.Is(err, ErrOverflow) {
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
