package merge

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// PostgreSQL compares intervals by one span: months as 30 days, days as
// 24 hours, in microseconds ('1 mon' = '30 days').
const (
	usPerDay   = 24 * 60 * 60 * 1_000_000
	daysPerMon = 30
)

// intervalSpan reads an interval as PostgreSQL writes it under the
// default IntervalStyle "postgres" ("1 year 2 mons -3 days +04:05:06.5")
// and returns its span in microseconds. Any other text (another
// IntervalStyle, "infinity") is ErrUnsupportedType, never a guess.
func intervalSpan(s string) (*big.Int, error) {
	bad := func() (*big.Int, error) {
		return nil, fmt.Errorf("%w: %q is not an interval in PostgreSQL's default style", ErrUnsupportedType, s)
	}
	f := strings.Fields(s)
	var months, days, us int64
	timeSeen := false
	for i := 0; i < len(f); i++ {
		if strings.Contains(f[i], ":") {
			t, err := durationOf(strings.TrimPrefix(f[i], "+"))
			if err != nil || timeSeen || i != len(f)-1 {
				return bad()
			}
			us, timeSeen = t, true
			continue
		}
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || i+1 >= len(f) {
			return bad()
		}
		i++
		switch f[i] {
		case "year", "years":
			months += n * 12
		case "mon", "mons":
			months += n
		case "day", "days":
			days += n
		default:
			return bad()
		}
	}
	if len(f) == 0 {
		return bad()
	}
	span := new(big.Int).Mul(big.NewInt(months), big.NewInt(daysPerMon))
	span.Add(span, big.NewInt(days))
	span.Mul(span, big.NewInt(usPerDay))
	return span.Add(span, big.NewInt(us)), nil
}
