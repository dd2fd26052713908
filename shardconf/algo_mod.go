package shardconf

// MOD and HASH_MOD, plus the helpers every algo_*.go file shares (prop
// reading, numbered-suffix target matching).
//
// What ShardingSphere 5.x does (read from github.com/apache/shardingsphere,
// features/sharding/core/src/main/java/org/apache/shardingsphere/sharding/:
// algorithm/sharding/mod/ModShardingAlgorithm.java (commit 8f889e21),
// algorithm/sharding/mod/HashModShardingAlgorithm.java (2de2d11a),
// algorithm/sharding/ShardingAutoTableAlgorithmUtils.java (ed6fb4b7),
// rule/ShardingTable.java (b788b446); and
// parser/sql/statement/core/.../literal/impl/NumberLiteralValue.java with
// SQLUtils.getExactlyNumber (8f889e21)):
//
//   - MOD props: sharding-count (required, int > 0), start-offset and
//     stop-offset (int >= 0, default 0), zero-padding (Boolean.parseBoolean,
//     default false). The padding width is the number of decimal digits of
//     sharding-count - 1, at least 1.
//   - MOD value: with both offsets 0 a java.lang.Number becomes
//     BigInteger.valueOf(n.longValue()) (so a BigInteger above Long.MAX_VALUE
//     wraps to its low 64 bits, and a Double is truncated), anything else is
//     new BigInteger(v.toString()). With offsets the value's toString() is cut
//     to [start, len-stop) (an error unless len-stop > start) and parsed.
//     BigInteger.mod is never negative.
//   - MOD range: every target when either side is unbounded or
//     upper - lower >= sharding-count - 1; otherwise each value lower..upper
//     (bound types ignored, offsets ignored).
//   - HASH_MOD: Math.abs((long) value.hashCode()) % sharding-count; ranges
//     return every target. With normalize-numeric-int-range: true (current
//     ShardingSphere, default false) a Long or BigInteger that fits an int
//     hashes as that Integer (its own value), so -1 is t_1 whatever
//     carries it; beyond the int range hashing is unchanged. SQL integer literals reach it as Integer when they
//     fit an int, Long when they fit a long, BigInteger beyond; JDBC setLong
//     gives Long.
//   - Both turn the shard number into a name with findMatchedTargetName:
//     prefix + Strings.padStart(suffix, suffixMinLength, '0'), where
//     ShardingTable's DataNodeInfo takes the prefix from the first node (its
//     trailing digits stripped) and suffixMinLength as the shortest suffix
//     among all nodes. A name not among the targets routes nowhere (null).
//
// shardkey compiles that into residue -> target index arrays. Deviations,
// all deliberate:
//   - a residue whose name is not among the targets loads, as in Java, and
//     is reported to Router.Unreachable; a value landing there is
//     ErrNoRoute (Java: null). A rule where no residue has a target, or
//     where two targets end in the same residue's suffix, is an error;
//   - targets are matched on their trailing digits (after the logic
//     table's name when every target begins with it, as DataNodeInfo's
//     prefix: t1's t10 is shard 0) rather than on prefix + digits, so
//     targets with different prefixes still match;
//   - MOD ranges respect open/closed bounds (a subset of Java's answer that
//     still holds every matching row), and with offsets a range routes to
//     every target (Java iterates the uncut values, which misses targets);
//     a range bound above int64 (kindBig) or a float also gives every
//     target, and so does a text bound: a text column compares as text
//     ('100' is BETWEEN '1' AND '3'), so the numbers between the bounds
//     miss rows (Java narrows by the numbers);
//   - zero-padding must be true or false (Java reads anything else as
//     false);
//   - a number is read as the number it is, whatever carries it (value.go
//     normalizes once): a uint64 above int64 gets its own residue, the one
//     its decimal text gets, where Java's longValue() wraps a BigInteger to
//     its low 64 bits; an integral float is the integer; a float with a
//     fraction is refused where Java truncates it (a database rounds it
//     when storing it in an integer column: 3.7 is stored as 4 and would
//     be routed as 3). Decimal text is read as new BigInteger reads it:
//     an optional sign, ASCII digits, leading zeros; nothing else (no
//     spaces, no '_', no '.'), at any length. With offsets the value's
//     text is cut, as Java cuts toString(): "007" and 7 differ there, as
//     they do in ShardingSphere;
//   - HASH_MOD hashes every integer as a Java Long (Long.hashCode), as JDBC
//     setLong delivers it (with normalize-numeric-int-range, an integer in
//     the int range as an Integer, as Java then does for every carrier). ShardingSphere itself hashes a SQL literal that
//     fits an int as an Integer: the two agree for 0..2^31-1 but differ for
//     negative values (Integer -5 hashes to -5, Long -5 to 4). A uint64 above
//     int64 hashes as the java.math.BigInteger Java would hold it; strings
//     as String.hashCode over UTF-16 code units (invalid UTF-8 bytes count
//     as U+FFFD each), so "5" and 5 route apart as in ShardingSphere, and
//     so do "+5", "05" and "5" (three strings); times are refused. Every Go
//     carrier of an integer (any integer type, keygen.ID, *big.Int,
//     json.Number, an integral float) hashes as the Long or BigInteger it
//     is; a float with a fraction is refused (Java's Double.hashCode of 5.0
//     is not Long 5's, and a fraction in an integer column is rounded).
//
// Java vectors in algo_mod_test.go come from a Java 17 program run against
// java.lang.Long/String/BigInteger/Double.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/shardkey/shardkey/keygen"
)

