package merge

import (
	"database/sql/driver"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// SQLite converts the operands of a comparison by their affinity before
// comparing them (https://www.sqlite.org/datatype3.html#comparison_affinity):
// k > '5' on an INTEGER column k compares with the number 5, s > 5 on a
// TEXT column s with the text '5'; a constant and an expression (an
// aggregate) have no affinity, so COUNT(*) > '5' compares a number with
// text, which is always less.
type affinity uint8

const (
	affNone    affinity = iota // an expression or a constant
	affBlob                    // a column declared BLOB or without a type
	affText                    // CHAR, CLOB, TEXT
	affNumeric                 // INT, REAL, FLOA, DOUB and any other declared type
)

// colAffinity is the affinity of result column c from its declared type
// ("" is an expression's: none); c < 0 is a constant.
func (r *Rows) colAffinity(c int) affinity {
	if c < 0 {
		return affNone
	}
	t := strings.ToUpper(r.types[c])
	switch {
	case t == "":
		return affNone
	case strings.Contains(t, "INT"):
		return affNumeric
	case strings.Contains(t, "CHAR"), strings.Contains(t, "CLOB"), strings.Contains(t, "TEXT"):
		return affText
	case strings.Contains(t, "BLOB"):
		return affBlob
	}
	return affNumeric
}

// sqliteAffinity converts a and b (of columns ca, cb; -1 for a constant)
// as SQLite does before comparing them.
func (r *Rows) sqliteAffinity(ca, cb int, a, b driver.Value) (driver.Value, driver.Value, error) {
	x, y := r.colAffinity(ca), r.colAffinity(cb)
	aff := max(x, y) // one side without affinity: the other's
	if x != affNone && y != affNone && x != affNumeric && y != affNumeric {
		aff = affBlob // two columns, neither numeric: no conversion
	}
	switch aff {
	case affNumeric:
		return numericAffinity(a), numericAffinity(b), nil
	case affText:
		a, err := textAffinity(a)
		if err != nil {
			return nil, nil, err
		}
		b, err := textAffinity(b)
		return a, b, err
	}
	return a, b, nil
}

// sqliteNumber is text SQLite reads as a number, spaces around allowed.
var sqliteNumber = regexp.MustCompile(`^[ \t\n\v\f\r]*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?[ \t\n\v\f\r]*$`)

// numericAffinity turns text that reads as a number into an integer (when
// it is one that fits) or a real; other values are left alone.
func numericAffinity(v driver.Value) driver.Value {
	s, ok := v.(string)
	if !ok || !sqliteNumber.MatchString(s) {
		return v
	}
	s = strings.Trim(s, " \t\n\v\f\r")
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return v
}

// textAffinity writes a number as SQLite's text: an integer in decimal, a
// real that is an integer below 10^15 with ".0"; other reals are written
// by "%!.15g", which is refused rather than imitated.
func textAffinity(v driver.Value) (driver.Value, error) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 && !(x == 0 && math.Signbit(x)) {
			return strconv.FormatFloat(x, 'f', -1, 64) + ".0", nil
		}
		return nil, fmt.Errorf("%w: SQLite compares the real %v with text as its own text", ErrUnsupportedType, x)
	}
	return v, nil
}
