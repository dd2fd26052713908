package shardconf

import (
	"database/sql/driver"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

// kind is the type of a sharding value after normalization.
type kind uint8

const (
	kindInt    kind = iota + 1 // every Go integer type that fits int64, keygen.ID
	kindBig                    // uint64 above math.MaxInt64, kept in u
	kindString                 // string, []byte
	kindTime                   // time.Time
	kindFloat                  // float32, float64
)

// value is one sharding value, normalized so that algorithms switch on a
// small kind instead of on Go types.
type value struct {
	kind kind
	i    int64
	u    uint64
	f    float64
	s    string
	t    time.Time
}

// toValue normalizes a caller's value. It is on the routing hot path:
// integers must not allocate.
func toValue(v any) (value, error) {
	switch x := v.(type) {
	case int64:
		return value{kind: kindInt, i: x}, nil
	case int:
		return value{kind: kindInt, i: int64(x)}, nil
	case int32:
		return value{kind: kindInt, i: int64(x)}, nil
	case int16:
		return value{kind: kindInt, i: int64(x)}, nil
	case int8:
		return value{kind: kindInt, i: int64(x)}, nil
	case uint64:
		if x > math.MaxInt64 {
			return value{kind: kindBig, u: x}, nil
		}
		return value{kind: kindInt, i: int64(x)}, nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return value{kind: kindBig, u: uint64(x)}, nil
		}
		return value{kind: kindInt, i: int64(x)}, nil
	case uint32:
		return value{kind: kindInt, i: int64(x)}, nil
	case uint16:
		return value{kind: kindInt, i: int64(x)}, nil
	case uint8:
		return value{kind: kindInt, i: int64(x)}, nil
	case keygen.ID:
		return value{kind: kindInt, i: int64(x)}, nil
	case string:
		return value{kind: kindString, s: x}, nil
	case []byte:
		return value{kind: kindString, s: string(x)}, nil
	case time.Time:
		return value{kind: kindTime, t: x}, nil
	case float64:
		return value{kind: kindFloat, f: x}, nil
	case float32:
		return value{kind: kindFloat, f: float64(x)}, nil
	case nil:
		return value{}, fmt.Errorf("shardconf: a NULL sharding value routes nowhere")
	}
	return slowValue(v)
}

// slowValue handles named types: driver.Valuer (keygen.ID behind a
// pointer, sql.NullInt64), integer and string kinds, and only then
// fmt.Stringer, so that a named integer type is never hashed as a string.
func slowValue(v any) (value, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return value{}, fmt.Errorf("shardconf: a nil %T sharding value routes nowhere", v)
		}
		return toValue(rv.Elem().Interface())
	}
	if dv, ok := v.(driver.Valuer); ok {
		x, err := dv.Value()
		if err != nil {
			return value{}, fmt.Errorf("shardconf: sharding value %T: %w", v, err)
		}
		if _, same := x.(driver.Valuer); same || x == nil {
			return value{}, fmt.Errorf("shardconf: sharding value %T has no usable value", v)
		}
		return toValue(x)
	}
	switch {
	case rv.CanInt():
		return value{kind: kindInt, i: rv.Int()}, nil
	case rv.CanUint():
		if u := rv.Uint(); u > math.MaxInt64 {
			return value{kind: kindBig, u: u}, nil
		} else {
			return value{kind: kindInt, i: int64(u)}, nil
		}
	case rv.Kind() == reflect.String:
		return value{kind: kindString, s: rv.String()}, nil
	}
	if s, ok := v.(fmt.Stringer); ok {
		return value{kind: kindString, s: s.String()}, nil
	}
	return value{}, fmt.Errorf("shardconf: unsupported sharding value type %T", v)
}

// String renders the value as ShardingSphere's toString would.
func (v value) String() string {
	switch v.kind {
	case kindInt:
		return strconv.FormatInt(v.i, 10)
	case kindBig:
		return strconv.FormatUint(v.u, 10)
	case kindString:
		return v.s
	case kindTime:
		return v.t.Format(time.RFC3339Nano)
	case kindFloat:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	}
	return ""
}

// bound is one end of a range; a nil-kind bound is open (unbounded).
type bound struct {
	v         value
	set       bool
	inclusive bool
}

// span is a range of values: lo and hi may each be unbounded.
type span struct{ lo, hi bound }
