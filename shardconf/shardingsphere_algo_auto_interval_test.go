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
