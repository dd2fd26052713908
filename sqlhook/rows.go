package sqlhook

import (
	"bytes"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// mergedRows is the result of a query that ran as several units, combined
// as its mergeSpec says (see unit.go).
type mergedRows struct {
	units   []driver.Rows
	spec    mergeSpec
	cols    []string
	keys    []sortKey
	numeric [][]bool         // [unit][column]: the unit reports a numeric database type
	bufs    [][]driver.Value // each unit's current row

	// ordered merge
	started bool
	live    []bool // bufs[u] holds a row not yet returned
	last    int    // the unit whose row was returned last, -1 if none

	cur     int  // concatenation: the unit being read
	aggDone bool // aggregation: the one row has been formed

	skipped, emitted int64
	closed           bool
}

// sortKey is an orderKey resolved to a column.
type sortKey struct {
	col  int
	desc bool
}

var (
	_ driver.RowsColumnTypeScanType         = (*mergedRows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*mergedRows)(nil)
	_ driver.RowsColumnTypeLength           = (*mergedRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*mergedRows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*mergedRows)(nil)
)

// newMergedRows merges units' rows by spec. On error the caller still
// owns (and closes) the units.
func newMergedRows(units []driver.Rows, spec mergeSpec) (*mergedRows, error) {
	if len(units) == 0 {
		return nil, errors.New("sqlhook: no rows to merge")
	}
	cols := units[0].Columns()
	for i, u := range units[1:] {
		if n := len(u.Columns()); n != len(cols) {
			return nil, fmt.Errorf("sqlhook: the units of a query return different numbers of columns (%d from unit 1, %d from unit %d)",
				len(cols), n, i+2)
		}
	}
	m := &mergedRows{units: units, spec: spec, cols: cols, last: -1}
	for _, k := range spec.orderBy {
		col := k.pos
		if col < 0 {
			for i, c := range cols {
				if strings.EqualFold(c, k.name) {
					col = i
					break
				}
			}
		}
		if col < 0 || col >= len(cols) {
			return nil, fmt.Errorf("sqlhook: ORDER BY %s (position %d) is not a column of the result %v", k.name, k.pos, cols)
		}
		m.keys = append(m.keys, sortKey{col: col, desc: k.desc})
	}
	for _, a := range spec.aggs {
		if a.pos < 0 || a.pos >= len(cols) {
			return nil, fmt.Errorf("sqlhook: aggregate column %d is outside the result's %d columns", a.pos, len(cols))
		}
	}
	m.numeric = make([][]bool, len(units))
	m.bufs = make([][]driver.Value, len(units))
	for u, r := range units {
		m.numeric[u] = make([]bool, len(cols))
		for c := range cols {
			m.numeric[u][c] = isNumericType(colDatabaseTypeName(r, c))
		}
		m.bufs[u] = make([]driver.Value, len(cols))
	}
	return m, nil
}

// Columns are the first unit's column names.
func (m *mergedRows) Columns() []string { return m.cols }

// Close closes every unit's rows.
func (m *mergedRows) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	var errs []error
	for _, u := range m.units {
		if err := u.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Next fills dest (at most len(dest) values) with the next merged row,
// after skipping the offset and up to the limit.
func (m *mergedRows) Next(dest []driver.Value) error {
	if m.closed {
		return io.EOF
	}
	for {
		if m.spec.limit >= 0 && m.emitted >= m.spec.limit {
			return io.EOF
		}
		row, err := m.nextRow()
		if err != nil {
			return err
		}
		if m.skipped < m.spec.offset {
			m.skipped++
			continue
		}
		m.emitted++
		copy(dest, row)
		return nil
	}
}

func (m *mergedRows) nextRow() ([]driver.Value, error) {
	switch {
	case len(m.spec.aggs) > 0:
		return m.aggregate()
	case len(m.keys) == 0:
		return m.concat()
	}
	return m.ordered()
}

// concat returns the units' rows one unit after another.
func (m *mergedRows) concat() ([]driver.Value, error) {
	for m.cur < len(m.units) {
		err := m.units[m.cur].Next(m.bufs[m.cur])
		if err == nil {
			return m.bufs[m.cur], nil
		}
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		m.cur++
	}
	return nil, io.EOF
}

// ordered is a k-way merge: the least of the units' current rows. A unit
// is advanced only when the caller asks for the row after its row, since
// drivers may reuse a row's buffers on Next. Equal rows come in unit
// order.
func (m *mergedRows) ordered() ([]driver.Value, error) {
	if !m.started {
		m.started = true
		m.live = make([]bool, len(m.units))
		for u := range m.units {
			if err := m.pull(u); err != nil {
				return nil, err
			}
		}
	} else if m.last >= 0 {
		if err := m.pull(m.last); err != nil {
			return nil, err
		}
	}
	best := -1
	for u, live := range m.live {
		if !live {
			continue
		}
		if best < 0 {
			best = u
			continue
		}
		c, err := m.compareRows(u, best)
		if err != nil {
			return nil, err
		}
		if c < 0 {
			best = u
		}
	}
	m.last = best
	if best < 0 {
		return nil, io.EOF
	}
	return m.bufs[best], nil
}

// pull reads unit u's next row.
func (m *mergedRows) pull(u int) error {
	err := m.units[u].Next(m.bufs[u])
	switch {
	case err == nil:
		m.live[u] = true
	case errors.Is(err, io.EOF):
		m.live[u] = false
	default:
		m.live[u] = false
		return err
	}
	return nil
}

func (m *mergedRows) compareRows(a, b int) (int, error) {
	for _, k := range m.keys {
		c, err := compareOrder(m.bufs[a][k.col], m.bufs[b][k.col], m.numeric[a][k.col], m.numeric[b][k.col], m.spec.nullsFirst, m.spec.binaryText)
		if err != nil {
			return 0, fmt.Errorf("sqlhook: merge by column %s: %w", m.cols[k.col], err)
		}
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c, nil
		}
	}
	return 0, nil
}

// aggregate forms the one row of an aggregate query from each unit's one
// row.
func (m *mergedRows) aggregate() ([]driver.Value, error) {
	if m.aggDone {
		return nil, io.EOF
	}
	m.aggDone = true
	rows := make([][]driver.Value, len(m.units))
	for u, r := range m.units {
		if err := r.Next(m.bufs[u]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("sqlhook: aggregate query: unit %d returned no row", u+1)
			}
			return nil, err
		}
		// Copied: the check for a second row may overwrite the buffers.
		rows[u] = cloneRow(m.bufs[u])
		switch err := r.Next(m.bufs[u]); {
		case err == nil:
			return nil, fmt.Errorf("sqlhook: aggregate query: unit %d returned more than one row", u+1)
		case !errors.Is(err, io.EOF):
			return nil, err
		}
	}
	out := rows[0]
	vals := make([]driver.Value, len(rows))
	nums := make([]bool, len(rows))
	for _, a := range m.spec.aggs {
		for u, row := range rows {
			vals[u], nums[u] = row[a.pos], m.numeric[u][a.pos]
		}
		v, err := combine(a.fn, vals, nums, m.spec.binaryText)
		if err != nil {
			return nil, fmt.Errorf("sqlhook: aggregate column %s: %w", m.cols[a.pos], err)
		}
		out[a.pos] = v
	}
	return out, nil
}

