package merge

import (
	"database/sql/driver"
	"errors"
	"io"
	"testing"
)

// fakeRows is a shard's result in memory. With reuse, []byte values are
// handed out in one buffer per column that the next Next overwrites (and
// scribbles on first), as drivers do.
type fakeRows struct {
	cols   []string
	types  []string
	prec   map[int][2]int64 // column: precision, scale
	rows   [][]driver.Value
	reuse  bool
	errAt  int // Next fails at this row (0: never; row index+1)
	i      int
	nexts  int
	closed bool
	bufs   map[int][]byte
}

var errFake = errors.New("fake shard failure")

func shard(cols []string, types []string, rows ...[]driver.Value) *fakeRows {
	return &fakeRows{cols: cols, types: types, rows: rows}
}

func (f *fakeRows) Columns() []string { return f.cols }
func (f *fakeRows) Close() error {
	if f.closed {
		return errors.New("closed twice")
	}
	f.closed = true
	return nil
}

func (f *fakeRows) Next(dest []driver.Value) error {
	f.nexts++
	if f.errAt > 0 && f.i+1 == f.errAt {
		return errFake
	}
	if f.i >= len(f.rows) {
		return io.EOF
	}
	row := f.rows[f.i]
	f.i++
	for c, v := range row {
		if b, ok := v.([]byte); ok && f.reuse {
			if f.bufs == nil {
				f.bufs = map[int][]byte{}
			}
			old := f.bufs[c]
			for j := range old {
				old[j] = '#'
			}
			f.bufs[c] = append(old[:0], b...)
			v = f.bufs[c]
		}
		dest[c] = v
	}
	return nil
}

func (f *fakeRows) ColumnTypeDatabaseTypeName(i int) string {
	if i < len(f.types) {
		return f.types[i]
	}
	return ""
}

func (f *fakeRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	p, ok := f.prec[i]
	return p[0], p[1], ok
}

// collect reads every row of r (copying []byte, as database/sql's Scan
// does) and closes it.
func collect(t *testing.T, r *Rows) ([][]driver.Value, error) {
	t.Helper()
	defer r.Close()
	var out [][]driver.Value
	for {
		dest := make([]driver.Value, len(r.Columns()))
		err := r.Next(dest)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, cloneRow(dest))
	}
}

// run merges shards by p and returns every row, failing the test on error.
func run(t *testing.T, p Plan, shards ...*fakeRows) [][]driver.Value {
	t.Helper()
	rows, err := runErr(t, p, shards...)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func runErr(t *testing.T, p Plan, shards ...*fakeRows) ([][]driver.Value, error) {
	t.Helper()
	ds := make([]driver.Rows, len(shards))
	for i, s := range shards {
		ds[i] = s
	}
	r, err := New(p, ds)
	if err != nil {
		return nil, err
	}
	out, err := collect(t, r)
	for i, s := range shards {
		if !s.closed {
			t.Errorf("shard %d not closed", i)
		}
	}
	return out, err
}

func row(vs ...driver.Value) []driver.Value { return vs }

// ints is a shard of one or more int64 columns.
func ints(cols []string, rows ...[]driver.Value) *fakeRows {
	types := make([]string, len(cols))
	for i := range types {
		types[i] = "INT8"
	}
	return shard(cols, types, rows...)
}
