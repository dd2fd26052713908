package merge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/shardkey/shardkey/internal/dbtest"
)

// These tests prove the engine's arithmetic against the databases
// themselves: one table of random rows; per-"shard" results of real
// queries over disjoint id ranges, merged; the database's own answer over
// the whole table; the two must be equal byte for byte (doubles: within
// 1e-12 relative).

const dialectRows = 600

// shardRanges split the ids; one is empty, so its partial aggregates are
// NULL.
var shardRanges = [][2]int{{0, 90}, {90, 300}, {300, 300}, {300, 451}, {451, dialectRows}}

// dialectDB is a database holding table t and how to read it.
type dialectDB struct {
	name     string
	dialect  Dialect
	drv      driver.Driver
	dsn      string
	prepared bool     // query through prepared statements (MySQL's binary protocol)
	cols     []string // the value columns
	conns    []driver.Conn
}

func dialectDBs(t *testing.T) []*dialectDB {
	t.Helper()
	rows := randomRows()
	var out []*dialectDB
	pg := dbtest.Postgres(t, "merge_dialect")
	fill(t, "pgx", pg, `CREATE TABLE t (id int PRIMARY KEY, g int NOT NULL, i int, b bigint, d decimal(12,3), n numeric, f double precision, k int, kd decimal(12,3))`, rows, "$")
	out = append(out, &dialectDB{name: "postgres", dialect: PostgreSQL, drv: driverOf(t, "pgx", pg), dsn: pg})
	my := dbtest.MySQL(t, "merge_dialect")
	fill(t, "mysql", my, `CREATE TABLE t (id int PRIMARY KEY, g int NOT NULL, i int, b bigint, d decimal(12,3), n decimal(30,8), f double, k int, kd decimal(12,3))`, rows, "?")
	out = append(out, &dialectDB{name: "mariadb-text", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my})
	out = append(out, &dialectDB{name: "mariadb-binary", dialect: MySQL, drv: driverOf(t, "mysql", my), dsn: my, prepared: true})
	lite := "file:" + filepath.Join(t.TempDir(), "merge.db")
	fill(t, "sqlite", lite, `CREATE TABLE t (id integer PRIMARY KEY, g integer NOT NULL, i integer, b bigint, d decimal(12,3), n numeric, f double, k integer, kd decimal(12,3))`, rows, "?")
	out = append(out, &dialectDB{name: "sqlite", dialect: SQLite, drv: driverOf(t, "sqlite", lite), dsn: lite})
	for i := range out {
		out[i].cols = []string{"i", "b", "d", "n", "f", "k", "kd"}
	}
	return out
}

