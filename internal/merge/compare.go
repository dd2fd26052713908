package merge

import (
	"bytes"
	"cmp"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// class is how the values of one shard's column compare, decided from the
// database type name its driver reports and the dialect. Only text values
// need it: an int64 is a number and a time.Time a time whatever the
// column says, but "10" may be a number, text, or an interval.
type class uint8

const (
	clsValue       class = iota // by Go type; text is of a type not known here
	clsSQLite                   // SQLite: by storage class, numbers < text < blob
	clsNumber                   // exact numbers; text is decimal
	clsFloat                    // floating point; text is a float's
	clsText                     // text ordered by the column's collation
	clsBPChar                   // PostgreSQL character(n): trailing spaces insignificant
	clsBytes                    // ordered bytewise (binary strings, uuid, fixed-width date text)
	clsTime                     // time.Time by instant, or PostgreSQL's ±infinity
	clsBool                     // false < true
	clsDuration                 // MySQL TIME text: a signed duration
	clsInterval                 // PostgreSQL interval text (IntervalStyle postgres): months, days, time
	clsUnsupported              // text whose order the engine cannot reproduce
)

// classify maps a driver's database type name to its class.
func classify(d Dialect, typeName string) class {
	if d == SQLite {
		return clsSQLite
	}
	t := strings.ToUpper(strings.TrimSpace(typeName))
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	if d == PostgreSQL {
		return pgClass(t)
	}
	return mysqlClass(t)
}

func pgClass(t string) class {
	switch t {
	case "INT2", "INT4", "INT8", "NUMERIC", "OID", "XID", "CID":
		return clsNumber
	case "FLOAT4", "FLOAT8":
		return clsFloat
	case "TEXT", "VARCHAR", "NAME", "CHAR":
		return clsText
	case "BPCHAR":
		return clsBPChar
	case "BYTEA", "UUID", "BIT", "VARBIT":
		// uuid's canonical text, like bit strings' 0/1 text, orders as
		// the values do.
		return clsBytes
	case "TIME":
		// hh:mm:ss[.frac] with trailing fraction zeros dropped: bytewise
		// order is time order.
		return clsBytes
	case "DATE", "TIMESTAMP", "TIMESTAMPTZ":
		return clsTime
	case "BOOL":
		return clsBool
	case "INTERVAL":
		return clsInterval
	}
	return clsUnsupported
}

func mysqlClass(t string) class {
	t = strings.TrimPrefix(t, "UNSIGNED ")
	switch t {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "DECIMAL", "YEAR":
		return clsNumber
	case "FLOAT", "DOUBLE":
		return clsFloat
	case "CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT":
		return clsText
	case "BINARY", "VARBINARY", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BIT":
		return clsBytes
	case "DATE", "DATETIME", "TIMESTAMP":
		// time.Time with parseTime; else fixed-width text, ordered bytewise.
		return clsTime
	case "TIME":
		return clsDuration
	case "NULL", "":
		return clsValue
	}
	return clsUnsupported // JSON, ENUM, SET, GEOMETRY, VECTOR
}

// domain is what a non-NULL value is, given its column's class.
type domain uint8

const (
	dNum domain = iota + 1
	dText
	dBytes
	dTime
	dBool
	dDuration
	dInterval
)

// domainOf finds v's domain. Text of an unsupported type fails with
// ErrUnsupportedType (the caller names the column).
func domainOf(v driver.Value, c class) (domain, error) {
	switch v.(type) {
	case int64, float64, uint64, int, int32, float32, int16, int8, uint32, uint16, uint8, uint:
		return dNum, nil
	case time.Time:
		if c == clsSQLite {
			return dText, nil // SQLite stores times as text
		}
		return dTime, nil
	case bool:
		if c == clsSQLite {
			return dNum, nil
		}
		return dBool, nil
	case string, []byte:
		switch c {
		case clsNumber, clsFloat:
			return dNum, nil
		case clsText, clsBPChar:
			return dText, nil
		case clsBytes:
			return dBytes, nil
		case clsTime:
			return dTime, nil
		case clsDuration:
			return dDuration, nil
		case clsInterval:
			return dInterval, nil
		case clsSQLite:
			if _, ok := v.([]byte); ok {
				return dBytes, nil // a blob
			}
			return dText, nil
		}
		return 0, ErrUnsupportedType
	}
	return 0, fmt.Errorf("%w: Go type %T", ErrUnsupportedType, v)
}

// sqliteRank is SQLite's order of storage classes.
func sqliteRank(d domain) int {
	switch d {
	case dNum:
		return 1
	case dText:
		return 2
	}
	return 3
}

// compareValues orders two non-NULL values of columns of classes ca and cb.
// t governs text.
func compareValues(a, b driver.Value, ca, cb class, t Text) (int, error) {
	// The common cases first, allocation-free.
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y), nil
		}
	case float64:
		if y, ok := b.(float64); ok {
			return cmpFloat(x, y), nil
		}
	}
	da, err := domainOf(a, ca)
	if err != nil {
		return 0, err
	}
	db, err := domainOf(b, cb)
	if err != nil {
		return 0, err
	}
	if da != db {
		if ca == clsSQLite && cb == clsSQLite {
			return cmp.Compare(sqliteRank(da), sqliteRank(db)), nil
		}
		return 0, fmt.Errorf("%w: cannot compare %T with %T", ErrUnsupportedType, a, b)
	}
	switch da {
	case dNum:
		x, _, err := numOf(a, ca)
		if err != nil {
			return 0, err
		}
		y, _, err := numOf(b, cb)
		if err != nil {
			return 0, err
		}
		return cmpNum(x, y), nil
	case dText:
		return compareText(a, b, ca == clsBPChar || cb == clsBPChar, t)
	case dBytes:
		return compareRaw(a, b), nil
	case dTime:
		return compareTime(a, b)
	case dDuration:
		x, err := durationOf(a)
		if err != nil {
			return 0, err
		}
		y, err := durationOf(b)
		if err != nil {
			return 0, err
		}
		return cmp.Compare(x, y), nil
	case dInterval:
		x, err := intervalSpan(rawText(a))
		if err != nil {
			return 0, err
		}
		y, err := intervalSpan(rawText(b))
		if err != nil {
			return 0, err
		}
		return x.Cmp(y), nil
	}
	return cmp.Compare(b2i(a.(bool)), b2i(b.(bool))), nil
}

