package sqlhook

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/shardkey/shardkey/internal/merge"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
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

func TestMergePlanPutsHiddenColumnsAfterTheQueryColumns(t *testing.T) {
	mp := &ir.MergePlan{Hidden: 2, OrderBy: []ir.KeyTmpl{{Col: -2, Desc: true}, {Col: 0}},
		Grouped: true, GroupBy: []ir.ColRef{-1}, GroupText: []merge.Text{merge.TextBinary},
		Aggs: []ir.AggTmpl{{Col: 1, Fn: merge.Avg, Args: []ir.ColRef{-1, -2}}}}
	spec := mergeSpec{merge: mp, dialect: merge.MySQL, limit: 3, offset: 1}
	// A select list with * has as many columns as the table: 3 here.
	p, err := spec.plan([]driver.Rows{mk([]string{"a", "b", "c", "h0", "h1"}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Visible != 3 || p.OrderBy[0].Col != 4 || !p.OrderBy[0].Desc || p.OrderBy[1].Col != 0 ||
		p.GroupBy[0] != 3 || !slices.Equal(p.Aggs[0].Args, []int{3, 4}) || p.Limit != 3 || p.Offset != 1 {
		t.Errorf("plan %+v", p)
	}
	if _, err := spec.plan([]driver.Rows{mk([]string{"h0", "h1"}, nil)}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("no visible column: %v", err)
	}
}

func TestMergePlanBindsHavingConstantsPerExecution(t *testing.T) {
	mp := &ir.MergePlan{Grouped: true, Having: &ir.CondTmpl{Op: merge.Compare, Cmp: merge.Gt,
		L: ir.OpTmpl{Col: 1}, R: ir.OpTmpl{IsConst: true, Val: ir.ParamRef(1)}}}
	args := []driver.NamedValue{{Ordinal: 1, Value: int64(9)}, {Ordinal: 2, Value: int64(4)}}
	p, err := mergeSpec{merge: mp, dialect: merge.PostgreSQL, limit: -1, args: args}.plan([]driver.Rows{mk([]string{"a", "n"}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if h := p.Having; h == nil || h.L.Col != 1 || !h.R.IsConst || h.R.Const != int64(4) {
		t.Errorf("having %+v", p.Having)
	}
}

func TestMergeEngineErrorsMatchErrUnsupported(t *testing.T) {
	err := engineError(&merge.ColumnError{Col: 0, Name: "note", Err: merge.ErrCollation})
	if !errors.Is(err, ErrUnsupported) || !errors.Is(err, merge.ErrCollation) {
		t.Errorf("engine error %v", err)
	}
	cause := errors.New("connection reset")
	if err := engineError(&merge.ShardError{Shard: 1, Err: cause}); err != cause {
		t.Errorf("a shard's error comes back as %v", err)
	}
}
