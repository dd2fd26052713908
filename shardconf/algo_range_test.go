package shardconf

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestVolumeRange(t *testing.T) {
	// ShardingSphere's own test layout: lower 10, upper 45, volume 10 gives
	// (-inf,10) [10,20) [20,30) [30,40) [40,45) [45,+inf).
	targets := atNames("t_order_", 6)
	f := atCompile(t, "VOLUME_RANGE", map[string]string{"range-lower": "10", "range-upper": "45", "sharding-volume": "10"}, targets)
	for _, c := range []struct {
		v    any
		want string
	}{
		{-5, "t_order_0"},
		{9, "t_order_0"},
		{10, "t_order_1"},
		{19, "t_order_1"},
		{20, "t_order_2"},
		{44, "t_order_4"},
		{45, "t_order_5"},
		{int64(math.MinInt64), "t_order_0"},
		{int64(math.MaxInt64), "t_order_5"},
		{uint64(math.MaxUint64), "t_order_5"},
		{"31", "t_order_3"},
		{"+31", "t_order_3"},
		{"3.0", "error"},
		{"9223372036854775808", "t_order_5"}, // above int64, as uint64(1<<63) is
		{2.0, "t_order_0"},                   // an integral float is the integer
		{2.5, "error"},
		{time.Now(), "error"},
	} {
		if got := atName(t, f, targets, c.v); got != c.want {
			t.Errorf("VOLUME_RANGE %v -> %q, want %q", c.v, got, c.want)
		}
	}
	all := strings.Join(targets, ",")
	for _, c := range []struct {
		lo, hi     any
		loIn, hiIn bool
		want       string
	}{
		{12, 35, true, true, "t_order_1,t_order_2,t_order_3"},
		{nil, 20, true, false, "t_order_0,t_order_1"},
		{nil, 20, true, true, "t_order_0,t_order_1,t_order_2"},
		{20, nil, true, true, "t_order_2,t_order_3,t_order_4,t_order_5"},
		{19, nil, false, true, "t_order_2,t_order_3,t_order_4,t_order_5"},
		{nil, nil, true, true, all},
		{30, 20, true, true, ""},
		{int64(math.MaxInt64), nil, false, true, "t_order_5"}, // a uint64 above int64 is there
		{nil, int64(math.MinInt64), true, false, "t_order_0"}, // "-9223372036854775809" is there
		{uint64(math.MaxUint64), nil, true, true, "t_order_5"},
		{"12", "15", true, true, all}, // text bounds: '120' is between '12' and '15' on a text column
		{"x", "15", true, true, "error"},
	} {
		if got := atRange(t, f, targets, c.lo, c.loIn, c.hi, c.hiIn); got != c.want {
			t.Errorf("VOLUME_RANGE %v..%v (%v,%v): %q, want %q", c.lo, c.hi, c.loIn, c.hiIn, got, c.want)
		}
	}

	// A width that divides evenly: 0..40 by 10 is four full partitions.
	f = atCompile(t, "VOLUME_RANGE", map[string]string{"range-lower": "0", "range-upper": "40", "sharding-volume": "10"}, targets)
	if got := atName(t, f, targets, 39); got != "t_order_4" {
		t.Errorf("even: 39 -> %s", got)
	}
	if got := atName(t, f, targets, 40); got != "t_order_5" {
		t.Errorf("even: 40 -> %s", got)
	}
	// Negative bounds, zero-padded table names.
	t3 := []string{"t_00", "t_01", "t_02", "t_03"}
	f = atCompile(t, "VOLUME_RANGE", map[string]string{"range-lower": "-100", "range-upper": "100", "sharding-volume": "150"}, t3)
	if got := atName(t, f, t3, 50); got != "t_02" {
		t.Errorf("negative lower: 50 -> %s", got)
	}
	// Extreme but valid bounds.
	f = atCompile(t, "VOLUME_RANGE", map[string]string{"range-lower": "0", "range-upper": "9223372036854775807", "sharding-volume": "4611686018427387904"}, targets[:4])
	if got := atName(t, f, targets, int64(math.MaxInt64-1)); got != "t_order_2" {
		t.Errorf("extreme: %s", got)
	}
}

