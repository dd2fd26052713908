package sqlhook

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// memRows is a driver.Rows over fixed rows. Like real drivers it reuses
// one buffer for []byte values, so a merge that keeps a row after the next
// Next sees it change.
type memRows struct {
	cols   []string
	types  []string // database type names; nil: no RowsColumnTypeDatabaseTypeName answer
	rows   [][]driver.Value
	i      int
	closed bool
	buf    []byte
}

func (r *memRows) Columns() []string { return r.cols }
func (r *memRows) Close() error      { r.closed = true; return nil }

func (r *memRows) Next(dest []driver.Value) error {
	if r.i >= len(r.rows) {
		return io.EOF
	}
	r.buf = r.buf[:0]
	for i, v := range r.rows[r.i] {
		if b, ok := v.([]byte); ok {
			start := len(r.buf)
			r.buf = append(r.buf, b...)
			v = r.buf[start:len(r.buf):len(r.buf)]
		}
		dest[i] = v
	}
	r.i++
	return nil
}

// typedRows adds database type names.
type typedRows struct{ *memRows }

func (r typedRows) ColumnTypeDatabaseTypeName(i int) string { return r.types[i] }

func mk(cols []string, types []string, rows ...[]driver.Value) driver.Rows {
	m := &memRows{cols: cols, types: types, rows: rows, buf: make([]byte, 0, 256)}
	if types != nil {
		return typedRows{m}
	}
	return m
}

func row(vs ...driver.Value) []driver.Value { return vs }

