package difftest

import (
	"database/sql"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gorm.io/gorm"
)

// caseOf turns a generated call into a case: the call through gormplugin,
// the same call on the oracle, and the oracle's full ordered rows.
func (g *gormReadGen) caseOf(q *gormQ) readCase {
	shard := g.bin
	switch {
	case q.comparesLabel():
		shard = g.def
	case q.prepared:
		shard = g.prep
	}
	desc := q.describe()
	if q.prepared {
		desc = "PrepareStmt: " + desc
	}
	rc := readCase{family: "gorm." + q.dest, desc: desc,
		shard:  func() (*readResult, error) { return q.run(shard) },
		oracle: func() (*readResult, error) { return q.run(g.oracle) }}
	rc.kinds = q.payloadKinds()
	rc.untyped = q.db == "sqlite" && (q.dest == "maps" || q.dest == "aggmaps")
	keys := q.keyCols()
	for i, k := range keys {
		if i < len(q.order) && q.order[i].collate != "" {
			rc.kinds = append(rc.kinds, kTextBin) // ordered bytewise
			continue
		}
		rc.kinds = append(rc.kinds, keyKind(q.db, q.kindOf(k), readColNamed(k).name == ""))
	}
	rc.ordered = len(keys) > 0
	rc.win = window{max(q.off, 0), q.limit}
	if q.dest == "first" || q.dest == "last" || q.dest == "take" {
		rc.win = window{0, 1}
	}
	if rc.ordered || rc.win.lim >= 0 {
		rc.full = func() (*readResult, error) { return q.runFull(g.oracle, keys) }
	}
	rc.shrink = func() []readCase {
		var out []readCase
		for _, s := range q.smaller() {
			out = append(out, g.caseOf(s))
		}
		return out
	}
	return rc
}

// comparesLabel reports whether merging the call's rows may compare
// label values (see sqlQuery.comparesLabel).
func (q *gormQ) comparesLabel() bool {
	if slices.ContainsFunc(q.order, func(o gormOrder) bool { return o.col == "label" }) ||
		slices.Contains(q.group, "label") || slices.Contains(q.distinct, "label") {
		return true
	}
	if q.pluck == "label" && (q.distinct != nil || len(q.order) > 0) {
		return true
	}
	return slices.ContainsFunc(q.aggSel, func(s string) bool { return strings.Contains(s, "label)") }) ||
		(q.having != nil && strings.Contains(q.having.text, "label"))
}

func (q *gormQ) kindOf(col string) colKind {
	if k, ok := q.kinds[col]; ok {
		return k
	}
	return readColNamed(col).kind
}

// payloadCols is the result's column names: the fields of the
// destination, or the keys of its maps.
func (q *gormQ) payloadCols() []string {
	switch q.dest {
	case "count", "groupcount":
		return []string{"count"}
	case "pluck":
		return []string{q.pluck}
	case "agg", "agg1":
		return []string{"g1", "g2", "cnt", "total", "lo", "hi", "mean", "dist"}
	case "aggmaps":
		var cols []string
		for k := range q.kinds {
			cols = append(cols, k)
		}
		sort.Strings(cols)
		return cols
	case "maps":
		if q.sel != nil {
			return slices.Sorted(slices.Values(q.sel))
		}
		return slices.Sorted(slices.Values(fieldNames))
	}
	return fieldNames
}

func (q *gormQ) payloadKinds() []colKind {
	var out []colKind
	for _, c := range q.payloadCols() {
		out = append(out, keyKind(q.db, q.kindOf(c), readColNamed(c).name == ""))
	}
	return out
}

// keyCols is the columns the result is ordered by (GORM adds the primary
// key for First and Last, and orders FindInBatches by it).
func (q *gormQ) keyCols() []string {
	var out []string
	for _, o := range q.order {
		out = append(out, o.col)
	}
	switch q.dest {
	case "first", "last", "batches":
		out = append(out, "id")
	}
	return out
}

// run performs the call on db.
func (q *gormQ) run(db *gorm.DB) (*readResult, error) {
	tx := q.chain(db, false)
	switch q.dest {
	case "rows", "distinct":
		var rows []ReadRow
		err := tx.Find(&rows).Error
		return &readResult{cols: fieldNames, rows: structRows(reflect.ValueOf(rows), nil)}, err
	case "maps", "aggmaps":
		var ms []map[string]any
		if err := tx.Find(&ms).Error; err != nil {
			return nil, err
		}
		cols, rows := mapRows(ms)
		if len(ms) == 0 {
			cols = q.payloadCols()
		}
		return &readResult{cols: cols, rows: rows}, nil
	case "first", "last", "take":
		return q.runOne(tx)
	case "agg1":
		var r ReadAgg
		err := tx.Scan(&r).Error
		return &readResult{cols: q.payloadCols(), rows: [][]any{structRow(reflect.ValueOf(r), nil)}}, err
	case "count", "groupcount":
		var n int64
		err := tx.Count(&n).Error
		return &readResult{cols: []string{"count"}, rows: [][]any{{n}}}, err
	case "pluck":
		vs, err := q.plucked(tx)
		res := &readResult{cols: []string{q.pluck}}
		for _, v := range vs {
			res.rows = append(res.rows, []any{v})
		}
		return res, err
	case "agg":
		var rows []ReadAgg
		var err error
		if q.scan {
			err = tx.Scan(&rows).Error
		} else {
			err = tx.Find(&rows).Error
		}
		return &readResult{cols: q.payloadCols(), rows: structRows(reflect.ValueOf(rows), nil)}, err
	case "batches":
		var batch, all []ReadRow
		err := tx.FindInBatches(&batch, q.batch, func(*gorm.DB, int) error {
			all = append(all, batch...)
			return nil
		}).Error
		return &readResult{cols: fieldNames, rows: structRows(reflect.ValueOf(all), nil)}, err
	}
	return nil, errors.New("difftest: unknown destination " + q.dest)
}