func init() {
	registerStandard("MOD", newModAlgorithm)
	registerStandard("HASH_MOD", newHashModAlgorithm)
}

// ---- shared helpers: props ----

// apReader reads an algorithm's props. Keys match as keygen's do: kebab
// (sharding-count), dotted (sharding.count), snake and camelCase spellings
// name the same prop. Every problem is collected; err joins them.
type apReader struct {
	typ  string
	raw  map[string]string // canonical key -> key as written
	vals map[string]string // canonical key -> trimmed value
	errs []error
}

func apRead(spec algoSpec, allowed ...string) *apReader {
	r := &apReader{typ: spec.typ, raw: map[string]string{}, vals: map[string]string{}}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	keys := make([]string, 0, len(spec.props))
	for k := range spec.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := keygen.CanonicalPropKey(k)
		if !ok[c] {
			reason := "unknown prop"
			if len(allowed) > 0 {
				reason += " (" + r.typ + " takes " + strings.Join(allowed, ", ") + ")"
			} else {
				reason += " (" + r.typ + " takes none)"
			}
			r.errs = append(r.errs, &propError{key: k, value: spec.props[k], reason: reason})
			continue
		}
		if prev, dup := r.raw[c]; dup {
			r.errs = append(r.errs, &propError{key: k, value: spec.props[k], reason: fmt.Sprintf("given twice (also as %q)", prev)})
			continue
		}
		r.raw[c], r.vals[c] = k, strings.TrimSpace(spec.props[k])
	}
	return r
}

func (r *apReader) str(key string) (string, bool) { v, ok := r.vals[key]; return v, ok }

func (r *apReader) fail(key, reason string) {
	k := key
	if raw, ok := r.raw[key]; ok {
		k = raw
	}
	r.errs = append(r.errs, &propError{key: k, value: r.vals[key], reason: reason})
}

// required returns the value of key, recording an error when it is missing
// or empty.
func (r *apReader) required(key string) (string, bool) {
	v, ok := r.vals[key]
	if !ok || v == "" {
		r.fail(key, "required")
		return "", false
	}
	return v, true
}

// int reads an integer in [lo, hi]; a missing key gives def, or an error
// when required.
func (r *apReader) int(key string, lo, hi, def int64, required bool) int64 {
	v, ok := r.vals[key]
	if !ok {
		if required {
			r.fail(key, "required")
		}
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		r.fail(key, fmt.Sprintf("not an integer in %d..%d", lo, hi))
		return def
	}
	return n
}

func (r *apReader) boolean(key string, def bool) bool {
	v, ok := r.vals[key]
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	}
	r.fail(key, "not true or false")
	return def
}

func (r *apReader) err() error {
	switch len(r.errs) {
	case 0:
		return nil
	case 1:
		return r.errs[0]
	}
	return errors.Join(r.errs...)
}

// ---- shared helpers: numbered targets ----

