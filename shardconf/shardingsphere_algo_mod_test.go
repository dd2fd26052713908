package shardconf

// ShardingSphere's ModShardingAlgorithmTest and HashModShardingAlgorithmTest
// (features/sharding/core/src/test/java/org/apache/shardingsphere/sharding/
// algorithm/sharding/mod/), rewritten as Go tests through shardFunc. Java's
// DataNodeInfo("t_order_", 1, '0') is what shardkey derives from the
// targets' shortest digit suffix.

import (
	"math"
	"math/big"
	"testing"
)

// ssModTargets is createAvailableTargetNames (its order kept).
var ssModTargets = []string{"t_order_8", "t_order_9", "t_order_10", "t_order_11", "t_order_12", "t_order_13", "t_order_14", "t_order_15",
	"t_order_0", "t_order_1", "t_order_2", "t_order_3", "t_order_4", "t_order_5", "t_order_6", "t_order_7"}

// ssModPaddedTargets is createAvailableIncludeZeroTargetNames.
var ssModPaddedTargets = []string{"t_order_08", "t_order_09", "t_order_10", "t_order_11", "t_order_12", "t_order_13", "t_order_14", "t_order_15",
	"t_order_00", "t_order_01", "t_order_02", "t_order_03", "t_order_04", "t_order_05", "t_order_06", "t_order_07"}

// ssModPaddedProps is createZeroPaddingProperties.
func ssModPaddedProps() map[string]string {
	return map[string]string{"sharding-count": "16", "zero-padding": "true", "start-offset": "1", "stop-offset": "1"}
}

func TestShardingSphereModPrecise(t *testing.T) {
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "16"}, ssModTargets)
	// ShardingSphere: ModShardingAlgorithmTest.assertPreciseDoShardingWithIntShardingValue
	if got := atName(t, f, ssModTargets, int32(17)); got != "t_order_1" {
		t.Errorf("17 -> %q", got)
	}
	// ShardingSphere: ModShardingAlgorithmTest.assertPreciseDoShardingWithBigIntegerShardingValue
	if got := atName(t, f, ssModTargets, "12345678910111213141516"); got != "t_order_12" {
		t.Errorf("12345678910111213141516 -> %q", got)
	}
}

func TestShardingSphereModRange(t *testing.T) {
	f := atCompile(t, "MOD", map[string]string{"sharding-count": "16"}, ssModTargets)
	// ShardingSphere: ModShardingAlgorithmTest.assertRangeDoShardingWithAllTargets
	if got := atRange(t, f, ssModTargets, int64(1), true, int64(16), true); ssCount(got) != 16 {
		t.Errorf("[1, 16]: %q", got)
	}
	// ShardingSphere: ModShardingAlgorithmTest.assertRangeDoShardingWithPartTargets
	if got := atRange(t, f, ssModTargets, int64(1), true, int64(2), true); got != "t_order_1,t_order_2" {
		t.Errorf("[1, 2]: %q", got)
	}
}

func TestShardingSphereModZeroPaddingAndOffsets(t *testing.T) {
	f := atCompile(t, "MOD", ssModPaddedProps(), ssModPaddedTargets)
	// ShardingSphere: ModShardingAlgorithmTest.assertPreciseDoShardingWithValueIsBigIntegerAndZeroPadding
	if got := atName(t, f, ssModPaddedTargets, "12345678910111213141516"); got != "t_order_07" {
		t.Errorf("12345678910111213141516 -> %q", got)
	}
	// ShardingSphere: ModShardingAlgorithmTest.assertRangeDoShardingWithAllTargetsZeroPadding
	if got := atRange(t, f, ssModPaddedTargets, int64(1), true, int64(16), true); ssCount(got) != 16 {
		t.Errorf("[1, 16]: %q", got)
	}
}

func TestShardingSphereModInitFailures(t *testing.T) {
	// ShardingSphere: ModShardingAlgorithmTest.assertRangeDoShardingWithWrongArgumentForShardingCount
	_, err := atTry("MOD", map[string]string{"sharding-count": "0"}, ssModTargets)
	atPropErr(t, err, "sharding-count")
	// ShardingSphere: ModShardingAlgorithmTest.assertRangeDoShardingWithWrongArgumentForStartOffset
	p := ssModPaddedProps()
	p["start-offset"] = "-1"
	_, err = atTry("MOD", p, ssModPaddedTargets)
	atPropErr(t, err, "start-offset")
	// ShardingSphere: ModShardingAlgorithmTest.assertRangeDoShardingWithWrongArgumentForStopOffset
	p = ssModPaddedProps()
	p["stop-offset"] = "-1"
	_, err = atTry("MOD", p, ssModPaddedTargets)
	atPropErr(t, err, "stop-offset")
}

var ssHashTargets = []string{"t_order_0", "t_order_1", "t_order_2", "t_order_3"}

