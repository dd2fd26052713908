package shardconf

// VOLUME_RANGE and BOUNDARY_RANGE.
//
// What ShardingSphere 5.x does (read from apache/shardingsphere,
// features/sharding/core/src/main/java/org/apache/shardingsphere/sharding/
// algorithm/sharding/range/AbstractRangeShardingAlgorithm.java (commit
// 6b84f7b5), .../range/VolumeBasedRangeShardingAlgorithm.java and
// .../range/BoundaryBasedRangeShardingAlgorithm.java (a821b60e)):
//
//   - VOLUME_RANGE props range-lower, range-upper, sharding-volume (all
//     required, Long.parseLong); init fails unless upper - lower >= volume.
//     With n = ceil((upper - lower) / volume) it builds n + 2 partitions:
//     0 = (-inf, lower), i+1 = [lower + i*volume, min(lower + (i+1)*volume,
//     upper)) for i < n, n+1 = [upper, +inf).
//   - BOUNDARY_RANGE prop sharding-ranges: comma-separated longs, trimmed,
//     entries that do not parse silently dropped, sorted (duplicates kept),
//     at least one. Partitions: 0 = (-inf, b0), i = [b(i-1), b(i)),
//     last = [b(last), +inf): one more partition than boundaries.
//   - A value is Long.parseLong(value.toString()); the partition is the one
//     whose range contains it; the target is the one whose name ends in the
//     partition number (findMatchedTargetName, see algo_mod.go).
//   - A range routes to partitions first..last, first = the lower
//     endpoint's partition (0 when unbounded), last = the upper endpoint's
//     (the last partition when unbounded); bound types are ignored.
//
// shardkey keeps the boundaries in a sorted slice: the partition of v is the
// number of boundaries <= v (binary search, no allocation). Deviations:
//   - a partition without a target loads and is reported to
//     Router.Unreachable (see algo_mod.go); a value there is ErrNoRoute, a
//     range skips it (no row can be there). VOLUME_RANGE computes its
//     partitions instead of listing them, so a huge count loads;
//   - a sharding-ranges entry that is not an integer is an error instead of
//     being dropped (empty entries, as from a trailing comma, are skipped);
//     sharding-volume must be positive and upper - lower must fit int64;
//   - open range bounds are respected (v < 100 does not reach the partition
//     starting at 100), a subset of Java's answer holding every match; a
//     range with a text bound reaches every partition (see
//     textBoundsScatter: a text column compares as text);
//   - a number above int64 (a uint64, a *big.Int, or decimal text, which
//     Long.parseLong refuses) falls in the last partition, where it
//     belongs, and one below int64 in the first: every form of a number
//     routes alike (see value.go). An integral float is the integer it is
//     (Java's Double.toString "2.0" would not parse).

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

func init() {
	registerStandard("VOLUME_RANGE", newVolumeRangeAlgorithm)
	registerStandard("BOUNDARY_RANGE", newBoundaryRangeAlgorithm)
}

// rangeAlgorithm routes by partitions separated by sorted boundaries:
// BOUNDARY_RANGE keeps them in a slice, VOLUME_RANGE computes them (its
// partition count may be far larger than the targets when some partitions
// are unreachable).
type rangeAlgorithm struct {
	typ    string
	bounds []int64 // BOUNDARY_RANGE: sorted; partition(v) = count of bounds <= v
	// VOLUME_RANGE: partition 0 below lower, 1+(v-lower)/volume up to
	// upper, last from upper on.
	volume              bool
	lower, upper, width int64
	last                int64 // the last partition
	shards              *apShards
}

func newVolumeRangeAlgorithm(spec algoSpec) (shardFunc, error) {
	r := apRead(spec, "range-lower", "range-upper", "sharding-volume")
	lower := r.int("range-lower", math.MinInt64, math.MaxInt64, 0, true)
	upper := r.int("range-upper", math.MinInt64, math.MaxInt64, 0, true)
	volume := r.int("sharding-volume", 1, math.MaxInt64, 0, true)
	if err := r.err(); err != nil {
		return nil, err
	}
	width := uint64(upper) - uint64(lower)
	if upper < lower || width > math.MaxInt64 {
		return nil, &propError{key: "range-upper", value: strconv.FormatInt(upper, 10),
			reason: fmt.Sprintf("must be above range-lower %d by at most %d", lower, int64(math.MaxInt64))}
	}
	if int64(width) < volume {
		return nil, &propError{key: "sharding-volume", value: strconv.FormatInt(volume, 10),
			reason: fmt.Sprintf("larger than range-upper - range-lower = %d", width)}
	}
	n := int64(width) / volume // ceil((upper - lower) / volume)
	if int64(width)%volume != 0 {
		n++
	}
	if n > math.MaxInt64-2 {
		return nil, &propError{key: "sharding-volume", value: strconv.FormatInt(volume, 10), reason: "too many partitions"}
	}
	a := &rangeAlgorithm{typ: spec.typ, volume: true, lower: lower, upper: upper, width: volume, last: n + 1}
	return a.finish(spec)
}

