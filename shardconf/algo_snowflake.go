package shardconf

// SNOWFLAKE_BITS and SNOWFLAKE_INTERVAL: shardkey's own algorithms, which
// shard a table by a field of its Snowflake-family key (ShardingSphere has
// no equivalent; the closest is a CLASS_BASED algorithm). Both need the
// table's key generator layout (algoSpec.keyLayout, from keygen.LayoutFor),
// because the field positions depend on it. Field positions follow
// keygen/layout.go: sign | time | datacenter | backup | worker | clock-back
// | sequence, most significant first; SNOWFLAKE_JS's backup flag is not part
// of "worker".
//
// SNOWFLAKE_BITS props:
//   - field: time, datacenter, worker or sequence (default sequence);
//   - bits: use the low N bits of that field (default: all of its bits);
//   - sharding-count: default the number of targets.
//
// shard = (field's low bits) % sharding-count, and shard i is the target
// whose name ends in i, matched as MOD matches (see algo_mod.go). Sharding
// on the sequence or worker spreads rows evenly with no lookup; sharding on
// time buckets (time >> k) is the one field a key range narrows, because
// the time bits are the key's top bits: a key range is a time range. Other
// fields' ranges go to every target.
//
// SNOWFLAKE_INTERVAL props:
//   - sharding-suffix-pattern (required): a Java date pattern with fixed
//     widths naming the year and optionally month and day: yyyyMMdd,
//     yyyy_MM, yyyy ...;
//   - datetime-interval-unit: DAYS, MONTHS or YEARS (default: the
//     pattern's finest field);
//   - time-zone: an IANA zone, Local, UTC or an offset such as +08:00
//     (default UTC); the zone whose calendar days the suffix follows.
//
// The key's time (Epoch + time field × Unit) is floored to the interval,
// formatted with the pattern, and routed to the target whose name ends so;
// a key whose interval has no target routes nowhere (-1). shardkey reads
// every target's tail with the pattern once at load, so routing is a map
// lookup without formatting. Key ranges map to time ranges (key order is
// time order), so they route to the targets whose intervals they overlap;
// an unbounded side reaches every target on that side. A range with a text
// bound reaches every target of either algorithm (textBoundsScatter).

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

func init() {
	registerStandard("SNOWFLAKE_BITS", newSnowflakeBitsAlgorithm)
	registerStandard("SNOWFLAKE_INTERVAL", newSnowflakeIntervalAlgorithm)
}

// sfLayout checks that the table has a Snowflake-family key layout.
func sfLayout(spec algoSpec) (keygen.Layout, error) {
	if spec.keyLayout == nil {
		return keygen.Layout{}, fmt.Errorf("%s needs the table's keyGenerateStrategy to name a Snowflake-family key generator (SNOWFLAKE, SNOWFLAKE_JS or UID)", spec.typ)
	}
	l := *spec.keyLayout
	if err := l.Validate(); err != nil {
		return keygen.Layout{}, fmt.Errorf("%s: %w", spec.typ, err)
	}
	return l, nil
}

// sfMaxID is the largest key the layout holds.
func sfMaxID(l keygen.Layout) int64 {
	if l.Bits() >= 63 {
		return math.MaxInt64
	}
	return int64(1)<<l.Bits() - 1
}

// sfTimeShift is the position of the time field's lowest bit.
func sfTimeShift(l keygen.Layout) int {
	return l.SequenceBits + l.ClockBackBits + l.WorkerBits + l.BackupBits + l.DatacenterBits
}

// sfKey reads a sharding value as a key of the layout: an integer, or a
// decimal string as the number it spells (integerView). Anything else,
// and a number outside 0..maxID, is refused: no key has that value.
func sfKey(typ string, v value, maxID int64) (int64, error) {
	c, id, _, ok := integerView(v)
	switch {
	case !ok && v.kind == kindString:
		return 0, fmt.Errorf("%s: %q is not a key", typ, v.s)
	case !ok && v.kind == kindFloat:
		return 0, errFraction(typ, v)
	case !ok:
		return 0, fmt.Errorf("%s needs a key (an integer), got %s", typ, apKindName(v.kind))
	case c != 0 || id < 0 || id > maxID:
		return 0, fmt.Errorf("%s: %s is not a key of the layout (0..%d)", typ, v, maxID)
	}
	return id, nil
}