// Column types come from the first unit, with database/sql's defaults
// where its rows do not say.

// ColumnTypeScanType delegates to the first unit's rows.
func (m *mergedRows) ColumnTypeScanType(i int) reflect.Type { return colScanType(m.units[0], i) }

// ColumnTypeDatabaseTypeName delegates to the first unit's rows.
func (m *mergedRows) ColumnTypeDatabaseTypeName(i int) string {
	return colDatabaseTypeName(m.units[0], i)
}

// ColumnTypeLength delegates to the first unit's rows.
func (m *mergedRows) ColumnTypeLength(i int) (int64, bool) { return colLength(m.units[0], i) }

// ColumnTypeNullable delegates to the first unit's rows.
func (m *mergedRows) ColumnTypeNullable(i int) (bool, bool) { return colNullable(m.units[0], i) }

// ColumnTypePrecisionScale delegates to the first unit's rows.
func (m *mergedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	return colPrecisionScale(m.units[0], i)
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

// isNumericType tells whether a driver's database type name is a number
// type, whose values may arrive as text ([]byte or string) but must sort
// as numbers: "10" > "9".
func isNumericType(name string) bool {
	s := strings.ToUpper(strings.TrimSpace(name))
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = strings.TrimSpace(s[:i]) // DECIMAL(10,2), as SQLite reports declared types
	}
	s = strings.TrimPrefix(s, "UNSIGNED ")
	s = strings.TrimSuffix(s, " UNSIGNED")
	switch s {
	case "INT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "MEDIUMINT",
		"DECIMAL", "DEC", "NUMERIC", "FLOAT", "DOUBLE", "DOUBLE PRECISION", "REAL",
		"INT2", "INT4", "INT8", "FLOAT4", "FLOAT8":
		return true
	}
	return false
}

