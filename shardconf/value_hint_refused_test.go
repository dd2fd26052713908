package shardconf_test

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/shardkey/shardkey/shardconf"
)

// A hint value ${value % 4} cannot take as a Long (Java would throw: an
// unsigned beyond Long's range, text, a time, a fraction, a bool) is an
// error of the statement, never a route; the extremes of every Go integer
// type that fits route as Java's Long remainder does.
func TestHintValuesALongExpressionCannotTakeAreErrorsNotRoutes(t *testing.T) {
	r := hintRouter(t, hintRules)
	for _, v := range []any{uint64(math.MaxInt64) + 1, uint64(math.MaxUint64), uint(math.MaxUint64), "3", " 3", []byte("3"),
		json.Number("9223372036854775808"), new(big.Int).Lsh(big.NewInt(1), 70), time.Unix(3, 0), 3.5, true, complex(1, 0), nil} {
		ts, err := r.RouteContext(hinted("t_order", shardconf.Hint{Database: vals(0), Table: vals(v)}), "t_order")
		if err == nil {
			t.Errorf("table hint %T(%v): routed to %v, want an error", v, v, ts)
		}
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{int8(math.MinInt8), "ds_0.t_order_0"}, {int8(127), "ds_0.t_order_3"}, {uint8(255), "ds_0.t_order_3"},
		{uint16(math.MaxUint16), "ds_0.t_order_3"}, {uint32(math.MaxUint32), "ds_0.t_order_3"},
		{int64(math.MinInt64), "ds_0.t_order_0"}, {int64(math.MaxInt64), "ds_0.t_order_3"},
		{uint64(math.MaxInt64), "ds_0.t_order_3"}, {big.NewInt(6), "ds_0.t_order_2"}, {float32(2), "ds_0.t_order_2"},
	} {
		checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(0), Table: vals(c.v)}), "t_order", false, nil, c.want, nil)
	}
	// Java's -1 % 4 is -1: t_order_-1 is no table.
	checkRouteContext(t, r, hinted("t_order", shardconf.Hint{Database: vals(0), Table: vals(int16(-1))}), "t_order", false, nil, "value -1", shardconf.ErrNoRoute)
}
