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
//   - every partition must have a target (a load-time error, as for MOD);
//   - a sharding-ranges entry that is not an integer is an error instead of
//     being dropped (empty entries, as from a trailing comma, are skipped);
//     sharding-volume must be positive and upper - lower must fit int64;
//   - open range bounds are respected (v < 100 does not reach the partition
//     starting at 100), a subset of Java's answer holding every match;
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

// rangeAlgorithm routes by partitions separated by sorted boundaries.
type rangeAlgorithm struct {
	typ    string
	bounds []int64 // sorted; partition(v) = count of bounds <= v
	idx    []int32 // partition -> target index
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
	if n > int64(len(spec.targets)) {
		// More partitions (n+2) than targets: let apNumberedTargets name the
		// first missing one without building every boundary.
		total := fmt.Sprint(uint64(n) + 2)
		_, err := apNumberedTargets(spec.targets, int64(len(spec.targets))+1, apDecimal, "VOLUME_RANGE has "+total+" partitions")
		return nil, err
	}
	bounds := make([]int64, 0, n+1)
	for i := int64(0); i < n; i++ {
		bounds = append(bounds, lower+i*volume)
	}
	bounds = append(bounds, upper)
	return newRangeAlgorithm(spec, bounds)
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
	return newRangeAlgorithm(spec, bounds)
}

func newRangeAlgorithm(spec algoSpec, bounds []int64) (shardFunc, error) {
	n := int64(len(bounds)) + 1
	idx, err := apNumberedTargets(spec.targets, n, apDecimal, fmt.Sprintf("%s has %d partitions", spec.typ, n))
	if err != nil {
		return nil, err
	}
	return &rangeAlgorithm{typ: spec.typ, bounds: bounds, idx: idx}, nil
}

// partition is the number of boundaries <= v.
func (a *rangeAlgorithm) partition(v int64) int {
	lo, hi := 0, len(a.bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a.bounds[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
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
		return int(a.idx[len(a.bounds)]), nil
	case side < 0:
		return int(a.idx[0]), nil
	}
	return int(a.idx[a.partition(n)]), nil
}

func (a *rangeAlgorithm) within(r span, dst []int) ([]int, error) {
	r.lo, r.hi = integralBound(r.lo, true), integralBound(r.hi, false)
	first, last := 0, len(a.bounds)
	if r.lo.set {
		n, side, err := a.arValue(r.lo.v)
		if err != nil {
			return dst, err
		}
		switch {
		case side > 0:
			first = len(a.bounds)
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
			last = len(a.bounds)
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
	for p := first; p <= last; p++ {
		dst = append(dst, int(a.idx[p]))
	}
	return dst, nil
}