// apShards maps shard numbers 0..n-1 to target indexes the way
// ShardingSphere's findMatchedTargetName does: the number in decimal (as
// suffix(i) renders it), left-padded with '0' to the shortest digit suffix
// among the targets, must be some target's trailing digits. A shard no
// target ends in is unreachable: ShardingSphere loads such a rule and
// routes a value landing there nowhere (null), so at gives -1 for it and
// the router reports ErrNoRoute at the statement.
type apShards struct {
	n     int64
	dense []int32 // shard -> target index, -1 for none; nil when n is large
	nums  []int64 // the shards that have a target, ascending
	tgts  []int32 // their targets
}

// apDenseMax bounds the shard count kept as a dense slice; beyond it (only
// possible with unreachable shards, since n <= targets when every shard
// has one) at
// searches nums.
const apDenseMax = 1 << 20

// at is the target index of shard i (0 <= i < n), -1 for none.
func (s *apShards) at(i int64) int {
	if s.dense != nil {
		return int(s.dense[i])
	}
	k := sort.Search(len(s.nums), func(j int) bool { return s.nums[j] >= i })
	if k < len(s.nums) && s.nums[k] == i {
		return int(s.tgts[k])
	}
	return -1
}

// appendRange appends the targets of shards from..to (inclusive, within
// 0..n-1), skipping unreachable shards, in time proportional to the
// smaller of the span and the number of served shards.
func (s *apShards) appendRange(from, to int64, dst []int) []int {
	if from > to {
		return dst
	}
	if s.dense != nil && to-from < int64(len(s.nums))+64 {
		for i := from; i <= to; i++ {
			if j := s.dense[i]; j >= 0 {
				dst = append(dst, int(j))
			}
		}
		return dst
	}
	k := sort.Search(len(s.nums), func(j int) bool { return s.nums[j] >= from })
	for ; k < len(s.nums) && s.nums[k] <= to; k++ {
		dst = append(dst, int(s.tgts[k]))
	}
	return dst
}

// apNumberedTargets builds the shard map of n shards over spec's targets
// and reports every shard without a target to spec.unreachable, in runs
// (describe, when not nil, says which values a run of shards holds). what
// names the numbering for errors ("sharding-count 4"). A suffix two targets
// share is an error, and so is a rule where no shard has a target (every
// statement would fail).
func apNumberedTargets(spec algoSpec, n int64, suffix func(i int64) string, what string, describe func(from, to int64) string) (*apShards, error) {
	targets := spec.targets
	if n <= 0 {
		return nil, fmt.Errorf("%s: no shards", what)
	}
	digits := apDigitsOf(spec)
	minLen := -1
	for _, t := range targets {
		d := len(digits(t))
		if d > 0 && (minLen < 0 || d < minLen) {
			minLen = d
		}
	}
	render := func(i int64) string {
		s := suffix(i)
		if len(s) < minLen {
			s = strings.Repeat("0", minLen-len(s)) + s
		}
		return s
	}
	// Invert the rendering: a target whose trailing digits d read as i
	// serves shard i when i renders as d. At most one target per shard.
	byShard := map[int64]int32{}
	for j, t := range targets {
		d := digits(t)
		if d == "" {
			continue
		}
		i, err := strconv.ParseInt(d, 10, 64)
		if err != nil || i >= n || render(i) != d {
			continue
		}
		if prev, dup := byShard[i]; dup {
			return nil, fmt.Errorf("%s: shard %d maps to suffix %s, which several targets end in (%s, %s)", what, i, d, targets[prev], t)
		}
		byShard[i] = int32(j)
	}
	if len(byShard) == 0 {
		return nil, fmt.Errorf("%s but no target ends in any shard's suffix (%s..%s; targets: %s)", what, render(0), render(n-1), apList(targets))
	}
	s := newAPShards(n, byShard)
	apReportGaps(spec, s, render, describe)
	return s, nil
}

// newAPShards is the shard map of n shards with the targets of byShard
// (shard -> target index): sorted, and dense when n is small.
func newAPShards(n int64, byShard map[int64]int32) *apShards {
	s := &apShards{n: n}
	for i := range byShard {
		s.nums = append(s.nums, i)
	}
	slices.Sort(s.nums)
	for _, i := range s.nums {
		s.tgts = append(s.tgts, byShard[i])
	}
	if n <= apDenseMax {
		s.dense = make([]int32, n)
		for i := range s.dense {
			s.dense[i] = -1
		}
		for k, i := range s.nums {
			s.dense[i] = s.tgts[k]
		}
	}
	return s
}