func TestVolumeRangeErrors(t *testing.T) {
	targets := atNames("t_", 6)
	for _, c := range []struct {
		props map[string]string
		key   string
	}{
		{map[string]string{"range-upper": "45", "sharding-volume": "10"}, "range-lower"},
		{map[string]string{"range-lower": "10", "sharding-volume": "10"}, "range-upper"},
		{map[string]string{"range-lower": "10", "range-upper": "45"}, "sharding-volume"},
		{map[string]string{"range-lower": "10", "range-upper": "45", "sharding-volume": "0"}, "sharding-volume"},
		{map[string]string{"range-lower": "10", "range-upper": "45", "sharding-volume": "-1"}, "sharding-volume"},
		{map[string]string{"range-lower": "x", "range-upper": "45", "sharding-volume": "10"}, "range-lower"},
		{map[string]string{"range-lower": "10", "range-upper": "15", "sharding-volume": "10"}, "sharding-volume"}, // Java: range smaller than volume
		{map[string]string{"range-lower": "45", "range-upper": "10", "sharding-volume": "10"}, "range-upper"},
		{map[string]string{"range-lower": "-9223372036854775808", "range-upper": "9223372036854775807", "sharding-volume": "10"}, "range-upper"},
		{map[string]string{"range-lower": "10", "range-upper": "45", "sharding-volume": "10", "sharding-count": "6"}, "sharding-count"},
	} {
		_, err := atTry("VOLUME_RANGE", c.props, targets)
		atPropErr(t, err, c.key)
	}
	atGaps(t, "VOLUME_RANGE", map[string]string{"range-lower": "10", "range-upper": "45", "sharding-volume": "10"}, targets[:5],
		"t_5 (shard 5: values from 45)")
	atPropErr(t, func() error {
		_, err := atTry("VOLUME_RANGE", map[string]string{"range-lower": "0", "range-upper": "9223372036854775807", "sharding-volume": "1"}, targets)
		return err
	}(), "sharding-volume")
	atGaps(t, "VOLUME_RANGE", map[string]string{"range-lower": "0", "range-upper": "9223372036854775805", "sharding-volume": "1"}, targets,
		"t_6 to t_9223372036854775806 (shards 6..9223372036854775806, 9223372036854775801 in all: values from 5)")
}

func TestBoundaryRange(t *testing.T) {
	targets := atNames("t_", 4)
	f := atCompile(t, "BOUNDARY_RANGE", map[string]string{"sharding-ranges": " 10 ,1, 5"}, targets)
	for _, c := range []struct {
		v    any
		want string
	}{
		{0, "t_0"},
		{1, "t_1"},
		{4, "t_1"},
		{5, "t_2"},
		{9, "t_2"},
		{10, "t_3"},
		{int64(math.MaxInt64), "t_3"},
		{int64(math.MinInt64), "t_0"},
		{"7", "t_2"},
		{"-7", "t_0"},
		{"seven", "error"},
	} {
		if got := atName(t, f, targets, c.v); got != c.want {
			t.Errorf("BOUNDARY_RANGE %v -> %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		lo, hi     any
		loIn, hiIn bool
		want       string
	}{
		{2, 7, true, true, "t_1,t_2"},
		{1, 5, false, false, "t_1"},
		{nil, 1, true, false, "t_0"},
		{5, nil, true, true, "t_2,t_3"},
		{8, 2, true, true, ""},
	} {
		if got := atRange(t, f, targets, c.lo, c.loIn, c.hi, c.hiIn); got != c.want {
			t.Errorf("BOUNDARY_RANGE %v..%v: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	// Duplicates make an empty partition, as Java's sorted list does:
	// (-inf,1) [1,5) [5,5) [5,10) [10,+inf).
	t5 := atNames("t_", 5)
	f = atCompile(t, "BOUNDARY_RANGE", map[string]string{"sharding-ranges": "1,5,5,10,"}, t5)
	if got := atName(t, f, t5, 5); got != "t_3" {
		t.Errorf("duplicate boundary: 5 -> %s", got)
	}
	if got := atRange(t, f, t5, 4, true, 5, true); got != "t_1,t_2,t_3" { // Java too walks first..last
		t.Errorf("duplicate boundary range: %s", got)
	}
	// A single boundary: two partitions.
	f = atCompile(t, "BOUNDARY_RANGE", map[string]string{"sharding-ranges": "0"}, targets[:2])
	if got := atName(t, f, targets, -1); got != "t_0" {
		t.Errorf("single: %s", got)
	}
}

func TestBoundaryRangeErrors(t *testing.T) {
	targets := atNames("t_", 4)
	for _, props := range []map[string]string{
		{},
		{"sharding-ranges": ""},
		{"sharding-ranges": " , "},
		{"sharding-ranges": "1,x,5"},
		{"sharding-ranges": "1,5", "sharding-volume": "3"},
	} {
		_, err := atTry("BOUNDARY_RANGE", props, targets)
		if err == nil {
			t.Errorf("%v: no error", props)
			continue
		}
		var key string
		for k := range props {
			if k != "sharding-ranges" {
				key = k
			}
		}
		if key == "" {
			key = "sharding-ranges"
		}
		atPropErr(t, err, key)
	}
	atGaps(t, "BOUNDARY_RANGE", map[string]string{"sharding-ranges": "1,5,10,20"}, targets, "t_4 (shard 4: values from 20)")
}

func TestRangeNoAllocs(t *testing.T) {
	f := atCompile(t, "BOUNDARY_RANGE", map[string]string{"sharding-ranges": "1,5,10"}, atNames("t_", 4))
	v := value{kind: kindInt, i: 7}
	if n := testing.AllocsPerRun(1000, func() { _, _ = f.one(v) }); n != 0 {
		t.Errorf("%v allocs", n)
	}
}