// sfKeyRange turns a span of keys into [lo, hi] within [0, maxID]. all is
// true when a side is unbounded; empty when no key fits.
func sfKeyRange(typ string, r span, maxID int64) (lo, hi int64, all, empty bool, err error) {
	lo, hi = 0, maxID
	all = !r.lo.set || !r.hi.set
	r.lo, r.hi = integralBound(r.lo, true), integralBound(r.hi, false)
	if r.lo.set {
		k, side, err := sfBoundKey(typ, r.lo.v)
		switch {
		case err != nil:
			return 0, 0, false, false, err
		case side > 0: // above every key
			return 0, 0, false, true, nil
		case side < 0:
			k = 0
		case !r.lo.inclusive:
			if k == math.MaxInt64 {
				return 0, 0, false, true, nil
			}
			k++
		}
		if k > maxID {
			return 0, 0, false, true, nil
		}
		lo = max(k, 0)
	}
	if r.hi.set {
		k, side, err := sfBoundKey(typ, r.hi.v)
		switch {
		case err != nil:
			return 0, 0, false, false, err
		case side > 0: // above every key
			k = maxID
		case side < 0:
			return 0, 0, false, true, nil
		case !r.hi.inclusive:
			if k == math.MinInt64 {
				return 0, 0, false, true, nil
			}
			k--
		}
		if k < 0 {
			return 0, 0, false, true, nil
		}
		hi = min(k, maxID)
	}
	if textBoundsScatter(r) {
		// A text column compares as text: every key may match.
		return 0, maxID, true, false, nil
	}
	return lo, hi, all, lo > hi, nil
}

// sfBoundKey reads a range bound as a number (integerView); side is 1
// above int64 and -1 below it.
func sfBoundKey(typ string, v value) (k int64, side int, err error) {
	c, n, _, ok := integerView(v)
	switch {
	case !ok && v.kind == kindString:
		return 0, 0, fmt.Errorf("%s: %q is not a key", typ, v.s)
	case !ok:
		return 0, 0, fmt.Errorf("%s needs a key (an integer), got %s", typ, apKindName(v.kind))
	case c > 0:
		return 0, 1, nil
	case c < 0:
		return 0, -1, nil
	}
	return n, 0, nil
}

// ---- SNOWFLAKE_BITS ----

type snowflakeBitsAlgorithm struct {
	shift    uint
	mask     int64
	count    int64
	maxID    int64
	isTime   bool
	shards   *apShards
	idx      []int32 // shards.dense, for fast.go (-1: no target)
	ntargets int
	div      divisor // count, for the int fast path (fast.go)
}

func newSnowflakeBitsAlgorithm(spec algoSpec) (shardFunc, error) {
	r := apRead(spec, "field", "bits", "sharding-count")
	field := "sequence"
	if s, ok := r.str("field"); ok {
		field = strings.ToLower(s)
	}
	layout, lerr := sfLayout(spec)
	if lerr != nil {
		// Report prop errors too, then the layout.
		if err := r.err(); err != nil {
			return nil, fmt.Errorf("%w; %w", err, lerr)
		}
		return nil, lerr
	}
	seqShift := 0
	cbShift := seqShift + layout.SequenceBits
	wShift := cbShift + layout.ClockBackBits
	dcShift := wShift + layout.WorkerBits + layout.BackupBits
	tShift := dcShift + layout.DatacenterBits
	var shift, width int
	switch field {
	case "sequence":
		shift, width = seqShift, layout.SequenceBits
	case "worker":
		shift, width = wShift, layout.WorkerBits
	case "datacenter":
		shift, width = dcShift, layout.DatacenterBits
	case "time":
		shift, width = tShift, layout.TimeBits
	default:
		r.fail("field", "not one of time, datacenter, worker, sequence")
	}
	if width == 0 && r.err() == nil {
		r.fail("field", fmt.Sprintf("the key layout %s has no %s bits", layout, field))
	}
	bits := int64(width)
	if width > 0 {
		bits = r.int("bits", 1, int64(width), int64(width), false)
	}
	count := r.int("sharding-count", 1, math.MaxInt32, int64(len(spec.targets)), false)
	if err := r.err(); err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, fmt.Errorf("SNOWFLAKE_BITS: no targets")
	}
	if bits < 31 && count > int64(1)<<bits {
		return nil, &propError{key: "sharding-count", value: strconv.FormatInt(count, 10),
			reason: fmt.Sprintf("more shards than the %d values of %d %s bits", int64(1)<<bits, bits, field)}
	}
	shards, err := apNumberedTargets(spec, count, apDecimal, fmt.Sprintf("sharding-count %d", count), nil)
	if err != nil {
		return nil, err
	}
	a := &snowflakeBitsAlgorithm{div: newDivisor(uint64(count)), shift: uint(shift), mask: int64(1)<<bits - 1, count: count, maxID: sfMaxID(layout),
		isTime: field == "time", shards: shards, idx: shards.dense, ntargets: len(spec.targets)}
	return apMaybeHide(a, shards), nil
}