// apReportGaps reports each run of shards without a target.
func apReportGaps(spec algoSpec, s *apShards, render func(int64) string, describe func(from, to int64) string) {
	prefix := ""
	if len(spec.targets) > 0 {
		t := spec.targets[0]
		prefix = t[:len(t)-len(apDigitsOf(spec)(t))]
	}
	gap := func(from, to int64) {
		var p string
		if from == to {
			p = fmt.Sprintf("%s%s (shard %d", prefix, render(from), from)
		} else {
			p = fmt.Sprintf("%s%s to %s%s (shards %d..%d, %d in all", prefix, render(from), prefix, render(to), from, to, to-from+1)
		}
		if describe != nil {
			p += ": " + describe(from, to)
		}
		spec.noTarget(p + ")")
	}
	next := int64(0)
	for _, i := range s.nums {
		if i > next {
			gap(next, i-1)
		}
		next = i + 1
	}
	if next < s.n {
		gap(next, s.n-1)
	}
}

// noTarget reports a partition no target serves (tests build specs
// without a reporter).
func (s algoSpec) noTarget(partition string) {
	if s.unreachable != nil {
		s.unreachable(partition)
	}
}

// apHideKernel keeps an algorithm whose shard map is sparse (no dense
// slice: a count above apDenseMax) off fast.go's integer kernels, which
// index the dense slice. Dense maps with unreachable shards keep the
// kernels: those defer an index of -1 to the general path (ErrNoRoute).
type apHideKernel struct{ shardFunc }

// apMaybeHide wraps f in apHideKernel when its shard map is sparse.
func apMaybeHide(f shardFunc, s *apShards) shardFunc {
	if s.dense != nil {
		return f
	}
	return apHideKernel{f}
}

func apIsDigit(c byte) bool { return c >= '0' && c <= '9' }

// apDigitsOf returns the function giving a target's number: its trailing
// digits, read after the logic table's name when every target begins with
// it. ShardingSphere's DataNodeInfo takes the prefix so: logic table t1
// over t10 .. t115 numbers them 0 .. 15 (prefix t1), where the bare
// trailing digits would make t10 shard 10 and misplace rows.
func apDigitsOf(spec algoSpec) func(t string) string {
	n := len(spec.table)
	after := n > 0 && len(spec.targets) > 0
	for _, t := range spec.targets {
		if len(t) <= n || !strings.EqualFold(t[:n], spec.table) {
			after = false
			break
		}
	}
	return func(t string) string {
		if after {
			t = t[n:]
		}
		return t[len(t)-apDigitSuffixLen(t):]
	}
}

func apDigitSuffixLen(t string) int {
	j := len(t)
	for j > 0 && apIsDigit(t[j-1]) {
		j--
	}
	return len(t) - j
}

// apList renders target names for an error message, eliding long lists.
func apList(targets []string) string {
	const max = 8
	if len(targets) <= max {
		return strings.Join(targets, ", ")
	}
	return strings.Join(targets[:max], ", ") + fmt.Sprintf(", ... (%d in all)", len(targets))
}

func apDecimal(i int64) string { return strconv.FormatInt(i, 10) }

// apAll appends every target index.
func apAll(n int, dst []int) []int {
	for i := 0; i < n; i++ {
		dst = append(dst, i)
	}
	return dst
}

func apKindName(k kind) string {
	switch k {
	case kindInt:
		return "an integer"
	case kindBig:
		return "an unsigned integer above int64"
	case kindString:
		return "a string"
	case kindTime:
		return "a time"
	case kindFloat:
		return "a float"
	}
	return "no value"
}

// ---- MOD ----

type modAlgorithm struct {
	count       int64
	start, stop int
	offsets     bool
	shards      *apShards
	idx         []int32 // shards.dense, for fast.go (-1: no target)
	ntargets    int
	div         divisor // count, for the int fast path (fast.go)
}