// compareText orders text under policy t.
func compareText(a, b driver.Value, bpchar bool, t Text) (int, error) {
	_, at := a.(time.Time)
	_, bt := b.(time.Time)
	if at || bt {
		return 0, errSQLiteTime
	}
	switch t {
	case TextBinary:
		if bpchar {
			return compareRaw(trimSpaces(a), trimSpaces(b)), nil
		}
		return compareRaw(a, b), nil
	case TextPadSpace:
		return comparePadSpace(a, b), nil
	case TextRTrim:
		return compareRaw(trimSpaces(a), trimSpaces(b)), nil
	case TextNoCase:
		return compareNoCase(rawText(a), rawText(b)), nil
	}
	return 0, ErrCollation
}

// compareNoCase compares as SQLite's NOCASE: bytewise with ASCII
// upper-case letters read as lower case, then by length.
func compareNoCase(x, y string) int {
	for i := 0; i < min(len(x), len(y)); i++ {
		if a, b := lowerASCII(x[i]), lowerASCII(y[i]); a != b {
			return cmp.Compare(a, b)
		}
	}
	return cmp.Compare(len(x), len(y))
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// compareRaw compares string or []byte values bytewise.
func compareRaw(a, b driver.Value) int {
	switch x := a.(type) {
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(x, y)
		case []byte:
			return cmpBytes(x, y)
		}
	case []byte:
		switch y := b.(type) {
		case string:
			return cmpBytes(x, y)
		case []byte:
			return bytes.Compare(x, y)
		}
	}
	return 0
}

// trimSpaces drops trailing spaces, as PostgreSQL's character(n)
// comparisons do.
func trimSpaces(v driver.Value) driver.Value {
	switch x := v.(type) {
	case string:
		return strings.TrimRight(x, " ")
	case []byte:
		return bytes.TrimRight(x, " ")
	}
	return v
}

// comparePadSpace compares as MySQL's PAD SPACE collations do: the shorter
// value as if padded with spaces to the longer's length.
func comparePadSpace(a, b driver.Value) int {
	x, y := rawText(a), rawText(b)
	n := min(len(x), len(y))
	if c := strings.Compare(x[:n], y[:n]); c != 0 {
		return c
	}
	sign := 1
	rest := x[n:]
	if len(y) > n {
		sign, rest = -1, y[n:]
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] != ' ' {
			if rest[i] < ' ' {
				return -sign
			}
			return sign
		}
	}
	return 0
}

// rawText is a text value as a string (a copy for []byte: only on the
// slower, padded path).
func rawText(v driver.Value) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	s, _ := v.(string)
	return s
}

// compareTime orders times by instant. Text in a time column is
// PostgreSQL's ±infinity or MySQL's date text (read without parseTime),
// which orders bytewise.
func compareTime(a, b driver.Value) (int, error) {
	x, xok := a.(time.Time)
	y, yok := b.(time.Time)
	switch {
	case xok && yok:
		return x.Compare(y), nil
	case !xok && !yok:
		rx, ry := infRank(a), infRank(b)
		if rx == 0 && ry == 0 {
			return compareRaw(a, b), nil
		}
		return cmp.Compare(rx, ry), nil
	case xok:
		r := infRank(b)
		if r == 0 {
			return 0, fmt.Errorf("%w: cannot compare a time with %q", ErrUnsupportedType, rawText(b))
		}
		return -r, nil
	}
	c, err := compareTime(b, a)
	return -c, err
}

