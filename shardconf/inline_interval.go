package shardconf

// "<INTERVAL>" node lists, as ShardingSphere's IntervalInlineExpressionParser
// (infra/expr/type/interval/.../IntervalInlineExpressionParser.java, commit
// 24b89e4b; java.time behaviour as in Java 17):
//
//	<INTERVAL>P=ds.t_order_;SP=yyyy_MM;DIA=1;DIU=Months;DL=2023_01;DU=2023_06
//
//   - KEY=VALUE pairs separated by ';' (trailing empty pairs ignored, as
//     String.split drops them); P prefix, SP a DateTimeFormatter pattern,
//     DL and DU the bounds written in SP, DIA an int step, DIU a ChronoUnit
//     by its toString (case matters: Days, Months, ...), C a chronology.
//   - The bounds' fields decide the temporal type: a date and time
//     (LocalDateTime), a date (LocalDate), year and month (YearMonth), a
//     year (Year), a month alone (Month), a time alone (LocalTime).
//   - names = P + format(DL.plus(k*DIA, DIU)) for k = 0 .. until(DL, DU,
//     DIU) / DIA, each step from DL (not from the previous name), with
//     java.time's until and plus: month steps clamp the day (Jan 31 + 1 month
//     is Feb 28, + 2 months Mar 31), a LocalDateTime counts whole days only
//     when the time of day is reached, a LocalTime wraps at midnight.
//   - A month alone steps by DIA months whatever DIU says (the unit must
//     still be a ChronoUnit) and wraps after December.
//
// Refused, where ShardingSphere ignores or shardkey cannot do it exactly:
// keys other than those seven (ShardingSphere ignores them, so a misspelt
// C would silently mean ISO), a value containing '=' (ShardingSphere keeps
// only the text before it), chronologies other than ISO and text fields
// (era names, month names: their output depends on the JVM's locale),
// pattern letters beyond those INTERVAL's algorithm reads (see
// algo_interval.go), the units Eras and Forever, a list that comes out
// empty, and years outside 1..9999. Where ShardingSphere throws (DL after
// DU, DIA 0, a unit the type cannot add) shardkey fails too.

import (
	"math/big"
	"strconv"
	"strings"
	"time"
)

// ivxKind is the java.time type an INTERVAL expression steps.
type ivxKind uint8

const (
	ivxYear ivxKind = iota + 1
	ivxYearMonth
	ivxDate
	ivxDateTime
	ivxMonth
	ivxTime
)

// ivxUnit is a ChronoUnit: a fixed length, a number of days or of months.
type ivxUnit struct {
	name   string
	nanos  int64
	days   int64
	months int64
}

var ivxUnits = []ivxUnit{
	{name: "Nanos", nanos: 1}, {name: "Micros", nanos: 1e3}, {name: "Millis", nanos: 1e6},
	{name: "Seconds", nanos: 1e9}, {name: "Minutes", nanos: 60e9}, {name: "Hours", nanos: 3600e9},
	{name: "HalfDays", nanos: 43200e9}, {name: "Days", days: 1}, {name: "Weeks", days: 7},
	{name: "Months", months: 1}, {name: "Years", months: 12}, {name: "Decades", months: 120},
	{name: "Centuries", months: 1200}, {name: "Millennia", months: 12000},
}

const ivxNanosPerDay = 86400e9

// ivxExpr is a parsed INTERVAL expression.
type ivxExpr struct {
	prefix string
	pat    *ivPattern
	kind   ivxKind
	lo, hi time.Time // civil times in UTC
	step   int64
	unit   ivxUnit
	off    int // where the expression starts, for errors
}

// expandIntervalInline expands expr[start:], an INTERVAL expression.
func expandIntervalInline(expr string, start int) ([]string, error) {
	x, err := parseIntervalInline(expr, start)
	if err != nil {
		return nil, err
	}
	until, err := x.until()
	if err != nil {
		return nil, err
	}
	count := until/x.step + 1 // Java's long division truncates, as Go's does
	switch {
	case count < 0:
		return nil, inlErrf(start, "DL is past DU in the direction of DIA (ShardingSphere fails: a negative stream limit)")
	case count == 0:
		return nil, inlErrf(start, "expression expands to no names")
	case count > maxInlineNames:
		return nil, inlErrf(start, "expression expands to more than %d names", maxInlineNames)
	}
	out := make([]string, 0, count)
	var total int64
	for k := int64(0); k < count; k++ {
		t, err := x.plus(k * x.step)
		if err != nil {
			return nil, err
		}
		name := string(x.pat.format([]byte(x.prefix), t))
		if total += int64(len(name)); total > maxInlineBytes {
			return nil, inlErrf(start, "expression expands to more than %d bytes of names", maxInlineBytes)
		}
		out = append(out, name)
	}
	return out, nil
}