func newModAlgorithm(spec algoSpec) (shardFunc, error) {
	r := apRead(spec, "sharding-count", "start-offset", "stop-offset", "zero-padding")
	count := r.int("sharding-count", 1, math.MaxInt32, 0, true)
	start := r.int("start-offset", 0, math.MaxInt32, 0, false)
	stop := r.int("stop-offset", 0, math.MaxInt32, 0, false)
	pad := r.boolean("zero-padding", false)
	if err := r.err(); err != nil {
		return nil, err
	}
	width := 1
	for c := count - 1; c >= 10; c /= 10 {
		width++
	}
	suffix := func(i int64) string {
		s := apDecimal(i)
		if pad && len(s) < width {
			s = strings.Repeat("0", width-len(s)) + s
		}
		return s
	}
	shards, err := apNumberedTargets(spec, count, suffix, fmt.Sprintf("sharding-count %d", count), amDescribe(count))
	if err != nil {
		return nil, err
	}
	m := &modAlgorithm{div: newDivisor(uint64(count)), count: count, start: int(start), stop: int(stop), offsets: start != 0 || stop != 0,
		shards: shards, idx: shards.dense, ntargets: len(spec.targets)}
	return apMaybeHide(m, shards), nil
}

// amDescribe says which values a run of residues holds.
func amDescribe(count int64) func(from, to int64) string {
	return func(from, to int64) string {
		if from == to {
			return fmt.Sprintf("values whose remainder mod %d is %d", count, from)
		}
		return fmt.Sprintf("values whose remainder mod %d is %d..%d", count, from, to)
	}
}

// amDecimalMod is s mod n (never negative) for a decimal integer as Java's
// new BigInteger(s) reads it: an optional sign, then ASCII digits.
func amDecimalMod[T string | []byte](s T, n int64) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var r int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !apIsDigit(c) {
			return 0, false
		}
		r = (r*10 + int64(c-'0')) % n
	}
	if neg && r != 0 {
		r = n - r
	}
	return r, true
}

// errFraction refuses a float with a fraction as a sharding value: a
// database rounds it when it stores it in an integer column (3.7 becomes
// 4), so any number read from it (Java truncates to 3) could misplace the
// row. Integral floats never get here: value.go makes them integers.
func errFraction(typ string, v value) error {
	return fmt.Errorf("%s: %s has a fraction; a sharding value must be an integer", typ, v)
}

func amMod(i, n int64) int64 {
	r := i % n
	if r < 0 {
		r += n
	}
	return r
}

// residue computes the shard number of v.
func (m *modAlgorithm) residue(v value) (int64, error) {
	if !m.offsets {
		switch v.kind {
		case kindInt:
			return amMod(v.i, m.count), nil
		case kindBig:
			// The number's own residue, as its decimal text gets. Java's
			// BigInteger.longValue() would keep the low 64 bits: a wrapped
			// number, routed apart from the same number as a String.
			return int64(v.u % uint64(m.count)), nil
		case kindString:
			r, ok := amDecimalMod(v.s, m.count)
			if !ok {
				return 0, fmt.Errorf("MOD: %q is not a decimal integer", v.s)
			}
			return r, nil
		case kindFloat:
			return 0, errFraction("MOD", v)
		}
		return 0, fmt.Errorf("MOD needs an integer or a decimal string, got %s", apKindName(v.kind))
	}
	var buf [24]byte
	var s []byte
	switch v.kind {
	case kindInt:
		s = strconv.AppendInt(buf[:0], v.i, 10)
	case kindBig:
		s = strconv.AppendUint(buf[:0], v.u, 10)
	case kindString:
		return m.cutMod(v.s)
	default:
		return 0, fmt.Errorf("MOD with start-offset/stop-offset needs an integer or a decimal string, got %s", apKindName(v.kind))
	}
	if len(s)-m.stop <= m.start {
		return 0, m.offsetErr(string(s))
	}
	r, ok := amDecimalMod(s[m.start:len(s)-m.stop], m.count)
	if !ok {
		return 0, fmt.Errorf("MOD: %q cut to [%d, len-%d) is not a decimal integer", string(s), m.start, m.stop)
	}
	return r, nil
}