// errSQLiteTime: SQLite orders, groups and compares a time by the text it
// stores, which its driver parsed into a time.Time. One instant has many
// spellings ("2024-01-01 10:00:00", "2024-01-01 10:00:00+00:00", with a
// "T", a "Z"...): SQLite tells them apart and orders "T" after " " whatever
// the instants; the parsed value cannot.
var errSQLiteTime = fmt.Errorf("%w: SQLite compares a time by its stored text, which the driver parsed into a time.Time; "+
	"select it as text (CAST(x AS TEXT)) to order, group or compare it", ErrUnsupportedType)

// infRank is 1 for PostgreSQL's "infinity", -1 for "-infinity", else 0.
func infRank(v driver.Value) int {
	switch rawText(v) {
	case "infinity":
		return 1
	case "-infinity":
		return -1
	}
	return 0
}

// appendKey appends v's grouping key: values equal as the database
// compares them for GROUP BY, DISTINCT and = get equal keys. t governs
// text.
func appendKey(buf []byte, v driver.Value, c class, t Text) ([]byte, error) {
	if v == nil {
		return append(buf, 'N'), nil
	}
	d, err := domainOf(v, c)
	if err != nil {
		return buf, err
	}
	switch d {
	case dNum:
		n, _, err := numOf(v, c)
		if err != nil {
			return buf, err
		}
		return append(appendNumKey(append(buf, 'n'), n), 0), nil
	case dText:
		v, err := textKey(v, c, t)
		if err != nil {
			return buf, err
		}
		return appendLen(append(buf, 't'), v), nil
	case dBytes:
		return appendLen(append(buf, 'b'), v), nil
	case dTime:
		if tm, ok := v.(time.Time); ok {
			return appendTimeKey(append(buf, 'T'), tm), nil
		}
		return appendLen(append(buf, 'U'), v), nil
	case dDuration:
		us, err := durationOf(v)
		if err != nil {
			return buf, err
		}
		return append(strconv.AppendInt(append(buf, 'D'), us, 10), 0), nil
	case dInterval:
		span, err := intervalSpan(rawText(v))
		if err != nil {
			return buf, err
		}
		return append(span.Append(append(buf, 'I'), 10), 0), nil
	}
	if v.(bool) {
		return append(buf, 'B', 1), nil
	}
	return append(buf, 'B', 0), nil
}

// textKey is text value v as its grouping key compares it under t:
// trailing spaces dropped where they do not count, ASCII letters folded
// for NOCASE.
func textKey(v driver.Value, c class, t Text) (driver.Value, error) {
	if _, ok := v.(time.Time); ok {
		return nil, errSQLiteTime
	}
	switch t {
	case TextRefused:
		return nil, ErrCollation
	case TextPadSpace, TextRTrim:
		return trimSpaces(v), nil
	case TextNoCase:
		folded := []byte(rawText(v))
		for i, c := range folded {
			folded[i] = lowerASCII(c)
		}
		return folded, nil
	}
	if c == clsBPChar {
		return trimSpaces(v), nil
	}
	return v, nil
}

func appendLen(buf []byte, v driver.Value) []byte {
	switch x := v.(type) {
	case string:
		return append(binary.AppendUvarint(buf, uint64(len(x))), x...)
	case []byte:
		return append(binary.AppendUvarint(buf, uint64(len(x))), x...)
	}
	return buf
}

func appendTimeKey(buf []byte, t time.Time) []byte {
	buf = strconv.AppendInt(buf, t.Unix(), 10)
	buf = strconv.AppendInt(append(buf, ':'), int64(t.Nanosecond()), 10)
	return append(buf, 0)
}

// orderable tells whether t allows ordering text.
func orderable(t Text) bool { return t != TextRefused && t != TextEqualOnly }

// checkClass refuses, before any row is read, a column whose class can
// never be compared as needed: ordered (order) or only tested for
// equality.
func checkClass(c class, t Text, order bool) error {
	switch c {
	case clsUnsupported:
		return ErrUnsupportedType
	case clsText, clsBPChar:
		if t == TextRefused || (order && !orderable(t)) {
			return ErrCollation
		}
	}
	return nil
}

// durationOf reads MySQL's TIME text, [-]h:mm:ss[.ffffff] (hours up to
// 838), as microseconds.
func durationOf(v driver.Value) (int64, error) {
	s := rawText(v)
	t, neg := s, false
	if strings.HasPrefix(t, "-") {
		t, neg = t[1:], true
	}
	frac := ""
	if i := strings.IndexByte(t, '.'); i >= 0 {
		t, frac = t[:i], t[i+1:]
	}
	parts := strings.Split(t, ":")
	if len(parts) != 3 || len(frac) > 6 || len(parts[1]) != 2 || len(parts[2]) != 2 {
		return 0, fmt.Errorf("%w: %q is not a TIME", ErrUnsupportedType, s)
	}
	var us int64
	for i, p := range append(parts, (frac + "000000")[:6]) {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not a TIME", ErrUnsupportedType, s)
		}
		us = us*[]int64{1, 60, 60, 1_000_000}[i] + int64(n)
	}
	if neg {
		us = -us
	}
	return us, nil
}