// compareOrder compares for ORDER BY: NULL is the least value when
// nullsFirst, else the greatest (so DESC reverses NULLs too, as the
// databases do).
func compareOrder(a, b driver.Value, numA, numB, nullsFirst, binaryText bool) (int, error) {
	switch {
	case a == nil && b == nil:
		return 0, nil
	case a == nil:
		if nullsFirst {
			return -1, nil
		}
		return 1, nil
	case b == nil:
		if nullsFirst {
			return 1, nil
		}
		return -1, nil
	}
	return compareValues(a, b, numA, numB, binaryText)
}

// compareValues compares two non-NULL values: numbers numerically across
// Go types, text as numbers when either column is of a numeric type (or
// the other value is a number) else bytewise, times by time, false before
// true. Text is compared only when binaryText: PostgreSQL and MySQL order
// text by the column's collation (often case-insensitive or
// locale-aware), which a byte comparison would contradict.
func compareValues(a, b driver.Value, numA, numB, binaryText bool) (int, error) {
	ta, aText := a.([]byte)
	sa, aStr := a.(string)
	tb, bText := b.([]byte)
	sb, bStr := b.(string)
	aIsText, bIsText := aText || aStr, bText || bStr
	_, aIsNum := numberOf(a)
	_, bIsNum := numberOf(b)
	switch {
	case aIsNum && bIsNum:
		return compareNumbers(a, b), nil
	case aIsText && bIsText && !numA && !numB:
		if !binaryText {
			return 0, fmt.Errorf("%w: ordering text across targets: the database orders it by its collation, which sqlhook cannot reproduce", ErrUnsupported)
		}
		switch {
		case aText && bText:
			return bytes.Compare(ta, tb), nil
		case aStr && bStr:
			return strings.Compare(sa, sb), nil
		case aText:
			return strings.Compare(string(ta), sb), nil
		}
		return strings.Compare(sa, string(tb)), nil
	case (aIsText || aIsNum) && (bIsText || bIsNum):
		x, err := extOf(a)
		if err != nil {
			return 0, err
		}
		y, err := extOf(b)
		if err != nil {
			return 0, err
		}
		return x.cmp(y), nil
	}
	switch x := a.(type) {
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0, nil
			case !x:
				return -1, nil
			}
			return 1, nil
		}
	}
	return 0, fmt.Errorf("cannot compare %T with %T", a, b)
}

// number is a Go number value as int64, uint64 or float64.
type number struct {
	kind byte // 'i', 'u' or 'f'
	i    int64
	u    uint64
	f    float64
}

func numberOf(v driver.Value) (number, bool) {
	switch x := v.(type) {
	case int64:
		return number{kind: 'i', i: x}, true
	case int:
		return number{kind: 'i', i: int64(x)}, true
	case int32:
		return number{kind: 'i', i: int64(x)}, true
	case int16:
		return number{kind: 'i', i: int64(x)}, true
	case int8:
		return number{kind: 'i', i: int64(x)}, true
	case uint64:
		return number{kind: 'u', u: x}, true
	case uint:
		return number{kind: 'u', u: uint64(x)}, true
	case uint32:
		return number{kind: 'u', u: uint64(x)}, true
	case uint16:
		return number{kind: 'u', u: uint64(x)}, true
	case uint8:
		return number{kind: 'u', u: uint64(x)}, true
	case float64:
		return number{kind: 'f', f: x}, true
	case float32:
		return number{kind: 'f', f: float64(x)}, true
	}
	return number{}, false
}