func (m *modAlgorithm) cutMod(s string) (int64, error) {
	cut, err := m.cut16(s)
	if err != nil {
		return 0, err
	}
	r, ok := amDecimalMod(cut, m.count)
	if !ok {
		return 0, fmt.Errorf("MOD: %q cut to [%d, len-%d) is not a decimal integer", s, m.start, m.stop)
	}
	return r, nil
}

// cut16 is Java's s.substring(start, s.length() - stop), indexes counting
// UTF-16 code units. A cut through a surrogate pair is an error (the lone
// surrogate would not parse as a digit anyway).
func (m *modAlgorithm) cut16(s string) (string, error) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		if len(s)-m.stop <= m.start {
			return "", m.offsetErr(s)
		}
		return s[m.start : len(s)-m.stop], nil
	}
	n := ivLen16(s)
	if n-m.stop <= m.start {
		return "", m.offsetErr(s)
	}
	from, to := -1, -1
	units := 0
	for i, r := range s {
		if units == m.start {
			from = i
		}
		if units == n-m.stop {
			to = i
		}
		units += utf16.RuneLen(r)
	}
	if units == n-m.stop {
		to = len(s)
	}
	if from < 0 || to < 0 {
		return "", fmt.Errorf("MOD: start-offset %d or stop-offset %d splits a character of %q", m.start, m.stop, s)
	}
	return s[from:to], nil
}

func (m *modAlgorithm) offsetErr(s string) error {
	return fmt.Errorf("MOD: value %s is too short for start-offset %d and stop-offset %d", s, m.start, m.stop)
}

func (m *modAlgorithm) one(v value) (int, error) {
	r, err := m.residue(v)
	if err != nil {
		return -1, err
	}
	return m.shards.at(r), nil
}