// parseIntervalInline reads the KEY=VALUE pairs.
func parseIntervalInline(expr string, start int) (*ivxExpr, error) {
	props, offs, err := ivxPairs(expr, start)
	if err != nil {
		return nil, err
	}
	for _, k := range [...]string{"P", "SP", "DIA", "DIU", "DL", "DU"} {
		if _, ok := props[k]; !ok {
			return nil, inlErrf(start, "%s is required (an INTERVAL expression needs P, SP, DIA, DIU, DL and DU)", k)
		}
	}
	if c, ok := props["C"]; ok && c != "ISO" {
		return nil, inlErrf(offs["C"], "chronology C=%s is not supported (shardkey formats ISO dates only)", c)
	}
	x := &ivxExpr{prefix: props["P"], off: start}
	if x.pat, err = ivCompile(props["SP"]); err != nil {
		return nil, inlErrf(offs["SP"], "SP: %v", err)
	}
	if x.kind = ivxKindOf(x.pat); x.kind == 0 {
		return nil, inlErrf(offs["SP"], "SP=%s names no year, year-month, date, date and time, month or time of day (ShardingSphere cannot step it)", props["SP"])
	}
	if x.lo, _, err = x.pat.parse(props["DL"]); err != nil {
		return nil, inlErrf(offs["DL"], "DL: %v", err)
	}
	if x.hi, _, err = x.pat.parse(props["DU"]); err != nil {
		return nil, inlErrf(offs["DU"], "DU: %v", err)
	}
	if x.step, err = strconv.ParseInt(props["DIA"], 10, 32); err != nil || x.step == 0 {
		return nil, inlErrf(offs["DIA"], "DIA=%s is not a non-zero int", props["DIA"])
	}
	var ok bool
	if x.unit, ok = ivxParseUnit(props["DIU"]); !ok {
		return nil, inlErrf(offs["DIU"], "DIU=%s is not a supported ChronoUnit (Nanos, Micros, Millis, Seconds, Minutes, Hours, HalfDays, Days, Weeks, Months, Years, Decades, Centuries, Millennia; case matters)", props["DIU"])
	}
	if !x.kind.adds(x.unit) {
		return nil, inlErrf(offs["DIU"], "DIU=%s cannot step %s (ShardingSphere fails: UnsupportedTemporalTypeException)", x.unit.name, x.kind)
	}
	return x, nil
}

// ivxPairs splits expr[start:] into its KEY=VALUE pairs, with the offset
// of each pair; String.split drops trailing empty pairs.
func ivxPairs(expr string, start int) (props map[string]string, offs map[string]int, err error) {
	props, offs = map[string]string{}, map[string]int{}
	pairs := strings.Split(expr[start:], ";")
	for len(pairs) > 1 && pairs[len(pairs)-1] == "" {
		pairs = pairs[:len(pairs)-1]
	}
	pos := start
	for _, pair := range pairs {
		key, val, ok := strings.Cut(pair, "=")
		switch {
		case !ok || val == "":
			return nil, nil, inlErrf(pos, "%q is not KEY=VALUE (keys P, SP, DIA, DIU, DL, DU, C)", pair)
		case strings.Contains(val, "="):
			return nil, nil, inlErrf(pos, "the value of %s contains '=' (ShardingSphere keeps only the text before it)", key)
		}
		switch key {
		case "P", "SP", "DIA", "DIU", "DL", "DU", "C":
		default:
			return nil, nil, inlErrf(pos, "unknown key %q (keys P, SP, DIA, DIU, DL, DU, C)", key)
		}
		if _, dup := props[key]; dup {
			return nil, nil, inlErrf(pos, "key %s given twice", key)
		}
		props[key], offs[key] = val, pos
		pos += len(pair) + 1
	}
	return props, offs, nil
}

func ivxParseUnit(s string) (ivxUnit, bool) {
	for _, u := range ivxUnits {
		if u.name == s { // Java compares ChronoUnit.toString() with equals
			return u, true
		}
	}
	return ivxUnit{}, false
}

// ivxKindOf is the temporal type a pattern's fields resolve to under
// ResolverStyle.SMART, or 0 when ShardingSphere could not format it.
func ivxKindOf(p *ivPattern) ivxKind {
	var mask uint
	for _, k := range p.toks {
		if k.f != ivNone {
			mask |= 1 << uint(k.f)
		}
	}
	const (
		y, mo, d = 1 << ivYear, 1 << ivMonth, 1 << ivDay
		h, mi, s = 1 << ivHour, 1 << ivMinute, 1 << ivSecond
		fr       = 1 << ivFrac
	)
	times := [...]uint{h, h | mi, h | mi | s, h | mi | s | fr}
	switch mask {
	case y:
		return ivxYear
	case y | mo:
		return ivxYearMonth
	case y | mo | d:
		return ivxDate
	case mo:
		return ivxMonth
	}
	for _, t := range times {
		switch mask {
		case t:
			return ivxTime
		case y | mo | d | t:
			return ivxDateTime
		}
	}
	return 0
}