func (a *snowflakeBitsAlgorithm) one(v value) (int, error) {
	id, err := sfKey("SNOWFLAKE_BITS", v, a.maxID)
	if err != nil {
		return -1, err
	}
	return a.shards.at((id >> a.shift & a.mask) % a.count), nil
}

func (a *snowflakeBitsAlgorithm) within(r span, dst []int) ([]int, error) {
	lo, hi, all, empty, err := sfKeyRange("SNOWFLAKE_BITS", r, a.maxID)
	switch {
	case err != nil:
		return dst, err
	case empty:
		return dst, nil
	case all || !a.isTime:
		return apAll(a.ntargets, dst), nil
	}
	tLo, tHi := lo>>a.shift, hi>>a.shift
	if tHi-tLo >= a.mask {
		return a.run(0, a.mask, dst), nil
	}
	xLo, xHi := tLo&a.mask, tHi&a.mask
	if xLo <= xHi {
		return a.run(xLo, xHi, dst), nil
	}
	dst = a.run(xLo, a.mask, dst)
	return a.run(0, xHi, dst), nil
}

// run appends the targets of field values x in [from, to].
func (a *snowflakeBitsAlgorithm) run(from, to int64, dst []int) []int {
	if to-from+1 >= a.count {
		return a.shards.appendRange(0, a.count-1, dst)
	}
	rf := from % a.count
	rt := rf + (to - from)
	if rt < a.count {
		return a.shards.appendRange(rf, rt, dst)
	}
	dst = a.shards.appendRange(rf, a.count-1, dst)
	return a.shards.appendRange(0, rt-a.count, dst)
}

// ---- SNOWFLAKE_INTERVAL ----

type snowflakeIntervalAlgorithm struct {
	epochMs, unitMs int64
	timeShift       uint
	maxID           int64
	loc             *time.Location
	level           ivField         // floor keys' times to this field
	byStart         map[int64]int32 // interval start (civil Unix seconds) -> target
	starts          []int64         // sorted interval starts that have a target
	startTgt        []int32         // their targets
	ntargets        int
}

// sfParseZone reads a time zone: an IANA name, Local, UTC, Z or an offset
// (+08:00, -0530).
func sfParseZone(s string) (*time.Location, error) {
	switch {
	case strings.EqualFold(s, "UTC") || s == "Z":
		return time.UTC, nil
	case strings.EqualFold(s, "Local"):
		return time.Local, nil
	case strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-"):
		for _, layout := range []string{"-07:00", "-0700", "-07"} {
			if t, err := time.Parse(layout, s); err == nil {
				_, off := t.Zone()
				return time.FixedZone(s, off), nil
			}
		}
		return nil, fmt.Errorf("not an offset such as +08:00")
	}
	return time.LoadLocation(s)
}

func newSnowflakeIntervalAlgorithm(spec algoSpec) (shardFunc, error) {
	r := apRead(spec, "sharding-suffix-pattern", "datetime-interval-unit", "time-zone")
	src, pat, unitLevel, loc := sfIntervalProps(r)
	layout, lerr := sfLayout(spec)
	if err := r.err(); err != nil {
		if lerr != nil {
			return nil, fmt.Errorf("%w; %w", err, lerr)
		}
		return nil, err
	}
	if lerr != nil {
		return nil, lerr
	}
	level := pat.level
	if unitLevel != ivNone {
		level = min(level, unitLevel)
	}
	a := &snowflakeIntervalAlgorithm{epochMs: layout.Epoch.UnixMilli(), unitMs: int64(layout.Unit / time.Millisecond),
		timeShift: uint(sfTimeShift(layout)), maxID: sfMaxID(layout), loc: loc, level: level,
		byStart: map[int64]int32{}, ntargets: len(spec.targets)}
	if err := a.indexTargets(pat, spec.targets); err != nil {
		return nil, err
	}
	if len(a.starts) == 0 {
		return nil, fmt.Errorf("SNOWFLAKE_INTERVAL: no target ends in a %q suffix (e.g. %s; targets: %s)",
			src, pat.format(nil, ivTruncate(ivCivil(spec.clockNow().In(loc)), level, 0)), apList(spec.targets))
	}
	return a, nil
}

