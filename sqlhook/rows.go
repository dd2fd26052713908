package sqlhook

import (
	"bytes"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"strings"

	"github.com/shardkey/shardkey/internal/merge"
	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// mergedRows is the result of a query that ran as several units, merged
// by internal/merge as the query's mergeSpec says.
type mergedRows struct {
	*merge.Rows
	units []driver.Rows // the targets' rows, which the engine owns
	spec  mergeSpec
	// With SQLite's sum guards the engine also returns the hidden columns
	// up to the last guard; the caller sees the first visible.
	guards  []sumGuardCols
	visible int
	row     []driver.Value
	cur     []reflect.Type // SQLite: the scan types of the row last returned

	// SQLite: the first row, read ahead by newMergedRows.
	pending  bool
	ahead    []driver.Value
	aheadErr error
}

// sumGuardCols is a sumGuard's columns in the merged rows.
type sumGuardCols struct{ min, max, count int }

// newMergedRows merges the units' rows. On error the caller still owns
// (and closes) the units.
func newMergedRows(units []driver.Rows, spec mergeSpec) (*mergedRows, error) {
	p, err := spec.plan(units)
	if err != nil {
		return nil, err
	}
	r, err := merge.New(p, units)
	if err != nil {
		return nil, engineError(err)
	}
	m := &mergedRows{Rows: r, units: units, spec: spec, visible: p.Visible}
	if mp := spec.merge; mp != nil && len(mp.Guards) > 0 {
		m.visible = len(units[0].Columns()) - mp.Hidden
		col := func(c ir.ColRef) int { return m.visible + int(-c-1) }
		for _, g := range mp.Guards {
			m.guards = append(m.guards, sumGuardCols{col(g.Min), col(g.Max), col(g.Count)})
		}
		m.row = make([]driver.Value, p.Visible)
	}
	if spec.dialect == merge.SQLite {
		m.prefetch()
	}
	return m, nil
}

// prefetch reads the first merged row ahead, as SQLite's driver steps to
// the first row in Query: its scan types are then the ones reported
// before the first Next, as over one table.
func (m *mergedRows) prefetch() {
	m.ahead = make([]driver.Value, m.visible)
	m.aheadErr = m.Next(m.ahead)
	m.pending = true
}

// Columns are the query's own columns.
func (m *mergedRows) Columns() []string { return m.Rows.Columns()[:m.visible] }

// ColumnTypeScanType is the first target's answer, else another's. On
// SQLite, whose driver answers from the storage class of the current row's
// value, it is the answer for the merged row last returned.
func (m *mergedRows) ColumnTypeScanType(i int) reflect.Type {
	if m.spec.dialect == merge.SQLite {
		if i < len(m.cur) {
			return m.cur[i]
		}
		return nil
	}
	if t := m.Rows.ColumnTypeScanType(i); t != nil {
		return t
	}
	for _, u := range m.units {
		if t := colScanType(u, i); t != nil {
			return t
		}
	}
	return nil
}

// checkGuards refuses a row whose sums SQLite could have overflowed
// while adding the rows of one table: COUNT * MAX or COUNT * MIN beyond
// int64.
func (m *mergedRows) checkGuards() error {
	for _, g := range m.guards {
		lo, ok1 := m.row[g.min].(int64)
		hi, ok2 := m.row[g.max].(int64)
		n, ok3 := m.row[g.count].(int64)
		if !ok1 || !ok2 || !ok3 {
			continue // no value, or not integers: SQLite adds those as floats
		}
		for _, v := range []int64{lo, hi} {
			p := new(big.Int).Mul(big.NewInt(n), big.NewInt(v))
			if !p.IsInt64() {
				return fmt.Errorf("%w: SUM or AVG across targets on SQLite of integers whose sum may leave int64 while one table adds them", ErrUnsupported)
			}
		}
	}
	return nil
}

// Next returns the next merged row. A unit's own error comes back as the
// driver returned it; the engine's refusals (a collation or type it
// cannot compare, too many groups) match ErrUnsupported.
func (m *mergedRows) Next(dest []driver.Value) error {
	if m.pending {
		m.pending = false
		copy(dest, m.ahead)
		if m.aheadErr == nil {
			m.sqliteScanTypes(dest)
		}
		return m.aheadErr
	}
	if m.guards == nil {
		if err := m.next(dest); err != nil {
			return err
		}
	} else {
		if err := m.next(m.row); err != nil {
			return err
		}
		if err := m.checkGuards(); err != nil {
			return err
		}
		copy(dest, m.row[:m.visible])
	}
	if m.spec.dialect == merge.SQLite {
		m.sqliteScanTypes(dest)
	}
	return nil
}

// sqliteScanTypes records the scan types SQLite's driver gives for a row
// holding these values: by the value's storage class, BOOLEAN integers as
// bool.
func (m *mergedRows) sqliteScanTypes(row []driver.Value) {
	if m.cur == nil {
		m.cur = make([]reflect.Type, len(row))
	}
	for i, v := range row {
		switch v.(type) {
		case nil:
			m.cur[i] = nil
		case []byte:
			m.cur[i] = reflect.SliceOf(reflect.TypeFor[[]byte]())
		case int64:
			m.cur[i] = reflect.TypeFor[int64]()
			if strings.EqualFold(m.Rows.ColumnTypeDatabaseTypeName(i), "boolean") {
				m.cur[i] = reflect.TypeFor[bool]()
			}
		default:
			m.cur[i] = reflect.TypeOf(v)
		}
	}
}

func (m *mergedRows) next(dest []driver.Value) error {
	err := m.Rows.Next(dest)
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	return m.spec.refine(engineError(err))
}

// refine turns a target's failure that only the merge's rewriting caused
// into a refusal: SQLite's SUM behind a merged AVG overflows where SQLite's
// AVG over one table would not fail.
func (spec mergeSpec) refine(err error) error {
	if spec.merge != nil && spec.merge.SQLiteSum && strings.Contains(err.Error(), "integer overflow") {
		return fmt.Errorf("%w: SUM or AVG across targets: a target's sum overflows on SQLite (%v)", ErrUnsupported, err)
	}
	return err
}

func engineError(err error) error {
	var se *merge.ShardError
	if errors.As(err, &se) {
		return se.Err
	}
	return fmt.Errorf("%w: merging the rows of several targets: %w", ErrUnsupported, err)
}

// plan binds the merge plan to the units' columns and the execution's
// arguments: hidden columns follow the query's own, whose number is known
// only now when the select list has a *.
func (spec mergeSpec) plan(units []driver.Rows) (merge.Plan, error) {
	if len(units) == 0 {
		return merge.Plan{}, errors.New("sqlhook: no rows to merge")
	}
	n := len(units[0].Columns())
	p := merge.Plan{Dialect: spec.dialect, Visible: n, Offset: spec.offset, Limit: spec.limit}
	if p.Dialect == 0 {
		p.Dialect = merge.PostgreSQL // rows only concatenated: no value is compared
	}
	mp := spec.merge
	if mp == nil {
		return p, nil
	}
	p.Visible = n - mp.Hidden
	if p.Visible < max(mp.MinVisible, 1) {
		return p, fmt.Errorf("%w: the query returns %d columns, fewer than its ORDER BY positions or hidden columns need", ErrUnsupported, n)
	}
	col := func(c ir.ColRef) int {
		if c >= 0 {
			return int(c)
		}
		return p.Visible + int(-c-1)
	}
	p.Grouped, p.Distinct = mp.Grouped, mp.Distinct
	for i, g := range mp.GroupBy {
		p.GroupBy = append(p.GroupBy, col(g))
		p.GroupText = append(p.GroupText, mp.GroupText[i])
	}
	for _, a := range mp.Aggs {
		ag := merge.Agg{Col: col(a.Col), Func: a.Fn, Text: a.Text}
		for _, x := range a.Args {
			ag.Args = append(ag.Args, col(x))
		}
		p.Aggs = append(p.Aggs, ag)
	}
	if p.Distinct {
		p.DistinctText = make([]merge.Text, p.Visible)
		for i := range p.DistinctText {
			p.DistinctText[i] = mp.DistinctText
		}
	}
	for _, k := range mp.OrderBy {
		p.OrderBy = append(p.OrderBy, merge.Key{Col: col(k.Col), Desc: k.Desc, NullsFirst: k.NullsFirst, Text: k.Text})
	}
	if mp.Having != nil {
		p.Having = bindCond(mp.Having, col, spec.args)
	}
	for _, c := range mp.Calcs {
		p.Computed = append(p.Computed, merge.Computed{Col: col(c.Col), Expr: c.Tree.Expr(col)})
	}
	if len(mp.Guards) > 0 {
		if p.Distinct {
			return p, fmt.Errorf("%w: SELECT DISTINCT with SUM or AVG across targets on SQLite", ErrUnsupported)
		}
		last := 0
		for _, g := range mp.Guards {
			last = max(last, col(g.Min), col(g.Max), col(g.Count))
		}
		p.Visible = last + 1 // the guards are the first hidden columns
	}
	return p, nil
}

// bindCond is a HAVING condition with its constants' values.
func bindCond(t *ir.CondTmpl, col func(ir.ColRef) int, args []driver.NamedValue) *merge.Cond {
	c := &merge.Cond{Op: t.Op, Cmp: t.Cmp, Text: t.Text}
	for _, k := range t.Kids {
		c.Kids = append(c.Kids, bindCond(k, col, args))
	}
	operand := func(o ir.OpTmpl) merge.Operand {
		if o.IsConst {
			return merge.Operand{IsConst: true, Const: value(o.Val, args)}
		}
		return merge.Operand{Col: col(o.Col)}
	}
	c.L, c.R = operand(t.L), operand(t.R)
	return c
}

func colScanType(r driver.Rows, i int) reflect.Type {
	if c, ok := r.(driver.RowsColumnTypeScanType); ok {
		return c.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func colDatabaseTypeName(r driver.Rows, i int) string {
	if c, ok := r.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return c.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func colLength(r driver.Rows, i int) (int64, bool) {
	if c, ok := r.(driver.RowsColumnTypeLength); ok {
		return c.ColumnTypeLength(i)
	}
	return 0, false
}

func colNullable(r driver.Rows, i int) (bool, bool) {
	if c, ok := r.(driver.RowsColumnTypeNullable); ok {
		return c.ColumnTypeNullable(i)
	}
	return false, false
}

func colPrecisionScale(r driver.Rows, i int) (int64, int64, bool) {
	if c, ok := r.(driver.RowsColumnTypePrecisionScale); ok {
		return c.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

// colInfo is what a driver said about one column, kept after its rows
// close.
type colInfo struct {
	scanType             reflect.Type
	dbType               string
	length               int64
	hasLength            bool
	nullable, hasNull    bool
	precision, scale     int64
	hasPrecisionAndScale bool
}

// bufferedRows is a unit's result read into memory (see materialize).
type bufferedRows struct {
	cols []string
	info []colInfo
	rows [][]driver.Value
	next int
}

// materialize reads all of r and closes it. It frees r's conn for the
// next unit on the same data source.
func materialize(r driver.Rows) (*bufferedRows, error) {
	cols := r.Columns()
	b := &bufferedRows{cols: cols, info: make([]colInfo, len(cols))}
	for i := range cols {
		ci := &b.info[i]
		ci.scanType = colScanType(r, i)
		ci.dbType = colDatabaseTypeName(r, i)
		ci.length, ci.hasLength = colLength(r, i)
		ci.nullable, ci.hasNull = colNullable(r, i)
		ci.precision, ci.scale, ci.hasPrecisionAndScale = colPrecisionScale(r, i)
	}
	buf := make([]driver.Value, len(cols))
	for {
		err := r.Next(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			r.Close()
			return nil, err
		}
		if len(b.rows) == 0 {
			// Some drivers (SQLite's) report a column's scan type only
			// while a row is current.
			for i := range b.info {
				if t := colScanType(r, i); t != nil {
					b.info[i].scanType = t
				}
			}
		}
		b.rows = append(b.rows, cloneRow(buf))
	}
	if err := r.Close(); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *bufferedRows) Columns() []string { return b.cols }
func (b *bufferedRows) Close() error      { b.rows = nil; return nil }

func (b *bufferedRows) Next(dest []driver.Value) error {
	if b.next >= len(b.rows) {
		return io.EOF
	}
	copy(dest, b.rows[b.next])
	b.next++
	return nil
}

func (b *bufferedRows) ColumnTypeScanType(i int) reflect.Type   { return b.info[i].scanType }
func (b *bufferedRows) ColumnTypeDatabaseTypeName(i int) string { return b.info[i].dbType }
func (b *bufferedRows) ColumnTypeLength(i int) (int64, bool) {
	return b.info[i].length, b.info[i].hasLength
}
func (b *bufferedRows) ColumnTypeNullable(i int) (bool, bool) {
	return b.info[i].nullable, b.info[i].hasNull
}
func (b *bufferedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	ci := b.info[i]
	return ci.precision, ci.scale, ci.hasPrecisionAndScale
}

// cloneRow copies a row with its []byte values, which the driver may
// reuse on the next Next.
func cloneRow(row []driver.Value) []driver.Value {
	out := make([]driver.Value, len(row))
	for i, v := range row {
		if b, ok := v.([]byte); ok {
			v = bytes.Clone(b)
		}
		out[i] = v
	}
	return out
}

// stmtRows are the rows of a statement prepared for one query; closing
// them closes the statement. Each optional method answers as the rows
// would, or with database/sql's default when they lack it, so database/sql
// sees no difference.
type stmtRows struct {
	driver.Rows
	st driver.Stmt
}

var (
	_ driver.RowsNextResultSet              = (*stmtRows)(nil)
	_ driver.RowsColumnTypeScanType         = (*stmtRows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*stmtRows)(nil)
	_ driver.RowsColumnTypeLength           = (*stmtRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*stmtRows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*stmtRows)(nil)
)

func (r *stmtRows) Close() error { return errors.Join(r.Rows.Close(), r.st.Close()) }

func (r *stmtRows) HasNextResultSet() bool {
	n, ok := r.Rows.(driver.RowsNextResultSet)
	return ok && n.HasNextResultSet()
}

func (r *stmtRows) NextResultSet() error {
	if n, ok := r.Rows.(driver.RowsNextResultSet); ok {
		return n.NextResultSet()
	}
	return io.EOF
}

func (r *stmtRows) ColumnTypeScanType(i int) reflect.Type   { return colScanType(r.Rows, i) }
func (r *stmtRows) ColumnTypeDatabaseTypeName(i int) string { return colDatabaseTypeName(r.Rows, i) }
func (r *stmtRows) ColumnTypeLength(i int) (int64, bool)    { return colLength(r.Rows, i) }
func (r *stmtRows) ColumnTypeNullable(i int) (bool, bool)   { return colNullable(r.Rows, i) }
func (r *stmtRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	return colPrecisionScale(r.Rows, i)
}
