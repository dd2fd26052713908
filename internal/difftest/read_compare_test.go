package difftest

import (
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// readResult is what a read returned: the column names and the rows, as
// the driver (or GORM) gave them.
type readResult struct {
	cols  []string
	types []string // DatabaseTypeName per column, where known
	rows  [][]any
}

// scanAll reads every row of rs into a readResult.
func scanAll(rs *sql.Rows) (*readResult, error) {
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	res := &readResult{cols: cols}
	if cts, err := rs.ColumnTypes(); err == nil {
		for _, ct := range cts {
			res.types = append(res.types, strings.ToUpper(ct.DatabaseTypeName()))
		}
	}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		res.rows = append(res.rows, vals)
	}
	return res, rs.Err()
}

// canon is how values of a column compare: its kind and the database
// (whose collations decide which texts are equal).
type canon struct {
	db      string
	kinds   []colKind // per column; 0: unknown (compared as numbers when both are)
	float   []bool    // per column: the oracle says it is a floating-point column
	untyped bool      // values' Go types not compared (see readCase.untyped)
}

func floatType(t string) bool {
	switch t {
	case "FLOAT", "FLOAT4", "FLOAT8", "DOUBLE", "REAL", "DOUBLE PRECISION":
		return true
	}
	return false
}

func (c canon) kind(i int) colKind {
	if i < len(c.kinds) {
		return c.kinds[i]
	}
	return 0
}

// key is the comparable form of a value: floats to 7 significant digits
// and magnitudes below 1e-6 as zero (a floating-point sum depends on the
// order it adds in: rows of 1e9 and 1e10 leave an error near 1e-7 that
// no order removes), exact numbers as spelled (scale included), times as UTC
// instants, texts folded as the column's collation makes them equal.
func (c canon) key(i int, v any) string {
	if v == nil {
		return "NULL"
	}
	k := c.kind(i)
	_, isF := v.(float64)
	isF = isF || k == kFloat || (i < len(c.float) && c.float[i])
	switch x := v.(type) {
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999999")
	case float32:
		v = float64(x)
	case []byte:
		v = string(x)
	}
	s := fmt.Sprint(v)
	switch k {
	case kTextBin, kTextDef:
		return "'" + c.fold(k, s) + "'"
	case kTime:
		if t, ok := parseTime(s); ok {
			return t.UTC().Format("2006-01-02 15:04:05.999999999")
		}
		return s
	case kBool:
		switch strings.ToLower(s) {
		case "true", "t":
			return "1"
		case "false", "f":
			return "0"
		}
	}
	if isF {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			if math.Abs(f) < 1e-6 {
				return "0"
			}
			return strconv.FormatFloat(f, 'g', 7, 64)
		}
	}
	if _, ok := new(big.Rat).SetString(s); ok && s != "" {
		// exact numbers as the database spells them: a DECIMAL's scale
		// (1.500, AVG's 5.5000) is part of the answer a string scan sees
		return s
	}
	return "'" + s + "'"
}