func TestShardingSphereHashMod(t *testing.T) {
	f := atCompile(t, "HASH_MOD", map[string]string{"sharding-count": "4"}, ssHashTargets)
	// ShardingSphere: HashModShardingAlgorithmTest.assertPreciseDoSharding
	if got := atName(t, f, ssHashTargets, "a"); got != "t_order_1" {
		t.Errorf("a -> %q", got)
	}
	// ShardingSphere: HashModShardingAlgorithmTest.assertRangeDoSharding
	if got := atRange(t, f, ssHashTargets, "a", true, "f", true); ssCount(got) != 4 {
		t.Errorf("[a, f]: %q", got)
	}
	// ShardingSphere: HashModShardingAlgorithmTest.assertRangeDoShardingWithWrongArgumentForShardingCount
	_, err := atTry("HASH_MOD", map[string]string{"sharding-count": "0"}, ssHashTargets)
	atPropErr(t, err, "sharding-count")
}

// ShardingSphere: HashModShardingAlgorithmTest.assertPreciseDoShardingWithSameNegativeNumberValueForLegacyMode.
// Java hashes an Integer -1 and a BigInteger -1 to -1 (t_order_1) and a
// Long -1 to 0 (t_order_0). shardkey hashes every integer within int64 as
// the Long a JDBC setLong delivers, whatever carries it: -1 is t_order_0
// for all three (a deliberate difference; normalize-numeric-int-range makes
// both sides agree on every carrier).
func TestShardingSphereHashModLegacyNegative(t *testing.T) {
	f := atCompile(t, "HASH_MOD", map[string]string{"sharding-count": "4"}, ssHashTargets)
	for _, v := range []any{int32(-1), int64(-1), big.NewInt(-1)} {
		if got := atName(t, f, ssHashTargets, v); got != "t_order_0" {
			t.Errorf("%T -1 -> %q, want t_order_0 (Java Long.hashCode)", v, got)
		}
	}
}

func TestShardingSphereHashModNormalizeNumericIntRange(t *testing.T) {
	props := map[string]string{"sharding-count": "4", "normalize-numeric-int-range": "true"}
	f := atCompile(t, "HASH_MOD", props, ssHashTargets)
	legacy := atCompile(t, "HASH_MOD", map[string]string{"sharding-count": "4"}, ssHashTargets)
	// ShardingSphere: HashModShardingAlgorithmTest.assertPreciseDoShardingWithSameNegativeNumberValueForNormalizedMode
	for _, v := range []any{int32(-1), int64(-1), big.NewInt(-1)} {
		if got := atName(t, f, ssHashTargets, v); got != "t_order_1" {
			t.Errorf("%T -1 -> %q, want t_order_1", v, got)
		}
	}
	// ShardingSphere: HashModShardingAlgorithmTest.assertPreciseDoShardingWithLongValueOutOfIntegerRangeForNormalizedMode
	if got := atName(t, f, ssHashTargets, int64(math.MaxInt64)); got != "t_order_0" {
		t.Errorf("Long.MAX_VALUE -> %q", got)
	}
	// ShardingSphere: HashModShardingAlgorithmTest.assertPreciseDoShardingWithBigIntegerBoundaryValuesForNormalizedMode
	if got := atName(t, f, ssHashTargets, big.NewInt(math.MinInt32)); got != "t_order_0" {
		t.Errorf("Integer.MIN_VALUE -> %q", got)
	}
	if got := atName(t, f, ssHashTargets, big.NewInt(math.MaxInt32)); got != "t_order_3" {
		t.Errorf("Integer.MAX_VALUE -> %q", got)
	}
	// ShardingSphere: HashModShardingAlgorithmTest.assertPreciseDoShardingWithBigIntegerOutOfIntegerRangeForNormalizedMode:
	// beyond int, normalized and legacy agree.
	for _, v := range []*big.Int{big.NewInt(math.MaxInt32 + 1), big.NewInt(math.MinInt32 - 1)} {
		if got, want := atName(t, f, ssHashTargets, v), atName(t, legacy, ssHashTargets, v); got != want || got == "error" {
			t.Errorf("%v: normalized %q, legacy %q", v, got, want)
		}
	}
	// Strings are not numbers: "a" hashes as a String either way.
	if got := atName(t, f, ssHashTargets, "a"); got != "t_order_1" {
		t.Errorf("a -> %q", got)
	}
	// The fast integer path agrees with the general one.
	for _, i := range []int64{-1, 0, 5, math.MinInt32, math.MaxInt32, math.MaxInt32 + 1, math.MinInt64, math.MaxInt64} {
		fi, ok := f.(intShardFunc)
		if !ok {
			t.Fatal("no int fast path")
		}
		j, ok := fi.oneInt(i)
		k, err := f.one(value{kind: kindInt, i: i})
		if !ok || err != nil || j != k {
			t.Errorf("%d: fast %d %v, general %d %v", i, j, ok, k, err)
		}
	}
	_, err := atTry("HASH_MOD", map[string]string{"sharding-count": "4", "normalize-numeric-int-range": "yes"}, ssHashTargets)
	atPropErr(t, err, "normalize-numeric-int-range")
	_, err = atTry("HASH_MOD", map[string]string{"sharding-count": "4", "normalize-numeric-range": "true"}, ssHashTargets)
	atPropErr(t, err, "normalize-numeric-range")
}
