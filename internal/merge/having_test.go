package merge

import (
	"database/sql"
	"database/sql/driver"
	"testing"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// HAVING comparing an exact number with a float (a float argument, a
// float column) decides as the database does: PostgreSQL sends a float
// argument for a numeric as its shortest decimal text and compares
// exactly, and compares numeric with float8 in double precision; MariaDB
// compares in double precision.
func TestHavingMixedFloatComparisonsAgreeWithTheDatabases(t *testing.T) {
	type dbCase struct {
		name, drv, dsn, create string
		d                      Dialect
	}
	pg := dbtest.Postgres(t, "merge_having")
	my := dbtest.MySQL(t, "merge_having")
	for _, c := range []dbCase{
		{"postgres", "pgx", pg, "CREATE TABLE h (g int, x numeric(30,20), f float8)", PostgreSQL},
		{"mariadb", "mysql", my, "CREATE TABLE h (g int, x decimal(30,20), f double)", MySQL},
	} {
		db, err := sql.Open(c.drv, c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{c.create,
			"INSERT INTO h VALUES (1, 0.1, 0.1), (2, 0.3, 0.30000000000000004), (3, 0.1000000000000000001, 0.1), (4, 0.25, 0.25)"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		ph := "?"
		if c.d == PostgreSQL {
			ph = "$1"
		}
		for _, tc := range []struct {
			having string
			op     CmpOp
			l, r   int // columns; r < 0: the argument
			arg    any
		}{
			{"SUM(x) = " + ph, Eq, 1, -1, 0.1},
			{"SUM(x) = " + ph, Eq, 1, -1, 0.30000000000000004},
			{"SUM(x) > " + ph, Gt, 1, -1, 0.1},
			{"SUM(x) = SUM(f)", Eq, 1, 2, nil},
			{"SUM(x) < SUM(f)", Lt, 1, 2, nil},
			{"SUM(f) = " + ph, Eq, 2, -1, "0.1"},
		} {
			q := "SELECT g FROM h GROUP BY g HAVING " + tc.having + " ORDER BY g"
			args := []any{}
			if tc.r < 0 {
				args = append(args, tc.arg)
			}
			rows, err := db.Query(q, args...)
			if err != nil {
				t.Fatalf("%s: %s: %v", c.name, q, err)
			}
			var want []int64
			for rows.Next() {
				var g int64
				rows.Scan(&g)
				want = append(want, g)
			}
			rows.Close()

			// The merge: per-group SUMs as the shards would return them.
			sums, err := db.Query("SELECT g, SUM(x), SUM(f) FROM h GROUP BY g ORDER BY g")
			if err != nil {
				t.Fatal(err)
			}
			s, err := FromSQL(sums)
			if err != nil {
				t.Fatal(err)
			}
			cond := &Cond{Op: Compare, Cmp: tc.op, L: Operand{Col: tc.l}, R: Operand{Col: tc.r}}
			if tc.r < 0 {
				cond.R = Operand{IsConst: true, Const: driverValue(tc.arg)}
			}
			p := Plan{Dialect: c.d, Visible: 1, Grouped: true, GroupBy: []int{0},
				Aggs: []Agg{{Col: 1, Func: Sum}, {Col: 2, Func: Sum}}, Having: cond, OrderBy: []Key{{Col: 0}}, Limit: -1}
			r, err := New(p, []driver.Rows{s})
			if err != nil {
				t.Fatal(err)
			}
			got, err := collect(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != show(int64Rows(want)) {
				t.Errorf("%s HAVING %s (%v): got %s, want %s", c.name, tc.having, tc.arg, show(got), show(int64Rows(want)))
			}
		}
	}
}

func driverValue(v any) driver.Value { return v }

func int64Rows(vs []int64) [][]driver.Value {
	out := make([][]driver.Value, len(vs))
	for i, v := range vs {
		out[i] = []driver.Value{v}
	}
	return out
}