// compareNumbers compares two values numberOf accepts, exactly.
func compareNumbers(a, b driver.Value) int {
	x, _ := numberOf(a)
	y, _ := numberOf(b)
	switch {
	case x.kind == 'i' && y.kind == 'i':
		return cmpOrdered(x.i, y.i)
	case x.kind == 'u' && y.kind == 'u':
		return cmpOrdered(x.u, y.u)
	case x.kind == 'i' && y.kind == 'u':
		if x.i < 0 {
			return -1
		}
		return cmpOrdered(uint64(x.i), y.u)
	case x.kind == 'u' && y.kind == 'i':
		return -compareNumbers(b, a)
	}
	// A float against anything: exactly, on the extended number line.
	return x.ext().cmp(y.ext())
}

func cmpOrdered[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ext is a number on the extended line: finite (r), ±Inf, or NaN, which
// sorts above every number as in PostgreSQL.
type ext struct {
	r    *big.Rat
	rank int // -1: -Inf, 0: finite, 1: +Inf, 2: NaN
}

func (x ext) cmp(y ext) int {
	if x.rank != y.rank || x.rank != 0 {
		return cmpOrdered(int64(x.rank), int64(y.rank))
	}
	return x.r.Cmp(y.r)
}

func (n number) ext() ext {
	switch n.kind {
	case 'i':
		return ext{r: new(big.Rat).SetInt64(n.i)}
	case 'u':
		return ext{r: new(big.Rat).SetUint64(n.u)}
	}
	switch {
	case math.IsNaN(n.f):
		return ext{rank: 2}
	case math.IsInf(n.f, 1):
		return ext{rank: 1}
	case math.IsInf(n.f, -1):
		return ext{rank: -1}
	}
	return ext{r: new(big.Rat).SetFloat64(n.f)}
}

// extOf reads a number or numeric text.
func extOf(v driver.Value) (ext, error) {
	if n, ok := numberOf(v); ok {
		return n.ext(), nil
	}
	var s string
	switch x := v.(type) {
	case []byte:
		s = string(x)
	case string:
		s = x
	default:
		return ext{}, fmt.Errorf("cannot compare %T as a number", v)
	}
	t := strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimPrefix(t, "+")) {
	case "nan":
		return ext{rank: 2}, nil
	case "infinity", "inf":
		return ext{rank: 1}, nil
	case "-infinity", "-inf":
		return ext{rank: -1}, nil
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return ext{}, fmt.Errorf("%q is not a number", s)
	}
	return ext{r: r}, nil
}

// combine merges the units' values of one aggregate column; nums says
// which units report a numeric type for it.
func combine(fn aggFunc, vals []driver.Value, nums []bool, binaryText bool) (driver.Value, error) {
	switch fn {
	case aggCount:
		return sumCounts(vals)
	case aggSum:
		return sumValues(vals)
	case aggMin, aggMax:
		var best driver.Value
		bestU := -1
		for u, v := range vals {
			if v == nil {
				continue
			}
			if bestU < 0 {
				best, bestU = v, u
				continue
			}
			c, err := compareValues(v, best, nums[u], nums[bestU], binaryText)
			if err != nil {
				return nil, err
			}
			if (fn == aggMin && c < 0) || (fn == aggMax && c > 0) {
				best, bestU = v, u
			}
		}
		return best, nil
	}
	return nil, fmt.Errorf("unknown aggregate %d", fn)
}

// sumCounts adds COUNTs as an int64.
func sumCounts(vals []driver.Value) (driver.Value, error) {
	var total int64
	for _, v := range vals {
		var n int64
		switch x := v.(type) {
		case nil:
			continue
		case []byte:
			var err error
			if n, err = strconv.ParseInt(strings.TrimSpace(string(x)), 10, 64); err != nil {
				return nil, fmt.Errorf("count %q: %w", x, err)
			}
		case string:
			var err error
			if n, err = strconv.ParseInt(strings.TrimSpace(x), 10, 64); err != nil {
				return nil, fmt.Errorf("count %q: %w", x, err)
			}
		default:
			num, ok := numberOf(v)
			switch {
			case !ok:
				return nil, fmt.Errorf("count of type %T", v)
			case num.kind == 'i':
				n = num.i
			case num.kind == 'u' && num.u <= math.MaxInt64:
				n = int64(num.u)
			case num.kind == 'f' && num.f == math.Trunc(num.f) && math.Abs(num.f) < 1<<63:
				n = int64(num.f)
			default:
				return nil, fmt.Errorf("count %v is not an int64", v)
			}
		}
		if (n > 0 && total > math.MaxInt64-n) || (n < 0 && total < math.MinInt64-n) {
			return nil, errors.New("the count overflows int64")
		}
		total += n
	}
	return total, nil
}

