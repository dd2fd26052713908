package difftest

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// rawCase runs a generated SELECT through GORM's Raw and Scan into maps,
// the way GORM users write the reads its builder cannot.
func (g *gormReadGen) rawCase(rng *rand.Rand) readCase {
	q := genQuery(rng, g.w.b.name)
	q.numbered, q.questionMarks = false, true // GORM spells ? for the dialect
	for i, it := range q.items {
		if it.alias == "" && readColNamed(it.text).name == "" {
			q.items[i].alias = "r" + strconv.Itoa(i) // a map key known before the database names it
		}
	}
	text, args := q.render(false)
	kinds := map[string]colKind{}
	if q.star {
		for _, c := range readCols {
			kinds[c.name] = c.kind
		}
	}
	for _, it := range q.items {
		name := it.alias
		if name == "" {
			name = it.text
		}
		kinds[name] = keyKind(q.db, it.kind, readColNamed(it.text).name == "")
	}
	shard := g.bin
	if q.comparesLabel() {
		shard = g.def
	}
	run := func(db *gorm.DB, text string, args []any) (*readResult, error) {
		var ms []map[string]any
		if err := db.Raw(text, args...).Scan(&ms).Error; err != nil {
			return nil, err
		}
		cols, rows := mapRows(ms)
		return &readResult{cols: cols, rows: rows}, nil
	}
	rc := readCase{family: "gorm.raw", desc: "Raw(" + describe(text, args) + ").Scan(&[]map[string]any{})",
		shard:   func() (*readResult, error) { return run(shard, text, args) },
		oracle:  func() (*readResult, error) { return run(g.oracle, text, args) },
		ordered: len(q.order) > 0, win: window{max(q.off, 0), q.limit}, untyped: q.db == "sqlite"}
	for _, c := range rawPayload(kinds) {
		rc.kinds = append(rc.kinds, kinds[c])
	}
	for _, k := range q.order {
		rc.kinds = append(rc.kinds, keyKind(q.db, k.kind, readColNamed(k.expr).name == ""))
	}
	if rc.ordered || q.limit >= 0 {
		ft, fa := q.render(true)
		rc.full = func() (*readResult, error) { return rawFull(g.oracle, ft, fa, len(q.order)) }
	}
	return rc
}

// rawPayload is the result columns of a map scan: the sorted names.
func rawPayload(kinds map[string]colKind) []string {
	var cols []string
	for c := range kinds {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	return cols
}

// rawFull reads the oracle's rows without LIMIT/OFFSET through Raw, the
// payload columns (sorted, as a map scan gives them) followed by the
// ORDER BY keys dr_k0, dr_k1...
func rawFull(db *gorm.DB, text string, args []any, nkeys int) (*readResult, error) {
	var ms []map[string]any
	if err := db.Raw(text, args...).Scan(&ms).Error; err != nil {
		return nil, err
	}
	res := &readResult{}
	for _, m := range ms {
		var payload []string
		for c := range m {
			if !strings.HasPrefix(c, "dr_k") {
				payload = append(payload, c)
			}
		}
		slices.Sort(payload)
		res.cols = payload
		var row []any
		for _, c := range payload {
			row = append(row, deref(m[c]))
		}
		for i := range nkeys {
			row = append(row, deref(m["dr_k"+strconv.Itoa(i)]))
		}
		res.rows = append(res.rows, row)
	}
	return res, nil
}

// rawTextCase runs one fixed SELECT (no LIMIT, no ORDER BY) through Raw
// and Scan into maps.
func (g *gormReadGen) rawTextCase(text string, kinds []colKind) readCase {
	run := func(db *gorm.DB) func() (*readResult, error) {
		return func() (*readResult, error) {
			var ms []map[string]any
			if err := db.Raw(text).Scan(&ms).Error; err != nil {
				return nil, err
			}
			cols, rows := mapRows(ms)
			return &readResult{cols: cols, rows: rows}, nil
		}
	}
	return readCase{family: "gorm.raw", desc: "Raw(" + text + ").Scan(&[]map[string]any{})", kinds: kinds,
		shard: run(g.bin), oracle: run(g.oracle)}
}
