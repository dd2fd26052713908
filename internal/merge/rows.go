package merge

import (
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
	"strings"
)

// Rows is the merged result: a driver.Rows over the shards' rows combined
// as the Plan says. Its column names and types are shard 0's visible
// columns.
type Rows struct {
	p      Plan
	shards []driver.Rows
	names  []string  // shard 0's column names, hidden ones included
	types  []string  // shard 0's database type names
	cls    [][]class // [shard][column]
	aggs   []aggInfo
	comps  []compInfo
	max    int // Plan.MaxGroups or DefaultMaxGroups
	keyBuf []byte

	src              source
	skipped, emitted int64
	err              error // sticky: every Next after a failure returns it
	closed           bool
}

// source yields the rows to return, before OFFSET and LIMIT, with the
// shard whose columns' classes read them.
type source interface {
	next() (row []driver.Value, shard int, err error)
}

var (
	_ driver.Rows                           = (*Rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*Rows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*Rows)(nil)
	_ driver.RowsColumnTypeLength           = (*Rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*Rows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*Rows)(nil)
)

// New merges the shards' rows as p says. The shards' rows must have the
// same columns (names equal but for case, in the same order: physical
// tables altered into different column orders are refused with ErrPlan): p.Visible columns of the query, then the planner's hidden
// ones; with p.OrderBy and no grouping each shard's rows must arrive
// sorted by p.OrderBy.
//
// New takes ownership of the shards when it succeeds: Rows.Close closes
// them all. When New fails the caller still owns them and must close
// them. New reads no row; errors about the data (ErrCollation on a value,
// ErrTooManyGroups...) come from Next.
func New(p Plan, shards []driver.Rows) (*Rows, error) {
	r, err := newRows(p, shards)
	if err != nil {
		return nil, err
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	r.src = r.pickSource()
	return r, nil
}

func newRows(p Plan, shards []driver.Rows) (*Rows, error) {
	if len(shards) == 0 {
		return nil, planErr("no shards")
	}
	if p.Dialect < PostgreSQL || p.Dialect > SQLite {
		return nil, planErr("unknown dialect %d", p.Dialect)
	}
	names := shards[0].Columns()
	for i, s := range shards[1:] {
		cols := s.Columns()
		if len(cols) != len(names) {
			return nil, planErr("shard 0 returns %d columns, shard %d returns %d", len(names), i+1, len(cols))
		}
		for c := range cols {
			if !strings.EqualFold(cols[c], names[c]) {
				return nil, planErr("shard %d's column %d is %q where shard 0's is %q", i+1, c, cols[c], names[c])
			}
		}
	}
	r := &Rows{p: p, shards: shards, names: names, max: p.MaxGroups}
	if r.max <= 0 {
		r.max = DefaultMaxGroups
	}
	r.types = make([]string, len(names))
	for c := range names {
		r.types[c] = typeName(shards[0], c)
	}
	r.cls = make([][]class, len(shards))
	flat := make([]class, len(shards)*len(names)) // one allocation for all
	for s, sh := range shards {
		r.cls[s] = flat[s*len(names) : (s+1)*len(names) : (s+1)*len(names)]
		for c := range names {
			r.cls[s][c] = classify(p.Dialect, typeName(sh, c))
		}
	}
	return r, nil
}

// pickSource chooses how rows are produced.
func (r *Rows) pickSource() source {
	var src source
	switch {
	case r.p.Grouped:
		return &grouped{r: r}
	case len(r.p.OrderBy) > 0:
		src = newHeapMerge(r)
	default:
		src = &concat{r: r, buf: make([]driver.Value, len(r.names))}
	}
	if r.p.Distinct {
		src = &distinct{r: r, in: src, seen: map[string]struct{}{}}
	}
	return src
}

// Columns returns shard 0's names of the visible columns.
func (r *Rows) Columns() []string { return r.names[:r.p.Visible] }

// Close closes every shard's rows and returns their errors joined.
func (r *Rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, s := range r.shards {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Next writes the next merged row's visible values into dest. It skips
// Plan.Offset rows and stops at Plan.Limit without reading further.
func (r *Rows) Next(dest []driver.Value) error {
	if r.err != nil {
		return r.err
	}
	if r.closed {
		return io.EOF
	}
	for {
		if r.p.Limit >= 0 && r.emitted >= r.p.Limit {
			return io.EOF
		}
		row, _, err := r.src.next()
		if err != nil {
			r.err = err
			return err
		}
		if r.skipped < r.p.Offset {
			r.skipped++
			continue
		}
		r.emitted++
		copy(dest, row[:r.p.Visible])
		return nil
	}
}

// pull reads shard s's next row into buf: ok false at its end.
func (r *Rows) pull(s int, buf []driver.Value) (bool, error) {
	err := r.shards[s].Next(buf)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, io.EOF):
		return false, nil
	}
	return false, &ShardError{Shard: s, Err: err}
}

// colErr names column c in err.
func (r *Rows) colErr(c int, err error) error {
	var ce *ColumnError
	if errors.As(err, &ce) {
		return err
	}
	return &ColumnError{Col: c, Name: r.names[c], Type: r.types[c], Err: err}
}

// ColumnTypeScanType forwards to shard 0.
func (r *Rows) ColumnTypeScanType(i int) reflect.Type {
	if c, ok := r.shards[0].(driver.RowsColumnTypeScanType); ok {
		return c.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

// ColumnTypeDatabaseTypeName forwards to shard 0.
func (r *Rows) ColumnTypeDatabaseTypeName(i int) string {
	if i < 0 || i >= len(r.types) {
		return ""
	}
	return r.types[i]
}

// ColumnTypeLength forwards to shard 0.
func (r *Rows) ColumnTypeLength(i int) (int64, bool) {
	if c, ok := r.shards[0].(driver.RowsColumnTypeLength); ok {
		return c.ColumnTypeLength(i)
	}
	return 0, false
}

// ColumnTypeNullable forwards to shard 0.
func (r *Rows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if c, ok := r.shards[0].(driver.RowsColumnTypeNullable); ok {
		return c.ColumnTypeNullable(i)
	}
	return false, false
}

// ColumnTypePrecisionScale forwards to shard 0.
func (r *Rows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if c, ok := r.shards[0].(driver.RowsColumnTypePrecisionScale); ok {
		return c.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func typeName(r driver.Rows, c int) string {
	if t, ok := r.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(c)
	}
	return ""
}
