package shardconf

// ShardingSphere's AutoIntervalShardingAlgorithmTest (features/sharding/core/
// src/test/java/org/apache/shardingsphere/sharding/algorithm/sharding/
// datetime/AutoIntervalShardingAlgorithmTest.java), rewritten as Go tests
// through shardFunc. Its setup algorithm has six partitions
// (2020-01-01 00:00:00 .. 00:00:16 by 4 seconds); several of its tests pass
// only four or five tables, which shardkey loads with the rest reported as
// unreachable.

import (
	"fmt"
	"testing"
)

func ssAutoProps(lower, upper, seconds string) map[string]string {
	return map[string]string{"datetime-lower": lower, "datetime-upper": upper, "sharding-seconds": seconds}
}

func ssAutoSetup(t *testing.T, targets []string) shardFunc {
	t.Helper()
	return atGapsAny(t, "AUTO_INTERVAL", ssAutoProps("2020-01-01 00:00:00", "2020-01-01 00:00:16", "4"), targets)
}

func TestShardingSphereAutoIntervalPrecise(t *testing.T) {
	// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertPreciseDoSharding
	four := atNames("t_order_", 4)
	if got := atName(t, ssAutoSetup(t, four), four, "2020-01-01 00:00:01"); got != "t_order_1" {
		t.Errorf("00:00:01 -> %q", got)
	}
	// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertPreciseDoShardingBeyondTheLastOne
	six := atNames("t_order_", 6)
	if got := atName(t, ssAutoSetup(t, six), six, "2021-01-01 00:00:02"); got != "t_order_5" {
		t.Errorf("2021-01-01 00:00:02 -> %q", got)
	}
}

// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertDoShardingWithCommaDecimalDefaultLocale.
// Java's DecimalFormat follows the default locale (a German "0,25" broke
// parseDouble); shardkey has no locale, so the answers are the plain ones.
func TestShardingSphereAutoIntervalLocaleFree(t *testing.T) {
	five := atNames("t_order_", 5)
	f := ssAutoSetup(t, five)
	if got := atName(t, f, five, "2020-01-01 00:00:01"); got != "t_order_1" {
		t.Errorf("00:00:01 -> %q", got)
	}
	if got := atRange(t, f, five, "2020-01-01 00:00:04", true, "2020-01-01 00:00:10", true); got != "t_order_1,t_order_2,t_order_3" {
		t.Errorf("[04, 10]: %q", got)
	}
}

func TestShardingSphereAutoIntervalRanges(t *testing.T) {
	five := atNames("t_order_", 5)
	f := ssAutoSetup(t, five)
	// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertRangeDoShardingWithAllRange
	if got := atRange(t, f, five, "2019-01-01 00:00:00", true, "2020-01-01 00:00:15", true); ssCount(got) != 5 {
		t.Errorf("all range: %q", got)
	}
	// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertRangeDoShardingWithPartRange
	if got := atRange(t, f, five, "2020-01-01 00:00:04", true, "2020-01-01 00:00:10", true); got != "t_order_1,t_order_2,t_order_3" {
		t.Errorf("part range: %q", got)
	}
	// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertRangeDoShardingWithoutLowerBound
	four := atNames("t_order_", 4)
	if got := atRange(t, ssAutoSetup(t, four), four, nil, false, "2020-01-01 00:00:11", false); got != "t_order_0,t_order_1,t_order_2,t_order_3" {
		t.Errorf("lessThan 00:00:11: %q", got)
	}
	// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertRangeDoShardingWithoutUpperBound
	six := atNames("t_order_", 6)
	if got := atRange(t, ssAutoSetup(t, six), six, "2020-01-01 00:00:09", false, nil, false); got != "t_order_3,t_order_4,t_order_5" {
		t.Errorf("greaterThan 00:00:09: %q", got)
	}
}

// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertInitFailedWithInvalidDatetimeFormat
func TestShardingSphereAutoIntervalInitFailure(t *testing.T) {
	_, err := atTry("AUTO_INTERVAL", map[string]string{"datetime-lower": "invalid"}, atNames("t_order_", 4))
	atPropErr(t, err, "datetime-lower")
}

// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertGetAutoTablesAmount
func TestShardingSphereAutoIntervalTablesAmount(t *testing.T) {
	if n, err := autoTableCount("AUTO_INTERVAL", ssAutoProps("2020-01-01 00:00:00", "2021-01-01 00:00:00", "86400")); err != nil || n != 368 {
		t.Errorf("tables: %d, %v; want 368", n, err)
	}
}

func TestShardingSphereAutoIntervalManyTables(t *testing.T) {
	tables := atNames("t_order_", 32)
	f := atCompile(t, "AUTO_INTERVAL", ssAutoProps("2020-01-01 00:00:00", "2020-01-01 00:00:30", "1"), tables)
	// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertRangeDoShardingWithGreaterTenTables
	if got := atRange(t, f, tables, "2020-01-01 00:00:00", true, "2020-01-01 00:00:10", true); ssCount(got) != 11 {
		t.Errorf("[00, 10]: %q, want 11 tables", got)
	}
	// ShardingSphere: AutoIntervalShardingAlgorithmTest.assertRangeDoShardingInValueWithMilliseconds
	for _, frac := range []string{"", ".1", ".12", ".123"} {
		lo, hi := fmt.Sprintf("2020-01-01 00:00:11%s", frac), fmt.Sprintf("2020-01-01 00:00:21%s", frac)
		if got := atRange(t, f, tables, lo, true, hi, true); ssCount(got) != 11 {
			t.Errorf("[%s, %s]: %q, want 11 tables", lo, hi, got)
		}
	}
}

func TestAutoTableCountIsTheAlgorithmsPartitionCount(t *testing.T) {
	// autoTables creates autoTableCount tables; the algorithm numbers its
	// partitions itself. They must agree, or a partition's table is never
	// created (or one is created that no value reaches). 400 years of
	// one-year partitions overflowed a time.Duration (292 years).
	for _, c := range []struct {
		typ   string
		props map[string]string
	}{
		{"AUTO_INTERVAL", ssAutoProps("1900-01-01 00:00:00", "2300-01-01 00:00:00", "31536000")},
		{"AUTO_INTERVAL", ssAutoProps("2020-01-01 00:00:00", "2021-01-01 00:00:00", "86400")},
		{"AUTO_INTERVAL", ssAutoProps("2020-01-01 00:00:00", "2020-01-01 00:00:00", "7")},
		{"VOLUME_RANGE", map[string]string{"range-lower": "-7", "range-upper": "20", "sharding-volume": "9"}},
		{"VOLUME_RANGE", map[string]string{"range-lower": "-4611686018427387904", "range-upper": "4611686018427387903", "sharding-volume": "4611686018427387904"}},
		{"BOUNDARY_RANGE", map[string]string{"sharding-ranges": "5, 1, 1, , 9"}},
		{"MOD", map[string]string{"sharding-count": "7"}},
	} {
		n, err := autoTableCount(c.typ, c.props)
		if err != nil {
			t.Errorf("%s %v: autoTableCount: %v", c.typ, c.props, err)
			continue
		}
		var got []string
		spec := algoSpec{typ: c.typ, props: c.props, targets: atNames("t_", n), auto: true, unreachable: func(p string) { got = append(got, p) }}
		if _, err := atTrySpec(spec); err != nil || len(got) != 0 {
			t.Errorf("%s %v over its %d auto tables: err %v, unreachable %q; want every partition served", c.typ, c.props, n, err, got)
		}
		// and not one table more than it has partitions
		got = nil
		spec.targets = atNames("t_", n-1)
		if _, err := atTrySpec(spec); err == nil && len(got) == 0 {
			t.Errorf("%s %v: %d tables serve every partition; autoTableCount says %d", c.typ, c.props, n-1, n)
		}
	}
}
