package shardconf

// AUTO_INTERVAL and INTERVAL, and the Java DateTimeFormatter pattern subset
// they (and SNOWFLAKE_INTERVAL) use.
//
// What ShardingSphere 5.x does (read from apache/shardingsphere,
// features/sharding/core/src/main/java/org/apache/shardingsphere/sharding/
// algorithm/sharding/datetime/AutoIntervalShardingAlgorithm.java (commit
// a821b60e), .../datetime/IntervalShardingAlgorithm.java (0937fece),
// .../datetime/temporal/TemporalHandlerFactory.java and
// .../temporal/type/*TemporalHandler.java, and
// infra/util/.../datetime/DateTimeFormatterFactory.java; behaviour of
// java.time checked with Java 17):
//
// AUTO_INTERVAL
//   - props datetime-lower (required, "yyyy-MM-dd HH:mm:ss", whole string),
//     datetime-upper (read as a value; missing fails), sharding-seconds
//     (required long).
//   - tables = (int) (ceil((double) (secondsFromLower(upper) / seconds)) + 2):
//     the division is a long division first, so the ceil does nothing and
//     tables = (upper - lower) / seconds + 2 (truncated).
//   - a value is value.toString() parsed with "yyyy-MM-dd HH:mm:ss" from
//     position 0 (trailing text such as ".0" or ".123" is ignored, so Strings
//     and java.sql.Timestamps work; a LocalDateTime's ISO toString does not);
//     s = Duration.between(lower, value).toMillis() / 1000.
//   - partition = clamp(ceil(parseDouble(new DecimalFormat("0.00")
//     .format((double) s / seconds))), 0, tables - 1). The two-decimal
//     HALF_EVEN rounding means a value less than 0.5% of an interval past a
//     boundary stays in the partition below; partition 0 holds everything at
//     or before datetime-lower, partition k holds (lower + (k-1)*seconds,
//     lower + k*seconds] (right-closed).
//   - ranges: partition(lower endpoint) (0 when unbounded) through
//     partition(upper endpoint) (the last when unbounded), bound types
//     ignored; partition i is the target ending in i.
//
// INTERVAL
//   - props datetime-pattern (required), datetime-lower (required, parsed
//     with the pattern), datetime-upper (optional; default LocalDateTime.now()
//     at init, in the JVM's zone), sharding-suffix-pattern (required),
//     datetime-interval-amount (Integer, default 1), datetime-interval-unit
//     (a ChronoUnit whose toString matches ignoring case: Nanos ... Days,
//     Weeks, Months, Years ...; default DAYS).
//   - the temporal type follows what the pattern yields for datetime-lower:
//     a date and time (LocalDateTime), a date (LocalDate), year and month
//     (YearMonth), a year (Year), a month, a time.
//   - intervals: from lower, stepping by temporal.plus(amount, unit) (each
//     step from the previous, so month steps clamp the day: Jan 31, Feb 29,
//     Mar 29 ...), while the step start is not after upper; interval k is
//     [start k, start k+1). The last one may reach past upper.
//   - a value (or range endpoint) is formatted with the pattern when it is a
//     temporal, otherwise toString(); text at least as long as the pattern is
//     cut to the pattern's length and parsed with it; shorter text is parsed
//     with the pattern cut to the text's length (for go-gorm). So values are
//     truncated to the pattern's precision.
//   - a value routes to every interval whose [start, next) intersects it,
//     then to every target whose name endsWith the interval start formatted
//     with sharding-suffix-pattern; equality takes findFirst of a HashSet.
//     An unbounded range side is replaced by datetime-lower/upper (closed).
//   - parsing uses ResolverStyle.SMART: day 29..31 past a month's end is
//     clamped to the end (2023-02-30 is 2023-02-28), 24:00 is the next day.
//
// shardkey reproduces this with its own pattern engine (no Go layout
// strings: a literal such as 'Jan' or '2006' would be misread by
// time.Parse). Supported letters: yyyy, uuuu, yy (2000-2099), MM/M, dd/d,
// HH/H, mm/m, ss/s, S to SSSSSSSSS, quoted text ('' is a quote), and any
// other non-letter as literal; in sharding-suffix-pattern also Q/QQ (the
// quarter's number) and QQQ ("Q1".."Q4", java.time's English and root
// text). datetime-pattern may also be MM (java.time.Month: a value is
// Integer.parseInt of its first two characters; intervals stop before a
// step would pass December, so December is in none, as in
// ShardingSphere's MonthTemporalParser; the unit is ignored) or a time of
// day from the hour down (LocalTime; a time.Time gives its clock). A range
// of time.Time bounds on such a rule reaches every interval unless both
// bounds lie in one year (on one day): its values may be of any month
// (clock) in between. A
// suffix may name fewer fields than the intervals (MM over several years,
// HH over several days): the intervals that share it share a table, and a
// range reaches every interval it touches. Deviations:
//   - INTERVAL enumerates its intervals once at load (at most 1<<20) and
//     finds a value's interval by binary search instead of walking every
//     interval per query;
//   - datetime-pattern must yield a year, a year-month, a date, a date and
//     time, a month (exactly MM: "M" reads December's "12" as 1 in Java) or
//     a time of day; units the temporal type cannot add are refused (Java
//     throws while routing), and so is a time-of-day interval reaching
//     midnight (Java's Range.closedOpen throws on every route); amount must
//     be at least 1 (Java loops forever on 0); datetime-lower after
//     datetime-upper, a suffix that two targets end in, or no interval
//     matching any target are load-time errors. Intervals without a target
//     load and are reported to Router.Unreachable (a value there is
//     ErrNoRoute, a range skips them: no row can be there);
//   - datetime-interval-unit also accepts the enum names (HALF_DAYS);
//   - time.Time values are taken at their own wall clock (their Location),
//     as a JVM reads a LocalDateTime; the default datetime-upper is now in
//     time.Local, as LocalDateTime.now() uses the JVM's zone. A range bound
//     within three hours of a daylight-saving fall-back is widened by the
//     shift (ivEarliestWall), as the instants just past it read earlier
//     wall clocks (AUTO_INTERVAL too);
//   - a range whose exclusive upper endpoint lost precision to the pattern
//     (< 2024-02-01 00:00:00.5 under a seconds pattern) is treated as
//     inclusive, so the rows at 00:00:00.2 are not missed as Java misses
//     them, and an exclusive lower endpoint always is (> 2020-02-01
//     00:00:00 under yyyyMM reads 2020-02, where Java's (2020-02..2020-02]
//     is empty and misses a timestamp column's rows of February); a range that Java's Range.range would reject (lower above upper)
//     routes nowhere instead of throwing; a range open above reaches the
//     end of the last interval, past datetime-upper, where Java puts
//     datetime-upper (and throws when the lower endpoint lies beyond it):
//     "t >= x" with x in the last interval but past datetime-upper finds
//     the rows a value x was routed to;
//   - AUTO_INTERVAL requires datetime-upper not before datetime-lower and
//     sharding-seconds > 0; partitions without a target are reported to
//     Router.Unreachable, as for MOD.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

