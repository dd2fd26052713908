package keygen

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
)

// ID is a 64-bit key with the encodings applications need. Its JSON form
// is a quoted decimal string: JavaScript's Number loses precision above
// 2^53, which turns a Snowflake ID's last digits into zeros.
// UnmarshalJSON accepts the quoted form and a bare number.
type ID int64

// Int64 returns id as an int64.
func (id ID) Int64() int64 { return int64(id) }

// String is the decimal form.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// ParseID parses the decimal form.
func ParseID(s string) (ID, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a decimal int64", ErrInvalidID, s)
	}
	return ID(n), nil
}

const base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

var base62Values = func() (v [256]int8) {
	for i := range v {
		v[i] = -1
	}
	for i := 0; i < len(base62Digits); i++ {
		v[base62Digits[i]] = int8(i)
	}
	return v
}()

// Base62 is a compact, URL-safe form (digits, then A-Z, then a-z; a
// leading '-' for negative IDs). For non-negative IDs of equal length its
// byte order matches numeric order.
func (id ID) Base62() string {
	var buf [12]byte
	i := len(buf)
	u := uint64(id)
	if id < 0 {
		u = -u
	}
	for {
		i--
		buf[i] = base62Digits[u%62]
		u /= 62
		if u == 0 {
			break
		}
	}
	if id < 0 {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// ParseBase62 parses the Base62 form.
func ParseBase62(s string) (ID, error) {
	digits, neg := strings.CutPrefix(s, "-")
	if digits == "" || len(digits) > 11 {
		return 0, fmt.Errorf("%w: %q is not base62", ErrInvalidID, s)
	}
	var u uint64
	for i := 0; i < len(digits); i++ {
		d := base62Values[digits[i]]
		if d < 0 {
			return 0, fmt.Errorf("%w: %q is not base62", ErrInvalidID, s)
		}
		hi := u * 62
		if hi/62 != u || hi+uint64(d) < hi {
			return 0, fmt.Errorf("%w: %q overflows int64", ErrInvalidID, s)
		}
		u = hi + uint64(d)
	}
	switch {
	case !neg && u <= 1<<63-1:
		return ID(u), nil
	case neg && u <= 1<<63 && u != 0:
		return ID(-u), nil
	}
	return 0, fmt.Errorf("%w: %q overflows int64", ErrInvalidID, s)
}

// MarshalJSON encodes id as a quoted decimal string.
func (id ID) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 22)
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(id), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a quoted decimal string or a bare number. null
// leaves id unchanged, as encoding/json does for other types.
func (id *ID) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := ParseID(s)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// MarshalText is the decimal form (map keys, YAML, form values).
func (id ID) MarshalText() ([]byte, error) { return strconv.AppendInt(nil, int64(id), 10), nil }

// UnmarshalText parses the decimal form.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// Value stores id as an int64 column value.
func (id ID) Value() (driver.Value, error) { return int64(id), nil }

// Scan reads an integer column, or its decimal text.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		*id = ID(v)
	case uint64:
		if v > 1<<63-1 {
			return fmt.Errorf("%w: %d overflows int64", ErrInvalidID, v)
		}
		*id = ID(v)
	case []byte:
		return id.UnmarshalText(v)
	case string:
		return id.UnmarshalText([]byte(v))
	case ID:
		*id = v
	case *ID:
		// ent's bulk create scans the key it generated, by pointer.
		if v == nil {
			return fmt.Errorf("%w: nil *ID", ErrInvalidID)
		}
		*id = *v
	case nil:
		return fmt.Errorf("%w: NULL", ErrInvalidID)
	default:
		return fmt.Errorf("%w: cannot scan %T", ErrInvalidID, src)
	}
	return nil
}