// fold makes texts equal that the collation finds equal: MariaDB's
// PAD SPACE collations ignore trailing spaces, its default one case too;
// SQLite's NOCASE folds ASCII case.
func (c canon) fold(k colKind, s string) string {
	switch c.db {
	case "mariadb":
		s = strings.TrimRight(s, " ")
		if k == kTextDef {
			s = strings.ToLower(s)
		}
	case "sqlite":
		if k == kTextDef {
			s = strings.Map(func(r rune) rune {
				if r >= 'A' && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, s)
		}
	}
	return s
}

func parseTime(s string) (time.Time, bool) {
	for _, l := range []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// rowKey is the comparable form of columns [from, to) of a row, each
// value tagged with its Go type's class: a scan into any sees int64 5 and
// "5" differently.
func (c canon) rowKey(r []any, from, to int) string {
	parts := make([]string, 0, to-from)
	for i := from; i < to && i < len(r); i++ {
		if c.untyped {
			parts = append(parts, c.key(i, r[i]))
			continue
		}
		parts = append(parts, typeClass(r[i])+c.key(i, r[i]))
	}
	return strings.Join(parts, " | ")
}

func typeClass(v any) string {
	switch v.(type) {
	case nil:
		return ""
	case int64, int32, int, uint64, uint32:
		return "i:"
	case float64, float32:
		return "f:"
	case string, []byte:
		return "s:"
	case bool:
		return "b:"
	case time.Time:
		return "t:"
	}
	return fmt.Sprintf("%T:", v)
}

// tieKey is the comparable form of a row's ORDER BY keys (from column
// npay on), up to the first floating-point key: floats equal to 7 digits
// may be ordered either way (each order of adding rows rounds them
// differently), so the keys after such a float cannot order rows it ties.
func (c canon) tieKey(r []any, npay int) string {
	var parts []string
	for i := npay; i < len(r); i++ {
		k := c.key(i, r[i])
		if x, ok := new(big.Rat).SetString(k); ok {
			k = x.RatString() // tied by value: 1.5000 and 1.50 are equal keys
		}
		parts = append(parts, k)
		if c.kind(i) == kFloat {
			break
		}
	}
	return strings.Join(parts, " | ")
}

// window is the part of an ordered result a LIMIT/OFFSET keeps.
type window struct {
	off, lim int // lim < 0: no LIMIT
}

// compareRows checks got (the shard rows, payload columns only) against
// full, the oracle's rows without LIMIT/OFFSET, each with its payload in
// columns [0, npay) followed by its ORDER BY key columns (none when the
// statement has no ORDER BY: every row then ties). Rows tied on the keys
// may come in any order; where the window cuts a run of tied rows, the
// rows shown may be any of the run's. It returns "" when they agree.
func (c canon) compareRows(full [][]any, npay int, ordered bool, w window, got [][]any) string {
	n := len(full)
	start := min(w.off, n)
	end := n
	if w.lim >= 0 {
		end = min(n, start+w.lim)
	}
	if len(got) != end-start {
		return fmt.Sprintf("%d rows, the oracle %d", len(got), end-start)
	}
	tie := func(i int) string {
		if !ordered {
			return ""
		}
		return c.tieKey(full[i], npay)
	}
	for gs := 0; gs < n; {
		ge := gs + 1
		for ge < n && tie(ge) == tie(gs) {
			ge++
		}
		a, b := max(gs, start), min(ge, end)
		if a < b {
			if p := c.runAgrees(full[gs:ge], got[a-start:b-start], a == gs && b == ge, npay); p != "" {
				return fmt.Sprintf("rows %d..%d: %s", a-start, b-start-1, p)
			}
		}
		gs = ge
	}
	return ""
}

// runAgrees checks shard rows against a run of tied oracle rows: the same
// multiset when the window holds the whole run, else a part of it.
func (c canon) runAgrees(run, got [][]any, whole bool, npay int) string {
	count := map[string]int{}
	for _, r := range run {
		count[c.rowKey(r, 0, npay)]++
	}
	for _, r := range got {
		k := c.rowKey(r, 0, npay)
		if count[k] == 0 {
			return fmt.Sprintf("shard row (%s) is not among the oracle's rows here", k)
		}
		count[k]--
	}
	if whole {
		for k, n := range count {
			if n > 0 {
				return fmt.Sprintf("the oracle's row (%s) is missing", k)
			}
		}
	}
	return ""
}

// show prints at most a few rows of a result, for a divergence report.
func (c canon) show(rows [][]any, ncols int) string {
	var b strings.Builder
	for i, r := range rows {
		if i == 12 {
			fmt.Fprintf(&b, "      ... %d rows in all\n", len(rows))
			break
		}
		parts := make([]string, 0, ncols)
		for j := 0; j < ncols && j < len(r); j++ {
			parts = append(parts, showVal(r[j]))
		}
		fmt.Fprintf(&b, "      (%s)\n", strings.Join(parts, ", "))
	}
	if len(rows) == 0 {
		b.WriteString("      (no rows)\n")
	}
	return b.String()
}

func showVal(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05")
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Sprint(x)
		}
		return strconv.FormatFloat(x, 'g', -1, 64) + "(f)"
	}
	return fmt.Sprintf("%v(%T)", v, v)
}