func (k ivxKind) String() string {
	return [...]string{"", "a Year", "a YearMonth", "a LocalDate", "a LocalDateTime", "a Month", "a LocalTime"}[k]
}

// adds reports whether the type's until and plus take the unit.
func (k ivxKind) adds(u ivxUnit) bool {
	switch k {
	case ivxYear:
		return u.months >= 12
	case ivxYearMonth:
		return u.months > 0
	case ivxDate:
		return u.nanos == 0
	case ivxTime:
		return u.nanos > 0
	}
	return true // LocalDateTime takes all; a Month ignores the unit
}

// until is java.time's start.until(end, unit) for the expression's type.
func (x *ivxExpr) until() (int64, error) {
	lo, hi, u := x.lo, x.hi, x.unit
	switch x.kind {
	case ivxMonth:
		return int64(hi.Month() - lo.Month()), nil
	case ivxYear, ivxYearMonth:
		return (ivxProlepticMonth(hi) - ivxProlepticMonth(lo)) / u.months, nil
	case ivxDate:
		return ivxDateUntil(lo, hi, u), nil
	case ivxTime:
		return (ivxNanoOfDay(hi) - ivxNanoOfDay(lo)) / u.nanos, nil
	}
	if u.nanos > 0 { // a time-based unit: whole units of the exact difference
		d := new(big.Int).Mul(big.NewInt(hi.Unix()-lo.Unix()), big.NewInt(1e9))
		d.Add(d, big.NewInt(int64(hi.Nanosecond()-lo.Nanosecond())))
		d.Quo(d, big.NewInt(u.nanos))
		if !d.IsInt64() {
			return 0, inlErrf(x.off, "DL to DU is too many %s", u.name)
		}
		return d.Int64(), nil
	}
	// LocalDateTime.until: a day counts once its time of day is reached.
	end := ivxMidnight(hi)
	switch tl, th := ivxNanoOfDay(lo), ivxNanoOfDay(hi); {
	case end.After(ivxMidnight(lo)) && th < tl:
		end = end.AddDate(0, 0, -1)
	case end.Before(ivxMidnight(lo)) && th > tl:
		end = end.AddDate(0, 0, 1)
	}
	return ivxDateUntil(ivxMidnight(lo), end, u), nil
}

// ivxDateUntil is LocalDate.until for a date-based unit: whole days, or
// whole months where a month counts once its day of month is reached.
func ivxDateUntil(lo, hi time.Time, u ivxUnit) int64 {
	if u.days > 0 {
		return (hi.Unix() - lo.Unix()) / 86400 / u.days
	}
	packed := func(t time.Time) int64 { return ivxProlepticMonth(t)*32 + int64(t.Day()) }
	return (packed(hi) - packed(lo)) / 32 / u.months
}

func ivxProlepticMonth(t time.Time) int64 { return int64(t.Year())*12 + int64(t.Month()-1) }

func ivxNanoOfDay(t time.Time) int64 {
	h, m, s := t.Clock()
	return (int64(h)*3600+int64(m)*60+int64(s))*1e9 + int64(t.Nanosecond())
}

func ivxMidnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// plus is java.time's lo.plus(n, unit) for the expression's type.
func (x *ivxExpr) plus(n int64) (time.Time, error) {
	lo, u := x.lo, x.unit
	var t time.Time
	switch {
	case x.kind == ivxMonth: // Month.plus wraps; the unit plays no part
		m := (int64(lo.Month()-1)+n%12+12)%12 + 1
		return time.Date(2000, time.Month(m), 1, 0, 0, 0, 0, time.UTC), nil
	case x.kind == ivxTime: // LocalTime.plus wraps at midnight
		perDay := ivxNanosPerDay / u.nanos
		nod := ((ivxNanoOfDay(lo)+(n%perDay)*u.nanos)%ivxNanosPerDay + ivxNanosPerDay) % ivxNanosPerDay
		return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(nod)), nil
	case u.nanos >= 1e9:
		t = time.Unix(lo.Unix()+n*(u.nanos/1e9), int64(lo.Nanosecond())).UTC()
	case u.nanos > 0:
		per := 1e9 / u.nanos
		t = time.Unix(lo.Unix()+n/per, int64(lo.Nanosecond())+n%per*u.nanos).UTC()
	case u.days > 0:
		t = lo.AddDate(0, 0, int(n*u.days))
	default:
		t = ivxPlusMonths(lo, n*u.months)
	}
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, inlErrf(x.off, "a name falls outside the years 1 to 9999")
	}
	return t, nil
}

// ivxPlusMonths is plusMonths: the day is clamped to the new month's end.
func ivxPlusMonths(t time.Time, n int64) time.Time {
	pm := ivxProlepticMonth(t) + n
	y, m := pm/12, time.Month(pm%12+1)
	if pm < 0 || y > 9999 {
		return time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	d := min(t.Day(), ivDaysIn(int(y), m))
	h, mi, s := t.Clock()
	return time.Date(int(y), m, d, h, mi, s, t.Nanosecond(), time.UTC)
}