func newBoundaryRangeAlgorithm(spec algoSpec) (shardFunc, error) {
	r := apRead(spec, "sharding-ranges")
	raw, _ := r.required("sharding-ranges")
	if err := r.err(); err != nil {
		return nil, err
	}
	var bounds []int64
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		b, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return nil, &propError{key: r.raw["sharding-ranges"], value: raw, reason: fmt.Sprintf("%q is not an integer", part)}
		}
		bounds = append(bounds, b)
	}
	if len(bounds) == 0 {
		return nil, &propError{key: r.raw["sharding-ranges"], value: raw, reason: "no boundaries"}
	}
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })
	a := &rangeAlgorithm{typ: spec.typ, bounds: bounds, last: int64(len(bounds))}
	return a.finish(spec)
}

// finish maps the partitions to targets.
func (a *rangeAlgorithm) finish(spec algoSpec) (shardFunc, error) {
	n := a.last + 1
	shards, err := apNumberedTargets(spec, n, apDecimal, fmt.Sprintf("%s has %d partitions", spec.typ, n), a.describe)
	if err != nil {
		return nil, err
	}
	a.shards = shards
	return a, nil
}

// start is the smallest value of partition p (p >= 1).
func (a *rangeAlgorithm) start(p int64) int64 {
	switch {
	case !a.volume:
		return a.bounds[p-1]
	case p == a.last:
		return a.upper
	}
	return a.lower + (p-1)*a.width
}

// describe says which values partitions from..to hold.
func (a *rangeAlgorithm) describe(from, to int64) string {
	switch {
	case from == 0 && to == a.last:
		return "every value"
	case from == 0:
		return fmt.Sprintf("values below %d", a.start(to+1))
	case to == a.last:
		return fmt.Sprintf("values from %d", a.start(from))
	}
	return fmt.Sprintf("values in [%d, %d)", a.start(from), a.start(to+1))
}

// partition is the partition of v.
func (a *rangeAlgorithm) partition(v int64) int64 {
	if a.volume {
		switch {
		case v < a.lower:
			return 0
		case v >= a.upper:
			return a.last
		}
		return 1 + int64((uint64(v)-uint64(a.lower))/uint64(a.width))
	}
	lo, hi := 0, len(a.bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a.bounds[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return int64(lo)
}

// arValue reads a value as the number it is (integerView: an integer, or
// a decimal string as Long.parseLong reads it). side is 1 for a number
// above int64 (above every boundary: the last partition) and -1 for one
// below int64 (the first); n is set when side is 0.
func (a *rangeAlgorithm) arValue(v value) (n int64, side int, err error) {
	c, n, _, ok := integerView(v)
	switch {
	case !ok && v.kind == kindString:
		return 0, 0, fmt.Errorf("%s: %q is not a decimal integer", a.typ, v.s)
	case !ok && v.kind == kindFloat:
		return 0, 0, errFraction(a.typ, v)
	case !ok:
		return 0, 0, fmt.Errorf("%s needs an integer, got %s", a.typ, apKindName(v.kind))
	case c > 0:
		return 0, 1, nil
	case c < 0:
		return 0, -1, nil
	}
	return n, 0, nil
}

func (a *rangeAlgorithm) one(v value) (int, error) {
	n, side, err := a.arValue(v)
	switch {
	case err != nil:
		return -1, err
	case side > 0:
		return a.shards.at(a.last), nil
	case side < 0:
		return a.shards.at(0), nil
	}
	return a.shards.at(a.partition(n)), nil
}

func (a *rangeAlgorithm) within(r span, dst []int) ([]int, error) {
	r.lo, r.hi = integralBound(r.lo, true), integralBound(r.hi, false)
	first, last := int64(0), a.last
	if textBoundsScatter(r) {
		for _, b := range []bound{r.lo, r.hi} {
			if _, _, err := a.arValue(b.v); b.set && err != nil {
				return dst, err
			}
		}
		return a.shards.appendRange(first, last, dst), nil
	}
	if r.lo.set {
		n, side, err := a.arValue(r.lo.v)
		if err != nil {
			return dst, err
		}
		switch {
		case side > 0:
			first = a.last
		case side < 0:
			first = 0
		case !r.lo.inclusive && n == math.MaxInt64:
			first = a.partition(n) // only numbers above int64 remain
		case !r.lo.inclusive:
			first = a.partition(n + 1)
		default:
			first = a.partition(n)
		}
	}
	if r.hi.set {
		n, side, err := a.arValue(r.hi.v)
		if err != nil {
			return dst, err
		}
		switch {
		case side > 0:
			last = a.last
		case side < 0:
			last = 0
		case !r.hi.inclusive && n == math.MinInt64:
			last = 0 // only numbers below int64 remain
		case !r.hi.inclusive:
			last = a.partition(n - 1)
		default:
			last = a.partition(n)
		}
	}
	// Partitions without a target are skipped: no row can be in one (its
	// insert fails with ErrNoRoute), so the answer stays exact.
	return a.shards.appendRange(first, last, dst), nil
}

// textBoundsScatter reports a range with a text bound. The algorithms that
// read numbers (MOD, VOLUME_RANGE, BOUNDARY_RANGE, SNOWFLAKE_*) read
// decimal text as its number for a value, but cannot narrow such a range:
// on a text column the database compares text, and '100', '25' and '3000'
// all lie BETWEEN '1' AND '3'. Such a range goes to every target the
// algorithm serves (ShardingSphere narrows by the numbers and misses
// those rows). A number bound compares as a number on every column type.
func textBoundsScatter(r span) bool {
	return r.lo.set && r.lo.v.kind == kindString || r.hi.set && r.hi.v.kind == kindString
}
