package shardconf

// ShardingSphere's VolumeBasedRangeShardingAlgorithmTest and
// BoundaryBasedRangeShardingAlgorithmTest (features/sharding/core/src/test/
// java/org/apache/shardingsphere/sharding/algorithm/sharding/range/),
// rewritten as Go tests through shardFunc. Java's Integer and Long values
// are both Go integers here.

import "testing"

var ssVolumeTargets = []string{"t_order_0", "t_order_1", "t_order_2", "t_order_3", "t_order_4", "t_order_5"}

func ssVolumeProps() map[string]string {
	return map[string]string{"range-lower": "10", "range-upper": "45", "sharding-volume": "10"}
}

func TestShardingSphereVolumeRange(t *testing.T) {
	f := atCompile(t, "VOLUME_RANGE", ssVolumeProps(), ssVolumeTargets)
	for _, v := range []any{int64(0), int32(0)} {
		// ShardingSphere: VolumeBasedRangeShardingAlgorithmTest.assertPreciseDoSharding,
		// assertPreciseDoShardingWithIntShardingValue
		if got := atName(t, f, ssVolumeTargets, v); got != "t_order_0" {
			t.Errorf("%T 0 -> %q", v, got)
		}
	}
	for _, c := range []struct {
		name string // the Java test method
		lo   any
		loIn bool
		hi   any
		hiIn bool
		want string
	}{
		{"assertRangeDoShardingWithoutLowerBound", nil, false, int64(12), false, "t_order_0,t_order_1"},
		{"assertRangeDoShardingWithoutLowerBoundWithIntShardingValue", nil, false, int32(12), false, "t_order_0,t_order_1"},
		{"assertRangeDoShardingWithoutUpperBound", int64(40), false, nil, false, "t_order_4,t_order_5"},
		{"assertRangeDoShardingWithoutUpperBoundWithIntShardingValue", int32(40), false, nil, false, "t_order_4,t_order_5"},
		{"assertRangeDoSharding", int64(12), true, int64(55), true, "t_order_1,t_order_2,t_order_3,t_order_4,t_order_5"},
		{"assertRangeDoShardingWithIntegerShardingValue", int32(12), true, int32(55), true, "t_order_1,t_order_2,t_order_3,t_order_4,t_order_5"},
	} {
		// ShardingSphere: VolumeBasedRangeShardingAlgorithmTest (the method named in c.name)
		if got := atRange(t, f, ssVolumeTargets, c.lo, c.loIn, c.hi, c.hiIn); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// ShardingSphere: VolumeBasedRangeShardingAlgorithmTest.assertInitFailedWithInvalidRange
	_, err := atTry("VOLUME_RANGE", map[string]string{"range-lower": "20", "range-upper": "15", "sharding-volume": "10"}, ssVolumeTargets)
	atPropErr(t, err, "range-upper")
	// ShardingSphere: VolumeBasedRangeShardingAlgorithmTest.assertGetAutoTablesAmount
	if n, err := autoTableCount("VOLUME_RANGE", ssVolumeProps()); err != nil || n != 6 {
		t.Errorf("auto tables: %d, %v; want 6", n, err)
	}
}

var ssBoundaryTargets = []string{"t_order_0", "t_order_1", "t_order_2", "t_order_3"}

func TestShardingSphereBoundaryRange(t *testing.T) {
	props := map[string]string{"sharding-ranges": "1,5,10"}
	f := atCompile(t, "BOUNDARY_RANGE", props, ssBoundaryTargets)
	for _, v := range []any{int64(0), int32(0)} {
		// ShardingSphere: BoundaryBasedRangeShardingAlgorithmTest.assertPreciseDoSharding,
		// assertPreciseDoShardingWithIntShardingValue
		if got := atName(t, f, ssBoundaryTargets, v); got != "t_order_0" {
			t.Errorf("%T 0 -> %q", v, got)
		}
	}
	for _, lohi := range [][2]any{{int64(2), int64(15)}, {int32(2), int32(15)}} {
		// ShardingSphere: BoundaryBasedRangeShardingAlgorithmTest.assertRangeDoSharding,
		// assertRangeDoShardingWithIntShardingValue
		if got := atRange(t, f, ssBoundaryTargets, lohi[0], true, lohi[1], true); got != "t_order_1,t_order_2,t_order_3" {
			t.Errorf("[%v, %v]: %q", lohi[0], lohi[1], got)
		}
	}
	// ShardingSphere: BoundaryBasedRangeShardingAlgorithmTest.assertGetAutoTablesAmount
	if n, err := autoTableCount("BOUNDARY_RANGE", props); err != nil || n != 4 {
		t.Errorf("auto tables: %d, %v; want 4", n, err)
	}
}