func driverOf(t *testing.T, name, dsn string) driver.Driver {
	db, err := sql.Open(name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return db.Driver()
}

// randomRows are the table's rows: id, g, then the value columns, with
// NULLs, negative values and duplicates (k, kd).
func randomRows() [][]any {
	rng := rand.New(rand.NewPCG(15, 2026))
	maybe := func(v any) any {
		if rng.IntN(10) == 0 {
			return nil
		}
		return v
	}
	dec := func(intDigits, scale int) string {
		var sb strings.Builder
		if rng.IntN(3) == 0 {
			sb.WriteByte('-')
		}
		sb.WriteString(strconv.FormatInt(rng.Int64N(int64(math.Pow10(intDigits))), 10))
		if scale > 0 {
			sb.WriteByte('.')
			for range scale {
				sb.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		return sb.String()
	}
	rows := make([][]any, dialectRows)
	for id := range rows {
		rows[id] = []any{
			id, id % 7,
			maybe(rng.IntN(2_000_001) - 1_000_000),
			maybe(rng.Int64N(2_000_000_000_000_000) - 1_000_000_000_000_000),
			maybe(dec(1+rng.IntN(9), 3)),
			maybe(dec(1+rng.IntN(15), rng.IntN(9))),
			maybe(rng.NormFloat64() * math.Pow10(rng.IntN(12)-4)),
			maybe(rng.IntN(40) - 10),
			maybe(dec(1, 3)[:0] + strconv.Itoa(rng.IntN(30)) + ".5" + strconv.Itoa(rng.IntN(2))),
		}
	}
	return rows
}

func fill(t *testing.T, drv, dsn, create string, rows [][]any, mark string) {
	t.Helper()
	db, err := sql.Open(drv, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DROP TABLE IF EXISTS t"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(create); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	ph := make([]string, len(rows[0]))
	for i := range ph {
		ph[i] = "?"
		if mark == "$" {
			ph[i] = "$" + strconv.Itoa(i+1)
		}
	}
	q := "INSERT INTO t VALUES (" + strings.Join(ph, ", ") + ")"
	for _, r := range rows {
		if _, err := tx.Exec(q, r...); err != nil {
			t.Fatalf("%s: %v", drv, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// conn returns driver connection i (each shard streams on one of its
// own), opening it the first time.
func (d *dialectDB) conn(t *testing.T, i int) driver.Conn {
	t.Helper()
	for len(d.conns) <= i {
		c, err := d.drv.Open(d.dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		d.conns = append(d.conns, c)
	}
	return d.conns[i]
}

// stmtRows closes its statement with the rows.
type stmtRows struct {
	driver.Rows
	st driver.Stmt
}

func (r stmtRows) Close() error { return errors.Join(r.Rows.Close(), r.st.Close()) }

func (r stmtRows) ColumnTypeDatabaseTypeName(i int) string { return typeName(r.Rows, i) }

func (r stmtRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if p, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return p.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

// query runs q (with ? or $n for args on the conn) and returns the
// driver's rows.
func (d *dialectDB) query(t *testing.T, c driver.Conn, q string, args ...int) driver.Rows {
	t.Helper()
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: int64(a)}
	}
	if d.dialect == PostgreSQL {
		for i := range args {
			q = strings.Replace(q, "?", "$"+strconv.Itoa(i+1), 1)
		}
	}
	if !d.prepared {
		if len(args) > 0 && d.dialect == MySQL {
			for _, a := range args { // the text protocol: literals
				q = strings.Replace(q, "?", strconv.Itoa(a), 1)
			}
			nv = nil
		}
		r, err := c.(driver.QueryerContext).QueryContext(context.Background(), q, nv)
		if err != nil {
			t.Fatalf("%s: %s: %v", d.name, q, err)
		}
		return r
	}
	st, err := c.(driver.ConnPrepareContext).PrepareContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %s: %v", d.name, q, err)
	}
	r, err := st.(driver.StmtQueryContext).QueryContext(context.Background(), nv)
	if err != nil {
		t.Fatalf("%s: %s: %v", d.name, q, err)
	}
	return stmtRows{r, st}
}

// readAll reads a driver's rows to the end, copying values.
func readAll(t *testing.T, r driver.Rows) [][]driver.Value {
	t.Helper()
	defer r.Close()
	var out [][]driver.Value
	for {
		dest := make([]driver.Value, len(r.Columns()))
		err := r.Next(dest)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cloneRow(dest))
	}
}

// mergeShards runs shardQuery (with ? ? for the id range) on every range
// and merges the results by p.
func (d *dialectDB) mergeShards(t *testing.T, shardQuery string, p Plan) ([][]driver.Value, *Rows, error) {
	t.Helper()
	shards := make([]driver.Rows, len(shardRanges))
	for i, rg := range shardRanges {
		shards[i] = d.query(t, d.conn(t, i), shardQuery, rg[0], rg[1])
	}
	r, err := New(p, shards)
	if err != nil {
		for _, s := range shards {
			s.Close()
		}
		return nil, nil, err
	}
	rows, err := collect(t, r)
	return rows, r, err
}

// sameResult compares merged rows with the database's: values equal with
// their Go types, doubles within 1e-12 relative.
func sameResult(t *testing.T, what string, got, want [][]driver.Value, isFloat func(col int) bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d\ngot  %s\nwant %s", what, len(got), len(want), show(got), show(want))
		return
	}
	for i := range want {
		for c := range want[i] {
			g, w := got[i][c], want[i][c]
			if showValue(g) == showValue(w) {
				continue
			}
			if isFloat(c) && closeFloats(g, w) {
				continue
			}
			t.Errorf("%s: row %d column %d: got %s, want %s", what, i, c, showValue(g), showValue(w))
		}
	}
}

func closeFloats(a, b driver.Value) bool {
	fa, ok1 := floatOf(a)
	fb, ok2 := floatOf(b)
	if !ok1 || !ok2 || kindOf(a) != kindOf(b) {
		return false
	}
	return fa == fb || math.Abs(fa-fb) <= 1e-12*math.Max(math.Abs(fa), math.Abs(fb))
}

func floatOf(v driver.Value) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case []byte:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func floatColumns(r driver.Rows) func(int) bool {
	return func(c int) bool {
		switch strings.ToUpper(typeName(r, c)) {
		case "FLOAT8", "FLOAT4", "DOUBLE", "FLOAT", "":
			return true
		}
		return false
	}
}

func TestAggregatesEqualTheDatabasesOverTheWholeTable(t *testing.T) {
	for _, d := range dialectDBs(t) {
		for _, x := range d.cols {
			aggs := fmt.Sprintf("AVG(%[1]s), SUM(%[1]s), COUNT(%[1]s), MIN(%[1]s), MAX(%[1]s), COUNT(*)", x)
			whole := d.query(t, d.conn(t, 0), "SELECT g, "+aggs+" FROM t GROUP BY g ORDER BY g")
			want := readAll(t, whole)
			p := Plan{Dialect: d.dialect, Visible: 7, Grouped: true, GroupBy: []int{0},
				Aggs: []Agg{{Col: 1, Func: Avg, Args: []int{7, 8}}, {Col: 2, Func: Sum}, {Col: 3, Func: Count},
					{Col: 4, Func: Min}, {Col: 5, Func: Max}, {Col: 6, Func: Count}},
				OrderBy: []Key{{Col: 0}}, Limit: -1}
			q := fmt.Sprintf("SELECT g, %s, SUM(%[2]s), COUNT(%[2]s) FROM t WHERE id >= ? AND id < ? GROUP BY g", aggs, x)
			got, r, err := d.mergeShards(t, q, p)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, x, err)
			}
			sameResult(t, d.name+" grouped "+x, got, want, floatColumns(r))

			// Without GROUP BY: one row, and the empty range's NULLs.
			want = readAll(t, d.query(t, d.conn(t, 0), "SELECT "+aggs+" FROM t"))
			p = Plan{Dialect: d.dialect, Visible: 6, Grouped: true,
				Aggs: []Agg{{Col: 0, Func: Avg, Args: []int{6, 7}}, {Col: 1, Func: Sum}, {Col: 2, Func: Count},
					{Col: 3, Func: Min}, {Col: 4, Func: Max}, {Col: 5, Func: Count}}, Limit: -1}
			q = fmt.Sprintf("SELECT %s, SUM(%[2]s), COUNT(%[2]s) FROM t WHERE id >= ? AND id < ?", aggs, x)
			got, r, err = d.mergeShards(t, q, p)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, x, err)
			}
			sameResult(t, d.name+" total "+x, got, want, floatColumns(r))
		}
	}
}

func TestDistinctAggregatesEqualTheDatabases(t *testing.T) {
	for _, d := range dialectDBs(t) {
		for _, x := range d.cols {
			aggs := fmt.Sprintf("COUNT(DISTINCT %[1]s), SUM(DISTINCT %[1]s), AVG(DISTINCT %[1]s)", x)
			want := readAll(t, d.query(t, d.conn(t, 0), "SELECT g, "+aggs+" FROM t GROUP BY g ORDER BY g"))
			p := Plan{Dialect: d.dialect, Visible: 4, Grouped: true, GroupBy: []int{0},
				Aggs: []Agg{{Col: 1, Func: CountDistinct, Args: []int{4}}, {Col: 2, Func: SumDistinct, Args: []int{4}},
					{Col: 3, Func: AvgDistinct, Args: []int{4}}},
				OrderBy: []Key{{Col: 0}}, Limit: -1}
			q := fmt.Sprintf("SELECT g, %s, %s FROM t WHERE id >= ? AND id < ? GROUP BY g, %[2]s", aggs, x)
			got, r, err := d.mergeShards(t, q, p)
			if err != nil {
				t.Fatalf("%s %s: %v", d.name, x, err)
			}
			sameResult(t, d.name+" distinct "+x, got, want, floatColumns(r))
		}
	}
}

func TestOrderedMergeEqualsTheDatabasesOrder(t *testing.T) {
	for _, d := range dialectDBs(t) {
		for _, x := range d.cols {
			for _, desc := range []bool{false, true} {
				dir, nullsFirst := "", d.dialect != PostgreSQL
				if desc {
					dir, nullsFirst = " DESC", !nullsFirst
				}
				order := fmt.Sprintf("ORDER BY %s%s, id%s", x, dir, dir)
				want := readAll(t, d.query(t, d.conn(t, 0), fmt.Sprintf("SELECT id, %s FROM t %s LIMIT 40 OFFSET 7", x, order)))
				p := Plan{Dialect: d.dialect, Visible: 2,
					OrderBy: []Key{{Col: 1, Desc: desc, NullsFirst: nullsFirst}, {Col: 0, Desc: desc}}, Offset: 7, Limit: 40}
				q := fmt.Sprintf("SELECT id, %s FROM t WHERE id >= ? AND id < ? %s LIMIT 47", x, order)
				got, r, err := d.mergeShards(t, q, p)
				if err != nil {
					t.Fatalf("%s %s: %v", d.name, x, err)
				}
				sameResult(t, d.name+" "+order, got, want, floatColumns(r))
			}
		}
	}
}