// readAll merges units by spec and returns the rows as strings.
func readAll(t *testing.T, spec mergeSpec, units ...driver.Rows) ([]string, error) {
	t.Helper()
	m, err := newMergedRows(units, spec)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	var out []string
	dest := make([]driver.Value, len(m.Columns()))
	for {
		err := m.Next(dest)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var parts []string
		for _, v := range dest {
			switch x := v.(type) {
			case []byte:
				parts = append(parts, fmt.Sprintf("b%q", x))
			case nil:
				parts = append(parts, "NULL")
			default:
				parts = append(parts, fmt.Sprintf("%v", x))
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
}

func check(t *testing.T, name string, got []string, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", name, got, want)
	}
}

func TestMergeOrderBy(t *testing.T) {
	cols := []string{"a", "b"}
	units := func() []driver.Rows {
		return []driver.Rows{
			mk(cols, nil, row(int64(1), "x"), row(int64(3), "a"), row(int64(3), "b")),
			mk(cols, nil, row(int64(2), "z"), row(int64(3), "a"), row(int64(4), "c")),
			mk(cols, nil),
		}
	}
	// Text orders bytewise only under a binary collation (SQLite's);
	// elsewhere the database's collation decides, so the merge refuses.
	spec := mergeSpec{orderBy: []orderKey{{pos: 0}, {name: "B", pos: -1}}, limit: -1}
	if _, err := readAll(t, spec, units()...); !errors.Is(err, ErrUnsupported) {
		t.Errorf("text ordering without binaryText: %v, want ErrUnsupported", err)
	}
	spec.binaryText = true
	got, err := readAll(t, spec, units()...)
	check(t, "asc, asc", got, err, "1 x", "2 z", "3 a", "3 a", "3 b", "4 c")

	// Descending on the first key, ascending on the second; the units
	// arrive sorted the same way.
	spec = mergeSpec{orderBy: []orderKey{{pos: 0, desc: true}, {pos: 1}}, limit: -1, binaryText: true}
	got, err = readAll(t, spec,
		mk(cols, nil, row(int64(3), "a"), row(int64(3), "b"), row(int64(1), "x")),
		mk(cols, nil, row(int64(4), "c"), row(int64(3), "a"), row(int64(2), "z")))
	check(t, "desc, asc", got, err, "4 c", "3 a", "3 a", "3 b", "2 z", "1 x")

	// Numbers of different Go types compare by value.
	spec = mergeSpec{orderBy: []orderKey{{pos: 0}}, limit: -1}
	got, err = readAll(t, spec,
		mk([]string{"n"}, nil, row(int64(-1)), row(2.5), row(uint64(1<<63))),
		mk([]string{"n"}, nil, row(0.5), row(int64(3))))
	check(t, "mixed numbers", got, err, "-1", "0.5", "2.5", "3", "9223372036854775808")

	// Times and booleans.
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	got, err = readAll(t, spec,
		mk([]string{"t"}, nil, row(t0), row(t0.Add(2*time.Hour))),
		mk([]string{"t"}, nil, row(t0.Add(time.Hour))))
	check(t, "times", got, err, t0.String(), t0.Add(time.Hour).String(), t0.Add(2*time.Hour).String())
	got, err = readAll(t, spec, mk([]string{"b"}, nil, row(true)), mk([]string{"b"}, nil, row(false)))
	check(t, "bools", got, err, "false", "true")

	// Values that cannot be compared fail the merge.
	_, err = readAll(t, spec, mk([]string{"x"}, nil, row(true)), mk([]string{"x"}, nil, row(t0)))
	if err == nil {
		t.Error("comparing a bool with a time did not fail")
	}
	// An ORDER BY column that is not in the result.
	if _, err := newMergedRows(units(), mergeSpec{orderBy: []orderKey{{name: "zz", pos: -1}}, limit: -1}); err == nil {
		t.Error("ORDER BY an unknown column did not fail")
	}
}

func TestMergeNulls(t *testing.T) {
	cols := []string{"a"}
	// nullsFirst (MySQL, SQLite): NULL is the least value.
	spec := mergeSpec{orderBy: []orderKey{{pos: 0}}, limit: -1, nullsFirst: true}
	got, err := readAll(t, spec, mk(cols, nil, row(nil), row(int64(2))), mk(cols, nil, row(nil), row(int64(1))))
	check(t, "nulls first, asc", got, err, "NULL", "NULL", "1", "2")
	spec.orderBy[0].desc = true
	got, err = readAll(t, spec, mk(cols, nil, row(int64(2)), row(nil)), mk(cols, nil, row(int64(1)), row(nil)))
	check(t, "nulls first, desc", got, err, "2", "1", "NULL", "NULL")

	// PostgreSQL: NULL is the greatest value.
	spec = mergeSpec{orderBy: []orderKey{{pos: 0}}, limit: -1}
	got, err = readAll(t, spec, mk(cols, nil, row(int64(2)), row(nil)), mk(cols, nil, row(int64(1))))
	check(t, "nulls last, asc", got, err, "1", "2", "NULL")
	spec.orderBy[0].desc = true
	got, err = readAll(t, spec, mk(cols, nil, row(nil), row(int64(2))), mk(cols, nil, row(int64(1))))
	check(t, "nulls last, desc", got, err, "NULL", "2", "1")
}

func TestMergeNumericText(t *testing.T) {
	cols := []string{"d"}
	spec := mergeSpec{orderBy: []orderKey{{pos: 0}}, limit: -1}
	// DECIMAL values arrive as text: "10.5" sorts after "9.75" by value,
	// before it bytewise.
	got, err := readAll(t, spec,
		mk(cols, []string{"DECIMAL"}, row([]byte("-3")), row([]byte("9.75")), row([]byte("100"))),
		mk(cols, []string{"DECIMAL"}, row([]byte("10.5")), row([]byte("20"))))
	check(t, "decimal text", got, err, `b"-3"`, `b"9.75"`, `b"10.5"`, `b"20"`, `b"100"`)
	for _, name := range []string{"NUMERIC", "numeric(10,2)", "UNSIGNED BIGINT", "INT8", "float8", "DOUBLE PRECISION", "decimal(8,2) unsigned"} {
		if !isNumericType(name) {
			t.Errorf("isNumericType(%q) = false", name)
		}
	}
	for _, name := range []string{"", "TEXT", "VARCHAR", "BYTEA", "INTERVAL", "POINT"} {
		if isNumericType(name) {
			t.Errorf("isNumericType(%q) = true", name)
		}
	}
	// Text columns compare bytewise (under a binary collation).
	spec.binaryText = true
	got, err = readAll(t, spec,
		mk(cols, []string{"VARCHAR"}, row([]byte("10")), row([]byte("9"))),
		mk(cols, []string{"VARCHAR"}, row([]byte("100"))))
	check(t, "varchar", got, err, `b"10"`, `b"100"`, `b"9"`)
	// PostgreSQL numeric as string, with NaN above everything.
	got, err = readAll(t, spec,
		mk(cols, []string{"NUMERIC"}, row("2.50"), row("NaN")),
		mk(cols, []string{"NUMERIC"}, row("-Infinity"), row("11")))
	check(t, "numeric strings", got, err, "-Infinity", "2.50", "11", "NaN")
}

func TestMergeConcatLimitOffset(t *testing.T) {
	cols := []string{"a"}
	units := func() []driver.Rows {
		return []driver.Rows{
			mk(cols, nil, row(int64(1)), row(int64(2))),
			mk(cols, nil),
			mk(cols, nil, row(int64(3)), row(int64(4)), row(int64(5))),
		}
	}
	got, err := readAll(t, mergeSpec{limit: -1}, units()...)
	check(t, "concatenation", got, err, "1", "2", "3", "4", "5")
	got, err = readAll(t, mergeSpec{offset: 1, limit: 3}, units()...)
	check(t, "offset 1 limit 3", got, err, "2", "3", "4")
	got, err = readAll(t, mergeSpec{offset: 4, limit: 10}, units()...)
	check(t, "offset 4", got, err, "5")
	got, err = readAll(t, mergeSpec{offset: 9, limit: -1}, units()...)
	check(t, "offset past the end", got, err)
	got, err = readAll(t, mergeSpec{limit: 0}, units()...)
	check(t, "limit 0", got, err)

	spec := mergeSpec{orderBy: []orderKey{{pos: 0, desc: true}}, offset: 2, limit: 2}
	got, err = readAll(t, spec,
		mk(cols, nil, row(int64(9)), row(int64(5)), row(int64(1))),
		mk(cols, nil, row(int64(8)), row(int64(7)), row(int64(2))))
	check(t, "ordered offset 2 limit 2", got, err, "7", "5")
}

// A merge that keeps a unit's row while the unit moves on must not see the
// driver's buffer change.
func TestMergeKeepsBytesUntilNext(t *testing.T) {
	cols := []string{"s"}
	spec := mergeSpec{orderBy: []orderKey{{pos: 0}}, limit: -1, binaryText: true}
	got, err := readAll(t, spec,
		mk(cols, nil, row([]byte("a")), row([]byte("c")), row([]byte("e"))),
		mk(cols, nil, row([]byte("b")), row([]byte("d"))))
	check(t, "byte rows", got, err, `b"a"`, `b"b"`, `b"c"`, `b"d"`, `b"e"`)
}

func TestMergeAggregates(t *testing.T) {
	cols := []string{"c", "s", "lo", "hi", "k"}
	spec := mergeSpec{aggs: []aggCol{{0, aggCount}, {1, aggSum}, {2, aggMin}, {3, aggMax}}, limit: -1}
	types := []string{"BIGINT", "BIGINT", "BIGINT", "BIGINT", "TEXT"}
	got, err := readAll(t, spec,
		mk(cols, types, row(int64(2), int64(10), int64(4), int64(7), "first")),
		mk(cols, types, row(int64(3), int64(-4), int64(-1), int64(9), "second")),
		mk(cols, types, row(int64(0), nil, nil, nil, "third")))
	check(t, "int64", got, err, "5 6 -1 9 first")

	got, err = readAll(t, spec,
		mk(cols, nil, row(int64(1), 1.5, 2.5, 0.25, "x")),
		mk(cols, nil, row(int64(1), 2.25, int64(2), int64(1), "y")))
	check(t, "float64", got, err, "2 3.75 2 1 x")

	// Decimal text (MySQL DECIMAL, PostgreSQL numeric): exact, as []byte
	// for []byte and string for string, with the largest scale.
	dtypes := []string{"BIGINT", "DECIMAL", "DECIMAL", "DECIMAL", "TEXT"}
	got, err = readAll(t, spec,
		mk(cols, dtypes, row([]byte("4"), []byte("1.10"), []byte("9.5"), []byte("9.5"), "x")),
		mk(cols, dtypes, row([]byte("5"), []byte("2.05"), []byte("10"), []byte("10"), "y")),
		mk(cols, dtypes, row([]byte("0"), []byte("0.1"), nil, nil, "z")))
	check(t, "[]byte decimals", got, err, `9 b"3.25" b"9.5" b"10" x`)
	got, err = readAll(t, mergeSpec{aggs: []aggCol{{0, aggSum}}, limit: -1},
		mk([]string{"s"}, []string{"NUMERIC"}, row("1.10")), mk([]string{"s"}, []string{"NUMERIC"}, row("2.05")))
	check(t, "string decimals", got, err, "3.15")
	got, err = readAll(t, mergeSpec{aggs: []aggCol{{0, aggSum}}, limit: -1},
		mk([]string{"s"}, nil, row([]byte("1.10"))), mk([]string{"s"}, nil, row([]byte("2.05"))))
	check(t, "1.10 + 2.05", got, err, `b"3.15"`)
	got, err = readAll(t, mergeSpec{aggs: []aggCol{{0, aggSum}}, limit: -1},
		mk([]string{"s"}, nil, row([]byte("0.1"))), mk([]string{"s"}, nil, row([]byte("0.2"))))
	check(t, "0.1 + 0.2 exactly", got, err, `b"0.3"`)
	got, err = readAll(t, mergeSpec{aggs: []aggCol{{0, aggSum}}, limit: -1},
		mk([]string{"s"}, nil, row([]byte("99999999999999999999.99"))), mk([]string{"s"}, nil, row([]byte("0.01"))))
	check(t, "beyond float64", got, err, `b"100000000000000000000.00"`)

	// All NULL: SUM, MIN and MAX are NULL; COUNT is 0.
	got, err = readAll(t, spec,
		mk(cols, nil, row(int64(0), nil, nil, nil, "x")),
		mk(cols, nil, row(int64(0), nil, nil, nil, "y")))
	check(t, "all NULL", got, err, "0 NULL NULL NULL x")

	// Overflow fails rather than wrapping around.
	_, err = readAll(t, mergeSpec{aggs: []aggCol{{0, aggSum}}, limit: -1},
		mk([]string{"s"}, nil, row(int64(1<<62))), mk([]string{"s"}, nil, row(int64(1<<62))))
	if err == nil {
		t.Error("SUM overflowing int64 did not fail")
	}
	// Each unit must give exactly one row.
	_, err = readAll(t, spec, mk(cols, nil, row(int64(1), nil, nil, nil, "x"), row(int64(1), nil, nil, nil, "x")), mk(cols, nil, row(int64(1), nil, nil, nil, "y")))
	if err == nil {
		t.Error("a unit with two aggregate rows did not fail")
	}
	// OFFSET 1 leaves nothing of the one row.
	got, err = readAll(t, mergeSpec{aggs: []aggCol{{0, aggCount}}, offset: 1, limit: -1},
		mk([]string{"c"}, nil, row(int64(1))), mk([]string{"c"}, nil, row(int64(2))))
	check(t, "aggregate offset 1", got, err)
}

func TestMergeColumnMismatch(t *testing.T) {
	a := mk([]string{"a", "b"}, nil)
	b := mk([]string{"a"}, nil)
	if _, err := newMergedRows([]driver.Rows{a, b}, mergeSpec{limit: -1}); err == nil || !strings.Contains(err.Error(), "numbers of columns") {
		t.Fatalf("column count mismatch: %v", err)
	}
}

func TestMergeDestLengthAndClose(t *testing.T) {
	a := &memRows{cols: []string{"a", "b"}, rows: [][]driver.Value{{int64(1), int64(2)}}}
	b := &memRows{cols: []string{"a", "b"}, rows: [][]driver.Value{{int64(3), int64(4)}}}
	m, err := newMergedRows([]driver.Rows{a, b}, mergeSpec{limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	short := make([]driver.Value, 1)
	if err := m.Next(short); err != nil || short[0] != int64(1) {
		t.Fatalf("Next into a short dest: %v, %v", short, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !a.closed || !b.closed {
		t.Error("Close did not close every unit's rows")
	}
}

// Column types come from the first unit, or database/sql's defaults.
func TestMergeColumnTypes(t *testing.T) {
	typed, err := newMergedRows([]driver.Rows{mk([]string{"a"}, []string{"INT8"}), mk([]string{"a"}, []string{"TEXT"})}, mergeSpec{limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := typed.ColumnTypeDatabaseTypeName(0); got != "INT8" {
		t.Errorf("database type %q, want the first unit's INT8", got)
	}
	if got := typed.ColumnTypeScanType(0); got != reflect.TypeFor[any]() {
		t.Errorf("default scan type %v", got)
	}
	if _, ok := typed.ColumnTypeLength(0); ok {
		t.Error("length reported where the driver gives none")
	}
	if _, ok := typed.ColumnTypeNullable(0); ok {
		t.Error("nullability reported where the driver gives none")
	}
	if _, _, ok := typed.ColumnTypePrecisionScale(0); ok {
		t.Error("precision reported where the driver gives none")
	}
}