// runOne performs First, Last or Take; no row is an empty result.
func (q *gormQ) runOne(tx *gorm.DB) (*readResult, error) {
	var r ReadRow
	var err error
	switch q.dest {
	case "first":
		err = tx.First(&r).Error
	case "last":
		err = tx.Last(&r).Error
	default:
		err = tx.Take(&r).Error
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return &readResult{cols: fieldNames}, nil
	}
	return &readResult{cols: fieldNames, rows: [][]any{structRow(reflect.ValueOf(r), nil)}}, err
}

// plucked performs Pluck (after Distinct() when asked).
func (q *gormQ) plucked(tx *gorm.DB) ([]any, error) {
	var vs []sql.NullString
	if q.distinct != nil {
		tx = tx.Distinct()
	}
	err := tx.Pluck(q.pluck, &vs).Error
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = nullString(v)
	}
	return out, err
}

// runFull reads the oracle's rows without Limit/Offset, with the values
// of keys appended to each row's payload.
func (q *gormQ) runFull(db *gorm.DB, keys []string) (*readResult, error) {
	tx := q.chain(db, true)
	switch q.dest {
	case "first", "batches":
		tx = tx.Order("id")
	case "last":
		tx = tx.Order("id DESC")
	}
	res := &readResult{cols: q.payloadCols()}
	var err error
	switch q.dest {
	case "rows", "distinct", "first", "last", "take", "batches":
		res.rows, err = q.fullRows(tx, keys)
	case "maps", "aggmaps":
		var ms []map[string]any
		err = tx.Find(&ms).Error
		for _, m := range ms {
			var row []any
			for _, c := range slices.Concat(res.cols, keys) {
				row = append(row, deref(m[c]))
			}
			res.rows = append(res.rows, row)
		}
	case "pluck":
		var vs []any
		vs, err = q.plucked(tx)
		for _, v := range vs {
			row := []any{v}
			for range keys {
				row = append(row, v) // the only key is the plucked column
			}
			res.rows = append(res.rows, row)
		}
	case "agg":
		var rows []ReadAgg
		err = tx.Scan(&rows).Error
		for _, r := range rows {
			row := structRow(reflect.ValueOf(r), nil)
			for _, k := range keys {
				row = append(row, row[slices.Index(res.cols, k)])
			}
			res.rows = append(res.rows, row)
		}
	default:
		return nil, errors.New("difftest: no full read for " + q.dest)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// fullRows reads model rows, the fields the call did not select zeroed
// as they are in its result, the key columns appended as read.
func (q *gormQ) fullRows(tx *gorm.DB, keys []string) ([][]any, error) {
	var rows []ReadRow
	if err := tx.Find(&rows).Error; err != nil {
		return nil, err
	}
	mask := func(i int) bool { return q.sel != nil && !slices.Contains(q.sel, fieldNames[i]) }
	var out [][]any
	for _, r := range rows {
		full := structRow(reflect.ValueOf(r), nil)
		row := structRow(reflect.ValueOf(r), mask)
		for _, k := range keys {
			row = append(row, full[slices.Index(fieldNames, k)])
		}
		out = append(out, row)
	}
	return out, nil
}

// smaller is the call with one part dropped.
func (q *gormQ) smaller() []*gormQ {
	var out []*gormQ
	cp := func() *gormQ {
		c := *q
		c.where = slices.Clone(q.where)
		c.order = slices.Clone(q.order)
		return &c
	}
	for i := range q.where {
		c := cp()
		c.where = slices.Delete(c.where, i, i+1)
		out = append(out, c)
	}
	if q.having != nil {
		c := cp()
		c.having = nil
		out = append(out, c)
	}
	if q.off >= 0 {
		c := cp()
		c.off = -1
		out = append(out, c)
	}
	if q.limit >= 0 {
		c := cp()
		c.limit, c.off = -1, -1
		out = append(out, c)
	}
	if len(q.order) > 1 {
		for i := range q.order {
			c := cp()
			c.order = slices.Delete(c.order, i, i+1)
			out = append(out, c)
		}
	}
	return out
}

func nullString(v sql.NullString) any {
	if !v.Valid {
		return nil
	}
	return v.String
}