func init() {
	registerStandard("AUTO_INTERVAL", newAutoIntervalAlgorithm)
	registerStandard("INTERVAL", newIntervalAlgorithm)
}

// ivRefYear is the year a month-only or time-of-day value is placed in
// (on January 1st for a time): the engine works on civil times, and
// ShardingSphere's Month and LocalTime intervals never cross into another
// year or day.
const ivRefYear = 2000

// it).

// ---- Java DateTimeFormatter pattern subset ----

type ivField uint8

const (
	ivNone ivField = iota // literal text
	ivYear
	ivMonth
	ivDay
	ivHour
	ivMinute
	ivSecond
	ivFrac
	// ivQuarter is the quarter of the year (pattern letter Q), for
	// sharding-suffix-pattern only: it is as fine as the month it derives
	// from, so a pattern's level counts it as ivMonth.
	ivQuarter
)

var ivFieldNames = [...]string{"", "year", "month", "day", "hour", "minute", "second", "fraction", "quarter"}

type ivTok struct {
	f   ivField
	n   int    // pattern letters in the run (the width)
	era bool   // 'y' (year of era: no year 0) rather than 'u'
	lit string // the text of a literal
}

type ivPattern struct {
	src   string
	toks  []ivTok
	has   [ivQuarter + 1]bool
	level ivField // finest field present, ivNone when none
	fixed bool    // every field has a fixed width
}

// ivCompile reads a Java DateTimeFormatter pattern.
func ivCompile(src string) (*ivPattern, error) {
	p := &ivPattern{src: src, fixed: true}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			p.toks = append(p.toks, ivTok{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\'':
			next, err := ivQuoted(src, i, &lit)
			if err != nil {
				return nil, err
			}
			i = next
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			t, err := p.field(i)
			if err != nil {
				return nil, err
			}
			flush()
			p.toks = append(p.toks, t)
			i += t.n
		case c == '[' || c == ']' || c == '{' || c == '}' || c == '#':
			return nil, fmt.Errorf("pattern %q: %q is reserved (optional sections are not supported)", src, c)
		default:
			_, size := utf8.DecodeRuneInString(src[i:])
			lit.WriteString(src[i : i+size])
			i += size
		}
	}
	flush()
	return p, nil
}

// ivQuoted reads the quoted text that starts at src[i] into lit and
// returns the offset after it. Two quotes in a row are one quote, in quoted
// text or not.
func ivQuoted(src string, i int, lit *strings.Builder) (int, error) {
	if i+1 < len(src) && src[i+1] == '\'' {
		lit.WriteByte('\'')
		return i + 2, nil
	}
	for j := i + 1; j < len(src); {
		if src[j] == '\'' {
			if j+1 < len(src) && src[j+1] == '\'' {
				lit.WriteByte('\'')
				j += 2
				continue
			}
			return j + 1, nil
		}
		lit.WriteByte(src[j])
		j++
	}
	return 0, fmt.Errorf("pattern %q ends inside a quoted literal", src)
}

// field reads the run of one pattern letter at p.src[i] as a field and
// records it in p.has, p.fixed and p.level.
func (p *ivPattern) field(i int) (ivTok, error) {
	src, c := p.src, p.src[i]
	n := 1
	for i+n < len(src) && src[i+n] == c {
		n++
	}
	t := ivTok{n: n}
	ok := false
	switch c {
	case 'y', 'u':
		t.f, t.era, ok = ivYear, c == 'y', n == 2 || n == 4
	case 'M':
		t.f, ok = ivMonth, n <= 2
	case 'd':
		t.f, ok = ivDay, n <= 2
	case 'H':
		t.f, ok = ivHour, n <= 2
	case 'm':
		t.f, ok = ivMinute, n <= 2
	case 's':
		t.f, ok = ivSecond, n <= 2
	case 'S':
		t.f, ok = ivFrac, n <= 9
	case 'Q':
		// Q and QQ are the quarter's number, QQQ is "Q1".."Q4" (the
		// text java.time gives in English and the root locale).
		t.f, ok = ivQuarter, n <= 3
	}
	if !ok {
		return ivTok{}, fmt.Errorf("pattern %q: %q is not supported (shardkey reads yyyy, uuuu, yy, MM, M, dd, d, HH, H, mm, m, ss, s, S to SSSSSSSSS, Q, QQ, QQQ and quoted text)",
			src, src[i:i+n])
	}
	if p.has[t.f] {
		return ivTok{}, fmt.Errorf("pattern %q names the %s twice", src, ivFieldNames[t.f])
	}
	if t.n == 1 && t.f != ivFrac {
		p.fixed = false
	}
	p.has[t.f] = true
	if t.f == ivQuarter {
		p.level = max(p.level, ivMonth)
	} else {
		p.level = max(p.level, t.f)
	}
	return t, nil
}

// complete reports whether the pattern names every field from the year down
// to its finest, as a year, year-month, date or date-time needs.
func (p *ivPattern) complete() bool {
	if p.level == ivNone {
		return false
	}
	for f := ivYear; f <= p.level; f++ {
		if !p.has[f] {
			return false
		}
	}
	return true
}

