package merge

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
)

// Adapters from database/sql results to the driver.Rows the engine merges,
// for callers that hold a *sql.Rows (gormplugin) rather than a driver's
// rows (sqlhook).

// SQLRows reads a *sql.Rows as a driver.Rows. Values are scanned into
// *any, so they are the driver's own values (database/sql copies bytes),
// and the column types the driver reported are forwarded, so the engine
// and a later database/sql scan see what the database said.
type SQLRows struct {
	rows  *sql.Rows
	cols  []string
	types []*sql.ColumnType
	ptrs  []any
	vals  []any
}

// FromSQL wraps rows; it reads their columns and column types now.
func FromSQL(rows *sql.Rows) (*SQLRows, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	r := &SQLRows{rows: rows, cols: cols, types: types, ptrs: make([]any, len(cols)), vals: make([]any, len(cols))}
	for i := range r.vals {
		r.ptrs[i] = &r.vals[i]
	}
	return r, nil
}

// Columns returns the result's column names.
func (r *SQLRows) Columns() []string { return r.cols }

// Close closes the underlying *sql.Rows.
func (r *SQLRows) Close() error { return r.rows.Close() }

// Next reads the next row into dest; io.EOF after the last.
func (r *SQLRows) Next(dest []driver.Value) error {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	if err := r.rows.Scan(r.ptrs...); err != nil {
		return err
	}
	for i, v := range r.vals {
		dest[i] = v
		r.vals[i] = nil
	}
	return nil
}

// ColumnTypeDatabaseTypeName forwards the driver's type name.
func (r *SQLRows) ColumnTypeDatabaseTypeName(i int) string { return r.types[i].DatabaseTypeName() }

// ColumnTypeScanType forwards the driver's scan type (any when it gave none).
func (r *SQLRows) ColumnTypeScanType(i int) reflect.Type {
	if t := r.types[i].ScanType(); t != nil {
		return t
	}
	return reflect.TypeFor[any]()
}

// ColumnTypeNullable forwards the driver's nullability.
func (r *SQLRows) ColumnTypeNullable(i int) (nullable, ok bool) { return r.types[i].Nullable() }

// ColumnTypeLength forwards the driver's length.
func (r *SQLRows) ColumnTypeLength(i int) (length int64, ok bool) { return r.types[i].Length() }

// ColumnTypePrecisionScale forwards the driver's precision and scale.
func (r *SQLRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	return r.types[i].DecimalSize()
}

// BufferedRows is a result read to its end and held in memory, with the
// column metadata of the rows it was read from. It lets several results
// share one connection (a transaction), which cannot hold two open
// results at once.
type BufferedRows struct {
	meta driver.Rows // column names and types; closed
	rows [][]driver.Value
	next int
}

// Buffer reads rows to the end and closes them. A failure closes them too.
func Buffer(rows driver.Rows) (*BufferedRows, error) {
	b := &BufferedRows{meta: rows}
	n := len(rows.Columns())
	for {
		row := make([]driver.Value, n)
		err := rows.Next(row)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = rows.Close()
			return nil, err
		}
		b.rows = append(b.rows, row)
	}
	return b, rows.Close()
}

// Columns returns the result's column names.
func (b *BufferedRows) Columns() []string { return b.meta.Columns() }

// Close releases the rows.
func (b *BufferedRows) Close() error { b.rows, b.next = nil, 0; return nil }

// Next copies the next row into dest; io.EOF after the last.
func (b *BufferedRows) Next(dest []driver.Value) error {
	if b.next >= len(b.rows) {
		return io.EOF
	}
	copy(dest, b.rows[b.next])
	b.rows[b.next] = nil
	b.next++
	return nil
}

// ColumnTypeDatabaseTypeName forwards the source's type name.
func (b *BufferedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := b.meta.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// ColumnTypeScanType forwards the source's scan type.
func (b *BufferedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := b.meta.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

// ColumnTypeNullable forwards the source's nullability.
func (b *BufferedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := b.meta.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

// ColumnTypeLength forwards the source's length.
func (b *BufferedRows) ColumnTypeLength(i int) (length int64, ok bool) {
	if t, ok := b.meta.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

// ColumnTypePrecisionScale forwards the source's precision and scale.
func (b *BufferedRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := b.meta.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}