// sumValues adds SUMs, ignoring NULLs (all NULL: NULL). The result has the
// Go type the driver used: decimal text ([]byte or string, as the first
// text value) summed exactly with the largest scale of the inputs, float64,
// or int64 (uint64 when every input was).
func sumValues(vals []driver.Value) (driver.Value, error) {
	var (
		kind        byte // 0: no value, 'i': integers, 'f': floats, 't': text
		textAsBytes bool
		allUnsigned = true
	)
	for _, v := range vals {
		if v == nil {
			continue
		}
		switch v.(type) {
		case []byte, string:
			if kind != 't' {
				_, textAsBytes = v.([]byte)
			}
			kind = 't'
			continue
		}
		n, ok := numberOf(v)
		if !ok {
			return nil, fmt.Errorf("cannot add a value of type %T", v)
		}
		if n.kind != 'u' {
			allUnsigned = false
		}
		switch {
		case n.kind == 'f' && kind != 't':
			kind = 'f'
		case kind == 0:
			kind = 'i'
		}
	}
	switch kind {
	case 0:
		return nil, nil
	case 't':
		return sumDecimals(vals, textAsBytes)
	case 'f':
		var f float64
		for _, v := range vals {
			if n, ok := numberOf(v); ok {
				switch n.kind {
				case 'i':
					f += float64(n.i)
				case 'u':
					f += float64(n.u)
				default:
					f += n.f
				}
			}
		}
		return f, nil
	}
	sum := new(big.Int)
	for _, v := range vals {
		if n, ok := numberOf(v); ok {
			if n.kind == 'u' {
				sum.Add(sum, new(big.Int).SetUint64(n.u))
			} else {
				sum.Add(sum, big.NewInt(n.i))
			}
		}
	}
	switch {
	case allUnsigned && sum.IsUint64():
		return sum.Uint64(), nil
	case !allUnsigned && sum.IsInt64():
		return sum.Int64(), nil
	}
	return nil, fmt.Errorf("the sum %s overflows the driver's type", sum)
}

// sumDecimals adds values exactly as decimals and writes the sum as text.
func sumDecimals(vals []driver.Value, asBytes bool) (driver.Value, error) {
	sum := new(big.Rat)
	scale := 0
	for _, v := range vals {
		var s string
		switch x := v.(type) {
		case nil:
			continue
		case []byte:
			s = string(x)
		case string:
			s = x
		default:
			n, _ := numberOf(v)
			switch n.kind {
			case 'i':
				s = strconv.FormatInt(n.i, 10)
			case 'u':
				s = strconv.FormatUint(n.u, 10)
			default:
				if math.IsNaN(n.f) || math.IsInf(n.f, 0) {
					return nil, fmt.Errorf("cannot add %v exactly", n.f)
				}
				s = strconv.FormatFloat(n.f, 'f', -1, 64)
			}
		}
		r, sc, err := parseDecimal(s)
		if err != nil {
			return nil, err
		}
		sum.Add(sum, r)
		scale = max(scale, sc)
	}
	out := sum.FloatString(scale)
	if asBytes {
		return []byte(out), nil
	}
	return out, nil
}

// parseDecimal reads decimal text ("-12.50", "1.5e-3") and its scale, the
// number of digits after the point needed to write it exactly.
func parseDecimal(s string) (*big.Rat, int, error) {
	t := strings.TrimSpace(s)
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		e, err := strconv.Atoi(t[i+1:])
		if err != nil {
			return nil, 0, fmt.Errorf("%q is not a decimal number", s)
		}
		mant, exp = t[:i], e
	}
	if strings.ContainsAny(mant, "/xXpP_") {
		return nil, 0, fmt.Errorf("%q is not a decimal number", s)
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return nil, 0, fmt.Errorf("%q is not a decimal number", s)
	}
	scale := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		scale = len(mant) - i - 1
	}
	return r, max(scale-exp, 0), nil
}