func ivAppendInt(dst []byte, v, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// format appends t (a civil time in UTC) rendered with the pattern.
func (p *ivPattern) format(dst []byte, t time.Time) []byte {
	for _, k := range p.toks {
		switch k.f {
		case ivNone:
			dst = append(dst, k.lit...)
		case ivYear:
			y := t.Year()
			if k.n == 2 {
				dst = ivAppendInt(dst, ((y%100)+100)%100, 2)
			} else {
				if y > 9999 {
					dst = append(dst, '+')
				}
				dst = ivAppendInt(dst, y, 4)
			}
		case ivMonth:
			dst = ivAppendInt(dst, int(t.Month()), k.n)
		case ivDay:
			dst = ivAppendInt(dst, t.Day(), k.n)
		case ivHour:
			dst = ivAppendInt(dst, t.Hour(), k.n)
		case ivMinute:
			dst = ivAppendInt(dst, t.Minute(), k.n)
		case ivSecond:
			dst = ivAppendInt(dst, t.Second(), k.n)
		case ivFrac:
			dst = ivAppendInt(dst, t.Nanosecond()/ivPow10[9-k.n], k.n)
		case ivQuarter:
			q, width := (int(t.Month())-1)/3+1, k.n
			if k.n == 3 {
				dst, width = append(dst, 'Q'), 1
			}
			dst = ivAppendInt(dst, q, width)
		}
	}
	return dst
}

var ivPow10 = [...]int{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

var errIvNoMatch = errors.New("does not match")

// parsePrefix reads a time from the start of s and returns it (a civil time
// in UTC, absent fields defaulted as Java's resolver does), the finest field
// read, and the bytes consumed.
func (p *ivPattern) parsePrefix(s string) (time.Time, ivField, int, error) {
	fv, level, n, err := p.readFields(s)
	if err != nil {
		return time.Time{}, 0, 0, err
	}
	t, err := ivResolve(fv)
	if err != nil {
		return time.Time{}, 0, 0, err
	}
	return t, level, n, nil
}

// ivFields holds a parsed value per field (the fraction in nanoseconds).
type ivFields [ivFrac + 1]int

// readFields reads the pattern's fields and literals from the start of s:
// their values (absent fields defaulted to Java's reference year, January,
// the 1st, midnight), the finest field read, and the bytes consumed.
func (p *ivPattern) readFields(s string) (fv ivFields, level ivField, pos int, err error) {
	fv[ivYear], fv[ivMonth], fv[ivDay] = ivRefYear, 1, 1
	for _, k := range p.toks {
		if k.f == ivQuarter {
			return fv, 0, 0, errors.New("a quarter cannot be parsed")
		}
		if k.f == ivNone {
			if !strings.HasPrefix(s[pos:], k.lit) {
				return fv, 0, 0, errIvNoMatch
			}
			pos += len(k.lit)
			continue
		}
		minW, maxW := k.n, k.n
		if k.n == 1 && k.f != ivFrac {
			maxW = 2
		}
		j, v := pos, 0
		for j < len(s) && j-pos < maxW && apIsDigit(s[j]) {
			v = v*10 + int(s[j]-'0')
			j++
		}
		if j-pos < minW {
			return fv, 0, 0, errIvNoMatch
		}
		pos = j
		switch {
		case k.f == ivYear && k.n == 2:
			v += 2000
		case k.f == ivYear && k.era && v < 1:
			return fv, 0, 0, errors.New("year of era 0")
		case k.f == ivFrac:
			v *= ivPow10[9-k.n]
		}
		fv[k.f] = v
		level = max(level, k.f)
	}
	return fv, level, pos, nil
}

// ivResolve is the civil time of the fields, resolved as java.time's SMART
// resolver does: 24:00 is the start of the next day, and a day past the
// month's last (29 to 31) is its last.
func ivResolve(fv ivFields) (time.Time, error) {
	y, mo, d, h, mi, sec, ns := fv[ivYear], fv[ivMonth], fv[ivDay], fv[ivHour], fv[ivMinute], fv[ivSecond], fv[ivFrac]
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 24 || mi > 59 || sec > 59 {
		return time.Time{}, errors.New("field out of range")
	}
	nextDay := false
	if h == 24 {
		if mi != 0 || sec != 0 || ns != 0 {
			return time.Time{}, errors.New("hour 24 with minutes")
		}
		h, nextDay = 0, true
	}
	if dim := ivDaysIn(y, time.Month(mo)); d > dim {
		d = dim
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if nextDay {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

// parse reads the whole of s.
func (p *ivPattern) parse(s string) (time.Time, ivField, error) {
	t, level, n, err := p.parsePrefix(s)
	if err == nil && n != len(s) {
		err = errIvNoMatch
	}
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("%q does not match datetime pattern %q", s, p.src)
	}
	return t, level, nil
}

func ivDaysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// ivCivil is t's wall clock as a civil time in UTC.
func ivCivil(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}

// ivTruncate drops the fields finer than level (a civil time).
func ivTruncate(t time.Time, level ivField, fracDigits int) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	ns := t.Nanosecond()
	switch level {
	case ivYear:
		mo = 1
		fallthrough
	case ivMonth:
		d = 1
		fallthrough
	case ivDay:
		h = 0
		fallthrough
	case ivHour:
		mi = 0
		fallthrough
	case ivMinute:
		s = 0
		fallthrough
	case ivSecond:
		ns = 0
	case ivFrac:
		ns -= ns % ivPow10[9-fracDigits]
	}
	return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
}

// ivLen16 is Java's String.length(): UTF-16 code units.
func ivLen16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// ivPrefix16 is Java's s.substring(0, n); ok is false when n splits a
// surrogate pair.
func ivPrefix16(s string, n int) (string, bool) {
	units := 0
	for i, r := range s {
		if units == n {
			return s[:i], true
		}
		units += utf16.RuneLen(r)
		if units > n {
			return "", false
		}
	}
	return s, units == n
}

// ---- AUTO_INTERVAL ----

type autoIntervalAlgorithm struct {
	lower    int64 // datetime-lower, civil Unix seconds
	seconds  int64
	tables   int64
	shards   *apShards
	ntargets int
}

var ivStandard = func() *ivPattern {
	p, err := ivCompile("yyyy-MM-dd HH:mm:ss")
	if err != nil {
		panic(err)
	}
	return p
}()

func newAutoIntervalAlgorithm(spec algoSpec) (shardFunc, error) {
	r := apRead(spec, "datetime-lower", "datetime-upper", "sharding-seconds")
	lo, okLo := r.required("datetime-lower")
	up, okUp := r.required("datetime-upper")
	seconds := r.int("sharding-seconds", 1, math.MaxInt64, 0, true)
	var lower, upper time.Time
	if okLo {
		var err error
		if lower, _, err = ivStandard.parse(lo); err != nil {
			r.fail("datetime-lower", "not a yyyy-MM-dd HH:mm:ss time")
		}
	}
	if okUp {
		t, _, _, err := ivStandard.parsePrefix(up)
		if err != nil {
			r.fail("datetime-upper", "not a yyyy-MM-dd HH:mm:ss time")
		}
		upper = t
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	if upper.Before(lower) {
		return nil, &propError{key: r.raw["datetime-upper"], value: up, reason: "before datetime-lower " + lo}
	}
	tables := (upper.Unix()-lower.Unix())/seconds + 2
	a := &autoIntervalAlgorithm{lower: lower.Unix(), seconds: seconds, tables: tables, ntargets: len(spec.targets)}
	shards, err := apNumberedTargets(spec, tables, apDecimal, fmt.Sprintf("AUTO_INTERVAL has %d partitions", tables), a.describe)
	if err != nil {
		return nil, err
	}
	a.shards = shards
	return a, nil
}

// describe says which times partitions from..to hold: partition 0 up to
// datetime-lower, partition k (lower + (k-1)*seconds, lower + k*seconds],
// the last everything after its start.
func (a *autoIntervalAlgorithm) describe(from, to int64) string {
	at := func(k int64) string {
		return time.Unix(a.lower+k*a.seconds, 0).UTC().Format("2006-01-02 15:04:05")
	}
	switch {
	case from == 0 && to == a.tables-1:
		return "every time"
	case from == 0:
		return "times up to " + at(to)
	case to == a.tables-1:
		return "times after " + at(from-1)
	}
	return fmt.Sprintf("times after %s up to %s", at(from-1), at(to))
}

// secondsOf is Duration.between(lower, value).toMillis() / 1000.
func (a *autoIntervalAlgorithm) secondsOf(v value) (int64, error) {
	switch v.kind {
	case kindString:
		t, _, _, err := ivStandard.parsePrefix(v.s)
		if err != nil {
			return 0, fmt.Errorf("AUTO_INTERVAL: %q does not start with a yyyy-MM-dd HH:mm:ss time", v.s)
		}
		return t.Unix() - a.lower, nil
	case kindTime:
		// As a java.sql.Timestamp: its wall clock, to the second.
		if y := v.t.Year(); y < 1 || y > 9999 {
			return 0, fmt.Errorf("AUTO_INTERVAL: year %d is outside 1..9999", y)
		}
		_, off := v.t.Zone()
		return v.t.Unix() + int64(off) - a.lower, nil
	}
	return 0, fmt.Errorf("AUTO_INTERVAL needs a time or a yyyy-MM-dd HH:mm:ss string, got %s", apKindName(v.kind))
}

// partition is ShardingSphere's ceil(DecimalFormat("0.00") of s/seconds),
// clamped to the partitions. The two-decimal rounding only matters next to
// a whole number m: the rounded value is m exactly when |q - m| < 0.005, and
// it can never be exactly 0.005 away (0.005 is not a binary fraction), so
// HALF_EVEN ties never reach the ceiling.
func (a *autoIntervalAlgorithm) partition(s int64) int {
	if s <= 0 {
		return 0
	}
	q := float64(s) / float64(a.seconds)
	p := math.Ceil(q)
	if m := math.Round(q); math.Abs(q-m) < 0.005 {
		p = m
	}
	if p >= float64(a.tables-1) {
		return int(a.tables - 1)
	}
	return int(p)
}

func (a *autoIntervalAlgorithm) one(v value) (int, error) {
	s, err := a.secondsOf(v)
	if err != nil {
		return -1, err
	}
	return a.shards.at(int64(a.partition(s))), nil
}

func (a *autoIntervalAlgorithm) within(r span, dst []int) ([]int, error) {
	first, last := 0, int(a.tables-1)
	// A time bound next to a daylight-saving fall-back is widened: the
	// rows just past it may read an earlier (later) wall clock.
	if r.lo.set {
		v := r.lo.v
		if v.kind == kindTime {
			v.t = ivEarliestWall(v.t)
		}
		s, err := a.secondsOf(v)
		if err != nil {
			return dst, err
		}
		first = a.partition(s)
	}
	if r.hi.set {
		v := r.hi.v
		if v.kind == kindTime {
			v.t = ivLatestWall(v.t)
		}
		s, err := a.secondsOf(v)
		if err != nil {
			return dst, err
		}
		last = a.partition(s)
	}
	// Partitions without a target hold no row (an insert there fails with
	// ErrNoRoute): skipping them keeps the range exact.
	return a.shards.appendRange(int64(first), int64(last), dst), nil
}

// ---- INTERVAL ----

// ivUnit is a java.time.temporal.ChronoUnit INTERVAL can step by.
type ivUnit struct {
	name   string        // ChronoUnit.toString()
	dur    time.Duration // fixed-length units
	days   int           // DAYS, WEEKS
	months int           // MONTHS and up
	level  ivField       // the coarsest temporal type that can add it
}

var ivUnits = []ivUnit{
	{name: "Nanos", dur: time.Nanosecond, level: ivHour},
	{name: "Micros", dur: time.Microsecond, level: ivHour},
	{name: "Millis", dur: time.Millisecond, level: ivHour},
	{name: "Seconds", dur: time.Second, level: ivHour},
	{name: "Minutes", dur: time.Minute, level: ivHour},
	{name: "Hours", dur: time.Hour, level: ivHour},
	{name: "HalfDays", dur: 12 * time.Hour, level: ivHour},
	{name: "Days", days: 1, level: ivDay},
	{name: "Weeks", days: 7, level: ivDay},
	{name: "Months", months: 1, level: ivMonth},
	{name: "Years", months: 12, level: ivYear},
	{name: "Decades", months: 120, level: ivYear},
	{name: "Centuries", months: 1200, level: ivYear},
	{name: "Millennia", months: 12000, level: ivYear},
}

func ivParseUnit(s string) (ivUnit, bool) {
	k := strings.ReplaceAll(s, "_", "")
	for _, u := range ivUnits {
		if strings.EqualFold(u.name, k) {
			return u, true
		}
	}
	return ivUnit{}, false
}

// ivKind is the temporal type ShardingSphere's INTERVAL works in, chosen
// by the fields datetime-pattern gives datetime-lower.
type ivKind uint8

const (
	ivKindYear      ivKind = iota // Year
	ivKindYearMonth               // YearMonth
	ivKindDate                    // LocalDate
	ivKindDateTime                // LocalDateTime
	ivKindMonth                   // Month: datetime-pattern MM
	ivKindTime                    // LocalTime: from the hour down, no date
)

var ivKindNames = [...]string{"a year (Year)", "a year and month (YearMonth)", "a date (LocalDate)",
	"a date and time (LocalDateTime)", "a month (Month)", "a time of day (LocalTime)"}

// ivKindOf classifies a datetime-pattern.
func ivKindOf(p *ivPattern) (ivKind, error) {
	switch {
	case p.has[ivQuarter]:
		return 0, errors.New("a quarter (Q) can only be in sharding-suffix-pattern")
	case p.complete() && p.level >= ivHour:
		return ivKindDateTime, nil
	case p.complete():
		return [...]ivKind{ivYear: ivKindYear, ivMonth: ivKindYearMonth, ivDay: ivKindDate}[p.level], nil
	case p.src == "MM":
		return ivKindMonth, nil
	case p.has[ivMonth] && !p.has[ivYear] && !p.has[ivDay] && p.level == ivMonth:
		// ShardingSphere reads a Month as Integer.parseInt of the text cut to
		// the pattern's length: with "M" December's "12" reads as 1.
		return 0, errors.New("a month-only pattern must be exactly MM")
	case p.has[ivHour] && !p.has[ivYear] && !p.has[ivMonth] && !p.has[ivDay]:
		for f := ivHour; f <= p.level; f++ {
			if !p.has[f] {
				return 0, fmt.Errorf("a time of day must give each field from the hour down (no %s)", ivFieldNames[f])
			}
		}
		return ivKindTime, nil
	}
	return 0, errors.New("must give a year, a year and month, a date, or a date and time (each field from the year down), " +
		"a month (MM), or a time of day (each field from the hour down)")
}

// gives reports whether a value of the kind has field f, as formatting it
// with sharding-suffix-pattern needs (java.time throws otherwise).
func (k ivKind) gives(f ivField) bool {
	switch k {
	case ivKindYear:
		return f == ivYear
	case ivKindYearMonth:
		return f == ivYear || f == ivMonth || f == ivQuarter
	case ivKindDate:
		return f <= ivDay || f == ivQuarter
	case ivKindMonth:
		return f == ivMonth || f == ivQuarter
	case ivKindTime:
		return f >= ivHour && f <= ivFrac
	}
	return true
}

// canStep reports whether the kind can add the unit (ShardingSphere's Month
// ignores the unit and adds months).
func (k ivKind) canStep(u ivUnit) bool {
	switch k {
	case ivKindMonth:
		return true
	case ivKindTime:
		return u.dur > 0
	}
	return u.level <= [...]ivField{ivYear, ivMonth, ivDay, ivHour}[k]
}

// dated reports whether the kind is one of the year-based types.
func (k ivKind) dated() bool { return k <= ivKindDateTime }

// ivAdd is temporal.plus(amount, unit) on a civil time.
func ivAdd(t time.Time, amount int64, u ivUnit) time.Time {
	switch {
	case u.dur >= time.Second:
		return time.Unix(t.Unix()+amount*int64(u.dur/time.Second), int64(t.Nanosecond())).UTC()
	case u.dur > 0:
		return t.Add(time.Duration(amount) * u.dur)
	case u.days > 0:
		return t.AddDate(0, 0, int(amount)*u.days)
	}
	y, mo, d := t.Date()
	total := int64(y)*12 + int64(mo-1) + amount*int64(u.months)
	ny, nm := int(total/12), time.Month(total%12+1)
	if ny > 1_000_000 {
		return time.Date(1_000_000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if dim := ivDaysIn(ny, nm); d > dim {
		d = dim
	}
	h, mi, s := t.Clock()
	return time.Date(ny, nm, d, h, mi, s, t.Nanosecond(), time.UTC)
}

// ivMaxIntervals bounds how many intervals INTERVAL enumerates at load.
const ivMaxIntervals = 1 << 20

type intervalAlgorithm struct {
	pat     *ivPattern
	kind    ivKind
	patLen  int          // len in UTF-16 units, as Java's String.length()
	relaxed []*ivPattern // relaxed[n]: the pattern cut to n units (nil: unusable)
	need    ivField      // the finest field a value must give
	lower   time.Time    // datetime-lower (civil)
	upper   time.Time    // datetime-upper (civil)
	starts  []time.Time  // interval starts
	end     time.Time    // end of the last interval
	tgt     []int32      // interval -> target, -1 for none
	era     bool         // the pattern's year is 'y' (no year 0)
	reduced bool         // the pattern's year is 'yy' (2000-2099)
	frac    int          // the pattern's fraction digits
}

// ivProps are INTERVAL's props, read and checked.
type ivProps struct {
	pat, suf     *ivPattern
	kind         ivKind
	lower, upper time.Time
	amount       int64
	unit         ivUnit
}

func ivReadProps(spec algoSpec) (ivProps, error) {
	r := apRead(spec, "datetime-pattern", "datetime-lower", "datetime-upper", "sharding-suffix-pattern",
		"datetime-interval-amount", "datetime-interval-unit")
	patSrc, okPat := r.required("datetime-pattern")
	loSrc, okLo := r.required("datetime-lower")
	sufSrc, okSuf := r.required("sharding-suffix-pattern")
	p := ivProps{amount: r.int("datetime-interval-amount", 1, math.MaxInt32, 1, false), unit: ivUnits[7]} // Days
	if s, ok := r.str("datetime-interval-unit"); ok {
		if p.unit, ok = ivParseUnit(s); !ok {
			r.fail("datetime-interval-unit", "not a ChronoUnit (Millis, Seconds, Minutes, Hours, HalfDays, Days, Weeks, Months, Years, Decades, Centuries, Millennia ...)")
		}
	}
	if okPat {
		var err error
		if p.pat, err = ivCompile(patSrc); err == nil {
			p.kind, err = ivKindOf(p.pat)
		}
		if err != nil {
			r.fail("datetime-pattern", err.Error())
			p.pat = nil
		}
	}
	if okSuf {
		var err error
		if p.suf, err = ivCompile(sufSrc); err != nil {
			r.fail("sharding-suffix-pattern", err.Error())
		}
	}
	if p.pat != nil {
		if okLo {
			var err error
			if p.lower, err = p.parseBound(loSrc); err != nil {
				r.fail("datetime-lower", fmt.Sprintf("does not match datetime-pattern %q", patSrc))
			}
		}
		if s, ok := r.str("datetime-upper"); ok {
			var err error
			if p.upper, err = p.parseBound(s); err != nil {
				r.fail("datetime-upper", fmt.Sprintf("does not match datetime-pattern %q", patSrc))
			}
		} else {
			p.upper = p.defaultUpper(spec.clockNow())
		}
		p.checkKind(r)
	}
	if err := r.err(); err != nil {
		return p, err
	}
	if p.lower.After(p.upper) {
		if raw, given := r.raw["datetime-upper"]; given {
			return p, &propError{key: raw, value: r.vals["datetime-upper"], reason: "before datetime-lower " + loSrc}
		}
		return p, &propError{key: r.raw["datetime-lower"], value: loSrc,
			reason: "after now (" + p.upper.Format("2006-01-02 15:04:05") + "), the default datetime-upper"}
	}
	return p, nil
}

// checkKind refuses a suffix field or a unit the temporal type does not
// have (java.time throws while routing).
func (p *ivProps) checkKind(r *apReader) {
	if p.suf != nil {
		for _, k := range p.suf.toks {
			if k.f != ivNone && !p.kind.gives(k.f) {
				r.fail("sharding-suffix-pattern", fmt.Sprintf("needs the %s, which datetime-pattern %q (%s) does not give",
					ivFieldNames[k.f], p.pat.src, ivKindNames[p.kind]))
				break
			}
		}
	}
	if !p.kind.canStep(p.unit) {
		if _, given := r.str("datetime-interval-unit"); given {
			r.fail("datetime-interval-unit", fmt.Sprintf("%s cannot step by %s", ivKindNames[p.kind], p.unit.name))
		} else {
			r.fail("datetime-interval-unit", fmt.Sprintf("required: %s cannot step by the default Days", ivKindNames[p.kind]))
		}
	}
}

// parseBound reads datetime-lower or datetime-upper.
func (p *ivProps) parseBound(s string) (time.Time, error) {
	t, _, err := p.pat.parse(s)
	if p.kind == ivKindTime {
		t = ivOnRefDay(t)
	}
	return t, err
}

// defaultUpper is LocalDateTime.now() in the JVM's zone (now, the rules'
// clock, in time.Local), as the kind holds it.
func (p *ivProps) defaultUpper(now time.Time) time.Time {
	now = ivCivil(now.In(time.Local))
	switch {
	case p.kind == ivKindMonth:
		return time.Date(ivRefYear, now.Month(), 1, 0, 0, 0, 0, time.UTC)
	case p.kind == ivKindTime:
		return ivOnRefDay(now)
	case p.pat.level < ivHour:
		return ivTruncate(now, p.pat.level, 0)
	}
	return now
}

// ivOnRefDay keeps the clock of t on the reference day, as a LocalTime
// holds it (24:00 parses as the next day's 00:00; a LocalTime is 00:00).
func ivOnRefDay(t time.Time) time.Time {
	h, m, s := t.Clock()
	return time.Date(ivRefYear, 1, 1, h, m, s, t.Nanosecond(), time.UTC)
}

func newIntervalAlgorithm(spec algoSpec) (shardFunc, error) {
	p, err := ivReadProps(spec)
	if err != nil {
		return nil, err
	}
	a := &intervalAlgorithm{pat: p.pat, kind: p.kind, patLen: ivLen16(p.pat.src), lower: p.lower, upper: p.upper, need: min(p.pat.level, ivHour)}
	for _, k := range p.pat.toks {
		switch k.f {
		case ivYear:
			a.era, a.reduced = k.era, k.n == 2
		case ivFrac:
			a.frac = k.n
		}
	}
	a.relaxed = make([]*ivPattern, a.patLen)
	for n := 1; n < a.patLen; n++ {
		if cut, ok := ivPrefix16(p.pat.src, n); ok {
			if rp, err := ivCompile(cut); err == nil {
				a.relaxed[n] = rp
			}
		}
	}
	if err := a.enumerate(p.amount, p.unit); err != nil {
		return nil, err
	}
	if err := a.matchTargets(spec, p.suf); err != nil {
		return nil, err
	}
	return a, nil
}

// enumerate lists the intervals as ShardingSphere walks them: from
// datetime-lower, each start stepped from the previous, while the start is
// not after datetime-upper. A Month also stops before a step would pass
// December (ShardingSphere's MonthTemporalParser.isAfter), so December
// itself is never in an interval; a LocalTime interval may not reach
// midnight (ShardingSphere's Range.closedOpen throws on every route).
func (a *intervalAlgorithm) enumerate(amount int64, unit ivUnit) error {
	if a.kind == ivKindMonth {
		unit = ivUnit{name: "Months", months: 1, level: ivMonth}
	}
	for t := a.lower; !t.After(a.upper); t = ivAdd(t, amount, unit) {
		if a.kind == ivKindMonth && int64(t.Month())+amount > 12 {
			break
		}
		if next := ivAdd(t, amount, unit); a.kind == ivKindTime && next.Day() != t.Day() {
			return fmt.Errorf("INTERVAL: the interval from %s would end at or past midnight, which a time of day cannot hold "+
				"(ShardingSphere fails every statement); lower datetime-upper or change the step", a.show(t))
		}
		if len(a.starts) == ivMaxIntervals {
			return fmt.Errorf("INTERVAL: more than %d intervals of %d %s between datetime-lower and datetime-upper; use a larger datetime-interval-amount or unit",
				ivMaxIntervals, amount, unit.name)
		}
		a.starts = append(a.starts, t)
	}
	if len(a.starts) == 0 {
		return fmt.Errorf("INTERVAL: no interval: a month-only step of %d from %s passes December", amount, a.show(a.lower))
	}
	a.end = ivAdd(a.starts[len(a.starts)-1], amount, unit)
	return nil
}

// matchTargets finds each interval's target: the one whose name ends in the
// interval's start formatted with sharding-suffix-pattern.
func (a *intervalAlgorithm) matchTargets(spec algoSpec, suf *ivPattern) error {
	// tails[len] maps a target's last len bytes to the targets ending so.
	tails := map[int]map[string][]int{}
	a.tgt = make([]int32, len(a.starts))
	var buf []byte
	for k, s := range a.starts {
		buf = suf.format(buf[:0], s)
		m, ok := tails[len(buf)]
		if !ok {
			m = map[string][]int{}
			for i, t := range spec.targets {
				if len(t) >= len(buf) {
					m[t[len(t)-len(buf):]] = append(m[t[len(t)-len(buf):]], i)
				}
			}
			tails[len(buf)] = m
		}
		switch hits := m[string(buf)]; len(hits) {
		case 0:
			// ShardingSphere loads this and routes a value of the interval
			// nowhere: so does shardkey (ErrNoRoute at the statement).
			a.tgt[k] = -1
		case 1:
			a.tgt[k] = int32(hits[0])
		default:
			names := make([]string, len(hits))
			for i, h := range hits {
				names[i] = spec.targets[h]
			}
			return fmt.Errorf("INTERVAL: the interval starting %s has suffix %q, which several targets end in (%s)",
				a.show(s), buf, strings.Join(names, ", "))
		}
	}
	return a.reportGaps(spec, suf)
}

// reportGaps reports each run of intervals without a target; a rule where
// no interval has one is an error (every statement would fail).
func (a *intervalAlgorithm) reportGaps(spec algoSpec, suf *ivPattern) error {
	served := 0
	var buf []byte
	for k := 0; k < len(a.tgt); k++ {
		if a.tgt[k] >= 0 {
			served++
			continue
		}
		j := k
		for j+1 < len(a.tgt) && a.tgt[j+1] < 0 {
			j++
		}
		end := a.end
		if j+1 < len(a.starts) {
			end = a.starts[j+1]
		}
		first := string(suf.format(buf[:0], a.starts[k]))
		if j == k {
			spec.noTarget(fmt.Sprintf("interval [%s, %s) (suffix %s)", a.show(a.starts[k]), a.show(end), first))
		} else {
			last := string(suf.format(buf[:0], a.starts[j]))
			spec.noTarget(fmt.Sprintf("intervals [%s, %s) (%d intervals, suffixes %s to %s)", a.show(a.starts[k]), a.show(end), j-k+1, first, last))
		}
		k = j
	}
	if served == 0 {
		return fmt.Errorf("INTERVAL: no target ends in the suffix of any interval (the first is %q; targets: %s)",
			suf.format(nil, a.starts[0]), apList(spec.targets))
	}
	return nil
}

// show renders a civil time of the algorithm's type for messages.
func (a *intervalAlgorithm) show(t time.Time) string {
	switch a.kind {
	case ivKindMonth:
		return "month " + t.Format("01")
	case ivKindTime:
		return t.Format("15:04:05.999999999")
	}
	return t.Format("2006-01-02 15:04:05.999999999")
}

// civilOf reads v as ShardingSphere does: a time is formatted with the
// pattern, anything else is its string form, and the text is parsed with the
// pattern (cut to the text's length when shorter). cut reports that
// precision was lost (the time had finer fields, the text was longer).
func (a *intervalAlgorithm) civilOf(v value) (t time.Time, cut bool, err error) {
	var text string
	switch v.kind {
	case kindTime:
		return a.fromTime(ivCivil(v.t))
	case kindString:
		text = v.s
	case kindInt, kindBig:
		text = v.String()
	default:
		return time.Time{}, false, fmt.Errorf("INTERVAL needs a time or a string in datetime-pattern %q, got %s", a.pat.src, apKindName(v.kind))
	}
	if a.kind == ivKindMonth {
		return a.monthOf(text)
	}
	n := ivLen16(text)
	p := a.pat
	if n >= a.patLen {
		cutText, ok := ivPrefix16(text, a.patLen)
		if !ok {
			return time.Time{}, false, fmt.Errorf("INTERVAL: %q does not match datetime pattern %q", text, p.src)
		}
		cut, text = n > a.patLen, cutText
	} else if p = a.relaxed[n]; p == nil {
		return time.Time{}, false, fmt.Errorf("INTERVAL: %q is too short for datetime pattern %q", text, a.pat.src)
	}
	t, level, err := p.parse(text)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("INTERVAL: %w", err)
	}
	if level < a.need {
		return time.Time{}, false, fmt.Errorf("INTERVAL: %q gives no %s, which datetime pattern %q needs", text, ivFieldNames[a.need], a.pat.src)
	}
	if a.kind.dated() && !p.has[ivYear] {
		return time.Time{}, false, fmt.Errorf("INTERVAL: %q gives no year, which datetime pattern %q needs", text, a.pat.src)
	}
	if a.kind == ivKindTime {
		t = ivOnRefDay(t)
	}
	return t, cut, nil
}

// fromTime reads a time value (its wall clock c) as Java does: it formats
// the time with the pattern and parses the text back, so fields below the
// pattern's finest are dropped, a yy year comes back as 20yy, a Month keeps
// the month and a LocalTime the clock. cut reports lost precision.
func (a *intervalAlgorithm) fromTime(c time.Time) (t time.Time, cut bool, err error) {
	switch a.kind {
	case ivKindMonth:
		t = time.Date(ivRefYear, c.Month(), 1, 0, 0, 0, 0, time.UTC)
		return t, !c.Equal(time.Date(c.Year(), c.Month(), 1, 0, 0, 0, 0, time.UTC)), nil
	case ivKindTime:
		day := ivOnRefDay(c)
		t = ivTruncate(day, a.pat.level, a.frac)
		return t, !t.Equal(day), nil
	}
	y := c.Year()
	if y < 0 || y > 9999 || y == 0 && a.era {
		return time.Time{}, false, fmt.Errorf("INTERVAL: year %d is outside the datetime pattern's range", y)
	}
	t = c
	if a.reduced {
		t = time.Date(2000+y%100, c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), time.UTC)
	}
	t = ivTruncate(t, a.pat.level, a.frac)
	return t, !t.Equal(c), nil
}

// monthOf reads a month as ShardingSphere's MonthTemporalParser does:
// Integer.parseInt of the text cut to the pattern's two characters (or of
// the whole text when shorter), which must be 1..12.
func (a *intervalAlgorithm) monthOf(text string) (time.Time, bool, error) {
	s, cut := text, false
	if ivLen16(text) > a.patLen {
		s, _ = ivPrefix16(text, a.patLen)
		cut = true
	}
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	m, err := strconv.Atoi(digits)
	if err != nil || digits == "" || digits[0] < '0' || digits[0] > '9' || strings.HasPrefix(s, "-") && m != 0 || m < 1 || m > 12 {
		return time.Time{}, false, fmt.Errorf("INTERVAL: %q is not a month 1..12 (datetime pattern %q)", text, a.pat.src)
	}
	return time.Date(ivRefYear, time.Month(m), 1, 0, 0, 0, 0, time.UTC), cut, nil
}

// bounds reads a range as civil times: every value in it reads at or after
// lo, and before hi (at hi too when hiIn).
//
// An open side reaches past the bounds: ShardingSphere puts datetime-upper
// there, and throws for a lower endpoint above it; but the last interval
// runs past datetime-upper (to a.end) and holds rows (a value there routes
// to it), so "t >= x" with x past datetime-upper must still reach it.
//
// The truncated lower bound always counts as inclusive: a stored value
// above the bound truncates to it or later, and one finer than the pattern
// (a timestamp under yyyyMM above 2020-02-01 00:00:00) truncates to it
// exactly, even when the bound itself lost no precision. A time bound is
// widened by a daylight-saving fall-back next to it (ivEarliestWall).
func (a *intervalAlgorithm) bounds(r span) (lo, hi time.Time, hiIn bool, err error) {
	lo, hi = a.lower, a.end
	if r.lo.set {
		v := r.lo.v
		if v.kind == kindTime && a.kind.dated() {
			v.t = ivEarliestWall(v.t)
		}
		if lo, _, err = a.civilOf(v); err != nil {
			return lo, hi, false, err
		}
	}
	if r.hi.set {
		v, cut := r.hi.v, false
		if v.kind == kindTime && a.kind.dated() {
			v.t = ivLatestWall(v.t)
		}
		if hi, cut, err = a.civilOf(v); err != nil {
			return lo, hi, false, err
		}
		hiIn = r.hi.inclusive || cut || !v.t.Equal(r.hi.v.t)
	}
	return lo, hi, hiIn, nil
}

// ivDSTWindow is longer than any daylight-saving shift (30 minutes to two
// hours).
const ivDSTWindow = 3 * time.Hour

// ivEarliestWall returns t, or an earlier instant whose wall clock is no
// later than any that the instants just after t read in t's zone: after a
// daylight-saving fall-back the clock reads up to the shift earlier than
// at t (01:50 EDT, then 01:05 EST), so rows just after a lower bound can
// carry a wall clock before the bound's, and their interval must be read.
func ivEarliestWall(t time.Time) time.Time {
	_, off := t.Zone()
	if _, later := t.Add(ivDSTWindow).Zone(); later < off {
		return t.Add(time.Duration(later-off) * time.Second)
	}
	return t
}

// ivLatestWall is ivEarliestWall for an upper bound: before a fall-back
// just before t the clock read up to the shift later than at t.
func ivLatestWall(t time.Time) time.Time {
	_, off := t.Zone()
	if _, earlier := t.Add(-ivDSTWindow).Zone(); earlier > off {
		return t.Add(time.Duration(earlier-off) * time.Second)
	}
	return t
}

// spansCycle reports whether a range on a month-only or time-of-day rule
// may hold values of several years (days): a bound is a time, which
// carries a date, and the bounds are not both in one year (on one day, at
// one UTC offset). Such a range reaches every interval: "k BETWEEN
// 2021-11-20 AND 2022-02-01" holds January, and "k >= 2021-03-01" every
// month, which the months between the bounds would miss (ShardingSphere
// throws on the first and misses rows on the second).
func (a *intervalAlgorithm) spansCycle(r span) bool {
	if a.kind != ivKindMonth && a.kind != ivKindTime {
		return false
	}
	loT, hiT := r.lo.set && r.lo.v.kind == kindTime, r.hi.set && r.hi.v.kind == kindTime
	switch {
	case !loT && !hiT:
		return false // month numbers or clock texts: the values themselves
	case !loT || !hiT:
		return true
	}
	l, h := r.lo.v.t, r.hi.v.t
	_, lo := l.Zone()
	_, ho := h.Zone()
	if lo != ho || l.Year() != h.Year() {
		return true
	}
	return a.kind == ivKindTime && l.YearDay() != h.YearDay()
}

// interval is the index of the last interval starting at or before t, -1
// when t precedes them all.
func (a *intervalAlgorithm) interval(t time.Time) int {
	lo, hi := 0, len(a.starts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !a.starts[m].After(t) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

func (a *intervalAlgorithm) one(v value) (int, error) {
	t, _, err := a.civilOf(v)
	if err != nil {
		return -1, err
	}
	k := a.interval(t)
	if k < 0 || !t.Before(a.end) {
		return -1, nil
	}
	return int(a.tgt[k]), nil
}

func (a *intervalAlgorithm) within(r span, dst []int) ([]int, error) {
	if a.spansCycle(r) {
		for _, j := range a.tgt {
			if j >= 0 {
				dst = append(dst, int(j))
			}
		}
		return dst, nil
	}
	lo, hi, hiIn, err := a.bounds(r)
	if err != nil || lo.After(hi) || lo.Equal(hi) && !hiIn {
		return dst, err
	}
	k := max(a.interval(lo), 0)
	for ; k < len(a.starts); k++ {
		s, e := a.starts[k], a.end
		if k+1 < len(a.starts) {
			e = a.starts[k+1]
		}
		if s.After(hi) || s.Equal(hi) && !hiIn {
			break
		}
		// [s, e) meets the query unless it ends at or before lo.
		if !e.After(lo) {
			continue
		}
		if a.tgt[k] >= 0 {
			dst = append(dst, int(a.tgt[k]))
		}
	}
	return dst, nil
}