// amBound turns a range bound into an int64 for MOD's range arithmetic.
// ok is false when the bound is valid but not usable for narrowing (a
// float, a value beyond int64).
func amBound(v value) (n int64, ok bool, err error) {
	switch v.kind {
	case kindInt:
		return v.i, true, nil
	case kindBig, kindFloat:
		return 0, false, nil
	case kindString:
		if _, good := amDecimalMod(v.s, 1); !good {
			return 0, false, fmt.Errorf("MOD: %q is not a decimal integer", v.s)
		}
		// Valid, but not for narrowing: a text column compares as text,
		// where '100' lies between '1' and '3' (see textBoundsScatter).
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("MOD needs an integer or a decimal string, got %s", apKindName(v.kind))
}

func (m *modAlgorithm) within(r span, dst []int) ([]int, error) {
	var lo, hi int64
	var okLo, okHi bool
	var err error
	if r.lo.set {
		if lo, okLo, err = amBound(r.lo.v); err != nil {
			return dst, err
		}
	}
	if r.hi.set {
		if hi, okHi, err = amBound(r.hi.v); err != nil {
			return dst, err
		}
	}
	if m.offsets || !okLo || !okHi {
		return apAll(m.ntargets, dst), nil
	}
	if !r.lo.inclusive {
		if lo == math.MaxInt64 {
			return dst, nil
		}
		lo++
	}
	if !r.hi.inclusive {
		if hi == math.MinInt64 {
			return dst, nil
		}
		hi--
	}
	if lo > hi {
		return dst, nil
	}
	if d := uint64(hi) - uint64(lo); d >= uint64(m.count-1) {
		return apAll(m.ntargets, dst), nil
	}
	// hi - lo < count - 1: the residues run from lo's, wrapping at most once.
	// Residues without a target are skipped: a row there could never have
	// been written (its insert fails with ErrNoRoute), so the range is exact.
	from := amMod(lo, m.count)
	to := from + int64(uint64(hi)-uint64(lo))
	if to < m.count {
		return m.shards.appendRange(from, to, dst), nil
	}
	dst = m.shards.appendRange(from, m.count-1, dst)
	return m.shards.appendRange(0, to-m.count, dst), nil
}

// ---- HASH_MOD ----

type hashModAlgorithm struct {
	count int64
	// intRange is normalize-numeric-int-range: an integer that fits a Java
	// int hashes as an Integer (its own value) rather than as a Long.
	intRange bool
	shards   *apShards
	idx      []int32 // shards.dense, for fast.go (-1: no target)
	ntargets int
	div      divisor // count, for the int fast path (fast.go)
}

func newHashModAlgorithm(spec algoSpec) (shardFunc, error) {
	r := apRead(spec, "sharding-count", "normalize-numeric-int-range")
	count := r.int("sharding-count", 1, math.MaxInt32, 0, true)
	intRange := r.boolean("normalize-numeric-int-range", false)
	if err := r.err(); err != nil {
		return nil, err
	}
	shards, err := apNumberedTargets(spec, count, apDecimal, fmt.Sprintf("sharding-count %d", count), nil)
	if err != nil {
		return nil, err
	}
	h := &hashModAlgorithm{count: count, intRange: intRange, shards: shards, idx: shards.dense, ntargets: len(spec.targets), div: newDivisor(uint64(count))}
	if intRange {
		return apMaybeHide(hashModIntRange{h}, shards), nil
	}
	return apMaybeHide(h, shards), nil
}

// hashModIntRange keeps a normalize-numeric-int-range HASH_MOD off fast.go's
// Long-hashing kernel; its own oneInt hashes int-range values as Integers.
type hashModIntRange struct{ *hashModAlgorithm }

func (h hashModIntRange) oneInt(i int64) (int, bool) {
	if i < math.MinInt32 || i > math.MaxInt32 {
		return h.hashModAlgorithm.oneInt(i)
	}
	a := i // Integer.hashCode is the value; Math.abs of its long
	if a < 0 {
		a = -a
	}
	j := h.idx[h.div.mod(uint64(a))]
	return int(j), j >= 0
}

func (h *hashModAlgorithm) one(v value) (int, error) {
	if v.kind == kindFloat {
		return -1, errFraction("HASH_MOD", v)
	}
	c, err := javaHashCode(v)
	if err != nil {
		return -1, err
	}
	if h.intRange && v.kind == kindInt && v.i >= math.MinInt32 && v.i <= math.MaxInt32 {
		c = int32(v.i) // normalize-numeric-int-range: hashed as the Integer it fits
	}
	a := int64(c)
	if a < 0 {
		a = -a
	}
	return h.shards.at(a % h.count), nil
}

func (h *hashModAlgorithm) within(r span, dst []int) ([]int, error) {
	return apAll(h.ntargets, dst), nil
}

// javaHashCode is the hashCode Java gives the boxed value: Long.hashCode for
// integers, BigInteger.hashCode for uint64 above int64, Double.hashCode for
// floats, String.hashCode (UTF-16 code units) for strings. Times are refused.
func javaHashCode(v value) (int32, error) {
	switch v.kind {
	case kindInt:
		return hmLong(v.i), nil
	case kindBig:
		return hmBigUint(v.u), nil
	case kindString:
		return hmString(v.s), nil
	case kindFloat:
		return hmDouble(v.f), nil
	}
	return 0, fmt.Errorf("HASH_MOD cannot hash %s (Java's hashCode of a date-time depends on its class)", apKindName(v.kind))
}

// hmLong is java.lang.Long.hashCode: (int) (v ^ (v >>> 32)).
func hmLong(v int64) int32 { return int32(v ^ int64(uint64(v)>>32)) }

// hmBigUint is java.math.BigInteger.hashCode for a positive value that
// fills more than 63 bits: over its big-endian 32-bit words,
// h = 31*h + word (int arithmetic), times the signum 1.
func hmBigUint(u uint64) int32 {
	var h int32
	for _, w := range [2]uint32{uint32(u >> 32), uint32(u)} {
		if h == 0 && w == 0 {
			continue // BigInteger's magnitude has no leading zero words
		}
		h = int32(31*int64(h) + int64(w))
	}
	return h
}

// hmString is java.lang.String.hashCode: s[0]*31^(n-1) + ... over UTF-16
// code units, in int arithmetic. Invalid UTF-8 bytes count as U+FFFD.
func hmString(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// hmDouble is java.lang.Double.hashCode: the bits of doubleToLongBits (one
// canonical NaN) folded as Long.hashCode folds.
func hmDouble(f float64) int32 {
	bits := int64(math.Float64bits(f))
	if math.IsNaN(f) {
		bits = 0x7ff8000000000000
	}
	return hmLong(bits)
}