// sfIntervalProps reads SNOWFLAKE_INTERVAL's props: the suffix pattern
// (its source and compiled form), the interval unit's field (ivNone when
// not set) and the time zone (UTC when not set). A bad prop is an error
// of r.
func sfIntervalProps(r *apReader) (src string, pat *ivPattern, unitLevel ivField, loc *time.Location) {
	src, okSrc := r.required("sharding-suffix-pattern")
	if okSrc {
		p, err := ivCompile(src)
		switch {
		case err != nil:
			r.fail("sharding-suffix-pattern", err.Error())
		case !p.complete() || p.level > ivDay || p.has[ivQuarter]:
			r.fail("sharding-suffix-pattern", "must name the year, and optionally the month and then the day (yyyy, yyyyMM, yyyyMMdd)")
		case !p.fixed:
			r.fail("sharding-suffix-pattern", "every field must have a fixed width (MM, dd, not M, d)")
		default:
			pat = p
		}
	}
	if s, ok := r.str("datetime-interval-unit"); ok {
		switch strings.ToUpper(strings.ReplaceAll(s, "_", "")) {
		case "DAYS":
			unitLevel = ivDay
		case "MONTHS":
			unitLevel = ivMonth
		case "YEARS":
			unitLevel = ivYear
		default:
			r.fail("datetime-interval-unit", "not DAYS, MONTHS or YEARS")
		}
	}
	loc = time.UTC
	if s, ok := r.str("time-zone"); ok {
		l, err := sfParseZone(s)
		if err != nil {
			r.fail("time-zone", "not a time zone: "+err.Error())
		} else {
			loc = l
		}
	}
	return src, pat, unitLevel, loc
}

// indexTargets finds the targets named after an interval (their names end
// in the pattern's suffix of its start) and records them in byStart,
// starts and startTgt, by start.
func (a *snowflakeIntervalAlgorithm) indexTargets(pat *ivPattern, targets []string) error {
	tailLen := len(pat.format(nil, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)))
	owner := map[int64]string{}
	for i, t := range targets {
		if len(t) < tailLen {
			continue
		}
		c, _, err := pat.parse(t[len(t)-tailLen:])
		if err != nil || !ivTruncate(c, a.level, 0).Equal(c) {
			continue // not named after an interval this algorithm routes to
		}
		k := c.Unix()
		if prev, dup := owner[k]; dup {
			return fmt.Errorf("SNOWFLAKE_INTERVAL: targets %s and %s both end in the suffix of %s", prev, t, c.Format("2006-01-02"))
		}
		owner[k] = t
		a.byStart[k] = int32(i)
		a.starts = append(a.starts, k)
	}
	sort.Slice(a.starts, func(i, j int) bool { return a.starts[i] < a.starts[j] })
	a.startTgt = make([]int32, len(a.starts))
	for i, k := range a.starts {
		a.startTgt[i] = a.byStart[k]
	}
	return nil
}

// intervalOf is the start (civil Unix seconds) of the interval holding the
// time of key id; ok is false for a time past year 9999.
func (a *snowflakeIntervalAlgorithm) intervalOf(id int64) (start int64, ok bool) {
	ts := id >> a.timeShift
	if ts > (sfMaxMilli-a.epochMs)/a.unitMs {
		return 0, false
	}
	t := time.UnixMilli(a.epochMs + ts*a.unitMs).In(a.loc)
	y, mo, d := t.Date()
	switch a.level {
	case ivYear:
		mo, d = 1, 1
	case ivMonth:
		d = 1
	}
	return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Unix(), true
}

// sfMaxMilli is 9999-12-31 in Unix milliseconds, the last time keys decode
// to (as keygen's Decompose).
var sfMaxMilli = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).UnixMilli()

func (a *snowflakeIntervalAlgorithm) one(v value) (int, error) {
	id, err := sfKey("SNOWFLAKE_INTERVAL", v, a.maxID)
	if err != nil {
		return -1, err
	}
	k, ok := a.intervalOf(id)
	if !ok {
		return -1, fmt.Errorf("SNOWFLAKE_INTERVAL: key %d has a time beyond year 9999", id)
	}
	j, ok := a.byStart[k]
	if !ok {
		return -1, nil
	}
	return int(j), nil
}

func (a *snowflakeIntervalAlgorithm) within(r span, dst []int) ([]int, error) {
	lo, hi, _, empty, err := sfKeyRange("SNOWFLAKE_INTERVAL", r, a.maxID)
	if err != nil || empty {
		return dst, err
	}
	first, last := 0, len(a.starts)
	if r.lo.set {
		k, ok := a.intervalOf(lo)
		if !ok {
			return dst, nil
		}
		first = sort.Search(len(a.starts), func(i int) bool { return a.starts[i] >= k })
	}
	if r.hi.set {
		if k, ok := a.intervalOf(hi); ok {
			last = sort.Search(len(a.starts), func(i int) bool { return a.starts[i] > k })
		}
	}
	for i := first; i < last; i++ {
		dst = append(dst, int(a.startTgt[i]))
	}
	return dst, nil
}
